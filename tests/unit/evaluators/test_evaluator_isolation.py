"""A plug-in evaluator that hangs costs its own results, never evaluation's progress.

Real threads and real (short) waits: what is tested is that a blocked thread is
not waited for. Every blocked evaluator is released at the end of its test.
"""

from __future__ import annotations

import asyncio
import gc
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

import pytest
from support.paths import GOLDEN

from evaluators.base import Evaluator, EvaluatorConfig, NoCriteria
from evaluators.builtin.run_facts import Latency
from evaluators.isolation import EvaluatorBusy, EvaluatorTimeout, IsolatedCalls, runs_inline
from evaluators.results import ErrorResult, NumericResult
from evaluators.runner import EvaluationRunner
from evaluators.spec import BoundEvaluator
from evaluators.trajectory import Trajectory

TRAJECTORY = Trajectory("t1", "svc", None, None, None, None, False, 2.5, 0, ())
TIMEOUT = 0.2


class Gate(Evaluator[NoCriteria, EvaluatorConfig]):
    """Blocks in ``evaluate`` until ``release`` is set (a hung plug-in)."""

    id = "gate"
    release: ClassVar[threading.Event]
    calls: ClassVar[int] = 0

    def evaluate(self, trajectory: Trajectory, criteria: NoCriteria) -> NumericResult:
        type(self).calls += 1
        type(self).release.wait(30)
        return NumericResult(score=1.0)


class Quick(Evaluator[NoCriteria, EvaluatorConfig]):
    id = "quick"

    def evaluate(self, trajectory: Trajectory, criteria: NoCriteria) -> NumericResult:
        return NumericResult(score=0.5)


class Forever(Evaluator[NoCriteria, EvaluatorConfig]):
    """An async plug-in that never finishes."""

    id = "forever"

    async def evaluate(self, trajectory: Trajectory, criteria: NoCriteria) -> NumericResult:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


def bound(evaluator: Evaluator[Any, Any], id_: str) -> BoundEvaluator:
    return BoundEvaluator("spec", id_, evaluator, NoCriteria(), None)


@pytest.fixture
def gate() -> Iterator[Gate]:
    release = threading.Event()
    cls = type("HungGate", (Gate,), {"release": release, "calls": 0})
    yield cls(EvaluatorConfig())
    release.set()


def test_a_hung_plugin_times_out_and_the_others_still_run(gate: Gate) -> None:
    quick = Quick(EvaluatorConfig())
    with EvaluationRunner(timeout_s=TIMEOUT) as runner:
        started = time.monotonic()
        first = runner.run(TRAJECTORY, [bound(gate, "gate"), bound(quick, "quick")])
        took_first = time.monotonic() - started
        started = time.monotonic()
        second = runner.run(TRAJECTORY, [bound(gate, "gate"), bound(quick, "quick")])
        took_second = time.monotonic() - started
    assert isinstance(first[0].result, ErrorResult)
    assert first[0].result.error.startswith("EvaluatorTimeout: evaluate() did not return")
    assert first[1].result == NumericResult(score=0.5)
    assert TIMEOUT <= took_first < TIMEOUT + 2
    # The stuck call still holds the evaluator: the next one fails at once, not queued.
    assert isinstance(second[0].result, ErrorResult)
    assert second[0].result.error.startswith("EvaluatorBusy")
    assert took_second < TIMEOUT
    assert second[1].result == NumericResult(score=0.5)
    assert type(gate).calls == 1


def test_the_evaluator_recovers_when_its_stuck_call_returns(gate: Gate) -> None:
    with EvaluationRunner(timeout_s=TIMEOUT) as runner:
        (timed_out,) = runner.run(TRAJECTORY, [bound(gate, "gate")])
        type(gate).release.set()
        deadline = time.monotonic() + 5
        while True:  # the thread finishes the stuck call shortly after the release
            (again,) = runner.run(TRAJECTORY, [bound(gate, "gate")])
            if not isinstance(again.result, ErrorResult) or time.monotonic() > deadline:
                break
            time.sleep(0.01)
    assert isinstance(timed_out.result, ErrorResult)
    assert again.result == NumericResult(score=1.0)


def test_an_async_plugin_is_cancelled_at_the_timeout() -> None:
    forever = Forever(EvaluatorConfig())
    with EvaluationRunner(timeout_s=TIMEOUT) as runner:
        (outcome,) = runner.run(TRAJECTORY, [bound(forever, "forever")])
        deadline = time.monotonic() + 5
        while True:  # the worker's own wait_for cancels the coroutine, freeing the thread
            (next_call,) = runner.run(TRAJECTORY, [bound(forever, "forever")])
            assert isinstance(next_call.result, ErrorResult)
            if not next_call.result.error.startswith("EvaluatorBusy"):
                break
            assert time.monotonic() < deadline, "the never-ending coroutine was not cancelled"
            time.sleep(0.01)
    assert isinstance(outcome.result, ErrorResult)
    assert "did not return" in outcome.result.error
    assert "did not return" in next_call.result.error  # a new call, timed out in turn


def test_plugin_exceptions_still_become_error_results() -> None:
    class Broken(Quick):
        def evaluate(self, trajectory: Trajectory, criteria: NoCriteria) -> NumericResult:
            raise KeyError("tool")

    with EvaluationRunner(timeout_s=TIMEOUT) as runner:
        (outcome,) = runner.run(TRAJECTORY, [bound(Broken(EvaluatorConfig()), "broken")])
    assert outcome.result == ErrorResult(error="KeyError: 'tool'")


def test_builtins_run_inline_and_plugins_on_their_own_thread() -> None:
    assert runs_inline(Latency(EvaluatorConfig()))
    assert not runs_inline(Quick(EvaluatorConfig()))
    seen: list[str] = []

    class Where(Quick):
        def evaluate(self, trajectory: Trajectory, criteria: NoCriteria) -> NumericResult:
            seen.append(threading.current_thread().name)
            return NumericResult(score=1.0)

    with EvaluationRunner(timeout_s=TIMEOUT) as runner:
        runner.run(TRAJECTORY, [bound(Where(EvaluatorConfig()), "where")])
    with EvaluationRunner() as runner:  # no timeout: inline, as before
        runner.run(TRAJECTORY, [bound(Where(EvaluatorConfig()), "where")])
    assert seen == ["evald-evaluator-Where", threading.current_thread().name]


def wait_for_threads(calls: IsolatedCalls, count: int) -> int:
    deadline = time.monotonic() + 5
    while calls.threads != count and time.monotonic() < deadline:
        time.sleep(0.01)
    return calls.threads


def test_idle_threads_exit() -> None:
    calls = IsolatedCalls(timeout=1.0, idle_exit=0.05)
    assert calls.call(Quick(EvaluatorConfig()), lambda: 42) == 42
    assert wait_for_threads(calls, 0) == 0


def test_an_async_evaluator_keeps_its_loop_while_it_lives() -> None:
    # A client bound to the loop (httpx.AsyncClient …) must survive a quiet minute.
    class Bound(Quick):
        def __init__(self, config: EvaluatorConfig) -> None:
            super().__init__(config)
            self.loop: asyncio.AbstractEventLoop | None = None

        async def evaluate(self, trajectory: Trajectory, criteria: NoCriteria) -> NumericResult:
            loop = asyncio.get_running_loop()
            assert self.loop in (None, loop), "a new event loop: state bound to the old one breaks"
            self.loop = loop
            return NumericResult(score=1.0)

    calls = IsolatedCalls(timeout=1.0, idle_exit=0.05)
    evaluator = Bound(EvaluatorConfig())
    call = partial(evaluator.evaluate, TRAJECTORY, NoCriteria())
    assert calls.call(evaluator, call) == NumericResult(score=1.0)
    time.sleep(0.2)  # several idle periods: the thread stays, with its loop
    assert calls.call(evaluator, call) == NumericResult(score=1.0)
    del evaluator, call
    gc.collect()
    assert wait_for_threads(calls, 0) == 0  # gone with its evaluator (a spec reload)


def test_a_plugin_raising_system_exit_is_its_error_not_the_end() -> None:
    class Quits(Quick):
        def evaluate(self, trajectory: Trajectory, criteria: NoCriteria) -> NumericResult:
            raise SystemExit(0)

    with EvaluationRunner(timeout_s=TIMEOUT) as runner:
        (outcome,) = runner.run(TRAJECTORY, [bound(Quits(EvaluatorConfig()), "quits")])
    assert outcome.result == ErrorResult(error="EvaluatorAborted: SystemExit: 0")


def test_after_an_async_timeout_the_next_call_runs() -> None:
    class SlowOnce(Quick):
        calls = 0

        async def evaluate(self, trajectory: Trajectory, criteria: NoCriteria) -> NumericResult:
            type(self).calls += 1
            await asyncio.sleep(5 if type(self).calls == 1 else 0)
            return NumericResult(score=1.0)

    slow = SlowOnce(EvaluatorConfig())
    with EvaluationRunner(timeout_s=0.1) as runner:
        (first,) = runner.run(TRAJECTORY, [bound(slow, "slow")])
        (second,) = runner.run(TRAJECTORY, [bound(slow, "slow")])
    assert isinstance(first.result, ErrorResult)
    assert first.result.error.startswith("EvaluatorTimeout")
    assert second.result == NumericResult(score=1.0)  # not EvaluatorBusy


def test_replay_with_a_hung_plugin_finishes_and_exits(tmp_path: Path) -> None:
    plugin = tmp_path / "hang.py"
    plugin.write_text(
        textwrap.dedent(
            """
            import time
            from evaluators.base import Evaluator, EvaluatorConfig, NoCriteria
            from evaluators.results import NumericResult

            class Hang(Evaluator[NoCriteria, EvaluatorConfig]):
                id = "hang"

                def evaluate(self, trajectory, criteria):
                    time.sleep(3600)
                    return NumericResult(score=1.0)
            """
        )
    )
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"id: all\nmatch: {{}}\nevaluators:\n  - file://{plugin}:Hang\n")
    config = tmp_path / "evald.yaml"
    config.write_text(f"specs: [{spec}]\nevaluation: {{timeout: 200ms}}\n")
    golden = GOLDEN / "traces" / "pydantic-ai"
    results = tmp_path / "results.jsonl"
    started = time.monotonic()
    command = [sys.executable, "-m", "collector.cli.command", "replay", str(golden)]
    command += ["--config", str(config), "--results-out", str(results)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert time.monotonic() - started < 30, "replay waited for the hung evaluator"
    assert done.returncode == 1, done.stderr  # the gate fails (the always-on `failure`)
    hang_lines = [line for line in results.read_text().splitlines() if '"hang"' in line]
    assert len(hang_lines) == 10  # every trace has its (error) result
    assert sum('"EvaluatorTimeout' in line for line in hang_lines) == 1
    assert sum('"EvaluatorBusy' in line for line in hang_lines) == 9


def test_stuck_calls_are_bounded_across_spec_reloads(gate: Gate) -> None:
    # Every reload builds new evaluator objects of the same hung plug-in: each would
    # get a thread to hang in. Past max_stuck, plug-in calls fail at once instead.
    calls = IsolatedCalls(timeout=0.05, max_stuck=3)
    reloaded = [type(gate)(EvaluatorConfig()) for _ in range(6)]
    errors = []
    for evaluator in reloaded:
        try:
            calls.call(evaluator, partial(evaluator.evaluate, TRAJECTORY, NoCriteria()))
        except (EvaluatorTimeout, EvaluatorBusy) as exc:
            errors.append(type(exc).__name__)
    assert errors == ["EvaluatorTimeout"] * 3 + ["EvaluatorBusy"] * 3
    assert calls.stuck == 3 and calls.threads == 3 and type(gate).calls == 3
    quick = Quick(EvaluatorConfig())
    with pytest.raises(EvaluatorBusy, match="3 plug-in calls timed out"):
        calls.call(quick, partial(quick.evaluate, TRAJECTORY, NoCriteria()))
    type(gate).release.set()  # the hung calls return: plug-ins run again
    deadline = time.monotonic() + 5
    while calls.stuck and time.monotonic() < deadline:
        time.sleep(0.01)
    assert calls.stuck == 0
    assert calls.call(quick, partial(quick.evaluate, TRAJECTORY, NoCriteria())).score == 0.5
    calls.close()
