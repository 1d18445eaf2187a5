"""Spec reloads: SIGHUP and file changes, a broken file keeping the old specs, in-flight
traces evaluated, the counters and the log line."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from support.daemon_harness import GOLDEN, poll, running_daemon
from support.serve_process import EVALD, Served, loopback_config, start_serve

from collector.config.settings import Config
from collector.processing.spec_watch import SpecWatcher, fingerprint
from collector.processing.wiring import ActiveSpecs
from collector.telemetry.registry import Telemetry

if TYPE_CHECKING:
    from support.loop import LoopThread

GOOD = """
id: {id}
match: {{service: shop}}
reference: {{trajectory: [refund]}}
evaluators: [trajectory_recall]
"""
BROKEN = "id: broken\nevaluators: [trajectory_recal]\n"


class Specs:
    """ActiveSpecs over a spec directory in ``tmp_path``, with its telemetry."""

    def __init__(self, tmp_path: Path, **config: object) -> None:
        self.dir = tmp_path / "specs"
        self.dir.mkdir()
        self.write("a.yaml", GOOD.format(id="first"))
        self.telemetry = Telemetry()
        raw = {"specs": [str(self.dir / "*.yaml")], "specs_watch_interval": 0, **config}
        self.active = ActiveSpecs(Config.model_validate(raw), self.telemetry)

    def write(self, name: str, text: str, mtime_ns: int | None = None) -> Path:
        path = self.dir / name
        path.write_text(text)
        if mtime_ns is not None:  # a new mtime even on filesystems with coarse timestamps
            os.utime(path, ns=(mtime_ns, mtime_ns))
        return path

    def ids(self) -> tuple[str, ...]:
        return self.active().ids

    def reloads(self, result: str) -> float:
        value = self.telemetry.registry.get_sample_value(
            "evald_config_reloads_total", {"result": result}
        )
        return value or 0.0


@pytest.fixture
def specs(tmp_path: Path) -> Specs:
    return Specs(tmp_path)


def test_a_broken_file_keeps_the_old_specs_logs_and_counts(
    specs: Specs, caplog: pytest.LogCaptureFixture
) -> None:
    specs.write("b.yaml", BROKEN)
    with caplog.at_level(logging.ERROR, logger="collector.processing.wiring"):
        assert specs.active.reload() is False
    assert specs.ids() == ("first",)
    assert specs.reloads("failure") == 1 and specs.reloads("success") == 0
    assert specs.telemetry.registry.get_sample_value("evald_specs_loaded") == 1
    [record] = caplog.records
    assert "spec reload failed, keeping the 1 active specs" in record.getMessage()
    assert "b.yaml" in record.getMessage() and "trajectory_recal" in record.getMessage()

    specs.write("b.yaml", GOOD.format(id="second"))
    assert specs.active.reload() is True
    assert specs.ids() == ("first", "second")
    assert specs.reloads("success") == 1
    assert specs.telemetry.registry.get_sample_value("evald_specs_loaded") == 2


def test_reload_if_changed_reloads_once_per_change(specs: Specs) -> None:
    assert specs.active.reload_if_changed() is None  # nothing changed since start
    specs.write("a.yaml", GOOD.format(id="renamed"), mtime_ns=1_000_000_000)
    assert specs.active.reload_if_changed() is True
    assert specs.ids() == ("renamed",)
    assert specs.active.reload_if_changed() is None

    specs.write("a.yaml", BROKEN, mtime_ns=2_000_000_000)
    assert specs.active.reload_if_changed() is False
    assert specs.active.reload_if_changed() is None  # a broken file is reported once
    assert specs.reloads("failure") == 1 and specs.ids() == ("renamed",)

    specs.write("a.yaml", GOOD.format(id="fixed"), mtime_ns=3_000_000_000)
    assert specs.active.reload_if_changed() is True
    assert specs.ids() == ("fixed",)


def test_new_and_removed_files_matching_the_glob_are_changes(specs: Specs) -> None:
    added = specs.write("b.yaml", GOOD.format(id="second"))
    assert specs.active.reload_if_changed() is True
    assert specs.ids() == ("first", "second")
    added.unlink()
    assert specs.active.reload_if_changed() is True
    assert specs.ids() == ("first",)


def test_a_dataset_change_reloads(specs: Specs) -> None:
    dataset = specs.dir.parent / "items.yaml"
    dataset.write_text("- {input: refund please, reference: {trajectory: [refund]}}\n")
    specs.write("d.yaml", GOOD.format(id="cases") + "dataset: ../items.yaml\n")
    assert specs.active.reload_if_changed() is True
    assert specs.active.reload_if_changed() is None  # the new dataset is watched, unchanged
    assert specs.active().get("cases").cases == 1  # type: ignore[union-attr]

    dataset.write_text("- {input: refund please}\n- {input: refund now}\n")
    os.utime(dataset, ns=(5_000_000_000, 5_000_000_000))
    assert specs.active.reload_if_changed() is True
    assert specs.active().get("cases").cases == 2  # type: ignore[union-attr]


def test_the_daemon_watches_files_and_keeps_in_flight_traces(
    tmp_path: Path, loop_thread: LoopThread
) -> None:
    spec_dir = tmp_path / "specs"
    spec_dir.mkdir()
    (spec_dir / "a.yaml").write_text(GOOD.format(id="before"))
    config = Config.model_validate(
        {
            "receivers": {"otlp": {"grpc": {"endpoint": "127.0.0.1:0"},
                                   "http": {"endpoint": "127.0.0.1:0"}}},
            "admin": {"endpoint": "127.0.0.1:0"},
            "specs": [str(spec_dir / "*.yaml")],
            "specs_watch_interval": "10ms",
            "outputs": {"results_file": str(tmp_path / "results.jsonl")},
        }
    )  # fmt: skip
    correct = GOLDEN / "pydantic-ai" / "correct.jsonl"
    with running_daemon(config, loop_thread) as running:
        running.post_file(correct)  # held by the assembler while specs change
        assert running.metric("evald_traces_in_flight") == 1
        (spec_dir / "a.yaml").write_text(
            "id: after\nmatch: {agent: music_store_support}\n"
            "reference: {trajectory: [lookup_invoice, lookup_track, refund]}\n"
            "evaluators: [trajectory_recall]\n"
        )
        os.utime(spec_dir / "a.yaml", ns=(7_000_000_000, 7_000_000_000))
        assert poll(lambda: running.metric("evald_config_reloads_total", result="success") == 1)
        assert running.daemon.specs().ids == ("after",)
        running.complete_traces()
        labels = {
            "spec": "after",
            "evaluator": "trajectory_recall",
            "outcome": "none",
            "service": "music-store-support-pydantic-ai",
            "agent": "music_store_support",
        }
        assert running.metric("evald_evaluations_total", **labels) == 1
        assert running.metric("evald_traces_dropped_total", reason="shutdown_timeout") == 0


def test_the_watcher_lifecycle(loop_thread: LoopThread) -> None:
    calls: list[int] = []
    watcher = SpecWatcher(lambda: bool(calls.append(1)), interval=0.001)
    loop_thread.run(watcher.shutdown())  # before start: a no-op
    for _ in range(2):  # start → shutdown → start again
        before = len(calls)
        loop_thread.run(watcher.start())
        assert poll(lambda before=before: len(calls) > before + 1)  # type: ignore[misc]
        loop_thread.run(watcher.shutdown())
        loop_thread.run(watcher.shutdown())  # twice
    never: list[int] = []
    disabled = SpecWatcher(lambda: bool(never.append(1)), interval=0)
    loop_thread.run(disabled.start())
    loop_thread.run(asyncio.sleep(0.01))  # time enough for a few polls, were there any
    loop_thread.run(disabled.shutdown())
    assert never == []


def read_until(served: Served, text: str) -> str:
    """The daemon's log up to the first line containing ``text`` (the test timeout bounds it)."""
    assert served.proc.stderr is not None
    seen = []
    for line in served.proc.stderr:
        seen.append(line)
        if text in line:
            return "".join(seen)
    raise AssertionError(f"evald exited without logging {text!r}: {''.join(seen)}")


@pytest.mark.timeout(90)
def test_sighup_reloads_a_running_daemon(tmp_path: Path, serve_with: list[Served]) -> None:
    spec_dir = tmp_path / "specs"
    spec_dir.mkdir()
    (spec_dir / "a.yaml").write_text(GOOD.format(id="first"))
    # Two worker processes (ADR 0018): the front passes SIGHUP on; each worker reloads.
    config = loopback_config(
        tmp_path,
        specs=f"['{spec_dir}/*.yaml']",
        specs_watch_interval="0",
        pipeline="{workers: 2}",
    )
    served = start_serve([str(EVALD), "serve", "--config", str(config)])
    serve_with.append(served)

    (spec_dir / "b.yaml").write_text(BROKEN)
    served.proc.send_signal(signal.SIGHUP)
    log = read_until(served, "spec reload failed")
    assert "keeping the 1 active specs" in log and "b.yaml" in log
    for worker in ("0", "1"):  # each worker reloads on its own: the other may be a moment later
        wanted = f'evald_config_reloads_total{{result="failure",worker="{worker}"}} 1.0'
        assert metrics_show(served, wanted)

    (spec_dir / "b.yaml").write_text(GOOD.format(id="second"))
    served.proc.send_signal(signal.SIGHUP)
    read_until(served, "specs reloaded: 2 active")
    for worker in ("0", "1"):
        assert metrics_show(
            served, f'evald_config_reloads_total{{result="success",worker="{worker}"}} 1.0'
        )
        assert metrics_show(served, f'evald_specs_loaded{{worker="{worker}"}} 2.0')


def metrics_show(served: Served, line: str, within_s: float = 10.0) -> bool:
    """Whether ``line`` appears on /metrics within ``within_s`` seconds."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if line in served.get("/metrics")[1]:
            return True
        time.sleep(0.05)
    return False


def test_a_spec_directory_that_cannot_be_listed_is_a_change_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # E.g. removed between is_dir() and iterdir(): the watch polls this every
    # interval, and an exception here used to end it for good.
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "a.yaml").write_text("id: a\n")
    before = fingerprint([specs])
    listing = Path.iterdir

    def unlistable(path: Path) -> Iterator[Path]:
        if path == specs:
            raise FileNotFoundError(2, "No such file or directory", str(path))
        return listing(path)

    monkeypatch.setattr(Path, "iterdir", unlistable)
    after = fingerprint([specs])
    assert after == {specs: None}
    assert after != before


def test_an_unreadable_spec_directory_is_a_failed_reload(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Not a SpecError: it escaped reload(), ended the file watch and, on SIGHUP,
    # vanished into an executor future nobody reads.
    specs = Specs(tmp_path, specs=[str(tmp_path / "specs")])
    listing = Path.iterdir

    def unlistable(path: Path) -> Iterator[Path]:
        if path == specs.dir:
            raise PermissionError(13, "Permission denied", str(path))
        return listing(path)

    monkeypatch.setattr(Path, "iterdir", unlistable)
    assert specs.active.reload_if_changed() is False
    assert specs.ids() == ("first",)
    assert specs.reloads("failure") == 1
