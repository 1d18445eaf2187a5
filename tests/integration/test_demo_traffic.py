"""The compose stack's demo traffic source, against a real `evald serve`: one round of
the demo corpus over OTLP/HTTP is evaluated as new traces, twice over for two rounds."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from support.daemon_harness import poll
from support.paths import ROOT
from support.serve_process import EVALD, Served, loopback_config, start_serve

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

DEMO = ROOT / "examples" / "demo" / "traces"


def evaluated(served: Served) -> float:
    _, text = served.get("/metrics")
    return sum(
        float(v) for v in re.findall(r"^evald_traces_evaluated_total\{.*\} (\S+)$", text, re.M)
    )


def test_two_rounds_of_demo_traffic_are_evaluated_as_new_traces(
    tmp_path: Path, serve_with: list[Served]
) -> None:
    config = loopback_config(tmp_path, assembly="{idle_timeout: 100ms, max_trace_age: 5s}")
    served = start_serve([str(EVALD), "serve", "--config", str(config)])
    serve_with.append(served)
    corpus = tmp_path / "corpus"
    (corpus / "one").mkdir(parents=True)
    for name in ("correct.jsonl", "multi_turn.jsonl"):
        (corpus / "one" / name).write_bytes((DEMO / "pydantic-ai" / name).read_bytes())
    traces = 1 + 3  # one trace, then one per turn
    proc = subprocess.run(
        [sys.executable, str(ROOT / "deploy" / "demo_traffic.py"), str(corpus),
         "--endpoint", f"http://127.0.0.1:{served.http_port}", "--interval", "0",
         "--rounds", "2"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "round 2: 2 files sent" in proc.stderr
    assert poll(lambda: evaluated(served) == 2 * traces, timeout=30), evaluated(served)
    _, text = served.get("/metrics")
    assert "evald_spans_late_total 0.0" in text  # new ids: nothing taken for a late span
