"""Shared test helpers (moved from test_cli.py)."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

from support.paths import ROOT

EVALD = Path(sys.executable).parent / "evald"


READY = re.compile(r"otlp grpc port (\d+), otlp http port (\d+), admin port (\d+)")


def loopback_config(tmp_path: Path, **extra: str) -> Path:
    lines = [
        "receivers: {otlp: {grpc: {endpoint: 127.0.0.1:0}, http: {endpoint: 127.0.0.1:0}}}",
        "admin: {endpoint: 127.0.0.1:0}",
        *(f"{key}: {value}" for key, value in extra.items()),
    ]
    path = tmp_path / "evald.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


class Served:
    def __init__(self, proc: subprocess.Popen[str], ports: tuple[int, int, int]) -> None:
        self.proc = proc
        self.grpc_port, self.http_port, self.admin_port = ports

    def post(self, body: bytes, content_type: str = "application/x-protobuf") -> int:
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.http_port}/v1/traces",
            data=body,
            headers={"Content-Type": content_type},
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return int(response.status)
        except urllib.error.HTTPError as exc:
            return int(exc.code)

    def get(self, path: str) -> tuple[int, str]:
        url = f"http://127.0.0.1:{self.admin_port}{path}"
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                return int(response.status), response.read().decode()
        except urllib.error.HTTPError as exc:
            return int(exc.code), ""


def start_serve(argv: list[str], cwd: Path = ROOT) -> Served:
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        start_new_session=True,  # own process group: `make run`'s child is stopped too
    )
    assert proc.stderr is not None
    try:
        for line in proc.stderr:
            match = READY.search(line)
            if match:
                ports = (int(match[1]), int(match[2]), int(match[3]))
                return Served(proc, ports)
        raise AssertionError(f"evald exited before it was ready (code {proc.wait()})")
    except BaseException:
        # Not ready (or the test timed out waiting): the caller never gets the process
        # to stop, so its whole group (``make run`` and the daemon with its workers)
        # is killed here; a leaked daemon kept pytest from exiting.
        _kill_group(proc)
        raise


def _kill_group(proc: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    if proc.stderr is not None:
        proc.stderr.close()
