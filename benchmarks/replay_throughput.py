"""Traces/s through ``evald replay`` versus decode-only passes over the same file, in one run.

Input: ``shared/bench/make_traces.py --pb`` traces (10 spans each, ~10 KB per
trace, varint-framed). Replay is measured with two sets of deterministic
evaluators:

* ``always-on``: the example specs of ``config/specs``, which match none of the
  synthetic traces, so only the always-on ``latency`` and ``failure`` run (2
  evaluations per trace): the cost of the pipeline itself;
* ``+ spec``: the same plus ``benchmarks/specs/synthetic-agents.yaml``, which
  matches every synthetic trace and runs 12 more (trajectory matching, policies,
  budgets): 14 evaluations per trace, what a spec'd agent costs.

Passes, each timed on the same file:

1. ``parse``: read the framing and ``ExportTraceServiceRequest.FromString`` (the floor);
2. ``decode``: ``decode_protobuf`` into ``Span`` records with replay's attribute selector;
3. ``replay``: ``Replayer`` end to end (decode, assembly, normalize, evaluate, report),
   once per evaluator set;
4. ``replay --workers N``: the ``+ spec`` set through ``run_job`` with N processes.

Passes 1-3 run pinned to one CPU; pass 4 may use them all. Prints traces/s and
ratios: compare ratios across machines, not absolute figures (other processes
on the machine slow every pass alike).

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
from typing import TypeVar

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from collector.config.settings import Config
from collector.decode import decode_protobuf
from collector.offline.readers import read_payloads
from collector.offline.replay import Replayer
from collector.offline.workers import ReplayJob, run_job
from collector.processing.wiring import decoder_selector

ROOT = Path(__file__).resolve().parent.parent
T = TypeVar("T")


def make_file(bench_dir: Path, traces: int, directory: Path) -> Path:
    path = directory / f"traces-{traces}.pb"
    script = bench_dir / "make_traces.py"
    subprocess.run([sys.executable, str(script), "--traces", str(traces), "--pb", str(path)],
                   check=True, stdout=subprocess.DEVNULL)  # fmt: skip
    return path


def timed(run: Callable[[], T]) -> tuple[float, T]:
    started = time.perf_counter()
    result = run()
    return time.perf_counter() - started, result


def parse_only(path: Path) -> int:
    spans = 0
    for payload in read_payloads(path):
        request = ExportTraceServiceRequest.FromString(payload.data)
        spans += sum(len(s.spans) for r in request.resource_spans for s in r.scope_spans)
    return spans


def decode_only(path: Path, config: Config) -> int:
    selector = decoder_selector(config)
    return sum(len(decode_protobuf(p.data, selector).spans) for p in read_payloads(path))


def replay_once(path: Path, config: Config) -> tuple[int, int]:
    """(traces, evaluations) of one replay."""
    summary = Replayer(config).run([str(path)])
    return summary.traces, sum(metric.count for metric in summary.metrics.values())


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
    examples = str(ROOT / "config" / "specs" / "*.yaml")
    always_on = Config.model_validate({"specs": [examples]})
    synthetic = str(ROOT / "benchmarks" / "specs" / "*.yaml")
    with_spec = Config.model_validate({"specs": [examples, synthetic]})
    with tempfile.TemporaryDirectory() as directory:
        path = args.file or make_file(args.bench_dir, args.traces, Path(directory))
        traces, _ = replay_once(path, with_spec)  # warm-up, and the trace count
        every_cpu = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set()
        pin({min(every_cpu)} if every_cpu else set())
        parse_s, spans = timed(lambda: parse_only(path))
        decode_s, _ = timed(lambda: decode_only(path, with_spec))
        always_s, (_, always_n) = timed(lambda: replay_once(path, always_on))
        spec_s, (_, spec_n) = timed(lambda: replay_once(path, with_spec))
        pin(every_cpu)
        workers_s, _ = timed(lambda: replay_workers(path, with_spec, args.workers))
    print(f"{traces} traces, {spans} spans; load average {os.getloadavg()[0]:.2f}")
    passes = [
        ("parse (1 CPU)", parse_s),
        ("decode (1 CPU)", decode_s),
        (f"replay always-on (1 CPU, {always_n / traces:.0f} evaluations/trace)", always_s),
        (f"replay + spec (1 CPU, {spec_n / traces:.0f} evaluations/trace)", spec_s),
        (f"replay + spec --workers {args.workers}", workers_s),
    ]
    for name, took in passes:
        print(f"  {name:<50} {traces / took:>9,.0f} traces/s  {spans / took:>10,.0f} spans/s")
    print(f"  {'replay always-on / decode-only':<50} {decode_s / always_s:.3f}")
    print(f"  {'replay + spec / replay always-on':<50} {always_s / spec_s:.3f}")
    print(f"  {f'workers {args.workers} / one process (+ spec)':<50} {spec_s / workers_s:.2f}x")


if __name__ == "__main__":
    main()
