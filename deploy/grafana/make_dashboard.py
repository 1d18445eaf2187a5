# PromQL reads best on one line each; the panel helper mirrors Grafana's panel fields.
# ruff: noqa: E501, PLR0917
"""Writes grafana/dashboards/evald.json (run after changing the panels below).

Kept as code so panels stay consistent; tests/unit/deploy/test_deploy.py checks that the
committed JSON is what this script writes and that every metric it queries exists.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# Every panel queries the data source the `datasource` variable picks (default: the
# instance's default Prometheus), so the dashboard imports into any Grafana.
PROM = {"type": "prometheus", "uid": "${datasource}"}
SEL = 'service=~"$service", agent=~"$agent"'


def target(expr: str, legend: str, exemplar: bool = False) -> dict[str, Any]:
    return {"datasource": PROM, "expr": expr, "legendFormat": legend, "exemplar": exemplar,
            "refId": legend[:1].upper() or "A"}  # fmt: skip


def panel(title: str, targets: list[dict[str, Any]], unit: str, x: int, y: int,
          w: int = 12, h: int = 8, description: str = "") -> dict[str, Any]:  # fmt: skip
    for i, item in enumerate(targets):
        item["refId"] = chr(ord("A") + i)
    return {
        "type": "timeseries", "title": title, "description": description, "datasource": PROM,
        "gridPos": {"x": x, "y": y, "w": w, "h": h}, "targets": targets,
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
        "options": {"legend": {"displayMode": "table", "placement": "right"}},
    }  # fmt: skip


def variable(name: str, query: str) -> dict[str, Any]:
    return {
        "name": name, "type": "query", "datasource": PROM, "query": query, "refresh": 2,
        "includeAll": True, "multi": True, "allValue": ".*", "current": {},
    }  # fmt: skip


PANELS = [
    panel("Pass rate by spec and evaluator", [target(
        f'sum by (spec, evaluator) (rate(evald_evaluations_total{{outcome="pass", {SEL}}}[$__rate_interval]))'
        f' / sum by (spec, evaluator) (rate(evald_evaluations_total{{outcome=~"pass|fail", {SEL}}}[$__rate_interval]))',
        "{{spec}} / {{evaluator}}")], "percentunit", 0, 0,
        description="Share of thresholded results that passed."),
    panel("Median score (exemplars link to the trace)", [target(
        f'histogram_quantile(0.5, sum by (le, spec, evaluator) (rate(evald_evaluation_score_bucket{{{SEL}}}[$__rate_interval])))',
        "{{spec}} / {{evaluator}}", exemplar=True)], "none", 12, 0,
        description="Scores only: evaluators in seconds (latency) are in the seconds panel."),
    panel("Tool calls by tool", [target(
        'sum by (tool) (rate(evald_tool_calls_total{service=~"$service"}[$__rate_interval]))',
        "{{tool}}")], "reqps", 0, 8),
    panel("Tool error rate by tool", [target(
        'sum by (tool) (rate(evald_tool_errors_total{service=~"$service"}[$__rate_interval]))'
        ' / sum by (tool) (rate(evald_tool_calls_total{service=~"$service"}[$__rate_interval]))',
        "{{tool}}")], "percentunit", 12, 8),
    panel("Agent latency p50 / p95 (exemplars link to the trace)", [
        target(f'histogram_quantile(0.5, sum by (le, agent) (rate(evald_agent_latency_seconds_bucket{{{SEL}}}[$__rate_interval])))', "p50 {{agent}}", exemplar=True),
        target(f'histogram_quantile(0.95, sum by (le, agent) (rate(evald_agent_latency_seconds_bucket{{{SEL}}}[$__rate_interval])))', "p95 {{agent}}", exemplar=True),
    ], "s", 0, 16),
    panel("Agent runs and failures", [
        target(f"sum by (agent) (rate(evald_traces_evaluated_total{{{SEL}}}[$__rate_interval]))", "runs {{agent}}"),
        target(f"sum by (agent) (rate(evald_traces_failed_total{{{SEL}}}[$__rate_interval]))", "failed {{agent}}"),
    ], "reqps", 12, 16),
    panel("Evaluator errors", [target(
        f'sum by (spec, evaluator) (rate(evald_evaluations_total{{outcome="error", {SEL}}}[$__rate_interval]))',
        "{{spec}} / {{evaluator}}")], "reqps", 0, 24),
    panel("LLM tokens", [target(
        f"sum by (agent, direction) (rate(evald_llm_tokens_total{{{SEL}}}[$__rate_interval]))",
        "{{agent}} {{direction}}")], "short", 12, 24),
    panel("evald: spans received / refused / late", [
        target("sum by (transport) (rate(evald_spans_received_total[$__rate_interval]))", "received {{transport}}"),
        target("sum by (reason) (rate(evald_spans_refused_total[$__rate_interval]))", "refused {{reason}}"),
        target("sum(rate(evald_spans_late_total[$__rate_interval]))", "late"),
    ], "short", 0, 32),
    panel("evald: traces in flight, queue, evictions", [
        target("sum(evald_traces_in_flight)", "in flight"),
        target("sum(evald_evaluation_queue_depth)", "evaluation queue"),
        target("sum by (limit) (rate(evald_traces_evicted_total[$__rate_interval]))", "evicted {{limit}}"),
        target("sum by (reason) (rate(evald_traces_dropped_total[$__rate_interval]))", "dropped {{reason}}"),
    ], "short", 12, 32),
    panel("LLM judges: calls, errors, shed", [
        target("sum by (judge) (rate(evald_judge_calls_total[$__rate_interval]))", "calls {{judge}}"),
        target("sum by (judge) (rate(evald_judge_errors_total[$__rate_interval]))", "errors {{judge}}"),
        target("sum by (judge, reason) (rate(evald_judge_shed_total[$__rate_interval]))", "shed {{judge}} {{reason}}"),
    ], "reqps", 0, 40),
    panel("LLM judges: budget left today", [
        target("min by (judge, unit) (evald_judge_budget_remaining)", "{{judge}} {{unit}}"),
    ], "short", 12, 40),
    panel("Sessions (scope: session specs): open, completed, evicted, dropped", [
        target("sum(evald_sessions_in_flight)", "open"),
        target("sum(evald_session_turns_in_flight)", "turns held"),
        target("sum by (reason) (rate(evald_sessions_completed_total[$__rate_interval]))", "completed {{reason}}"),
        target("sum by (limit) (rate(evald_sessions_evicted_total[$__rate_interval]))", "evicted {{limit}}"),
        target("sum by (reason) (rate(evald_sessions_dropped_total[$__rate_interval]))", "dropped {{reason}}"),
    ], "short", 0, 48),
    panel("evald build: decoder, normalizer, evaluators (native / compiled, or the slower fallbacks)", [
        target("count by (version, decoder, normalizer, evaluators) (evald_build_info)", "{{version}} {{decoder}} {{normalizer}} {{evaluators}}"),
    ], "short", 12, 48),
    panel("Evaluators in seconds (latency): p50 / p95 (exemplars link to the trace)", [
        target(f'histogram_quantile(0.5, sum by (le, spec, evaluator) (rate(evald_evaluation_result_seconds_bucket{{{SEL}}}[$__rate_interval])))', "p50 {{spec}} / {{evaluator}}", exemplar=True),
        target(f'histogram_quantile(0.95, sum by (le, spec, evaluator) (rate(evald_evaluation_result_seconds_bucket{{{SEL}}}[$__rate_interval])))', "p95 {{spec}} / {{evaluator}}", exemplar=True),
    ], "s", 0, 56, description="Results of evaluators whose unit is seconds; spec 'none': evaluation.always."),
    panel("evald process: resident memory", [
        target('sum by (instance) (process_resident_memory_bytes{job=~"$job"})', "{{instance}}"),
    ], "bytes", 12, 56, description="prometheus-client's process collector on evald's /metrics."),
    panel("evald process: CPU (cores) and open file descriptors", [
        target('sum by (instance) (rate(process_cpu_seconds_total{job=~"$job"}[$__rate_interval]))', "CPU {{instance}}"),
        target('sum by (instance) (process_open_fds{job=~"$job"})', "open fds {{instance}}"),
    ], "short", 0, 64),
]  # fmt: skip

DASHBOARD = {
    "uid": "evald-overview",
    "title": "evald — agent quality",
    "tags": ["evald", "agents"],
    "timezone": "browser",
    "schemaVersion": 39,
    "refresh": "30s",
    "time": {"from": "now-6h", "to": "now"},
    "templating": {"list": [
        {"name": "datasource", "label": "Prometheus", "type": "datasource", "query": "prometheus",
         "current": {}, "refresh": 1, "hide": 0, "includeAll": False, "multi": False},
        variable("job", "label_values(evald_build_info, job)"),
        variable("service", "label_values(evald_traces_evaluated_total, service)"),
        variable("agent", 'label_values(evald_traces_evaluated_total{service=~"$service"}, agent)'),
    ]},
    "panels": PANELS,
}  # fmt: skip

OUT = Path(__file__).resolve().parent / "dashboards" / "evald.json"


def render() -> str:
    return json.dumps(DASHBOARD, indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    OUT.write_text(render())
