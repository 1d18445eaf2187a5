"""``ServiceDigest``: what ``evald doctor`` prints, counted per trace and per run."""

from __future__ import annotations

import io

from collector.cli.doctor import write_digest
from collector.sinks.digest import ServiceDigest
from evaluators.testing import TrajectoryBuilder
from evaluators.trajectory import Trajectory


def run(trace: int, *tools: str, gaps: tuple[str, ...] = ()) -> Trajectory:
    builder = TrajectoryBuilder(service="svc")
    for name in tools:
        builder.tool(name)
    return builder.gaps(*gaps).build()._replace(trace_id=f"{trace:032x}")


def test_a_trace_holding_two_turns_is_one_trace_and_two_runs() -> None:
    digest = ServiceDigest()
    for trajectory in (run(1, "a", "b", gaps=("tool_args",)), run(1, "c"), run(2, "d")):
        digest.write(trajectory, [])
    digest.write_skipped(run(3)._replace(skip_reason="no agent run"))
    stats = digest.snapshot()["svc"]
    assert (stats["traces"], stats["runs"], stats["skipped"]) == (3, 3, 1)
    assert stats["tool_calls_per_run"] == round(4 / 3, 2)
    assert stats["gaps"]["tool_args"]["runs"] == 1
    assert stats["gaps"]["tool_args"]["share"] == round(1 / 3, 4)
    printed = io.StringIO()
    write_digest(digest.snapshot(), printed)
    assert printed.getvalue().splitlines()[0] == (
        "svc: 3 trace(s), 1 not agent runs; 3 agent run(s) (a conversation in one trace:"
        " one per turn)"
    )


def test_one_run_per_trace_prints_traces_alone() -> None:
    digest = ServiceDigest()
    for trace in (1, 2):
        digest.write(run(trace, "a"), [])
    printed = io.StringIO()
    write_digest(digest.snapshot(), printed)
    assert printed.getvalue().splitlines()[:3] == [
        "svc: 2 trace(s), 0 not agent runs",
        "  conventions: none recognised",
        "  per run: 1.0 tool call(s), 0.0 model call(s)",
    ]


def test_merged_digests_add_their_runs() -> None:
    first, second = ServiceDigest(), ServiceDigest()
    first.write(run(1, "a"), [])
    first.write(run(1, "b"), [])
    second.write(run(2, "c"), [])
    first.merge(second)
    stats = first.snapshot()["svc"]
    assert (stats["traces"], stats["runs"]) == (2, 3)
