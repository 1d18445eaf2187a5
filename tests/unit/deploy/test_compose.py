"""The docker compose stack starts with data and an image that builds: demo traffic from
the demo corpus, evald's admin port published, a Dockerfile that copies what the build
reads, and a .dockerignore that keeps local venvs and builds out of the context."""

from __future__ import annotations

import fnmatch
import importlib.util
import json
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from support.paths import ROOT

from collector.core.build_info import build_labels

DEPLOY = ROOT / "deploy"
DEMO = ROOT / "examples" / "demo" / "traces"


def compose() -> dict[str, Any]:
    return yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())  # type: ignore[no-any-return]


def demo_traffic() -> ModuleType:
    spec = importlib.util.spec_from_file_location("demo_traffic", DEPLOY / "demo_traffic.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_evalds_admin_port_is_published() -> None:
    assert "9464:9464" in compose()["services"]["evald"]["ports"]


def test_demo_traffic_replays_the_demo_corpus_into_the_collector() -> None:
    service = compose()["services"]["demo-traffic"]
    mounts = dict(volume.split(":")[:2] for volume in service["volumes"])
    assert mounts["./demo_traffic.py"] in service["command"]
    assert mounts["../examples/demo/traces"] in service["command"]
    assert (DEPLOY / "../examples/demo/traces").resolve() == DEMO
    assert "http://otel-collector:4318" in service["command"]
    assert "otel-collector" in service["depends_on"]


def copied_sources() -> set[str]:
    sources: set[str] = set()
    for line in (DEPLOY / "Dockerfile").read_text().splitlines():
        if line.startswith("COPY ") and "--from" not in line:
            sources.update(part.rstrip("/") for part in line.split()[1:-1])
    return sources


def test_the_image_build_copies_what_the_package_build_reads() -> None:
    needed = {"pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "build_backend",
              "collector", "evaluators"}  # fmt: skip
    assert needed <= copied_sources()


def test_the_image_build_checks_every_compiled_module_of_this_build() -> None:
    # The build stage fails unless each compiled group is in use; a group added to
    # setup.py (and to build_labels) must be added to that check, or the image build
    # fails on a dict with one more key.
    text = (DEPLOY / "Dockerfile").read_text().replace("\\\n", "")
    found = re.search(r"assert b\(\) == (\{[^}]*\})", text)
    assert found is not None, "the Dockerfile no longer checks the build"
    checked = yaml.safe_load(found[1])
    assert set(checked) == set(build_labels())
    assert checked == {name: "native" if name == "decoder" else "compiled" for name in checked}


def ignored(path: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatch(path, p) or fnmatch.fnmatch(path, f"**/{p}") for p in patterns)


def test_dockerignore_keeps_local_builds_out_and_the_build_inputs_in() -> None:
    patterns = [
        line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]  # fmt: skip
    for local in (".git", ".venv", ".venv-pure", "build", "dist", "collector/x/__pycache__",
                  "collector/normalize/build.cpython-311-x86_64-linux-gnu.so"):  # fmt: skip
        assert ignored(local, patterns), local
    for needed in copied_sources() | {"config"}:
        assert not ignored(needed, patterns), needed


# --- the demo traffic source -------------------------------------------------------------


@pytest.fixture(scope="module")
def traffic() -> ModuleType:
    return demo_traffic()


@pytest.mark.parametrize("path", sorted(DEMO.rglob("*.jsonl"))[:6], ids=lambda p: p.stem)
def test_a_replayed_file_gets_new_ids_and_ends_now_with_its_durations(
    traffic: ModuleType, path: Path
) -> None:
    requests = traffic.read_requests(path)
    ids = traffic.IdMap()
    shift = 10**18 - traffic.last_end(requests)
    sent = [traffic.rebase(request, ids, shift) for request in requests]
    old = [span for request in requests for span in traffic.spans(request)]
    new = [span for request in sent for span in traffic.spans(request)]
    assert traffic.last_end(sent) == 10**18
    for before, after in zip(old, new, strict=True):
        assert after["traceId"] != before["traceId"] and after["spanId"] != before["spanId"]
        assert after["traceId"] == ids(before["traceId"])
        assert after.get("parentSpanId", "") == ids(before.get("parentSpanId", ""))
        duration = int(after["endTimeUnixNano"]) - int(after["startTimeUnixNano"])
        assert duration == int(before["endTimeUnixNano"]) - int(before["startTimeUnixNano"])
        assert type(after["startTimeUnixNano"]) is type(before["startTimeUnixNano"])
    assert requests == [json.loads(line) for line in path.read_text().splitlines()]  # untouched


def test_each_round_gets_new_trace_ids(traffic: ModuleType) -> None:
    path = DEMO / "pydantic-ai" / "correct.jsonl"
    request = traffic.read_requests(path)[0]
    first = traffic.rebase(request, traffic.IdMap(), 0)
    second = traffic.rebase(request, traffic.IdMap(), 0)
    trace_ids = {span["traceId"] for r in (first, second) for span in traffic.spans(r)}
    assert len(trace_ids) == 2
    assert all(re.fullmatch(r"[0-9a-f]{32}", trace_id) for trace_id in trace_ids)
