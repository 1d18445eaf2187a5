"""A real Prometheus server scrapes ``evald serve``: the PromQL a Grafana dashboard would
run returns the pass rates and tool error rates of the shared golden traces.

Prometheus is the Debian package (``make prometheus`` installs it; ``make test`` depends
on that). It runs on loopback, on a port from the OS, scraping every second, with
exemplar storage on, so the trace-id exemplars are checked end to end too.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from support.captures import SERVICE_FIXED_BY_SDK, recorded_tool
from support.daemon_harness import (
    RunningDaemon,
    daemon_config,
    golden_expectations,
    golden_files,
    golden_logs,
    poll,
    read_golden_files,
    running_daemon,
)
from support.loop import LoopThread

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

PASS_RATE = (
    'sum by (spec, evaluator) (evald_evaluations_total{outcome="pass"})'
    ' / sum by (spec, evaluator) (evald_evaluations_total{outcome=~"pass|fail"})'
)
TOOL_ERROR_RATE = "sum by (tool) (evald_tool_errors_total) / sum by (tool) (evald_tool_calls_total)"
LISTENING = re.compile(rb'msg="Listening on" address=127\.0\.0\.1:(\d+)')
WAIT_S = 30.0


class Prometheus:
    """A ``prometheus`` process scraping ``target``; ``query`` runs PromQL over HTTP."""

    def __init__(self, target: str, workdir: Path, stack: Any) -> None:
        binary = shutil.which("prometheus")
        assert binary, "prometheus is not installed: run `make prometheus` (make test does)"
        config = workdir / "prometheus.yml"
        config.write_text(
            # (every golden capture is a service: /metrics is ~12 MB, ~1 s to render here)
            "global: {scrape_interval: 5s, scrape_timeout: 5s}\n"
            "scrape_configs:\n"
            f"  - {{job_name: evald, static_configs: [{{targets: ['{target}']}}]}}\n"
        )
        self.log = workdir / "prometheus.log"
        output = stack.enter_context(self.log.open("wb"))
        command = [
            binary,
            f"--config.file={config}",
            f"--storage.tsdb.path={workdir / 'data'}",
            "--web.listen-address=127.0.0.1:0",
            "--enable-feature=exemplar-storage",
        ]
        self.process = stack.enter_context(
            subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
        )
        stack.callback(self._stop)
        assert poll(self._port_known, WAIT_S), self.log.read_text()
        assert poll(self._ready, WAIT_S), self.log.read_text()

    def query(self, promql: str) -> list[dict[str, Any]]:
        """An instant query's result vector."""
        answer = self._get("/api/v1/query", query=promql)
        return list(answer["data"]["result"])

    def exemplars(self, promql: str) -> list[dict[str, Any]]:
        now = time.time()
        answer = self._get("/api/v1/query_exemplars", query=promql, start=now - 600, end=now + 60)
        return list(answer["data"])

    def _get(self, path: str, **params: Any) -> dict[str, Any]:
        url = f"http://127.0.0.1:{self.port}{path}?{urllib.parse.urlencode(params)}"
        with urllib.request.urlopen(url, timeout=5) as response:
            answer: dict[str, Any] = json.loads(response.read())
        assert answer["status"] == "success", answer
        return answer

    def _port_known(self) -> bool:
        assert self.process.poll() is None, self.log.read_text()
        found = LISTENING.search(self.log.read_bytes())
        if found:
            self.port = int(found.group(1))
        return found is not None

    def _ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/-/ready", timeout=2):
                return True
        except OSError:
            return False

    def _stop(self) -> None:
        self.process.terminate()
        self.process.wait(WAIT_S)


class Scraped(NamedTuple):
    prometheus: Prometheus
    daemon: RunningDaemon
    results: list[dict[str, Any]]


@pytest.fixture(scope="module")
def scraped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scraped]:
    """Every golden trace through ``evald serve``, then scraped by a real Prometheus."""
    workdir = tmp_path_factory.mktemp("prometheus")
    results = workdir / "results.jsonl"
    loop = LoopThread()
    # Every capture is a service of its own: (service, tool) series outnumber the default
    # budget (its overflow, the 'other' series, is tested in tests/unit/sinks).
    telemetry = {"max_series_per_metric": 1000}
    config = daemon_config(outputs={"results_file": str(results)}, telemetry=telemetry)
    with contextlib.ExitStack() as outer:
        outer.callback(loop.close)  # (also when the set-up fails: else its thread outlives pytest)
        yield from _scraped(config, loop, workdir, results)


def _scraped(config: Any, loop: LoopThread, workdir: Path, results: Path) -> Iterator[Scraped]:
    with running_daemon(config, loop) as running, contextlib.ExitStack() as stack:
        files = read_golden_files()
        for path in files:
            running.post_file(path)
            logs = golden_logs(path)
            if logs is not None:  # content sent as log records (openai-v2)
                running.post_file(logs, "logs")
        running.complete_traces(rootless=True)  # (some captures' roots were never exported)
        prometheus = Prometheus(f"127.0.0.1:{running.daemon.admin.port}", workdir, stack)
        traces = "sum(evald_traces_evaluated_total)"
        labels = [golden_expectations(path) for path in files]  # stray traces: not runs
        # One run per labelled turn: a trace recording a conversation's turns is one run
        # per turn (rule 85), and lists its id once per turn.
        expected = sum(
            len([t for t in x["trace_ids"] if t not in set(x.get("stray_traces", ()))])
            for x in labels
        )
        assert poll(lambda: _scalar(prometheus.query(traces)) == expected, WAIT_S)
        lines = [json.loads(line) for line in results.read_text().splitlines()]
        yield Scraped(prometheus, running, lines)


def test_pass_rate_by_spec_and_evaluator(scraped: Scraped) -> None:
    verdicts: dict[tuple[str, str], list[bool]] = {}
    for line in scraped.results:
        if line["passed"] is not None:
            key = (line["spec"] or "none", line["evaluator"])
            verdicts.setdefault(key, []).append(line["passed"])
    expected = {key: sum(passed) / len(passed) for key, passed in verdicts.items()}

    rates = {
        (item["metric"]["spec"], item["metric"]["evaluator"]): float(item["value"][1])
        for item in scraped.prometheus.query(PASS_RATE)
    }
    assert sorted(rates) == sorted(expected)
    assert rates == pytest.approx(expected)
    # Anchored to the traces' own labels: every run that refunded looked the invoice up
    # first, except the wrong_order scenario of each framework.
    refunds, violations = _refund_turns_and_order_violations()
    policy = rates[("refund-policy", "invoice_checked_before_refund")]
    assert policy == pytest.approx((refunds - violations) / refunds)
    assert 0 < policy < 1


def test_tool_error_rate_by_tool(scraped: Scraped) -> None:
    calls: dict[str, int] = {}
    errors: dict[str, int] = {}
    for path in read_golden_files():
        for call in golden_expectations(path)["actual_trajectory"]:
            tool = recorded_tool(path.parent.name, call["tool"])  # the metric's label
            calls[tool] = calls.get(tool, 0) + 1
            errors[tool] = errors.get(tool, 0) + bool(call["error"])
    expected = {tool: errors[tool] / calls[tool] for tool in calls}

    rates = {
        item["metric"]["tool"]: float(item["value"][1])
        for item in scraped.prometheus.query(TOOL_ERROR_RATE)
    }
    assert sorted(rates) == sorted(expected)
    assert rates == pytest.approx(expected)
    assert rates["refund"] > 0  # the tool_error scenarios


def test_exemplars_link_failing_scores_to_their_traces(scraped: Scraped) -> None:
    selector = (
        'evald_evaluation_score_bucket{spec="refund-policy",'
        'evaluator="invoice_checked_before_refund",le="0.0"}'
    )
    found = scraped.prometheus.exemplars(selector)
    trace_ids = {
        exemplar["labels"]["trace_id"] for series in found for exemplar in series["exemplars"]
    }
    wrong_order = {
        trace_id
        for path in golden_files("*/wrong_order.jsonl")
        for trace_id in golden_expectations(path)["trace_ids"]
    }
    assert trace_ids
    assert trace_ids <= wrong_order


def _refund_turns_and_order_violations() -> tuple[int, int]:
    refunds = violations = 0
    for path in read_golden_files():
        if path.parent.name in SERVICE_FIXED_BY_SDK:
            continue  # (the example specs match the music store by service: not these)
        labels = golden_expectations(path)
        turns = {call["turn"] for call in labels["actual_trajectory"] if call["tool"] == "refund"}
        refunds += len(turns)
        violations += bool(labels["labels"]["order_violation"]) * len(turns)
    return refunds, violations


def _scalar(result: list[dict[str, Any]]) -> float | None:
    return float(result[0]["value"][1]) if result else None
