"""The Prometheus outputs: exemplars in OpenMetrics, the label-cardinality cap, and the
per-evaluation labels, checked on the exposition a scraper gets."""

from __future__ import annotations

import urllib.request
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pytest
from prometheus_client import generate_latest
from prometheus_client.openmetrics import exposition as openmetrics
from prometheus_client.openmetrics.parser import text_string_to_metric_families
from prometheus_client.samples import Sample
from support.daemon_harness import GOLDEN, daemon_config, golden_expectations, running_daemon

from collector.config.settings import Config
from collector.processing.wiring import build_telemetry
from collector.sinks.base import ResultSink
from collector.sinks.metrics import MetricsSink
from evaluators.results import ErrorResult, NumericResult
from evaluators.runner import Outcome
from evaluators.trajectory import Step, StepKind, Trajectory

if TYPE_CHECKING:
    from support.loop import LoopThread

OPENMETRICS = "application/openmetrics-text; version=1.0.0"
POLICY = {"spec": "refund-policy", "evaluator": "invoice_checked_before_refund"}


def scrape(port: int, accept: str) -> str:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/metrics", headers={"Accept": accept})
    with urllib.request.urlopen(request, timeout=5) as response:
        return str(response.read().decode())


def samples(exposition: str, name: str) -> list[Sample]:
    return [
        sample
        for family in text_string_to_metric_families(exposition)
        for sample in family.samples
        if sample.name == name
    ]


def exemplar_trace(found: list[Sample], **labels: str) -> str | None:
    for sample in found:
        if labels.items() <= sample.labels.items() and sample.exemplar is not None:
            return str(sample.exemplar.labels["trace_id"])
    return None


@pytest.mark.integration
@pytest.mark.timeout(60)
def test_openmetrics_exemplars_carry_the_failing_trace_id(loop_thread: LoopThread) -> None:
    wrong_order = GOLDEN / "pydantic-ai" / "wrong_order.jsonl"
    correct = GOLDEN / "pydantic-ai" / "correct.jsonl"
    with running_daemon(daemon_config(), loop_thread) as running:
        running.post_file(wrong_order)
        running.post_file(correct)
        running.complete_traces()
        port = running.daemon.admin.port
        exposition = scrape(port, OPENMETRICS)
        plain = scrape(port, "text/plain")

    failing = golden_expectations(wrong_order)["trace_ids"][0]
    passing = golden_expectations(correct)["trace_ids"][0]
    scores = samples(exposition, "evald_evaluation_score_bucket")
    # The failing run scored 0 (invoice not looked up before the refund); its trace id
    # is the exemplar of the lowest bucket, the passing run's that of the bucket of 1.
    assert exemplar_trace(scores, **POLICY, le="0.0") == failing
    assert exemplar_trace(scores, **POLICY, le="1.0") == passing
    latencies = samples(exposition, "evald_agent_latency_seconds_bucket")
    assert {exemplar_trace([s]) for s in latencies} - {None} <= {failing, passing}
    assert exemplar_trace(latencies) is not None
    assert "# {trace_id=" in exposition
    assert "{trace_id=" not in plain  # exemplars exist only in OpenMetrics


def tool_trajectory(n: int, tools: list[str]) -> Trajectory:
    steps = tuple(
        Step(StepKind.TOOL, name, f"{i:016x}", None, i, 0.0, error="boom" if i % 2 else None)
        for i, name in enumerate(tools)
    )
    return Trajectory(f"{n:032x}", "svc", "agent", None, None, None, False, 0.1, 0, steps)


def label_values(sink_telemetry: Any, metric: str, label: str) -> set[str]:
    (family,) = [m for m in sink_telemetry.registry.collect() if m.name == metric]
    return {sample.labels[label] for sample in family.samples}


@pytest.mark.parametrize(("configured", "cap"), [({}, 200), ({"label_value_limit": 50}, 50)])
def test_ten_thousand_tool_names_stay_within_the_label_cap(
    configured: dict[str, int], cap: int
) -> None:
    # The combination budget is set out of the way: this is the per-label cap.
    limits = configured | {"max_series_per_metric": 100_000}
    telemetry = build_telemetry(Config.model_validate({"telemetry": limits}))
    sink = MetricsSink(telemetry)
    names = [f"tool-{i}" for i in range(10_000)]
    for n in range(100):
        sink.write(tool_trajectory(n, names[n * 100 : (n + 1) * 100]), [])

    for metric in ("evald_tool_calls", "evald_tool_errors"):
        values = label_values(telemetry, metric, "tool")
        assert len(values - {"other"}) == cap
        assert "other" in values
    registry = telemetry.registry
    other = registry.get_sample_value("evald_tool_calls_total", {"service": "svc", "tool": "other"})
    assert other == 10_000 - cap  # nothing is lost, only folded
    overflow = registry.get_sample_value("evald_label_overflow_total", {"label": "tool"})
    assert overflow == 10_000 - cap


def test_evaluation_metrics_are_labelled_by_spec_evaluator_service_agent() -> None:
    telemetry = build_telemetry(Config())
    sink = MetricsSink(telemetry)
    trajectory = tool_trajectory(1, ["lookup", "refund"])
    outcomes = [
        Outcome("refund", "recall", NumericResult(score=0.5), False, 0.25),
        Outcome(None, "judge", ErrorResult(error="TimeoutError: slow"), None, 0.5),
    ]
    sink.write(trajectory, outcomes)
    sink.write_outcomes(trajectory, outcomes[:1])  # e.g. a judge answering later

    value = telemetry.registry.get_sample_value
    labels = {"spec": "refund", "evaluator": "recall", "service": "svc", "agent": "agent"}
    assert value("evald_evaluations_total", labels | {"outcome": "fail"}) == 2
    assert value("evald_evaluation_duration_seconds_count", labels) == 2
    assert value("evald_evaluation_duration_seconds_sum", labels) == 0.5
    assert value("evald_evaluation_score_count", labels) == 2
    errors = labels | {"spec": "none", "evaluator": "judge", "outcome": "error"}
    assert value("evald_evaluations_total", errors) == 1
    # Per-trace facts are counted once, whatever later outcomes arrive.
    assert value("evald_traces_evaluated_total", {"service": "svc", "agent": "agent"}) == 1
    assert value("evald_tool_calls_total", {"service": "svc", "tool": "lookup"}) == 1
    # A tool that never failed still has an error series, at 0, for errors/calls ratios.
    assert value("evald_tool_errors_total", {"service": "svc", "tool": "lookup"}) == 0
    assert value("evald_tool_errors_total", {"service": "svc", "tool": "refund"}) == 1


def test_later_outcomes_reach_sinks_with_or_without_write_outcomes() -> None:
    class PlainSink(ResultSink):
        name = "plain"

        def __init__(self) -> None:
            self.writes: list[int] = []

        def write(self, trajectory: Trajectory, outcomes: Sequence[Outcome]) -> None:
            self.writes.append(len(outcomes))

        def close(self) -> None:
            """Nothing to release."""

    plain, telemetry = PlainSink(), build_telemetry(Config())
    outcome = Outcome(None, "judge", NumericResult(score=1.0), None, 0.1)
    for sink in (plain, MetricsSink(telemetry)):
        sink.write(tool_trajectory(1, ["a"]), [outcome])
        sink.write_outcomes(tool_trajectory(1, ["a"]), [outcome])
    assert plain.writes == [1, 1]
    value = telemetry.registry.get_sample_value
    assert value("evald_traces_evaluated_total", {"service": "svc", "agent": "agent"}) == 1
    labels = {"spec": "none", "evaluator": "judge", "service": "svc", "agent": "agent"}
    assert value("evald_evaluations_total", labels | {"outcome": "none"}) == 2


@pytest.mark.parametrize(
    "encoder", [generate_latest, openmetrics.generate_latest], ids=["text", "openmetrics"]
)
def test_label_values_that_utf8_cannot_encode_still_render(encoder: Any) -> None:
    # Lone surrogates no longer come from the decoders; label values must render anyway.
    telemetry = build_telemetry(Config())
    sink = MetricsSink(telemetry)
    trajectory = tool_trajectory(1, ["t\ud800"])._replace(service="bot\udfff", agent="\ud83d")
    sink.write(trajectory, [Outcome(None, "latency", NumericResult(score=1.0), None, 0.1)])

    exposition = encoder(telemetry.registry).decode()
    assert 'service="bot\ufffd"' in exposition and 'tool="t\ufffd"' in exposition
    assert 'agent="\ufffd"' in exposition


def test_twenty_thousand_label_combinations_stay_within_the_series_budget() -> None:
    telemetry = build_telemetry(Config())  # defaults: 100 combinations per family
    sink = MetricsSink(telemetry)
    outcomes = [Outcome(None, "latency", NumericResult(score=0.5), None, 0.01)]
    for n in range(20_000):
        trajectory = tool_trajectory(n, [f"tool-{n}"])._replace(
            service=f"service-{n}", agent=f"agent-{n}-" + "x" * 200
        )
        sink.write(trajectory, outcomes)

    for metric in ("evald_traces_evaluated", "evald_agent_latency_seconds", "evald_evaluations"):
        pairs = {(s.labels["service"], s.labels["agent"]) for s in family(telemetry, metric)}
        assert len(pairs) == 101 and ("other", "other") in pairs
        assert all(len(agent) <= 64 for _, agent in pairs)
    tools = {(s.labels["service"], s.labels["tool"]) for s in family(telemetry, "evald_tool_calls")}
    assert len(tools) == 101
    value = telemetry.registry.get_sample_value
    overflow = value("evald_series_overflow_total", {"labels": "service,agent"})
    assert overflow == 20_000 - 100
    assert value("evald_traces_evaluated_total", {"service": "other", "agent": "other"}) == overflow
    assert value("evald_label_values_truncated_total", {"label": "agent"}) == 20_000
    assert len(generate_latest(telemetry.registry)) < 1_500_000  # 1.15 MB measured


def family(telemetry: Any, name: str) -> list[Sample]:
    (found,) = [m for m in telemetry.registry.collect() if m.name == name]
    return list(found.samples)


def test_repeated_values_that_the_guards_change_are_counted_on_every_trace() -> None:
    # The sink keeps the series of values the guards pass unchanged; a value they cut,
    # fold into "other" or keep out of the budget must be counted every time it comes.
    limits = {"label_value_limit": 1, "max_series_per_metric": 2}
    telemetry = build_telemetry(Config.model_validate({"telemetry": limits}))
    sink = MetricsSink(telemetry)
    for n in range(5):
        trajectory = tool_trajectory(n, ["lookup", "refund", "lookup"])
        sink.write(trajectory._replace(agent="a" * 100), [])
    for n in range(5, 8):  # a second service: the service label is full, so "other"
        sink.write(tool_trajectory(n, ["lookup"])._replace(service="svc-2"), [])

    value = telemetry.registry.get_sample_value
    assert value("evald_label_values_truncated_total", {"label": "agent"}) == 5
    assert value("evald_label_overflow_total", {"label": "tool"}) == 5  # refund, each trace
    assert value("evald_label_overflow_total", {"label": "service"}) == 3
    assert value("evald_label_overflow_total", {"label": "agent"}) == 3  # "agent": not a*64
    calls = {"service": "svc", "tool": "lookup"}
    assert value("evald_tool_calls_total", calls) == 10
    assert value("evald_tool_calls_total", {"service": "svc", "tool": "other"}) == 5
    assert value("evald_tool_errors_total", calls) == 0
    assert value("evald_tool_errors_total", {"service": "svc", "tool": "other"}) == 5
    assert value("evald_traces_evaluated_total", {"service": "svc", "agent": "a" * 64}) == 5
    assert value("evald_traces_evaluated_total", {"service": "other", "agent": "other"}) == 3
    # The (service, tool) budget of 2 holds (svc, lookup) and (svc, other); (other, lookup)
    # is over it, on each of the three traces.
    assert value("evald_series_overflow_total", {"labels": "service,tool"}) == 3


def test_kept_series_give_the_same_exposition_as_series_looked_up_each_time() -> None:
    trajectories = [
        tool_trajectory(n, ["lookup", "refund"][: 1 + n % 2])._replace(agent=[None, "x"][n % 2])
        for n in range(6)
    ]
    outcomes = [
        Outcome("refund", "recall", NumericResult(score=0.25 * (n % 4)), n % 3 == 0, 0.01)
        for n in range(6)
    ]
    twice, once = build_telemetry(Config()), build_telemetry(Config())
    sink = MetricsSink(twice)
    for trajectory, outcome in zip(trajectories, outcomes, strict=True):
        sink.write(trajectory, [outcome])
        MetricsSink(once).write(trajectory, [outcome])  # a new sink: nothing kept

    def exposition(telemetry: Any) -> str:  # evald's families (not the process's own)
        text = generate_latest(telemetry.registry).decode()
        return "\n".join(line for line in text.splitlines() if "evald_" in line)

    assert exposition(twice) == exposition(once)
    assert 'agent="unknown"' in exposition(twice)
