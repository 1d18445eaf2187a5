"""One tool span → a ``ToolDraft``: name, call id, arguments, result, error (CONVENTIONS §6.2-6.5).

Each field is read from the first attribute present in a fixed, convention-blind
order, so a span that mixes conventions (Traceloop 0.62 writes GenAI attributes)
still yields one answer. User mappings come first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from collector.core.records import AttrValue, Span
from collector.normalize import evidence
from collector.normalize.arguments import Arguments, parse_arguments
from collector.normalize.arguments import can_defer as can_defer_arguments
from collector.normalize.call_records import complete_calls
from collector.normalize.conventions import (
    adk,
    agentops,
    genai,
    genkit,
    langfuse,
    langsmith,
    langwatch,
    mlflow,
    openinference,
    strands,
    traceloop,
    vercel,
    voltagent,
)
from collector.normalize.declared_outputs import single_output, unwrapped
from collector.normalize.errors import span_error
from collector.normalize.mappings import Mappings
from collector.normalize.results import ToolResult, parse_result
from collector.normalize.results import can_defer as can_defer_result
from collector.normalize.tree import SpanTree
from collector.normalize.values import (
    INVALID,
    as_list,
    first,
    parse_json,
    quoted_text,
    scalar_text,
    structured,
    text,
)

NAME_KEYS: Final = (
    genai.TOOL_NAME,
    openinference.TOOL_NAME,
    vercel.TOOL_NAME,
    traceloop.ENTITY_NAME,
)
CALL_ID_KEYS: Final = (genai.TOOL_CALL_ID, vercel.TOOL_CALL_ID, *openinference.TOOL_IDS)
ARGUMENT_KEYS: Final = (
    genai.TOOL_ARGUMENTS,
    vercel.TOOL_ARGS,
    adk.TOOL_ARGS,
    openinference.INPUT_VALUE,
    langsmith.PROMPT,
    traceloop.TOOL_ARGUMENTS,
    langfuse.INPUT,
    mlflow.INPUTS,
    genkit.INPUT,
    agentops.TOOL_INPUT,
    genai.TOOL_ARGS,
)
RESULT_KEYS: Final = (
    genai.TOOL_RESULT,
    vercel.TOOL_RESULT,
    adk.TOOL_RESPONSE,
    openinference.OUTPUT_VALUE,
    langsmith.COMPLETION,
    traceloop.ENTITY_OUTPUT,
    langfuse.OUTPUT,
    mlflow.OUTPUTS,
    genkit.OUTPUT,
    agentops.TOOL_OUTPUT,
    agentops.TOOL_RESULT,
    genai.OUTPUT,
)
_NAME_PREFIXES: Final = ("execute_tool ",)
_MAX_EXPLANATION: Final = 2000  # characters of output that may stand for a failed call's error
# A Python callable traced by its method name (``refund.__call__``) is the callable.
_NAME_SUFFIXES: Final = (".__call__",)


class ToolDraft:
    """A tool execution before it is joined to the LLM request that caused it."""

    __slots__ = (
        "_arguments",
        "_result",
        "agent",
        "call_id",
        "error",
        "name",
        "parent",
        "raw_arguments",
        "raw_result",
        "span",
        "step_id",
    )

    def __init__(
        self,
        span: Span,
        mappings: Mappings | None,
        step_id: str,
        parent: str | None,
        agent: str | None,
    ) -> None:
        self.span, self.step_id, self.parent, self.agent = span, step_id, parent, agent
        attributes = span.attributes
        name = first(attributes, NAME_KEYS)
        call_id = first(attributes, CALL_ID_KEYS)
        if call_id is None or name is None:
            name, call_id = _quoted_identity(span, name, call_id)
        raw_args = first(attributes, ARGUMENT_KEYS)
        raw_result = first(attributes, RESULT_KEYS)
        # AgentOps' Agno / AG2 tool spans: the arguments in ``tool.parameters`` or the call's
        # entry in a request's tool list, the tool's name there too (``called_tool``)
        marked = agentops.SPAN_KIND in attributes
        raw_args = agentops.tool_arguments(span) if raw_args is None and marked else raw_args
        name = agentops.called_tool(span, text(name)) if marked else name
        if mappings is not None:
            name = _mapped(attributes, mappings.tool_name, name)
            call_id = _mapped(attributes, mappings.tool_call_id, call_id)
            raw_args = _mapped(attributes, mappings.tool_args, raw_args)
            raw_result = _mapped(attributes, mappings.tool_result, raw_result)
        flagged: str | None = None  # a failure only a true ``<ns>.tool.error`` says
        if raw_args is None and raw_result is None:
            name, raw_args, raw_result, flagged = _unconventional_parts(span, name)
        if span.events:  # Strands records tool content only as events
            raw_args = raw_args if raw_args is not None else strands.tool_arguments(span)
            raw_result = raw_result if raw_result is not None else strands.tool_result(span)
        self.name = text(name) or _name_from_span(span.name)
        # Text that parsing can only turn into a value (no error, call id, envelope) is
        # parsed when read: here by ``arguments`` / ``result``, or in the step, lazily.
        self.raw_arguments: str | None = None
        self.raw_result: str | None = None
        self._arguments: Arguments | None = None
        self._result: ToolResult | None = None
        found = scalar_text(call_id)
        own_id = found is not None  # then neither the arguments' nor the result's is asked
        if own_id and isinstance(raw_args, str) and can_defer_arguments(raw_args):
            self.raw_arguments = raw_args
        else:
            self._arguments = parse_arguments(raw_args)
        # (assigned here, not in the method: compiled, an attribute this method set to
        # None would stay narrowed to None across a call that sets it)
        self.raw_result, self._result = self._read_result(span, raw_result, own_id)
        if found is None and self._arguments is not None:
            found = self._arguments.call_id
        if found is None and self._result is not None:
            found = self._result.call_id
        self.call_id: str | None = found
        error = span_error(span)  # (AgentOps writes a failure as text beside an OK status)
        error = agentops.tool_error(span) if error is None and marked else error
        if error is None and self._result is not None:
            error = self._result.error
        elif error is not None and isinstance(raw_result, str):
            error = _explained(error, raw_result)
        self.error: str | None = error if error is not None else flagged

    def _read_result(
        self, span: Span, raw_result: AttrValue, own_id: bool
    ) -> tuple[str | None, ToolResult | None]:
        """(the text left to parse when read, None) when nothing but the result's value
        is left to read (module docstring), else (None, the result parsed now): unwrapped
        from the runtime's object around the tool's one declared output
        (``declared_outputs``, rule 101)."""
        output = single_output(span) if span.events else None
        if output is None and isinstance(raw_result, str) and can_defer_result(raw_result, own_id):
            return raw_result, None
        result = parse_result(raw_result, self.name)
        return None, result if output is None else unwrapped(result, output)

    @property
    def arguments(self) -> Arguments:
        """The arguments, parsed now if they were deferred."""
        found = self._arguments
        if found is None:
            found = self._arguments = parse_arguments(self.raw_arguments)
        return found

    @property
    def result(self) -> ToolResult:
        """The result, parsed now if it was deferred."""
        found = self._result
        if found is None:
            found = self._result = parse_result(self.raw_result, self.name)
        return found

    @property
    def records_arguments(self) -> bool:
        """The span recorded arguments (deferred text counts: nothing is parsed)."""
        found = self._arguments
        return self.raw_arguments is not None if found is None else found.value is not None

    @property
    def records_result(self) -> bool:
        """The span recorded a result (deferred text counts: nothing is parsed)."""
        found = self._result
        return self.raw_result is not None if found is None else found.value is not None

    @staticmethod
    def complete(drafts: Mapping[int, ToolDraft], tree: SpanTree) -> None:
        """Fill what the drafts (span index → draft) lack from records and layers."""
        complete_calls(drafts, tree, CALL_ID_KEYS)

    def fill_arguments(self, arguments: Arguments) -> None:
        """Arguments recorded elsewhere (``call_records``) for a span that had none."""
        self._arguments, self.raw_arguments = arguments, None

    def fill_result(self, raw: str) -> None:
        """A result recorded elsewhere (``call_records``) for a span that had none."""
        self._result, self.raw_result = parse_result(raw, self.name), None
        if self.error is None:
            self.error = self._result.error

    @property
    def arguments_deferred(self) -> bool:
        """The arguments are still unparsed text (``raw_arguments``)."""
        return self._arguments is None

    @property
    def result_deferred(self) -> bool:
        """The result is still unparsed text (``raw_result``)."""
        return self._result is None

    def same_call(self, inner: ToolDraft) -> bool:
        """True if ``inner`` (a tool span below this one) records this same execution:
        the same tool, and the same arguments wherever both layers recorded them."""
        if inner.name != self.name:
            return False
        mine, theirs = self.arguments.value, inner.arguments.value
        return mine is None or theirs is None or mine == theirs

    def absorb(self, inner: ToolDraft) -> None:
        """Complete this draft with what another layer of the same call recorded: the
        outer layer wins, the inner one fills what it lacks. An error that only the
        inner layer saw (an MCP server's ``error.type``) is the call's error, with the
        outer layer's result text as its message when that says more."""
        if self.arguments.value is None and inner.arguments.value is not None:
            self._arguments = inner.arguments
        if self.result.value is None and inner.result.value is not None:
            self._result = inner.result
        self.call_id = self.call_id or inner.call_id
        if self.error is None and inner.error is not None:
            shown = self.result.value
            self.error = shown if isinstance(shown, str) and shown else inner.error


def _name_from_span(name: str) -> str:
    """The tool a span name stands for, when no attribute names it."""
    for prefix in _NAME_PREFIXES:
        if name.startswith(prefix):
            return name[len(prefix) :]
    for suffix in _NAME_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def _explained(error: str, output: str) -> str:
    """A failed call's error message, or the call's recorded output when that output is
    a short plain text (no JSON) whose first line states the message and that says more
    (a wrapper's explanation with its causes: ``ToolError: Tool Error`` then
    ``StoreError: RefundWindowExpired: …``). A generic or one-word message (``error``, an
    exception type) is no evidence that the output explains it."""
    shown = output.strip()
    if (
        " " not in error.strip()
        or len(shown) <= len(error)
        or len(shown) > _MAX_EXPLANATION
        or error not in shown.split("\n", 1)[0]
    ):
        return error
    return error if parse_json(shown) is not INVALID else shown  # (JSON: a result)


def _unconventional_parts(
    span: Span, name: AttrValue
) -> tuple[AttrValue, AttrValue, AttrValue, str | None]:
    """``(name, raw arguments, raw result, flagged failure)`` of a tool span that records
    neither arguments nor a result under a convention's tool keys: VoltAgent's ``input``
    and ``output``; for a span that records no name either, LangWatch's typed values
    (the tool named by its span), else the keys of the span name's own namespace
    (``evidence``)."""
    if voltagent.marks(span.attributes):
        raw_args, raw_result = voltagent.tool_parts(span)
        return name, raw_args, raw_result, None
    if name is not None:
        return name, None, None, None
    if langwatch.SPAN_TYPE in span.attributes:
        raw_args, raw_result = langwatch.tool_parts(span)
        return None, raw_args, raw_result, None
    return evidence.tool_parts(span)


def _quoted_identity(
    span: Span, name: AttrValue, call_id: AttrValue
) -> tuple[AttrValue, AttrValue]:
    """The tool's name and call id where conventions that JSON-quote every value record
    them: Langfuse's metadata, MLflow's bare keywords (read on its tool spans only)."""
    attributes = span.attributes
    if call_id is None and langfuse.TOOL_CALL_ID in attributes:
        call_id = quoted_text(attributes.get(langfuse.TOOL_CALL_ID))
    if call_id is None and mlflow.TOOL_CALL_ID in attributes:
        call_id = mlflow.tool_call_id(span)
    if name is None and mlflow.TOOL_NAME in attributes:
        name = mlflow.tool_name(span)
    if name is None and genkit.TYPE in attributes:
        name = genkit.tool_name(span)
    if name is None and agentops.SPAN_KIND in attributes:
        name = agentops.tool_name(span)
    if call_id is None and voltagent.TOOL_CALL_ID in attributes:
        call_id = voltagent.tool_call_id(span)
    return name, call_id


def _mapped(attributes: Mapping[str, AttrValue], key: str | None, default: AttrValue) -> AttrValue:
    """The mapped attribute when the mapping names one that is present, else ``default``."""
    if key is None:
        return default
    value = attributes.get(key)
    return default if value is None else value


def single_parameter(schema_or_definitions: AttrValue, tool_name: str | None) -> str | None:
    """The only parameter's name in a JSON schema, or in a tool-definition list for ``tool_name``.

    Accepts ``tool.parameters`` (a schema), ``gen_ai.tool.definitions`` (semconv,
    pydantic-ai, Traceloop) and OpenAI-style ``{"type": "function", "function": …}``.
    """
    parsed = structured(schema_or_definitions) if schema_or_definitions is not None else None
    if parsed is None or parsed is INVALID:
        return None
    definitions = as_list(parsed)
    schema = parsed if definitions is None else _definition_schema(definitions, tool_name)
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if isinstance(properties, dict) and len(properties) == 1:
        return str(next(iter(properties)))
    return None


def parameter_names(schema_or_definitions: AttrValue, tool_name: str | None) -> list[str] | None:
    """The parameters' names in declared order: a JSON schema's ``properties``, a tool
    definition's for ``tool_name``, or a bare map of parameter name to its schema (every
    value an object with a ``type``: smolagents' ``tool.parameters``)."""
    parsed = structured(schema_or_definitions) if schema_or_definitions is not None else None
    if parsed is None or parsed is INVALID:
        return None
    definitions = as_list(parsed)
    schema = parsed if definitions is None else _definition_schema(definitions, tool_name)
    if not isinstance(schema, dict):
        return None
    properties = schema.get("properties")
    if isinstance(properties, dict):
        return [str(key) for key in properties]
    if schema and all(isinstance(v, dict) and "type" in v for v in schema.values()):
        return [str(key) for key in schema]
    return None


def _definition_schema(definitions: Any, tool_name: str | None) -> Any:
    for definition in definitions:
        if not isinstance(definition, dict):
            continue
        function = definition.get("function")
        entry = function if isinstance(function, dict) else definition
        if entry.get("name") == tool_name:
            return (
                entry.get("parameters")
                or entry.get("parameters_json_schema")
                or entry.get("inputSchema")
            )
    return None
