"""``outputs.results_file`` for live mode: JSON lines rotated by size, records never cut."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from collector.config.settings import Config, ConfigError, load_config
from collector.processing.wiring import build_sinks
from collector.sinks.jsonl import ResultsFileSink
from collector.sinks.rotating import RotatingFile
from collector.telemetry.registry import Telemetry
from evaluators.results import NumericResult
from evaluators.runner import Outcome
from evaluators.trajectory import Trajectory


def trajectory(n: int) -> Trajectory:
    return Trajectory(f"{n:032x}", "svc", "agent", None, None, None, False, 0.1, 0, ())


OUTCOMES = [
    Outcome("spec", f"evaluator_{i}", NumericResult(score=0.5, explanation="x" * 40), True, 0.01)
    for i in range(3)
]


def records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def live_config(tmp_path: Path, max_size: str | None, max_backups: int) -> Config:
    return Config.model_validate(
        {
            "outputs": {
                "results_file": str(tmp_path / "results.jsonl"),
                "rotation": {"max_size": max_size, "max_backups": max_backups},
            }
        }
    )


def test_results_rotate_by_size_keeping_whole_traces(tmp_path: Path) -> None:
    config = live_config(tmp_path, "2KiB", 2)
    sinks = build_sinks(config, Telemetry())
    (results,) = [sink for sink in sinks if isinstance(sink, ResultsFileSink)]
    for n in range(40):
        results.write(trajectory(n), OUTCOMES)
    results.close()

    live = tmp_path / "results.jsonl"
    files = [live, tmp_path / "results.jsonl.1", tmp_path / "results.jsonl.2"]
    assert sorted(tmp_path.iterdir()) == sorted(files)  # only two backups are kept
    for path in files:
        assert path.stat().st_size <= 2048
        lines = records(path)
        # Every file holds whole traces: all three results of each trace id together.
        per_trace: dict[object, int] = {}
        for line in lines:
            per_trace[line["trace_id"]] = per_trace.get(line["trace_id"], 0) + 1
        assert set(per_trace.values()) == {3}
    newest = [str(line["trace_id"]) for line in records(live)]
    assert newest[-1] == f"{39:032x}"
    older = [str(line["trace_id"]) for line in records(files[1])]
    assert older[-1] < newest[0]  # .1 holds what came just before the live file


def test_without_max_size_the_file_only_grows(tmp_path: Path) -> None:
    config = live_config(tmp_path, None, 2)
    (results,) = [s for s in build_sinks(config, Telemetry()) if isinstance(s, ResultsFileSink)]
    for n in range(40):
        results.write(trajectory(n), OUTCOMES)
    results.close()
    results.close()  # twice is fine
    assert [path.name for path in tmp_path.iterdir()] == ["results.jsonl"]
    assert len(records(tmp_path / "results.jsonl")) == 120


def test_a_replay_output_named_on_the_command_line_is_not_rotated(tmp_path: Path) -> None:
    config = live_config(tmp_path, "1KiB", 1)
    out = tmp_path / "replay.jsonl"
    sinks = build_sinks(config, Telemetry(), results_out=out)
    (results,) = [sink for sink in sinks if isinstance(sink, ResultsFileSink)]
    for n in range(40):
        results.write(trajectory(n), OUTCOMES)
    results.close()
    assert [path.name for path in tmp_path.iterdir()] == ["replay.jsonl"]
    assert len(records(out)) == 120


def test_a_record_larger_than_max_size_goes_alone_into_a_fresh_file(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    rotating = RotatingFile(path, max_size=10, max_backups=1)
    rotating.write("small\n")
    rotating.write("a record longer than ten bytes\n")
    rotating.close()
    assert path.read_text() == "a record longer than ten bytes\n"
    assert (tmp_path / "big.jsonl.1").read_text() == "small\n"
    with pytest.raises(ValueError, match="closed"):
        rotating.write("late\n")


def test_bad_rotation_values_name_the_key(tmp_path: Path) -> None:
    config = tmp_path / "evald.yaml"
    config.write_text("outputs:\n  rotation:\n    max_size: lots\n    max_backups: -1\n")
    with pytest.raises(ConfigError) as error:
        load_config(config)
    assert "outputs.rotation.max_size" in str(error.value)
    assert "outputs.rotation.max_backups" in str(error.value)


def test_lone_surrogates_from_otlp_json_are_written_as_json_escapes(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    sink = ResultsFileSink(path)
    odd = trajectory(1)._replace(service="bot\ud800", input="refund \udfff please")
    outcome = Outcome(None, "latency", NumericResult(score=1.0, explanation="x\ud83d"), None, 0.0)
    sink.write(odd, [outcome])
    sink.close()
    (line,) = records(path)
    assert line["service"] == "bot\ud800"
    assert line["explanation"] == "x\ud83d"
