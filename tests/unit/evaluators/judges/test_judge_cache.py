"""The judge result cache (persisted across processes) and the tolerant verdict parser."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from pydantic import Field

from evaluators.judges.base import read_verdict
from evaluators.judges.cache import ResultCache, cache_key
from evaluators.judges.judge import Judge
from evaluators.judges.parse import VerdictError, extract_json, last_line
from evaluators.judges.prompt import Verdict
from evaluators.judges.protocol import ChatReply, ChatRequest, Message
from evaluators.judges.settings import JudgeSettings

REPLY = ChatReply('{"ok": true}', 10, 2, "m")


def request(text: str) -> ChatRequest:
    return ChatRequest((Message("system", "s"), Message("user", text)), "V", {"type": "object"})


def test_keys_depend_on_judge_identity_and_prompt() -> None:
    base = cache_key({"judge": "a", "model": "m"}, request("x"))
    assert base == cache_key({"model": "m", "judge": "a"}, request("x"))
    assert base != cache_key({"judge": "b", "model": "m"}, request("x"))
    assert base != cache_key({"judge": "a", "model": "m2"}, request("x"))
    assert base != cache_key({"judge": "a", "model": "m"}, request("y"))


def test_a_persisted_cache_answers_in_a_new_instance(tmp_path: Path) -> None:
    path = tmp_path / "cache" / "judge.jsonl"
    first = ResultCache(10, path)
    first.put("k1", REPLY)
    first.put("k1", REPLY)  # already there: not written twice
    first.close()
    assert len(path.read_text().splitlines()) == 1
    second = ResultCache(10, path)
    assert second.get("k1") == REPLY
    assert second.get("k2") is None
    second.close()


def test_unreadable_lines_are_skipped(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "judge.jsonl"
    good = {"v": 1, "key": "k", **REPLY._asdict()}
    path.write_text(
        "not json\n" + json.dumps({"v": 99, "key": "x"}) + "\n" + json.dumps(good) + "\n"
    )
    with caplog.at_level(logging.WARNING):
        cache = ResultCache(10, path)
    assert cache.get("k") == REPLY
    assert "skipped 2 unreadable line(s)" in caplog.text
    cache.close()


def test_memory_is_bounded_least_recently_used_first() -> None:
    cache = ResultCache(2)
    cache.put("a", REPLY)
    cache.put("b", REPLY)
    assert cache.get("a") == REPLY  # a is now the most recent
    cache.put("c", REPLY)
    assert cache.get("b") is None and cache.get("a") == REPLY and len(cache) == 2


@pytest.mark.parametrize(
    "reply",
    [
        '{"ok": true}',
        '  {"ok": true, "extra": 1}\n',
        'Here you go:\n```json\n{"ok": true}\n```',
        'I think {not json} but {"ok": true} is my answer. {"ok": false}',
    ],
)
def test_extract_json_finds_the_first_object(reply: str) -> None:
    assert extract_json(reply)["ok"] is True


@pytest.mark.parametrize("reply", ["", "Y", "[1, 2]", "{broken"])
def test_extract_json_refuses_replies_without_an_object(reply: str) -> None:
    with pytest.raises(VerdictError, match="no JSON object"):
        extract_json(reply)


class Flag(Verdict):
    reasoning: str = Field(description="why")
    ok: bool


def test_read_verdict_validates_leniently_and_uses_the_fallback() -> None:
    assert read_verdict('{"reasoning": "r", "ok": "true", "junk": 1}', Flag).ok is True
    with pytest.raises(VerdictError, match="does not fit Flag: ok"):
        read_verdict('{"reasoning": "r"}', Flag)
    fallback = read_verdict("reasoning\nYES", Flag, lambda t: {"reasoning": t, "ok": True})
    assert fallback.ok is True
    with pytest.raises(VerdictError):
        read_verdict("no verdict", Flag, lambda t: None)
    assert last_line("a\n\n  N  \n") == "N"


def test_the_server_is_part_of_a_judges_identity() -> None:
    # An Azure deployment lives in base_url and api-version in the query: either
    # decides the model, so a changed one must not reuse cached verdicts.
    def identity(**changes: object) -> dict[str, object]:
        values: dict[str, object] = {"base_url": "https://a.example/v1", "model": "m", **changes}
        settings = JudgeSettings.model_validate(values)
        return Judge("j", settings).identity()

    keys = {
        cache_key(identity(**changes), request("x"))
        for changes in (
            {},
            {"base_url": "https://b.example/v1"},
            {"query": {"api-version": "2024-10-21"}},
        )
    }
    assert len(keys) == 3
