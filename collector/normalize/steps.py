"""``Step`` records from classified spans: names, LLM facts, joined tool calls.

Steps are built with positional arguments: ``Step`` has 16 fields and keyword
construction costs ~60 % more, once per span in the hot path.
"""

from __future__ import annotations

from typing import Any, Final

from collector.core.records import AttrValue, Span
from collector.normalize import evidence, kinds
from collector.normalize.arguments import (
    Arguments,
    bind,
    by_position,
    chosen,
    declared_members,
    parse_arguments,
)
from collector.normalize.conventions import (
    agentops,
    chat_events,
    genai,
    genkit,
    langfuse,
    langsmith,
    mlflow,
    openinference,
    traceloop,
    vercel,
    voltagent,
)
from collector.normalize.errors import span_error
from collector.normalize.join import Joined
from collector.normalize.mappings import Mappings
from collector.normalize.messages import RequestedCall
from collector.normalize.results import load_value, may_be_none
from collector.normalize.step_records import duration_s, new_lazy, new_step
from collector.normalize.tools import ToolDraft, parameter_names, single_parameter
from collector.normalize.values import first, integer, scalar_text
from evaluators.trajectory import Step, StepKind

AGENT_NAME_KEYS: Final = (
    genai.AGENT_NAME,
    openinference.AGENT_NAME,
    genai.WORKFLOW_NAME,
    vercel.FUNCTION_ID,
    langsmith.AGENT_NAME,
    traceloop.ENTITY_NAME,
    openinference.NODE_ID,
)
MODEL_KEYS: Final = (
    genai.RESPONSE_MODEL,
    genai.REQUEST_MODEL,
    openinference.MODEL_NAME,
    vercel.MODEL_ID,
    langfuse.MODEL,
)
INPUT_TOKEN_KEYS: Final = (*genai.INPUT_TOKENS, openinference.INPUT_TOKENS, *vercel.INPUT_TOKENS)
OUTPUT_TOKEN_KEYS: Final = (
    *genai.OUTPUT_TOKENS,
    openinference.OUTPUT_TOKENS,
    *vercel.OUTPUT_TOKENS,
)
_NAME_PREFIXES: Final = ("invoke_agent ", "invoke_workflow ")
_UNKNOWN_MODEL: Final = "unknown"  # Traceloop's value for a model it cannot name


def recorded_agent_name(span: Span, mappings: Mappings | None) -> str | None:
    """The agent name a span's attributes record (mapping first), if any."""
    mapped = mappings.agent_name if mappings is not None else None
    found = scalar_text(span.attributes.get(mapped)) if mapped else None
    found = found or scalar_text(first(span.attributes, AGENT_NAME_KEYS))
    if found is None and genkit.TYPE in span.attributes:
        found = genkit.agent_name(span)
    if found is None and agentops.SPAN_KIND in span.attributes:
        found = agentops.agent_name(span)
    if found is None and mlflow.SPAN_TYPE in span.attributes:
        found = mlflow.agent_name(span)
    if found is None and voltagent.ENTITY_NAME in span.attributes:
        found = voltagent.agent_name(span)
    if found is None and "." in span.name:  # (a run read by evidence: ``evidence``)
        found = evidence.agent_name(span)
    return found


def agent_name(span: Span, mappings: Mappings | None) -> str:
    """The agent (or workflow) a span invokes, from attributes, else its span name."""
    found = recorded_agent_name(span, mappings)
    if found is not None:
        return found
    for prefix in _NAME_PREFIXES:
        if span.name.startswith(prefix):
            return span.name[len(prefix) :]
    return span.name


def node_name(span: Span) -> str:
    """A LangGraph node's name (Traceloop keeps it in the entity name, others in the span name)."""
    return traceloop.node_name(span) or span.name


def plain_step(
    kind: StepKind, name: str, span: Span, parent: str | None, agent: str | None
) -> Step:
    """An agent/node/other step: identity, timing and error only."""
    step_id, start, duration = span.span_id.hex(), span.start_unix_nano, duration_s(span)
    error = span_error(span)
    return new_step(kind, name, step_id, parent, start, duration, None, None, error, None, None,
                    agent, True, None, None, None)  # fmt: skip


def llm_step(span: Span, step_id: str, parent: str | None, agent: str | None) -> Step:
    """An LLM step: model and token counts where the span records them."""
    attributes = span.attributes
    model = None
    for key in MODEL_KEYS:
        value = attributes.get(key)
        if isinstance(value, str) and value and value != _UNKNOWN_MODEL:
            model = value
            break
    if model is None and mlflow.MODEL in attributes:  # JSON-quoted
        model = mlflow.model(span)
    if model is None and genkit.TYPE in attributes:
        model = genkit.model(span)
    if model is None and voltagent.MODEL in attributes:
        model = voltagent.model(span)
    tokens_in = integer(first(attributes, INPUT_TOKEN_KEYS))
    tokens_out = integer(first(attributes, OUTPUT_TOKEN_KEYS))
    if tokens_in is None and tokens_out is None and langfuse.USAGE in attributes:
        tokens_in, tokens_out = langfuse.tokens(span)
    if tokens_in is None and tokens_out is None and mlflow.USAGE in attributes:
        tokens_in, tokens_out = mlflow.tokens(span)
    if tokens_in is None and tokens_out is None and genkit.TYPE in attributes:
        tokens_in, tokens_out = genkit.tokens(span)
    if model is None and tokens_in is None and tokens_out is None and span.events:
        model = chat_events.model(span)  # (a model call recorded in its events: rule 67)
        tokens_in, tokens_out = chat_events.tokens(span)
    start, duration, error = span.start_unix_nano, duration_s(span), span_error(span)
    return new_step(kinds.LLM, model or span.name, step_id, parent, start, duration, None,
                    None, error, None, None, agent, True, model, tokens_in, tokens_out)  # fmt: skip


def tool_step(draft: ToolDraft, joined: Joined) -> Step:
    """An executed tool call, completed from the request it was joined to.

    Arguments and result text that ``ToolDraft`` deferred become ``LazyValue``s,
    parsed when ``Step.args`` / ``Step.result`` are first read."""
    span, request = draft.span, joined.request
    args: Any
    if draft.arguments_deferred:
        raw_args = draft.raw_arguments
        deferred = DeferredArguments(raw_args, draft, joined)
        args = new_lazy(load_arguments, deferred, False)  # an object, or a bare value bound
    else:
        arguments = draft.arguments
        args, raw_args = arguments.value, arguments.raw
        if arguments.bare:
            args = bind(arguments, _single_parameter(draft, joined))
        elif args is None and request is not None:  # span without arguments (ADK/Strands)
            args, raw_args = request.args, request.raw_args
        else:
            requested = request.args if request is not None else None
            parameters = openinference.tool_parameters(draft.span)
            args = _positional(arguments, draft.name, parameters, _definitions(joined), requested)
    result: Any
    if draft.result_deferred:
        raw_result = draft.raw_result
        # (Whether it may be None is asked of the first result only: ``gaps``.)
        result = new_lazy(load_value, raw_result, True if raw_result is None else may_be_none)
    else:
        result = draft.result.value
    # The model's id for the call: the span's own is the same when the join was by id,
    # and an id the model never gave when it was by name (an instrumentation that makes
    # one up for a framework that passes none: OpenLIT's smolagents tool spans).
    call_id = (request.call_id if request is not None else None) or draft.call_id
    return new_step(kinds.TOOL, draft.name, draft.step_id, draft.parent, span.start_unix_nano,
                    duration_s(span), args, result, draft.error, call_id, raw_args,
                    draft.agent, True, None, None, None)  # fmt: skip


class DeferredArguments:
    """What deferred argument text needs when it is read: the text, the arguments the
    model requested (an envelope they name is no envelope), and what names the tool's
    single parameter in case the text holds a bare value (``arguments.can_defer``).
    Only those values are kept, not the spans: a trajectory may outlive its trace."""

    __slots__ = ("definitions", "name", "parameters", "raw", "requested")

    def __init__(self, raw: str | None, draft: ToolDraft, joined: Joined) -> None:
        self.raw, self.name = raw, draft.name
        self.requested = joined.request.args if joined.request is not None else None
        self.parameters = openinference.tool_parameters(draft.span)
        llm = joined.llm
        self.definitions = llm.span.attributes.get(genai.TOOL_DEFINITIONS) if llm else None


def load_arguments(deferred: DeferredArguments) -> Any:
    """The value ``tool_step`` would have given deferred argument text (never None:
    ``arguments.can_defer``)."""
    arguments = parse_arguments(deferred.raw)
    if arguments.bare:
        parameter = _parameter_of(
            deferred.name, deferred.requested, deferred.parameters, deferred.definitions
        )
        return bind(arguments, parameter)
    return _positional(
        arguments, deferred.name, deferred.parameters, deferred.definitions, deferred.requested
    )


def _definitions(joined: Joined) -> AttrValue:
    llm = joined.llm
    return llm.span.attributes.get(genai.TOOL_DEFINITIONS) if llm is not None else None


def _positional(
    arguments: Arguments,
    name: str,
    parameters: AttrValue,
    definitions: AttrValue,
    requested: Any,
) -> Any:
    """``chosen`` arguments, or a recorded call with positional values bound by the tool's
    declared parameters: its own schema (the span's), else the model's definitions only
    when no request is known (they leave injected parameters out: a context, ``self``,
    so positions may shift), and only a binding that agrees with the request on the
    names both give; else the call as recorded, as before."""
    if not arguments.positional:
        value = arguments.value
        if parameters is not None and isinstance(value, dict) and "args" in value:
            flat = declared_members(value, parameter_names(parameters, None))
            if flat is not None and (not isinstance(requested, dict) or flat == requested):
                return flat
        return chosen(arguments, requested)
    names = parameter_names(parameters, None)
    if names is None and definitions is not None and requested is None:
        names = parameter_names(definitions, name)
    bound = by_position(arguments, names)
    if bound is arguments.value:
        return chosen(arguments, requested)
    if isinstance(requested, dict) and isinstance(bound, dict):
        shared = bound.keys() & requested.keys()
        disagree = any(bound[key] != requested[key] for key in shared)
        return chosen(arguments, requested) if disagree else bound
    return bound


def unexecuted_step(llm: Step, call: RequestedCall) -> Step:
    """A tool call the model requested but no tool span executed (placed at the LLM's end)."""
    end = llm.start_unix_nano + round(llm.duration_s * 1e9)
    return new_step(kinds.TOOL, call.name, "", llm.parent_span_id, end, 0.0, call.args,
                    None, None, call.call_id, call.raw_args, llm.agent, False, None, None,
                    None)  # fmt: skip


def _single_parameter(draft: ToolDraft, joined: Joined) -> str | None:
    """The tool's only parameter: from the request's arguments, else its schema/definitions."""
    requested = joined.request.args if joined.request is not None else None
    llm = joined.llm
    definitions = llm.span.attributes.get(genai.TOOL_DEFINITIONS) if llm is not None else None
    parameters = openinference.tool_parameters(draft.span)
    return _parameter_of(draft.name, requested, parameters, definitions)


def _parameter_of(
    name: str, requested: Any, parameters: AttrValue, definitions: AttrValue
) -> str | None:
    if isinstance(requested, dict) and len(requested) == 1:
        return str(next(iter(requested)))
    found = single_parameter(parameters, None)
    if found is None and definitions is not None:
        found = single_parameter(definitions, name)
    return found


def unreadable_step(span: Span, parent: str | None, agent: str | None, reason: str) -> Step:
    """A span the conventions could not read, as an ``other`` step carrying the error
    (the rest of the trace is evaluated as usual)."""
    name: object = span.name
    start: object = span.start_unix_nano
    when = start if isinstance(start, int) else 0
    error = f"evald could not read this span: {reason}"
    return Step(kinds.OTHER, name if isinstance(name, str) else "", span.span_id.hex(),
                parent, when, 0.0, error=error, agent=agent)  # fmt: skip
