"""Replay reports in every format, golden-tested on the shared framework traces.

The inputs are the JSON-lines traces of the four frameworks of ``shared/traces``
(copied under ``tests/golden/traces``; other captures there are not part of it, so
adding one does not change these reports) with the example specs of
``config/specs``. Regenerate on purpose with
``EVALD_REGEN_GOLDEN=1`` and review the diff: a change means the numbers a user
sees changed.
"""

from __future__ import annotations

import json
import math
import os
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

import pytest
import xmlschema
from support.paths import ROOT

from collector.cli.command import main

TRACES = ROOT / "tests" / "golden" / "traces"
GOLDEN = ROOT / "tests" / "golden" / "reports"
CONFIG = ROOT / "config" / "evald.yaml"
JUNIT_XSD = ROOT / "tests" / "fixtures" / "junit" / "junit.xsd"
REGENERATE = os.environ.get("EVALD_REGEN_GOLDEN") == "1"
SHARED = ("langchain-openinference", "langchain-traceloop", "pydantic-ai", "vercel-ai-sdk")
FILES = {"table": "report.txt", "json": "report.json", "markdown": "report.md",
         "junit": "report.junit.xml"}  # fmt: skip


def replay(tmp_path: Path, fmt: str, *extra: str) -> tuple[int, Path, Path]:
    """Run ``evald replay`` on the golden traces; the report file and the results file."""
    report, results = tmp_path / FILES[fmt], tmp_path / "results.jsonl"
    inputs = [str(TRACES / framework / "*.jsonl") for framework in SHARED]
    code = main([
        "--log-level", "WARNING", "replay", *inputs,
        "--config", str(CONFIG), "--report", fmt, "--report-out", str(report),
        "--results-out", str(results), *extra,
    ])  # fmt: skip
    return code, report, results


def results_of(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("fmt", list(FILES))
def test_report_matches_golden(tmp_path: Path, fmt: str) -> None:
    code, report, _ = replay(tmp_path, fmt)
    assert code == 1  # the shared traces include wrong trajectories: the gate fails
    golden = GOLDEN / FILES[fmt]
    if REGENERATE:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(report.read_text())
    assert report.read_text() == golden.read_text(), f"re-run with EVALD_REGEN_GOLDEN=1: {golden}"


def test_json_report_agrees_with_the_result_lines(tmp_path: Path) -> None:
    _, report, results = replay(tmp_path, "json")
    scores: dict[tuple[object, object], list[float]] = defaultdict(list)
    verdicts: dict[tuple[object, object], list[object]] = defaultdict(list)
    for line in results_of(results):
        key = (line["spec"], line["evaluator"])
        verdicts[key].append(line["passed"])
        if isinstance(line["score"], float | int):
            scores[key].append(float(line["score"]))
    metrics = json.loads(report.read_text())["metrics"]
    assert {(m["spec"], m["evaluator"]) for m in metrics} == set(verdicts)
    for metric in metrics:
        key = (metric["spec"], metric["evaluator"])
        assert metric["count"] == len(verdicts[key])
        assert metric["passed"] == verdicts[key].count(True)
        assert metric["failed"] == verdicts[key].count(False)
        assert math.isclose(metric["mean"], sum(scores[key]) / len(scores[key]), rel_tol=1e-9)


def test_junit_validates_against_the_ci_schema(tmp_path: Path) -> None:
    _, report, _ = replay(tmp_path, "junit")
    xmlschema.XMLSchema(JUNIT_XSD).validate(report)  # raises with the offending element


def test_junit_has_one_case_per_trace_and_spec(tmp_path: Path) -> None:
    _, report, results = replay(tmp_path, "junit")
    lines = results_of(results)
    expected = {(line["trace_id"], line["spec"] or "evaluation.always") for line in lines}
    failing = {(line["trace_id"], line["spec"] or "evaluation.always")
               for line in lines if line["passed"] is False}  # fmt: skip
    root = ET.parse(report).getroot()
    cases, failed = set(), set()
    for suite in root.iter("testsuite"):
        suite_cases = suite.findall("testcase")
        assert int(suite.get("tests", -1)) == len(suite_cases)
        assert int(suite.get("failures", -1)) == sum(c.find("failure") is not None
                                                     for c in suite_cases)  # fmt: skip
        for case in suite_cases:
            key = (case.get("name", "").split(":")[0], case.get("classname"))
            assert key not in cases
            cases.add(key)
            if case.find("failure") is not None:
                failed.add(key)
    assert cases == expected
    assert failed == failing
    assert int(root.get("tests", -1)) == len(expected)


def test_the_schema_rejects_what_ci_systems_reject(tmp_path: Path) -> None:
    schema = xmlschema.XMLSchema(JUNIT_XSD)
    good = '<testsuites><testsuite name="s" tests="1" failures="0" errors="0">' \
           '<testcase name="t" time="0.5"/></testsuite></testsuites>'  # fmt: skip
    assert schema.is_valid(good)
    assert not schema.is_valid(good.replace(' tests="1"', ""))  # counters are required
    assert not schema.is_valid(good.replace(' name="t"', ""))  # a case needs a name
    assert not schema.is_valid(good.replace('"0.5"', '"fast"'))  # time is seconds
    assert not schema.is_valid(good.replace("<testcase", "<case"))


def test_table_goes_to_stdout_when_the_report_goes_to_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    replay(tmp_path, "json")
    out = capsys.readouterr().out
    assert out.startswith("spec ") and "gate: FAIL" in out


def test_report_to_stdout_is_the_chosen_format_only(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["--log-level", "WARNING", "replay", str(TRACES / "pydantic-ai" / "correct.jsonl"),
                 "--config", str(CONFIG), "--report", "json"])  # fmt: skip
    document = json.loads(capsys.readouterr().out)
    assert code == 0 and document["passed"] is True
    assert document["totals"]["traces"] == 1


def test_junit_from_two_workers_has_the_same_cases(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    replay(one, "junit")
    replay(two, "junit", "--workers", "2")
    xmlschema.XMLSchema(JUNIT_XSD).validate(two / FILES["junit"])

    def cases(path: Path) -> list[str]:
        root = ET.parse(path / FILES["junit"]).getroot()
        for case in root.iter("testcase"):
            case.tail = None  # the indentation after the last case of a suite differs
        return sorted(ET.tostring(case, encoding="unicode") for case in root.iter("testcase"))

    assert cases(one) == cases(two)
    assert len(cases(two)) == 140  # (trace, spec) pairs of the golden traces and config/specs
