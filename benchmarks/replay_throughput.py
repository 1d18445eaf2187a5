"""Traces/s through ``evald replay`` versus decode-only passes over the same file, in one run.

Input: ``shared/bench/make_traces.py --pb`` traces (10 spans each, ~10 KB per
trace, varint-framed), the example specs of ``config/specs`` and the always-on
evaluators (latency, failure): deterministic evaluators only. Passes, each timed
on the same file:

1. ``parse``: read the framing and ``ExportTraceServiceRequest.FromString`` (the floor);
2. ``decode``: ``decode_protobuf`` into ``Span`` records with replay's attribute selector;
3. ``replay``: ``Replayer`` end to end (decode, assembly, normalize, evaluate, report);
4. ``replay --workers N``: the same through ``run_job`` with N processes.

Passes 1-3 run pinned to one CPU; pass 4 may use them all. Prints traces/s and
the ratios replay/decode and workers/one-process: compare ratios across machines,
not absolute figures (other processes on the machine slow every pass alike).

    python benchmarks/replay_throughput.py [--traces 10000] [--workers 2] [--file t.pb]
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

from collector.app import decoder_selector
from collector.config import Config
from collector.decode import decode_protobuf
from collector.files import read_payloads
from collector.replay import Replayer
from collector.replay_workers import ReplayJob, run_job

ROOT = Path(__file__).resolve().parent.parent


def make_file(bench_dir: Path, traces: int, directory: Path) -> Path:
    path = directory / f"traces-{traces}.pb"
    script = bench_dir / "make_traces.py"
    subprocess.run([sys.executable, str(script), "--traces", str(traces), "--pb", str(path)],
                   check=True, stdout=subprocess.DEVNULL)  # fmt: skip
    return path


def timed(run: Callable[[], int]) -> tuple[float, int]:
    started = time.perf_counter()
    count = run()
    return time.perf_counter() - started, count


def parse_only(path: Path) -> int:
    spans = 0
    for payload in read_payloads(path):
        request = ExportTraceServiceRequest.FromString(payload.data)
        spans += sum(len(s.spans) for r in request.resource_spans for s in r.scope_spans)
    return spans


def decode_only(path: Path, config: Config) -> int:
    selector = decoder_selector(config)
    return sum(len(decode_protobuf(p.data, selector).spans) for p in read_payloads(path))


def replay_once(path: Path, config: Config) -> int:
    return Replayer(config).run([str(path)]).traces


def replay_workers(path: Path, config: Config, workers: int) -> int:
    job = ReplayJob(config, (str(path),), workers=workers)
    with tempfile.TemporaryDirectory() as scratch:
        return run_job(job, Path(scratch), {}, lambda _: None).summary.traces


def pin(cpus: set[int]) -> None:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--traces", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--file", type=Path, help="an existing make_traces.py --pb file")
    parser.add_argument("--bench-dir", type=Path, default=ROOT.parent / "shared" / "bench")
    args = parser.parse_args()
    config = Config.model_validate({"specs": [str(ROOT / "config" / "specs" / "*.yaml")]})
    with tempfile.TemporaryDirectory() as directory:
        path = args.file or make_file(args.bench_dir, args.traces, Path(directory))
        traces = replay_once(path, config)  # warm-up, and the trace count
        every_cpu = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set()
        pin({min(every_cpu)} if every_cpu else set())
        parse_s, spans = timed(lambda: parse_only(path))
        decode_s, _ = timed(lambda: decode_only(path, config))
        replay_s, _ = timed(lambda: replay_once(path, config))
        pin(every_cpu)
        workers_s, _ = timed(lambda: replay_workers(path, config, args.workers))
    report(traces, spans, parse_s, decode_s, replay_s, workers_s, args.workers)


def report(traces: int, spans: int, *seconds: float | int) -> None:
    parse_s, decode_s, replay_s, workers_s, workers = seconds
    print(f"{traces} traces, {spans} spans; load average {os.getloadavg()[0]:.2f}")
    passes = [("parse (1 CPU)", parse_s), ("decode (1 CPU)", decode_s),
              ("replay (1 CPU)", replay_s), (f"replay --workers {workers}", workers_s)]  # fmt: skip
    for name, took in passes:
        print(f"  {name:<22} {traces / took:>9,.0f} traces/s  {spans / took:>10,.0f} spans/s")
    print(f"  replay / decode-only          {decode_s / replay_s:.3f}")
    print(f"  replay / parse-only           {parse_s / replay_s:.3f}")
    print(f"  workers {workers} / one process     {replay_s / workers_s:.2f}x")


if __name__ == "__main__":
    main()
