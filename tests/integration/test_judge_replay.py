"""Acceptance 3: the same replay run twice makes the same judge sampling decisions and,
with the persisted result cache, no second call. Each run builds its own processor,
judge worker and cache from the config (as two ``evald replay`` processes would):
only the cache file carries over."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from support.fake_openai import FakeChatServer, Seen, verdict
from support.paths import GOLDEN

from collector.config.settings import Config
from collector.offline.replay import Replayer
from evaluators.selectors import sampled

if TYPE_CHECKING:
    from support.loop import LoopThread

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

GOLDEN = GOLDEN / "traces"
SPEC = """\
id: refund-answer
match: {service: {regex: "^music-store-support"}}
reference:
  response: "Done! I refunded one copy of 'Comfortably Numb' ($0.99) from invoice 1042."
evaluators:
  - {name: final_answer_correct, sample_rate: 0.5}
"""


def grade(seen: Seen) -> Any:
    block = json.loads(seen.user.split("\n", 1)[1].rsplit("\n<<<END DATA", 1)[0])
    correct = "1042" in block["student_response"]
    return verdict(reasoning="compared with the reference", is_correct=correct)


@pytest.fixture
def server(loop_thread: LoopThread, start: Callable[[Any], Any]) -> FakeChatServer:
    server: FakeChatServer = start(FakeChatServer(loop_thread))
    server.default = grade
    return server


def replay(config: Config, out: Path) -> dict[str, dict[str, Any]]:
    Replayer(config, results_out=out).run([str(GOLDEN)])
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    return {line["trace_id"]: line for line in lines if line["evaluator"] == "final_answer_correct"}


def test_a_second_replay_reproduces_sampling_and_makes_no_call(
    server: FakeChatServer, tmp_path: Path
) -> None:
    (tmp_path / "spec.yaml").write_text(SPEC)
    config = Config.model_validate(
        {
            "specs": [str(tmp_path / "spec.yaml")],
            "evaluation": {"always": []},
            "judges": {
                "cache_file": str(tmp_path / "judge-cache.jsonl"),
                "endpoints": {"default": {"base_url": server.url, "model": "judge-model"}},
            },
        }
    )
    first = replay(config, tmp_path / "first.jsonl")
    calls = server.calls
    second = replay(config, tmp_path / "second.jsonl")

    assert calls > 0 and server.calls == calls  # the second run asked nothing
    assert set(first) == set(second)  # the same traces were judged
    assert all(sampled(trace_id, 0.5) for trace_id in first)
    assert {(t, r["score"], r["passed"]) for t, r in first.items()} == {
        (t, r["score"], r["passed"]) for t, r in second.items()
    }
    asked = [r for r in first.values() if r["error"] is None]
    # One call per distinct prompt: runs of other frameworks with the same question and
    # answer are cache hits already in the first replay; none for unsampled traces.
    assert sum(not r["details"]["cached"] for r in asked) == calls
    assert {r["details"]["cached"] for r in second.values() if r["error"] is None} == {True}
    assert {r["score"] for r in asked} == {0.0, 1.0}


def test_sampling_leaves_out_the_other_traces(server: FakeChatServer, tmp_path: Path) -> None:
    (tmp_path / "spec.yaml").write_text(SPEC.replace("sample_rate: 0.5", "sample_rate: 1.0"))
    config = Config.model_validate(
        {
            "specs": [str(tmp_path / "spec.yaml")],
            "evaluation": {"always": []},
            "judges": {"endpoints": {"default": {"base_url": server.url, "model": "m"}}},
        }
    )
    everything = replay(config, tmp_path / "all.jsonl")
    half = {t for t in everything if sampled(t, 0.5)}
    assert 0 < len(half) < len(everything)  # the golden traces do exercise the choice
