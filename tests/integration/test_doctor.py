"""``evald doctor`` on files and on a running daemon; gaps counted and reported end to end.

The traces are agent runs whose tool spans record names only (``support.agent_runs``):
the instrumentation did not record tool arguments or results.
"""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest
from support.agent_runs import agent_run, framed
from support.daemon_harness import daemon_config, running_daemon
from support.loop import LoopThread

from collector.cli.command import main

SPEC = """\
id: refund
match: {service: shop-agent}
reference: {trajectory: [{tool: refund, args: {invoice_id: 9}}]}
evaluators: [tool_args_match]
"""


def test_doctor_on_files_names_each_gap_and_its_setting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs.pb"
    runs.write_bytes(framed(agent_run(1), agent_run(2)))
    assert main(["--log-level", "ERROR", "doctor", str(runs)]) == 0
    printed = capsys.readouterr().out
    assert "shop-agent: 2 trace(s), 0 not agent runs" in printed
    assert "conventions: otel_genai (2)" in printed
    assert "per run: 2.0 tool call(s), 0.0 model call(s)" in printed
    assert "gap tool_args: 100% of runs; enable message content capture" in printed
    assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT" in printed
    assert main(["--log-level", "ERROR", "doctor", str(runs), "--json"]) == 0
    digest = json.loads(capsys.readouterr().out)
    assert digest["shop-agent"]["gaps"]["tool_results"]["share"] == 1.0


def test_doctor_needs_files_or_live(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor"]) == 2
    assert "give trace files, or --live" in capsys.readouterr().err


def test_replay_reports_the_gap_instead_of_failing_the_agent(tmp_path: Path) -> None:
    runs, spec, results = tmp_path / "runs.pb", tmp_path / "spec.yaml", tmp_path / "r.jsonl"
    runs.write_bytes(framed(agent_run(1)))
    spec.write_text(SPEC)
    main(["--log-level", "ERROR", "replay", str(runs), "--spec", str(spec),
          "--results-out", str(results)])  # fmt: skip
    (line,) = [json.loads(x) for x in results.read_text().splitlines()
               if '"tool_args_match"' in x]  # fmt: skip
    assert line["passed"] is None and line["error"] == "TrajectoryGap"
    assert line["explanation"].startswith("tool arguments not recorded by this instrumentation")


@pytest.mark.integration
def test_doctor_live_reads_a_running_daemon(
    loop_thread: LoopThread, capsys: pytest.CaptureFixture[str]
) -> None:
    with running_daemon(daemon_config(), loop_thread) as running:
        url = f"http://127.0.0.1:{running.daemon.http.port}/v1/traces"
        headers = {"Content-Type": "application/x-protobuf"}
        post = urllib.request.Request(url, data=agent_run(1), headers=headers)
        with urllib.request.urlopen(post, timeout=5) as response:
            assert response.status == 200
        running.complete_traces()
        assert running.metric("evald_trajectory_gaps_total", service="shop-agent",
                              gap="tool_args") == 1  # fmt: skip
        admin = f"http://127.0.0.1:{running.daemon.admin.port}"
        with urllib.request.urlopen(admin + "/debug/services", timeout=5) as response:
            assert json.loads(response.read())["shop-agent"]["traces"] == 1
        assert main(["doctor", "--live", "--admin", admin]) == 0
    assert "gap tool_args: 100% of runs" in capsys.readouterr().out
