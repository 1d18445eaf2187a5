"""deploy/kubernetes starts green: the manifests validate against the Kubernetes API
schemas (kubernetes-validate, offline), every pod passes the "restricted" Pod Security
Standard and has resource requests and limits, a PodDisruptionBudget covers evald, and
the Collector's loadbalancing exporter routes by trace id to evald's headless Service."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from support.paths import ROOT

from collector.config.settings import Config
from evaluators.spec import load_specs

KUBERNETES = ROOT / "deploy" / "kubernetes"
MANIFESTS = sorted(KUBERNETES.glob("*.yaml"))
# Pod Security Standards, "restricted" (kubernetes.io/docs/concepts/security/pod-security-standards)
ALLOWED_VOLUMES = {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
                   "persistentVolumeClaim", "projected", "secret"}  # fmt: skip
ALLOWED_CAPABILITIES = {"NET_BIND_SERVICE"}
SECCOMP = {"RuntimeDefault", "Localhost"}


def documents() -> list[dict[str, Any]]:
    return [doc for path in MANIFESTS for doc in yaml.safe_load_all(path.read_text()) if doc]


def find(kind: str, name: str) -> dict[str, Any]:
    return next(d for d in documents() if d["kind"] == kind and d["metadata"]["name"] == name)


def pod_specs() -> list[tuple[str, dict[str, Any]]]:
    return [(d["metadata"]["name"], d["spec"]["template"]["spec"]) for d in documents()
            if d["kind"] in ("Deployment", "StatefulSet", "DaemonSet")]  # fmt: skip


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: p.name)
def test_manifests_validate_against_the_kubernetes_schemas(path: Path) -> None:
    for document in yaml.safe_load_all(path.read_text()):
        kubernetes_validate.validate(document, kubernetes_validate.latest_version(), strict=True)


def restricted_violations(pod: dict[str, Any]) -> list[str]:
    """What in ``pod`` the "restricted" Pod Security Standard forbids (empty: none)."""
    problems = [f"spec.{key}" for key in ("hostNetwork", "hostPID", "hostIPC") if pod.get(key)]
    problems += [f"volume {v['name']}" for v in pod.get("volumes", [])
                 if not set(v) - {"name"} <= ALLOWED_VOLUMES]  # fmt: skip
    pod_context = pod.get("securityContext", {})
    for container in pod.get("initContainers", []) + pod["containers"]:
        context, name = container.get("securityContext", {}), container["name"]
        merged = {**pod_context, **context}
        if context.get("privileged"):
            problems.append(f"{name}: privileged")
        if context.get("allowPrivilegeEscalation") is not False:
            problems.append(f"{name}: allowPrivilegeEscalation must be false")
        if merged.get("runAsNonRoot") is not True or merged.get("runAsUser") == 0:
            problems.append(f"{name}: runAsNonRoot must be true (and runAsUser not 0)")
        if merged.get("seccompProfile", {}).get("type") not in SECCOMP:
            problems.append(f"{name}: seccompProfile must be RuntimeDefault or Localhost")
        capabilities = context.get("capabilities", {})
        if "ALL" not in capabilities.get("drop", []):
            problems.append(f"{name}: capabilities must drop ALL")
        if not set(capabilities.get("add", [])) <= ALLOWED_CAPABILITIES:
            problems.append(f"{name}: adds capabilities beyond NET_BIND_SERVICE")
        if any("hostPort" in port for port in container.get("ports", [])):
            problems.append(f"{name}: hostPort")
    return problems


@pytest.mark.parametrize("name", [name for name, _ in pod_specs()])
def test_every_pod_passes_the_restricted_pod_security_standard(name: str) -> None:
    pod = dict(pod_specs())[name]
    assert restricted_violations(pod) == []


def test_the_checker_catches_what_restricted_forbids() -> None:
    pod = dict(pod_specs())["evald"]
    relaxed = yaml.safe_load(yaml.safe_dump(pod))
    relaxed["securityContext"].pop("seccompProfile")
    relaxed["containers"][0]["securityContext"] = {"privileged": True}
    relaxed["volumes"].append({"name": "host", "hostPath": {"path": "/"}})
    found = restricted_violations(relaxed)
    assert "volume host" in found
    assert {"evald: privileged", "evald: allowPrivilegeEscalation must be false",
            "evald: capabilities must drop ALL"} <= set(found)  # fmt: skip


def test_the_namespace_enforces_restricted() -> None:
    namespace = find("Namespace", "evald")
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    namespaced = [d for d in documents() if d["kind"] != "Namespace"]
    assert {d["metadata"].get("namespace") for d in namespaced} == {"evald"}


@pytest.mark.parametrize("name", [name for name, _ in pod_specs()])
def test_every_container_has_requests_and_limits(name: str) -> None:
    for container in dict(pod_specs())[name]["containers"]:
        resources = container["resources"]
        for kind in ("requests", "limits"):
            assert {"cpu", "memory"} <= set(resources[kind]), (container["name"], kind)


def test_a_disruption_budget_covers_evald_without_blocking_drains() -> None:
    budget, deployment = find("PodDisruptionBudget", "evald"), find("Deployment", "evald")
    assert (
        budget["spec"]["selector"]["matchLabels"] == deployment["spec"]["selector"]["matchLabels"]
    )
    assert budget["spec"].get("maxUnavailable", 0) >= 1  # minAvailable: 1 would block a drain


def collector_config() -> dict[str, Any]:
    config_map = find("ConfigMap", "otel-collector-config")
    return yaml.safe_load(config_map["data"]["config.yaml"])  # type: ignore[no-any-return]


def test_the_collector_load_balances_by_trace_id_over_the_headless_service() -> None:
    config, service = collector_config(), find("Service", "evald")
    (name,) = [n for n in config["exporters"] if n.split("/")[0] == "loadbalancing"]
    exporter = config["exporters"][name]
    assert exporter["routing_key"] == "traceID"
    resolver = exporter["resolver"]["k8s"]
    assert (
        resolver["service"] == f"{service['metadata']['name']}.{service['metadata']['namespace']}"
    )
    assert service["spec"]["clusterIP"] == "None"  # headless: the resolver sees every pod
    grpc = next(p["port"] for p in service["spec"]["ports"] if p["name"] == "otlp-grpc")
    assert resolver["ports"] == [grpc]
    assert "otlp" in exporter["protocol"]
    assert name in config["service"]["pipelines"]["traces"]["exporters"]


def test_the_collector_may_watch_the_endpoints_it_resolves() -> None:
    deployment = find("Deployment", "otel-collector")
    account = deployment["spec"]["template"]["spec"]["serviceAccountName"]
    binding = find("RoleBinding", "otel-collector-endpoints")
    assert {"kind": "ServiceAccount", "name": account, "namespace": "evald"} in binding["subjects"]
    role = find("Role", binding["roleRef"]["name"])
    resources = {r for rule in role["rules"] for r in rule["resources"] if "watch" in rule["verbs"]}
    assert {"endpoints", "endpointslices"} <= resources


def test_the_example_specs_load_and_are_the_demos(tmp_path: Path) -> None:
    """The evald-specs ConfigMap holds the demo specs, so evald starts with specs (an
    empty `specs` glob would stop it) and users see what to replace."""
    data = find("ConfigMap", "evald-specs")["data"]
    demo = ROOT / "examples" / "demo" / "specs"
    assert data == {path.name: path.read_text() for path in sorted(demo.glob("*.yaml"))}
    for name, text in data.items():
        (tmp_path / name).write_text(text)
    config = Config.model_validate(
        yaml.safe_load(find("ConfigMap", "evald-config")["data"]["evald.yaml"])
    )
    assert config.specs == ["/etc/evald/specs/*.yaml"]
    assert len(load_specs(sorted(tmp_path.glob("*.yaml")))) == len(data)
