"""Ingestion with a slow LLM judge versus without one (issue 7, acceptance 2).

Runs ``evald serve`` twice per round on the same load (``shared/bench/loadgen.py``,
OTLP/gRPC at full speed, evald pinned to CPU 0 and the load to CPU 1, as in
``serve_throughput.py``): once with the example specs only, once adding a spec
whose LLM judge evaluator runs on *every* trace against a local chat-completions
server that takes ``--judge-delay`` seconds (default 5) per call. Rounds alternate
the order of the two runs (ABBA) so that drift hits both. Prints the acked span
rates and their ratio (the goal: ≥ 0.90), the same per CPU-second of evald (robust
when other processes share the machine), and what the judge did: calls, work shed.
Everything is loopback and bounded (2 runs per round, each warm-up + duration).

    python benchmarks/judge_shedding.py [--duration 10] [--rounds 2] [--judge-delay 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from aiohttp import web
from serve_throughput import ROOT, _ok, _sum_metric, free_port, load, pinned, wait_for

JUDGED_SPEC = """\
id: judged-everything
description: an LLM judge on every trace (sample_rate 1.0)
evaluators: [{name: response_follows_trajectory, judge: slow}]
"""


class SlowJudge:
    """A chat-completions endpoint answering every call after ``delay`` seconds."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.calls = 0
        self.port = free_port()
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        self._ready.wait(10)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _serve(self) -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._answer)
        runner = web.AppRunner(app, access_log=None)
        self._loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", self.port)
        self._loop.run_until_complete(site.start())
        self._ready.set()
        self._loop.run_forever()

    async def _answer(self, request: web.Request) -> web.Response:
        self.calls += 1
        await request.read()
        await asyncio.sleep(self.delay)  # the slow judge under test, not synchronization
        content = json.dumps({"reasoning": "follows", "score": 1})
        return web.json_response(
            {"choices": [{"message": {"role": "assistant", "content": content}}],
             "usage": {"prompt_tokens": 500, "completion_tokens": 20}}
        )  # fmt: skip


METRICS = (
    "evald_traces_evaluated_total",
    "evald_judge_shed_total",
    "evald_judge_queue_depth",
    "evald_judge_calls_total",
    "evald_spans_refused_total",
)


def settled_metrics(url: str, timeout: float = 30.0) -> str:
    """/metrics once the last traces of the load are evaluated (two equal counts 1.5 s
    apart), so that evaluated = shed + accepted holds in one scrape."""
    deadline = time.monotonic() + timeout
    previous = None
    while True:
        text = urllib.request.urlopen(url).read().decode()
        evaluated = _sum_metric(text, "evald_traces_evaluated_total")
        if evaluated == previous or time.monotonic() > deadline:
            return text
        previous = evaluated
        time.sleep(1.5)  # polling a separate process's counters, not synchronising a test


def run_evald(bench_dir: Path, args: argparse.Namespace, judge: SlowJudge | None) -> dict[str, Any]:
    """One ``evald serve`` under load; its loadgen result plus a few of its metrics."""
    grpc_port, http_port, admin_port = free_port(), free_port(), free_port()
    work = Path(tempfile.mkdtemp())
    specs = [str(ROOT / "config" / "specs" / "*.yaml")]
    judges = ""
    if judge is not None:
        (work / "judged.yaml").write_text(JUDGED_SPEC)
        specs.append(str(work / "judged.yaml"))
        judges = (
            f"judges: {{queue_size: {args.queue_size}, drain_timeout: 1s, endpoints: {{slow: "
            f"{{base_url: '{judge.url}', model: slow, max_concurrency: 4, timeout: 30s}}}}}}\n"
        )
    config = work / "evald.yaml"
    config.write_text(
        f"receivers: {{otlp: {{grpc: {{endpoint: 127.0.0.1:{grpc_port}}},"
        f" http: {{endpoint: 127.0.0.1:{http_port}}}}}}}\n"
        f"admin: {{endpoint: 127.0.0.1:{admin_port}}}\n"
        f"assembly: {{idle_timeout: 1s}}\n"
        f"specs: {json.dumps(specs)}\n{judges}"
    )
    evald = Path(sys.executable).parent / "evald"
    proc = subprocess.Popen(
        pinned("0", [str(evald), "--log-level", "WARNING", "serve", "--config", str(config)])
    )
    try:
        wait_for(lambda: _ok(f"http://127.0.0.1:{admin_port}/readyz"))
        label = "judged" if judge else "plain"
        result = load(bench_dir, grpc_port, proc.pid, args, label)
        metrics = settled_metrics(f"http://127.0.0.1:{admin_port}/metrics")
        for name in METRICS:
            result[name] = _sum_metric(metrics, name)
        return result
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bench-dir", type=Path, default=ROOT.parent / "shared" / "bench")
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--judge-delay", type=float, default=5.0)
    parser.add_argument("--queue-size", type=int, default=100)  # the config default
    args = parser.parse_args()
    judge = SlowJudge(args.judge_delay)
    plain: list[dict[str, Any]] = []
    judged: list[dict[str, Any]] = []
    for round_ in range(args.rounds):
        order = (None, judge) if round_ % 2 == 0 else (judge, None)
        for which in order:
            (judged if which else plain).append(run_evald(args.bench_dir, args, which))
    report(plain, judged, judge, args)


def report(
    plain: list[dict[str, Any]], judged: list[dict[str, Any]], judge: SlowJudge, args: Any
) -> None:
    def rate(runs: list[dict[str, Any]], key: str = "acked_spans_per_s") -> float:
        return statistics.median(run.get(key) or 0.0 for run in runs)

    cpu = "acked_spans_per_target_cpu_s"
    print(f"no judge:   {rate(plain):,.0f} spans/s  " + _each(plain))
    print(f"slow judge: {rate(judged):,.0f} spans/s  " + _each(judged))
    per_cpu = (rate(plain, cpu), rate(judged, cpu))
    print(
        f"per evald CPU-second: no judge {per_cpu[0]:,.0f}, slow judge {per_cpu[1]:,.0f} "
        f"(ratio {per_cpu[1] / per_cpu[0]:.3f})"
    )
    print(f"  judge delay {args.judge_delay:g}s, max_concurrency 4, queue_size {args.queue_size}")
    for n, run in enumerate(judged, 1):
        evaluated, shed = run["evald_traces_evaluated_total"], run["evald_judge_shed_total"]
        print(
            f"  run {n}: traces evaluated {evaluated:,.0f} = shed {shed:,.0f} + accepted "
            f"{evaluated - shed:,.0f} (judge calls finished {run['evald_judge_calls_total']:,.0f}"
            f", pending {run['evald_judge_queue_depth']:,.0f}); "
            f"spans refused {run['evald_spans_refused_total']:,.0f}"
        )
    refused = ", ".join(f"{run['evald_spans_refused_total']:,.0f}" for run in plain)
    print(f"  no-judge runs: spans refused {refused} (evaluation queue full → UNAVAILABLE)")
    print(f"  requests received by the judge server: {judge.calls:,}")
    ratio = rate(judged) / rate(plain)
    verdict = "within" if ratio >= 0.9 else "NOT within"
    print(f"ratio judged / plain: {ratio:.3f} ({verdict} 10 %)")


def _each(runs: list[dict[str, Any]]) -> str:
    return "(" + ", ".join(f"{run['acked_spans_per_s']:,.0f}" for run in runs) + ")"


if __name__ == "__main__":
    main()
