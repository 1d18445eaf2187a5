"""What grpcio's asyncio server costs per span against its thread-pool server, in one run.

Both receivers do nothing with a request (the handler answers an empty response to the
raw bytes): what is left is grpcio's own per-request work, in the form ``evald serve``
uses (``grpc.aio`` on the event loop, ADR 0001) and in the form of the decode-only
baseline of ``serve_throughput.py`` (``grpc.server`` with a thread pool). Each is pinned
to CPU 0 and driven by ``shared/bench/loadgen.py`` on CPU 1 (512-span requests, as
``serve_throughput.py``); the figure is spans per receiver CPU-second, since a null
receiver outruns the load generator. ADR 0018's session-22 addendum has the result.

    python benchmarks/grpc_server_overhead.py [--duration 8] [--repeat 2]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
from concurrent import futures
from pathlib import Path

import grpc
from serve_throughput import free_port, load, pinned

HERE = Path(__file__).resolve().parent
SERVICE = "opentelemetry.proto.collector.trace.v1.TraceService"
_OPTIONS = [("grpc.max_receive_message_length", 64 * 1024 * 1024)]


def serve(mode: str, port: int) -> None:
    """Run a null receiver in this process (the child the benchmark starts)."""
    if mode == "sync":
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=8), options=_OPTIONS)
        handler = grpc.unary_unary_rpc_method_handler(lambda request, context: b"")
        server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(SERVICE, {"Export": handler}),)
        )
        server.add_insecure_port(f"127.0.0.1:{port}")
        server.start()
        print("ready", flush=True)
        server.wait_for_termination()
        return

    async def run() -> None:
        server = grpc.aio.server(options=_OPTIONS)

        async def export(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
            return b""

        handler = grpc.unary_unary_rpc_method_handler(export)
        server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(SERVICE, {"Export": handler}),)
        )
        server.add_insecure_port(f"127.0.0.1:{port}")
        await server.start()
        print("ready", flush=True)
        await server.wait_for_termination()

    asyncio.run(run())


def measure(mode: str, args: argparse.Namespace) -> float:
    """Spans per receiver CPU-second of one null receiver under the load."""
    port = free_port()
    argv = [sys.executable, __file__, "--serve", mode, "--port", str(port)]
    proc = subprocess.Popen(pinned("0", argv), stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        proc.stdout.readline()  # "ready"
        result = load(args.bench_dir, port, proc.pid, args, f"null-{mode}")
        return float(result["acked_spans_per_target_cpu_s"])
    finally:
        proc.terminate()
        proc.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bench-dir", type=Path, default=HERE.parent.parent / "shared" / "bench")
    parser.add_argument("--duration", type=float, default=8.0)
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--serve", choices=("sync", "aio"), help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.port)
        return
    ratios = []
    for _ in range(args.repeat):
        sync, aio = measure("sync", args), measure("aio", args)
        ratios.append(aio / sync)
        print(f"thread-pool server {sync:,.0f} spans per CPU-s, asyncio server {aio:,.0f}: "
              f"{1e6 / aio - 1e6 / sync:.2f} µs more per span")  # fmt: skip
    print(f"asyncio / thread-pool spans per CPU-second: median {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
