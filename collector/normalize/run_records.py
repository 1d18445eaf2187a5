"""The run's request and answer from log records, when nothing else states them.

Instrumentations that log content rather than put it on spans (Claude Code's
telemetry) may record the turn's request and answer only as records of the turn, under
their own keys. Two readings hold whatever the keys are called; both run only when the
run spans and the model calls gave no text, and read only the records joined to the run
spans (and, for the answer, to the last model call's spans):

* **A reply tied to its call** (``answer_from_records``): a record holding the last
  model call's response id (``gen_ai.response.id``) and its model's name verbatim (a
  record about that call, not an application's log line that mentions the id), with
  exactly one free text (a value with whitespace in it: ids, names, times and counts
  have none), holds that call's reply, which is the run's answer.
* **A request told twice** (``request_from_records``): a free text that the trace's
  root span, when it is a run span, records as an attribute (root spans are decoded
  whole, so any key; not the agent's instructions or description) and that a record of
  the run, made before its first model call started and sharing an id with the root
  (its session, its user: an application's log line repeating the instructions is no
  record of the run), repeats verbatim is the run's request; with two such texts, none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from collector.core.records import AttrValue, Span
from collector.normalize.conventions import genai
from collector.normalize.event_text import log_records
from collector.normalize.join import LlmCall
from collector.normalize.values import first, text

_MODEL_KEYS: Final = (genai.RESPONSE_MODEL, genai.REQUEST_MODEL)
# The GenAI keys of an agent's own text, which a log line may repeat: never the request.
_AGENTS_OWN_TEXT: Final = frozenset({"gen_ai.system_instructions", "gen_ai.agent.description"})
_MIN_ID: Final = 8  # characters of an id a record shares with the run (a session, a user)


def answer_from_records(run_spans: Sequence[Span], last: LlmCall) -> str | None:
    """The reply of the ``last`` model call, as a record tied to it holds it."""
    response_ids = {text(span.attributes.get(genai.RESPONSE_ID)) for span in last.spans}
    models = {text(first(span.attributes, _MODEL_KEYS)) for span in last.spans}
    response_ids.discard(None)
    models.discard(None)
    if not response_ids or not models:
        return None
    found: set[str] = set()
    for event in log_records([*last.spans, *run_spans]):
        values = [value for value in event.attributes.values() if isinstance(value, str)]
        if any(v in response_ids for v in values) and any(v in models for v in values):
            texts = _free_texts(event.attributes)
            if len(texts) == 1:
                found.update(texts)
    return found.pop() if len(found) == 1 else None


def request_from_records(run_spans: Sequence[Span], first: LlmCall) -> str | None:
    """The request a run span records and an early record of the run repeats."""
    roots = [span for span in run_spans if span.is_root]  # (decoded whole: any key)
    ids = {value for span in roots for value in span.attributes.values() if _an_id(value)}
    before = first.span.start_unix_nano
    told: set[str] = set()
    for event in log_records(run_spans):
        values = event.attributes.values()
        if event.time_unix_nano <= before and any(v in ids for v in values if _an_id(v)):
            told.update(_free_texts(event.attributes))
    if not told:
        return None
    found = {
        value
        for span in roots
        for key, value in span.attributes.items()
        if key not in _AGENTS_OWN_TEXT and isinstance(value, str) and value in told
    }
    return found.pop() if len(found) == 1 else None


def _an_id(value: object) -> bool:
    """A value that can identify a run: text of ``_MIN_ID`` characters or more, no space."""
    return isinstance(value, str) and len(value) >= _MIN_ID and not any(c.isspace() for c in value)


def _free_texts(attributes: Mapping[str, AttrValue]) -> set[str]:
    """The attribute values that are free text: non-empty strings with whitespace inside."""
    return {
        value
        for value in attributes.values()
        if isinstance(value, str) and (" " in value.strip() or "\n" in value.strip())
    }
