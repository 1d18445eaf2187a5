"""A fake tracing backend for the OTLP export tests: real OTLP/gRPC and OTLP/HTTP servers.

It records every span and log record it is sent, flattened with its resource and
scope, and lets a test wait for them (a condition variable, not sleeps). With
``hang=True`` every export blocks until ``close``: a backend that accepted the
connection and died, the worst case for a sender.
"""

from __future__ import annotations

import gzip
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NamedTuple

import grpc
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2, logs_service_pb2_grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

WAIT_S = 10.0


def value(any_value: AnyValue) -> Any:
    """A protobuf AnyValue as a Python value (arrays as lists)."""
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [value(item) for item in any_value.array_value.values]
    if kind == "kvlist_value":
        return attributes(any_value.kvlist_value.values)
    return getattr(any_value, kind) if kind else None


def attributes(pairs: Any) -> dict[str, Any]:
    return {pair.key: value(pair.value) for pair in pairs}


class Received(NamedTuple):
    """One span or log record with the resource and scope it came with."""

    resource: dict[str, Any]
    scope: str
    record: Any  # opentelemetry.proto Span or LogRecord


class OtlpBackend:
    """Receives OTLP traces and logs over ``protocol`` (``grpc`` or ``http/protobuf``)."""

    def __init__(self, protocol: str, *, hang: bool = False) -> None:
        self.protocol = protocol
        self.spans: list[Received] = []
        self.logs: list[Received] = []
        self.requests = 0
        self.hanging = 0  # exports being held (hang=True)
        self._changed = threading.Condition()
        self._released = threading.Event()
        self._hang = hang
        self._stop: Callable[[], None]
        port = self._start_grpc() if protocol == "grpc" else self._start_http()
        self.endpoint = f"http://127.0.0.1:{port}"

    def wait_for(self, predicate: Callable[[], bool], timeout: float = WAIT_S) -> bool:
        """True once ``predicate()`` holds (re-checked after each request), False at timeout."""
        with self._changed:
            return self._changed.wait_for(predicate, timeout)

    def close(self) -> None:
        self._released.set()
        self._stop()

    # --- recording ---------------------------------------------------------------
    def _traces(self, request: trace_service_pb2.ExportTraceServiceRequest) -> None:
        self._block_if_hanging()
        with self._changed:
            self.requests += 1
            for resource_spans in request.resource_spans:
                resource = attributes(resource_spans.resource.attributes)
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        self.spans.append(Received(resource, scope_spans.scope.name, span))
            self._changed.notify_all()

    def _logs(self, request: logs_service_pb2.ExportLogsServiceRequest) -> None:
        self._block_if_hanging()
        with self._changed:
            self.requests += 1
            for resource_logs in request.resource_logs:
                resource = attributes(resource_logs.resource.attributes)
                for scope_logs in resource_logs.scope_logs:
                    for record in scope_logs.log_records:
                        self.logs.append(Received(resource, scope_logs.scope.name, record))
            self._changed.notify_all()

    def _block_if_hanging(self) -> None:
        if not self._hang:
            return
        with self._changed:
            self.hanging += 1
            self._changed.notify_all()
        self._released.wait(WAIT_S * 3)

    # --- transports ----------------------------------------------------------------
    def _start_grpc(self) -> int:
        server = grpc.server(ThreadPoolExecutor(max_workers=4))
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(_Traces(self), server)
        logs_service_pb2_grpc.add_LogsServiceServicer_to_server(_Logs(self), server)
        port = int(server.add_insecure_port("127.0.0.1:0"))
        server.start()
        self._stop = lambda: server.stop(grace=None).wait(WAIT_S)
        return port

    def _start_http(self) -> int:
        backend = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                answer: Any
                if self.path == "/v1/traces":
                    backend._traces(trace_service_pb2.ExportTraceServiceRequest.FromString(body))
                    answer = trace_service_pb2.ExportTraceServiceResponse()
                else:
                    backend._logs(logs_service_pb2.ExportLogsServiceRequest.FromString(body))
                    answer = logs_service_pb2.ExportLogsServiceResponse()
                payload = answer.SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: pytest shows stderr of failing tests only anyway."""

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        thread = threading.Thread(target=server.serve_forever, name="otlp-backend-http")
        thread.start()

        def stop() -> None:
            server.shutdown()
            server.server_close()
            thread.join(WAIT_S)

        self._stop = stop
        return int(server.server_address[1])


class _Traces(trace_service_pb2_grpc.TraceServiceServicer):
    def __init__(self, backend: OtlpBackend) -> None:
        self._backend = backend

    def Export(self, request: Any, context: Any) -> Any:  # noqa: N802 - gRPC's naming
        self._backend._traces(request)
        return trace_service_pb2.ExportTraceServiceResponse()


class _Logs(logs_service_pb2_grpc.LogsServiceServicer):
    def __init__(self, backend: OtlpBackend) -> None:
        self._backend = backend

    def Export(self, request: Any, context: Any) -> Any:  # noqa: N802 - gRPC's naming
        self._backend._logs(request)
        return logs_service_pb2.ExportLogsServiceResponse()
