"""Rules from the tenth round of blind captures (ADR 0017, session 21): minimal traces of
the shapes the captures showed, never keyed to a library's names."""

from __future__ import annotations

import json
from typing import Any

from support.span_kit import run, span

from collector.core.records import Span
from evaluators.trajectory import StepKind

# MLflow's LlamaIndex autolog, a later turn of a conversation: the request being prepared
# holds the earlier rounds, the earlier answer among them.


def mlflow_span(  # noqa: PLR0917 - the span's fields, in the order a tree reads
    n: int, name: str, kind: str, parent: int, inputs: Any, outputs: Any
) -> Span:
    attributes = {"mlflow.spanType": json.dumps(kind), "mlflow.spanInputs": json.dumps(inputs),
                  "mlflow.spanOutputs": json.dumps(outputs)}  # fmt: skip
    return span(n, name, attributes, parent=parent)


def said(role: str, words: str) -> dict[str, Any]:
    return {"role": role, "additional_kwargs": {}, "blocks": [{"block_type": "text", "text": words}]}


def test_mlflow_a_prepared_request_holding_an_earlier_answer_answers_nothing() -> None:
    """The earlier round's answer in a prepared request is no reply of this turn: the
    preparation folds into the call it prepares (one model step, not two), and the turn's
    input is the call's last user message (the run records only a Python repr)."""
    earlier = [said("system", "Be brief."), said("user", "Where is order 7?"),
               said("assistant", "It shipped."), said("user", "And order 8?")]  # fmt: skip
    trajectory = run(
        mlflow_span(1, "Agent.run", "AGENT", 0, "{'user_msg': 'And order 8?'}", {}),
        mlflow_span(2, "Model._prepare_chat_with_tools", "LLM", 1, {"tools": []},
                    {"messages": earlier, "tool_choice": "auto"}),
        mlflow_span(3, "Model.achat", "CHAT_MODEL", 1, {"messages": earlier},
                    {"message": said("assistant", "It is packed."), "raw": {}}),
    )  # fmt: skip
    assert [step.kind for step in trajectory.steps] == [StepKind.LLM]
    assert (trajectory.input, trajectory.output) == ("And order 8?", "It is packed.")


def test_mlflow_a_reply_list_ending_in_the_answer_is_still_the_reply() -> None:
    """(The guard above reads only the list's last message: a conversation returned with
    the answer last is a reply.)"""
    conversation = [said("user", "Where is order 7?"), said("assistant", "It shipped.")]
    trajectory = run(
        mlflow_span(1, "Agent.run", "AGENT", 0, {"user_msg": "Where is order 7?"}, {}),
        mlflow_span(2, "Model.chat", "CHAT_MODEL", 1, {"messages": conversation[:1]},
                    conversation),
    )  # fmt: skip
    assert trajectory.output == "It shipped."
