"""Tool-argument matching: how the arguments of one call compare with a reference's.

The comparison is configured by an ``ArgsMatch`` (a spec's ``args:`` mapping)::

    args:
      mode: superset              # exact | ignore | subset | superset
      ignore_keys: [request_id]   # never compared
      keys:                       # how some keys' values compare
        reason: {regex: "(?i)duplicate"}
        amount: {tolerance: 0.01}
      tolerance: 0.0              # numbers anywhere (absolute); rel_tolerance too
      unspecified: any            # a reference call without args: any | empty
      tools:                      # per-tool overrides of the fields above
        refund: {mode: exact}
        lookup_track: ignore      # a mode alone
        lookup_invoice: [invoice_id]   # these keys only (langchain agentevals' form)

Modes use langchain agentevals' names, from the called tool's point of view:

- ``exact``: the same keys, every value matching;
- ``superset``: every reference key present and matching; extra keys allowed;
- ``subset``: every key the call passed is in the reference and matches;
  reference keys the call left out are allowed;
- ``ignore``: arguments are not compared.

Which keys are compared is the mode's business; a key rule only says how one
compared value is judged (a regex on the call's value, or a numeric
tolerance). ``ArgScore`` counts matching keys over compared keys: the per-call
partial credit; a call *matches* when every compared key does.

``ArgComparator`` is the per-call predicate the matching algorithms of
``evaluators.matching`` take (a ``CallMatcher``), so every trajectory evaluator
gets the whole catalogue by accepting an ``ArgsSetting``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
)

from evaluators.matching import ArgsMode, CallMatcher, call_matcher, same_call
from evaluators.reference import ExpectedStep
from evaluators.selectors import compile_regex
from evaluators.trajectory import Step

ArgCompare = Literal["exact", "ignore", "subset", "superset"]
"""Which keys are compared (see the module doc)."""

NOT_A_MAPPING = "<args>"
"""The key reported when the call's arguments are not a mapping (e.g. raw text)."""


class KeyRule(BaseModel):
    """How the value of one argument is judged, instead of plain equality.

    ``regex``: the call's value (JSON text unless it is a string) contains a
    match (``re.search``; anchor with ``^…$``); the reference value is then not
    used. ``tolerance`` / ``rel_tolerance``: numbers are equal within these
    (``math.isclose``), at any depth of lists and mappings.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    regex: re.Pattern[str] | None = None
    tolerance: float | None = Field(default=None, ge=0)
    rel_tolerance: float | None = Field(default=None, ge=0)

    _compile = field_validator("regex", mode="before")(compile_regex)

    def accepts(self, expected: Any, actual: Any) -> bool:
        """Whether ``actual`` satisfies this rule for the reference value ``expected``."""
        if self.regex is not None:
            return (
                self.regex.search(actual if isinstance(actual, str) else _text(actual)) is not None
            )
        return values_equal(expected, actual, self.tolerance or 0.0, self.rel_tolerance or 0.0)


def _text(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def values_equal(expected: Any, actual: Any, tolerance: float = 0.0, rel: float = 0.0) -> bool:
    """Deep equality; numbers within ``tolerance`` (absolute) or ``rel`` (relative).

    Booleans are not numbers here: ``true`` never equals ``1``.
    """
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    if _is_number(expected) and _is_number(actual):
        return math.isclose(expected, actual, rel_tol=rel, abs_tol=tolerance)
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        return expected.keys() == actual.keys() and all(
            values_equal(value, actual[key], tolerance, rel) for key, value in expected.items()
        )
    if isinstance(expected, list | tuple) and isinstance(actual, list | tuple):
        return len(expected) == len(actual) and all(
            values_equal(e, a, tolerance, rel) for e, a in zip(expected, actual, strict=True)
        )
    return bool(expected == actual)


def _override_shorthand(value: Any) -> Any:
    """``refund: ignore`` → ``{mode: ignore}``; ``refund: [a, b]`` → ``{only_keys: [a, b]}``."""
    if isinstance(value, str):
        return {"mode": value}
    if isinstance(value, list):
        return {"only_keys": value}
    return value


class ArgRules(BaseModel):
    """The rules for one tool's arguments (the defaults, or a per-tool override)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: ArgCompare = "exact"
    ignore_keys: frozenset[str] = frozenset()
    only_keys: frozenset[str] | None = None
    keys: dict[str, KeyRule] = Field(default_factory=dict)
    tolerance: float | None = Field(default=None, ge=0)
    rel_tolerance: float | None = Field(default=None, ge=0)

    def rule_for(self, key: str) -> KeyRule:
        """The key's own rule, else equality within the rules' numeric tolerances."""
        return self.keys.get(key) or KeyRule(
            tolerance=self.tolerance, rel_tolerance=self.rel_tolerance
        )

    def visible(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """The arguments this rule compares at all (``only_keys``, minus ``ignore_keys``)."""
        return {
            key: value
            for key, value in args.items()
            if key not in self.ignore_keys and (self.only_keys is None or key in self.only_keys)
        }


ToolRules = Annotated[ArgRules, BeforeValidator(_override_shorthand)]


class ArgsMatch(ArgRules):
    """The ``args:`` mapping of a trajectory evaluator's config (see the module doc).

    ``unspecified``: what a reference call *without* ``args`` matches — ``any``
    arguments, or only ``empty`` ones (it stands for ``{}``, compared by mode).
    ``tools``: per-tool overrides; a field an override sets replaces the default.
    """

    unspecified: Literal["any", "empty"] = "any"
    tools: dict[str, ToolRules] = Field(default_factory=dict)

    def defaults(self) -> ArgRules:
        """The rules of a tool without an override."""
        return ArgRules.model_validate({f: getattr(self, f) for f in ArgRules.model_fields})

    def rules_for(self, tool: str) -> ArgRules:
        """The defaults, with ``tool``'s override applied."""
        defaults = self.defaults()
        override = self.tools.get(tool)
        if override is None:
            return defaults
        return defaults.model_copy(
            update={f: getattr(override, f) for f in override.model_fields_set}
        )


class ArgScore(NamedTuple):
    """How one call's arguments compared: ``matched`` of ``compared`` keys."""

    matched: int
    compared: int
    mismatched: tuple[str, ...] = ()  # missing, unexpected or different keys

    @property
    def score(self) -> float:
        """The share of compared keys that match; 1.0 when nothing was compared."""
        return self.matched / self.compared if self.compared else 1.0

    @property
    def ok(self) -> bool:
        """Strict verdict: every compared key matches."""
        return self.matched == self.compared


def _compared_keys(expected: dict[str, Any], actual: dict[str, Any], mode: ArgCompare) -> list[str]:
    if mode == "superset":
        return list(expected)
    if mode == "subset":
        return list(actual)
    return [*expected, *(key for key in actual if key not in expected)]


def compare_args(expected: Mapping[str, Any], actual: Any, rules: ArgRules) -> ArgScore:
    """Compare a call's ``actual`` arguments with the reference's ``expected`` ones."""
    if rules.mode == "ignore":
        return ArgScore(0, 0)
    wanted = rules.visible(expected)
    if actual is not None and not isinstance(actual, Mapping):
        return ArgScore(0, max(1, len(wanted)), (NOT_A_MAPPING,))
    given = rules.visible(actual or {})
    keys = _compared_keys(wanted, given, rules.mode)
    bad = tuple(
        key
        for key in keys
        if not (
            key in wanted and key in given and rules.rule_for(key).accepts(wanted[key], given[key])
        )
    )
    return ArgScore(len(keys) - len(bad), len(keys), bad)


class ArgComparator:
    """Scores and matches calls against reference items under one ``ArgsMatch``.

    ``matches`` is a ``CallMatcher``: same name and kind (``same_call``) and a
    strict argument match. Rules are resolved at construction and never change,
    so one comparator serves many threads.
    """

    def __init__(self, config: ArgsMatch) -> None:
        self.config = config
        self._default = config.defaults()
        self._tools = {tool: config.rules_for(tool) for tool in config.tools}

    def rules_for(self, tool: str) -> ArgRules:
        """``config.rules_for(tool)``, resolved in advance."""
        return self._tools.get(tool, self._default)

    def score(self, expected: ExpectedStep, step: Step) -> ArgScore:
        """The arguments of ``step`` against ``expected`` (names are not checked here)."""
        if expected.args is None and self.config.unspecified == "any":
            return ArgScore(0, 0)
        return compare_args(expected.args or {}, step.args, self.rules_for(expected.name))

    def matches(self, expected: ExpectedStep, step: Step) -> bool:
        """Same call, and every compared argument matches."""
        return same_call(expected, step) and self.score(expected, step).ok


def _known_shorthand(value: Any) -> Any:
    if isinstance(value, str) and value not in ("auto", "exact", "ignore"):
        raise ValueError(
            f"Input should be 'auto', 'exact' or 'ignore' (a shorthand), or a mapping: "
            f"for {value!r} write {{mode: {value}}}"
        )
    return value


def _form(value: Any) -> str:
    return "shorthand" if isinstance(value, str) else "mapping"


ArgsSetting = Annotated[
    Annotated[ArgsMode, Tag("shorthand")] | Annotated[ArgsMatch, Tag("mapping")],
    Discriminator(
        _form,
        custom_error_type="args_setting",
        custom_error_message="expected a shorthand (auto, exact, ignore) or a mapping",
    ),
    BeforeValidator(_known_shorthand),
]
"""A trajectory evaluator's ``args`` config: a shorthand or an ``ArgsMatch``.

Discriminated by form, so a bad mapping reports only the mapping's errors
(under ``args.mapping``), not also "not a shorthand".

The shorthands keep their original meaning: ``auto`` (compare where the
reference gives args) is ``{mode: exact}``; ``ignore`` is ``{mode: ignore}``;
``exact`` is ``{mode: exact, unspecified: empty}`` except that a reference
without args does not match a call whose args are ``{}``.
"""


def matcher_for(setting: ArgsMode | ArgsMatch) -> CallMatcher:
    """The ``CallMatcher`` of an ``ArgsSetting``."""
    if isinstance(setting, ArgsMatch):
        return ArgComparator(setting).matches
    return call_matcher(setting)


def comparator_for(setting: ArgsMode | ArgsMatch) -> ArgComparator:
    """An ``ArgComparator`` for any setting, shorthands included (for partial credit)."""
    if isinstance(setting, ArgsMatch):
        return ArgComparator(setting)
    if setting == "ignore":
        return ArgComparator(ArgsMatch(mode="ignore"))
    unspecified: Literal["any", "empty"] = "empty" if setting == "exact" else "any"
    return ArgComparator(ArgsMatch(unspecified=unspecified))
