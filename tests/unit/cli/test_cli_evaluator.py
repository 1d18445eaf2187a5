"""`evald evaluator new|check`, and a generated evaluator used by file:// live and in
replay with its failures isolated (issue 4, acceptance 3); `evald check` and judges."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from support.daemon_harness import GOLDEN, daemon_config, running_daemon
from support.paths import FIXTURES

from collector.cli.command import main

if TYPE_CHECKING:
    from support.loop import LoopThread

FIXTURES = FIXTURES / "evaluators"
PYDANTIC = GOLDEN / "pydantic-ai"


def new(tmp_path: Path, name: str = "refund-check") -> Path:
    assert main(["evaluator", "new", name, "--dir", str(tmp_path)]) == 0
    return tmp_path / f"{name.replace('-', '_')}.py"


def write_spec(directory: Path, evaluators: str) -> Path:
    spec = directory / "spec.yaml"
    spec.write_text(
        textwrap.dedent(
            """
            id: custom
            match: {agent: music_store_support}
            reference: {expected_tools: [lookup_invoice, refund]}
            evaluators:
            """
        )
        + textwrap.indent(textwrap.dedent(evaluators).strip(), "  ")
        + "\n"
    )
    return spec


def test_new_writes_a_working_template(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = new(tmp_path / "evals")
    out = capsys.readouterr().out
    assert f"wrote {path}" in out and '"file://refund_check.py:RefundCheck"' in out
    text = path.read_text()
    assert "class RefundCheckCriteria(Criteria):" in text
    assert "class RefundCheck(Evaluator[RefundCheckCriteria, RefundCheckConfig]):" in text
    assert 'id = "refund_check"' in text
    assert main(["evaluator", "new", "refund-check", "--dir", str(tmp_path / "evals")]) == 2
    assert "exists" in capsys.readouterr().err
    assert path.read_text() == text  # never overwritten
    assert main(["evaluator", "new", "9lives", "--dir", str(tmp_path)]) == 2
    assert "invalid name '9lives'" in capsys.readouterr().err


def test_check_validates_and_prints_the_schemas(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = new(tmp_path)
    capsys.readouterr()
    criteria = '{"expected_tools": ["lookup_invoice"]}'
    assert main(["evaluator", "check", str(path), "--criteria", criteria]) == 0
    out = capsys.readouterr().out
    assert out.startswith("RefundCheck (id refund_check): OK\n")
    assert '  sample trajectory: {"explanation":"called 1 of the 1 expected tools"' in out
    assert '"title": "RefundCheckCriteria"' in out and '"title": "RefundCheckConfig"' in out

    assert main(["evaluator", "check", f"{path}:RefundCheck", "--json"]) == 0
    [report] = json.loads(capsys.readouterr().out)["evaluators"]
    assert report["ok"] and report["id"] == "refund_check"
    assert report["criteria_schema"]["properties"]["expected_tools"]["type"] == "array"
    assert report["config_schema"]["properties"]["threshold"]["default"] == 1.0
    assert report["results"]["sample"]["kind"] == "error"  # no expected tools: says so


def test_check_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluator", "check", str(FIXTURES / "bad_evaluators.py")]) == 1
    out = capsys.readouterr().out
    assert "NoId (id ?): FAILED\n  problem: NoId has no non-empty string `id`" in out
    assert "problem: WrongCriteriaModel.criteria_model must be a subclass of Criteria" in out
    assert "RefusingConstructor (id refusing_constructor): FAILED" in out
    assert "problem: constructing the evaluator failed: RuntimeError: needs a licence key" in out
    assert main(["evaluator", "check", f"{FIXTURES / 'max_steps.py'}:Helper"]) == 1
    assert "Helper (id ?): FAILED" in capsys.readouterr().out
    (tmp_path / "broken.py").write_text("def oops(:\n")
    assert main(["evaluator", "check", str(tmp_path / "broken.py")]) == 1
    assert "SyntaxError" in capsys.readouterr().err
    (tmp_path / "empty.py").write_text("X = 1\n")
    assert main(["evaluator", "check", str(tmp_path / "empty.py")]) == 2
    assert "defines no evaluator class" in capsys.readouterr().err
    assert main(["evaluator", "check", str(tmp_path / "missing.py")]) == 2
    assert main(["evaluator", "check", "evaluators.builtin.run_facts:Latency"]) == 0
    lc = f"langchain:file://{FIXTURES / 'langchain_evaluators.py'}:StepNecessityEvaluator"
    assert main(["evaluator", "check", lc]) == 0
    assert "LangChain[StepNecessityEvaluator] (id step_necessity_evaluator): OK" in (
        capsys.readouterr().out
    )
    with pytest.raises(SystemExit) as info:
        main(["evaluator", "check", "x.py", "--criteria", "[1]"])
    assert info.value.code == 2


def isolating_spec(tmp_path: Path) -> Path:
    """The generated evaluator, a copy that raises, and a built-in beside them."""
    new(tmp_path)
    broken = (tmp_path / "refund_check.py").read_text()
    broken = broken.replace('id = "refund_check"', 'id = "broken_check"').replace(
        "expected = [", "raise RuntimeError('bug in the evaluator')\n        expected = ["
    )
    (tmp_path / "broken_check.py").write_text(broken)
    return write_spec(
        tmp_path,
        """
        - "file://refund_check.py:RefundCheck"
        - "file://broken_check.py:RefundCheck"
        - {name: trajectory_single_tool_use, criteria: {tool: refund}}
        """,
    )


def test_a_generated_evaluator_runs_in_replay_and_its_failures_are_isolated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = isolating_spec(tmp_path)
    results = tmp_path / "results.jsonl"
    inputs = [str(PYDANTIC / "correct.jsonl"), str(PYDANTIC / "wrong_order.jsonl")]
    code = main(["replay", *inputs, "--spec", str(spec), "--results-out", str(results)])
    assert code == 1  # the broken evaluator's errors fail the gate
    lines = [json.loads(line) for line in results.read_text().splitlines()]
    by_evaluator: dict[str, list[dict[str, object]]] = {}
    for line in lines:
        by_evaluator.setdefault(line["evaluator"], []).append(line)
    assert [(r["score"], r["passed"]) for r in by_evaluator["refund_check"]] == [(1.0, True)] * 2
    assert [r["error"] for r in by_evaluator["broken_check"]] == [
        "RuntimeError: bug in the evaluator"
    ] * 2
    assert [r["passed"] for r in by_evaluator["trajectory_single_tool_use"]] == [True, True]
    assert len(by_evaluator["failure"]) == 2  # the always-on evaluators ran too
    capsys.readouterr()


def test_a_generated_evaluator_runs_live(tmp_path: Path, loop_thread: LoopThread) -> None:
    spec = isolating_spec(tmp_path)
    config = daemon_config(specs=[str(spec)])
    with running_daemon(config, loop_thread) as running:
        running.post_file(PYDANTIC / "correct.jsonl")
        running.complete_traces()
        labels = {"spec": "custom", "service": "music-store-support-pydantic-ai",
                  "agent": "music_store_support"}  # fmt: skip
        assert running.metric("evald_evaluations_total", evaluator="refund_check",
                              outcome="pass", **labels) == 1  # fmt: skip
        assert running.metric("evald_evaluations_total", evaluator="broken_check",
                              outcome="error", **labels) == 1  # fmt: skip
        assert running.metric("evald_evaluations_total", evaluator="trajectory_single_tool_use",
                              outcome="pass", **labels) == 1  # fmt: skip
        assert running.metric("evald_traces_evaluated_total", service=labels["service"],
                              agent=labels["agent"]) == 1  # fmt: skip


def test_check_validates_judge_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "judged.yaml"
    spec.write_text("id: judged\nevaluators: [{name: step_necessity, judge: strict}]\n")
    assert main(["check", "--spec", str(spec)]) == 1
    err = capsys.readouterr().err
    assert f"{spec}:2: evaluators[0].judge: no judge named 'strict' is configured" in err
    config = tmp_path / "evald.yaml"
    config.write_text(
        "judges: {endpoints: {strict: {base_url: 'http://127.0.0.1:9/v1', model: m}}}\n"
    )
    assert main(["check", "--config", str(config), "--spec", str(spec)]) == 0
    assert "judged: step_necessity" in capsys.readouterr().out
