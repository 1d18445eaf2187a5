"""Rules from the sixth round of blind captures (ADR 0017, addendum of 2026-11-28):
minimal traces of the shapes the captures showed, never keyed to a library's names."""

from __future__ import annotations

import json
from typing import Any

from support.span_kit import genai_tool, run, span

from collector.core.records import Span


def chat(n: int, sent: Any, reply_parts: list[dict[str, Any]]) -> Span:
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "m",
        "gen_ai.input.messages": sent if isinstance(sent, str) else json.dumps(sent),
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": reply_parts}]),
    }
    return span(n, "chat m", attributes, parent=1)


SYSTEM = [{"role": "system", "parts": [{"type": "text", "content": "You are the store."}]}]


def test_a_history_nested_past_the_decoders_depth_is_no_instructions() -> None:
    # (the fuzz test found it: a langfuse capture's scrambled history reached rule 49)
    trajectory = run(
        span(1, "Workflow.run", {}, start=0, end=10**7),
        chat(2, SYSTEM, [{"type": "tool_call", "id": "c", "name": "lookup", "arguments": {}}]),
        genai_tool(3, "lookup", '{"q": "x"}', call_id="c", **{"gen_ai.tool.call.result": "7"}),
        chat(4, "[" * 5000, [{"type": "text", "content": "done"}]),
    )  # fmt: skip
    assert [step.name for step in trajectory.tool_calls] == ["lookup"]
