"""What a tool call records beside its span: a record naming its call id, a part of it.

Some instrumentations record a tool call in pieces (Claude Code's telemetry): the tool
span names the tool and its call id, its result is the text of a span event, its
arguments and failure are only in a log record of the turn that names the call id
(joined to the turn's span, not the tool's: ``collector.assembly.log_join``), and the
failure again on a child span that repeats the call id. None of it is keyed to a name:

* **A record naming one call is that call's** (``from_records``). A log record of the
  trace one of whose attribute values is, verbatim, the call id of exactly one tool
  span that recorded no arguments or no result, and that names the tool too (a value
  equal to its name, or inside an object describing the call beside another object:
  which tool, which server; a record with the id alone, such as a ``gen_ai.tool.message``
  event carrying the call's result, even one naming the tool inside it, is about no
  call): its lone JSON-object attribute (text or map) that does not name the tool is
  the call's arguments; ``success`` false beside an ``error`` text says the call failed
  with that text. A record naming two calls, two records giving different arguments,
  or two candidate objects: no arguments.
* **A lone text in the span's own events is its result** (``event_text.lone_text``),
  for a call recorded in pieces (a record gave its arguments or failure) that recorded
  no result:
  its own span events (not log records, not ``exception`` events) hold exactly one
  text value in all. A tool span's progress event is no result unless the call is
  shown to be recorded in pieces.
* **A child span repeating the call id is a layer of the call** (``from_layers``): for a
  call recorded in pieces (a record gave its arguments or failure), the last child by
  end time that is no call itself and records the same call id (in a call-id attribute:
  spans keep only the keys the normalizer reads) reports the call's failure when it has
  one (``error.type``, an error status); an earlier attempt that failed is no failure.

Cost on a trace whose tool spans record their arguments and results: one pass over
the tool drafts (no parsing); nothing else is read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final, TypeAlias

from collector.core.records import AttrValue, Span
from collector.normalize.arguments import parse_arguments
from collector.normalize.conventions import genai
from collector.normalize.errors import span_error
from collector.normalize.event_text import log_records, lone_text
from collector.normalize.tree import SpanTree
from collector.normalize.values import first, json_object, name_prefix, scalar_text, text

if TYPE_CHECKING:  # (``tools`` reads this module)
    from collector.normalize.tools import ToolDraft

SUCCESS_KEY: Final = "success"
ERROR_KEY: Final = "error"
_FALSE: Final = ("false", "False")  # (and False itself: not 0, which equals False)


def complete_calls(
    drafts: Mapping[int, ToolDraft], tree: SpanTree, call_id_keys: Sequence[str]
) -> None:
    """Fill what the tool drafts (span index → draft) lack from records and layers."""
    for i, draft in drafts.items():
        if draft.call_id is None and not draft.records_arguments:
            draft.call_id = _enclosing_call_id(tree, i, draft.name, call_id_keys)
    wanting: dict[str, int] = {}
    for i, draft in drafts.items():
        if draft.call_id and not (draft.records_arguments and draft.records_result):
            wanting[draft.call_id] = -1 if draft.call_id in wanting else i
    wanting = {call_id: i for call_id, i in wanting.items() if i >= 0}  # ids seen once
    if not wanting:
        return
    in_pieces = from_records(wanting, drafts, tree.spans)
    from_layers({call_id: wanting[call_id] for call_id in in_pieces}, drafts, tree, call_id_keys)


_MAX_UP: Final = 16  # ancestors asked for an enclosing call's id


def _enclosing_call_id(
    tree: SpanTree, i: int, name: str, call_id_keys: Sequence[str]
) -> str | None:
    """The call id an ancestor of tool span ``i`` records for the call it runs in (rule
    84): the executing side of a protocol records neither the model's call id nor the
    arguments (an MCP server's ``execute_tool lookup_invoice`` span), while the client
    side, around it in the same trace, recorded the call (``gen_ai.tool.call.id``) under
    the tool's name or a qualified one ending in it (``music_store_lookup_invoice``).
    The nearest ancestor recording an id decides: one naming a different tool is another
    call's (a tool that calls a tool), and gives none."""
    up = tree.parent[i]
    for _ in range(_MAX_UP):
        if up < 0:
            return None
        attributes = tree.spans[up].attributes
        found = first(attributes, call_id_keys)
        if isinstance(found, str) and found:
            named = attributes.get(genai.TOOL_NAME)
            if not isinstance(named, str):
                return found  # (the id alone: a span of the client's call plumbing)
            return found if named == name or _qualified(named, name) else None
        up = tree.parent[up]
    return None


def _qualified(named: str, name: str) -> bool:
    """Whether ``named`` is ``name`` behind a namespace of any separator."""
    namespace = name_prefix(named, name)
    return len(namespace) > 1 and not namespace[-1].isalnum()


def from_records(
    wanting: Mapping[str, int], drafts: Mapping[int, ToolDraft], spans: Sequence[Span]
) -> set[str]:
    """Arguments, failure and result of the calls a record names (module docstring);
    returns the ids of the calls shown to be recorded in pieces (a record gave their
    arguments or their failure)."""
    arguments, ambiguous, failures = _read_records(wanting, drafts, spans)
    in_pieces = set(failures)
    for call_id, values in arguments.items():
        if len(values) == 1 and call_id not in ambiguous:
            in_pieces.add(call_id)
            draft = drafts[wanting[call_id]]
            if not draft.records_arguments:
                draft.fill_arguments(parse_arguments(values[0]))
    for call_id in in_pieces:
        i = wanting[call_id]
        draft = drafts[i]
        if call_id in failures and draft.error is None:
            draft.error = failures[call_id]
        if not draft.records_result:  # (recorded in pieces: its events may hold it)
            result = lone_text(spans[i])
            if result is not None:
                draft.fill_result(result)
    return in_pieces


_Candidates: TypeAlias = dict[str, list[str | dict[str, AttrValue]]]


def _read_records(
    wanting: Mapping[str, int], drafts: Mapping[int, ToolDraft], spans: Sequence[Span]
) -> tuple[_Candidates, set[str], dict[str, str]]:
    """Per call id a record is about: its candidate arguments (a key for every such call
    id, even with none), the ids with an ambiguous record, and the failures recorded."""
    arguments: _Candidates = {}
    ambiguous: set[str] = set()
    failures: dict[str, str] = {}
    for event in log_records(spans):
        named = {v for v in event.attributes.values() if isinstance(v, str) and v in wanting}
        if len(named) != 1:
            continue
        call_id = named.pop()
        candidates = _about_call(event.attributes, call_id, drafts[wanting[call_id]].name)
        if candidates is None:  # the record does not name the tool: not about this call
            continue
        known = arguments.setdefault(call_id, [])
        if len(candidates) > 1:
            ambiguous.add(call_id)
        elif candidates and candidates[0] not in known:
            known.append(candidates[0])
        failure = _failure(event.attributes)
        if failure is not None:
            failures.setdefault(call_id, failure)
    return arguments, ambiguous, failures


def from_layers(
    wanting: Mapping[str, int],
    drafts: Mapping[int, ToolDraft],
    tree: SpanTree,
    call_id_keys: Sequence[str],
) -> None:
    """A failure reported by the last child span (no call itself) that repeats the call
    id, for calls recorded in pieces (an earlier attempt that failed is no failure when
    a later one did not)."""
    for call_id, i in wanting.items():
        draft = drafts[i]
        if draft.error is not None:
            continue
        layers = [
            tree.spans[child]
            for child in tree.children(i)
            if child not in drafts
            and scalar_text(first(tree.spans[child].attributes, call_id_keys)) == call_id
        ]
        if layers:
            last = max(layers, key=lambda span: span.end_unix_nano)
            draft.error = span_error(last)


def _about_call(
    attributes: Mapping[str, AttrValue], call_id: str, tool: str
) -> list[str | dict[str, AttrValue]] | None:
    """The record's JSON objects (text or map) that do not name the tool: the candidates
    for the call's arguments; None when the record does not name the tool at all (as a
    value, or inside an object describing the call beside another object: a record's
    only object that holds the name, such as a search result, describes nothing), so
    it is about no call of it."""
    found: list[str | dict[str, AttrValue]] = []
    names_tool, describing = False, 0
    for value in attributes.values():
        parsed = json_object(value) if value != call_id else None
        if parsed is None:
            names_tool = names_tool or value == tool
        elif tool in parsed.values():
            describing += 1
        elif isinstance(value, str | dict):  # (always: ``json_object`` read one of these)
            found.append(value)
    if names_tool or (describing and describing + len(found) > 1):
        return found
    return None


def _failure(attributes: Mapping[str, AttrValue]) -> str | None:
    """The error text of a record saying the call did not succeed."""
    success = attributes.get(SUCCESS_KEY)
    if success is not False and success not in _FALSE:
        return None
    return text(attributes.get(ERROR_KEY))
