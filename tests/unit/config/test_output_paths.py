"""``outputs.results_file`` / ``.trajectories_file`` resolve against the config file,
like every other path in it (specs, TLS files, the judge cache)."""

from __future__ import annotations

from pathlib import Path

import pytest

from collector.config.settings import load_config
from collector.processing.wiring import build_sinks
from collector.telemetry.registry import Telemetry


def test_relative_output_files_are_relative_to_the_config_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config_dir, elsewhere = tmp_path / "etc", tmp_path / "cwd"
    config_dir.mkdir()
    elsewhere.mkdir()
    path = config_dir / "evald.yaml"
    path.write_text(
        "outputs:\n  results_file: out/results.jsonl\n  trajectories_file: trajectories.jsonl\n"
    )
    monkeypatch.chdir(elsewhere)
    for sink in build_sinks(load_config(path), Telemetry()):
        sink.close()
    assert (config_dir / "out" / "results.jsonl").exists()
    assert (config_dir / "trajectories.jsonl").exists()
    assert not list(elsewhere.iterdir())


def test_absolute_output_files_stay_where_they_are(tmp_path: Path) -> None:
    path = tmp_path / "etc" / "evald.yaml"
    path.parent.mkdir()
    target = tmp_path / "abs" / "results.jsonl"
    path.write_text(f"outputs:\n  results_file: {target}\n")
    for sink in build_sinks(load_config(path), Telemetry()):
        sink.close()
    assert target.exists()


def test_command_line_files_stay_relative_to_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "etc" / "evald.yaml"
    path.parent.mkdir()
    path.write_text("outputs:\n  results_file: from-config.jsonl\n")
    monkeypatch.chdir(tmp_path)
    sinks = build_sinks(load_config(path), Telemetry(), results_out=Path("cli.jsonl"))
    for sink in sinks:
        sink.close()
    assert (tmp_path / "cli.jsonl").exists()
