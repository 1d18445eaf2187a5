"""Shared test helpers (moved from test_receiver_grpc.py)."""

from __future__ import annotations

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider

TOOL_SPAN = "execute_tool lookup_invoice"


def make_spans(provider: TracerProvider | None = None) -> list[ReadableSpan]:
    """An agent span with one tool-call child, as the SDK records them."""
    provider = provider or TracerProvider(
        resource=Resource.create({"service.name": "music-store-bot"})
    )
    tracer = provider.get_tracer("tests")
    root = tracer.start_span("invoke_agent refund_agent", attributes={"gen_ai.agent.name": "r"})
    child = tracer.start_span(
        TOOL_SPAN,
        context=trace.set_span_in_context(root),
        attributes={"gen_ai.tool.name": "lookup_invoice", "invoice_id": 237, "ok": True},
    )
    child.end()
    root.end()
    return [child, root]  # type: ignore[list-item]
