"""The evaluator contract check: what ``evald evaluator check`` and authors' tests run.

``check_evaluator(cls)`` verifies that a class will load and behave:

- it passes the registry's validation (``Evaluator`` subclass, ``id``, criteria /
  config models consistent with its type parameters and ``evaluate``);
- its ``id`` has no blanks (ids become metric labels) and does not take the
  registered name of another evaluator;
- both models produce a JSON Schema, and the config validates (``config``, else
  defaults) and builds the evaluator;
- ``evaluate`` returns a ``NumericResult`` / ``BooleanResult`` / ``ErrorResult``
  (finite score, JSON-able details) for a sample trajectory, sync or async
  within ``timeout_s``; raising on an *empty* trajectory is only a warning (the
  runner turns it into an error result, but an ``ErrorResult`` reads better);
- it gives the same result on the sample whose arguments and results are lazily
  parsed (``sample_lazy``, as the normalizer builds them: ``evaluators.lazy``).

Criteria come from ``criteria``, else the model's defaults, else a sample built
from the field types; when none validates, ``evaluate`` is not run (a warning).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import json
import math
import re
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from evaluators.base import Criteria, Evaluator
from evaluators.registry import EvaluatorLoadError, default_registry, validate_evaluator_class
from evaluators.results import BooleanResult, ErrorResult, EvaluationResult, NumericResult
from evaluators.trajectory import StepKind, Trajectory

_ID = re.compile(r"^\S+$")
_SAMPLES: dict[type, Any] = {str: "example", int: 1, float: 1.0, bool: True}


@dataclass
class ContractReport:
    """What ``check_evaluator`` found; ``ok`` when there is no problem (warnings allowed)."""

    name: str
    id: str | None = None
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    criteria_schema: dict[str, Any] | None = None
    config_schema: dict[str, Any] | None = None
    results: dict[str, EvaluationResult] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems


class EvaluatorContractError(AssertionError):
    """Raised by ``check_evaluator`` on problems; ``report`` has the details."""

    def __init__(self, report: ContractReport) -> None:
        super().__init__(f"{report.name}: " + "; ".join(report.problems))
        self.report = report


def check_evaluator(
    cls: object,
    *,
    criteria: Criteria | dict[str, Any] | None = None,
    config: dict[str, Any] | None = None,
    trajectories: dict[str, Trajectory] | None = None,
    timeout_s: float = 10.0,
    raise_on_problems: bool = True,
) -> ContractReport:
    """Check ``cls`` (see the module doc); raise ``EvaluatorContractError`` on problems
    unless ``raise_on_problems`` is False. ``trajectories`` replace the samples."""
    report = ContractReport(getattr(cls, "__qualname__", repr(cls)))
    try:
        checked = validate_evaluator_class(cls, report.name)
    except EvaluatorLoadError as exc:
        report.problems.append(exc.problem)
    else:
        _check_class(checked, report)
        evaluator = _build(checked, config, report)
        sample = _criteria(checked, criteria, report)
        if evaluator is not None and sample is not None:
            for name, trajectory in (trajectories or sample_trajectories()).items():
                if name == LAZY_SAMPLE and "sample" not in report.results:
                    continue  # the plain sample's problem says it already
                _run(evaluator, trajectory, sample, name=name, timeout_s=timeout_s, report=report)
            _compare_forms(report)
    if raise_on_problems and report.problems:
        raise EvaluatorContractError(report)
    return report


def sample_trajectories() -> dict[str, Trajectory]:
    """A refund run with a failed call, the same run with its arguments and results
    lazily parsed, and an empty run (no input, steps or output)."""
    from evaluators.testing import TrajectoryBuilder, lazily_parsed  # noqa: PLC0415 - testing imports this

    sample = (
        TrajectoryBuilder("I was charged twice on invoice 1042, please refund one.")
        .llm()
        .tool("lookup_invoice", {"invoice_id": 1042}, result={"total": 1.98})
        .tool("refund", {"invoice_id": 1042, "track_id": 3158}, error="RefundWindowExpired")
        .output("Sorry, I cannot refund this invoice.")
        .build()
    )
    return {
        "sample": sample,
        LAZY_SAMPLE: lazily_parsed(sample),
        "empty": TrajectoryBuilder(None).build(),
    }


LAZY_SAMPLE = "sample_lazy"


def _compare_forms(report: ContractReport) -> None:
    """A problem when the lazily parsed sample gets another result than the plain one:
    the evaluator took a step apart as a tuple instead of reading ``step.args``."""
    plain, lazy = report.results.get("sample"), report.results.get(LAZY_SAMPLE)
    if plain is not None and lazy is not None and plain != lazy:
        report.problems.append(
            f"evaluate() on the lazily parsed sample returned {lazy!r}, on the plain one "
            f"{plain!r}: read arguments and results as step.args / step.result"
        )


def _check_class(cls: type[Evaluator[Any, Any]], report: ContractReport) -> None:
    report.id = cls.id
    if not _ID.match(cls.id):
        report.problems.append(f"id {cls.id!r} must not contain blanks (it is a metric label)")
    registry = default_registry()
    if cls.id in registry.names():
        try:
            taken = registry.resolve(cls.id) is not cls
        except EvaluatorLoadError:
            taken = True
        if taken:
            report.problems.append(f"id {cls.id!r} is the registered name of another evaluator")
    for attribute in ("criteria_model", "config_model"):
        model: type[BaseModel] = getattr(cls, attribute)
        try:
            schema = model.model_json_schema()
            json.dumps(schema)
        except Exception as exc:  # the contract check reports whatever user code raises
            report.problems.append(f"{attribute} has no JSON Schema: {type(exc).__name__}: {exc}")
            continue
        setattr(report, attribute.replace("_model", "_schema"), schema)


def _build(
    cls: type[Evaluator[Any, Any]], config: dict[str, Any] | None, report: ContractReport
) -> Evaluator[Any, Any] | None:
    try:
        return cls.build(config)
    except ValidationError as exc:
        what = "the config given" if config else "the default config (pass config=...)"
        report.problems.append(f"{what} is invalid: {_first_error(exc)}")
    except Exception as exc:  # user code: any failure is a finding
        report.problems.append(f"constructing the evaluator failed: {type(exc).__name__}: {exc}")
    return None


def _criteria(
    cls: type[Evaluator[Any, Any]], given: Criteria | dict[str, Any] | None, report: ContractReport
) -> Criteria | None:
    if isinstance(given, Criteria):
        if not isinstance(given, cls.criteria_model):
            report.problems.append(f"criteria is not a {cls.criteria_model.__name__}")
            return None
        return given
    candidates = [given] if given is not None else [{}, _sample_data(cls.criteria_model)]
    for data in candidates:
        try:
            return cls.criteria_model.model_validate(data)
        except ValidationError as exc:
            if given is not None:
                report.problems.append(f"the criteria given are invalid: {_first_error(exc)}")
                return None
    report.warnings.append("evaluate() not run: the criteria need values (pass criteria=...)")
    return None


def _run(
    evaluator: Evaluator[Any, Any],
    trajectory: Trajectory,
    criteria: Criteria,
    *,
    name: str,
    timeout_s: float,
    report: ContractReport,
) -> None:
    try:
        result: object = _call(evaluator, trajectory, criteria, timeout_s)
    except Exception as exc:  # user code: any failure is a finding
        message = f"evaluate() raised on the {name} trajectory: {type(exc).__name__}: {exc}"
        (report.warnings if name == "empty" else report.problems).append(message)
        return
    problem = _result_problem(result)
    if problem is not None:
        report.problems.append(f"evaluate() on the {name} trajectory {problem}")
    elif isinstance(result, NumericResult | BooleanResult | ErrorResult):
        report.results[name] = result


def _call(
    evaluator: Evaluator[Any, Any], trajectory: Trajectory, criteria: Criteria, timeout_s: float
) -> object:
    result: object = evaluator.evaluate(trajectory, criteria)
    if not inspect.isawaitable(result):
        return result

    async def bounded() -> object:
        return await asyncio.wait_for(result, timeout_s)

    # A fresh loop in a worker thread: works whether or not the caller runs a loop.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, bounded()).result()


def _result_problem(result: object) -> str | None:
    if not isinstance(result, NumericResult | BooleanResult | ErrorResult):
        kind = type(result).__name__
        return f"returned {kind}, expected NumericResult, BooleanResult or ErrorResult"
    if isinstance(result, NumericResult) and not math.isfinite(result.score):
        return f"returned a non-finite score {result.score}"
    try:
        json.dumps(result.details)
    except (TypeError, ValueError) as exc:
        return f"returned details that are not JSON: {exc}"
    return None


def _sample_data(model: type[BaseModel]) -> dict[str, Any]:
    """Values for the required fields, from their types (best effort)."""
    return {
        name: _sample_value(info.annotation)
        for name, info in model.model_fields.items()
        if info.is_required()
    }


def _sample_value(annotation: Any) -> Any:
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if annotation in _SAMPLES:
        return _SAMPLES[annotation]
    if origin is Literal:
        return args[0]
    if origin in (typing.Union, types.UnionType):
        return _sample_value(next(arg for arg in args if arg is not type(None)))
    if origin in (list, tuple, set, frozenset) or annotation in (list, tuple):
        return []
    if origin is dict or annotation is dict:
        return {}
    if isinstance(annotation, type) and issubclass(annotation, StepKind):
        return StepKind.TOOL.value
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _sample_data(annotation)
    return None


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"]) or "(top level)"
    return f"{where}: {error['msg']}"
