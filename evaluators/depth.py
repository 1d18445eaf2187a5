"""How much of a trajectory its readers need built (ADR 0019).

Always built, whoever reads: steps with their kinds, names, errors, timings, agents,
tokens and whether they ran; input, output, session id, gaps, attributes. Tool
arguments and results are parsed on first read (``evaluators.lazy``): nothing to
declare for them. What is left is work the normalizer can only do up front, and
only does for a trace when one of its readers declares it needs it:

- ``CALL_IDS``: the call ids of tool spans that record none, recovered from a later
  model call's input history (the history is parsed to find them).

An evaluator declares what it reads in ``Evaluator.reads``; ``None`` (the default of
a plug-in) means everything. evald's own evaluators (built-ins, judges, the
LangChain adapter) read none of these parts. A sink declares ``ResultSink.reads``.
"""

from __future__ import annotations

from typing import Final

CALL_IDS: Final = "call_ids"
EVERYTHING: Final = frozenset({CALL_IDS})
NOTHING: Final[frozenset[str]] = frozenset()

_OWN_MODULES = ("evaluators.builtin.", "evaluators.judges.", "evaluators.langchain")


def parts_read(evaluator: object) -> frozenset[str]:
    """The optional parts ``evaluator`` reads: its ``reads``; unset, none for one of
    evald's own evaluators and everything for a plug-in."""
    declared = getattr(evaluator, "reads", None)
    if isinstance(declared, frozenset):
        return declared
    if type(evaluator).__module__.startswith(_OWN_MODULES):
        return NOTHING
    return EVERYTHING
