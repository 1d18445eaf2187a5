"""The ``evald`` command: ``serve``, ``check``, ``replay``, ``compare``, ``evaluator``,
``doctor``.

Exit codes: 0 success (replay: every gate check held); 1 a gate check failed
(replay), the config/specs are invalid (check, serve) or an evaluator failed
its check (evaluator check); 2 usage or input errors (replay, compare: also a
bad config or spec, unreadable or corrupt input with ``--strict``; evaluator:
bad name, missing file).
"""

from __future__ import annotations

import argparse
import asyncio
import glob
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from collector.cli import compare as cli_compare
from collector.cli import doctor as cli_doctor
from collector.cli import evaluator as cli_evaluator
from collector.cli import replay as cli_replay
from collector.config.settings import Config, ConfigError, is_glob, load_config
from collector.offline.compare import CompareInputError
from collector.offline.readers import TraceFileError

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
DEFAULT_CONFIG_ENV = "EVALD_CONFIG"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="evald", description="Evaluate AI agents from their OpenTelemetry traces."
    )
    parser.add_argument(
        "--version", action=_Version, help="print the installed version and build, and exit"
    )
    parser.add_argument(
        "--log-level",
        type=str.upper,
        choices=("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"),
        default="INFO",
        help="DEBUG, INFO, WARNING, ERROR",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="run the daemon (OTLP receivers, /metrics)")
    _config_option(serve)

    check = commands.add_parser("check", help="validate the config and its spec files")
    _config_option(check)
    _spec_option(check)

    replay = commands.add_parser(
        "replay",
        help="evaluate trace files offline; reports and a CI gate",
        description="Evaluate trace files through the daemon's pipeline. Exit code 0: every "
        "gate check held; 1: a check failed (a result missed its threshold, an evaluator "
        "error, or a --fail-under bound); 2: usage or input error.",
    )
    _config_option(replay)
    _spec_option(replay)
    cli_replay.add_arguments(replay)

    compare = commands.add_parser(
        "compare",
        help="compare two replay runs (or two groups of one) item by item",
        description="Per-item wins/ties/losses, preference ratios with Wilson 95% intervals "
        "and a two-sided exact binomial p-value, per spec and evaluator.",
    )
    cli_compare.add_arguments(compare)

    evaluator = commands.add_parser(
        "evaluator",
        help="scaffold a custom evaluator, or validate one",
        description="`new NAME` writes a working evaluator file from a template; "
        "`check FILE[:Class]` validates it and prints its criteria/config JSON Schema. "
        "Exit code 0: OK; 1: the evaluator has problems; 2: usage error.",
    )
    cli_evaluator.add_arguments(evaluator)

    doctor = commands.add_parser(
        "doctor",
        help="what each service's instrumentation records, and how to record what it misses",
        description="Per service: conventions recognised, tool and model calls per trace, and "
        "each gap (tool arguments, results, input, output, session id, message content) with "
        "the share of traces it affects and the setting that closes it. Reads trace files, or "
        "a running daemon with --live.",
    )
    _config_option(doctor)
    cli_doctor.add_arguments(doctor)
    return parser


class _Version(argparse.Action):
    """``--version``: ``evald 0.1.0 (decoder native, normalizer compiled, evaluators
    compiled)``.

    The build is looked up only when asked for: it imports the decoder and the
    normalizer, which every other ``--help`` or usage error does without.
    """

    def __init__(self, option_strings: Sequence[str], dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        from collector.core.build_info import build_labels, installed_version  # noqa: PLC0415

        labels = build_labels()
        print(
            f"evald {installed_version()} "
            f"(decoder {labels['decoder']}, normalizer {labels['normalizer']}, "
            f"evaluators {labels['evaluators']})"
        )
        parser.exit()


def _config_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config",
        type=Path,
        default=os.environ.get(DEFAULT_CONFIG_ENV),
        help=f"config file (default: ${DEFAULT_CONFIG_ENV}, else built-in defaults)",
    )


def _spec_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--spec",
        action="append",
        default=[],
        metavar="FILE",
        help="spec file or glob to use instead of the config's `specs` (repeatable)",
    )


def _load(args: argparse.Namespace) -> Config:
    config = load_config(args.config)
    specs = getattr(args, "spec", None)
    if specs:
        for pattern in specs:  # named as typed, before they become absolute
            if is_glob(pattern) and not glob.glob(pattern):
                raise ConfigError(f"--spec {pattern!r} matches no file")
        config = config.model_copy(update={"specs": [str(Path(spec).resolve()) for spec in specs]})
    return config


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(
        level=args.log_level,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    from evaluators.spec import SpecError  # noqa: PLC0415 - keeps `--help` fast

    try:
        if args.command == "compare":
            return cli_compare.run(args)
        if args.command == "evaluator":
            return cli_evaluator.run(args)
        config = _load(args)
        if args.command == "serve":
            return _serve(config)
        if args.command == "check":
            return _check(config)
        if args.command == "doctor":
            return cli_doctor.run(config, args, sys.stdout)
        return cli_replay.run(config, args)
    except (ConfigError, SpecError) as exc:
        print(f"evald: {exc}", file=sys.stderr)
        return EXIT_FAILED if args.command != "replay" else EXIT_USAGE
    except (
        TraceFileError,
        cli_replay.ReplayError,
        CompareInputError,
        cli_doctor.DoctorError,
    ) as exc:
        print(f"evald: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        # The reader went away (`evald check | head -1`): stop quietly, as Unix tools
        # do. stdout now points at /dev/null so the flush at exit cannot fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAILED


def _serve(config: Config) -> int:
    from collector.daemon.serve import run_daemon  # noqa: PLC0415 - servers load only when serving

    return asyncio.run(run_daemon(config))


def _check(config: Config) -> int:
    from evaluators.spec import load_specs  # noqa: PLC0415

    specs = load_specs(config.spec_paths(), judges=tuple(config.judges.endpoints))
    print(f"config OK: {len(specs)} spec(s) loaded")
    for spec in specs:
        names = ", ".join(bound.id for bound in spec.bound)
        cases = f" (dataset: {spec.cases} items)" if spec.dataset is not None else ""
        print(f"  {spec.id}: {names}{cases}")
        if spec.scope == "session" and spec.match.service is None:
            print(
                f"evald: warning: {spec.source or spec.id}: spec {spec.id!r} has scope: session "
                "and no match.service: every service's conversations are held until they "
                "end (bounded by sessions.max_sessions and sessions.max_held_turns)",
                file=sys.stderr,
            )
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
