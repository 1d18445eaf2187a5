"""Rules from the sixth round of blind captures (Claude Code's telemetry through the Claude
Agent SDK): a tool call recorded in pieces. The span names the tool and its call id; the
arguments and the failure are in a log record of the turn that names the call id; the
result is the lone text of a span event; the failure is again on a child span that
repeats the call id. Minimal traces of those shapes, in GenAI attribute names where a
standard one exists and neutral names elsewhere: no rule may key to Claude Code's."""

from __future__ import annotations

from support.span_kit import genai_agent, genai_tool, run, span, tools

from collector.core.records import AttrValue, LogEvent, Span, SpanEvent
from collector.decode.log_records import log_selector
from collector.normalize import ATTRIBUTE_SELECTOR
from evaluators.trajectory import Step


def record(name: str, **attributes: AttrValue) -> LogEvent:
    """A log record joined to the turn's span (as ``log_join`` leaves it)."""
    return LogEvent(name, 5, {"event.name": name, **attributes})


def turn(*records: LogEvent) -> Span:
    return genai_agent(1)._replace(events=records)


def calls(*spans: Span) -> dict[str, Step]:
    return {step.name: step for step in tools(run(*spans))}


# A record naming exactly one call's id holds that call's arguments and failure.


def test_a_record_naming_a_call_id_gives_the_calls_arguments() -> None:
    noted = record(
        "call_done",
        call="c1",
        described='{"server": "store", "tool": "lookup"}',  # names the tool: not arguments
        given='{"invoice_id": 877}',
        other='{"invoice_id": 1}',  # a second candidate object
    )
    unnamed = record("call_done", call="c9", given='{"invoice_id": 1}')
    found = calls(
        turn(noted, unnamed),
        genai_tool(2, "lookup", None, call_id="c1"),
        genai_tool(3, "refund", None, call_id="c2"),
    )
    assert found["lookup"].args is None  # two candidate objects: no guess
    assert found["refund"].args is None  # no record names c2
    clear = record("call_done", call="c1", described='{"tool": "lookup"}', given='{"n": 877}')
    found = calls(turn(clear), genai_tool(2, "lookup", None, call_id="c1"))
    assert found["lookup"].args == {"n": 877}


def test_arguments_the_span_recorded_are_kept() -> None:
    noted = record("call_done", call="c1", tool="lookup", given='{"invoice_id": 1}')
    found = calls(
        turn(noted, record("call_done", call="c2", tool="track", given='{"track_id": 5}')),
        genai_tool(2, "lookup", '{"invoice_id": 877}', call_id="c1"),
        genai_tool(3, "track", None, call_id="c2"),
    )
    assert found["lookup"].args == {"invoice_id": 877}
    assert found["track"].args == {"track_id": 5}


def test_a_record_saying_the_call_did_not_succeed_gives_its_error() -> None:
    failed = record(
        "call_done", call="c1", tool="refund", success="false", error="RefundWindowExpired: late"
    )
    fine = record("call_done", call="c2", tool="lookup", success="true", error="")
    found = calls(
        turn(failed, fine),
        genai_tool(2, "refund", None, call_id="c1"),
        genai_tool(3, "lookup", None, call_id="c2"),
    )
    assert found["refund"].error == "RefundWindowExpired: late"
    assert found["lookup"].error is None


# A child span that repeats the call id and reports an error is the call's failure.


def pieces(call_id: str, tool: str) -> LogEvent:
    """A record showing the call is recorded in pieces: it gives the call's arguments."""
    return record("call_done", call=call_id, tool=tool, given='{"q": 1}')


def test_a_child_repeating_the_call_id_with_an_error_type_failed_the_call() -> None:
    found = calls(
        turn(pieces("c1", "refund"), pieces("c2", "lookup")),
        genai_tool(2, "refund", None, call_id="c1"),
        span(3, "execution", {"gen_ai.tool.call.id": "c1", "error.type": "tool_error"}, parent=2),
        genai_tool(4, "lookup", None, call_id="c2"),
        span(5, "execution", {"error.type": "tool_error"}, parent=4),  # (names no call)
    )
    assert found["refund"].error == "tool_error"
    assert found["lookup"].error is None


def test_a_failed_attempt_before_one_that_succeeded_is_no_failure() -> None:
    # (second review: a retry inside the call, the first attempt timed out)
    failed = {"gen_ai.tool.call.id": "c1", "error.type": "TimeoutError"}
    found = calls(
        turn(pieces("c1", "lookup")),
        genai_tool(2, "lookup", None, call_id="c1"),
        span(3, "attempt", failed, parent=2, start=2100, end=2200),
        span(4, "attempt", {"gen_ai.tool.call.id": "c1"}, parent=2, start=2300, end=2400),
    )
    assert found["lookup"].error is None


def test_a_child_failure_of_a_call_no_record_shows_in_pieces_is_not_read() -> None:
    found = calls(
        turn(),
        genai_tool(2, "refund", '{"q": 1}', call_id="c1"),
        span(3, "execution", {"gen_ai.tool.call.id": "c1", "error.type": "tool_error"}, parent=2),
    )
    assert found["refund"].error is None


# The lone text of a tool span's own events is its result.


def test_the_lone_text_of_a_tool_spans_events_is_its_result() -> None:
    lookup = genai_tool(2, "lookup", None, call_id="c1")._replace(
        events=(SpanEvent("output", 7, {"value": '{"total": 7}'}),)
    )
    track = genai_tool(3, "track", None, call_id="c2")._replace(
        events=(SpanEvent("output", 7, {"value": '{"id": 5}', "note": "cached"}),)
    )
    logged = genai_tool(4, "refund", None, call_id="c3")._replace(
        events=(LogEvent("log", 7, {"body": "refunding invoice 877"}),)  # an app's log line
    )
    shown = [pieces(f"c{n}", tool) for n, tool in ((1, "lookup"), (2, "track"), (3, "refund"))]
    found = calls(turn(*shown), lookup, track, logged)
    assert found["lookup"].result == {"total": 7}
    assert found["track"].result is None  # two texts: which one would be a guess
    assert found["refund"].result is None


def test_a_progress_event_of_a_call_no_record_names_is_no_result() -> None:
    # (review: a tool span whose content capture is off, with a cache-lookup event)
    cached = genai_tool(2, "lookup", '{"q": 1}', call_id="c1")._replace(
        events=(SpanEvent("cache.lookup", 7, {"cache.backend": "redis-primary"}),)
    )
    assert calls(turn(), cached)["lookup"].result is None


def test_a_records_only_object_holding_the_tools_name_describes_no_call() -> None:
    # (second review: a search result naming the engine "search" is no call record, and
    # the progress event of a call no record shows in pieces is no result)
    message = record("gen_ai.tool.message", id="c1", content='{"engine": "search", "hits": 3}')
    searching = genai_tool(2, "search", '{"q": "shoes"}', call_id="c1")._replace(
        events=(SpanEvent("progress", 7, {"note": "querying the index"}),)
    )
    [step] = tools(run(turn(message), searching))
    assert (step.args, step.result) == ({"q": "shoes"}, None)


def test_a_record_with_the_call_id_alone_is_about_no_call_of_it() -> None:
    # (review: the older GenAI convention's tool message, the call's result by its id)
    message = record("gen_ai.tool.message", id="c1", content='{"temp_c": 21, "sky": "clear"}')
    [step] = tools(run(turn(message), genai_tool(2, "weather", None, call_id="c1")))
    assert step.args is None


def test_log_records_keep_every_attribute() -> None:
    """A record's call id and arguments sit under any key: the decoder keeps them all."""
    wanted = log_selector(ATTRIBUTE_SELECTOR)
    assert wanted.wants("tool_use_id")
    assert wanted.wants("tool_input")
    assert wanted.max_value_size == ATTRIBUTE_SELECTOR.max_value_size


# The turn's request and answer, recorded only as records of the turn.


def bare_chat(n: int, response_id: str, start: int) -> Span:
    """A model call recorded without content: model, tokens and its response id."""
    attributes: dict[str, AttrValue] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "m",
        "gen_ai.response.id": response_id,
        "gen_ai.usage.input_tokens": 10,
        "gen_ai.usage.output_tokens": 3,
    }
    return span(n, "chat m", attributes, parent=1, start=start)


def told(*records: LogEvent, **attributes: AttrValue) -> Span:
    return span(
        1, "turn", {"gen_ai.operation.name": "invoke_agent", **attributes}, start=0, end=10**6
    )._replace(events=records)


def test_a_record_tied_to_the_last_call_holds_the_answer() -> None:
    answer = record("reply", ref="r2", model="m", text="Refunded one copy, id RF-1.")
    early = LogEvent("reply", 5, {"ref": "r1", "text": "Let me look that up."})
    trajectory = run(told(early, answer), bare_chat(2, "r1", 100), bare_chat(3, "r2", 200))
    assert trajectory.output == "Refunded one copy, id RF-1."
    unrelated = record("reply", ref="r1", text="Let me look that up.")  # the first call's
    trajectory = run(told(unrelated), bare_chat(2, "r1", 100), bare_chat(3, "r2", 200))
    assert trajectory.output is None
    # (review: an application's log line that mentions the id is no record of the call)
    logged = record("log", response_id="r2", body="model call finished in 1.2 s")
    trajectory = run(told(logged), bare_chat(2, "r1", 100), bare_chat(3, "r2", 200))
    assert trajectory.output is None


def test_a_request_the_root_records_and_an_early_record_repeats_is_the_input() -> None:
    asked = "Please refund invoice 877."
    session = "3f9c2a7e-session"
    early = LogEvent("asked", 50, {"text": asked, "id": "p1", "session": session})
    root = told(early, request=asked, label="turn one", session=session)
    assert run(root, bare_chat(2, "r1", 100)).input == asked
    late = LogEvent("asked", 150, {"text": asked, "session": session})  # after the model call
    assert run(told(late, request=asked, session=session), bare_chat(2, "r1", 100)).input is None
    # (second review) a log line that shares no id with the run, or repeats the agent's
    # own instructions, is no record of the request
    unrelated = LogEvent("asked", 50, {"text": asked})
    assert run(told(unrelated, request=asked), bare_chat(2, "r1", 100)).input is None
    rules = "You are the store's refund assistant. Be brief."
    echoed = LogEvent("log", 50, {"body": rules, "session": session})
    root = told(echoed, session=session, **{"gen_ai.system_instructions": rules})
    assert run(root, bare_chat(2, "r1", 100)).input is None
