"""Hand-built spans and the trajectory they normalize to (normalizer rule tests)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from collector.core.records import (
    AttrValue,
    CompletionReason,
    Resource,
    Span,
    SpanEvent,
    StatusCode,
    Trace,
)
from collector.normalize import ATTRIBUTE_SELECTOR, Mappings, normalize
from evaluators.trajectory import Step, Trajectory

TRACE_ID = bytes.fromhex("0af7651916cd43dd8448eb211c80319c")


RESOURCE = Resource("svc", {"service.name": "svc"})


def sid(n: int) -> bytes:
    return n.to_bytes(8, "big")


def span(
    n: int,
    name: str,
    attributes: Mapping[str, AttrValue] | None = None,
    *,
    parent: int = 0,
    start: int | None = None,
    end: int | None = None,
    status: int = StatusCode.UNSET,
    message: str = "",
    events: tuple[SpanEvent | tuple[str, Mapping[str, AttrValue]], ...] = (),
    scope: str = "",
) -> Span:
    """Span ``n`` (id ``n``, starting at ``n`` µs unless ``start`` says); ``events`` may be
    given as ``(name, attributes)`` pairs, recorded 1 ns after the span starts."""
    begin = start if start is not None else n * 1000
    recorded = tuple(
        event if isinstance(event, SpanEvent) else SpanEvent(event[0], begin + 1, event[1])
        for event in events
    )
    return Span(
        TRACE_ID,
        sid(n),
        sid(parent) if parent else b"",
        name,
        1,
        begin,
        end if end is not None else begin + 500,
        status,
        message,
        attributes or {},
        recorded,
        RESOURCE,
        scope,
    )


class Recording(Mapping[str, AttrValue]):
    """Attributes that note every key looked up in ``read``."""

    def __init__(self, data: Mapping[str, AttrValue], read: set[str]) -> None:
        self.data, self.read = data, read

    def __getitem__(self, key: str) -> AttrValue:
        self.read.add(key)
        return self.data[key]

    def __contains__(self, key: object) -> bool:
        self.read.add(str(key))
        return key in self.data

    def __iter__(self) -> Iterator[str]:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)


def run(*spans: Span, mappings: Mappings | None = None) -> Trajectory:
    """Normalize ``spans`` as one trace, checking that the trajectory serializes and that
    every span attribute the normalizer read is one the decoder keeps (a key outside
    ``ATTRIBUTE_SELECTOR`` would be read here and never arrive in the daemon)."""
    read: set[str] = set()
    recorded = tuple(  # (a root span's attributes are decoded whole: any key may be read)
        s._replace(attributes=Recording(s.attributes, read)) if s.parent_span_id else s
        for s in spans
    )
    trace = Trace(TRACE_ID, recorded, CompletionReason.END_OF_INPUT, 0, 0)
    trajectory = normalize(trace, mappings)
    json.dumps(trajectory.to_json())  # always serializable
    kept = ATTRIBUTE_SELECTOR if mappings is None else mappings.selector(ATTRIBUTE_SELECTOR)
    assert sorted(key for key in read if not kept.wants(key)) == []
    return trajectory


def tools(trajectory: Trajectory) -> list[Step]:
    return list(trajectory.tool_calls)


def genai_agent(n: int = 1, **extra: AttrValue) -> Span:
    attributes: dict[str, AttrValue] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "shop",
    }
    attributes.update(extra)
    return span(n, "invoke_agent shop", attributes)


def genai_chat(n: int, calls: list[dict[str, Any]], parent: int = 1, text: str = "") -> Span:
    parts: list[dict[str, Any]] = [{"type": "tool_call", **call} for call in calls]
    if text:
        parts.append({"type": "text", "content": text})
    return span(
        n,
        "chat m",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "m",
            "gen_ai.input.messages": json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": "hello"}]}]
            ),
            "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": parts}]),
            "gen_ai.usage.input_tokens": 10,
            "gen_ai.usage.output_tokens": 3,
        },
        parent=parent,
    )


def genai_tool(
    n: int, name: str, args: str | None, *, call_id: str | None, parent: int = 1, **extra: AttrValue
) -> Span:
    attributes: dict[str, AttrValue] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
    }
    if call_id is not None:
        attributes["gen_ai.tool.call.id"] = call_id
    if args is not None:
        attributes["gen_ai.tool.call.arguments"] = args
    attributes.update(extra)
    return span(n, f"execute_tool {name}", attributes, parent=parent)


def oi(n: int, name: str, kind: str, parent: int = 0, **attributes: AttrValue) -> Span:
    attributes = {"openinference.span.kind": kind, **attributes}
    return span(n, name, attributes, parent=parent)


def oi_llm_calls(calls: list[tuple[str, str, str]]) -> dict[str, AttrValue]:
    out: dict[str, AttrValue] = {"llm.output_messages.0.message.role": "assistant"}
    for j, (call_id, name, arguments) in enumerate(calls):
        prefix = f"llm.output_messages.0.message.tool_calls.{j}.tool_call."
        out[prefix + "id"] = call_id
        out[prefix + "function.name"] = name
        out[prefix + "function.arguments"] = arguments
    return out
