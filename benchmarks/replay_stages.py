"""Where replay's time goes: each stage of the pipeline timed alone, per trace.

``replay_throughput.py`` says how fast replay is; this says why. The same
synthetic traces (``shared/bench/make_traces.py``) go through the stages replay
chains, each stage run over every trace before the next, so each is timed
alone:

1. ``read``: the file's framing into payloads;
2. ``decode``: ``decode_protobuf`` with replay's attribute selector;
3. ``assemble``: the ``TraceAssembler`` on trace time, as replay drives it;
4. ``normalize``: trajectories, built to the depth replay builds them (the parts
   the loaded evaluators read, ``evaluators.depth``: none for evald's own);
   ``JSON, all parsed`` beside it is what parsing every JSON document the spans
   carry would cost (``parse_json`` on the same strings): normalization parses only
   the few it must (ADR 0019), so this is an upper bound of what laziness saves;
5. ``match``: choosing the specs and evaluators of each trajectory;
6. ``evaluate``: the ``EvaluationRunner`` over them;
7. ``sinks``: the run summary replay's reports are built from.

Beside them, the same traces as OTLP/JSON lines (``make_traces.py --jsonl``, the
Collector file exporter's default format): what reading and decoding cost instead
of the binary ``read`` and ``decode`` (the other stages do not depend on the input
format).

Two evaluator sets, as in ``replay_throughput.py``: the always-on evaluators
only, and with ``benchmarks/specs`` (12 more per trace). Every trace is held in
memory between stages, so the cyclic collector is paused while a stage is timed
(a collection over the whole held set would be charged to whichever stage
triggers it); each stage is the best of ``--repeat`` runs, in CPU seconds of this
process (other load on the machine inflates those far less than the wall clock).
The ``evaluate`` runs each get trajectories normalised afresh (untimed): evaluators
parse the tool arguments they read on first read, and a run over trajectories an
earlier run had read would not pay for it. Shares of the total, and the total
against the 100 µs per trace that 10 000 traces/s allows, are the figures to compare
across machines. Last, a whole replay of the same file (construction included): the
stages timed apart add up to less than it (docs/adr/0021-replay-throughput.md,
addendum of 2026-11-27).

    python benchmarks/replay_stages.py [--traces 5000] [--repeat 3] [--file t.pb]
                                       [--json-file t.jsonl]
"""

from __future__ import annotations

import argparse
import gc
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from collector.assembly.traces import TraceAssembler
from collector.config.settings import Config
from collector.core.clock import ManualClock
from collector.core.records import CompletionReason, Trace
from collector.decode import decode_protobuf
from collector.decode.common import DecodedBatch
from collector.normalize import normalize_for
from collector.normalize.values import parse_json
from collector.offline.decoding import decode_payload
from collector.offline.readers import read_payloads
from collector.offline.replay import Replayer
from collector.offline.reports.sink import SummarySink
from collector.offline.reports.summary import RunSummary
from collector.processing.wiring import ActiveSpecs, decoder_selector
from collector.telemetry.registry import Telemetry
from evaluators.runner import BoundEvaluator, EvaluationRunner, Outcome, bind_always, due
from evaluators.spec import SpecSet, parts_read_by
from evaluators.trajectory import Trajectory

ROOT = Path(__file__).resolve().parent.parent
T = TypeVar("T")
TARGET_US = 100.0  # 10 000 traces/s on one core


def best_of(
    repeat: int, stage: Callable[[], T], fresh: Callable[[], object] | None = None
) -> tuple[float, T]:
    """(best seconds, result of the last run) of ``stage`` with the collector paused;
    ``fresh`` runs, untimed, before each run (to undo what a run leaves behind)."""
    best, result = float("inf"), None
    for _ in range(repeat):
        if fresh is not None:
            fresh()
        gc.collect()
        gc.disable()
        try:
            started = time.process_time()
            result = stage()
            best = min(best, time.process_time() - started)
        finally:
            gc.enable()
    assert result is not None
    return best, result


def assemble(config: Config, batches: list[DecodedBatch]) -> list[Trace]:
    clock = ManualClock()
    traces: list[Trace] = []
    assembler = TraceAssembler(config.assembly, clock, Telemetry())

    def offer(trace: Trace) -> bool:
        traces.append(trace)
        return True

    for batch in batches:
        if batch.spans:
            clock.set(max(span.end_unix_nano for span in batch.spans) / 1e9)
            assembler.add(batch.spans, offer)
        assembler.tick(offer)
    assembler.flush(CompletionReason.END_OF_INPUT, offer)
    return traces


def json_documents(traces: list[Trace]) -> list[str]:
    """The attribute strings the normalizer may parse as JSON (objects and arrays)."""
    return [
        value
        for trace in traces
        for span in trace.spans
        for value in span.attributes.values()
        if isinstance(value, str) and value[:1] in ("{", "[")
    ]


def bind(
    specs: SpecSet, always: list[BoundEvaluator], trajectories: list[Trajectory]
) -> list[list[BoundEvaluator]]:
    chosen = []
    for trajectory in trajectories:
        bound = [*always, *specs.bound_for(trajectory)]
        chosen.append([item for item in bound if due(item, trajectory)])
    return chosen


def evaluate(
    trajectories: list[Trajectory], bound: list[list[BoundEvaluator]]
) -> list[list[Outcome]]:
    with EvaluationRunner() as runner:
        return [runner.run(t, b) for t, b in zip(trajectories, bound, strict=True)]


def summarise(trajectories: list[Trajectory], outcomes: list[list[Outcome]]) -> RunSummary:
    sink = SummarySink(RunSummary())
    for trajectory, results in zip(trajectories, outcomes, strict=True):
        sink.write(trajectory, results)
    return sink.summary


def run(
    config: Config, path: Path, lines: Path, repeat: int
) -> tuple[int, dict[str, float], float]:
    """(traces, seconds per stage, evaluations per trace); stages whose name starts
    with a space are parts or alternatives, not counted in the total."""
    took: dict[str, float] = {}
    took["read"], payloads = best_of(repeat, lambda: [p.data for p in read_payloads(path)])
    selector = decoder_selector(config)
    took["decode"], batches = best_of(
        repeat, lambda: [decode_protobuf(data, selector) for data in payloads]
    )
    took["assemble"], traces = best_of(repeat, lambda: assemble(config, batches))
    specs, always = ActiveSpecs(config, Telemetry())(), bind_always(config.evaluation.always)
    # What replay builds: the parts its evaluators read (evald's own read none).
    parts = parts_read_by([*always, *(b for spec in specs for b in spec.bound)])
    mappings = config.normalization.mappings

    def normalize_all() -> list[Trajectory]:
        return [normalize_for(t, mappings, parts)[0] for t in traces]

    took["normalize"], trajectories = best_of(repeat, normalize_all)
    documents = json_documents(traces)
    took[" JSON, all parsed"], _ = best_of(repeat, lambda: [parse_json(d) for d in documents])
    took["match"], bound = best_of(repeat, lambda: bind(specs, always, trajectories))
    # Evaluators parse the arguments they read on first read (ADR 0019): each run gets
    # trajectories normalised afresh, or the runs after the first would find them parsed.
    fresh: list[list[Trajectory]] = [trajectories]

    def renormalize() -> None:
        fresh[0] = normalize_all()

    took["evaluate"], outcomes = best_of(
        repeat, lambda: evaluate(fresh[0], bound), fresh=renormalize
    )
    took["sinks"], _ = best_of(repeat, lambda: summarise(trajectories, outcomes))
    took[" JSON lines: read"], json_payloads = best_of(repeat, lambda: list(read_payloads(lines)))
    took[" JSON lines: decode"], _ = best_of(
        repeat, lambda: [decode_payload(payload, selector) for payload in json_payloads]
    )
    evaluations = sum(len(results) for results in outcomes) / len(traces)
    return len(traces), took, evaluations


def report(name: str, traces: int, took: dict[str, float], evaluations: float) -> None:
    total = sum(seconds for stage, seconds in took.items() if not stage.startswith(" "))
    per_trace = total / traces * 1e6
    print(f"{name}: {evaluations:.0f} evaluations/trace, {per_trace:.0f} us/trace in all "
          f"({per_trace / TARGET_US:.1f}x the {TARGET_US:.0f} us of 10 000 traces/s)")  # fmt: skip
    for stage, seconds in took.items():
        print(f"  {stage:<20} {seconds / traces * 1e6:7.1f} us  {seconds / total:6.1%}")
    binary = took["read"] + took["decode"]
    instead = took[" JSON lines: read"] + took[" JSON lines: decode"]
    extra = (instead - binary) / traces * 1e6
    print(f"  OTLP/JSON lines instead of binary: {extra:+.0f} us/trace, "
          f"{(total - binary + instead) / total:.2f}x the time in all")  # fmt: skip
    floor = (took["read"] + took["decode"]) / traces * 1e6
    print(f"  read + decode: {floor:.0f} us, {floor / TARGET_US:.2f} of the 100 us budget")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--traces", type=int, default=5_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--file", type=Path, help="an existing make_traces.py --pb file")
    parser.add_argument("--json-file", type=Path, help="the same traces, make_traces.py --jsonl")
    parser.add_argument("--bench-dir", type=Path, default=ROOT.parent / "shared" / "bench")
    args = parser.parse_args()
    examples = str(ROOT / "config" / "specs" / "*.yaml")
    synthetic = str(ROOT / "benchmarks" / "specs" / "*.yaml")
    configs = {
        "always-on": Config.model_validate({"specs": [examples]}),
        "+ spec": Config.model_validate({"specs": [examples, synthetic]}),
    }
    with tempfile.TemporaryDirectory() as directory:
        script = args.bench_dir / "make_traces.py"
        made: list[Path] = []
        for form, given in (("pb", args.file), ("jsonl", args.json_file)):
            path = given or Path(directory) / f"traces.{form}"
            if given is None:
                argv = [sys.executable, str(script), "--traces", str(args.traces), f"--{form}"]
                subprocess.run([*argv, str(path)], check=True, stdout=subprocess.DEVNULL)
            made.append(path)
        for name, config in configs.items():
            traces, took, evaluations = run(config, made[0], made[1], args.repeat)
            report(name, traces, took, evaluations)
            whole(config, made[0], traces, took, args.repeat)


def whole(config: Config, path: Path, traces: int, took: dict[str, float], repeat: int) -> None:
    """The whole replay of the same file beside the stages' sum: it costs more, because
    a stage timed apart runs over traces an earlier run of it has touched (a trace's
    second normalization costs 25-35 % less than its first; docs/adr/0021)."""
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        Replayer(config).run([str(path)])
        best = min(best, time.process_time() - started)
    total = sum(seconds for stage, seconds in took.items() if not stage.startswith(" "))
    print(f"  a whole replay: {best / traces * 1e6:.0f} us/trace, "
          f"{best / total:.2f}x the stages' sum")  # fmt: skip


if __name__ == "__main__":
    main()
