"""Code run in a fresh interpreter, for tests of process-wide settings (the collector's
thresholds, the switch interval) that must not change the test process's own."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def in_fresh_process(code: str) -> str:
    """What ``code`` (indented as in the test, dedented here) prints, stripped; raises
    ``CalledProcessError`` if it fails."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done.stdout.strip()
