"""OTLP/gRPC receiver: ``opentelemetry.proto.collector.trace.v1.TraceService/Export`` and
``opentelemetry.proto.collector.logs.v1.LogsService/Export`` on one port.

The methods are registered through generic handlers without a request deserializer,
so a handler gets the raw request bytes and decodes them once with
``decode_protobuf`` / ``decode_logs_protobuf`` (no intermediate message objects).
They are registered as stream-unary (the same on the wire as unary): the handler
starts before the message is read, so the token is checked first and a refused call
never reads its body. gRPC itself handles ``grpc-encoding: gzip`` and refuses
messages over ``max_request_size`` (measured after decompression) with
``RESOURCE_EXHAUSTED`` before our handler runs, which is why those refusals do not
appear in ``evald_receiver_requests_failed``.

The same server answers the standard health service (``grpc.health.v1.Health``):
SERVING for ``""`` and the trace and logs services while it serves, NOT_SERVING once
shutdown starts; it needs no token, like the admin probes. Its ``Watch`` streams
never end on their own and would hold ``server.stop`` for its whole grace (a load
balancer watching health would delay every stop): they are ended when shutdown
begins, while exports still in flight, bodies still arriving included, keep their
grace.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, NoReturn

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from collector.config.settings import OtlpReceivers
from collector.decode import AttributeSelector, decode_logs_protobuf, decode_protobuf
from collector.receivers.common import (
    ExportError,
    Forward,
    Ingest,
    PartialSuccess,
    Refusal,
    Signal,
    without_frames,
)
from collector.receivers.encoding import export_response, retry_info, rpc_status
from collector.receivers.handoff import SignalConsumer
from collector.receivers.inflight import IN_FLIGHT_FULL, InFlightBytes, in_flight_budget
from collector.receivers.security import ReceiverSecurity
from collector.telemetry.registry import Telemetry

SERVICE = "opentelemetry.proto.collector.trace.v1.TraceService"
LOGS_SERVICE = "opentelemetry.proto.collector.logs.v1.LogsService"
METHOD = "Export"

_GRPC_CODES: dict[Refusal, Any] = {
    Refusal.INVALID: grpc.StatusCode.INVALID_ARGUMENT,
    Refusal.OVERLOADED: grpc.StatusCode.UNAVAILABLE,
    Refusal.TOO_LARGE: grpc.StatusCode.RESOURCE_EXHAUSTED,
    Refusal.INTERNAL: grpc.StatusCode.INTERNAL,
    Refusal.UNAUTHENTICATED: grpc.StatusCode.UNAUTHENTICATED,
    Refusal.TIMEOUT: grpc.StatusCode.DEADLINE_EXCEEDED,
}

_HANDSHAKE_TIMEOUT_MS = 10_000  # TCP open, no TLS/HTTP/2 preface: closed after this
_KEEPALIVE_TIMEOUT_MS = 20_000  # a keepalive ping unanswered this long closes the connection
_AGE_GRACE_MS = 30_000  # RPCs in flight when max_age passes get this long to finish
_MAX_STREAMS = 100  # concurrent RPCs on one connection

# google.rpc.Status with details, as grpc-go / the Collector read it (status.FromError).
STATUS_DETAILS_KEY = "grpc-status-details-bin"
# What opentelemetry-exporter-otlp-proto-grpc reads for its retry delay (exporter.py).
RETRY_INFO_KEY = "google.rpc.retryinfo-bin"


class GrpcReceiver:
    """Serves OTLP/gRPC on ``config.grpc.endpoint`` in the running event loop.

    Lifecycle: ``start`` binds (port 0 picks a free port, see ``port``) and serves;
    ``shutdown(grace)`` stops accepting RPCs, ends health ``Watch`` streams, lets
    in-flight exports finish for up to ``grace`` seconds, then cancels them.
    ``shutdown`` is safe before ``start`` and
    twice; ``start`` after ``shutdown`` serves again. ``config.grpc.enabled`` is the
    caller's business: ``start`` binds regardless.
    """

    def __init__(
        self,
        config: OtlpReceivers,
        consumer: SignalConsumer,
        selector: AttributeSelector,
        telemetry: Telemetry,
        security: ReceiverSecurity | None = None,
        *,
        in_flight: InFlightBytes | None = None,
        forward: Forward | None = None,
    ) -> None:
        """``in_flight`` is the byte budget shared with the HTTP receiver (else its own);
        ``forward``, if given, takes each payload instead of ``consumer`` (workers)."""
        self._forward = forward
        self._security = security or ReceiverSecurity()
        self._in_flight = in_flight or in_flight_budget(config, telemetry)
        self._retry_after = config.retry_after
        self._read_timeout = config.connections.read_timeout
        self._endpoint = config.grpc.endpoint
        self._host_port = config.grpc.host_port
        self._max_request_size = config.max_request_size
        self._connections = config.connections
        self._ingest = Ingest("grpc", consumer, selector, telemetry, config.retry_after)
        self._server: Any = None
        self._health: Any = None
        self._port: int | None = None

    @property
    def port(self) -> int:
        """The bound TCP port; ``RuntimeError`` unless serving."""
        if self._port is None:
            raise RuntimeError("the OTLP/gRPC receiver is not started")
        return self._port

    async def start(self) -> None:
        """Bind and start serving; ``OSError`` naming the endpoint if it cannot bind."""
        if self._server is not None:
            raise RuntimeError("the OTLP/gRPC receiver is already started")
        server = grpc.aio.server(options=self._options())
        server.add_generic_rpc_handlers(self._handlers())
        # A new servicer per start: one that entered graceful shutdown ignores set().
        self._health = _HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self._health, server)
        address = _address(*self._host_port)
        credentials = self._security.grpc_credentials()
        try:
            if credentials is None:
                port = int(server.add_insecure_port(address))
            else:
                port = int(server.add_secure_port(address, credentials))
        except RuntimeError as exc:  # grpc's way of saying "address in use" and the like
            raise OSError(f"OTLP/gRPC: cannot listen on {self._endpoint}: {exc}") from exc
        await server.start()
        # "": the server as a whole (grpc_health_probe's default)
        for service in ("", SERVICE, LOGS_SERVICE):
            await self._health.set(service, health_pb2.HealthCheckResponse.SERVING)
        self._server, self._port = server, port

    async def shutdown(self, grace: float) -> None:
        """Stop accepting, give in-flight exports ``grace`` seconds, then cancel them."""
        server, self._server, self._port = self._server, None, None
        if server is not None and self._health is not None:
            await self._health.enter_graceful_shutdown()  # health checks answer NOT_SERVING
            self._health.end_watches()
            await server.stop(grace)

    def _options(self) -> list[tuple[str, int]]:
        """gRPC core channel arguments: message size, and what one connection may hold
        (``receivers.otlp.connections``): a client that opens a connection and says
        nothing is dropped after the handshake timeout, a silent peer after a
        keepalive ping goes unanswered, an idle one after ``idle_timeout``; every
        connection is asked to reconnect after ``max_age`` (with a grace for the RPCs
        in flight), which also spreads clients over replicas."""
        limits = self._connections
        return [
            ("grpc.max_receive_message_length", self._max_request_size),
            # Without this, a second daemon on the same port would share it silently.
            ("grpc.so_reuseport", 0),
            (
                "grpc.server_handshake_timeout_ms",
                min(_HANDSHAKE_TIMEOUT_MS, _ms(limits.idle_timeout)),
            ),
            ("grpc.keepalive_time_ms", _ms(limits.keepalive)),
            ("grpc.keepalive_timeout_ms", _KEEPALIVE_TIMEOUT_MS),
            ("grpc.max_connection_idle_ms", _ms(limits.idle_timeout)),
            ("grpc.max_connection_age_ms", _ms(limits.max_age)),
            ("grpc.max_connection_age_grace_ms", _AGE_GRACE_MS),
            ("grpc.max_concurrent_streams", _MAX_STREAMS),
            # Clients may ping idle connections as often as every 10 s (as the Collector's
            # OTLP exporter may), no more: a ping flood is refused with GOAWAY.
            ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
            ("grpc.keepalive_permit_without_calls", 1),
        ]

    def _handlers(self) -> tuple[Any, ...]:
        # No request_deserializer: the handlers receive the message bytes as sent.
        # Stream-unary on this side (the wire is the same as unary's): the handler
        # runs before the request message is read, so a refused call never reads it.
        return tuple(
            grpc.method_handlers_generic_handler(
                service, {METHOD: grpc.stream_unary_rpc_method_handler(export)}
            )
            for service, export in ((SERVICE, self._export), (LOGS_SERVICE, self._export_logs))
        )

    async def _export(self, requests: AsyncIterator[bytes], context: Any) -> bytes:
        """One traces Export call: an ``ExportTraceServiceResponse`` or an aborted call."""
        return await self._answer(Signal.TRACES, requests, context)

    async def _export_logs(self, requests: AsyncIterator[bytes], context: Any) -> bytes:
        """One logs Export call: an ``ExportLogsServiceResponse`` or an aborted call."""
        return await self._answer(Signal.LOGS, requests, context)

    async def _answer(self, signal: Signal, requests: AsyncIterator[bytes], context: Any) -> bytes:
        """The token is checked before the message is read; the message must arrive
        within ``connections.read_timeout`` and fit the in-flight byte budget.

        The request lives in ``_respond``'s frame only. grpc.aio keeps the ``AbortError``
        that ends a refused call in the call's state, which the error's traceback
        reaches back to (through the context in these frames): a cycle. A frame on
        that traceback holding the request would keep it until a cyclic collection,
        rare in the front (ADR 0027); so would the refusal as caught, hence
        ``without_frames``."""
        try:
            if not self._security.authorized(_metadata(context, "authorization")):
                raise ExportError(Refusal.UNAUTHENTICATED, "missing or wrong bearer token")
            return await self._respond(signal, requests)
        except ExportError as refused:
            failure = without_frames(refused)
            self._ingest.refused(_GRPC_CODES[refused.refusal].name, refused)
        except Exception as exc:  # one of the three catch-all places (STYLE.md habit 6)
            failure = self._ingest.crashed(grpc.StatusCode.INTERNAL.name, exc)
        await _abort(context, failure)

    async def _respond(self, signal: Signal, requests: AsyncIterator[bytes]) -> bytes:
        """The answer to the call's request; ``ExportError`` to refuse it."""
        request = await self._read_one(requests)
        reservation = self._in_flight.reserve(len(request))
        if reservation is None:
            raise ExportError(Refusal.OVERLOADED, IN_FLIGHT_FULL, self._retry_after)
        try:
            if self._forward is not None:
                result = await self._forward(signal, False, "grpc", request)
            else:
                result = self._ingest_request(signal, request)
        finally:
            reservation.release()
        return export_response(result, False, signal)

    def _ingest_request(self, signal: Signal, request: bytes) -> PartialSuccess:
        if signal is Signal.LOGS:
            return self._ingest.export_logs(decode_logs_protobuf, request)
        return self._ingest.export(decode_protobuf, request)

    async def _read_one(self, requests: AsyncIterator[bytes]) -> bytes:
        """The call's one request message (a unary call sends exactly one).

        The message iterator is closed before this returns. grpc.aio's is an async
        generator held in a reference cycle with its receiver, suspended where it
        yielded the message: left open, every call's request bytes live until a
        cyclic collection finds them, and the front (which allocates few containers,
        so its collections are rare under ``gc_settings``) grew by 100 MB a second
        under load (ADR 0027)."""
        messages = aiter(requests)
        try:
            async with asyncio.timeout(self._read_timeout):
                return await anext(messages)
        except StopAsyncIteration:
            raise ExportError(Refusal.INVALID, "no request message") from None
        except TimeoutError:
            message = f"request message not received within {self._read_timeout:g}s"
            raise ExportError(Refusal.TIMEOUT, message) from None
        finally:
            close = getattr(messages, "aclose", None)
            if close is not None:
                await close()


class _HealthServicer(health.aio.HealthServicer):  # type: ignore[misc]  # untyped package
    """The reference servicer, whose ``Watch`` streams also end when shutdown begins.

    ``end_watches`` cancels the open ``Watch`` handlers a moment after the
    NOT_SERVING update (one loop turn, so it is usually sent); each ends its
    stream with OK. Watches opened afterwards end at once.
    """

    def __init__(self) -> None:
        super().__init__()
        self._watches: set[asyncio.Task[Any]] = set()
        self._ended = False

    async def Watch(self, request: Any, context: Any) -> None:  # noqa: N802  # gRPC's name
        task = asyncio.current_task()
        if self._ended or task is None:
            return
        self._watches.add(task)
        try:
            await super().Watch(request, context)
        except asyncio.CancelledError:
            if not self._ended:
                raise  # the client went away, or the server cancels: as before
            task.uncancel()  # ours: end the stream normally
        finally:
            self._watches.discard(task)

    def end_watches(self) -> None:
        """End every open ``Watch`` stream (after this loop turn) and refuse new ones."""
        self._ended = True
        loop = asyncio.get_running_loop()
        for task in list(self._watches):
            loop.call_soon(task.cancel)


async def _abort(context: Any, refused: ExportError) -> NoReturn:
    """End the call with the refusal's status, its ``google.rpc.Status`` and retry info."""
    trailers: list[tuple[str, bytes]] = [
        (STATUS_DETAILS_KEY, rpc_status(refused).SerializeToString())
    ]
    if refused.refusal is Refusal.OVERLOADED:
        trailers.append((RETRY_INFO_KEY, retry_info(refused.retry_after_s).SerializeToString()))
    await context.abort(_GRPC_CODES[refused.refusal], refused.message, tuple(trailers))
    raise AssertionError("grpc.aio ServicerContext.abort always raises")


def _metadata(context: Any, key: str) -> str | None:
    """The first value of invocation metadata ``key`` (lower case, as gRPC sends it)."""
    for name, value in context.invocation_metadata() or ():
        if name == key:
            return str(value)
    return None


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))


def _address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
