"""Shared fixtures: an event loop in a background thread, fresh telemetry, a fake consumer.

Servers under test run in ``loop_thread``'s loop while the test body drives them with
ordinary blocking clients (the real OpenTelemetry exporters, urllib, grpc channels).
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from collections.abc import Callable, Coroutine, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import pytest

from collector.consumer import ConsumeResult, Overloaded
from collector.model import Span
from collector.telemetry import Telemetry

if TYPE_CHECKING:
    from test_cli import Served

T = TypeVar("T")
CALL_TIMEOUT_S = 10.0


def pytest_sessionstart(session: pytest.Session) -> None:
    """Refuse to test stale compiled modules: they shadow their edited sources."""
    from collector.native import compiled_normalizer, stale_extensions

    compiled_normalizer()  # imports the compiled modules, so they can be checked
    stale = stale_extensions()
    if stale:
        pytest.exit(
            "compiled modules are older than their sources, tests would run the old code: "
            f"{', '.join(stale)}; rebuild with `make` or `pip install -e .`",
            returncode=2,
        )


class LoopThread:
    """An asyncio loop running in a daemon thread; ``run`` waits for a coroutine."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="test-loop")
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = CALL_TIMEOUT_S) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        """Tear down like ``asyncio.run``: cancel what is left, then close the loop."""
        self.run(_cancel_other_tasks())
        self.run(self.loop.shutdown_asyncgens())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(CALL_TIMEOUT_S)
        self.loop.run_until_complete(self.loop.shutdown_default_executor())
        self.loop.close()


async def _cancel_other_tasks() -> None:
    # E.g. a connection accepted while its server shut down: cancelling its task closes it.
    tasks = asyncio.all_tasks() - {asyncio.current_task()}
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


class Component(Protocol):
    async def start(self) -> None: ...
    async def shutdown(self, grace: float) -> None: ...


class RecordingConsumer:
    """A ``SpanConsumer`` that keeps spans, and can refuse or reject on request.

    ``overloaded``: how many next calls raise ``Overloaded``; ``reject_names``: spans
    with these names are rejected (partial success); ``crash``: raise a bug.
    """

    def __init__(self) -> None:
        self.spans: list[Span] = []
        self.calls = 0
        self.overloaded = 0
        self.reject_names: frozenset[str] = frozenset()
        self.crash = False

    def consume(self, spans: Sequence[Span]) -> ConsumeResult:
        self.calls += 1
        if self.crash:
            raise RuntimeError("consumer bug")
        if self.overloaded:
            self.overloaded -= 1
            raise Overloaded("evaluation queue full")
        kept = [span for span in spans if span.name not in self.reject_names]
        self.spans.extend(kept)
        rejected = len(spans) - len(kept)
        return ConsumeResult(len(kept), rejected, "trace over its span limit" if rejected else "")


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
        served.proc.wait(30)
        if served.proc.stderr:
            served.proc.stderr.close()
