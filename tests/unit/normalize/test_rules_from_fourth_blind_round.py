"""Rules from the fourth round of blind captures (ADR 0017, addendum of 2026-11-27,
rules 46-47): minimal traces of the shapes the captures showed, in the GenAI
conventions or in no convention at all, never keyed to a library's names."""

from __future__ import annotations

import json
from typing import Any

from support.captures import TRACES, captured
from support.span_kit import genai_chat, genai_tool, run, span

from collector.core.records import CompletionReason, Span, Trace
from collector.decode import decode_json
from collector.normalize import ATTRIBUTE_SELECTOR, Mappings, normalize
from evaluators.lazy import LazyValue
from evaluators.trajectory import StepKind, Trajectory


def named_agent(n: int, name: str, parent: int) -> Span:
    attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name}
    return span(n, f"invoke_agent {name}", attributes, parent=parent, start=n * 1000, end=90_000)


def work(agent: int) -> list[Span]:
    """A model call that asks for a tool, the tool, and the answer, inside ``agent``."""
    return [
        genai_chat(agent + 1, [{"id": "c1", "name": "lookup", "arguments": {"q": "x"}}], agent),
        genai_tool(agent + 2, "lookup", '{"q": "x"}', call_id="c1", parent=agent),
        genai_chat(agent + 3, [], agent, text="done"),
    ]


def summary(trajectory: Trajectory) -> tuple[str | None, list[tuple[str, str]]]:
    return trajectory.agent, [(step.kind.value, step.name) for step in trajectory.steps]


# Rule 46: the agent root's descent passes lone spans no rule recognises.


def test_an_unknown_genai_operation_between_an_unnamed_runner_and_the_agent_is_plumbing() -> None:
    runner = span(1, "support turn", {"gen_ai.operation.name": "invoke_agent"}, end=99_000)
    task = span(2, "unknown", {"gen_ai.operation.name": "unknown"}, parent=1, end=95_000)
    trajectory = run(runner, task, named_agent(10, "store", parent=2), *work(10))
    assert summary(trajectory) == (
        "store",
        [("llm", "m"), ("tool", "lookup"), ("llm", "m")],
    )
    assert trajectory.agents == ("store",)


def test_a_message_runtimes_send_and_process_spans_lead_to_the_agent() -> None:
    process = span(1, "process triage", {}, end=99_000)
    send = span(2, "send", {"messaging.operation": "send"}, parent=1, end=98_000)
    handler = span(3, "process", {}, parent=2, end=97_000)
    ack = span(4, "ack", {}, parent=3, start=96_000, end=96_500)  # idle plumbing beside it
    trajectory = run(process, send, handler, ack, named_agent(10, "triage", parent=3), *work(10))
    assert trajectory.agent == "triage"


def test_past_an_unrecognised_span_a_sibling_that_works_is_another_run() -> None:
    process = span(1, "process", {}, end=99_000)
    handler = span(2, "handle", {}, parent=1, end=98_000)
    other = span(3, "rewrite", {}, parent=2, start=2_000, end=4_000)
    rewrite = genai_chat(4, [], parent=3, text="rewritten question")
    trajectory = run(
        process, handler, other, rewrite, named_agent(10, "store", parent=2), *work(10)
    )
    assert trajectory.agent != "store"  # the descent stops: the model call is no plumbing


# Rule 47: a call rebuilt from messages takes the span that ran it, by name and time.


def chat(n: int, history: list[dict[str, Any]], reply: list[dict[str, Any]], start: int) -> Span:
    return span(
        n,
        "chat m",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "m",
            "gen_ai.input.messages": json.dumps(history),
            "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": reply}]),
        },
        parent=1,
        start=start,
        end=start + 1_000_000,
    )


USER = {"role": "user", "parts": [{"type": "text", "content": "refund my order"}]}
CALL = {"type": "tool_call", "id": "c1", "name": "lookup", "arguments": {"q": "x"}}
ASKED = {"role": "assistant", "parts": [CALL]}
ANSWERED = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "7"}]}
DONE = [{"type": "text", "content": "it is 7"}]


def rebuilt_run(*between: Span) -> Trajectory:
    """A run whose tool call has no tool span: the second model call's history answers it."""
    root = span(1, "run", {}, start=0, end=10_000_000)
    first = chat(2, [USER], [CALL], start=1_000_000)  # ends at 2 ms
    second = chat(3, [USER, ASKED, ANSWERED], DONE, start=5_000_000)
    return run(root, first, second, *between)


def test_a_rebuilt_call_takes_the_span_named_after_it_between_the_model_calls() -> None:
    ran = span(4, "lookup", {}, parent=1, start=2_500_000, end=4_000_000)
    step = rebuilt_run(ran).tool_calls[0]
    assert step.source == "messages"
    assert (step.span_id, step.start_unix_nano, step.duration_s) == (
        "04".zfill(16),
        2_500_000,
        0.0015,
    )


def test_a_span_of_that_name_elsewhere_or_with_work_below_it_is_not_the_calls() -> None:
    late = span(4, "lookup", {}, parent=1, start=6_500_000, end=7_000_000)  # after the next call
    busy = span(5, "lookup", {}, parent=1, start=2_500_000, end=4_500_000)
    inner = genai_chat(6, [], parent=5, text="sub")
    inner = inner._replace(start_unix_nano=3_000_000, end_unix_nano=3_500_000)
    for spans in ((late,), (busy, inner)):
        step = rebuilt_run(*spans).tool_calls[0]
        assert (step.span_id, step.duration_s) == ("", 0.0), spans
    assert [s.kind for s in rebuilt_run().steps] == [StepKind.LLM, StepKind.TOOL, StepKind.LLM]


# The captures behind the rules.


def test_burrs_tool_calls_are_timed_by_the_spans_named_after_them() -> None:
    # Burr's bridge wraps each call in a span named after the tool; the calls themselves
    # are only in OpenLLMetry's model messages.
    for scenario in ("correct", "parallel_calls", "tool_error"):
        calls = captured("burr-openllmetry", scenario).tool_calls
        assert calls and all(step.source == "messages" for step in calls)
        assert all(step.span_id and step.duration_s > 0 for step in calls), scenario


def test_griptape_is_read_through_a_tool_span_mapping_with_its_gaps_stated() -> None:
    folder = TRACES / "griptape-otel"
    mappings = Mappings.model_validate({"tool_span": {"name_prefix": "MusicStore."}})
    spans = [
        span
        for line in (folder / "tool_error.jsonl").read_bytes().splitlines()
        for span in decode_json(line, mappings.selector(ATTRIBUTE_SELECTOR)).spans
    ]
    trace = Trace(spans[0].trace_id, tuple(spans), CompletionReason.END_OF_INPUT, 0, 0)
    assert normalize(trace).skip_reason == "no_agent_spans"
    trajectory = normalize(trace, mappings)
    # lookup_invoice, lookup_track, refund (refused): one tool class, so one name
    assert [step.name for step in trajectory.tool_calls] == ["MusicStore.try_run()"] * 3
    assert trajectory.tool_errors == 1
    assert {"tool_args", "tool_results", "input", "output"} <= set(trajectory.gaps)


# Rule 48: the 1.26-1.27 content events are read; tools that ran unrecorded are a gap.


def content_chat(n: int, sent: list[dict[str, Any]], reply: list[dict[str, Any]] | None) -> Span:
    events: list[tuple[str, dict[str, Any]]] = [
        ("gen_ai.content.prompt", {"gen_ai.prompt": json.dumps(sent)})
    ]
    if reply is not None:
        events.append(("gen_ai.content.completion", {"gen_ai.completion": json.dumps(reply)}))
    attributes = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}
    return span(n, "openai.chat", attributes, parent=1, events=tuple(events))


ASK = {"role": "user", "content": "refund my order"}
STUB = [{"id": "", "type": ""}]  # an assistant request written as a list (Langtrace)
RESULT = {"role": "tool", "tool_call_id": "c1", "content": '{"total": 7}'}


def test_the_older_content_events_give_the_input_and_the_reply() -> None:
    root = span(1, "root", {}, start=0, end=10**7)
    reply = [{"role": "assistant", "content": "it is 7"}]
    trajectory = run(root, content_chat(2, [ASK], reply))
    assert (trajectory.input, trajectory.output) == ("refund my order", "it is 7")
    assert "content" not in trajectory.gaps


def test_tool_results_sent_to_the_model_with_no_call_recorded_are_a_gap() -> None:
    root = span(1, "root", {}, start=0, end=10**7)
    first, second = content_chat(2, [ASK], None), content_chat(3, [ASK, STUB, RESULT], None)
    trajectory = run(root, first, second)
    assert trajectory.tool_calls == ()
    assert trajectory.gaps[0] == "tool_calls"


def test_no_gap_when_the_calls_are_recorded_or_the_results_are_an_earlier_turns() -> None:
    root = span(1, "root", {}, start=0, end=10**7)
    requested = [{"role": "assistant", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
    ]}]  # fmt: skip
    recorded = run(
        root, content_chat(2, [ASK], requested), content_chat(3, [ASK, STUB, RESULT], None)
    )
    earlier = run(
        root, content_chat(3, [ASK, STUB, RESULT, {"role": "user", "content": "thanks"}], None)
    )
    assert [step.name for step in recorded.tool_calls] == ["lookup"]  # (rebuilt: rule 6)
    assert "tool_calls" not in recorded.gaps and "tool_calls" not in earlier.gaps


# Rule 49: a hand-over inside one loop, seen in the model's instructions.

FRONT = "You are the front desk of Tunes & Co. Route every store request."
STORE = "You are the store agent of Tunes & Co. Use the store tools."


def instructed_chat(n: int, system: str, calls: list[dict[str, Any]], text: str = "") -> Span:
    sent = [
        {"role": "system", "parts": [{"type": "text", "content": system}]},
        {"role": "user", "parts": [{"type": "text", "content": "refund my order"}]},
    ]
    parts: list[dict[str, Any]] = [{"type": "tool_call", **call} for call in calls]
    if text:
        parts.append({"type": "text", "content": text})
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "m",
        "gen_ai.input.messages": json.dumps(sent),
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": parts}]),
    }
    return span(n, "chat m", attributes, parent=1)


def one_loop(second: str, handoff_args: str, handoff_result: str) -> Trajectory:
    """A workflow whose model calls run under ``FRONT``, then under ``second``."""
    return run(*one_loop_spans(second, handoff_args, handoff_result))


def one_loop_spans(second: str, handoff_args: str, handoff_result: str) -> tuple[Span, ...]:
    workflow = span(1, "Workflow.run", {}, start=0, end=10**7)
    return (
        workflow,
        instructed_chat(2, FRONT, [{"id": "h", "name": "handoff", "arguments": {}}]),
        genai_tool(3, "handoff", handoff_args, call_id="h", **{
            "gen_ai.tool.call.result": handoff_result
        }),
        instructed_chat(4, second, [{"id": "c", "name": "lookup", "arguments": {}}]),
        genai_tool(5, "lookup", '{"q": "x"}', call_id="c", **{"gen_ai.tool.call.result": "7"}),
        instructed_chat(6, second, [], text="done"),
    )  # fmt: skip


def test_a_call_after_which_the_model_gets_another_agents_instructions_hands_over() -> None:
    trajectory = one_loop(STORE, '{"to_agent": "store"}', "Agent store now handles it.")
    assert [(s.kind.value, s.name, s.agent) for s in trajectory.steps if s.kind.value != "llm"] == [
        ("control", "handoff", None),  # (a span no rule reads: no agent named)
        ("tool", "lookup", "store"),
    ]
    assert trajectory.agents == ("store",)


def test_same_or_edited_instructions_or_no_echoed_name_is_no_hand_over() -> None:
    edited = FRONT + " Memory: the customer is 17."
    for second, args, result in (
        (FRONT, '{"to_agent": "store"}', "Agent store now handles it."),  # same agent
        (edited, '{"to_agent": "store"}', "Agent store now handles it."),  # a memory edit
        (STORE, '{"to_agent": "store"}', "done"),  # the result does not name it
        (STORE, '{"n": 7}', "7 handled"),  # a number is no name
    ):
        trajectory = one_loop(second, args, result)
        assert [s.kind.value for s in trajectory.steps if s.name == "handoff"] == ["tool"]
        assert trajectory.agents == ()


def test_a_run_under_one_set_of_instructions_parses_no_argument_for_it() -> None:
    spans = one_loop_spans(FRONT, '{"to_agent": "store"}', "Agent store now handles it.")
    trace = Trace(spans[0].trace_id, spans, CompletionReason.END_OF_INPUT, 0, 0)
    for step in normalize(trace).tool_calls:  # (span_kit's run serializes: parses all)
        assert isinstance(step[6], LazyValue) and not step[6].loaded, step.name


def test_instructions_that_change_on_every_call_are_no_hand_over() -> None:
    # (review: a prompt opening with the time, and calls whose result echoes an id)
    def clock(second: int) -> str:
        return f"Current time: 2026-11-27T10:00:{second:02d}Z. You are the billing agent."

    trajectory = run(
        span(1, "Workflow.run", {}, start=0, end=10**7),
        instructed_chat(2, clock(1), [{"id": "a", "name": "lookup", "arguments": {}}]),
        genai_tool(3, "lookup", '{"invoice": "INV-877"}', call_id="a", **{
            "gen_ai.tool.call.result": '{"invoice": "INV-877", "total": 7}'
        }),
        instructed_chat(4, clock(2), [{"id": "b", "name": "refund", "arguments": {}}]),
        genai_tool(5, "refund", '{"invoice": "INV-877"}', call_id="b", **{
            "gen_ai.tool.call.result": "refunded INV-877"
        }),
        instructed_chat(6, clock(3), [], text="done"),
    )  # fmt: skip
    assert [step.name for step in trajectory.tool_calls] == ["lookup", "refund"]


def test_a_second_hand_over_is_the_agent_handed_to_first() -> None:
    billing = "You are the billing agent of Tunes & Co. Issue refunds."

    def handoff(n: int, to: str) -> Span:
        return genai_tool(n, "handoff", json.dumps({"to_agent": to}), call_id=f"h{n}", **{
            "gen_ai.tool.call.result": f"Agent {to} now handles it."
        })  # fmt: skip

    trajectory = run(
        span(1, "Workflow.run", {}, start=0, end=10**7),
        instructed_chat(2, FRONT, [{"id": "h3", "name": "handoff", "arguments": {}}]),
        handoff(3, "store"),
        instructed_chat(4, STORE, [{"id": "c5", "name": "lookup", "arguments": {}}]),
        genai_tool(5, "lookup", '{"q": "x"}', call_id="c5", **{"gen_ai.tool.call.result": "7"}),
        instructed_chat(6, STORE, [{"id": "h7", "name": "handoff", "arguments": {}}]),
        handoff(7, "billing"),
        instructed_chat(8, billing, [{"id": "c9", "name": "refund", "arguments": {}}]),
        genai_tool(9, "refund", '{"q": "x"}', call_id="c9", **{"gen_ai.tool.call.result": "ok"}),
        instructed_chat(10, billing, [], text="done"),
    )
    controls = [(s.name, s.agent) for s in trajectory.steps if s.kind.value == "control"]
    assert controls == [("handoff", None), ("handoff", "store")]  # (the second: store's)
    assert [(s.name, s.agent) for s in trajectory.tool_calls] == [
        ("lookup", "store"),
        ("refund", "billing"),
    ]
    assert trajectory.agents == ("store", "billing")
