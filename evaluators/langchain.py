"""Run an existing LangChain ``AgentTrajectoryEvaluator`` subclass on evald trajectories.

A spec references the LangChain class with the ``langchain:`` prefix, by module
or by file (relative to the spec)::

    evaluators:
      - {name: "langchain:my_pkg.evals:StepNecessityEvaluator", id: step_necessity_lc,
         config: {init: {}, higher_is_better: false}, sample_rate: 0.1}
      - "langchain:file://lc_evals.py:StepNecessityEvaluator"

The registry wraps the class in an ``Evaluator`` (``adapt``) whose ``evaluate``
calls the class's own ``evaluate_agent_trajectory`` — the class runs unchanged:

- ``agent_trajectory``: each executed step of the configured kinds (default
  tools; a spec's ``step_kinds`` applies) as ``(AgentAction(tool, tool_input,
  log), observation)``, the observation being the result as text, or
  ``Error: …`` for a failed call;
- ``prediction``: the final output (``""`` if none); ``input``: the user input;
- ``reference``: the criteria's ``response`` (from the spec's ``reference.response``
  or a dataset item), passed only when the class ``requires_reference``.

Its ``{score, value, reasoning}`` becomes a ``NumericResult`` (a bool score: a
``BooleanResult``) with ``reasoning`` as the explanation and ``value`` in the
details. The class is built once per spec entry with ``config.init`` as keyword
arguments. Calls are synchronous, in the evaluation thread: sample LLM-backed
classes (``sample_rate``), or port them to evald's judges, which never block.

Needs ``langchain-classic`` (or ``langchain`` < 1.0, where the class lived in
``langchain.evaluation``); without it a ``langchain:`` reference is a load error.
"""

from __future__ import annotations

import importlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from pydantic import Field

from evaluators.base import Criteria, Evaluator, EvaluatorConfig
from evaluators.registry import EvaluatorLoadError
from evaluators.results import BooleanResult, ErrorResult, EvaluationResult, NumericResult
from evaluators.trajectory import Step, StepKind, Trajectory

_BASES = (
    "langchain_classic.evaluation.schema",  # langchain >= 1.0 moved it here
    "langchain.evaluation.schema",
)
_SCALARS = (str, int, float, bool, type(None))


class LangChainCriteria(Criteria):
    """Per case: the reference answer handed to the class as ``reference``."""

    response: str | None = None


class LangChainConfig(EvaluatorConfig):
    """``init``: constructor keyword arguments; ``higher_is_better``: the score's direction
    (seed 000's step-necessity evaluator scores 1 for "a step was unnecessary")."""

    init: dict[str, Any] = Field(default_factory=dict)
    step_kinds: tuple[StepKind, ...] = Field(default=(StepKind.TOOL,), min_length=1)
    higher_is_better: bool = True


class LangChainTrajectoryEvaluator(Evaluator[LangChainCriteria, LangChainConfig]):
    """Base of the classes ``adapt`` makes; ``wrapped`` is the LangChain class."""

    wrapped: ClassVar[type[Any]]

    def __init__(self, config: LangChainConfig) -> None:
        super().__init__(config)
        self.langchain = type(self).wrapped(**config.init)

    def evaluate(self, trajectory: Trajectory, criteria: LangChainCriteria) -> EvaluationResult:
        """Call the LangChain class; its dict becomes a result (see the module doc)."""
        lc = self.langchain
        name = type(lc).__name__
        if lc.requires_input and trajectory.input is None:
            return ErrorResult(error=f"{name} requires an input and the trace has none")
        if lc.requires_reference and criteria.response is None:
            return ErrorResult(error=f"{name} requires a reference: set reference.response")
        output = lc.evaluate_agent_trajectory(
            prediction=trajectory.output or "",
            agent_trajectory=agent_trajectory(trajectory, self.config.step_kinds),
            input=trajectory.input if lc.requires_input else None,
            reference=criteria.response if lc.requires_reference else None,
        )
        return to_result(output, name)

    def passed(self, score: float, threshold: float) -> bool:
        """Per ``config.higher_is_better`` rather than the class attribute."""
        return score >= threshold if self.config.higher_is_better else score <= threshold


def adapt(target: object, reference: str) -> type[LangChainTrajectoryEvaluator]:
    """An evald evaluator class running ``target``; raises ``EvaluatorLoadError``."""
    bases = _agent_trajectory_bases(reference)
    if not (isinstance(target, type) and issubclass(target, bases)):
        raise EvaluatorLoadError(
            reference, f"{target!r} is not a subclass of LangChain's AgentTrajectoryEvaluator"
        )
    doc = (target.__doc__ or "").strip().splitlines()
    namespace = {
        "id": _snake_case(target.__name__),
        "wrapped": target,
        "description": doc[0] if doc else f"LangChain {target.__name__}",
        "__module__": __name__,
        "__qualname__": f"LangChain[{target.__qualname__}]",
    }
    return type(f"LangChain{target.__name__}", (LangChainTrajectoryEvaluator,), namespace)


def agent_trajectory(trajectory: Trajectory, kinds: Sequence[StepKind]) -> list[tuple[Any, str]]:
    """The executed steps of ``kinds`` as LangChain ``(AgentAction, observation)`` pairs."""
    from langchain_core.agents import AgentAction  # noqa: PLC0415 - optional dependency

    pairs: list[tuple[Any, str]] = []
    for step in trajectory.steps_of(kinds):
        if step.executed:
            tool_input = _tool_input(step)
            log = f"Invoking: `{step.name}` with `{tool_input}`"
            pairs.append((AgentAction(tool=step.name, tool_input=tool_input, log=log), _text(step)))
    return pairs


def to_result(output: object, name: str = "the LangChain evaluator") -> EvaluationResult:
    """``{score, value, reasoning}`` → a result; raises ``TypeError`` for a non-mapping."""
    if not isinstance(output, Mapping):
        raise TypeError(f"{name} returned {type(output).__name__}, expected a dict with a score")
    score, reasoning = output.get("score"), output.get("reasoning")
    explanation = None if reasoning is None else str(reasoning)
    details = {str(k): _jsonable(v) for k, v in output.items() if k not in ("score", "reasoning")}
    value = output.get("value")
    if isinstance(score, bool) or (score is None and isinstance(value, bool)):
        verdict = score if isinstance(score, bool) else bool(value)
        return BooleanResult(value=verdict, explanation=explanation, details=details or None)
    if isinstance(score, int | float) and math.isfinite(score):
        return NumericResult(score=float(score), explanation=explanation, details=details or None)
    return ErrorResult(
        error=f"{name} returned no numeric score (score={score!r})",
        explanation=explanation,
        details=details or None,
    )


def _agent_trajectory_bases(reference: str) -> tuple[type, ...]:
    bases = []
    for module_name in _BASES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        bases.append(module.AgentTrajectoryEvaluator)
    if not bases:
        raise EvaluatorLoadError(
            reference, "langchain is not installed: pip install langchain-classic"
        )
    return tuple(bases)


def _tool_input(step: Step) -> str | dict[str, Any]:
    if isinstance(step.args, dict):
        return step.args
    if isinstance(step.args, str):
        return step.args
    return {} if step.args is None else json.dumps(step.args, default=str, ensure_ascii=False)


def _text(step: Step) -> str:
    if step.error is not None:
        return f"Error: {step.error}"
    if isinstance(step.result, str):
        return step.result
    if step.result is None:
        return ""
    return json.dumps(step.result, default=str, ensure_ascii=False)


def _jsonable(value: Any) -> Any:
    return value if isinstance(value, _SCALARS) else repr(value)


def _snake_case(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()
