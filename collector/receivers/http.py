"""OTLP/HTTP receiver: ``POST /v1/traces`` and ``POST /v1/logs`` with binary protobuf or
OTLP/JSON bodies.

Bodies may be gzip-compressed (``Content-Encoding: gzip``). aiohttp's own request
decompression is off: we inflate ourselves so that ``max_request_size`` bounds the
bytes *after* decompression and a gzip bomb never allocates more than that.
Answers use the request's content type (OTLP spec); error bodies are a
``google.rpc.Status``, or plain text when the request's content type is not OTLP.
"""

from __future__ import annotations

import asyncio
import math
import resource
import zlib
from enum import Enum

from aiohttp import web

from collector.config.settings import OtlpReceivers
from collector.decode import (
    AttributeSelector,
    decode_json,
    decode_logs_json,
    decode_logs_protobuf,
    decode_protobuf,
)
from collector.receivers.common import (
    Decoder,
    ExportError,
    Forward,
    Ingest,
    LogDecoder,
    PartialSuccess,
    Refusal,
    Signal,
    without_frames,
)
from collector.receivers.encoding import export_response, status_body
from collector.receivers.handoff import SignalConsumer
from collector.receivers.inflight import (
    IN_FLIGHT_FULL,
    InFlightBytes,
    Reservation,
    in_flight_budget,
)
from collector.receivers.lifecycle import Limits, WebServer, WebService
from collector.receivers.security import ReceiverSecurity
from collector.telemetry.registry import Telemetry

TRACES_PATH = "/v1/traces"
LOGS_PATH = "/v1/logs"

HTTP_STATUS: dict[Refusal, int] = {
    Refusal.INVALID: 400,
    Refusal.OVERLOADED: 503,
    Refusal.TOO_LARGE: 413,
    Refusal.UNSUPPORTED: 415,
    Refusal.NOT_FOUND: 404,
    Refusal.METHOD: 405,
    Refusal.INTERNAL: 500,
    Refusal.UNAUTHENTICATED: 401,
    Refusal.TIMEOUT: 408,
}


class BodyFormat(Enum):
    """The two OTLP/HTTP encodings, by their content type."""

    PROTOBUF = "application/x-protobuf"
    JSON = "application/json"


_DECODERS: dict[BodyFormat, Decoder] = {
    BodyFormat.PROTOBUF: decode_protobuf,
    BodyFormat.JSON: decode_json,
}
_LOG_DECODERS: dict[BodyFormat, LogDecoder] = {
    BodyFormat.PROTOBUF: decode_logs_protobuf,
    BodyFormat.JSON: decode_logs_json,
}
_MAX_AUTO_CONNECTIONS = 4096
_LINGERING_S = 10.0  # aiohttp's default
_IDENTITY = frozenset({"", "identity"})
_GZIP = frozenset({"gzip", "x-gzip"})


class HttpReceiver(WebService):
    """Serves OTLP/HTTP on ``config.http.endpoint`` in the running event loop.

    Lifecycle as ``GrpcReceiver``: ``start`` binds (``port`` tells which port),
    ``shutdown(grace)`` stops accepting and drains in-flight requests for up to
    ``grace`` seconds; safe before ``start`` and twice.
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
        """``in_flight`` is the byte budget shared with the gRPC receiver (else its own);
        ``forward``, if given, takes each payload instead of ``consumer`` (workers)."""
        self._forward = forward
        self._max_request_size = config.max_request_size
        self._retry_after = config.retry_after
        self._in_flight = in_flight or in_flight_budget(config, telemetry)
        self._read_timeout = config.connections.read_timeout
        self._ingest = Ingest("http", consumer, selector, telemetry, config.retry_after)
        self._security = security or ReceiverSecurity()
        refused = telemetry.ingest.connections_refused.labels(server="http")
        limits = Limits(
            connection_limit(config.connections.max_connections),
            config.connections.idle_timeout,
            refused.inc,
        )
        # auto_decompress=False: see the module docstring. After an error answer, the
        # unread rest of a body is read and dropped for at most lingering_time.
        self._server = WebServer(
            "OTLP/HTTP",
            config.http.host_port,
            self._make_app,
            limits,
            ssl_context=self._security.ssl_context(),
            auto_decompress=False,
            lingering_time=min(_LINGERING_S, self._read_timeout),
        )

    def _make_app(self) -> web.Application:
        # client_max_size caps request.read() at the same limit as the decompressed body:
        # a gzip body is never larger than what it inflates to, short of adversarial input.
        app = web.Application(client_max_size=self._max_request_size)
        app.router.add_route("*", TRACES_PATH, self._traces)
        app.router.add_route("*", LOGS_PATH, self._logs)
        app.router.add_route("*", "/{path:.*}", self._not_found)
        return app

    async def _traces(self, request: web.Request) -> web.Response:
        """One export request → 200 with an ``ExportTraceServiceResponse``, or an error."""
        return await self._export(request, Signal.TRACES)

    async def _logs(self, request: web.Request) -> web.Response:
        """One export request → 200 with an ``ExportLogsServiceResponse``, or an error."""
        return await self._export(request, Signal.LOGS)

    async def _export(self, request: web.Request, signal: Signal) -> web.Response:
        body_format = _body_format(request)
        try:
            if not self._security.authorized(request.headers.get("Authorization")):
                raise ExportError(Refusal.UNAUTHENTICATED, "missing or wrong bearer token")
            result = await self._receive(request, body_format, signal)
            return _ok(result, body_format, signal)
        except ExportError as refused:
            failure = without_frames(refused)
            self._ingest.refused(str(HTTP_STATUS[refused.refusal]), refused)
        except Exception as exc:  # one of the three catch-all places (STYLE.md habit 6)
            failure = self._ingest.crashed("500", exc)
        return _error(failure, body_format)

    async def _not_found(self, request: web.Request) -> web.Response:
        refused = ExportError(
            Refusal.NOT_FOUND, f"no such path {request.path!r}; use /v1/traces or /v1/logs"
        )
        self._ingest.refused("404", refused)
        return _error(refused, _body_format(request))

    async def _receive(
        self, request: web.Request, body_format: BodyFormat | None, signal: Signal
    ) -> PartialSuccess:
        if request.method != "POST":
            raise ExportError(Refusal.METHOD, f"{request.method} is not allowed; use POST")
        if body_format is None:
            raise ExportError(
                Refusal.UNSUPPORTED,
                f"unsupported Content-Type {request.content_type!r}; "
                "use application/x-protobuf or application/json",
            )
        gzipped = _is_gzipped(request)
        reservation = self._reserve(request)
        try:
            payload = await self._read_body(request)
            reservation.shrink(len(payload))
            if gzipped:
                payload = gunzip(payload, self._max_request_size)
            if self._forward is not None:
                return await self._forward(signal, body_format is BodyFormat.JSON, "http", payload)
            if signal is Signal.LOGS:
                return self._ingest.export_logs(_LOG_DECODERS[body_format], payload)
            return self._ingest.export(_DECODERS[body_format], payload)
        finally:
            reservation.release()

    def _reserve(self, request: web.Request) -> Reservation:
        """Room for the body in the in-flight budget, before a byte of it is read."""
        if (request.content_length or 0) > self._max_request_size:
            raise self._too_large()  # refuse before reading anything
        length = request.content_length  # None: chunked, its size known once read
        reservation = self._in_flight.reserve(self._max_request_size if length is None else length)
        if reservation is None:
            raise ExportError(Refusal.OVERLOADED, IN_FLIGHT_FULL, self._retry_after)
        return reservation

    def _too_large(self) -> ExportError:
        message = f"request body over the {self._max_request_size}-byte limit"
        return ExportError(Refusal.TOO_LARGE, message)

    async def _read_body(self, request: web.Request) -> bytes:
        """The body, or ``ExportError``. No error here may be held by a frame on its own
        traceback (aiohttp's frames on it hold the body read so far): a cycle that only
        a cyclic collection frees (ADR 0027)."""
        try:
            async with asyncio.timeout(self._read_timeout):
                return await request.read()
        except web.HTTPRequestEntityTooLarge:
            raise self._too_large() from None
        except TimeoutError:
            message = f"request body not received within {self._read_timeout:g}s"
            raise ExportError(Refusal.TIMEOUT, message) from None
        except (web.RequestPayloadError, ConnectionError) as exc:
            # Bad chunked framing, or the client left mid-body: its fault, not a bug of ours.
            # aiohttp keeps the error on the request, whose body its traceback reaches.
            exc.__traceback__ = None
            raise ExportError(Refusal.INVALID, f"incomplete request body: {exc}") from None


def connection_limit(configured: int | None) -> int:
    """``configured``, or a quarter of this process's open-file limit (at most 4096):
    half-open clients must not take the descriptors gRPC, admin and files need."""
    if configured is not None:
        return configured
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return _MAX_AUTO_CONNECTIONS
    return max(1, min(_MAX_AUTO_CONNECTIONS, soft // 4))


def _body_format(request: web.Request) -> BodyFormat | None:
    """The OTLP encoding named by Content-Type (parameters ignored), if it is one."""
    try:
        return BodyFormat(request.content_type.lower())
    except ValueError:
        return None


def _is_gzipped(request: web.Request) -> bool:
    """True for gzip; ``ExportError`` (415) for codings other than identity."""
    encoding = request.headers.get("Content-Encoding", "").strip().lower()
    if encoding in _GZIP:
        return True
    if encoding in _IDENTITY:
        return False
    raise ExportError(
        Refusal.UNSUPPORTED, f"unsupported Content-Encoding {encoding!r}; use gzip or none"
    )


def gunzip(data: bytes, limit: int) -> bytes:
    """Inflate gzip ``data`` (several members allowed) into at most ``limit`` bytes.

    Never allocates more than ``limit + 1`` output bytes. ``ExportError``: 413 when
    the output would exceed ``limit``, 400 when ``data`` is not complete gzip.
    """
    out = bytearray()
    while data:
        inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        try:
            out += inflater.decompress(data, limit + 1 - len(out))
        except zlib.error as exc:
            raise ExportError(Refusal.INVALID, f"invalid gzip body: {exc}") from exc
        if len(out) > limit:
            raise ExportError(
                Refusal.TOO_LARGE, f"request body over the {limit}-byte limit after gunzip"
            )
        if not inflater.eof:
            raise ExportError(Refusal.INVALID, "invalid gzip body: truncated")
        data = inflater.unused_data
    return bytes(out)


def _ok(result: PartialSuccess, body_format: BodyFormat | None, signal: Signal) -> web.Response:
    as_json = body_format is BodyFormat.JSON
    content_type = (body_format or BodyFormat.PROTOBUF).value
    return web.Response(body=export_response(result, as_json, signal), content_type=content_type)


def _error(refused: ExportError, body_format: BodyFormat | None) -> web.Response:
    """The error answer: a ``google.rpc.Status`` in the request's encoding."""
    status = HTTP_STATUS[refused.refusal]
    headers = _error_headers(refused)
    if body_format is None:
        return web.Response(status=status, text=refused.message, headers=headers)
    body = status_body(refused, as_json=body_format is BodyFormat.JSON)
    return web.Response(status=status, body=body, content_type=body_format.value, headers=headers)


def _error_headers(refused: ExportError) -> dict[str, str]:
    if refused.refusal is Refusal.OVERLOADED:
        # delay-seconds is an integer (RFC 9110 §10.2.3); round up so clients never come early.
        return {"Retry-After": str(max(0, math.ceil(refused.retry_after_s)))}
    if refused.refusal is Refusal.METHOD:
        return {"Allow": "POST"}
    if refused.refusal is Refusal.UNSUPPORTED:
        # RFC 9110 §15.5.16: name the codings we accept when the coding was the problem.
        return {"Accept-Encoding": "gzip"}
    if refused.refusal is Refusal.UNAUTHENTICATED:
        return {"WWW-Authenticate": 'Bearer realm="evald"'}  # RFC 6750 §3
    if refused.refusal is Refusal.TIMEOUT:
        return {"Connection": "close"}  # the rest of the body may still be on its way
    return {}
