"""``evald compare --judge``: a pairwise LLM judge over two trajectories files, end to
end through the CLI, the judge worker and a real local chat-completions server."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from support.fake_openai import FakeChatServer, Reply, Seen, text, verdict
from support.judge_kit import step, trajectory

from collector.cli.command import main
from collector.offline.compare_judge import item_seed, trajectory_from_json
from collector.offline.stats import binomial_test, wilson_interval
from evaluators.judges.pairwise import pairwise_prompt

if TYPE_CHECKING:
    from support.loop import LoopThread

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

QUESTIONS = [f"question {i}" for i in range(12)]


@pytest.fixture
def server(loop_thread: LoopThread, start: Callable[[Any], Any]) -> FakeChatServer:
    server: FakeChatServer = start(FakeChatServer(loop_thread))
    return server


def data_block(seen: Seen) -> dict[str, Any]:
    """The JSON document between the data markers of the judge's user message."""
    body = seen.user.split(">>>\n", 1)[1].rsplit("\n<<<END DATA", 1)[0]
    return dict(json.loads(body))


def prefers_good(seen: Seen) -> Reply:
    """A judge that prefers the response saying "good", in the shown order's terms."""
    data = data_block(seen)
    first, second = data["assistant_A"]["response"], data["assistant_B"]["response"]
    if ("good" in first) == ("good" in second):
        return verdict(reasoning="as good as each other", preferred="tie")
    return verdict(reasoning="one is good", preferred="A" if "good" in first else "B")


def trajectories(path: Path, answers: dict[str, str], trace: int = 0) -> Path:
    lines = []
    for n, (question, answer) in enumerate(answers.items()):
        run = trajectory(
            step("search", {"q": question}, ["hit"]),
            input=question,
            output=answer,
            trace_id=f"{trace + n:032x}",
        )
        lines.append(json.dumps(run.to_json()))
    path.write_text("\n".join(lines) + "\n")
    return path


def config(tmp_path: Path, server: FakeChatServer, cache: bool = False) -> Path:
    endpoint = {"base_url": server.url, "model": "judge-model", "backoff_initial": "10ms"}
    judges: dict[str, Any] = {"endpoints": {"default": endpoint}}
    if cache:
        judges["cache_file"] = "judge-cache.jsonl"  # relative to the config file
    path = tmp_path / "evald.yaml"
    path.write_text(json.dumps({"judges": judges}))  # JSON is YAML
    return path


def judged(a: Path, b: Path, cfg: Path, *args: str) -> tuple[int, dict[str, Any]]:
    out = a.with_suffix(".judged.json")
    out.unlink(missing_ok=True)
    code = main(["compare", str(a), str(b), "--judge", "default", "--config", str(cfg),
                 "--report", "json", "--report-out", str(out), *args])  # fmt: skip
    return code, json.loads(out.read_text()) if out.exists() else {}


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path]:
    """A answers every question well; B only the last two (ties)."""
    a = trajectories(tmp_path / "a.jsonl", {q: f"good answer to {q}" for q in QUESTIONS})
    b = trajectories(
        tmp_path / "b.jsonl",
        {q: f"{'good' if i >= 10 else 'poor'} reply to {q}" for i, q in enumerate(QUESTIONS)},
        trace=100,
    )
    return a, b


def test_the_judges_answers_map_back_through_the_swap(
    tmp_path: Path, server: FakeChatServer, runs: tuple[Path, Path]
) -> None:
    server.default = prefers_good
    code, report = judged(*runs, config(tmp_path, server), "--seed", "7")
    assert code == 0
    (row,) = report["comparisons"]
    assert row["evaluator"] == "judge:default"
    assert (row["pairs"], row["a_wins"], row["b_wins"], row["ties"]) == (12, 10, 0, 2)
    assert row["a_preferred_ci95"] == pytest.approx(list(wilson_interval(10, 10) or ()))
    assert row["p_value"] == pytest.approx(binomial_test(10, 10))
    assert row["verdict"] == "A better" and row["mean_a"] is None
    items = report["judge"]["items"]
    assert {item["swapped"] for item in items} == {True, False}  # both orders were shown
    for item in items:
        assert item["preferred"] == ("tie" if item["item"] in QUESTIONS[10:] else "a")
    assert server.calls == 12 and server.schema_problems == []


def test_positions_are_drawn_from_the_recorded_seed(
    tmp_path: Path, server: FakeChatServer, runs: tuple[Path, Path]
) -> None:
    server.default = verdict(reasoning="the first one", preferred="A")
    cfg = config(tmp_path, server)

    def shown_first_is_b(seed: str) -> dict[str, bool]:
        start = server.calls
        code, report = judged(*runs, cfg, "--seed", seed)
        assert code == 0 and report["judge"]["seed"] == int(seed)
        order = {}
        for seen in server.requests[start:]:
            data = data_block(seen)
            order[data["input"]] = "reply" in data["assistant_A"]["response"]  # B's wording
        # The judge always says "A" (shown first): the preference is whoever was shown first.
        for item in report["judge"]["items"]:
            assert item["swapped"] is order[item["item"]]
            assert item["preferred"] == ("b" if item["swapped"] else "a")
            assert item["seed"] == item_seed(int(seed), item["item"])
        return order

    first = shown_first_is_b("7")
    assert shown_first_is_b("7") == first  # same seed, same orders
    expected = {q: pairwise_prompt(q, "a", "b", item_seed(7, q)).context["swapped"]
                for q in QUESTIONS}  # fmt: skip
    assert first == expected
    assert shown_first_is_b("8") != first  # another seed, other orders


def test_seed_is_recorded_in_every_format(
    tmp_path: Path,
    server: FakeChatServer,
    runs: tuple[Path, Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    server.default = prefers_good
    cfg = config(tmp_path, server)
    args = ["compare", *map(str, runs), "--judge", "default", "--config", str(cfg)]
    assert main([*args, "--seed", "42", "--criteria", "be terse"]) == 0
    table = capsys.readouterr().out
    assert "judge:default" in table and "10 (83.3%)" in table and "A better" in table
    assert "position seed: 42" in table and "--seed 42" in table
    assert "criteria: be terse" in table
    assert "Also judge by: be terse" in server.requests[0].system
    assert main([*args, "--seed", "42", "--report", "markdown"]) == 0
    markdown = capsys.readouterr().out
    assert markdown.startswith("## evald compare") and "| - | judge:default | 12 |" in markdown
    assert "- judge: default; position seed: 42" in markdown
    assert main(args) == 0  # no --seed: 0, recorded all the same
    assert "position seed: 0 " in capsys.readouterr().out


def test_a_second_identical_run_answers_from_the_cache(
    tmp_path: Path, server: FakeChatServer, runs: tuple[Path, Path]
) -> None:
    server.default = prefers_good
    cfg = config(tmp_path, server, cache=True)
    code, first = judged(*runs, cfg, "--seed", "3")
    assert code == 0 and server.calls == 12
    assert (tmp_path / "judge-cache.jsonl").exists()
    code, again = judged(*runs, cfg, "--seed", "3")
    assert code == 0 and server.calls == 12  # not one call more
    assert again == first


def test_judge_errors_are_counted_not_tallied(
    tmp_path: Path,
    server: FakeChatServer,
    runs: tuple[Path, Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    replies = iter([text("I cannot decide.")] + [verdict(reasoning="r", preferred="tie")] * 11)
    server.default = lambda seen: next(replies)
    code, report = judged(*runs, config(tmp_path, server))
    assert code == 0
    (row,) = report["comparisons"]
    assert (row["pairs"], row["ties"], row["p_value"]) == (11, 11, 1.0)
    assert report["judge"]["errors"] == 1
    (failed,) = [item for item in report["judge"]["items"] if item["error"]]
    assert failed["preferred"] is None and "UnreadableVerdict" in failed["error"]
    assert "1 item(s) without a judge verdict" in capsys.readouterr().err


def test_alignment_and_unpaired_items(tmp_path: Path, server: FakeChatServer) -> None:
    server.default = prefers_good
    a = trajectories(tmp_path / "a.jsonl", {"x": "good x", "y": "good y", "only-a": "good"})
    b = trajectories(tmp_path / "b.jsonl", {"y": "poor y", "x": "good x 2", "only-b": "poor"})
    with b.open("a") as lines:  # a second run of "x" on B, and one without an input
        lines.write(json.dumps(trajectory(input="x", output="poor x").to_json()) + "\n")
        lines.write(json.dumps(trajectory(input=None, output="poor").to_json()) + "\n")
    code, report = judged(a, b, config(tmp_path, server))
    (row,) = report["comparisons"]
    assert (row["pairs"], row["a_wins"], row["ties"], row["only_a"], row["only_b"]) == (
        2, 1, 1, 1, 1,
    )  # fmt: skip
    assert report["judge"]["repeated"] == {"a": 0, "b": 1}
    assert report["judge"]["unaligned"] == {"a": 0, "b": 1}
    assert report["b"]["results"] == 5
    code, by_trace = judged(a, b, config(tmp_path, server), "--align-by", "trace_id")
    assert code == 0 and by_trace["comparisons"][0]["pairs"] == 3  # trace ids 0, 1, 2 on both


def test_usage_and_input_errors_exit_2(
    tmp_path: Path,
    server: FakeChatServer,
    runs: tuple[Path, Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    a, b = map(str, runs)
    cfg = str(config(tmp_path, server))
    assert main(["compare", a, b, "--judge", "strict", "--config", cfg]) == 2
    assert "no such judge" in capsys.readouterr().err
    assert main(["compare", a, b, "--judge", "default"]) == 2  # no config, no judges
    assert main(["compare", a, b, "--seed", "1"]) == 2  # --seed needs --judge
    assert main(["compare", a, "--judge", "default", "--config", cfg]) == 2
    assert main(["compare", a, "--judge", "default", "--config", cfg, "--split-by", "x"]) == 2
    item = ["--align-by", "item"]
    assert main(["compare", a, b, "--judge", "default", "--config", cfg, *item]) == 2
    assert "trajectories carry no dataset item" in capsys.readouterr().err
    results = tmp_path / "results.jsonl"
    results.write_text(json.dumps({"evaluator": "e", "score": 1, "input": "q"}) + "\n")
    assert main(["compare", a, str(results), "--judge", "default", "--config", cfg]) == 2
    assert "not an evald trajectory record" in capsys.readouterr().err
    assert main(["compare", a, b]) == 2  # trajectories without --judge: a hint
    assert "compare those with --judge NAME" in capsys.readouterr().err
    bad_config = tmp_path / "bad.yaml"
    bad_config.write_text("judges: [")
    assert main(["compare", a, b, "--judge", "default", "--config", str(bad_config)]) == 2
    assert server.calls == 0


def test_trajectory_lines_round_trip() -> None:
    run = trajectory(
        step("lookup", {"id": 1}, {"ok": True}, i=0, call_id="c1"),
        step("refund", None, None, i=1, error="boom"),
    )
    assert trajectory_from_json(json.loads(json.dumps(run.to_json()))).to_json() == run.to_json()
