"""Nothing to evaluate is an error, never a pass: spec globs that match no file, input
without a trace. And `evald check` warns about session specs that hold every service."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.paths import GOLDEN

from collector.cli.command import main
from collector.config.settings import Config
from collector.processing.wiring import ActiveSpecs
from collector.telemetry.registry import Telemetry

TRACE = GOLDEN / "traces" / "pydantic-ai" / "correct.jsonl"
SPEC = """
id: {id}
scope: {scope}
match: {match}
reference: {{trajectory: [lookup_invoice]}}
evaluators: [trajectory_recall]
"""


def spec(directory: Path, name: str = "a", scope: str = "trace", match: str = "{}") -> Path:
    path = directory / f"{name}.yaml"
    path.write_text(SPEC.format(id=name, scope=scope, match=match))
    return path


def test_a_spec_glob_matching_nothing_fails_the_replay_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pattern = str(tmp_path / "spesc" / "*.yaml")
    assert main(["replay", str(TRACE), "--spec", pattern]) == 2
    out, err = capsys.readouterr()
    assert f"--spec {pattern!r} matches no file" in err
    assert "gate" not in out


def test_one_empty_glob_among_good_ones_still_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = spec(tmp_path)
    assert main(["replay", str(TRACE), "--spec", str(good), "--spec", "nowhere/*.yml"]) == 2
    assert "'nowhere/*.yml' matches no file" in capsys.readouterr().err


def test_a_config_specs_glob_matching_nothing_is_named_with_its_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "evald.yaml"
    config.write_text("specs: [specs/*.yaml]\n")
    assert main(["replay", str(TRACE), "--config", str(config)]) == 2
    assert "specs: 'specs/*.yaml' matches no file" in capsys.readouterr().err
    assert main(["check", "--config", str(config)]) == 1  # check: the config is invalid
    assert "specs: 'specs/*.yaml' matches no file" in capsys.readouterr().err


@pytest.mark.parametrize("content", [b"", b"\n\n"])
def test_an_input_file_without_traces_fails_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes
) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(content)
    assert main(["replay", str(empty), "--spec", str(spec(tmp_path))]) == 2
    out, err = capsys.readouterr()
    assert f"no trace in {str(empty)!r} (1 file(s) read)" in err
    assert "gate: PASS" not in out


def test_a_directory_without_trace_files_fails_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "inputs").mkdir()
    (tmp_path / "inputs" / "notes.txt").write_text("not a trace file\n")
    report, inputs = tmp_path / "report.json", str(tmp_path / "inputs")
    assert main(["replay", inputs, "--report", "json", "--report-out", str(report)]) == 2
    assert f"no trace file in {inputs!r}" in capsys.readouterr().err
    assert not report.exists()  # no report whose gate would read PASS


def test_a_reload_that_finds_the_glob_empty_keeps_the_specs(tmp_path: Path) -> None:
    directory = tmp_path / "specs"
    directory.mkdir()
    path = spec(directory, "first")
    telemetry = Telemetry()
    config = Config.model_validate({"specs": [str(directory / "*.yaml")]})
    active = ActiveSpecs(config, telemetry)
    path.unlink()
    assert active.reload_if_changed() is False  # the change is seen, the reload refused
    assert active().ids == ("first",)
    failures = {"result": "failure"}
    assert telemetry.registry.get_sample_value("evald_config_reloads_total", failures) == 1


def test_check_warns_about_a_session_spec_without_a_service_condition(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    loose = spec(tmp_path, "loose", scope="session", match="{agent: support}")
    assert main(["check", "--spec", str(loose)]) == 0
    err = capsys.readouterr().err
    assert f"warning: {loose}: spec 'loose' has scope: session and no match.service" in err

    scoped = spec(tmp_path, "scoped", scope="session", match="{service: shop}")
    per_trace = spec(tmp_path, "per_trace")
    assert main(["check", "--spec", str(scoped), "--spec", str(per_trace)]) == 0
    assert "warning" not in capsys.readouterr().err


def test_traces_that_are_no_agent_run_fail_the_gate_saying_why(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Griptape's own tracing records span names and statuses only: no run evald reads.
    unread = GOLDEN / "traces" / "griptape-otel" / "correct.jsonl"
    assert main(["replay", str(unread)]) == 1
    out = capsys.readouterr().out
    assert "gate: FAIL (1 check(s) failed)" in out
    assert "-/evaluated_runs: no run evaluated: 1 trace(s) read, 1 no agent run" in out
    assert "normalization.mappings" in out
    assert "traces skipped (no agent run): 1" in out


def test_runs_no_evaluator_ran_on_fail_the_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "evald.yaml"
    config.write_text("evaluation: {always: []}\n")
    elsewhere = spec(tmp_path, match="{service: elsewhere}")
    assert main(["replay", str(TRACE), "--config", str(config), "--spec", str(elsewhere)]) == 1
    out = capsys.readouterr().out
    assert "1 run(s) no evaluator ran on (no spec matched, no always-on)" in out
    assert main(["replay", str(TRACE), "--config", str(config), "--spec", str(spec(tmp_path))]) == 0
