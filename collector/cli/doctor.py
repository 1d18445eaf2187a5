"""``evald doctor``: what the instrumentation of each service records, and what it misses.

``evald doctor PATH...`` reads trace files (as ``evald replay`` does, specs aside);
``evald doctor --live`` asks a running daemon (``GET /debug/services`` on its admin
port). Per service it prints the traces read and the agent runs they held (a
conversation recorded in one trace is one run per turn), the conventions recognised,
tool and model calls per run, and each gap with the share of runs it affects and the
setting that closes it for the instrumentation in use (``evaluators.gaps``).
"""

from __future__ import annotations

import argparse
import json
import urllib.error
import urllib.request
from typing import Any, TextIO

from collector.config.settings import Config
from collector.offline.replay import Replayer
from collector.sinks.digest import ServiceDigest

DEFAULT_ADMIN = "http://127.0.0.1:9464"
LIVE_PATH = "/debug/services"
_TIMEOUT_S = 10.0


class DoctorError(Exception):
    """The daemon could not be asked (``--live``); the message says why."""


def add_arguments(doctor: argparse.ArgumentParser) -> None:
    doctor.add_argument("inputs", nargs="*", metavar="PATH", help="trace files, folders, globs")
    doctor.add_argument(
        "--live",
        action="store_true",
        help=f"ask a running daemon instead of reading files (GET {LIVE_PATH})",
    )
    doctor.add_argument(
        "--admin", default=DEFAULT_ADMIN, help=f"the daemon's admin URL (default {DEFAULT_ADMIN})"
    )
    doctor.add_argument("--json", action="store_true", help="print the digest as JSON")


def run(config: Config, args: argparse.Namespace, out: TextIO) -> int:
    """Print the digest; 0, or 2 for a usage error (no input, or both kinds)."""
    if args.live == bool(args.inputs):
        raise DoctorError("give trace files, or --live (not both)")
    digest = live_digest(args.admin) if args.live else file_digest(config, args.inputs)
    if args.json:
        out.write(json.dumps(digest, indent=2, sort_keys=True) + "\n")
    else:
        write_digest(digest, out)
    return 0


def file_digest(config: Config, inputs: list[str]) -> dict[str, Any]:
    """The digest of the traces in ``inputs`` (no spec is evaluated)."""
    digest = ServiceDigest()
    plain = config.model_copy(update={"specs": []})
    Replayer(plain, sinks=[digest]).run(inputs)
    return digest.snapshot()


def live_digest(admin: str) -> dict[str, Any]:
    """The digest a running daemon kept since it started."""
    url = admin.rstrip("/") + LIVE_PATH
    try:
        with urllib.request.urlopen(url, timeout=_TIMEOUT_S) as response:
            found = json.loads(response.read())
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise DoctorError(f"cannot read {url}: {exc}") from None
    if not isinstance(found, dict):
        raise DoctorError(f"{url} did not answer a digest")
    return found


def write_digest(digest: dict[str, Any], out: TextIO) -> None:
    """The human-readable form: one block per service."""
    if not digest:
        out.write("no traces\n")
    for service, stats in digest.items():
        traces, runs, skipped = (stats.get(key, 0) for key in ("traces", "runs", "skipped"))
        out.write(f"{service}: {traces} trace(s), {skipped} not agent runs")
        if runs + skipped != traces:  # some trace held a conversation: one run per turn
            out.write(f"; {runs} agent run(s) (a conversation in one trace: one per turn)")
        out.write("\n")
        conventions = ", ".join(f"{name} ({n})" for name, n in stats.get("conventions", {}).items())
        out.write(f"  conventions: {conventions or 'none recognised'}\n")
        out.write(
            f"  per run: {stats.get('tool_calls_per_run', 0)} tool call(s), "
            f"{stats.get('llm_calls_per_run', 0)} model call(s)\n"
        )
        gaps = stats.get("gaps", {})
        if not gaps:
            out.write("  gaps: none\n")
        for gap, found in gaps.items():
            share = 100 * float(found.get("share", 0.0))
            out.write(f"  gap {gap}: {share:.0f}% of runs; {found.get('setting', '')}\n")
