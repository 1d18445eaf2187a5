"""The run's input and output: what the user asked, what the agent finally answered.

Read first from run-level spans (the agent root, then the trace root), then from the
model calls: the last user message of the first model call, the last assistant
message of the last one (every layer of a call is asked). Frameworks that template
the model's prompt (and parse its reply) record the user's words only inside that
template; when the run root records its input (or output) as an object, the field of
it that appears verbatim in the model's text is the run's input (or output): the
first such field for the input, the last for the output (the answer, not the
reasoning before it); a plain-text output the run records that stands verbatim inside
the model's last reply, and is not all of it, is the output (a code agent's
``final_answer("...")``: the framework handed that part of the reply back). No template
syntax is assumed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from collector.core.records import Span
from collector.normalize import conventions
from collector.normalize.conventions import genai, mlflow, openinference
from collector.normalize.join import LlmCall
from collector.normalize.messages import ASSISTANT_ROLES, USER_ROLES, role_of, text_of
from collector.normalize.react import field_answer, field_request
from collector.normalize.run_records import answer_from_records, request_from_records
from collector.normalize.values import INVALID, first, parse_json, text

_MAX_FIELDS: Final = 64
# Where a run span records its input / output object (OpenInference, MLflow).
_RUN_INPUT_OBJECTS: Final = (openinference.INPUT_VALUE, mlflow.INPUTS)
_RUN_OUTPUT_OBJECTS: Final = (openinference.OUTPUT_VALUE, mlflow.OUTPUTS)
_QUOTES: Final = ('"""', "'''", '"', "'")  # a string literal in code the model wrote


def run_input(
    run_spans: Sequence[Span],
    llms: Sequence[LlmCall],
    path: Callable[[], Sequence[Span]] = tuple,
    request: str | None = None,
) -> str | None:
    """The user's request to the run (module docstring). ``path()``: the spans from the
    agent root up to the trace root, plumbing between them included (a task span);
    asked only when the model's text is all there is. ``request``: the first model
    call's request when no span recorded the call (a run read from its transcript)."""
    for span in run_spans:
        found = conventions.first_text(conventions.RUN_INPUT, span)
        if found:
            return openinference.without_chat_history(found)
    if not llms:
        for span in run_spans:
            found = conventions.first_text(conventions.RUN_INPUT_FALLBACK, span)
            if found:
                return found
        return None
    found = request or layers_text(conventions.LLM_INPUT, llms[0])
    if found is None:
        return request_from_records(run_spans, llms[0])
    fielded = field_request(found)  # (DSPy's adapter: the request is its first field)
    if fielded is not None:
        return fielded
    narrowed = _fields_inside(run_spans, _RUN_INPUT_OBJECTS, found)
    if narrowed:
        return narrowed[0]
    return _description_inside(path(), found) or found


def _description_inside(path: Sequence[Span], model_text: str) -> str | None:
    """The task request a run-path span records (CrewAI's task description, whatever
    instrumentation recorded the span), when the model's text holds it verbatim (the
    framework templated it into the prompt)."""
    for span in path:
        described = openinference.task_request(span)
        if described and described != model_text and described in model_text:
            return described
    return None


def run_output(
    run_spans: Sequence[Span], llms: Sequence[LlmCall], reply: str | None = None
) -> str | None:
    """The agent's final answer (module docstring); None when the last model call
    asked for tools (the run was cut short). ``reply``: the last model call's reply when
    no span recorded the call (a run read from its transcript)."""
    for span in run_spans:
        found = conventions.first_text(conventions.RUN_OUTPUT, span)
        if found and not _echoes_request(span, found, llms):
            return _as_the_model_wrote(found, llms)
    if reply is not None:  # (a transcript's reply: the run spans' own record comes first)
        for span in run_spans:
            found = conventions.first_text(conventions.RUN_OUTPUT_FALLBACK, span)
            if found:
                return found
    if llms:
        found = reply or layers_text(conventions.LLM_OUTPUT, llms[-1])
        if found is None:
            return answer_from_records(run_spans, llms[-1])
        fielded = field_answer(found)  # (DSPy's adapter: the answer is the last field)
        if fielded is not None:
            return fielded
        narrowed = _fields_inside(run_spans, _RUN_OUTPUT_OBJECTS, found)
        if narrowed:
            return narrowed[-1]
        return _answer_inside(run_spans, found) or found
    for span in run_spans:
        found = conventions.first_text(conventions.RUN_OUTPUT_FALLBACK, span)
        if found:
            return found
    return None


def _echoes_request(span: Span, found: str, llms: Sequence[LlmCall]) -> bool:
    """Whether the "answer" a run span records is its own request, written from the
    requester's side: AG2's initiating agent records the chat as it sees it, its request
    as ``assistant`` and the other agent's answer as ``user`` after it, so its last
    ``assistant`` text is the question. Only that shape counts (a run whose answer
    legitimately equals its input, a proofreader's, keeps it), and only with model calls
    made (their last reply is the answer then)."""
    if not llms:
        return False
    request = conventions.first_text(conventions.RUN_INPUT, span)
    if request is None or request.strip() != found.strip():
        return False
    messages = parse_json(text(span.attributes.get(genai.OUTPUT_MESSAGES)) or "")
    if not isinstance(messages, list):
        return False
    roles = [role_of(item) for item in messages[:_MAX_SIDE_MESSAGES]]
    for at, item in enumerate(messages[: len(roles)]):  # the request, as the requester's
        if roles[at] in ASSISTANT_ROLES and (text_of(item) or "").strip() == found.strip():
            return any(role in USER_ROLES for role in roles[at + 1 :])  # an answer after it
    return False


_MAX_SIDE_MESSAGES: Final = 256


def _answer_inside(run_spans: Sequence[Span], reply: str) -> str | None:
    """The plain text a run span records as its output (``output.value``), when the
    model's last reply holds it as a quoted literal and is more than it: the model wrote
    its answer inside text of its own format (reasoning, then code that hands the answer
    back, ``final_answer("...")``), and the framework returned that part. The plain-text
    counterpart of an object field found in the reply (``_fields_inside``); a recorded
    object (a whole graph state) is not parsed for it, and a text the reply merely
    contains ("Done", a number) is not the answer."""
    for span in run_spans:
        found = text(span.attributes.get(openinference.OUTPUT_VALUE))
        if not found or found.lstrip()[:1] in ("{", "["):
            continue
        answer = found.strip()
        if not answer or answer == reply.strip():
            continue
        for quote in _QUOTES:
            if quote + answer + quote in reply:
                return answer
    return None


def _as_the_model_wrote(found: str, llms: Sequence[LlmCall]) -> str:
    """``found`` (a run span's answer), or the last model reply when the two differ only
    by whitespace around them: a framework that prints its result object adds a newline
    (Strands' ``str(AgentResult)``), which is not part of the answer."""
    if not llms or not (found[:1].isspace() or found[-1:].isspace()):
        return found
    reply = layers_text(conventions.LLM_OUTPUT, llms[-1])
    return reply if reply is not None and reply.strip() == found.strip() else found


def recorded_outputs(run_spans: Sequence[Span], output: str | None) -> list[str]:
    """Every text the run spans record as the run's output, ``output`` first: evidence
    for ``step_list.answer_tool`` (a run span's ``output.value`` is not the answer when
    model calls give one, but it is what the framework handed back)."""
    found = [output] if output else []
    for span in run_spans:
        text = conventions.first_text(conventions.RUN_OUTPUT_FALLBACK, span)
        if text:
            found.append(text)
    return found


def llm_texts(llms: Sequence[LlmCall]) -> Callable[[str], tuple[str | None, str | None]]:
    """A model step's request text and reply text by its span id, as the run's input and
    answer are read from a model call (``run_input``, ``run_output``); ``(None, None)``
    for a span that is no model call of ``llms``."""
    by_span = {llm.step.span_id: llm for llm in llms}

    def texts(span_id: str) -> tuple[str | None, str | None]:
        llm = by_span.get(span_id)
        if llm is None:
            return None, None
        return layers_text(conventions.LLM_INPUT, llm), layers_text(conventions.LLM_OUTPUT, llm)

    return texts


def layers_text(readers: tuple[conventions.TextReader, ...], llm: LlmCall) -> str | None:
    """The first layer's text (outermost first); for the reply, a layer that recorded the
    exchange (the request's messages as well) is asked before one that recorded a reply
    alone: a wrapper that records no request may write a summary of the framework's
    return value (a key of it) as the "completion", and the layer that recorded the
    request is the one that saw the provider's answer."""
    spans = llm.spans
    if readers is conventions.LLM_OUTPUT and len(spans) > 1:
        complete = [s for s in spans if conventions.first_text(conventions.LLM_INPUT, s)]
        spans = complete + [s for s in spans if s not in complete]
    for span in spans:
        found = conventions.first_text(readers, span)
        if found:
            return found
    return None


def _fields_inside(run_spans: Sequence[Span], keys: tuple[str, ...], model_text: str) -> list[str]:
    """String fields of a run span's object-valued ``keys`` found inside ``model_text``."""
    for span in run_spans:
        raw = text(first(span.attributes, keys))
        if raw is None or raw[:1] != "{":
            continue
        fields = _string_fields(parse_json(raw))
        hits = [value for value in fields if value != model_text and value in model_text]
        if hits:
            return hits
    return []


def _string_fields(value: Any) -> list[str]:
    """The top-level string fields of an object, looking through one-key envelopes
    (``{"input_args": {...}}``)."""
    for _ in range(4):
        if isinstance(value, dict) and len(value) == 1:
            inner = next(iter(value.values()))
            if isinstance(inner, dict):
                value = inner
                continue
        break
    if value is INVALID or not isinstance(value, dict):
        return []
    return [item for item in list(value.values())[:_MAX_FIELDS] if isinstance(item, str) and item]
