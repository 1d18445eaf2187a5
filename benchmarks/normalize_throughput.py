"""Spans/s through normalization alone versus decoding the same spans, in one run.

Input: ``shared/bench/make_traces.py --pb`` traces (1 ``invoke_agent``, 4 ``chat``,
5 ``execute_tool`` spans each; GenAI semconv, JSON arguments and results of
200-500 bytes). Passes, each over the same spans, pinned to one CPU and repeated
(the fastest repeat counts: other processes only ever slow a pass down):

1. ``parse``: ``ExportTraceServiceRequest.FromString`` only (upb, the floor; no
   evald code runs, so it is the yardstick that changes to evald cannot move);
2. ``decode``: ``decode_protobuf`` with replay's attribute selector;
3. ``normalize``: ``normalize(trace)`` for every trace, spans grouped as the
   assembler releases them (arrival order); tool arguments and results are parsed
   when read (ADR 0019), and nothing reads them here: what a trace whose evaluators
   read only names, errors and timings costs;
4. ``+ read all``: the same, then every step's ``args`` and ``result`` read (parsed):
   what a trace costs when its evaluators or sinks read everything.

The passes alternate, so that load from other processes hits them alike. To
compare two commits, run this on each, alternately, and compare µs/trace: the
``parse`` floor is not immune to evald's changes after all (with the decoded spans
held, upb's parse ran 2x slower in one build than in another: allocator state), so
the ratios to it compare runs of one build only. Prints
spans/s and µs/trace for each, and normalize / decode and both / parse time:
compare those ratios across machines and commits, not the absolute figures.

    python benchmarks/normalize_throughput.py [--traces 2000] [--repeat 7] [--file t.pb]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from collector.config.settings import Config
from collector.core.records import CompletionReason, Span, Trace
from collector.decode import decode_protobuf
from collector.normalize import normalize
from collector.offline.readers import read_payloads
from collector.processing.wiring import decoder_selector

ROOT = Path(__file__).resolve().parent.parent


def make_file(bench_dir: Path, traces: int, directory: Path) -> Path:
    path = directory / f"traces-{traces}.pb"
    script = bench_dir / "make_traces.py"
    subprocess.run([sys.executable, str(script), "--traces", str(traces), "--pb", str(path)],
                   check=True, stdout=subprocess.DEVNULL)  # fmt: skip
    return path


def fastest(runs: list[Callable[[], object]], repeat: int) -> list[float]:
    """The fastest of ``repeat`` timings of each of ``runs``, taken in turn."""
    best = [float("inf")] * len(runs)
    for _ in range(repeat):
        for k, run in enumerate(runs):
            started = time.perf_counter()
            run()
            best[k] = min(best[k], time.perf_counter() - started)
    return best


def group(spans: list[Span]) -> list[Trace]:
    by_trace: dict[bytes, list[Span]] = {}
    for span in spans:
        by_trace.setdefault(span.trace_id, []).append(span)
    return [
        Trace(trace_id, tuple(members), CompletionReason.IDLE, 0.0, 0.0)
        for trace_id, members in by_trace.items()
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--traces", type=int, default=2_000)
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--file", type=Path, help="an existing make_traces.py --pb file")
    parser.add_argument("--bench-dir", type=Path, default=ROOT.parent / "shared" / "bench")
    args = parser.parse_args()
    selector = decoder_selector(Config())
    with tempfile.TemporaryDirectory() as directory:
        path = args.file or make_file(args.bench_dir, args.traces, Path(directory))
        payloads = [payload.data for payload in read_payloads(path)]
    spans = [span for data in payloads for span in decode_protobuf(data, selector).spans]
    traces = group(spans)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})

    def parse_all() -> None:
        for data in payloads:
            ExportTraceServiceRequest.FromString(data)

    def decode_all() -> None:
        for data in payloads:
            decode_protobuf(data, selector)

    def normalize_all() -> None:
        for trace in traces:
            normalize(trace)

    def normalize_and_read_all() -> None:
        for trace in traces:
            for step in normalize(trace).steps:
                step.args, step.result  # noqa: B018  (the read parses)

    timed = fastest([parse_all, decode_all, normalize_all, normalize_and_read_all], args.repeat)
    parse_s, decode_s, normalize_s, read_all_s = timed
    print(f"{len(traces)} traces, {len(spans)} spans; load average {os.getloadavg()[0]:.2f}")
    for name, took in zip(("parse", "decode", "normalize", "+ read all"), timed, strict=True):
        per_trace = took / len(traces) * 1e6
        print(f"  {name:<10} {len(spans) / took:>10,.0f} spans/s  {per_trace:>7.1f} µs/trace")
    print(f"  normalize / decode time     {normalize_s / decode_s:.3f}")
    print(f"  decode / parse time         {decode_s / parse_s:.2f}")
    print(f"  normalize / parse time      {normalize_s / parse_s:.2f}")
    print(f"  + read all / parse time     {read_all_s / parse_s:.2f}")


if __name__ == "__main__":
    main()
