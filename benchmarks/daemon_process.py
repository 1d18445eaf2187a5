"""A real ``evald serve`` for the benchmarks: started on loopback ports, watched through
``/proc`` (RSS, open descriptors, threads) and its admin endpoint; not a benchmark.

    with Evald(config_text) as evald:
        evald.ports, evald.stats(), evald.scrape(), evald.metric("evald_…")
"""

from __future__ import annotations

import argparse
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import NamedTuple

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
EVALD = Path(sys.executable).parent / "evald"
READY = re.compile(r"otlp grpc port (\d+), otlp http port (\d+), admin port (\d+)")
LOOPBACK = """
receivers:
  otlp:
    grpc: {endpoint: 127.0.0.1:0}
    http: {endpoint: 127.0.0.1:0}
admin: {endpoint: 127.0.0.1:0}
"""


class Stats(NamedTuple):
    rss_mib: float
    fds: int
    threads: int


class Evald:
    """``evald serve`` with ``LOOPBACK`` plus ``config`` (YAML, later keys win)."""

    def __init__(self, config: str = "", files: dict[str, str] | None = None) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="evald-bench-"))
        for name, text in (files or {}).items():
            (self.dir / name).parent.mkdir(parents=True, exist_ok=True)
            (self.dir / name).write_text(text)
        (self.dir / "evald.yaml").write_text(_merged(LOOPBACK, config))
        self.log: list[str] = []
        self.proc = subprocess.Popen(
            [str(EVALD), "serve", "--config", str(self.dir / "evald.yaml")],
            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
        )  # fmt: skip
        self.grpc_port = self.http_port = self.admin_port = 0
        self._wait_ready()
        threading.Thread(target=self._drain, daemon=True).start()

    def __enter__(self) -> Evald:
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.stop()

    def stop(self, timeout: float = 60.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def stats(self) -> Stats:
        """Summed over the daemon's processes: the front and its workers (and the
        multiprocessing helper spawned with them) when ``pipeline.workers`` > 1."""
        rss, fds, threads = 0.0, 0, 0
        for pid in _process_tree(self.proc.pid):
            try:
                status = Path(f"/proc/{pid}/status").read_text()
                rss += int(re.search(r"VmRSS:\s+(\d+)", status)[1]) / 1024  # type: ignore[index]
                threads += int(re.search(r"Threads:\s+(\d+)", status)[1])  # type: ignore[index]
                fds += len(list(Path(f"/proc/{pid}/fd").iterdir()))
            except (OSError, TypeError):  # it exited in between (a worker restarted)
                continue
        return Stats(rss, fds, threads)

    def get(self, path: str, timeout: float = 30.0) -> tuple[int, bytes]:
        url = f"http://127.0.0.1:{self.admin_port}{path}"
        try:
            with urllib.request.urlopen(url, timeout=timeout) as response:
                return int(response.status), response.read()
        except urllib.error.HTTPError as exc:
            return int(exc.code), b""

    def metric(self, name: str, **labels: str) -> float:
        """The sum of the samples of ``name`` that carry ``labels`` (among others: with
        several workers each sample also has a ``worker`` label)."""
        _, text = self.get("/metrics")
        wanted = [f'{key}="{value}"' for key, value in labels.items()]
        total = 0.0
        for line in text.decode().splitlines():
            if not (line.startswith(name) and line[len(name) : len(name) + 1] in ("{", " ")):
                continue
            label_text = line[len(name) :].rsplit(" ", 1)[0]
            if all(label in label_text for label in wanted):
                total += float(line.rsplit(" ", 1)[1])
        return total

    def _wait_ready(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.append(line)
            found = READY.search(line)
            if found:
                self.grpc_port, self.http_port, self.admin_port = map(int, found.groups())
                return
        raise RuntimeError("evald exited before it was ready:\n" + "".join(self.log[-20:]))

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.append(line)


def _merged(base: str, extra: str) -> str:
    import yaml

    merged = yaml.safe_load(base)
    for key, value in (yaml.safe_load(extra) or {}).items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep(merged[key], value)
        else:
            merged[key] = value
    return str(yaml.safe_dump(merged))


def _deep(base: dict[str, object], extra: dict[str, object]) -> dict[str, object]:
    out = dict(base)
    for key, value in extra.items():
        current = out.get(key)
        out[key] = (
            _deep(current, value)
            if isinstance(value, dict) and isinstance(current, dict)
            else value
        )  # type: ignore[arg-type]
    return out


def wait_until(condition: object, timeout: float = 30.0, every: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(every)
    return False


def add_switch_interval(parser: argparse.ArgumentParser) -> None:
    """``--switch-interval``: evald's ``pipeline.switch_interval`` for the run (ADR 0026)."""
    parser.add_argument(
        "--switch-interval", help="pipeline.switch_interval, e.g. 5ms (default: evald's)"
    )


def pipeline_settings(workers: int, switch_interval: str | None) -> str:
    """The config's ``pipeline`` line: ``workers``, and the interval when one is given."""
    switch = "" if switch_interval is None else f", switch_interval: {switch_interval}"
    return f"pipeline: {{workers: {workers}{switch}}}\n"


def _process_tree(pid: int) -> list[int]:
    """``pid`` and its descendants (``/proc/<pid>/task/*/children``)."""
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        found.append(current)
        for task in Path(f"/proc/{current}/task").glob("*/children"):
            try:
                pending.extend(int(child) for child in task.read_text().split())
            except OSError:
                continue
    return found
