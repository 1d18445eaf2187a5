"""The baseline of the serve benchmark: a minimal grpcio OTLP receiver that only decodes.

It answers every Export with an empty response after ``FromString``: what any
Python OTLP receiver must at least pay. Usage: ``baseline_receiver.py PORT``.
"""

from __future__ import annotations

import sys
from concurrent import futures

import grpc
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

_EMPTY = ExportTraceServiceResponse().SerializeToString()


def _export(request: bytes, context: grpc.ServicerContext) -> bytes:
    ExportTraceServiceRequest.FromString(request)
    return _EMPTY


def main() -> None:
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=8),
        options=[("grpc.max_receive_message_length", 64 * 1024 * 1024)],
    )
    handler = grpc.method_handlers_generic_handler(
        "opentelemetry.proto.collector.trace.v1.TraceService",
        {"Export": grpc.unary_unary_rpc_method_handler(_export)},
    )
    server.add_generic_rpc_handlers((handler,))
    server.add_insecure_port(f"127.0.0.1:{sys.argv[1]}")
    server.start()
    print("ready", flush=True)
    server.wait_for_termination()


if __name__ == "__main__":
    main()
