"""The demo corpus (``examples/demo``) gives the same verdicts on every build.

The README's quick start replays it; ``make pure`` runs this module again on a
pure-Python install, so the compiled and the interpreted builds are both held to
the same pinned report and result lines. Regenerate on purpose with
``EVALD_REGEN_GOLDEN=1`` and review the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support.paths import ROOT

from collector.cli.command import main

DEMO = ROOT / "examples" / "demo"
GOLDEN = ROOT / "tests" / "golden" / "reports"
REGENERATE = os.environ.get("EVALD_REGEN_GOLDEN") == "1"
MAX_DEMO_BYTES = 3 * 1024**2  # "a few MB at most": it ships in every clone


def replay_demo(tmp_path: Path) -> tuple[int, str, str]:
    """Exit code, table and result lines of the quick start's replay (sorted, without the
    evaluators' wall-clock ``duration_s``)."""
    report, results = tmp_path / "demo.txt", tmp_path / "results.jsonl"
    code = main([
        "--log-level", "WARNING", "replay", str(DEMO / "traces"),
        "--spec", str(DEMO / "specs" / "*.yaml"),
        "--report-out", str(report), "--results-out", str(results),
    ])  # fmt: skip
    lines = [json.loads(line) for line in results.read_text().splitlines()]
    lines.sort(key=lambda r: (r["trace_id"], r["spec"] or "", r["evaluator"]))
    stable = [json.dumps({k: v for k, v in r.items() if k != "duration_s"}) for r in lines]
    return code, report.read_text(), "\n".join(stable) + "\n"


def check_golden(actual: str, name: str) -> None:
    golden = GOLDEN / name
    if REGENERATE:
        golden.write_text(actual)
    assert actual == golden.read_text(), f"re-run with EVALD_REGEN_GOLDEN=1: {golden}"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str, str]:
    return replay_demo(tmp_path_factory.mktemp("demo"))


def test_demo_report_and_results_match_golden(demo: tuple[int, str, str]) -> None:
    code, table, results = demo
    assert code == 1  # the demo holds wrong trajectories on purpose: the gate fails
    check_golden(table, "demo.txt")
    check_golden(results, "demo.results.jsonl")


def test_demo_has_passing_and_failing_specs(demo: tuple[int, str, str]) -> None:
    _, _, results = demo
    verdicts: dict[str, set[object]] = {}
    for line in results.splitlines():
        result = json.loads(line)
        if result["spec"] is not None:
            verdicts.setdefault(result["spec"], set()).add(result["passed"])
    assert any(False not in seen for seen in verdicts.values()), verdicts  # a spec that passes
    assert any(False in seen for seen in verdicts.values()), verdicts  # and one that fails


def test_demo_corpus_is_small_and_copied_from_the_golden_captures() -> None:
    files = sorted((DEMO / "traces").rglob("*.jsonl"))
    assert files and sum(path.stat().st_size for path in files) <= MAX_DEMO_BYTES
    for path in files:
        original = ROOT / "tests" / "golden" / "traces" / path.relative_to(DEMO / "traces")
        assert path.read_bytes() == original.read_bytes(), f"{path} is not a golden capture"
