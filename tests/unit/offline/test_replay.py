"""``evald replay`` as a CI gate: exit codes, --fail-under, corrupt records, workers.

Traces are synthetic GenAI agent runs built here (``agent_run``): a root
``invoke_agent`` span with the user's question and one ``execute_tool`` span per
tool, one trace per trace-time second, so every test states its own inputs.
"""

from __future__ import annotations

import io
import json
import os
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from support.agent_runs import EXTRA, GOOD, SPEC, T0, agent_run, framed, varint
from support.paths import GOLDEN

from collector.cli.command import main
from collector.config.settings import Config
from collector.decode import decode_json, decode_protobuf
from collector.offline import workers as replay_workers
from collector.offline.progress import ProgressLine
from collector.offline.replay import Shard


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "shop.yaml"
    path.write_text(SPEC)
    return path


def replay(spec: Path, *args: str | Path) -> int:
    return main(["--log-level", "ERROR", "replay", *map(str, args), "--spec", str(spec)])


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def json_report(spec: Path, tmp_path: Path, *args: str | Path) -> tuple[int, dict]:  # type: ignore[type-arg]
    out = tmp_path / "report.json"
    code = replay(spec, *args, "--report", "json", "--report-out", out)
    return code, json.loads(out.read_text())


# --- exit codes ------------------------------------------------------------------


def test_exit_0_when_every_check_holds(tmp_path: Path, spec: Path) -> None:
    runs = write(tmp_path / "good.pb", framed(*(agent_run(n) for n in range(1, 4))))
    assert replay(spec, runs) == 0


def test_exit_1_when_a_result_misses_its_threshold(tmp_path: Path, spec: Path) -> None:
    runs = write(tmp_path / "runs.pb", framed(agent_run(1), agent_run(2, EXTRA)))
    code, report = json_report(spec, tmp_path, runs)
    assert code == 1
    failing = report["failing_traces"]["traces"]
    assert [t["trace_id"] for t in failing] == [(2).to_bytes(16, "big").hex()]
    assert {c["evaluator"] for c in failing[0]["failed"]} == {
        "trajectory_exact_match", "trajectory_precision"}  # fmt: skip


def test_fail_under_gates_on_the_mean_score(tmp_path: Path, spec: Path) -> None:
    # 9 good runs and 1 with an extra call: exact match mean 0.9, precision mean 0.9667.
    runs = write(tmp_path / "runs.pb",
                 framed(*(agent_run(n) for n in range(1, 10)), agent_run(10, EXTRA)))  # fmt: skip
    assert replay(spec, runs) == 1
    lenient = ["--fail-under", "trajectory_exact_match=0.85",
               "--fail-under", "shop-refund/trajectory_precision=0.95"]  # fmt: skip
    assert replay(spec, runs, *lenient) == 0
    assert replay(spec, runs, *lenient, "--fail-under", "trajectory_exact_match=0.95") == 1


def test_fail_under_is_an_upper_bound_where_lower_is_better(tmp_path: Path, spec: Path) -> None:
    runs = write(tmp_path / "runs.pb", framed(agent_run(1), agent_run(2)))  # latency 0.1 s each
    assert replay(spec, runs, "--fail-under", "latency=0.2") == 0
    code, report = json_report(spec, tmp_path, runs, "--fail-under", "latency=0.05")
    assert code == 1
    (check,) = [c for c in report["gate"] if not c["ok"]]
    assert check["evaluator"] == "latency" and "> 0.05" in check["reason"]


def test_fail_under_without_any_score_fails(tmp_path: Path, spec: Path) -> None:
    other = tmp_path / "other.yaml"
    other.write_text(SPEC.replace("shop-refund", "other").replace("shop-agent", "nobody"))
    runs = write(tmp_path / "runs.pb", framed(agent_run(1)))
    args = ["--spec", str(other), "--fail-under", "other/trajectory_exact_match=0.5"]
    assert replay(spec, runs, *args) == 1


def test_evaluator_errors_fail_the_gate(tmp_path: Path) -> None:
    (tmp_path / "boom.py").write_text(
        "from evaluators.base import Evaluator, EvaluatorConfig, NoCriteria\n"
        "class Boom(Evaluator[NoCriteria, EvaluatorConfig]):\n"
        "    id = 'boom'\n"
        "    def evaluate(self, trajectory, criteria):\n"
        "        raise RuntimeError('judge unreachable')\n"
    )
    spec = write(tmp_path / "boom.yaml", b"id: boom-spec\nevaluators: ['file://boom.py:Boom']\n")
    runs = write(tmp_path / "runs.pb", framed(agent_run(1)))
    code, report = json_report(spec, tmp_path, runs)
    assert code == 1
    (metric,) = [m for m in report["metrics"] if m["evaluator"] == "boom"]
    assert metric["errors"] == 1 and metric["mean"] is None
    assert "judge unreachable" in report["failing_traces"]["traces"][0]["failed"][0]["error"]


def test_usage_and_input_errors_exit_2(
    tmp_path: Path, spec: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = write(tmp_path / "runs.pb", framed(agent_run(1)))
    assert replay(spec, tmp_path / "missing.pb") == 2
    assert replay(spec, runs, "--fail-under", "no_such_evaluator=1") == 2
    assert "no_such_evaluator" in capsys.readouterr().err
    assert replay(spec, runs, "--report", "json", "--report-out", tmp_path) == 2  # a directory
    broken = write(tmp_path / "broken.yaml", b"id: x\nevaluators: [nope]\n")
    assert replay(broken, runs) == 2
    for bad in (["--fail-under", "exact"], ["--fail-under", "x=high"], ["--workers", "-1"],
                ["--report", "html"]):  # fmt: skip
        with pytest.raises(SystemExit) as exit_info:
            replay(spec, runs, *bad)
        assert exit_info.value.code == 2


def test_input_without_traces_is_an_input_error_not_a_pass(
    tmp_path: Path, spec: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = write(tmp_path / "empty.jsonl", b"")
    assert replay(spec, empty) == 2
    err = capsys.readouterr()
    assert f"no trace in {str(empty)!r} (1 file(s) read)" in err.err
    assert "gate: PASS" not in err.out


# --- corrupt records ---------------------------------------------------------------


def test_a_corrupt_json_line_is_skipped_counted_and_named(tmp_path: Path, spec: Path) -> None:
    golden = GOLDEN / "traces" / "pydantic-ai"
    lines = (golden / "correct.jsonl").read_bytes().splitlines()
    path = write(tmp_path / "t.jsonl", b"\n".join([lines[0], b'{"resourceSpans": [', *lines[1:]]))
    code, report = json_report(spec, tmp_path, path)
    assert report["corrupt_records"]["total"] == 1
    assert report["corrupt_records"]["listed"][0].startswith(f"{path}:2: not valid JSON")
    assert report["totals"]["traces"] == 1 and code == 0


def test_a_corrupt_first_line_does_not_swallow_the_file(tmp_path: Path, spec: Path) -> None:
    golden = GOLDEN / "traces" / "pydantic-ai" / "correct.jsonl"
    path = write(tmp_path / "t.jsonl", b"{not json\n" + golden.read_bytes())
    _, report = json_report(spec, tmp_path, path)
    assert report["corrupt_records"]["listed"][0].startswith(f"{path}:1: ")
    assert report["totals"]["traces"] == 1


def test_a_corrupt_framed_record_is_skipped_by_offset(tmp_path: Path, spec: Path) -> None:
    first, garbage = agent_run(1), b"\x0a\xff\xff\xff"  # a length that overruns the message
    path = write(tmp_path / "t.pb", framed(first, garbage, agent_run(2)))
    _, report = json_report(spec, tmp_path, path)
    offset = len(varint(len(first))) + len(first)
    assert report["corrupt_records"]["listed"][0].startswith(f"{path}@{offset}: ")
    assert report["totals"]["traces"] == 2


def test_truncated_framing_skips_the_rest_of_the_file(tmp_path: Path, spec: Path) -> None:
    data = framed(agent_run(1), agent_run(2))
    path = write(tmp_path / "t.pb", data[:-10])
    _, report = json_report(spec, tmp_path, path)
    assert report["totals"]["traces"] == 1
    assert "rest of the file skipped" in report["corrupt_records"]["listed"][0]


@pytest.mark.parametrize("workers", ["1", "2"])
def test_strict_makes_a_corrupt_record_fatal(
    tmp_path: Path, spec: Path, capsys: pytest.CaptureFixture[str], workers: str
) -> None:
    path = write(tmp_path / "t.pb", framed(agent_run(1), b"\x0a\xff\xff\xff", agent_run(2)))
    assert replay(spec, path, "--strict", "--workers", workers) == 2
    assert f"{path}@" in capsys.readouterr().err


# --- workers, outputs, progress ----------------------------------------------------


def test_workers_produce_the_same_report_and_results(tmp_path: Path, spec: Path) -> None:
    runs = [agent_run(n, EXTRA if n % 4 == 0 else GOOD) for n in range(1, 41)]
    write(tmp_path / "a.pb", framed(*runs[:25]))
    write(tmp_path / "b.pb", framed(*runs[25:]))
    outputs = {}
    for workers in ("1", "2"):
        out = tmp_path / f"w{workers}"
        out.mkdir()
        files = ["--report-out", out / "r.json", "--results-out", out / "results.jsonl"]
        code = replay(spec, tmp_path / "*.pb", "--workers", workers, "--report", "json", *files)
        report = json.loads((out / "r.json").read_text())
        results = sorted((out / "results.jsonl").read_text().splitlines())
        outputs[workers] = (code, report, [json.loads(r)["trace_id"] for r in results])
    assert outputs["1"] == outputs["2"]
    assert outputs["2"][1]["totals"]["traces"] == 40
    assert outputs["2"][1]["totals"]["files"] == 2


@pytest.mark.parametrize("workers", [2, 3])
def test_a_worker_that_dies_ends_the_run_without_waiting_for_this_process_shard(
    tmp_path: Path,
    spec: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    workers: int,
) -> None:
    # This process replays shard 0 itself; a child's death must stop it, not wait for
    # it. The last child dies; the others, like shard 0, stand for long shards (evald
    # stops them), and the error names the one that failed, not one evald stopped.
    real = replay_workers._run_shard
    deadline = time.monotonic() + 30

    def shard_that_dies_or_waits(*args: Any, **kwargs: Any) -> Any:
        shard = args[1]
        if shard.index == workers - 1:
            os._exit(3)  # a forked child: as if killed
        while time.monotonic() < deadline:  # a long shard, reporting progress
            kwargs["progress"](0)
            time.sleep(0.01)
        return real(*args, **kwargs)  # not stopped: the run then succeeds and the test fails

    monkeypatch.setattr(replay_workers, "_run_shard", shard_that_dies_or_waits)
    # Forked, so that the children run the patched shard (in the full suite this process
    # has other threads, and evald would spawn; the children take no lock here).
    monkeypatch.setattr(replay_workers, "_start_method", lambda: "fork")
    runs = write(tmp_path / "runs.pb", framed(*(agent_run(n) for n in range(1, 9))))
    assert replay(spec, runs, "--workers", str(workers)) == 2
    assert f"evald-replay-{workers - 1} exited with 3" in capsys.readouterr().err
    assert time.monotonic() < deadline


def test_a_worker_stops_when_evald_is_gone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Killed or crashed, evald merges nothing: a child re-parented stops at its next report.
    parent = [os.getppid()]
    monkeypatch.setattr(replay_workers.os, "getppid", lambda: parent[0])
    monkeypatch.setattr(replay_workers, "_POLL_S", 0.0)

    def shard(*args: Any, **kwargs: Any) -> Any:
        kwargs["progress"](1)  # evald is there
        parent[0] = 1  # evald died: the child now belongs to init
        kwargs["progress"](2)
        raise AssertionError("the worker went on")

    monkeypatch.setattr(replay_workers, "_run_shard", shard)
    counter = SimpleNamespace(value=0)
    job = replay_workers.ReplayJob(Config(), ("runs.pb",), workers=2)
    with pytest.raises(SystemExit) as stopped:
        replay_workers._worker(job, 1, tmp_path, {}, counter)
    assert (stopped.value.code, counter.value) == (1, 2)


def test_results_out_holds_this_run_only(tmp_path: Path, spec: Path) -> None:
    runs = write(tmp_path / "runs.pb", framed(agent_run(1), agent_run(2)))
    out = tmp_path / "results.jsonl"
    for _ in range(2):
        replay(spec, runs, "--results-out", out)
        assert len(out.read_text().splitlines()) == 2 * 4  # latency, failure + 2 spec evaluators


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_shows_traces_per_second_on_a_terminal_only() -> None:
    now = [100.0]
    terminal = FakeTerminal()
    progress = ProgressLine(terminal, interval=0.5, clock=lambda: now[0])
    progress.update(10)  # too early: nothing drawn
    now[0] += 2.0
    progress.update(5000)
    assert terminal.getvalue() == "\rreplay: 5,000 traces  2,500 traces/s  0:02"
    progress.close()
    assert terminal.getvalue().endswith("\r")
    piped = io.StringIO()
    quiet = ProgressLine(piped, interval=0.0, clock=lambda: now[0])
    now[0] += 1.0
    quiet.update(10)
    quiet.close()
    assert piped.getvalue() == ""


def test_shards_split_traces_before_attributes_are_decoded() -> None:
    body = agent_run(7)
    everything = decode_protobuf(body).spans
    shards = [Shard(index, 3) for index in range(3)]
    parts = [decode_protobuf(body, keep=shard.owns).spans for shard in shards]
    assert sorted(len(part) for part in parts) == [0, 0, len(everything)]  # one trace, whole
    golden = GOLDEN / "traces" / "pydantic-ai" / "multi_turn.jsonl"
    lines = golden.read_bytes().splitlines()
    spans = [s for line in lines for s in decode_json(line).spans]
    split = [s for shard in shards for line in lines
             for s in decode_json(line, keep=shard.owns).spans]  # fmt: skip
    assert sorted(s.span_id for s in split) == sorted(s.span_id for s in spans)
    assert all(
        Shard(0, 3).owns(s.trace_id) for s in decode_json(lines[0], keep=shards[0].owns).spans
    )


def test_spawned_workers_give_the_same_result(
    tmp_path: Path, spec: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Spawn is what a process with other threads gets (forking those is unsafe).
    monkeypatch.setattr(replay_workers, "_start_method", lambda: "spawn")
    runs = write(tmp_path / "runs.pb", framed(*(agent_run(n) for n in range(1, 9))))
    code, report = json_report(spec, tmp_path, runs, "--workers", "2")
    assert (code, report["totals"]["traces"]) == (0, 8)


def test_results_out_that_cannot_be_written_is_an_input_error(tmp_path: Path, spec: Path) -> None:
    runs = write(tmp_path / "runs.pb", framed(agent_run(1)))
    assert replay(spec, runs, "--results-out", tmp_path) == 2  # a directory: exit 2, not 1
    assert replay(spec, runs, "--trajectories-out", tmp_path) == 2


def test_an_unknown_log_level_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--log-level", "LOUD", "check"])
    assert exit_info.value.code == 2


@pytest.mark.parametrize("fmt", ["table", "json", "markdown", "junit"])
def test_reports_survive_lone_surrogates_in_trace_text(
    tmp_path: Path, spec: Path, fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # OTLP/JSON may carry "\ud800" escapes; no UTF-8 writer can encode the result.
    service = {"key": "service.name", "value": {"stringValue": "shop-agent"}}
    body = json.dumps({"resourceSpans": [{
        "resource": {"attributes": [service]},
        "scopeSpans": [{"spans": [{
            "traceId": "0" * 31 + "1", "spanId": "0" * 15 + "1", "name": "invoke_agent shop",
            "startTimeUnixNano": str(T0), "endTimeUnixNano": str(T0 + 10**8),
            "attributes": [
                {"key": "gen_ai.operation.name", "value": {"stringValue": "invoke_agent"}},
                {"key": "gen_ai.input.messages", "value": {"stringValue": json.dumps(
                    [{"role": "user", "parts": [{"type": "text", "content": "q\ud800"}]}]
                )}},
            ],
        }]}],
    }]})  # fmt: skip
    runs = write(tmp_path / "runs.json", body.encode())
    out = tmp_path / f"report.{fmt}"
    assert replay(spec, runs, "--report", fmt, "--report-out", out) == 1  # missing calls
    assert "\ufffd" in out.read_text(encoding="utf-8") + capsys.readouterr().out
