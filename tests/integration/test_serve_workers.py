"""``evald serve`` with two worker processes (ADR 0018), as a real process over loopback:
the SDK's real exporters (gRPC and HTTP, spans and log records, each span in its own
request) reach the worker that owns their trace; ``/metrics`` sums the workers; a
SIGKILLed worker is restarted and what it held counted lost; SIGTERM drains both; the
turns of a session, traces on either worker, are evaluated whole by its owner; a
worker with a full queue refuses its traces (retryably) while the other takes its own."""

from __future__ import annotations

import json
import os
import re
import signal
import time
from itertools import count, product
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter as GrpcLogs
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpans
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter as HttpLogs
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans
from opentelemetry.proto.trace.v1.trace_pb2 import Span as PbSpan
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import LogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator, RandomIdGenerator
from support.otlp_logs import otlp_json
from support.serve_process import EVALD, Served, loopback_config, start_serve

from collector.daemon.routed_sessions import session_shard
from collector.receivers.wire_split import shard_of

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

TRACES = 8  # enough that both workers own some (checked)
TOOLS = 3
DEADLINE_S = 30.0
DETAILS = "gen_ai.client.inference.operation.details"
OPENMETRICS = "application/openmetrics-text; version=1.0.0"
SERVICE = "workers-agent"


class Sender:
    """The SDK's span and log exporters of one transport, one request per span/record."""

    def __init__(self, transport: str, served: Served, ids: IdGenerator | None = None) -> None:
        if transport == "grpc":
            endpoint = f"127.0.0.1:{served.grpc_port}"
            spans: SpanExporter = GrpcSpans(endpoint=endpoint, insecure=True)
            logs: LogRecordExporter = GrpcLogs(endpoint=endpoint, insecure=True)
        else:
            base = f"http://127.0.0.1:{served.http_port}"
            spans, logs = HttpSpans(endpoint=f"{base}/v1/traces"), HttpLogs(f"{base}/v1/logs")
        resource = Resource.create({"service.name": SERVICE})
        self.tracer_provider = TracerProvider(resource=resource, id_generator=ids)
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
        self.logger_provider = LoggerProvider(resource=resource)
        self.logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))

    def run(self, index: int, *, root: bool = True) -> str:
        """One agent run: a root, ``TOOLS`` tool spans and one log record with the
        answer; each exported on its own. Without ``root``, the children only (a trace
        that stays held). Returns the trace id (hex)."""
        tracer = self.tracer_provider.get_tracer("app")
        logger = self.logger_provider.get_logger("opentelemetry.util.genai.handler")
        agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "bot"}
        root_span = tracer.start_span("invoke_agent bot", attributes=agent)
        context = trace.set_span_in_context(root_span)
        for tool in range(TOOLS):
            attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": f"t{tool}"}
            tracer.start_span(f"execute_tool t{tool}", context, attributes=attributes).end()
        answer = json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": f"a{index}"}]}]
        )
        logger.emit(
            event_name=DETAILS, context=context, attributes={"gen_ai.output.messages": answer}
        )
        if root:
            root_span.end()
        return f"{root_span.get_span_context().trace_id:032x}"

    def turn(self, session: str, tool: str) -> None:
        """One turn of ``session``: a root with its session id and one ``tool`` span."""
        tracer = self.tracer_provider.get_tracer("app")
        agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "bot"}
        root = tracer.start_span("invoke_agent bot", attributes=agent | {"session.id": session})
        attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool}
        tracer.start_span(f"execute_tool {tool}", trace.set_span_in_context(root),
                          attributes=attributes).end()  # fmt: skip
        root.end()

    def shutdown(self) -> None:
        self.tracer_provider.shutdown()
        self.logger_provider.shutdown()


@pytest.fixture
def serve(tmp_path: Path, serve_with: list[Served]) -> Any:
    def start(idle_timeout: str, **extra: str) -> Served:
        settings = {
            "pipeline": "{workers: 2}",
            "assembly": f"{{idle_timeout: {idle_timeout}, max_trace_age: 1h}}",
            "specs": "[]",
            "outputs": f"{{trajectories_file: {tmp_path / 'trajectories.jsonl'}}}",
            "shutdown": "{grace: 20s}",
        }
        config = loopback_config(tmp_path, **(settings | extra))
        served = start_serve([str(EVALD), "serve", "--config", str(config)])
        serve_with.append(served)
        return served

    return start


def metric(served: Served, name: str, accept: str = "") -> float:
    """The sum of every sample of ``name`` on the front's /metrics."""
    text = scrape(served, accept)
    pattern = re.compile(rf"^{re.escape(name)}(?:{{[^}}]*}})? ([0-9.e+-]+)", re.MULTILINE)
    return sum(float(value) for value in pattern.findall(text))


def scrape(served: Served, accept: str = "") -> str:
    import urllib.request

    request = urllib.request.Request(
        f"http://127.0.0.1:{served.admin_port}/metrics",
        headers={"Accept": accept} if accept else {},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return str(response.read().decode())


def wait_until(predicate: Any, what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {DEADLINE_S}s: {what}")
        time.sleep(0.05)


def trajectories(tmp_path: Path) -> dict[str, list[dict[str, Any]]]:
    """Per worker file (trajectories-<n>.jsonl), the trajectories it wrote."""
    return {
        path.name: [json.loads(line) for line in path.read_text().splitlines()]
        for path in sorted(tmp_path.glob("trajectories-*.jsonl"))
    }


def worker_pids(front: int) -> list[int]:
    """The front's worker processes (not multiprocessing's resource tracker)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == front and b"spawn_main" in cmdline:
            found.append(int(entry.name))
    return found


@pytest.mark.parametrize("transport", ["grpc", "http"])
def test_spans_and_records_of_a_trace_in_separate_requests_are_evaluated_whole_by_one_worker(
    serve: Any, tmp_path: Path, transport: str
) -> None:
    served = serve("300ms")
    sender = Sender(transport, served)
    try:
        trace_ids = [sender.run(index) for index in range(TRACES)]
    finally:
        sender.shutdown()
    assert {shard_of(bytes.fromhex(t), 2) for t in trace_ids} == {0, 1}
    wait_until(lambda: metric(served, "evald_traces_completed_total") == TRACES, "completed")
    wait_until(lambda: metric(served, "evald_traces_evaluated_total") == TRACES, "evaluated")
    # Counters are the sum of both workers; gauges that must not be summed are per worker.
    assert metric(served, "evald_spans_received_total") == TRACES * (TOOLS + 1)
    assert metric(served, "evald_log_records_received_total") == TRACES
    text = scrape(served, OPENMETRICS)
    assert 'evald_specs_loaded{worker="0"}' in text and 'evald_specs_loaded{worker="1"}' in text
    exemplars = re.findall(r'^evald_\w+_bucket\{.*\} \S+ # \{trace_id="(\w+)"\}', text, re.M)
    assert set(exemplars) and set(exemplars) <= set(trace_ids)

    served.proc.send_signal(signal.SIGTERM)
    assert served.proc.wait(30) == 0
    written = trajectories(tmp_path)
    assert len(written) == 2 and all(written.values())  # both workers evaluated traces
    by_id = {line["trace_id"]: line for lines in written.values() for line in lines}
    assert sorted(by_id) == sorted(trace_ids)
    for name, lines in written.items():
        worker = int(name.removesuffix(".jsonl").rsplit("-", 1)[1])
        for line in lines:
            assert shard_of(bytes.fromhex(line["trace_id"]), 2) == worker
            tools = [step for step in line["steps"] if step["kind"] == "tool"]
            assert len(tools) == TOOLS  # every span, though each came in its own request
    assert {line["output"] for line in by_id.values()} == {f"a{i}" for i in range(TRACES)}


def test_a_killed_worker_is_restarted_and_what_it_held_is_counted_lost(
    serve: Any, tmp_path: Path
) -> None:
    served = serve("300ms")
    sender = Sender("grpc", served)
    try:
        for index in range(TRACES):
            sender.run(index, root=False)  # no root: held until max_trace_age
        wait_until(lambda: metric(served, "evald_spans_in_flight") == TRACES * TOOLS, "held")
        workers = worker_pids(served.proc.pid)
        assert len(workers) == 2
        for pid in workers:
            os.kill(pid, signal.SIGKILL)
        wait_until(lambda: metric(served, "evald_worker_restarts_total") == 2, "restarted")
        assert metric(served, "evald_worker_traces_lost_total") == TRACES
        assert metric(served, "evald_worker_spans_lost_total") == TRACES * (TOOLS + 1)
        wait_until(lambda: served.get("/readyz")[0] == 200, "ready again")
        assert len(set(worker_pids(served.proc.pid)) - set(workers)) == 2
        trace_id = sender.run(TRACES)  # the restarted workers evaluate again
        wait_until(lambda: metric(served, "evald_traces_evaluated_total") == 1, "evaluated")
    finally:
        sender.shutdown()
    served.proc.send_signal(signal.SIGTERM)
    assert served.proc.wait(30) == 0
    written = [line for lines in trajectories(tmp_path).values() for line in lines]
    assert [line["trace_id"] for line in written] == [trace_id]


def test_sigterm_drains_every_worker(serve: Any, tmp_path: Path) -> None:
    served = serve("1h")  # nothing completes before the drain
    sender = Sender("http", served)
    try:
        trace_ids = [sender.run(index) for index in range(TRACES)]
    finally:
        sender.shutdown()
    wait_until(lambda: metric(served, "evald_traces_in_flight") == TRACES, "held")
    served.proc.send_signal(signal.SIGTERM)
    assert served.proc.wait(30) == 0
    written = trajectories(tmp_path)
    assert len(written) == 2
    assert sorted(line["trace_id"] for lines in written.values() for line in lines) == sorted(
        trace_ids
    )


def test_otlp_json_is_decoded_by_the_front_and_each_worker_gets_its_traces(
    serve: Any, tmp_path: Path
) -> None:
    served = serve("300ms")
    ids = [bytes([index + 1]) * 16 for index in range(TRACES)]
    agent = [
        KeyValue(key="gen_ai.operation.name", value=AnyValue(string_value="invoke_agent")),
        KeyValue(key="gen_ai.agent.name", value=AnyValue(string_value="bot")),
    ]
    spans = [
        PbSpan(
            trace_id=trace_id,
            span_id=b"\x01" * 8,
            name="invoke_agent bot",
            start_time_unix_nano=1,
            end_time_unix_nano=2,
            attributes=agent,
        )
        for trace_id in ids
    ]
    request = ExportTraceServiceRequest(
        resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=spans)])]
    )
    assert served.post(otlp_json(request), "application/json") == 200
    assert metric(served, "evald_spans_received_total") == TRACES
    wait_until(lambda: metric(served, "evald_traces_completed_total") == TRACES, "completed")
    served.proc.send_signal(signal.SIGTERM)
    assert served.proc.wait(30) == 0
    written = trajectories(tmp_path)
    assert len(written) == 2
    assert sorted(line["trace_id"] for lines in written.values() for line in lines) == sorted(
        trace_id.hex() for trace_id in ids
    )
    for name, lines in written.items():
        worker = int(name.removesuffix(".jsonl").rsplit("-", 1)[1])
        assert {shard_of(bytes.fromhex(line["trace_id"]), 2) for line in lines} == {worker}


class ChosenTraceIds(RandomIdGenerator):
    """Random span ids; each trace id the next of ``queue`` (the test picks the shard)."""

    def __init__(self) -> None:
        self.queue: list[int] = []

    def generate_trace_id(self) -> int:
        return self.queue.pop(0)


def trace_id_on(shard: int) -> int:
    """A random trace id that the front gives to worker ``shard`` of two."""
    while True:
        trace_id = int.from_bytes(os.urandom(16), "big")
        if shard_of(trace_id.to_bytes(16, "big"), 2) == shard:
            return trace_id


SESSION_SPEC = """\
id: conversation
scope: session
reference: {trajectory: [{tool: lookup}, {tool: refund}]}
evaluators: [trajectory_exact_match]
"""


def test_the_turns_of_a_session_on_different_workers_are_evaluated_whole_by_its_owner(
    serve: Any, tmp_path: Path
) -> None:
    # For sessions owned by either worker, their two turns (two traces) on every
    # combination of workers: both on the owner, both on the other, one on each.
    placements = [(owner, turns) for owner in (0, 1) for turns in product((0, 1), repeat=2)]
    sessions: dict[tuple[int, tuple[int, ...]], str] = {}
    for index in count():
        session = f"conversation-{index}"
        owner = session_shard(SERVICE, session, 2)
        free = [turns for turns in product((0, 1), repeat=2) if (owner, turns) not in sessions]
        if free:
            sessions[owner, free[0]] = session
        if len(sessions) == len(placements):
            break
    spec = tmp_path / "conversation.yaml"
    spec.write_text(SESSION_SPEC)
    results = tmp_path / "results.jsonl"
    served = serve(
        "300ms",
        specs=f"[{spec}]",
        sessions="{idle_timeout: 1h, max_turns: 2}",  # complete on the second turn only
        outputs=f"{{results_file: {results}}}",
    )
    ids = ChosenTraceIds()
    sender = Sender("grpc", served, ids)
    try:
        for (_, turns), session in sessions.items():
            for shard, tool in zip(turns, ("lookup", "refund"), strict=True):
                ids.queue.append(trace_id_on(shard))
                sender.turn(session, tool)
    finally:
        sender.shutdown()
    wait_until(lambda: metric(served, "evald_traces_evaluated_total") == 2 * len(sessions), "turns")
    wait_until(
        lambda: metric(served, "evald_sessions_completed_total") == len(sessions), "sessions"
    )
    assert metric(served, "evald_worker_turns_lost_total") == 0
    served.proc.send_signal(signal.SIGTERM)
    assert served.proc.wait(30) == 0
    by_session: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for path in sorted(tmp_path.glob("results-*.jsonl")):
        worker = int(path.stem.rsplit("-", 1)[1])
        for line in map(json.loads, path.read_text().splitlines()):
            if line["scope"] == "session":
                by_session.setdefault(line["session_id"], []).append((worker, line))
    assert sorted(by_session) == sorted(sessions.values())
    for (owner, _), session in sessions.items():
        ((worker, line),) = by_session[session]  # evaluated once, whole
        assert worker == owner
        assert line["turns"] == 2 and line["passed"] is True


GATE_PLUGIN = '''
import time
from pathlib import Path

from evaluators.base import Criteria, Evaluator, EvaluatorConfig
from evaluators.results import BooleanResult
from evaluators.trajectory import Trajectory


class Gate(Evaluator[Criteria, EvaluatorConfig]):
    """Holds the evaluation thread until a file named ``open`` is beside this one."""

    id = "gate"

    def evaluate(self, trajectory: Trajectory, criteria: Criteria) -> BooleanResult:
        while not Path(__file__).with_name("open").exists():
            time.sleep(0.01)
        return BooleanResult(value=True)
'''


def agent_request(*trace_ids: bytes) -> bytes:
    """One OTLP request: a root ``invoke_agent`` span per trace id."""
    agent = [
        KeyValue(key="gen_ai.operation.name", value=AnyValue(string_value="invoke_agent")),
        KeyValue(key="gen_ai.agent.name", value=AnyValue(string_value="bot")),
    ]
    now = time.time_ns()
    spans = [
        PbSpan(trace_id=trace_id, span_id=os.urandom(8), name="invoke_agent bot",
               start_time_unix_nano=now - 1_000_000, end_time_unix_nano=now, attributes=agent)
        for trace_id in trace_ids
    ]  # fmt: skip
    request = ExportTraceServiceRequest(
        resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=spans)])]
    )
    return request.SerializeToString()


def test_a_full_worker_refuses_its_traces_while_the_other_takes_its_own(
    serve: Any, tmp_path: Path
) -> None:
    (tmp_path / "gate.py").write_text(GATE_PLUGIN)
    spec = tmp_path / "gated.yaml"
    spec.write_text("id: gated\nevaluators: ['file://gate.py:Gate']\n")
    served = serve(
        "100ms",
        specs=f"[{spec}]",
        pipeline="{workers: 2, queue_size: 1}",
        evaluation="{timeout: 60s}",
    )
    on = {shard: [trace_id_on(shard).to_bytes(16, "big") for _ in range(3)] for shard in (0, 1)}
    # Worker 0: one trace held by the gate, one queued: its queue (1) is full.
    assert served.post(agent_request(on[0][0])) == 200
    wait_until(lambda: metric(served, "evald_traces_completed_total") == 1, "the first taken")
    assert served.post(agent_request(on[0][1])) == 200
    wait_until(lambda: metric(served, "evald_evaluation_queue_depth") == 1, "worker 0 full")

    assert served.post(agent_request(on[0][2])) == 503  # retryable: OTLP exporters retry
    assert served.post(agent_request(on[1][0])) == 200  # worker 1 is not full
    assert served.post(agent_request(on[0][2], on[1][1])) == 503  # all or nothing
    # Every span of a refused request is counted refused: 1, then the mixed request's 2.
    assert 'reason="overloaded"' in scrape(served)
    assert metric(served, "evald_spans_refused_total") == 3

    (tmp_path / "open").touch()  # the gate opens: worker 0 catches up and takes it again
    wait_until(lambda: served.post(agent_request(on[0][2], on[1][1])) == 200, "accepted again")
    wait_until(lambda: metric(served, "evald_traces_evaluated_total") == 5, "all evaluated")
