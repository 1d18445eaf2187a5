"""Each trace is normalised as deep as its readers need (ADR 0019, ``evaluators.depth``).

The one optional part, ``call_ids``: the id of a tool span that records none, found in
a later model call's history. The always-on evaluators and the sinks decide the
first pass; a matched spec whose evaluators read a part that was left out gets the
trace normalised again, fully.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from support.session_kit import RecordingSink
from support.span_kit import TRACE_ID, genai_agent, span
from support.stages import make_stage

from collector.config.settings import Sessions
from collector.core.records import CompletionReason, Span, Trace
from collector.normalize import normalize, normalize_for
from collector.sinks.base import ResultSink
from collector.telemetry.registry import Telemetry
from evaluators.depth import CALL_IDS, EVERYTHING, NOTHING, parts_read
from evaluators.spec import SpecSet, build_spec
from evaluators.trajectory import Trajectory

PLUGIN = '''
from evaluators import BooleanResult, Evaluator, EvaluatorConfig, NoCriteria, Trajectory

class CallIds(Evaluator[NoCriteria, EvaluatorConfig]):
    """A plug-in that does not declare what it reads: it may read call ids."""

    id = "call_ids_seen"

    def evaluate(self, trajectory: Trajectory, criteria: NoCriteria) -> BooleanResult:
        return BooleanResult(value=all(s.call_id for s in trajectory.tool_calls))
'''


def _chat(n: int, history: list[dict[str, Any]], calls: list[dict[str, Any]]) -> Span:
    parts = [{"type": "tool_call", **call} for call in calls] or [{"type": "text", "content": "ok"}]
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": json.dumps(history),
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": parts}]),
        "gen_ai.conversation.id": "s-1",
    }
    return span(n, "chat", attributes, parent=1)


def _trace() -> Trace:
    """A tool span without a call id, whose id only the next model call's history gives."""
    user = {"role": "user", "parts": [{"type": "text", "content": "look it up"}]}
    call = {"id": "c1", "name": "lookup", "arguments": {"q": 1}}
    assistant = {"role": "assistant", "parts": [{"type": "tool_call", **call}]}
    answer = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": 1}]}
    executed = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "lookup",
        "gen_ai.tool.call.arguments": '{"q": 1}',
    }
    tool = span(3, "execute_tool lookup", executed, parent=1)
    spans = (
        genai_agent(1),
        _chat(2, [user], [{"name": "lookup", "arguments": {"q": 1}}]),
        tool,
        _chat(4, [user, assistant, answer], []),
    )
    return Trace(TRACE_ID, spans, CompletionReason.END_OF_INPUT, 0, 0)


def test_the_call_id_look_up_is_the_part_left_out() -> None:
    full = normalize(_trace())
    partial, left_out = normalize_for(_trace(), None, NOTHING)
    assert [s.call_id for s in full.tool_calls] == ["c1"] and not normalize_for(
        _trace(), None, EVERYTHING
    )[1]
    assert [s.call_id for s in partial.tool_calls] == [None] and left_out
    assert partial._replace(steps=()) == full._replace(steps=())  # nothing else differs
    assert [s._replace(call_id="c1") for s in partial.steps] == [
        s._replace(call_id="c1") for s in full.steps
    ]


def test_who_reads_what() -> None:
    builtin = build_spec({"id": "b", "evaluators": ["tool_error_rate"]}).bound[0].evaluator
    assert parts_read(builtin) == NOTHING
    assert parts_read(object()) == EVERYTHING  # an undeclared plug-in reads everything

    class Declares:
        reads = frozenset({CALL_IDS})

    assert parts_read(Declares()) == {CALL_IDS}


def _written(
    telemetry: Telemetry, specs: list[dict[str, Any]], tmp_path: Path, sink: ResultSink
) -> Trajectory:
    (tmp_path / "plugin.py").write_text(PLUGIN)
    spec_set = SpecSet(build_spec(data, base_dir=tmp_path) for data in specs)
    stage = make_stage(spec_set, [sink], telemetry, always=["latency"])
    stage.process(_trace())
    written: Trajectory = sink.calls[0][1]  # type: ignore[attr-defined]
    return written


PLUGIN_SPEC = {"id": "p", "evaluators": [{"name": "file://plugin.py:CallIds"}]}
BUILTIN_SPEC = {"id": "b", "evaluators": ["tool_error_rate"]}


@pytest.mark.parametrize(
    ("specs", "call_id"),
    [
        ([], None),
        ([BUILTIN_SPEC], None),
        ([PLUGIN_SPEC], "c1"),
        ([BUILTIN_SPEC, PLUGIN_SPEC], "c1"),
    ],
    ids=["always-on", "builtin", "plug-in", "both"],
)
def test_a_trace_is_normalised_again_when_a_matched_spec_reads_more(
    telemetry: Telemetry, tmp_path: Path, specs: list[dict[str, Any]], call_id: str | None
) -> None:
    written = _written(telemetry, specs, tmp_path, RecordingSink())
    assert [s.call_id for s in written.tool_calls] == [call_id]


class TrajectorySink(RecordingSink):
    reads = EVERYTHING


def test_a_sink_that_writes_call_ids_gets_them(telemetry: Telemetry, tmp_path: Path) -> None:
    written = _written(telemetry, [], tmp_path, TrajectorySink())
    assert [s.call_id for s in written.tool_calls] == ["c1"]


def test_a_turn_a_session_spec_may_hold_is_built_for_it(
    telemetry: Telemetry, tmp_path: Path
) -> None:
    (tmp_path / "plugin.py").write_text(PLUGIN)
    session = build_spec({**PLUGIN_SPEC, "id": "s", "scope": "session"}, base_dir=tmp_path)
    sink = RecordingSink()
    stage = make_stage(SpecSet([session]), [sink], telemetry, sessions=Sessions())
    stage.process(_trace())
    turns: Sequence[tuple[str, Trajectory, list[str]]] = sink.calls
    assert [s.call_id for s in turns[0][1].tool_calls] == ["c1"]


def _turn_chat(n: int, parent: int, history: list[dict[str, Any]], reply: dict[str, Any]) -> Span:
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": json.dumps(history),
        "gen_ai.output.messages": json.dumps([reply]),
    }
    return span(n, "chat", attributes, parent=parent)


def _conversation() -> Trace:
    """Two turns under a bare root that alone records the session; turn 1's tool span
    has no call id (only the next request's history gives it: a part left out)."""
    ask1 = {"role": "user", "parts": [{"type": "text", "content": "look it up"}]}
    ask2 = {"role": "user", "parts": [{"type": "text", "content": "and now?"}]}
    call = {"type": "tool_call", "id": "c1", "name": "lookup", "arguments": {"q": 1}}
    asked = {"role": "assistant", "parts": [call]}
    request = {
        "role": "assistant",
        "parts": [{"type": "tool_call", "name": "lookup", "arguments": {"q": 1}}],
    }
    answer = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": 1}]}
    done = {"role": "assistant", "parts": [{"type": "text", "content": "found"}]}
    executed = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup",
                "gen_ai.tool.call.arguments": '{"q": 1}'}  # fmt: skip
    spans = (
        span(1, "session", {"session.id": "s-1"}, start=0, end=90_000),
        span(10, "turn", {}, parent=1, start=10_000, end=19_000),
        _turn_chat(11, 10, [ask1], request),
        span(12, "execute_tool lookup", executed, parent=10),
        _turn_chat(13, 10, [ask1, asked, answer], done),
        span(20, "turn", {}, parent=1, start=20_000, end=29_000),
        _turn_chat(21, 20, [ask1, asked, answer, done, ask2], done),
    )
    return Trace(TRACE_ID, spans, CompletionReason.END_OF_INPUT, 0, 0)


def test_a_turn_normalised_again_keeps_the_session_it_inherited(
    telemetry: Telemetry, tmp_path: Path
) -> None:
    (tmp_path / "plugin.py").write_text(PLUGIN)
    sink = RecordingSink()
    stage = make_stage(SpecSet([build_spec(PLUGIN_SPEC, base_dir=tmp_path)]), [sink], telemetry)
    stage.process(_conversation())
    written = [call[1] for call in sink.calls]  # type: ignore[attr-defined]
    assert [t.input for t in written] == ["look it up", "and now?"]
    assert [s.call_id for s in written[0].tool_calls] == ["c1"]  # (normalised again)
    assert [t.session_id for t in written] == ["s-1", "s-1"]
