"""Resolve an evaluator reference to an ``Evaluator`` subclass.

A reference is one of:

- a registered name (``trajectory_exact_match``): an entry point of the group
  ``evald.evaluators``. Built-ins register this way too, so the plug-in door is
  the one every evaluator goes through;
- ``file://path/to/file.py:ClassName``: a Python file, relative to a base
  directory (a spec's directory) unless absolute;
- ``package.module:ClassName``: an importable module.

- ``langchain:<module or file reference>``: a LangChain ``AgentTrajectoryEvaluator``
  subclass, wrapped by ``evaluators.langchain`` (needs ``langchain-classic``).

Every resolved class is validated (subclass of ``Evaluator``, non-empty ``id``,
criteria / config models of the right bases and consistent with the class's type
parameters and ``evaluate`` annotation, ``evaluate`` implemented) and cached, so
two specs naming the same file share one module and one class.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib
import importlib.util
import sys
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from types import ModuleType
from typing import Any

from evaluators.base import UNITS, Criteria, Evaluator, EvaluatorConfig, type_inconsistency

ENTRY_POINT_GROUP = "evald.evaluators"
FILE_SCHEME = "file://"
LANGCHAIN_SCHEME = "langchain:"
_FILE_MODULE_PREFIX = "_evald_file"

EvaluatorClass = type[Evaluator[Any, Any]]


class EvaluatorLoadError(Exception):
    """An evaluator reference that cannot be resolved; the message names it and the problem."""

    def __init__(self, reference: str, problem: str) -> None:
        super().__init__(f"evaluator {reference!r}: {problem}")
        self.reference = reference
        self.problem = problem


@contextmanager
def user_code(reference: str, doing: str) -> Iterator[None]:
    """Turn any exception raised by plug-in code into an ``EvaluatorLoadError``.

    Importing or constructing a plug-in runs arbitrary code; whatever it raises
    is re-raised as a load error naming the reference (cause chained). This
    translates, it does not swallow, so it is not one of the catch-all places.
    """
    try:
        yield
    except EvaluatorLoadError:
        raise
    except Exception as exc:
        raise EvaluatorLoadError(reference, f"{doing} failed: {type(exc).__name__}: {exc}") from exc


def is_registered_name(reference: str) -> bool:
    """Whether ``reference`` is a registered name rather than a file / module reference."""
    return not reference.startswith(FILE_SCHEME) and ":" not in reference


def validate_evaluator_class(obj: object, reference: str) -> EvaluatorClass:
    """Return ``obj`` as an evaluator class, or raise ``EvaluatorLoadError`` saying why not."""
    if not (isinstance(obj, type) and issubclass(obj, Evaluator)):
        raise EvaluatorLoadError(reference, f"{obj!r} is not a subclass of evaluators.Evaluator")
    ident = getattr(obj, "id", None)
    if not isinstance(ident, str) or not ident.strip():
        raise EvaluatorLoadError(reference, f"{obj.__name__} has no non-empty string `id`")
    _require_subclass(reference, obj, "criteria_model", Criteria)
    _require_subclass(reference, obj, "config_model", EvaluatorConfig)
    if obj.evaluate is Evaluator.evaluate:
        raise EvaluatorLoadError(reference, f"{obj.__name__} does not implement evaluate()")
    if obj.unit not in UNITS:
        units = " or ".join(repr(unit) for unit in UNITS)
        raise EvaluatorLoadError(reference, f"{obj.__name__}.unit is {obj.unit!r}, not {units}")
    inconsistency = type_inconsistency(obj)
    if inconsistency is not None:
        raise EvaluatorLoadError(reference, inconsistency)
    return obj


def _require_subclass(reference: str, cls: type, attribute: str, base: type) -> None:
    value = getattr(cls, attribute, None)
    if not (isinstance(value, type) and issubclass(value, base)):
        raise EvaluatorLoadError(
            reference, f"{cls.__name__}.{attribute} must be a subclass of {base.__name__}"
        )


class EvaluatorRegistry:
    """Resolves references (see module doc) to validated evaluator classes, with a cache.

    ``entry_points`` defaults to the installed ``evald.evaluators`` group; tests
    pass their own. Thread-safe: resolution happens under a lock (it is rare and
    may import modules).
    """

    def __init__(self, entry_points: Iterable[EntryPoint] | None = None) -> None:
        self._entry_points: dict[str, list[EntryPoint]] = {}
        for point in _installed() if entry_points is None else entry_points:
            self._entry_points.setdefault(point.name, []).append(point)
        self._classes: dict[str, EvaluatorClass] = {}
        self._lock = threading.Lock()

    def names(self) -> list[str]:
        """The registered names, sorted."""
        return sorted(self._entry_points)

    def resolve(self, reference: str, base_dir: Path | None = None) -> EvaluatorClass:
        """The class ``reference`` names; ``base_dir`` anchors relative ``file://`` paths.

        Raises ``EvaluatorLoadError``.
        """
        key = self._cache_key(reference.strip(), base_dir)
        with self._lock:
            if key not in self._classes:
                self._classes[key] = validate_evaluator_class(
                    self._load(reference.strip(), base_dir), reference
                )
            return self._classes[key]

    def load(self, reference: str, base_dir: Path | None = None) -> object:
        """What ``reference`` names, unvalidated and uncached (for ``evald evaluator check``,
        which reports what is wrong with it). Raises ``EvaluatorLoadError``."""
        return self._load(reference.strip(), base_dir)

    def _cache_key(self, reference: str, base_dir: Path | None) -> str:
        if reference.startswith(LANGCHAIN_SCHEME):
            inner = reference[len(LANGCHAIN_SCHEME) :].strip()
            return LANGCHAIN_SCHEME + self._cache_key(inner, base_dir)
        if reference.startswith(FILE_SCHEME):
            path, attr = _split_target(reference, reference[len(FILE_SCHEME) :])
            return f"{FILE_SCHEME}{_resolve_path(path, base_dir)}:{attr}"
        return reference

    def _load(self, reference: str, base_dir: Path | None) -> object:
        if reference.startswith(LANGCHAIN_SCHEME):
            return _load_langchain(reference, base_dir)
        if is_registered_name(reference):
            return self._load_registered(reference)
        if reference.startswith(FILE_SCHEME):
            return _load_from_file(reference, base_dir)
        return _load_from_module(reference)

    def _load_registered(self, name: str) -> object:
        points = self._entry_points.get(name)
        if not points:
            raise EvaluatorLoadError(name, self._unknown_name_hint(name))
        with user_code(name, f"loading entry point {points[0].value!r}"):
            classes = {id(loaded): loaded for loaded in (point.load() for point in points)}
        if len(classes) > 1:
            targets = ", ".join(f"{p.value} ({_dist_name(p)})" for p in points)
            raise EvaluatorLoadError(name, f"registered more than once, differently: {targets}")
        return next(iter(classes.values()))

    def _unknown_name_hint(self, name: str) -> str:
        close = difflib.get_close_matches(name, self._entry_points, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        known = ", ".join(self.names()) or "none"
        return (
            f"no evaluator registered under this name (known: {known}){hint}; "
            f"custom classes are referenced as file://path.py:Class or package.module:Class"
        )


def _installed() -> list[EntryPoint]:
    return list(entry_points(group=ENTRY_POINT_GROUP))


def _dist_name(point: EntryPoint) -> str:
    dist = getattr(point, "dist", None)
    return str(dist.name) if dist is not None else "unknown distribution"


def _split_target(reference: str, target: str) -> tuple[str, str]:
    """``"a/b.py:Cls"`` → ``("a/b.py", "Cls")``; the class part is required."""
    where, sep, attr = target.rpartition(":")
    if not sep or not where or not attr:
        raise EvaluatorLoadError(reference, "expected the form <location>:<ClassName>")
    return where, attr


def _resolve_path(path: str, base_dir: Path | None) -> Path:
    candidate = Path(path).expanduser()
    if not candidate.is_absolute():
        candidate = (base_dir or Path.cwd()) / candidate
    return candidate.resolve()


def _attribute(reference: str, module: ModuleType, attr: str) -> object:
    """``module.attr``, following dots (``Outer.Inner``)."""
    obj: object = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise EvaluatorLoadError(reference, f"{module.__name__} has no attribute {attr!r}")
        obj = getattr(obj, part)
    return obj


def _load_langchain(reference: str, base_dir: Path | None) -> object:
    """``langchain:<file:// or module:Class>`` → an ``Evaluator`` wrapping that class."""
    inner = reference[len(LANGCHAIN_SCHEME) :].strip()
    if is_registered_name(inner):
        raise EvaluatorLoadError(
            reference, "expected langchain:package.module:Class or langchain:file://path.py:Class"
        )
    if inner.startswith(FILE_SCHEME):
        target = _load_from_file(inner, base_dir)
    else:
        target = _load_from_module(inner)
    from evaluators.langchain import adapt  # noqa: PLC0415 - langchain is optional

    return adapt(target, reference)


def _load_from_module(reference: str) -> object:
    module_name, attr = _split_target(reference, reference)
    with user_code(reference, f"importing module {module_name!r}"):
        module = importlib.import_module(module_name)
    return _attribute(reference, module, attr)


def _load_from_file(reference: str, base_dir: Path | None) -> object:
    path_text, attr = _split_target(reference, reference[len(FILE_SCHEME) :])
    path = _resolve_path(path_text, base_dir)
    if not path.is_file():
        raise EvaluatorLoadError(reference, f"file not found: {path}")
    return _attribute(reference, _file_module(reference, path), attr)


def import_file(path: Path) -> ModuleType:
    """Import a Python file as the registry does (one module per resolved path).

    Raises ``EvaluatorLoadError`` (referenced as ``file://<path>``).
    """
    resolved = path.expanduser().resolve()
    reference = f"{FILE_SCHEME}{resolved}"
    if not resolved.is_file():
        raise EvaluatorLoadError(reference, f"file not found: {resolved}")
    return _file_module(reference, resolved)


def _file_module_name(path: Path) -> str:
    """A flat module name unique to the resolved path (two ``utils.py`` never collide)."""
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:12]
    return f"{_FILE_MODULE_PREFIX}_{path.stem}_{digest}"


def _file_module(reference: str, path: Path) -> ModuleType:
    """Import ``path`` once under a name derived from it (one module per file)."""
    name = _file_module_name(path)
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise EvaluatorLoadError(reference, f"cannot import {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    # Registered before executing: pydantic and dataclasses look the module up by name.
    sys.modules[name] = module
    try:
        with user_code(reference, f"importing {path}"):
            spec.loader.exec_module(module)
    except EvaluatorLoadError:
        del sys.modules[name]
        raise
    return module


@cache
def default_registry() -> EvaluatorRegistry:
    """The process-wide registry over the installed entry points (built on first use)."""
    return EvaluatorRegistry()


def resolve_evaluator(reference: str, base_dir: Path | None = None) -> EvaluatorClass:
    """``default_registry().resolve(reference, base_dir)``."""
    return default_registry().resolve(reference, base_dir)
