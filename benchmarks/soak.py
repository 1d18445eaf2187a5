"""Soak: steady load for a long while, hot reloads, judges; nothing may grow without bound.

Runs ``evald serve`` for ``--minutes`` (default 10) under a steady OTLP/HTTP load of
``--rate`` traces per second (agent, LLM and tool spans from a bounded set of
services, agents and tools), with a spec whose LLM judge runs on a share of the
traces against a local chat-completions server (``judge_shedding.SlowJudge``), and
the spec file rewritten every ``--reload-every`` seconds (a hot reload). Every
``--report-every`` seconds it prints the daemon's RSS, open file descriptors,
threads and evaluation queue depth, with the traces evaluated, judge calls and
reloads so far. At the end it compares the last third of the run with the middle
third and fails (exit 1) when RSS, descriptors, threads or the queue kept growing,
when an export was refused other than as retryable, or when no reload or judge
call happened.

    python benchmarks/soak.py [--minutes 10] [--rate 30] [--reload-every 60] [--report-every 30]
"""

from __future__ import annotations

import argparse
import http.client
import sys
import threading
import time

from daemon_process import Evald, Stats
from judge_shedding import SlowJudge
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

SAMPLE_S = 5.0
SPEC = """\
id: soak
description: the soak benchmark's traces (benchmarks/soak.py); rewritten to reload
match: {{service: {{regex: "^soak-"}}}}
reference: {{trajectory: [{{tool: lookup_order}}, {{tool: refund}}]}}
evaluators:
  - trajectory_in_order_match
  - trajectory_recall
  - {{name: max_steps, criteria: {{limit: {limit}}}}}
  - {{name: response_follows_trajectory, judge: local, sample_rate: 0.2}}
"""
TOOLS = ("lookup_order", "refund", "search", "send_email")
PROTOBUF = {"Content-Type": "application/x-protobuf"}
Connection = http.client.HTTPConnection


def attr(key: str, value: str | int) -> KeyValue:
    if isinstance(value, int):
        return KeyValue(key=key, value=AnyValue(int_value=value))
    return KeyValue(key=key, value=AnyValue(string_value=value))


def trace(n: int) -> ResourceSpans:
    """One agent run: root, an LLM call, two or three tool calls; ids unique per ``n``."""
    trace_id, now = (n + 1).to_bytes(16, "big"), time.time_ns()
    root_id = b"\x01" * 8

    def span(k: int, name: str, *attributes: KeyValue, parent: bytes = root_id) -> Span:
        return Span(trace_id=trace_id, span_id=bytes([k]) * 8, parent_span_id=parent, name=name,
                    start_time_unix_nano=now + k, end_time_unix_nano=now + 10_000_000,
                    attributes=list(attributes))  # fmt: skip

    agent = f"soak-agent-{n % 5}"
    spans = [
        span(1, f"invoke_agent {agent}", attr("gen_ai.operation.name", "invoke_agent"),
             attr("gen_ai.agent.name", agent),
             attr("gen_ai.input.messages", '[{"role": "user", "parts": [{"type": "text", '
                  f'"content": "refund order {n}"}}]}}]'), parent=b""),
        span(2, "chat model", attr("gen_ai.operation.name", "chat"),
             attr("gen_ai.request.model", "m"), attr("gen_ai.usage.input_tokens", 120),
             attr("gen_ai.usage.output_tokens", 30)),
        *(span(3 + i, f"execute_tool {tool}", attr("gen_ai.operation.name", "execute_tool"),
               attr("gen_ai.tool.name", tool), attr("gen_ai.tool.call.arguments", '{"id": 7}'))
          for i, tool in enumerate(TOOLS[: 2 + n % 2])),
    ]  # fmt: skip
    resource_spans = ResourceSpans(scope_spans=[ScopeSpans(spans=spans)])
    resource_spans.resource.attributes.append(attr("service.name", f"soak-svc-{n % 4}"))
    return resource_spans


class Load(threading.Thread):
    """``rate`` traces per second, sent twice a second, 503s retried after Retry-After."""

    def __init__(self, port: int, rate: int, stop: threading.Event) -> None:
        super().__init__(daemon=True)
        self.port, self.rate, self.stop = port, rate, stop
        self.sent = self.retried = 0
        self.refused: dict[int, int] = {}

    def run(self) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        tick = time.monotonic()
        while not self.stop.is_set():
            batch = [trace(self.sent + i) for i in range(max(1, self.rate // 2))]
            body = ExportTraceServiceRequest(resource_spans=batch).SerializeToString()
            connection = self.post(connection, body)
            self.sent += len(batch)
            tick += 0.5
            self.stop.wait(max(0.0, tick - time.monotonic()))

    def post(
        self, connection: http.client.HTTPConnection, body: bytes
    ) -> http.client.HTTPConnection:
        while not self.stop.is_set():
            try:
                connection.request(
                    "POST", "/v1/traces", body, {"Content-Type": "application/x-protobuf"}
                )
                response = connection.getresponse()
                response.read()
            except (OSError, http.client.HTTPException):  # the server closed an idle connection
                connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
                continue
            if response.status == 200:
                return connection
            if response.status != 503:
                self.refused[response.status] = self.refused.get(response.status, 0) + 1
                return connection
            self.retried += 1
            self.stop.wait(float(response.headers.get("Retry-After", "1")))
        return connection


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--rate", type=int, default=30, help="traces per second")
    parser.add_argument("--reload-every", type=float, default=60.0)
    parser.add_argument("--report-every", type=float, default=30.0)
    parser.add_argument("--bench-dir", help="unused (make bench passes it to every script)")
    args = parser.parse_args()
    judge = SlowJudge(0.05)
    # The bounded memories are small, so that they are full within the first minutes:
    # growth after that is a leak, not a cache filling up (at the defaults, 100 000
    # decided trace ids and judge replies take hours of this load to fill).
    config = (
        "specs: [soak-spec.yaml]\nspecs_watch_interval: 2s\n"
        "assembly: {idle_timeout: 1s, decided_traces_memory: 3000}\n"
        f"judges: {{cache_size: 300, endpoints: {{local: {{base_url: '{judge.url}', model: m, "
        "timeout: 10s}}}\n"
    )
    with Evald(config, {"soak-spec.yaml": SPEC.format(limit=10)}) as evald:
        samples, load = soak(evald, judge, args)
    return verdict(samples, load, args)


Sample = tuple[
    float, Stats, float, float, float, float
]  # t, stats, queue, evaluated, judge, reloads


def soak(evald: Evald, judge: SlowJudge, args: argparse.Namespace) -> tuple[list[Sample], Load]:
    stop = threading.Event()
    load = Load(evald.http_port, args.rate, stop)
    load.start()
    samples: list[Sample] = []
    began = time.monotonic()
    next_report, next_reload, reloads_written = 0.0, args.reload_every, 0
    print(" time   rss MiB   fds  threads  queue  evaluated  judge calls  reloads")
    while (elapsed := time.monotonic() - began) < args.minutes * 60:
        if elapsed >= next_reload:
            reloads_written += 1
            (evald.dir / "soak-spec.yaml").write_text(SPEC.format(limit=10 + reloads_written % 2))
            next_reload += args.reload_every
        samples.append(sample(evald, judge, elapsed))
        if elapsed >= next_report:
            print(line(samples[-1]), flush=True)
            next_report += args.report_every
        stop.wait(SAMPLE_S)
    stop.set()
    load.join(30)
    samples.append(sample(evald, judge, time.monotonic() - began))
    print(line(samples[-1]))
    print(
        f"load: {load.sent} traces sent, {load.retried} retried after 503, refused {load.refused}"
    )
    return samples, load


def sample(evald: Evald, judge: SlowJudge, elapsed: float) -> Sample:
    return (
        elapsed, evald.stats(), evald.metric("evald_evaluation_queue_depth"),
        evald.metric("evald_traces_evaluated_total"), float(judge.calls),
        evald.metric("evald_config_reloads_total", result="success"),
    )  # fmt: skip


def line(s: Sample) -> str:
    t, stats, queue, evaluated, calls, reloads = s
    return (f"{t / 60:4.1f}m  {stats.rss_mib:8.1f}  {stats.fds:4d}  {stats.threads:7d}  "
            f"{queue:5.0f}  {evaluated:9.0f}  {calls:11.0f}  {reloads:7.0f}")  # fmt: skip


def verdict(samples: list[Sample], load: Load, args: argparse.Namespace) -> int:
    third = max(1, len(samples) // 3)
    middle, last = samples[third : 2 * third], samples[2 * third :]

    def peak(part: list[Sample], pick: int) -> float:
        return max(float(_field(s, pick)) for s in part)

    checks = {
        "rss (last third max <= middle third max x 1.10 + 10 MiB)":
            peak(last, 0) <= peak(middle, 0) * 1.10 + 10,
        "fds (last third max <= middle third max + 2)": peak(last, 1) <= peak(middle, 1) + 2,
        "threads (last third max <= middle third max + 2)": peak(last, 2) <= peak(middle, 2) + 2,
        "queue depth (last third max <= max(100, 1.5 x middle))":
            peak(last, 3) <= max(100.0, 1.5 * peak(middle, 3)),
        "no export refused except retryably": not load.refused,
        "traces evaluated": samples[-1][3] > 0,
        "judge calls made": samples[-1][4] > 0,
        "hot reloads done": samples[-1][5] >= max(1, args.minutes * 60 // args.reload_every - 1),
    }  # fmt: skip
    first, end = samples[0][1], samples[-1][1]
    print(f"start -> end: rss {first.rss_mib:.1f} -> {end.rss_mib:.1f} MiB, fds {first.fds} -> "
          f"{end.fds}, threads {first.threads} -> {end.threads}")  # fmt: skip
    for name, ok in checks.items():
        print(f"  {'ok  ' if ok else 'FAIL'} {name}")
    return 0 if all(checks.values()) else 1


def _field(s: Sample, pick: int) -> float:
    stats = s[1]
    return (stats.rss_mib, stats.fds, stats.threads, s[2])[pick]


if __name__ == "__main__":
    sys.exit(main())
