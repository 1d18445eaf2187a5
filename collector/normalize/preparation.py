"""A model call recorded twice side by side: a preparation span, then the call.

Some frameworks instrument a step that prepares a model call as a model span of its
own, beside the real one rather than around it (LlamaIndex's
``_prepare_chat_with_tools``, an LLM span under the same parent, just before
``achat``). Nested layers are merged where the walk meets them (``build``); this
merges the sibling kind, by evidence, not by name: a model span that records nothing
of a model call — no token counts, no requested tool calls, no message text — followed,
with no other step between them and under the same parent, by a model span of the
same model (or of none) that does record them, is that call's preparation. The call
keeps its own step (time, duration, tokens) and gets the preparation as one more layer.

The same walk merges a second instrumentation's layer that was not nested (rule 76):
a model span under the same parent, inside the other's time, that records the same
request and no reply of its own, is the same call seen from a layer below whose
context the first did not propagate (LiteLLM's instrumentation around the OpenAI
client's, traced by Langtrace: two sibling spans per request).
"""

from __future__ import annotations

from collector.normalize import conventions
from collector.normalize.join import LlmCall
from collector.normalize.run_text import layers_text
from collector.normalize.step_list import Item, SortKey


def merge_preparations(items: list[tuple[SortKey, Item]]) -> bool:
    """Fold every preparation into the call after it, in ``items`` (sorted, changed in
    place); True if one was folded."""
    merged, i = False, 0
    while i < len(items) - 1:
        first, second = items[i][1], items[i + 1][1]
        if isinstance(first, LlmCall) and isinstance(second, LlmCall) and _prepares(first, second):
            second.absorb(first.span, first.step, first.calls)
            del items[i]
            merged = True
        elif isinstance(first, LlmCall) and isinstance(second, LlmCall) and _inner(first, second):
            first.absorb(second.span, second.step, second.calls)
            del items[i + 1]
            merged = True
        else:
            i += 1
    return merged


def _inner(outer: LlmCall, inner: LlmCall) -> bool:
    """Whether ``inner`` is a layer of the call ``outer`` that was not nested under it:
    a sibling within its time, recording its request and no reply of its own, where
    ``outer`` records the reply. Not a failed call (a parallel request that failed
    records no reply either) nor one with other token counts (another request's)."""
    first, second = outer.span, inner.span
    if first.parent_span_id != second.parent_span_id or second.end_unix_nano > first.end_unix_nano:
        return False  # (sorted by start: ``inner`` starts within ``outer`` or later)
    if (
        inner.calls
        or inner.step.error is not None
        or not _same_model(outer.step.model, inner.step.model)
    ):
        return False
    if not _same_count(outer.step.input_tokens, inner.step.input_tokens) or not _same_count(
        outer.step.output_tokens, inner.step.output_tokens
    ):
        return False
    request = layers_text(conventions.LLM_INPUT, inner)
    if request is None or request != layers_text(conventions.LLM_INPUT, outer):
        return False
    if layers_text(conventions.LLM_OUTPUT, inner) is not None:
        return False
    return bool(outer.calls) or layers_text(conventions.LLM_OUTPUT, outer) is not None


def _same_count(outer: int | None, inner: int | None) -> bool:
    return outer is None or inner is None or outer == inner


def _same_model(outer: str | None, inner: str | None) -> bool:
    """A router's model name may carry its provider (``openai/gpt-4o`` around ``gpt-4o``)."""
    return outer is None or inner is None or outer == inner or outer.endswith("/" + inner)


def _prepares(first: LlmCall, second: LlmCall) -> bool:
    if first.span.parent_span_id != second.span.parent_span_id:
        return False
    if first.step.model not in (None, second.step.model):
        return False
    return not _records_a_call(first) and _records_a_call(second)


def _records_a_call(call: LlmCall) -> bool:
    step = call.step
    if step.input_tokens is not None or step.output_tokens is not None or call.calls:
        return True
    return any(
        conventions.first_text(conventions.LLM_INPUT, span) is not None
        or conventions.first_text(conventions.LLM_OUTPUT, span) is not None
        for span in call.spans
    )
