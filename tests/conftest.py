"""Shared fixtures: an event loop in a background thread, fresh telemetry, a fake consumer.

Servers under test run in ``loop_thread``'s loop while the test body drives them with
ordinary blocking clients (the real OpenTelemetry exporters, urllib, grpc channels).
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

import pytest

from collector.core import interpreted

# An edited normalizer or walker not yet rebuilt: test the edit, interpreted (this
# process and the evald processes tests start), rather than the old compiled code.
STALE_SOURCES = interpreted.stale_sources()
if STALE_SOURCES:
    os.environ[interpreted.ENVIRONMENT_VARIABLE] = "1"
    interpreted.install()

from support.loop import LoopThread, T  # noqa: E402 - after the choice of build
from support.recording import RecordingConsumer  # noqa: E402

from collector.telemetry.registry import Telemetry  # noqa: E402

if TYPE_CHECKING:
    from support.serve_process import Served


def pytest_report_header(config: pytest.Config) -> list[str]:
    if not STALE_SOURCES:
        return []
    names = ", ".join(
        str(path.relative_to(interpreted.PACKAGE_ROOT.parent)) for path in STALE_SOURCES
    )
    return [
        f"WARNING: compiled modules are older than their sources ({names}): "
        "testing the interpreted code; `make` rebuilds them (make test always does)"
    ]


class Component(Protocol):
    async def start(self) -> None: ...
    async def shutdown(self, grace: float) -> None: ...


@pytest.fixture
def loop_thread() -> Iterator[LoopThread]:
    thread = LoopThread()
    yield thread
    thread.close()


@pytest.fixture
def start(loop_thread: LoopThread) -> Iterator[Callable[[Any], Any]]:
    """``start(component)`` starts it in the loop thread; all are shut down afterwards."""
    started: list[Component] = []

    def _start(component: T) -> T:
        loop_thread.run(component.start())  # type: ignore[attr-defined]
        started.append(component)  # type: ignore[arg-type]
        return component

    yield _start
    for component in reversed(started):
        loop_thread.run(component.shutdown(1.0))


@pytest.fixture
def telemetry() -> Telemetry:
    return Telemetry()


@pytest.fixture
def consumer() -> RecordingConsumer:
    return RecordingConsumer()


@pytest.fixture
def metric(telemetry: Telemetry) -> Callable[..., float]:
    """``metric(name, **labels)``: a sample's value, 0 if the series does not exist."""

    def _value(name: str, **labels: str) -> float:
        return telemetry.registry.get_sample_value(name, labels) or 0.0

    return _value


@pytest.fixture
def serve_with() -> Iterator[list[Served]]:
    """Daemons a test starts (append them); each is stopped with SIGTERM afterwards."""
    started: list[Served] = []
    yield started
    for served in started:
        if served.proc.poll() is None:
            os.killpg(served.proc.pid, signal.SIGTERM)
        try:
            served.proc.wait(30)
        except subprocess.TimeoutExpired:  # (never leave a daemon behind: it kept pytest alive)
            os.killpg(served.proc.pid, signal.SIGKILL)
            served.proc.wait()
        if served.proc.stderr:
            served.proc.stderr.close()
