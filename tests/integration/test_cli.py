"""The `evald` command as users run it: serve (as a subprocess), check, replay."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from support.daemon_harness import poll
from support.paths import ROOT
from support.serve_process import EVALD, Served, loopback_config, start_serve

from collector.cli.command import main

pytestmark = pytest.mark.timeout(120)

GOLDEN = ROOT / "tests" / "golden" / "traces"
PYDANTIC = GOLDEN / "pydantic-ai"
LABEL_SPEC = ROOT / "tests" / "fixtures" / "specs" / "pydantic_labels.yaml"


def test_sigterm_evaluates_every_accepted_trace(tmp_path: Path, serve_with: list[Served]) -> None:
    results = tmp_path / "results.jsonl"
    config = loopback_config(
        tmp_path,
        assembly="{idle_timeout: 1h, max_trace_age: 2h}",
        outputs=f"{{results_file: {results}}}",
    )
    served = start_serve([str(EVALD), "serve", "--config", str(config)])
    serve_with.append(served)
    expected_ids = set()
    for scenario in sorted(PYDANTIC.glob("*.expected.json")):
        expected_ids.update(json.loads(scenario.read_text())["trace_ids"])
        body = scenario.with_name(scenario.name.replace(".expected.json", ".pb")).read_bytes()
        assert served.post(body) == 200
    status, text = served.get("/metrics")
    assert status == 200
    assert "evald_traces_in_flight " in text and "evald_traces_in_flight 0.0" not in text

    served.proc.send_signal(signal.SIGTERM)
    assert served.proc.wait(30) == 0

    # With several worker processes (pipeline.workers) each writes results-<n>.jsonl.
    files = [results] if results.exists() else sorted(tmp_path.glob("results-*.jsonl"))
    lines = [json.loads(line) for path in files for line in path.read_text().splitlines()]
    failure_ids = {line["trace_id"] for line in lines if line["evaluator"] == "failure"}
    assert failure_ids == expected_ids


def test_serve_reports_bad_config_with_file_and_key(tmp_path: Path) -> None:
    config = tmp_path / "bad.yaml"
    config.write_text("assembly: {idle_timeout: soon}\n")
    proc = subprocess.run(
        [str(EVALD), "serve", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 1
    assert f"{config}: assembly.idle_timeout" in proc.stderr


def test_check_accepts_the_default_config(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--config", str(ROOT / "config" / "evald.yaml")]) == 0
    assert "config OK" in capsys.readouterr().out


def test_a_closed_stdout_ends_the_command_quietly() -> None:
    # `evald check | head -0`: the reader is gone before evald writes.
    reader, writer = os.pipe()
    os.close(reader)
    try:
        command = [sys.executable, "-m", "collector.cli.command", "check"]
        done = subprocess.run(
            [*command, "--config", str(ROOT / "config" / "evald.yaml")],
            stdout=writer,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        os.close(writer)
    assert done.returncode == 1
    assert done.stderr == ""  # no traceback, no "Exception ignored" at exit


def test_check_names_the_broken_spec_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "broken.yaml"
    spec.write_text("id: x\nevaluators: [no_such_evaluator]\n")
    assert main(["check", "--spec", str(spec)]) == 1
    assert str(spec) in capsys.readouterr().err


def replay_results(
    tmp_path: Path, *inputs: Path, spec: Path = LABEL_SPEC
) -> list[dict[str, object]]:
    out = tmp_path / "results.jsonl"
    args = ["replay", *map(str, inputs), "--spec", str(spec), "--results-out", str(out)]
    main(args)
    return [json.loads(line) for line in out.read_text().splitlines()]


def scores_by_scenario(tmp_path: Path, form: str) -> dict[str, dict[str, float | None]]:
    inputs = sorted(PYDANTIC.glob(f"*.{form}"))
    results = replay_results(tmp_path, *inputs)
    scenario_of = {}
    for expected in PYDANTIC.glob("*.expected.json"):
        label = json.loads(expected.read_text())
        for trace_id in label["trace_ids"]:
            scenario_of[trace_id] = label["scenario"]
    scores: dict[str, dict[str, float | None]] = {}
    for line in results:
        if line["spec"] == "pydantic-refund":
            scenario = scenario_of[str(line["trace_id"])]
            scores.setdefault(scenario, {})[str(line["evaluator"])] = line["score"]  # type: ignore[assignment]
    return scores


@pytest.mark.parametrize("form", ["jsonl", "pb"])
def test_replay_verdicts_match_the_labels(tmp_path: Path, form: str) -> None:
    scores = scores_by_scenario(tmp_path, form)
    assert scores["correct"]["trajectory_exact_match"] == 1.0
    assert scores["extra_call"]["trajectory_exact_match"] == 0.0
    assert scores["extra_call"]["trajectory_in_order_match"] == 1.0
    assert scores["extra_call"]["trajectory_precision"] == 0.75
    assert scores["wrong_order"]["trajectory_in_order_match"] == 0.0
    assert scores["wrong_order"]["trajectory_any_order_match"] == 1.0
    assert scores["wrong_args"]["trajectory_exact_match"] == 0.0  # refund(track_id=3160)
    assert scores["parallel_calls"]["trajectory_any_order_match"] == 1.0


def test_replay_tool_sequences_match_actual_trajectories(tmp_path: Path) -> None:
    out = tmp_path / "trajectories.jsonl"
    main(["replay", str(PYDANTIC), "--trajectories-out", str(out)])
    trajectories = {
        line["trace_id"]: line for line in map(json.loads, out.read_text().splitlines())
    }
    for expected in sorted(PYDANTIC.glob("*.expected.json")):
        label = json.loads(expected.read_text())
        executed = [
            [step["name"] for step in trajectories[trace_id]["steps"]
             if step["kind"] == "tool" and step.get("executed", True)]
            for trace_id in label["trace_ids"]
        ]  # fmt: skip
        wanted = [[] for _ in label["trace_ids"]]
        for call in label["actual_trajectory"]:
            wanted[call.get("turn", 0)].append(call["tool"])
        assert executed == wanted, label["scenario"]


def test_replay_exit_codes(tmp_path: Path) -> None:
    correct = PYDANTIC / "correct.pb"
    assert main(["replay", str(correct), "--spec", str(LABEL_SPEC)]) == 0
    assert main(["replay", str(PYDANTIC / "extra_call.pb"), "--spec", str(LABEL_SPEC)]) == 1
    assert main(["replay", str(tmp_path / "missing.jsonl")]) == 2
    corrupt = tmp_path / "corrupt.jsonl"
    corrupt.write_text('{"resourceSpans": [\n')
    assert main(["replay", str(corrupt), "--strict"]) == 2


def test_make_run_starts_a_ready_daemon(tmp_path: Path, serve_with: list[Served]) -> None:
    config = loopback_config(tmp_path)
    served = start_serve(["make", "--no-print-directory", "run", f"CONFIG={config}"], cwd=ROOT)
    serve_with.append(served)
    assert served.get("/readyz")[0] == 200
    assert served.get("/healthz")[0] == 200


def test_a_daemon_that_never_got_ready_is_not_left_running(tmp_path: Path) -> None:
    # (a child that outlives the command, as `make run`'s daemon would)
    pid_file = tmp_path / "child.pid"
    script = f"sleep 30 >/dev/null 2>&1 & echo $! > {pid_file}; exit 3"
    with pytest.raises(AssertionError, match="exited before it was ready"):
        start_serve(["sh", "-c", script])
    child = int(pid_file.read_text())
    assert poll(lambda: not Path(f"/proc/{child}").exists() or _zombie(child), 5.0)


def _zombie(pid: int) -> bool:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    return True
