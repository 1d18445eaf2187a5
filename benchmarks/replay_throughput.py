"""Traces/s through ``evald replay`` versus decode-only passes over the same file, in one run.

Input: ``shared/bench/make_traces.py --pb`` traces (10 spans each, ~10 KB per
trace, varint-framed), and the same traces as OTLP/JSON lines (``--jsonl``, one
request per line: the Collector file exporter's default format). Replay is
measured with two sets of deterministic evaluators:

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
4. ``replay JSON lines``: the always-on set end to end on the OTLP/JSON lines file;
5. ``shard i``: what worker ``i`` of ``--workers N`` replays (the ``+ spec`` set),
   alone in this process;
6. ``replay --workers N`` and ``--workers 1``: the ``+ spec`` set through ``run_job``
   (what ``evald replay`` runs) with N processes and with one.

Passes 1-5 run pinned to one CPU and are timed in CPU seconds of this process
(other load on the machine inflates those far less than the wall clock); pass 6 may
use every CPU and is timed by the wall clock, so it means something only with N
idle CPUs (the load average is printed). On a shared machine the ratio of pass 4 to
the slowest shard of pass 5 says what N workers reach when they have them (process
start and merge aside). Each pass is the
fastest of ``--repeat`` rounds, the rounds interleaving every pass, so a burst of
other load on the machine slows one round, not one pass. Prints traces/s and
ratios: compare ratios across machines, not absolute figures.

    python benchmarks/replay_throughput.py [--traces 10000] [--workers 2] [--repeat 3]
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TypeVar

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from collector.config.settings import Config
from collector.decode import decode_protobuf
from collector.offline.readers import read_payloads
from collector.offline.replay import Replayer, Shard
from collector.offline.workers import ReplayJob, run_job
from collector.processing.wiring import decoder_selector

ROOT = Path(__file__).resolve().parent.parent
T = TypeVar("T")


def make_file(bench_dir: Path, traces: int, directory: Path, form: str = "pb") -> Path:
    """``make_traces.py`` output: ``pb`` (varint-framed) or ``jsonl`` (OTLP/JSON lines)."""
    path = directory / f"traces-{traces}.{form}"
    script = bench_dir / "make_traces.py"
    subprocess.run([sys.executable, str(script), "--traces", str(traces), f"--{form}", str(path)],
                   check=True, stdout=subprocess.DEVNULL)  # fmt: skip
    return path


def timed(run: Callable[[], T], clock: Callable[[], float] = time.perf_counter) -> tuple[float, T]:
    started = clock()
    result = run()
    return clock() - started, result


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


def replay_shard(path: Path, config: Config, shard: Shard) -> int:
    """One ``--workers`` worker's share, in this process: its traces."""
    return Replayer(config, shard=shard).run([str(path)]).traces


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
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--bench-dir", type=Path, default=ROOT.parent / "shared" / "bench")
    args = parser.parse_args()
    examples = str(ROOT / "config" / "specs" / "*.yaml")
    always_on = Config.model_validate({"specs": [examples]})
    synthetic = str(ROOT / "benchmarks" / "specs" / "*.yaml")
    with_spec = Config.model_validate({"specs": [examples, synthetic]})
    with tempfile.TemporaryDirectory() as directory:
        path = make_file(args.bench_dir, args.traces, Path(directory))
        lines = make_file(args.bench_dir, args.traces, Path(directory), "jsonl")
        traces, _ = replay_once(path, with_spec)  # warm-up, and the trace count
        spans = parse_only(path)
        _, always_n = replay_once(path, always_on)
        _, spec_n = replay_once(path, with_spec)
        every_cpu = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set()
        one_cpu = {min(every_cpu)} if every_cpu else set()
        pinned: dict[str, Callable[[], object]] = {
            "parse": lambda: parse_only(path),
            "decode": lambda: decode_only(path, with_spec),
            "always": lambda: replay_once(path, always_on),
            "spec": lambda: replay_once(path, with_spec),
            "json": lambda: replay_once(lines, always_on),
        }
        for index in range(args.workers):
            shard = Shard(index, args.workers)
            pinned[f"shard {index}"] = partial(replay_shard, path, with_spec, shard)
        parallel: dict[str, Callable[[], object]] = {
            "one worker": lambda: replay_workers(path, with_spec, 1),
            "workers": lambda: replay_workers(path, with_spec, args.workers),
        }
        took: dict[str, float] = {}
        for _ in range(args.repeat):
            # One process on one CPU: its CPU time, which other load on the machine
            # inflates far less than the wall clock. Several processes: the wall clock.
            for cpus, runs, clock in (
                (one_cpu, pinned, time.process_time),
                (every_cpu, parallel, time.perf_counter),
            ):
                pin(cpus)
                for name, run in runs.items():
                    seconds, _ = timed(run, clock)
                    took[name] = min(took.get(name, math.inf), seconds)
    print(f"{traces} traces, {spans} spans; load average {os.getloadavg()[0]:.2f}; "
          f"fastest of {args.repeat} rounds; 1 CPU: per CPU-second")  # fmt: skip
    passes = [
        ("parse (1 CPU)", took["parse"]),
        ("decode (1 CPU)", took["decode"]),
        (f"replay always-on (1 CPU, {always_n / traces:.0f} evaluations/trace)", took["always"]),
        (f"replay + spec (1 CPU, {spec_n / traces:.0f} evaluations/trace)", took["spec"]),
        ("replay always-on, OTLP/JSON lines (1 CPU)", took["json"]),
        ("replay + spec --workers 1", took["one worker"]),
        (f"replay + spec --workers {args.workers}", took["workers"]),
    ]
    for name, seconds in passes:
        per_s = f"{traces / seconds:>9,.0f} traces/s  {spans / seconds:>10,.0f} spans/s"
        print(f"  {name:<50} {per_s}")
    print(f"  {'replay always-on / decode-only':<50} {took['decode'] / took['always']:.3f}")
    print(f"  {'replay + spec / replay always-on':<50} {took['always'] / took['spec']:.3f}")
    print(f"  {'JSON lines / binary (always-on, end to end)':<50} "
          f"{took['json'] / took['always']:.2f}x the time")  # fmt: skip
    ratio = took["one worker"] / took["workers"]
    print(f"  {f'workers {args.workers} / workers 1 (+ spec)':<50} {ratio:.2f}x")
    # What N workers reach with N idle CPUs: each worker's share timed alone, on one
    # CPU, against the whole run (process start and merge not included).
    slowest = max(took[f"shard {index}"] for index in range(args.workers))
    print(f"  {f'  with {args.workers} idle CPUs: one process / slowest shard':<50} "
          f"{took['spec'] / slowest:.2f}x")  # fmt: skip


if __name__ == "__main__":
    main()
