"""``evald compare``: per-item preferences, their statistics, alignment, splits and formats."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.agent_runs import EXTRA, GOOD, SPEC, agent_run, framed

from collector.cli.command import main
from collector.offline.compare import Side, Tally, compare, prefer
from collector.offline.stats import binomial_test, wilson_interval


def record(item: str, score: float | None, evaluator: str = "quality", **extra: Any) -> str:
    line = {"trace_id": extra.pop("trace_id", item), "spec": "s", "evaluator": evaluator,
            "score": score, "input": item, **extra}  # fmt: skip
    return json.dumps(line)


def results(path: Path, *lines: str) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def compare_json(*args: str | Path) -> tuple[int, dict[str, Any]]:
    out = Path(str(args[0])).with_suffix(".compare.json")
    code = main(["compare", *map(str, args), "--report", "json", "--report-out", str(out)])
    return code, json.loads(out.read_text()) if out.exists() else {}


def test_seed_002_nineteen_wins_and_a_tie(tmp_path: Path) -> None:
    a = results(tmp_path / "a.jsonl", *(record(f"q{i}", 1.0) for i in range(20)))
    b = results(tmp_path / "b.jsonl", *(record(f"q{i}", 0.0 if i < 19 else 1.0)
                                        for i in range(20)))  # fmt: skip
    code, report = compare_json(a, b)
    (row,) = report["comparisons"]
    assert code == 0
    assert (row["pairs"], row["a_wins"], row["b_wins"], row["ties"]) == (20, 19, 0, 1)
    assert row["ratios"] == {"a": 0.95, "b": 0.0, "tie": 0.05}
    low, high = row["a_preferred_ci95"]
    assert f"{low:.2%}" == "83.18%" and high == 1.0
    assert f"{row['b_preferred_ci95'][1]:.2%}" == "16.82%"
    assert f"{row['p_value']:.1e}" == "3.8e-06"
    assert row["verdict"] == "A better"


def test_items_are_aligned_by_input_and_averaged_per_side(tmp_path: Path) -> None:
    a = results(tmp_path / "a.jsonl", record("x", 1.0), record("x", 0.0, trace_id="x2"),
                record("y", 0.2), record("only-a", 1.0))  # fmt: skip
    b = results(tmp_path / "b.jsonl", record("y", 0.9), record("x", 0.5),
                record("only-b", 0.0), record("z", None, error="boom"))  # fmt: skip
    _, report = compare_json(a, b)
    (row,) = report["comparisons"]
    # x: mean 0.5 vs 0.5 → tie; y: 0.2 vs 0.9 → B; only-a / only-b unpaired; errors ignored.
    assert (row["a_wins"], row["b_wins"], row["ties"]) == (0, 1, 1)
    assert (row["only_a"], row["only_b"]) == (1, 1)
    assert row["mean_a"] == pytest.approx(0.35) and row["mean_b"] == pytest.approx(0.7)
    assert row["p_value"] == 1.0 and row["verdict"] == "no significant difference"


def test_lower_is_better_for_latency_and_on_request(tmp_path: Path) -> None:
    lines_a = [record(f"q{i}", 1.0, "latency") for i in range(8)]
    lines_a += [record(f"q{i}", 1.0, "cost") for i in range(8)]
    lines_b = [record(f"q{i}", 2.0, "latency") for i in range(8)]
    lines_b += [record(f"q{i}", 2.0, "cost") for i in range(8)]
    a, b = results(tmp_path / "a.jsonl", *lines_a), results(tmp_path / "b.jsonl", *lines_b)
    _, report = compare_json(a, b, "--lower-is-better", "cost")
    wins = {row["evaluator"]: (row["a_wins"], row["b_wins"]) for row in report["comparisons"]}
    assert wins == {"cost": (8, 0), "latency": (8, 0)}  # latency is known to the registry
    _, report = compare_json(a, b)
    assert {r["evaluator"]: r["a_wins"] for r in report["comparisons"]} == {"cost": 0, "latency": 8}


def test_split_by_a_resource_attribute(tmp_path: Path) -> None:
    lines = [record(f"q{i}", 1.0, resource={"service.version": "2.0"}) for i in range(6)]
    lines += [record(f"q{i}", 0.5, resource={"service.version": "1.0"}) for i in range(6)]
    lines += [record("q0", 0.0, resource={"service.version": "3.0"})]
    path = results(tmp_path / "run.jsonl", *lines)
    code, _ = compare_json(path, "--split-by", "service.version")
    assert code == 2  # three versions: which two?
    code, report = compare_json(path, "--split-by", "service.version", "--groups", "1.0", "2.0")
    assert report["a"]["label"] == "service.version=1.0"
    (row,) = report["comparisons"]
    assert (row["a_wins"], row["b_wins"]) == (0, 6)
    assert row["p_value"] == pytest.approx(binomial_test(0, 6))


def test_align_by_trace_id_compares_rescored_runs(tmp_path: Path) -> None:
    a = results(tmp_path / "a.jsonl", record("same question", 1.0, trace_id="t1"),
                record("same question", 0.0, trace_id="t2"))  # fmt: skip
    b = results(tmp_path / "b.jsonl", record("same question", 0.0, trace_id="t1"),
                record("same question", 0.0, trace_id="t2"))  # fmt: skip
    _, by_trace = compare_json(a, b, "--align-by", "trace_id")
    assert (by_trace["comparisons"][0]["a_wins"], by_trace["comparisons"][0]["ties"]) == (1, 1)
    _, by_input = compare_json(a, b)
    assert by_input["comparisons"][0]["pairs"] == 1  # one item: the shared question


def test_align_by_span_id_tells_a_traces_turns_apart(tmp_path: Path) -> None:
    """A conversation recorded in one trace is one run per turn: same trace id, each
    turn's span id (rule 85)."""
    turns = [("hi", "s1", 1.0, 0.0), ("and?", "s2", 0.0, 0.0), ("bye", "s3", 1.0, 1.0)]
    a = results(
        tmp_path / "a.jsonl", *(record(q, x, trace_id="t", span_id=sp) for q, sp, x, _ in turns)
    )
    b = results(
        tmp_path / "b.jsonl", *(record(q, y, trace_id="t", span_id=sp) for q, sp, _, y in turns)
    )
    _, by_span = compare_json(a, b, "--align-by", "span_id")
    assert by_span["comparisons"][0]["pairs"] == 3
    assert (by_span["comparisons"][0]["a_wins"], by_span["comparisons"][0]["ties"]) == (1, 2)
    _, by_trace = compare_json(a, b, "--align-by", "trace_id")
    assert by_trace["comparisons"][0]["pairs"] == 1  # (the turns averaged: one item)


def test_input_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = results(tmp_path / "a.jsonl", record("q", 1.0))
    bad = results(tmp_path / "bad.jsonl", record("q", 1.0), "{oops")
    assert main(["compare", str(good), str(bad)]) == 2
    assert f"{bad}:2: not JSON" in capsys.readouterr().err
    assert main(["compare", str(good), str(tmp_path / "missing.jsonl")]) == 2
    assert main(["compare", str(good)]) == 2  # one file needs --split-by
    assert main(["compare", str(good), str(good), "--groups", "a", "b"]) == 2
    not_results = results(tmp_path / "traces.jsonl", '{"resourceSpans": []}')
    assert main(["compare", str(good), str(not_results)]) == 2


def test_table_and_markdown_show_the_same_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = results(tmp_path / "a.jsonl", *(record(f"q{i}", 1.0) for i in range(10)))
    b = results(tmp_path / "b.jsonl", *(record(f"q{i}", float(i < 3)) for i in range(10)))
    assert main(["compare", str(a), str(b)]) == 0
    table = capsys.readouterr().out
    assert "7 (70.0%)" in table and "3 (30.0%)" in table  # A wins, ties
    assert "100.0% [64.6%, 100.0%]" in table  # Wilson interval of 7 of 7
    assert f"{binomial_test(7, 7):.3g}" in table and "A better" in table
    assert main(["compare", str(a), str(b), "--report", "markdown"]) == 0
    markdown = capsys.readouterr().out
    assert markdown.startswith("## evald compare") and "| s | quality | 10 |" in markdown


def test_replay_then_compare_two_agent_versions(tmp_path: Path) -> None:
    spec = tmp_path / "shop.yaml"
    spec.write_text(SPEC)
    # v1 takes an extra call on questions 0-7; v2 gets every question right.
    runs = [agent_run(i + 1, EXTRA if i < 8 else GOOD, f"question {i}", "1.0") for i in range(12)]
    runs += [agent_run(i + 101, GOOD, f"question {i}", "2.0") for i in range(12)]
    (tmp_path / "runs.pb").write_bytes(framed(*runs))
    out = tmp_path / "results.jsonl"
    assert main(["--log-level", "ERROR", "replay", str(tmp_path / "runs.pb"), "--spec", str(spec),
                 "--results-out", str(out)]) == 1  # fmt: skip
    _, report = compare_json(out, "--split-by", "service.version")
    rows = {row["evaluator"]: row for row in report["comparisons"]}
    exact = rows["trajectory_exact_match"]
    assert (exact["pairs"], exact["a_wins"], exact["b_wins"], exact["ties"]) == (12, 0, 8, 4)
    assert exact["b_preferred_ci95"] == pytest.approx(list(wilson_interval(8, 8) or ()))
    assert exact["verdict"] == "B better"
    assert rows["failure"]["ties"] == 12


def test_align_by_dataset_item_pairs_runs_whose_inputs_differ(tmp_path: Path) -> None:
    cases = "\n".join(
        f"  - {{id: case-{i}, reference: {{trajectory: [lookup_invoice, refund]}}}}"
        for i in range(6)
    )
    (tmp_path / "cases.yaml").write_text(f"items:\n{cases}\n")
    spec = tmp_path / "set.yaml"
    spec.write_text(
        "id: shop-set\nmatch: {service: shop-agent}\n"
        "dataset: {path: cases.yaml, match_by: {attribute: eval.case.id}}\n"
        "evaluators: [trajectory_exact_match]\n"
    )
    # v2 words every question differently: only the case id says which item it is.
    runs = [agent_run(i + 1, EXTRA if i < 4 else GOOD, f"question {i}", "1.0",
                      {"eval.case.id": f"case-{i}"}) for i in range(6)]  # fmt: skip
    runs += [agent_run(i + 101, GOOD, f"Could you help with question {i}?", "2.0",
                       {"eval.case.id": f"case-{i}"}) for i in range(6)]  # fmt: skip
    (tmp_path / "runs.pb").write_bytes(framed(*runs))
    out = tmp_path / "results.jsonl"
    main(["--log-level", "ERROR", "replay", str(tmp_path / "runs.pb"), "--spec", str(spec),
          "--results-out", str(out)])  # fmt: skip
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    items = {line["item"] for line in lines if line["spec"] == "shop-set"}
    assert items == {f"case-{i}" for i in range(6)}
    assert {line["item"] for line in lines if line["spec"] is None} == {None}

    _, by_item = compare_json(out, "--split-by", "service.version", "--align-by", "item")
    (row,) = by_item["comparisons"]  # results without an item (always-on) are not compared
    assert (row["pairs"], row["a_wins"], row["b_wins"], row["ties"]) == (6, 0, 4, 2)
    _, by_input = compare_json(out, "--split-by", "service.version")
    exact = [r for r in by_input["comparisons"] if r["evaluator"] == "trajectory_exact_match"]
    assert exact[0]["pairs"] == 0  # the inputs never match


def test_tally_is_the_plug_point_for_any_preference_source() -> None:
    tally = Tally()
    for preference in ("a", "b", "tie", "a"):
        tally.add(preference)  # type: ignore[arg-type]
    assert (tally.a, tally.b, tally.ties, tally.pairs) == (2, 1, 1, 4)
    assert prefer(0.5, 0.5 + 1e-12, True) == "tie"
    assert prefer(0.2, 0.1, False) == "b"
    side = Side("x")
    assert compare(side, Side("y")) == []


def test_non_finite_scores_are_not_preferences(tmp_path: Path) -> None:
    # json.loads accepts NaN / Infinity; a NaN pair used to count as a win for B.
    a = results(tmp_path / "a.jsonl", record("x", float("nan")), record("y", 1.0))
    b = results(tmp_path / "b.jsonl", record("x", 0.5), record("y", float("inf")))
    code, report = compare_json(a, b)
    assert code == 0
    (row,) = report["comparisons"]
    assert (row["a_wins"], row["b_wins"], row["ties"]) == (0, 0, 0)
    assert (row["only_a"], row["only_b"]) == (1, 1)
