"""Joining executed tool spans to the tool calls LLM spans requested (CONVENTIONS §6.3-6.4).

By call id first, anywhere in the trace (clock skew cannot break it). Tool spans
without an id (OpenInference, OpenAI Agents SDK, CrewAI) are then matched by
name among still-unmatched requests of the LLM spans *before* them, preferring
equal arguments, then the latest LLM (the one that triggered the execution),
then request order; only if none precedes them, among all; a span that records no
arguments may run a request of the model call before it that names the tool behind a
namespace (rule 82). Requests left over were never executed: the run crashed or was
cut short.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Final

from collector.core.records import Span
from collector.normalize.arguments import Arguments
from collector.normalize.messages import RequestedCall
from collector.normalize.step_records import (
    INPUT_TOKENS,
    MODEL,
    NAME,
    OUTPUT_TOKENS,
    with_fields,
)
from collector.normalize.tools import ToolDraft
from collector.normalize.values import name_prefix
from evaluators.trajectory import Step


class LlmCall:
    """An LLM span's step with the tool calls it requested and which of them ran.

    ``spans`` are the layers that recorded this one call, outermost first (a
    framework's model span and, below it, the client library's): readers of content
    ask each layer in turn.
    """

    __slots__ = ("calls", "history", "matched", "span", "spans", "step")

    def __init__(self, span: Span, step: Step, calls: list[RequestedCall]) -> None:
        self.span, self.step, self.calls = span, step, calls
        self.spans = [span]
        self.matched = [False] * len(calls)
        self.history: Any = None  # its input history, once read (``rebuilt``)

    def absorb(self, inner: Span, inner_step: Step, inner_calls: list[RequestedCall]) -> None:
        """Another layer of the same model call: fills the model, token counts and
        requested calls this layer did not record."""
        self.spans.append(inner)
        step = self.step
        tokens_in, tokens_out = step.input_tokens, step.output_tokens
        self.step = with_fields(
            step,
            {
                MODEL: step.model or inner_step.model,
                NAME: step.name if step.model else inner_step.name,
                INPUT_TOKENS: inner_step.input_tokens if tokens_in is None else tokens_in,
                OUTPUT_TOKENS: inner_step.output_tokens if tokens_out is None else tokens_out,
            },
        )
        if not self.calls and inner_calls:
            self.calls = inner_calls
            self.matched = [False] * len(inner_calls)


class Joined:
    """Where a tool span's request came from (``None`` fields: executed without request)."""

    __slots__ = ("llm", "request")

    def __init__(self, llm: LlmCall | None = None, request: RequestedCall | None = None) -> None:
        self.llm = llm
        self.request = request


def join(ordered: Sequence[ToolDraft | LlmCall]) -> dict[int, Joined]:
    """Match tool drafts in ``ordered`` (trajectory order) to requests: ``id(draft)`` → ``Joined``.

    Every draft gets an entry (an empty ``Joined`` if it was executed without request).

    Marks matched requests in their ``LlmCall``; see ``unexecuted`` for the rest.
    """
    llms = [item for item in ordered if isinstance(item, LlmCall)]
    by_id: dict[str, tuple[LlmCall, int]] = {}
    for llm in llms:
        for k, call in enumerate(llm.calls):
            if call.call_id is not None:
                by_id.setdefault(call.call_id, (llm, k))
    joined: dict[int, Joined] = {}
    for item in ordered:
        if isinstance(item, ToolDraft) and item.call_id is not None:
            hit = by_id.get(item.call_id)
            if hit is not None and not hit[0].matched[hit[1]]:
                joined[id(item)] = _take(*hit)
    seen: list[LlmCall] = []
    for item in ordered:
        if isinstance(item, LlmCall):
            seen.append(item)
        elif id(item) in joined:
            continue
        elif item.call_id is not None and item.call_id in by_id:
            joined[id(item)] = Joined()  # a second execution under an id already joined
        else:
            hit = _by_name(item, seen, llms)
            joined[id(item)] = _take(*hit) if hit is not None else Joined()
    return joined


def _by_name(
    tool: ToolDraft, seen: list[LlmCall], llms: list[LlmCall]
) -> tuple[LlmCall, int] | None:
    """The request a tool span without a joined id runs (module docstring): by its name,
    among the model calls before it, then all; by its name behind a label; by its name
    behind a namespace (rule 82)."""
    hit = _best(tool, reversed(seen)) or _best(tool, reversed(llms))
    if hit is None and _LABEL_MARKS.intersection(tool.name):
        hit = _labelled(tool, seen) or _labelled(tool, llms)
    if hit is None and seen and tool.call_id is None and tool.arguments.value is None:
        hit = _qualified(tool, seen[-1])
    return hit


# What joins a server's or a plugin's namespace to a tool's name in the name a model is
# offered (``music_store__refund``, ``store.refund``, ``store/refund``).
_NAMESPACE_MARKS: Final = ("__", ".", "/")


def _qualified(tool: ToolDraft, llm: LlmCall) -> tuple[LlmCall, int] | None:
    """The request a tool span runs when the model asked for the tool under a qualified
    name and the span, on the executing side, names it bare (rule 82: fast-agent offers an
    MCP server's tools as ``<server>__<tool>``; the server's ``execute_tool refund`` span
    records neither arguments nor the model's call id). Only a span that records no
    arguments (nothing to contradict the request) and no id, and only among the unmatched
    requests of the model call right before it (the one whose requests it runs), in
    request order; none when they name the tool behind different namespaces (two
    servers' ``search``). The draft takes the request's name: the one the model chose."""
    found = [k for k, call in enumerate(llm.calls) if not llm.matched[k]
             and _qualifies(call.name, tool.name)]  # fmt: skip
    if not found or len({llm.calls[k].name for k in found}) > 1:
        return None  # (two servers' tools of one name: which one ran is not recorded)
    tool.name = llm.calls[found[0]].name
    return llm, found[0]


def _qualifies(qualified: str, name: str) -> bool:
    """Whether ``qualified`` is ``name`` behind a namespace (``_NAMESPACE_MARKS``)."""
    namespace = name_prefix(qualified, name)
    return any(namespace.endswith(mark) and len(namespace) > len(mark) for mark in _NAMESPACE_MARKS)


def unexecuted(llms: Iterable[LlmCall]) -> list[tuple[LlmCall, RequestedCall]]:
    """Requests no tool span executed, in request order."""
    # Indexes, not ``zip(strict=True)``: compiled, that zip is a generic call per model
    # call (~2 % of the normalizer's time, ``perf``).
    out: list[tuple[LlmCall, RequestedCall]] = []
    for llm in llms:
        calls, matched = llm.calls, llm.matched
        if len(matched) != len(calls):
            raise ValueError("a model call's requests and their flags differ in number")
        for k in range(len(calls)):
            if not matched[k]:
                out.append((llm, calls[k]))
    return out


def _take(llm: LlmCall, k: int) -> Joined:
    llm.matched[k] = True
    return Joined(llm, llm.calls[k])


def _best(tool: ToolDraft, llms: Iterable[LlmCall]) -> tuple[LlmCall, int] | None:
    fallback = None
    for llm in llms:
        for k, call in enumerate(llm.calls):
            if llm.matched[k] or call.name != tool.name:
                continue
            if same_arguments(tool.arguments, call.args):
                return llm, k
            if fallback is None:
                fallback = (llm, k)
    return fallback


# What separates a label from the tool's name (``tool - refund``, ``Tool: refund``): a
# name without one is no label, and costs no second pass over the requests.
_LABEL_MARKS: Final = frozenset(" -:.")


def _labelled(tool: ToolDraft, llms: Sequence[LlmCall]) -> tuple[LlmCall, int] | None:
    """The request a tool span runs when its name is the tool's name behind a label
    (``tool - refund``, ``Tool: refund``) and it got exactly the arguments asked for:
    both, since a wrapper may share a tool's name or its arguments, not both. Asked only
    when no request of the span's own name is left anywhere (an exact name wins), the
    latest model call first. The draft takes the request's name (its own is the label's)."""
    for llm in reversed(llms):
        for k, call in enumerate(llm.calls):
            if (
                not llm.matched[k]
                and _ends_with_name(tool.name, call.name)
                and same_arguments(tool.arguments, call.args)
            ):
                tool.name = call.name
                return llm, k
    return None


def _ends_with_name(label: str, name: str) -> bool:
    """Whether ``label`` ends in ``name`` as a word of its own (not ``my_refund``)."""
    before = name_prefix(label, name)[-1:]
    return bool(before) and not (before.isalnum() or before == "_")


def same_arguments(arguments: Arguments, requested: Any) -> bool:
    """True if the tool got what the model asked for (a bare value vs. a one-key object too)."""
    if arguments.bare and isinstance(requested, dict) and len(requested) == 1:
        return bool(next(iter(requested.values())) == arguments.value)
    if arguments.envelope is not None and arguments.envelope == requested:
        return True  # the model asked for the outer object: no envelope after all
    return bool(arguments.value == requested)
