"""The ``evald`` command: ``serve``, ``check``, ``replay``.

Exit codes: 0 success (replay: every threshold held); 1 a threshold failed
(replay) or the config/specs are invalid (check, serve); 2 usage or input errors.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from collector.config import Config, ConfigError, load_config
from collector.files import TraceFileError

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
DEFAULT_CONFIG_ENV = "EVALD_CONFIG"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="evald", description="Evaluate AI agents from their OpenTelemetry traces."
    )
    parser.add_argument("--log-level", default="INFO", help="DEBUG, INFO, WARNING, ERROR")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="run the daemon (OTLP receivers, /metrics)")
    _config_option(serve)

    check = commands.add_parser("check", help="validate the config and its spec files")
    _config_option(check)
    _spec_option(check)

    replay = commands.add_parser("replay", help="evaluate trace files offline")
    replay.add_argument("inputs", nargs="+", metavar="PATH", help="trace files, directories, globs")
    _config_option(replay)
    _spec_option(replay)
    replay.add_argument("--results-out", type=Path, metavar="FILE", help="JSON lines of results")
    replay.add_argument(
        "--trajectories-out", type=Path, metavar="FILE", help="JSON lines of trajectories"
    )
    replay.add_argument(
        "--strict", action="store_true", help="stop at the first corrupt record (exit 2)"
    )
    return parser


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
        config = config.model_copy(update={"specs": [str(Path(spec).resolve()) for spec in specs]})
    return config


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(
        level=args.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    from evaluators.spec import SpecError  # noqa: PLC0415 - keeps `--help` fast

    try:
        config = _load(args)
        if args.command == "serve":
            return _serve(config)
        if args.command == "check":
            return _check(config)
        return _replay(config, args)
    except (ConfigError, SpecError) as exc:
        print(f"evald: {exc}", file=sys.stderr)
        return EXIT_FAILED if args.command != "replay" else EXIT_USAGE
    except TraceFileError as exc:
        print(f"evald: {exc}", file=sys.stderr)
        return EXIT_USAGE


def _serve(config: Config) -> int:
    from collector.serve import run_daemon  # noqa: PLC0415 - servers load only when serving

    return asyncio.run(run_daemon(config))


def _check(config: Config) -> int:
    from evaluators.spec import load_specs  # noqa: PLC0415

    specs = load_specs(config.spec_paths())
    print(f"config OK: {len(specs)} spec(s) loaded")
    for spec in specs:
        names = ", ".join(bound.id for bound in spec.bound)
        print(f"  {spec.id}: {names}")
    return EXIT_OK


def _replay(config: Config, args: argparse.Namespace) -> int:
    from collector.replay import Replayer  # noqa: PLC0415
    from collector.reporting import print_summary  # noqa: PLC0415

    replayer = Replayer(
        config, results_out=args.results_out, trajectories_out=args.trajectories_out
    )
    report = replayer.run(args.inputs, strict=args.strict)
    print_summary(report, sys.stdout)
    return EXIT_FAILED if report.failed else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
