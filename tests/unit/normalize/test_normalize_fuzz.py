"""Never crash on odd data: golden spans with values, types, trees and events scrambled.

Deterministic (seeded); each case must normalize and serialize to JSON.
"""

from __future__ import annotations

import json
import random

import pytest
from support.paths import GOLDEN

from collector.core.records import AttrValue, CompletionReason, Span, SpanEvent, Trace
from collector.decode import decode_protobuf
from collector.decode.common import KEEP_ALL
from collector.normalize import Mappings, ToolSpanRule, normalize, normalize_runs
from evaluators.depth import EVERYTHING

TRACES = GOLDEN / "traces"
ODD_VALUES: list[AttrValue] = [
    None,
    "",
    0,
    -1,
    3.5,
    float("nan"),
    True,
    b"\xff\x00",
    ("a", 1, None),
    {"k": ("v", b"\x01")},
    "{",
    "[" * 3000,
    '{"a":' * 2000,
    "(" * 3000,
    "{'a': " * 500,
    "null",
    '"text"',
    "[1, 2]",
    "{'a': {1, 2}}",
    '{"type": "tool", "data": "x"}',
    '{"output": 5}',
    '{"lc": 1, "kwargs": 5}',
    '{"status": "error"}',
    '{"status": "error", "error_message": 3}',
    '[{"role": 5, "parts": 7}]',
    '[{"role": "assistant", "parts": [{"type": "tool_call", "name": 3}]}]',
    '[{"toolCallId": 1, "toolName": null, "input": "{"}]',
    '{"messages": [[[[[]]]]]}',
    '{"generations": [[[]]]}',
    '[{"toolUse": "x"}]',
    "\u0000\ud7ff",
    "tool_call",
    '{"input_str": 5, "inputs": [], "kwargs": "x"}',
    '{"langgraph_node": 5}',
    '{"status": "failed", "result": [1], "error": {"x": 1}}',
    '{"status": "ok", "result": {"status": "error", "result": null, "error": []}, "error": null}',
    "status='success' result=None error=None",
]
ODD_KEYS = [
    "gen_ai.operation.name",
    "openinference.span.kind",
    "traceloop.span.kind",
    "langsmith.span.kind",
    "ai.operationId",
    "gen_ai.output.messages",
    "llm.output_messages.0.message.role",
    "llm.output_messages.0.message.tool_calls.0.tool_call.function.name",
    "input.value",
    "metadata",
    "gen_ai.tool.definitions",
    "tool.parameters",
    "session.id",
    "gen_ai.span.kind",
    "gen_ai.output.messages.0.message.tool_calls.0.tool_call.function.name",
    "gen_ai.input.messages.1.message.role",
    "name",
]
MARKERS: list[AttrValue] = [
    "execute_tool",
    "chat",
    "invoke_agent",
    "invoke_workflow",
    "create_agent",
    "TOOL",
    "LLM",
    "AGENT",
    "CHAIN",
    "tool",
    "task",
    "workflow",
    "agent",
    "llm",
    "chain",
    "ai.toolCall",
    "ai.generateText",
    "ai.generateText.doGenerate",
]
NAMES = [
    "ai.toolCall",
    "call_llm",
    "invocation",
    "execute_tool (merged)",
    "model",
    "tools",
    "agent",
]
SCOPES = ["", "gcp.vertex.agent", "pydantic-ai", "strands.telemetry.tracer", "langsmith"]


def golden_spans() -> list[Span]:
    spans: list[Span] = []
    for path in sorted(p for p in TRACES.glob("*/*.pb") if not p.name.endswith(".logs.pb"))[::3]:
        spans.extend(decode_protobuf(path.read_bytes(), KEEP_ALL).spans)
    return spans


def scramble_attributes(
    rng: random.Random, attributes: dict[str, AttrValue]
) -> dict[str, AttrValue]:
    out = dict(attributes)
    for key in list(out):
        roll = rng.random()
        if roll < 0.2:
            out[key] = rng.choice(ODD_VALUES)
        elif roll < 0.3:
            del out[key]
    for _ in range(rng.randrange(3)):
        out[rng.choice(ODD_KEYS)] = rng.choice(ODD_VALUES + MARKERS)
    return out


def scramble(rng: random.Random, spans: list[Span], ids: list[bytes]) -> list[Span]:
    out: list[Span] = []
    for span in spans:
        events = tuple(
            SpanEvent(
                rng.choice(["exception", "gen_ai.choice", "gen_ai.tool.message", "x"]),
                0,
                {rng.choice(["exception.message", "message", "content"]): rng.choice(ODD_VALUES)},
            )
            for _ in range(rng.randrange(2))
        )
        parent = rng.choice([span.parent_span_id] * 4 + [b"", span.span_id, rng.choice(ids), b"x"])
        out.append(
            span._replace(
                parent_span_id=parent,
                name=rng.choice([span.name] * 3 + NAMES),
                start_unix_nano=rng.choice([span.start_unix_nano, 0, span.end_unix_nano]),
                status_code=rng.choice([span.status_code, 0, 1, 2, 7]),
                status_message=rng.choice(["", "boom", span.status_message]),
                attributes=scramble_attributes(rng, dict(span.attributes)),
                events=span.events + events,
                scope_name=rng.choice([span.scope_name] * 3 + SCOPES),
            )
        )
    rng.shuffle(out)
    return out + rng.sample(out, min(2, len(out)))  # at-least-once duplicates


@pytest.mark.parametrize("seed", range(40))
def test_scrambled_traces_normalize(seed: int) -> None:
    rng = random.Random(seed)
    spans = golden_spans()
    ids = [span.span_id for span in spans]
    mappings = Mappings(tool_span=ToolSpanRule(attribute="session.id"), tool_args="metadata")
    for start in range(0, len(spans), 37):
        chunk = scramble(rng, spans[start : start + rng.randrange(1, 40)], ids)
        trace = Trace(chunk[0].trace_id, tuple(chunk), CompletionReason.IDLE, 0, 0)
        split = [run.trajectory for run in normalize_runs(trace, mappings, EVERYTHING)]
        for trajectory in (normalize(trace), normalize(trace, mappings), *split):
            json.dumps(trajectory.to_json())
