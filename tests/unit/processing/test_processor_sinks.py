"""The sink boundary: a sink that raises is counted and logged; the others still get
every write (per trace, per session, and a judge's later outcome alike)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from support.session_kit import RecordingSink, make_processor, metric, trace

from collector.assembly.sessions import SessionCompletion
from collector.sinks.base import ResultSink
from collector.telemetry.registry import Telemetry
from evaluators.results import NumericResult
from evaluators.runner import Outcome
from evaluators.trajectory import Trajectory


class BrokenSink(ResultSink):
    name = "broken"

    def write(self, trajectory: Trajectory, outcomes: Sequence[Outcome]) -> None:
        raise OSError("disk full")

    def close(self) -> None:
        """Nothing to release."""


def test_a_failing_sink_is_counted_and_the_others_still_written(
    telemetry: Telemetry, caplog: pytest.LogCaptureFixture
) -> None:
    recording = RecordingSink()
    processor, _ = make_processor(telemetry, [BrokenSink(), recording])
    processor.process(trace(1, "lookup"))
    processor.process(trace(2, "refund"))
    processor.flush_sessions(SessionCompletion.END_OF_INPUT)
    (_, trajectory, _) = recording.calls[0]
    later = Outcome("spec", "judge", NumericResult(score=1.0), None, 0.1)
    processor._processor._fanout.write_more(trajectory, later)  # how the judge thread writes
    assert [call[0] for call in recording.calls] == [
        "write", "write", "write_outcomes", "write_outcomes",
    ]  # fmt: skip
    assert metric(telemetry, "evald_sink_errors_total", sink="broken") == 4
    assert "sink broken failed" in caplog.text
