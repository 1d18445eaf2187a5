"""``evald evaluator new NAME`` and ``evald evaluator check FILE[:Class]``.

``new`` writes a complete, working evaluator file from a template (never over an
existing file). ``check`` imports a file (or ``package.module:Class``, or a
``langchain:`` reference), runs the contract check (``evaluators.contract``) on
each evaluator class it defines — or the one named — and prints each class's
criteria and config JSON Schemas. Exit codes: 0 every class passed, 1 a class
has problems (or the file cannot be imported), 2 usage errors (bad name, file
exists or is missing, bad ``--criteria`` / ``--config`` JSON).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from collector.cli import evaluator_template

if TYPE_CHECKING:
    from evaluators.contract import ContractReport

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Exit code 2: the command line cannot be acted on."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    commands = parser.add_subparsers(dest="evaluator_command", required=True, metavar="ACTION")
    new = commands.add_parser("new", help="write a new evaluator file from the template")
    new.add_argument("name", metavar="NAME", help="e.g. refund-amount-check")
    new.add_argument("--dir", type=Path, default=Path("."), help="where to write (default: .)")
    check = commands.add_parser(
        "check", help="validate an evaluator file and print its criteria/config JSON Schema"
    )
    check.add_argument(
        "target", metavar="FILE[:Class]", help="a .py file, package.module:Class or langchain:…"
    )
    check.add_argument("--criteria", type=_json_object, help="JSON criteria for the sample run")
    check.add_argument("--config", type=_json_object, help="JSON config for the sample run")
    check.add_argument("--json", action="store_true", help="print one JSON document")


def run(args: argparse.Namespace) -> int:
    """Dispatch; usage problems print a message and return 2."""
    try:
        if args.evaluator_command == "new":
            return _new(args.name, args.dir)
        return _check(args)
    except UsageError as exc:
        print(f"evald: {exc}", file=sys.stderr)
        return EXIT_USAGE


def _new(name: str, directory: Path) -> int:
    try:
        names = evaluator_template.names(name)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    path = directory / names.filename
    if path.exists():
        raise UsageError(f"{path} exists; choose another NAME or --dir")
    directory.mkdir(parents=True, exist_ok=True)
    path.write_text(evaluator_template.render(name), encoding="utf-8")
    print(f"wrote {path}")
    print(f'use it in a spec: - {{name: "file://{names.filename}:{names.cls}"}}')
    print(f"check it: evald evaluator check {path}")
    return EXIT_OK


def _check(args: argparse.Namespace) -> int:
    from evaluators.contract import check_evaluator  # noqa: PLC0415 - keeps --help fast
    from evaluators.registry import EvaluatorLoadError  # noqa: PLC0415

    try:
        classes = _classes(args.target)
    except EvaluatorLoadError as exc:
        print(f"evald: {exc}", file=sys.stderr)
        return EXIT_FAILED
    reports = [
        check_evaluator(cls, criteria=args.criteria, config=args.config, raise_on_problems=False)
        for cls in classes
    ]
    if args.json:
        print(json.dumps({"evaluators": [_as_json(report) for report in reports]}, indent=2))
    else:
        for report in reports:
            _print_report(report)
    return EXIT_OK if all(report.ok for report in reports) else EXIT_FAILED


def _classes(target: str) -> list[object]:
    """What ``target`` names: every evaluator class of a file, or the one named.

    Raises ``EvaluatorLoadError`` (exit 1) and ``UsageError`` (exit 2).
    """
    from evaluators.registry import (  # noqa: PLC0415
        FILE_SCHEME,
        LANGCHAIN_SCHEME,
        EvaluatorRegistry,
        import_file,
    )

    target = target.removeprefix(FILE_SCHEME)
    path_text, _, attr = target.rpartition(":")
    is_file = target.endswith(".py") or path_text.endswith(".py")
    if target.startswith(LANGCHAIN_SCHEME) or not is_file:
        return [EvaluatorRegistry([]).load(target, Path.cwd())]
    path = Path(target if target.endswith(".py") else path_text)
    if not path.is_file():
        raise UsageError(f"no such file: {path}")
    if not target.endswith(".py"):
        return [EvaluatorRegistry([]).load(f"{FILE_SCHEME}{path.resolve()}:{attr}")]
    found = _defined_evaluators(import_file(path))
    if not found:
        raise UsageError(f"{path} defines no evaluator class (an Evaluator subclass)")
    return found


def _defined_evaluators(module: Any) -> list[object]:
    """Evaluator subclasses defined in ``module`` that have an ``id`` or an ``evaluate``."""
    from evaluators.base import Evaluator  # noqa: PLC0415

    return [
        obj
        for obj in vars(module).values()
        if isinstance(obj, type)
        and issubclass(obj, Evaluator)
        and obj.__module__ == module.__name__
        and ("id" in vars(obj) or "evaluate" in vars(obj))
    ]


def _print_report(report: ContractReport) -> None:
    status = "OK" if report.ok else "FAILED"
    print(f"{report.name} (id {report.id or '?'}): {status}")
    for problem in report.problems:
        print(f"  problem: {problem}")
    for warning in report.warnings:
        print(f"  warning: {warning}")
    for trajectory, result in report.results.items():
        print(f"  {trajectory} trajectory: {result.model_dump_json(exclude_none=True)}")
    for title, schema in (("criteria", report.criteria_schema), ("config", report.config_schema)):
        if schema is not None:
            print(f"  {title} JSON Schema:")
            print("    " + json.dumps(schema, indent=2).replace("\n", "\n    "))


def _as_json(report: ContractReport) -> dict[str, Any]:
    return {
        "class": report.name,
        "id": report.id,
        "ok": report.ok,
        "problems": report.problems,
        "warnings": report.warnings,
        "criteria_schema": report.criteria_schema,
        "config_schema": report.config_schema,
        "results": {
            name: result.model_dump(mode="json") for name, result in report.results.items()
        },
    }


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not JSON: {exc.msg}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("expected a JSON object")
    return value
