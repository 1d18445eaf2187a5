"""Rule 80 (ADR 0017, session 23): a run recorded only as the transcript a span's output
holds (no model-call and no tool span), read from its messages; minimal traces of the
shapes Haystack under traceAI and CrewAI under MLflow showed, never keyed to their names."""

from __future__ import annotations

import json
from typing import Any

from support.span_kit import run, span

from collector.core.records import Span
from evaluators.trajectory import StepKind, Trajectory

SYSTEM = {"role": "system", "content": "You are the store's support agent."}
ASK = {"role": "user", "content": "Refund track 3 of invoice 9."}


def call(call_id: str, name: str, **args: Any) -> dict[str, Any]:
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)}}  # fmt: skip


def asks(*calls: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": "", "tool_calls": list(calls)}


def answer(call_id: str, content: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


FINAL = {"role": "assistant", "content": "Refunded track 3."}
TRANSCRIPT = [
    SYSTEM,
    ASK,
    asks(call("c1", "lookup_invoice", invoice_id=9), call("c2", "lookup_track", track_id=3)),
    answer("c1", '{"invoice_id": 9, "total": 1.29}'),
    answer("c2", '{"track_id": 3}'),
    asks(call("c3", "refund", invoice_id=9, track_id=3)),
    answer("c3", "Error: RefundWindowExpired: invoice 9 is too old"),
    FINAL,
]


def models(trajectory: Trajectory) -> int:
    return sum(step.kind is StepKind.LLM for step in trajectory.steps)


def chain(n: int, output: object, parent: int = 0, key: str = "output.value") -> Span:
    """A chain span recording ``output``, asked the transcript's request (its input)."""
    inputs = "mlflow.spanInputs" if key.startswith("mlflow") else "input.value"
    attributes = {"openinference.span.kind": "CHAIN", key: json.dumps(output),
                  inputs: json.dumps({"messages": [ASK]})}  # fmt: skip
    return span(n, f"step {n}", attributes, parent=parent)


def test_a_transcript_on_a_chain_span_is_the_run() -> None:
    trajectory = run(chain(1, {"request": "x"}), chain(2, {"messages": TRANSCRIPT}, parent=1))
    assert trajectory.skip_reason is None
    kinds = [step.kind for step in trajectory.steps]
    assert kinds == [StepKind.LLM, StepKind.TOOL, StepKind.TOOL, StepKind.LLM, StepKind.TOOL,
                     StepKind.LLM]  # fmt: skip
    tools = trajectory.tool_calls
    assert [(t.name, t.call_id, t.args) for t in tools] == [
        ("lookup_invoice", "c1", {"invoice_id": 9}),
        ("lookup_track", "c2", {"track_id": 3}),
        ("refund", "c3", {"invoice_id": 9, "track_id": 3}),
    ]
    assert tools[0].result == {"invoice_id": 9, "total": 1.29}
    assert tools[2].error is not None and "RefundWindowExpired" in tools[2].error
    assert all(t.executed and t.source == "messages" for t in tools)
    assert trajectory.input == ASK["content"]
    assert trajectory.output == FINAL["content"]
    assert {"tool_timings", "model_timings"} <= set(trajectory.gaps)
    assert "model_calls" not in trajectory.gaps and "tool_calls" not in trajectory.gaps


def test_a_request_split_into_one_message_per_call_is_one_model_call() -> None:
    """(Responses-API histories write each requested call as an assistant item.)"""
    first, second = TRANSCRIPT[2]["tool_calls"]
    split = [*TRANSCRIPT[:2], asks(first), asks(second), *TRANSCRIPT[3:]]
    trajectory = run(chain(1, {"messages": split}))
    kinds = [step.kind for step in trajectory.steps]
    assert kinds == [StepKind.LLM, StepKind.TOOL, StepKind.TOOL, StepKind.LLM, StepKind.TOOL,
                     StepKind.LLM]  # fmt: skip


def test_only_the_last_turn_of_a_session_transcript_is_this_run() -> None:
    earlier = [SYSTEM, {"role": "user", "content": "Hi"},
               asks(call("c0", "lookup_invoice", invoice_id=1)), answer("c0", "{}"),
               {"role": "assistant", "content": "Hello"}]  # fmt: skip
    trajectory = run(chain(1, {"messages": [*earlier, *TRANSCRIPT[1:]]}))
    assert [t.call_id for t in trajectory.tool_calls] == ["c1", "c2", "c3"]
    assert models(trajectory) == 3


def test_a_recorded_model_call_keeps_the_transcript_unread() -> None:
    model = span(3, "chat m", {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"},
                 parent=1)  # fmt: skip
    trajectory = run(chain(1, {"messages": TRANSCRIPT}), model)
    assert models(trajectory) == 1 and not trajectory.tool_calls


def test_an_output_holding_the_reply_alone_is_no_transcript() -> None:
    trajectory = run(chain(1, {"messages": [FINAL]}))
    assert trajectory.skip_reason == "no_agent_spans" and trajectory.steps == ()
    unanswered = run(chain(1, {"messages": [SYSTEM, ASK]}))
    assert unanswered.skip_reason == "no_agent_spans"


def test_a_pipeline_repeating_its_agents_transcript_reads_it_once() -> None:
    outer = chain(1, {"messages": [*TRANSCRIPT[:2], FINAL]})  # a shorter copy
    inner = chain(2, {"messages": TRANSCRIPT}, parent=1)
    trajectory = run(outer, inner)
    assert len(trajectory.tool_calls) == 3 and models(trajectory) == 3


def test_a_transcript_recorded_by_mlflow_keys_reads_the_same() -> None:
    trajectory = run(chain(1, {"messages": TRANSCRIPT}, key="mlflow.spanOutputs"))
    assert [t.name for t in trajectory.tool_calls] == ["lookup_invoice", "lookup_track", "refund"]


def test_a_conversation_the_run_only_loaded_is_not_its_transcript() -> None:
    """(A review's finding.) A memory read returns an earlier turn; an API returns a
    stored history: neither was this run asked."""
    asked = {"openinference.span.kind": "CHAIN", "input.value": "What is the weather in Oslo?",
             "output.value": "It is sunny in Oslo."}  # fmt: skip
    memory = {"openinference.span.kind": "CHAIN", "output.value": json.dumps(TRANSCRIPT)}
    loaded = span(2, "load_memory", memory, parent=1)
    trajectory = run(span(1, "chat_endpoint", asked), loaded)
    assert trajectory.skip_reason == "no_agent_spans" and trajectory.steps == ()
    stored = span(1, "GET /conversations/42", {"output.value": json.dumps(TRANSCRIPT)})
    assert run(stored).skip_reason == "no_agent_spans"


def test_the_runs_recorded_answer_comes_before_the_transcripts_reply() -> None:
    asked = {"openinference.span.kind": "CHAIN", "input.value": ASK["content"],
             "output.value": "Refunded track 3 (ref R-9)."}  # fmt: skip
    trajectory = run(span(1, "pipeline", asked), chain(2, {"messages": TRANSCRIPT}, parent=1))
    assert len(trajectory.tool_calls) == 3
    assert trajectory.output == "Refunded track 3 (ref R-9)."
