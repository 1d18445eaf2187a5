"""The example specs of ``config/specs`` agree with the labels of every captured scenario.

``evald replay`` runs every golden trace (every framework capture, each of the labelled
music-store scenarios) through the example specs; each row of ``AGREEMENT``
says which label an evald verdict stands for, and the two must agree on every
run. This is the agreement table of the README ("Built-in evaluators").
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from support.captures import (
    NO_CONTENT_RECORDED,
    NOT_READ,
    SERVICE_FIXED_BY_SDK,
    UNSELECTABLE,
    USER_MAPPINGS,
    matching_the_agent,
    not_read,
)
from support.paths import ROOT

from collector.cli.command import main

TRACES = ROOT / "tests" / "golden" / "traces"
SPECS = ROOT / "config" / "specs" / "*.yaml"
SKIPPED = set(NOT_READ) | UNSELECTABLE

Line = dict[str, Any]
# The specs the agreement table is about (config/specs also holds the eval-set spec).
EXAMPLES = {"album-of-track", "artist-albums", "refund-duplicate-purchase",
            "refund-outside-window", "refund-policy", "refund-remembered-track"}  # fmt: skip


class Run(NamedTuple):
    """One labelled scenario of one framework, and the result lines of its traces."""

    framework: str
    scenario: str
    labels: dict[str, Any]
    lines: list[Line]

    def of(self, spec: str | None, evaluator: str) -> list[Line]:
        return [x for x in self.lines if x["spec"] == spec and x["evaluator"] == evaluator]

    def failed(self, spec: str | None, evaluator: str) -> bool:
        return any(line["passed"] is False for line in self.of(spec, evaluator))

    def below_one(self, spec: str, evaluator: str) -> bool:
        # (a gap is no score: "not recorded" is no verdict, below one or not)
        return any(
            line["score"] is not None and line["score"] < 1 for line in self.of(spec, evaluator)
        )


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[Run]:
    # One replay per capture: replay reads each signal's files in the order given, as
    # written in time order (docs/replay-and-compare.md), and captures of different
    # days given in path order are not. A capture whose scenarios share a trace id (an
    # instrumentation that makes the whole process one trace) is replayed per scenario.
    lines: dict[tuple[str, str | None], list[Line]] = {}
    scratch = tmp_path_factory.mktemp("labels")
    # (captures evald does not read right yet are kept out: support.captures.NOT_READ)
    # and those no example spec can select: support.captures.UNSELECTABLE)
    for folder in sorted(p for p in TRACES.iterdir() if p.is_dir() and p.name not in SKIPPED):
        inputs = sorted(  # log records too
            str(path)
            for path in folder.glob("*.jsonl")
            if not_read(folder.name, path.name.split(".")[0]) is None
        )
        if _scenarios_share_traces(folder):
            for scenario in sorted({Path(path).name.split(".")[0] for path in inputs}):
                mine = [path for path in inputs if Path(path).name.split(".")[0] == scenario]
                key = (folder.name, scenario)
                lines[key] = _replayed(folder, mine, scratch / f"{folder.name}-{scenario}")
        else:
            lines[(folder.name, None)] = _replayed(folder, inputs, scratch / folder.name)
    found = []
    for expected in labelled():
        labels = json.loads(expected.read_text())
        folder = expected.parent.name
        replayed = lines.get((folder, labels["scenario"]), lines.get((folder, None), []))
        mine = [line for line in replayed if line["trace_id"] in labels["trace_ids"]]
        found.append(Run(folder, labels["scenario"], labels, mine))
    return found


def _scenarios_share_traces(folder: Path) -> bool:
    seen: set[str] = set()
    for expected in folder.glob("*.expected.json"):
        ids = set(json.loads(expected.read_text())["trace_ids"])
        if ids & seen:
            return True
        seen |= ids
    return False


def _replayed(folder: Path, inputs: list[str], out: Path) -> list[Line]:
    """The results lines of one ``evald replay`` of ``inputs`` with the example specs, as
    a user of the capture's instrumentation configures it."""
    out.mkdir(parents=True, exist_ok=True)
    results = out / "results.jsonl"
    specs = str(SPECS)
    if folder.name in SERVICE_FIXED_BY_SDK:
        specs = specs_by_agent(out / "by-agent")
    args = ["--log-level", "WARNING", "replay", *inputs, "--spec", specs]
    if folder.name in USER_MAPPINGS:  # as a user of that instrumentation configures it
        config = out / "evald.yaml"
        mappings = {"normalization": {"mappings": USER_MAPPINGS[folder.name]}}
        config.write_text(json.dumps(mappings))
        args[3:3] = ["--config", str(config)]
    report = str(out / "report.txt")
    main([*args, "--results-out", str(results), "--report-out", report])
    return [json.loads(line) for line in results.read_text().splitlines()]


def specs_by_agent(folder: Path) -> str:
    """The example specs matching the music store's agent by name where they match its
    service (``SERVICE_FIXED_BY_SDK``), written to ``folder``; their glob."""
    for path in sorted(SPECS.parent.glob(SPECS.name)):
        matching_the_agent(path, folder)
    return str(folder / "*.yaml")


def labelled() -> list[Path]:
    """The labels of every capture but those not read yet (``NOT_READ``) or that no
    example spec selects (``UNSELECTABLE``)."""
    found = sorted(TRACES.glob("*/*.expected.json"))
    return [
        p
        for p in found
        if p.parent.name not in UNSELECTABLE
        and not_read(p.parent.name, p.name.removesuffix(".expected.json")) is None
    ]


def sequence_checks(line: Line) -> bool:
    return line["evaluator"] in ("trajectory_exact_match", "trajectory_in_order_match")


def evald_correct(run: Run, ignore: Callable[[Line], bool] = lambda line: False) -> bool:
    """No verdict of the example specs failed (``ignore`` says which lines not to count)."""
    return not any(
        line["passed"] is False
        for line in run.lines
        if line["spec"] in EXAMPLES and not ignore(line)
    )


class Agreement(NamedTuple):
    label: str
    evald: str
    labelled: Callable[[dict[str, Any]], bool]
    found: Callable[[Run], bool]
    judged_by: tuple[str | None, str] | None = None  # the (spec, evaluator) giving the verdict


AGREEMENT = [
    Agreement("run_failed", "failure = 1",
              lambda labels: bool(labels.get("run_failed")),
              lambda run: run.failed(None, "failure"), (None, "failure")),
    Agreement("tool_errors ≠ []", "refund-policy/tool_error_rate > 0",
              lambda labels: bool(labels["tool_errors"]),
              lambda run: any(x["score"] > 0 for x in run.of("refund-policy", "tool_error_rate")),
              ("refund-policy", "tool_error_rate")),
    Agreement("order_violation", "refund-policy/invoice_checked_before_refund fails",
              lambda labels: labels["order_violation"],
              lambda run: run.failed("refund-policy", "invoice_checked_before_refund"),
              ("refund-policy", "invoice_checked_before_refund")),
    Agreement("extra_calls ≠ []", "refund-duplicate-purchase/no_unexpected_tools fails",
              lambda labels: bool(labels["extra_calls"]),
              lambda run: run.failed("refund-duplicate-purchase", "no_unexpected_tools"),
              ("refund-duplicate-purchase", "no_unexpected_tools")),
    Agreement("wrong_args ≠ []", "refund-duplicate-purchase/tool_args_match < 1",
              lambda labels: bool(labels["wrong_args"]),
              lambda run: run.below_one("refund-duplicate-purchase", "tool_args_match"),
              ("refund-duplicate-purchase", "tool_args_match")),
    Agreement("missing_calls ≠ []", "refund-outside-window/trajectory_recall < 1",
              lambda labels: bool(labels.get("missing_calls")),
              lambda run: run.below_one("refund-outside-window", "trajectory_recall"),
              ("refund-outside-window", "trajectory_recall")),
    Agreement("trajectory_correct", "no spec verdict fails (whole-sequence order checks aside)",
              lambda labels: labels["trajectory_correct"],
              lambda run: evald_correct(run, ignore=sequence_checks)),
]  # fmt: skip


def test_every_labelled_trace_was_evaluated(runs: list[Run]) -> None:
    assert len(runs) == len(labelled())
    for run in runs:
        traced = {line["trace_id"] for line in run.lines}
        # Stray traces (a lone create_agent span, an MCP handshake) are no agent run:
        # skipped, never evaluated.
        runs_only = set(run.labels["trace_ids"]) - set(run.labels.get("stray_traces", ()))
        assert traced == runs_only, (run.framework, run.scenario)
        # (one run per turn: a trace recording a conversation holds several, told apart
        # by their root span)
        judged = {(ln["trace_id"], ln["span_id"]) for ln in run.lines if ln["spec"] in EXAMPLES}
        if run.framework not in NO_CONTENT_RECORDED:  # (the example specs select by input)
            assert len(judged) == len(run.labels["user_inputs"]), (run.framework, run.scenario)


@pytest.mark.parametrize("row", AGREEMENT, ids=lambda row: row.label)
def test_verdicts_agree_with_the_labels(runs: list[Run], row: Agreement) -> None:
    disagree = [
        (run.framework, run.scenario)
        for run in runs
        if row.labelled(run.labels["labels"]) is not row.found(run) and not unjudged(run, row)
    ]
    assert disagree == []
    assert any(row.labelled(run.labels["labels"]) for run in runs)  # the row is not vacuous


def unjudged(run: Run, row: Agreement) -> bool:
    """A capture without text whose labelled fault evald gave no verdict on: the spec
    that would judge it selects by input, which the capture lacks. No verdict is no
    wrong verdict; a verdict given must still agree (rows judged by names alone). The same
    holds for any capture where the judging evaluator answered only "not recorded" (a
    trajectory gap)."""
    if row.judged_by is not None and _gaps_only(run.of(*row.judged_by)):
        return True
    if run.framework not in NO_CONTENT_RECORDED:
        return False
    if row.judged_by is not None:
        return not run.of(*row.judged_by)
    faults = [r for r in AGREEMENT if r.judged_by is not None and r.labelled(run.labels["labels"])]
    return bool(faults) and all(not run.of(*fault.judged_by) for fault in faults if fault.judged_by)


def _gaps_only(lines: list[Line]) -> bool:
    return bool(lines) and all(line["error"] == "TrajectoryGap" for line in lines)


def test_a_capture_without_text_gets_no_verdict_that_needs_it(tmp_path: Path) -> None:
    """A spec that does apply (by service) to a capture without text: its evaluators that
    need arguments, results or the answer say "not recorded", those on names judge."""
    spec = tmp_path / "by-service.yaml"
    spec.write_text(json.dumps({
        "id": "by-service",
        "match": {"service": {"regex": "^music-store-support"}},
        "reference": {"trajectory": [{"tool": "lookup_invoice", "args": {"invoice_id": 1042}}]},
        "evaluators": ["tool_args_match", "trajectory_recall", "tool_error_rate",
                       {"name": "response_contains", "criteria": {"contains": ["refund"]}},
                       {"name": "trajectory_single_tool_use", "criteria": {"tool": "refund"}}],
    }))  # fmt: skip
    for framework in sorted(NO_CONTENT_RECORDED):
        results = tmp_path / f"{framework}.jsonl"
        inputs = sorted(str(path) for path in (TRACES / framework).glob("*.jsonl"))
        main(["--log-level", "WARNING", "replay", *inputs, "--spec", str(spec),
              "--results-out", str(results)])  # fmt: skip
        lines = [json.loads(line) for line in results.read_text().splitlines()]
        mine = [line for line in lines if line["spec"] == "by-service"]
        by_evaluator: dict[str, list[Line]] = {}
        for line in mine:
            by_evaluator.setdefault(line["evaluator"], []).append(line)
        assert set(by_evaluator) == {"tool_args_match", "trajectory_recall", "tool_error_rate",
                                     "response_contains", "trajectory_single_tool_use"}  # fmt: skip
        for needs_text in ("tool_args_match", "trajectory_recall", "response_contains"):
            for line in by_evaluator[needs_text]:
                assert line["passed"] is None and line["error"] == "TrajectoryGap", line
        for names_only in ("tool_error_rate", "trajectory_single_tool_use"):
            assert all(line["error"] is None for line in by_evaluator[names_only])


def test_whole_sequence_checks_disagree_only_on_reordered_parallel_calls(runs: list[Run]) -> None:
    # Calls requested in one LLM response run in any order; the labels ignore
    # their order, exact / in-order matches do not.
    disagree = [
        (run.framework, run.scenario)
        for run in runs
        if run.labels["labels"]["trajectory_correct"] is not evald_correct(run)
        and run.framework not in NO_CONTENT_RECORDED
    ]
    assert disagree == [
        ("agno-openinference", "parallel_calls"),
        ("langchain-langsmith-otel", "parallel_calls"),
    ]


def test_wrong_args_name_the_labelled_argument(runs: list[Run]) -> None:
    for run in runs:
        if run.framework in NO_CONTENT_RECORDED:
            continue  # no arguments recorded (test_a_capture_without_text_gets_no_verdict…)
        for wrong in run.labels["labels"]["wrong_args"]:
            (line,) = run.of("refund-duplicate-purchase", "tool_args_match")
            assert line["explanation"] == f"wrong args: {wrong['tool']}({wrong['arg']})"


def test_tools_that_ran_unrecorded_get_no_verdict(tmp_path: Path) -> None:
    """Langtrace records neither tool spans nor the model's replies, only the requests
    (tool results included): the example specs select these runs by their input, and
    every check of the tool calls answers "not recorded" (the ``tool_calls`` gap)."""
    folder, results = TRACES / "langgraph-langtrace", tmp_path / "results.jsonl"
    inputs = sorted(str(path) for path in folder.glob("*.jsonl"))
    main(["--log-level", "WARNING", "replay", *inputs, "--spec", str(SPECS),
          "--results-out", str(results)])  # fmt: skip
    lines = [json.loads(line) for line in results.read_text().splitlines()]
    judged = [line for line in lines if line["spec"] in EXAMPLES]
    assert "refund-duplicate-purchase" in {line["spec"] for line in judged}
    verdicts = [line for line in judged if line["error"] != "TrajectoryGap"]
    assert {line["evaluator"] for line in verdicts} <= {"response_contains", "max_latency"}
    gaps = [line for line in judged if line["error"] == "TrajectoryGap"]
    assert gaps and all(line["passed"] is None for line in gaps)
