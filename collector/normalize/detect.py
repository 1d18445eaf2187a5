"""Decides, once per span, its ``Role`` and the convention that recognised it.

This is the one place that fixes precedence between conventions. Each family's
marker attribute is read once here (classification runs on every span of every
trace, so it avoids asking seven modules in turn), then the family decides.
"""

from __future__ import annotations

from typing import Final

from collector.core.records import AttrValue, Span
from collector.normalize import evidence
from collector.normalize.conventions import (
    adk,
    agentops,
    chat_events,
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
from collector.normalize.loop_spans import settle_loop_spans
from collector.normalize.mappings import Mappings
from collector.normalize.roles import CUSTOM, EVIDENCE, Role
from collector.normalize.tree import SpanTree, role_below
from collector.normalize.values import structured

# What runs below a run, never below one model call: a tool, an agent (another model call
# may: the client library's layer of the same call, under the framework's span).
_RUN_WORK: Final = frozenset({Role.TOOL, Role.AGENT})
_MODEL_CALL: Final = frozenset({Role.LLM})
_WORK: Final = frozenset({Role.LLM, Role.TOOL, Role.AGENT})
_MAX_DEPTH: Final = 8  # levels looked through below a model call read by evidence
_MAX_ANCESTORS: Final = 64  # a span's ancestors looked at (the tree cuts cycles)


def classify(span: Span, mappings: Mappings | None) -> tuple[Role, str]:
    """``(role, convention)``; ``(Role.OTHER, "")`` when no convention knows the span.

    Order: the user's tool rule; tool detection in CONVENTIONS §6.1 order (an
    ``execute_tool`` span is a tool whatever else it carries); then the other roles,
    vendor markers before plain GenAI, because Traceloop and LangSmith spans also
    carry ``gen_ai.operation.name`` (a Traceloop LangGraph node is ``execute_task``).
    """
    if mappings is not None and mappings.tool_span is not None and mappings.tool_span.matches(span):
        return Role.TOOL, CUSTOM
    attributes = span.attributes
    operation = attributes.get(genai.OPERATION)
    if operation == "execute_tool":
        return genai.tool_role(span) or Role.TOOL, _genai_family(span)
    oi_kind = openinference.span_kind(attributes)
    if oi_kind == "TOOL":
        return Role.TOOL, openinference.NAME
    tl_kind = attributes.get(traceloop.SPAN_KIND)
    if tl_kind == "tool":
        return Role.TOOL, traceloop.NAME
    vercel_role = None
    if vercel.OPERATION_ID in attributes or span.name.startswith("ai."):
        vercel_role = vercel.classify(span)
        if vercel_role is Role.TOOL:
            return Role.TOOL, vercel.NAME
    ls_kind = attributes.get(langsmith.SPAN_KIND)
    if ls_kind == "tool":
        return Role.TOOL, langsmith.NAME
    lf_type = mlflow_type = ao_kind = None  # (none writes GenAI operations: not asked then)
    if operation is None:
        lf_type = attributes.get(langfuse.TYPE)
        if lf_type == "tool":
            return Role.TOOL, langfuse.NAME
        mlflow_type = attributes.get(mlflow.SPAN_TYPE)
        if mlflow_type is not None and mlflow.classify(span) is Role.TOOL:
            return Role.TOOL, mlflow.NAME
        if genkit.TYPE in attributes and oi_kind is None and tl_kind is None and ls_kind is None:
            return _unless_evident(genkit.classify(span), span, None), genkit.NAME
        ao_kind = attributes.get(agentops.SPAN_KIND)
        if ao_kind == "tool":
            return Role.TOOL, agentops.NAME
    return _other_roles(
        span,
        operation,
        ls_kind=ls_kind,
        tl_kind=tl_kind,
        oi_kind=oi_kind,
        lf_type=lf_type,
        mlflow_type=mlflow_type,
        ao_kind=ao_kind,
        vercel_role=vercel_role,
    )


def _other_roles(
    span: Span,
    operation: object,
    *,
    ls_kind: object,
    tl_kind: object,
    oi_kind: object,
    lf_type: object,
    mlflow_type: object,
    ao_kind: object,
    vercel_role: Role | None,
) -> tuple[Role, str]:
    if ls_kind is not None:
        return _unless_evident(langsmith.classify(span), span, operation), langsmith.NAME
    if tl_kind is not None:
        return _unless_evident(traceloop.classify(span), span, operation), traceloop.NAME
    if oi_kind is not None:
        return _unless_evident(openinference.classify(span), span, operation), openinference.NAME
    if lf_type is not None:
        return _unless_evident(langfuse.classify(span), span, operation), langfuse.NAME
    if mlflow_type is not None:
        return _unless_evident(mlflow.classify(span), span, operation), mlflow.NAME
    if ao_kind is not None:
        return _unless_evident(agentops.classify(span), span, operation), agentops.NAME
    if operation is None and langwatch.SPAN_TYPE in span.attributes:
        return _unless_evident(langwatch.classify(span), span, None), langwatch.NAME
    if operation is None and voltagent.marks(span.attributes):
        return _unless_evident(voltagent.classify(span), span, None), voltagent.NAME
    if vercel_role is not None:
        return vercel_role, vercel.NAME
    role = adk.classify(span)  # legacy-schema names (invocation, call_llm)
    if role is not None:
        return role, adk.NAME
    if operation is not None:
        return genai.classify(span) or Role.OTHER, _genai_family(span)
    role = traceloop.classify(span)  # older OpenLLMetry LLM spans (llm.request.type)
    if role is not None:
        return role, traceloop.NAME
    return _by_evidence(span)


def _by_evidence(span: Span) -> tuple[Role, str]:
    """A span no convention names, read by what it records (ADR 0017): the GenAI message
    keys without an operation (rule 65), a request and reply in its events (rule 67),
    keys in the span name's own namespace (``evidence``)."""
    if genai.evident_model_call(span):
        return Role.LLM, genai.NAME
    if span.events and chat_events.classify(span) is Role.LLM:
        return Role.LLM, chat_events.NAME
    role = evidence.classify(span)
    if role is not None:
        return role, EVIDENCE
    return Role.OTHER, ""


def settle_evident_calls(tree: SpanTree, roles: list[Role], families: list[str]) -> bool:
    """Rules 65 and 67 read a span as a model call by what it records (the GenAI request
    and reply without an operation, a request and reply in its events). Two other things
    record the same:

    - a run: an agent span that writes the conversation, its model and its token totals
      without naming its operation. A span so read with a tool or an agent below it, or
      several model calls, is that run, not a call (one model call below it is the
      client library's layer of the same call, which the layer merge takes);
    - a second instrumentation of the call: a span of the same call that a convention
      reads, recording the same response id (``gen_ai.response.id``: the provider's, one
      per call) at the same time, where the two are not nested (Laminar's own
      ``openai.chat`` span beside OpenLLMetry's ``ChatOpenAI.chat``), so the layer merge
      does not see them. Of the two, the one that records the reply's content stays
      (the convention's, unless it records none: content capture off).

    Such spans become plumbing (``OTHER``) in ``roles`` and ``families``; True when a
    second instrumentation was found (the trajectory's duplicate-instrumentation gap).
    So does a model-call span around an agent's whole loop (``loop_spans``, rule 92).
    Costs one pass over the roles on a trace without such spans."""
    settle_loop_spans(tree, roles)
    spans = tree.spans
    evident = [
        i
        for i, family in enumerate(families)
        if roles[i] is Role.LLM and _read_by_evidence(spans[i], family)
    ]
    if not evident:
        return False
    for i in evident:
        if role_below(tree, roles, i, _RUN_WORK, max_depth=_MAX_DEPTH) or _calls_below(
            tree, roles, i
        ):
            roles[i], families[i] = Role.OTHER, ""
        elif genai.OPERATION in spans[i].attributes and role_below(
            tree, roles, i, _MODEL_CALL, max_depth=_MAX_DEPTH
        ):
            roles[i], families[i] = Role.OTHER, ""  # (rule 81: a wrapper counts its calls' tokens)
    answered: dict[str, int] = {}  # response id → the convention's span that records it
    for i, role in enumerate(roles):
        response = spans[i].attributes.get(genai.RESPONSE_ID)
        if role is Role.LLM and isinstance(response, str) and response and i not in evident:
            answered[response] = i
    twins = False
    for i in evident:
        response = spans[i].attributes.get(genai.RESPONSE_ID)
        j = answered.get(response) if isinstance(response, str) and response else None
        if roles[i] is not Role.LLM or j is None:
            continue
        if _nested(tree, i, j) or not _overlap(spans[i], spans[j]):
            continue  # (nested: the layer merge's; apart in time: a reused id, two calls)
        twins = True
        if genai.OUTPUT_MESSAGES in spans[j].attributes:
            roles[i], families[i] = Role.OTHER, ""
        else:  # the convention's span records no content (capture off): keep the other
            roles[j], families[j] = Role.OTHER, ""
    return twins


def _nested(tree: SpanTree, i: int, j: int) -> bool:
    """Whether one of spans ``i`` and ``j`` is an ancestor of the other."""
    parent = tree.parent
    for top, below in ((i, j), (j, i)):
        up = parent[below]
        for _ in range(_MAX_ANCESTORS):
            if up < 0:
                break
            if up == top:
                return True
            up = parent[up]
    return False


def _overlap(a: Span, b: Span) -> bool:
    return a.start_unix_nano <= b.end_unix_nano and b.start_unix_nano <= a.end_unix_nano


def _calls_below(tree: SpanTree, roles: list[Role], i: int) -> bool:
    """Whether span ``i`` holds the calls of a run: below it, through plumbing, either a
    graph node or workflow, or more than one model call at the top; one is the client
    library's layer of the same call, itself checked the same way (a chain of layers is
    one call)."""
    top = i
    for _ in range(_MAX_DEPTH):
        level: list[int] = [top]
        found: list[int] = []
        for _ in range(_MAX_DEPTH):
            level = [kid for j in level for kid in tree.children(j)]
            if any(roles[kid] is Role.NODE or roles[kid] is Role.WORKFLOW for kid in level):
                return True
            found.extend(kid for kid in level if roles[kid] is Role.LLM)
            level = [kid for kid in level if roles[kid] is not Role.LLM]
            if not level:
                break
        if len(found) != 1:
            return len(found) > 1
        top = found[0]
    return False


def _read_by_evidence(span: Span, family: str) -> bool:
    """A model call read from what it records, not from its operation's name: rules 65
    and 67, and rule 81's operation the conventions do not name (``genai.classify``)."""
    if family == chat_events.NAME:
        return True
    if family != genai.NAME:
        return False
    operation = span.attributes.get(genai.OPERATION)
    return operation is None or not genai.named_model_operation(operation)


def _unless_evident(role: Role | None, span: Span, operation: object) -> Role:
    """A vendor's role, unless it only says "wrapper" (a chain, a task, an unknown kind)
    and the span itself shows what it is: a GenAI model-call operation; a tool's name
    with the arguments of its call; the tool definitions the GenAI conventions record
    only on model calls and agent invocations (rule 77: ``gen_ai.tool.definitions``, so
    a wrapper that records them invokes an agent: LangSmith writes the OpenAI Agents
    SDK's agent span as a ``chain`` holding them); or a model request and the
    assistant's reply in the flattened layout (rule 78: ``gen_ai.prompt.N.*`` and an
    assistant ``gen_ai.completion.0.role``; the layout is the evidence, whatever marks
    the request type: AgentOps' ``request`` spans over ADK). (OpenLLMetry's LlamaIndex
    instrumentation marks every span a ``task``, its model calls and tool calls too.)"""
    if role is not None and role is not Role.CHAIN and role is not Role.OTHER:
        return role
    if operation is not None and genai.classify(span) is Role.LLM:
        return Role.LLM
    attributes = span.attributes
    if (genai.TOOL_ARGUMENTS in attributes or traceloop.TOOL_ARGUMENTS in attributes) and (
        isinstance(attributes.get(genai.TOOL_NAME), str)
        or isinstance(attributes.get(openinference.TOOL_NAME), str)
    ):
        return Role.TOOL
    if traceloop.flattened_exchange(attributes):
        return Role.LLM  # (before the definitions: a model call records them too)
    if _declares_tools(attributes.get(genai.TOOL_DEFINITIONS)):
        return Role.AGENT
    return role or Role.OTHER


def _declares_tools(value: AttrValue) -> bool:
    """Whether a ``gen_ai.tool.definitions`` value declares a tool: a non-empty list (or
    its JSON text), not ``"[]"``, ``"null"`` or an empty value."""
    if value is None:
        return False
    found = structured(value)
    return isinstance(found, list | tuple) and len(found) > 0


def _genai_family(span: Span) -> str:
    """The family behind a GenAI-attribute span (several reuse ``gen_ai.operation.name``)."""
    attributes = span.attributes
    if traceloop.SPAN_KIND in attributes:
        return traceloop.NAME
    if langsmith.SPAN_KIND in attributes:
        return langsmith.NAME
    if span.scope_name == adk.SCOPE:
        return adk.NAME
    if span.scope_name.startswith(strands.SCOPE_PREFIX):
        return strands.NAME
    return genai.NAME
