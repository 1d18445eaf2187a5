"""deploy/: alert rules pass promtool's unit tests; dashboards and rules query real metrics;
configs in the stack validate with evald's own config model."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest
import yaml
from support.paths import ROOT

from collector.config.settings import Config
from collector.processing.judge_metrics import PrometheusJudgeMetrics
from collector.telemetry.registry import Telemetry

DEPLOY = ROOT / "deploy"
PROMTOOL = shutil.which("promtool")
METRIC = re.compile(r"\b(evald_[a-z_]+)")
SUFFIXES = ("_total", "_bucket", "_count", "_sum")


def known_metrics() -> set[str]:
    telemetry = Telemetry()
    PrometheusJudgeMetrics(telemetry.registry)
    return {metric.name for metric in telemetry.registry.collect()}


def base_name(name: str) -> str:
    for suffix in SUFFIXES:
        if name.endswith(suffix):
            return name.removesuffix(suffix)
    return name


@pytest.fixture(scope="module")
def promtool() -> str:
    assert PROMTOOL, "promtool is installed by `make test` (make prometheus)"
    return PROMTOOL


def test_alert_rules_are_valid(promtool: str) -> None:
    proc = subprocess.run(
        [promtool, "check", "rules", "alerts.yml"],
        cwd=DEPLOY / "prometheus", capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_alert_rules_unit_tests_pass(promtool: str) -> None:
    proc = subprocess.run(
        [promtool, "test", "rules", "alerts_test.yml"],
        cwd=DEPLOY / "prometheus", capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr


def queried_metrics(text: str) -> set[str]:
    return {base_name(name) for name in METRIC.findall(text)}


def test_alerts_and_dashboard_query_metrics_evald_exports() -> None:
    known = known_metrics()
    alerts = (DEPLOY / "prometheus" / "alerts.yml").read_text()
    dashboard = (DEPLOY / "grafana" / "dashboards" / "evald.json").read_text()
    for name in queried_metrics(alerts) | queried_metrics(dashboard):
        assert name in known, f"{name} is queried but evald does not export it"


def test_dashboard_json_is_what_its_generator_writes() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "make_dashboard", DEPLOY / "grafana" / "make_dashboard.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    committed = (DEPLOY / "grafana" / "dashboards" / "evald.json").read_text()
    assert committed == module.render()
    assert json.loads(committed)["panels"]


def test_stack_configs_validate_with_evalds_config_model() -> None:
    Config.model_validate(yaml.safe_load((DEPLOY / "evald.yaml").read_text()))
    documents = list(yaml.safe_load_all((DEPLOY / "kubernetes" / "evald.yaml").read_text()))
    config_map = next(doc for doc in documents if doc["metadata"]["name"] == "evald-config")
    Config.model_validate(yaml.safe_load(config_map["data"]["evald.yaml"]))
    deployment = next(doc for doc in documents if doc["kind"] == "Deployment")
    grace = Config.model_validate(yaml.safe_load(config_map["data"]["evald.yaml"])).shutdown.grace
    assert deployment["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] > grace


def test_compose_mounts_only_files_that_exist() -> None:
    compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    for service in compose["services"].values():
        for volume in service.get("volumes", []):
            source = volume.split(":", 1)[0]
            assert (DEPLOY / source).exists(), f"{source} is mounted but missing"


def datasources(node: object) -> list[dict[str, str]]:
    """Every ``datasource`` reference in a dashboard (panels, targets, variables)."""
    if isinstance(node, dict):
        found = [node["datasource"]] if isinstance(node.get("datasource"), dict) else []
        return found + [ref for value in node.values() for ref in datasources(value)]
    if isinstance(node, list):
        return [ref for value in node for ref in datasources(value)]
    return []


def test_dashboard_queries_the_data_source_its_variable_picks() -> None:
    """Imported into another Grafana, the dashboard must not name a data source uid."""
    dashboard = json.loads((DEPLOY / "grafana" / "dashboards" / "evald.json").read_text())
    variables = {item["name"]: item for item in dashboard["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    references = datasources(dashboard)
    assert references
    assert {ref["uid"] for ref in references} == {"${datasource}"}


def test_dashboard_keeps_seconds_out_of_the_score_panels() -> None:
    dashboard = json.loads((DEPLOY / "grafana" / "dashboards" / "evald.json").read_text())
    for panel in dashboard["panels"]:
        exprs = " ".join(target["expr"] for target in panel["targets"])
        if "evald_evaluation_score" in exprs:
            assert panel["fieldConfig"]["defaults"]["unit"] == "none", panel["title"]
        if "evald_evaluation_result_seconds" in exprs or "latency_seconds" in exprs:
            assert panel["fieldConfig"]["defaults"]["unit"] == "s", panel["title"]
    queried = (DEPLOY / "grafana" / "dashboards" / "evald.json").read_text()
    assert "evald_evaluation_result_seconds_bucket" in queried
