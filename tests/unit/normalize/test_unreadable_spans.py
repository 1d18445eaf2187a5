"""A span the normalizer cannot read costs that span, not the trace: it becomes an
``other`` step carrying the error and the trace is evaluated (issue 14, defect 7)."""

from __future__ import annotations

from typing import Any

from support.session_kit import RecordingSink
from support.stages import make_stage

from collector.core.records import CompletionReason, Resource, Span, Trace
from collector.normalize import normalize
from collector.telemetry.registry import Telemetry
from evaluators.spec import SpecSet
from evaluators.trajectory import StepKind

TRACE_ID = b"\x01" * 16
RESOURCE = Resource("svc", {"service.name": "svc"})


def span(n: int, name: str, attributes: Any, events: Any = (), parent: int = 1) -> Span:
    parent_id = parent.to_bytes(8, "big") if n != 1 else b""
    return Span(TRACE_ID, n.to_bytes(8, "big"), parent_id, name, 1, n, 100, 0, "",
                attributes, events, RESOURCE, "scope")  # fmt: skip


class Unreadable:
    """An attribute value that raises when compared (a bug's stand-in: the decoders
    only produce plain values)."""

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("cannot compare")

    __hash__ = object.__hash__


def tool(n: int, name: str) -> Span:
    attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name}
    return span(n, f"execute_tool {name}", attributes)


def odd_trace() -> Trace:
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "a"}
    spans = (
        span(1, "invoke_agent a", agent),
        tool(2, "lookup"),
        span(3, "odd attributes", {"gen_ai.operation.name": Unreadable()}),  # classify fails
        span(4, "odd events", tool(4, "x").attributes, events=(5,)),  # building its step fails
        tool(5, "refund"),
    )
    return Trace(TRACE_ID, spans, CompletionReason.IDLE, 0.0, 0.0)


def test_unreadable_spans_become_other_steps_with_their_error() -> None:
    trajectory = normalize(odd_trace())
    assert [step.name for step in trajectory.tool_calls] == ["lookup", "refund"]
    odd = [step for step in trajectory.steps if step.error and "could not read" in step.error]
    assert [(step.kind, step.name) for step in odd] == [
        (StepKind.OTHER, "odd attributes"),
        (StepKind.OTHER, "odd events"),
    ]
    # The reason differs between the compiled and the interpreted normalizer: a type
    # check fails first in one, the comparison in the other.
    for step in odd:
        assert step.error and step.error.startswith("evald could not read this span: ")
        assert step.error.split(": ")[1] in {"RuntimeError", "TypeError", "AttributeError"}
    assert trajectory.agent == "a" and not trajectory.failed


def test_a_trace_with_an_unreadable_span_is_still_evaluated() -> None:
    telemetry = Telemetry()
    sink = RecordingSink()
    stage = make_stage(SpecSet, [sink], telemetry, always=["failure"])
    assert stage.process(odd_trace()) is not None
    assert len(sink.calls) == 1
    assert telemetry.registry.get_sample_value("evald_normalize_errors_total") == 0
