"""An in-process ``evald serve`` for the output tests: start, feed golden traces, complete.

The daemon runs in the ``loop_thread`` fixture's event loop on an injected clock, all
listeners on loopback ports from the OS; ``complete_traces`` jumps the clock past
``idle_timeout`` and waits until the evaluation queue is empty.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from collector.config.settings import Config
from collector.core.clock import ManualClock
from collector.daemon.serve import Daemon
from support.captures import not_read
from support.paths import ROOT

if TYPE_CHECKING:
    from support.loop import LoopThread

GOLDEN = ROOT / "tests" / "golden" / "traces"
EXAMPLE_SPECS = str(ROOT / "config" / "specs" / "*.yaml")
WAIT_S = 15.0


def free_port() -> int:
    """A loopback port the OS just handed out (for a config that must name it up front)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def daemon_config(**sections: Any) -> Config:
    """Loopback listeners on OS ports, the example specs, plus ``sections`` (top-level keys)."""
    loopback = {"endpoint": "127.0.0.1:0"}
    raw: dict[str, Any] = {
        "receivers": {"otlp": {"grpc": dict(loopback), "http": dict(loopback)}},
        "admin": dict(loopback),
        "specs": [EXAMPLE_SPECS],
    }
    return Config.model_validate(raw | sections)


def golden_files(pattern: str = "*/*.jsonl") -> list[Path]:
    """Golden trace files (log-record files beside them left out)."""
    return sorted(path for path in GOLDEN.glob(pattern) if ".logs." not in path.name)


def read_golden_files() -> list[Path]:
    """Golden trace files of the captures evald reads right (``captures.NOT_READ`` left
    out: their labels are not what evald reports yet), each trace in one file only: a
    capture whose scenarios share a trace id (an instrumentation that makes the whole
    process one trace) gives its first such file, as its scenarios sent to one daemon
    would be one trace."""
    taken: set[str] = set()
    files = []
    for path in golden_files():
        if not_read(path.parent.name, path.name.split(".")[0]) is not None:
            continue
        ids = set(golden_expectations(path)["trace_ids"])
        if ids & taken:
            continue
        taken |= ids
        files.append(path)
    return files


def golden_logs(path: Path) -> Path | None:
    """The log records captured beside a golden trace file, if any."""
    logs = path.with_name(path.name.removesuffix(".jsonl") + ".logs.jsonl")
    return logs if logs.exists() else None


def golden_expectations(path: Path) -> dict[str, Any]:
    """The labels beside a golden ``.jsonl`` file (``*.expected.json``)."""
    expected = path.with_name(path.name.removesuffix(".jsonl") + ".expected.json")
    return dict(json.loads(expected.read_text()))


def poll(condition: Callable[[], bool], timeout: float = WAIT_S, every: float = 0.02) -> bool:
    """True as soon as ``condition()`` holds, False once ``timeout`` passed."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(every)
    return True


class RunningDaemon:
    """A started ``Daemon`` and the helpers tests drive it with."""

    def __init__(self, config: Config, loop: LoopThread) -> None:
        self.clock = ManualClock(1000.0)
        self.daemon = Daemon(config, clock=self.clock)
        self.loop = loop
        loop.run(self.daemon.start())

    def stop(self) -> None:
        self.loop.run(self.daemon.shutdown(), timeout=60)

    def post_file(self, path: Path, signal: str = "traces") -> None:
        """POST each OTLP/JSON line of ``path`` to the OTLP/HTTP receiver (``signal``:
        ``traces`` or ``logs``)."""
        url = f"http://127.0.0.1:{self.daemon.http.port}/v1/{signal}"
        for line in path.read_bytes().splitlines():
            if not line.strip():
                continue
            request = urllib.request.Request(
                url, data=line, headers={"Content-Type": "application/json"}
            )
            with urllib.request.urlopen(request, timeout=5) as response:
                assert response.status == 200

    def complete_traces(self, rootless: bool = False) -> None:
        """Jump past idle_timeout, let the timer release traces, wait for evaluation;
        ``rootless``: past max_trace_age too, which releases a trace whose root span never
        came (an SDK that shuts down before it exports its root: mcp-agent's)."""
        assembly = self.daemon.config.assembly
        wait = (
            max(assembly.idle_timeout, assembly.max_trace_age)
            if rootless
            else assembly.idle_timeout
        )
        self.clock.advance(wait + 0.001)

        async def poke_and_wait() -> None:
            self.daemon.pipeline.tick()
            while self.daemon.pipeline.queue_depth:
                await asyncio.sleep(0.005)

        self.loop.run(poke_and_wait(), timeout=WAIT_S)

    def metric(self, name: str, **labels: str) -> float:
        return self.daemon.telemetry.registry.get_sample_value(name, labels) or 0.0


@contextlib.contextmanager
def running_daemon(config: Config, loop: LoopThread) -> Iterator[RunningDaemon]:
    """A running daemon for the ``with`` block; shut down (flushing every sink) after it."""
    running = RunningDaemon(config, loop)
    try:
        yield running
    finally:
        running.stop()


def results_by_key(path: Path) -> dict[tuple[str, str | None, str], Mapping[str, Any]]:
    """``results.jsonl`` lines keyed by (trace id, spec, evaluator)."""
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return {(line["trace_id"], line["spec"], line["evaluator"]): line for line in lines}
