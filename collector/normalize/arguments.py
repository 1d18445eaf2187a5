"""Tool-call arguments recovered into a JSON object from what instrumentations record.

Observed shapes (CONVENTIONS §6.2): a JSON object string (most); a kvlist (allowed
by OTLP); the bare value of a single-parameter LangChain tool (OpenInference:
``"Comfortably Numb"``); a Python ``repr`` (``"{'track_name': 'Money'}"``); and
the Traceloop LangChain wrapper ``{"input_str", "inputs", "kwargs": {"tool_call_id"}}``;
and call envelopes, where a Python instrumentation records how the tool function was
called rather than what it was given: ``{"args": [], "kwargs": {...}}``,
``{"kwargs": {...}}`` (DSPy), ``{"input": {...}}``, each possibly with bookkeeping keys
beside it (``config``, ``callbacks``, ``run_manager`` …). An explicit empty ``args``
list beside ``kwargs`` marks a recorded Python call: scalar flags beside them are the
recorder's options (smolagents: ``sanitize_inputs_outputs``), whatever their names.
The step's arguments are the call's; the recorded text stays in ``raw``, and
``envelope`` keeps the outer object so that a tool whose real parameter is named
``input`` is not unwrapped when the model's request says so (``steps.tool_step``).
Evidence beats the key lists both ways: when the model's request for the call is
known and equals an envelope member, that member is the arguments (``chosen``).

Most recorded arguments are a plain JSON object, and most evaluators never read
them: ``can_defer`` tells, without parsing, when nothing but the value depends on
the text, and ``steps.load_arguments`` parses it when ``Step.args`` is first read
(``evaluators.lazy``, ADR 0019).
"""

from __future__ import annotations

from typing import Any, Final, NamedTuple

from collector.core.records import AttrValue
from collector.normalize.values import INVALID, json_ready, parse_json, python_literal

_WRAPPER_KEYS: Final = frozenset({"input_str", "inputs", "kwargs", "tags", "metadata"})
# Keys frameworks pass beside a tool's own arguments: never the tool's parameters.
# A call's options, recorded unset beside its input (BeeAI: ``run(input, options=None)``).
_OPTION_KEYS: Final = frozenset({"options", "config", "configuration", "settings"})
_BOOKKEEPING_KEYS: Final = frozenset(
    {"config", "callbacks", "run_manager", "tags", "metadata", "run_id", "tool_call_id"}
)
_ENVELOPE_KEYS: Final = ("kwargs", "input")


class Arguments(NamedTuple):
    """Arguments as recovered from one tool span."""

    value: Any  # a dict when an object was recovered; else the bare value (or None)
    raw: str | None  # the text the instrumentation recorded (None for kvlist / absent)
    call_id: str | None = None  # Traceloop wrapper ``kwargs.tool_call_id``
    bare: bool = False  # ``value`` is a lone value that belongs to the tool's single parameter
    envelope: Any = None  # the call envelope ``value`` was taken out of, if any
    positional: tuple[Any, ...] = ()  # a recorded call's positional values (``value`` stays whole)
    keywords: Any = None  # that call's keyword arguments (an object)


NO_ARGUMENTS: Final = Arguments(None, None)


def parse_arguments(value: AttrValue) -> Arguments:
    """Recover the arguments recorded in one attribute value (see the module docstring)."""
    if value is None:
        return NO_ARGUMENTS
    if isinstance(value, dict):
        return _from_object(json_ready(value), None)
    if not isinstance(value, str):
        return Arguments(json_ready(value), None, bare=True)
    parsed = parse_json(value)
    if isinstance(parsed, dict):
        return _from_object(parsed, value)
    if parsed is not INVALID:
        return Arguments(parsed, value, bare=True)
    recovered = python_literal(value)
    if isinstance(recovered, dict):
        return Arguments(recovered, value)
    return Arguments(value if recovered is INVALID else recovered, value, bare=True)


def can_defer(raw: str) -> bool:
    """True when ``parse_arguments(raw)`` need not run before the value is read, for a
    tool span that records its own call id (so that the arguments' is never asked):
    the text opens an object and names no ``input…`` key (a Traceloop wrapper can make
    the value None, which would change ``raw_args``; no ``\\u`` escape can hide the
    key). Such text gives an object, maybe out of a ``kwargs`` envelope, or (not JSON
    after all: a truncated value) a Python literal or a bare value, which
    ``steps.load_arguments`` finishes as ``steps.tool_step`` would."""
    return (
        raw[:1] == "{"
        and '"input' not in raw
        and ("\\" not in raw or "\\u" not in raw)  # (one character first: fast)
    )


def bind(arguments: Arguments, parameter: str | None) -> Any:
    """The arguments as an object: a bare value is bound to ``parameter`` when it is known."""
    if arguments.bare and parameter is not None:
        return {parameter: arguments.value}
    return arguments.value


def chosen(arguments: Arguments, requested: Any) -> Any:
    """The step's arguments out of what the span recorded (not bare), given what the
    model requested for the call (None when unknown): an envelope the request names
    whole is no envelope (a real parameter named ``input``); an envelope member equal
    to the request is the arguments, whatever bookkeeping keys stand beside it."""
    if arguments.envelope is not None:
        return arguments.envelope if requested == arguments.envelope else arguments.value
    value = arguments.value
    if isinstance(value, dict) and isinstance(requested, dict) and value != requested:
        for key in _ENVELOPE_KEYS:
            if key in value and value[key] == requested:
                return value[key]
    return value


def _from_object(obj: dict[str, Any], raw: str | None) -> Arguments:
    if not _is_traceloop_wrapper(obj):
        unwrapped = _enveloped(obj)
        if unwrapped is None:
            call = _positional_call(obj)
            if call is not None:
                return Arguments(obj, raw, positional=call[0], keywords=call[1])
            return Arguments(obj, raw)
        own_id = obj.get("tool_call_id")
        own_id = own_id if isinstance(own_id, str) and own_id else None
        return Arguments(unwrapped, raw, own_id, envelope=obj)
    kwargs = obj.get("kwargs")
    call_id = kwargs.get("tool_call_id") if isinstance(kwargs, dict) else None
    call_id = call_id if isinstance(call_id, str) and call_id else None
    inputs = obj.get("inputs")
    if isinstance(inputs, dict) and inputs:
        return Arguments(inputs, raw, call_id)
    # No structured inputs: fall back to input_str, a Python repr of what the tool got.
    inner = parse_arguments(obj.get("input_str"))
    return Arguments(inner.value, raw, call_id, inner.bare)


def _is_traceloop_wrapper(obj: dict[str, Any]) -> bool:
    return ("inputs" in obj or "input_str" in obj) and obj.keys() <= _WRAPPER_KEYS


def _enveloped(obj: dict[str, Any]) -> dict[str, Any] | None:
    """The arguments inside a call envelope (see the module docstring), else None.

    One envelope key holding an object; ``args`` beside ``kwargs`` only when it is
    empty (positional arguments would be lost); anything else a bookkeeping key, or,
    beside an explicit ``"args": []``, a scalar flag.
    """
    for key in _ENVELOPE_KEYS:
        inner = obj.get(key)
        if not isinstance(inner, dict):
            continue
        positional = obj.get("args") if key == "kwargs" else None
        if positional:
            return None
        others = obj.keys() - {key, "args"} if key == "kwargs" else obj.keys() - {key}
        if others <= _BOOKKEEPING_KEYS:
            return inner
        if all(k in _BOOKKEEPING_KEYS or (k in _OPTION_KEYS and obj[k] is None) for k in others):
            return inner  # options recorded unset (``run(input, options=None)``): no arguments
        if key == "kwargs" and positional == [] and all(_is_flag(obj[k]) for k in others):
            return inner  # a recorded call (args, kwargs) and the recorder's own flags
    return None


def _positional_call(obj: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]] | None:
    """``(positional values, keyword arguments)`` of a recorded Python call that passed
    positional values (``{"args": [...], "kwargs": {...}}`` and the recorder's scalar
    flags), else None. Their parameter names are not recorded there: ``by_position``."""
    positional, keywords = obj.get("args"), obj.get("kwargs")
    if not isinstance(positional, list) or not positional or not isinstance(keywords, dict):
        return None
    if not all(_is_flag(obj[k]) for k in obj.keys() - {"args", "kwargs"}):
        return None
    return tuple(positional), keywords


def by_position(arguments: Arguments, names: list[str] | None) -> Any:
    """A recorded call's positional values bound to the tool's parameter names, in their
    declared order, with its keyword arguments; ``arguments.value`` (the call as
    recorded) when the names are not known or too few."""
    if not arguments.positional or names is None or len(names) < len(arguments.positional):
        return arguments.value
    bound = dict(zip(names, arguments.positional, strict=False))
    keywords = arguments.keywords if isinstance(arguments.keywords, dict) else {}
    if any(key in bound for key in keywords):
        return arguments.value  # a name given twice: not this signature
    return {**bound, **keywords}


def declared_members(value: Any, names: list[str] | None) -> dict[str, Any] | None:
    """The tool's own arguments out of a recorded Python call written flat: an empty
    ``args`` (no positional values; ``[]``, or ``{}`` where a recorder writes an empty
    tuple so) beside the keyword arguments and the recorder's scalar flags, with no
    ``kwargs`` (traceAI: ``{"args": {}, "invoice_id": 1042, "sanitize_inputs_outputs":
    true}``). Only the tool's declared parameter ``names`` tell its arguments from the
    flags, so None without them, and None unless every other member is ``args`` or a
    flag (rule 72)."""
    if not isinstance(value, dict) or names is None or "kwargs" in value:
        return None
    positional = value.get("args", _ABSENT)
    if positional is _ABSENT or "args" in names or positional not in ([], {}):
        return None
    declared = frozenset(names)
    found: dict[str, Any] = {}
    for key, member in value.items():
        if key in declared:
            found[key] = member
        elif key != "args" and not _is_flag(member):
            return None
    return found


_ABSENT: Final = object()


def _is_flag(value: Any) -> bool:
    return value is None or isinstance(value, bool | int | float | str)
