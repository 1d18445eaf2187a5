"""The registry: entry points, file:// and module:Class references, validation, caching."""

from __future__ import annotations

import sys
from importlib.metadata import EntryPoint

import pytest
from support.paths import FIXTURES

from evaluators.builtin.run_facts import Failure, Latency
from evaluators.builtin.trajectory_match import TrajectoryRecall
from evaluators.registry import (
    ENTRY_POINT_GROUP,
    EvaluatorLoadError,
    EvaluatorRegistry,
    default_registry,
    validate_evaluator_class,
)

FIXTURES = FIXTURES / "evaluators"
BUILTINS = {
    "trajectory_exact_match",
    "trajectory_in_order_match",
    "trajectory_any_order_match",
    "trajectory_precision",
    "trajectory_recall",
    "trajectory_single_tool_use",
    "latency",
    "failure",
}


def entry_point(name: str, value: str) -> EntryPoint:
    return EntryPoint(name=name, value=value, group=ENTRY_POINT_GROUP)


def test_builtins_come_through_the_installed_entry_points() -> None:
    registry = EvaluatorRegistry()
    assert set(registry.names()) >= BUILTINS
    for name in BUILTINS:
        assert registry.resolve(name).id == name


def test_entry_point_name_resolves_and_is_cached() -> None:
    registry = EvaluatorRegistry([entry_point("lat", "evaluators.builtin.run_facts:Latency")])
    assert registry.resolve("lat") is Latency
    assert registry.resolve(" lat ") is Latency


def test_unknown_name_lists_known_names_and_suggests() -> None:
    with pytest.raises(EvaluatorLoadError) as info:
        EvaluatorRegistry().resolve("trajectory_recal")
    message = str(info.value)
    assert message.startswith("evaluator 'trajectory_recal': no evaluator registered")
    assert "did you mean trajectory_recall" in message
    assert "file://path.py:Class" in message


def test_duplicate_entry_points_to_different_classes_are_an_error() -> None:
    registry = EvaluatorRegistry(
        [
            entry_point("lat", "evaluators.builtin.run_facts:Latency"),
            entry_point("lat", "evaluators.builtin.run_facts:Failure"),
        ]
    )
    with pytest.raises(EvaluatorLoadError, match="registered more than once") as info:
        registry.resolve("lat")
    assert "run_facts:Latency" in str(info.value) and "run_facts:Failure" in str(info.value)


def test_duplicate_entry_points_to_the_same_class_are_fine() -> None:
    registry = EvaluatorRegistry(
        [
            entry_point("lat", "evaluators.builtin.run_facts:Latency"),
            entry_point("lat", "evaluators.builtin.run_facts:Latency"),
        ]
    )
    assert registry.resolve("lat") is Latency


def test_entry_point_that_fails_to_import_is_a_load_error() -> None:
    registry = EvaluatorRegistry([entry_point("gone", "no_such_package.mod:Cls")])
    with pytest.raises(EvaluatorLoadError, match=r"'gone'.*ModuleNotFoundError"):
        registry.resolve("gone")


def test_module_reference() -> None:
    registry = EvaluatorRegistry([])
    ref = "evaluators.builtin.trajectory_match:TrajectoryRecall"
    assert registry.resolve(ref) is TrajectoryRecall


@pytest.mark.parametrize(
    ("reference", "problem"),
    [
        ("evaluators.builtin.run_facts:Nope", "has no attribute 'Nope'"),
        ("no_such_module_xyz:Cls", "ModuleNotFoundError"),
        ("evaluators.builtin.run_facts:", "expected the form <location>:<ClassName>"),
        ("evaluators.builtin.run_facts:FailureConfig", "not a subclass of evaluators.Evaluator"),
    ],
)
def test_bad_module_references(reference: str, problem: str) -> None:
    with pytest.raises(EvaluatorLoadError) as info:
        EvaluatorRegistry([]).resolve(reference)
    assert str(info.value).startswith(f"evaluator {reference!r}: ")
    assert problem in str(info.value)


def test_file_reference_relative_to_base_dir() -> None:
    registry = EvaluatorRegistry([])
    cls = registry.resolve("file://max_steps.py:MaxSteps", base_dir=FIXTURES)
    assert cls.id == "max_steps"
    assert cls.criteria_model.model_validate({"limit": 2}).limit == 2  # type: ignore[attr-defined]
    again = registry.resolve("file://../evaluators/max_steps.py:MaxSteps", base_dir=FIXTURES)
    assert again is cls  # same file, same class: one module per file


def test_file_reference_absolute_path() -> None:
    path = (FIXTURES / "max_steps.py").resolve()
    cls = EvaluatorRegistry([]).resolve(f"file://{path}:MaxSteps")
    assert cls.__name__ == "MaxSteps"


def test_file_module_is_registered_in_sys_modules() -> None:
    cls = EvaluatorRegistry([]).resolve("file://max_steps.py:MaxSteps", base_dir=FIXTURES)
    assert sys.modules[cls.__module__].MaxSteps is cls


@pytest.mark.parametrize(
    ("reference", "problem"),
    [
        ("file://missing.py:X", "file not found"),
        ("file://max_steps.py", "expected the form <location>:<ClassName>"),
        ("file://max_steps.py:Helper", "is not a subclass of evaluators.Evaluator"),
        ("file://max_steps.py:Nope", "has no attribute 'Nope'"),
        ("file://broken_import.py:X", "ImportError: optional dependency 'frobnicate'"),
        ("file://bad_evaluators.py:NoId", "NoId has no non-empty string `id`"),
        ("file://bad_evaluators.py:BlankId", "BlankId has no non-empty string `id`"),
        (
            "file://bad_evaluators.py:WrongCriteriaModel",
            "WrongCriteriaModel.criteria_model must be a subclass of Criteria",
        ),
        (
            "file://bad_evaluators.py:WrongConfigModel",
            "WrongConfigModel.config_model must be a subclass of EvaluatorConfig",
        ),
        ("file://bad_evaluators.py:NoEvaluate", "NoEvaluate does not implement evaluate()"),
    ],
)
def test_bad_file_references(reference: str, problem: str) -> None:
    with pytest.raises(EvaluatorLoadError) as info:
        EvaluatorRegistry([]).resolve(reference, base_dir=FIXTURES)
    assert str(info.value).startswith(f"evaluator {reference!r}: ")
    assert problem in str(info.value)


def test_broken_file_is_not_left_half_imported() -> None:
    registry = EvaluatorRegistry([])
    for _ in range(2):  # the second attempt re-imports and fails the same way
        with pytest.raises(EvaluatorLoadError, match="ImportError"):
            registry.resolve("file://broken_import.py:X", base_dir=FIXTURES)
    assert not [name for name in sys.modules if "broken_import" in name]


def test_validate_evaluator_class_accepts_builtins() -> None:
    assert validate_evaluator_class(Failure, "failure") is Failure


def test_default_registry_is_shared() -> None:
    assert default_registry() is default_registry()
