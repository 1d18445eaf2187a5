"""A judge against a real local chat-completions server: request shape, retries with
backoff honouring Retry-After, timeouts, malformed answers, rate limits, the API key."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

import pytest
from pydantic import SecretStr
from support.fake_openai import FakeChatServer, Reply, error, text, verdict

from evaluators.judges.answer import Grade
from evaluators.judges.judge import Judge
from evaluators.judges.metrics import NoJudgeMetrics
from evaluators.judges.protocol import ChatRequest, JudgeError, Message, parse_retry_after
from evaluators.judges.settings import JudgeKeyError, JudgeSettings, read_api_key

if TYPE_CHECKING:
    from support.loop import LoopThread

pytestmark = [pytest.mark.integration, pytest.mark.timeout(30)]

T = TypeVar("T")
KEY = "sk-test-5f1e0c9a7b3d"
REQUEST = ChatRequest(
    (Message("system", "grade it"), Message("user", "data")), "Grade", Grade.model_json_schema()
)


class Recorder(NoJudgeMetrics):
    """Injected ``sleep`` (records, returns at once) and judge metrics (records some)."""

    def __init__(self) -> None:
        self.sleeps: list[float] = []
        self.attempts: list[str] = []
        self.token_counts: list[tuple[int, int]] = []

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)

    def attempt(self, judge: str, outcome: str, latency_s: float) -> None:
        self.attempts.append(outcome)

    def tokens(self, judge: str, prompt: int, completion: int) -> None:
        self.token_counts.append((prompt, completion))


@pytest.fixture
def server(loop_thread: LoopThread, start: Callable[[Any], Any]) -> FakeChatServer:
    server: FakeChatServer = start(FakeChatServer(loop_thread))
    return server


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


def settings(server: FakeChatServer, **overrides: Any) -> JudgeSettings:
    values: dict[str, Any] = {"base_url": server.url, "model": "judge-model", **overrides}
    return JudgeSettings.model_validate(values)


def with_judge(judge: Judge, work: Callable[[Judge], Awaitable[T]]) -> T:
    """Run ``work(judge)`` on a fresh event loop, closing the judge's session after."""

    async def scenario() -> T:
        try:
            return await work(judge)
        finally:
            await judge.close()

    return asyncio.run(scenario())


def make_judge(
    server: FakeChatServer, recorder: Recorder, key: str | None = None, **kw: Any
) -> Judge:
    secret = SecretStr(key) if key else None
    return Judge(
        "default",
        settings(server, **kw),
        secret,
        recorder,
        sleep=recorder.sleep,
        rng=random.Random(7),
        clock=lambda: 100.0,
    )


def ask(judge: Judge) -> Any:
    return with_judge(judge, lambda j: j.complete(REQUEST))


def test_request_has_model_messages_and_strict_json_schema(
    server: FakeChatServer, recorder: Recorder
) -> None:
    server.script.append(verdict(reasoning="fine", is_correct=True))
    reply = ask(make_judge(server, recorder, temperature=0.0, max_tokens=300))
    body = server.requests[0].body
    assert body["model"] == "judge-model"
    assert body["temperature"] == 0.0
    assert body["max_tokens"] == 300
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["name"] == "Grade"
    assert fmt["json_schema"]["strict"] is True
    assert set(fmt["json_schema"]["schema"]["required"]) == {"reasoning", "is_correct"}
    assert not server.schema_problems
    assert reply.content == '{"reasoning": "fine", "is_correct": true}'
    assert (reply.prompt_tokens, reply.completion_tokens) == (120, 30)
    assert recorder.attempts == ["ok"]
    assert recorder.token_counts == [(120, 30)]


@pytest.mark.parametrize(
    ("mode", "expected"), [("json_object", {"type": "json_object"}), ("none", None)]
)
def test_response_format_follows_the_setting(
    server: FakeChatServer, recorder: Recorder, mode: str, expected: Any
) -> None:
    ask(make_judge(server, recorder, response_format=mode))
    assert server.requests[0].body.get("response_format") == expected


def test_429_waits_for_retry_after_then_succeeds(
    server: FakeChatServer, recorder: Recorder
) -> None:
    server.script.extend([error(429, retry_after="2"), verdict(reasoning="r", is_correct=False)])
    reply = ask(make_judge(server, recorder, backoff_initial=0.5))
    assert server.calls == 2
    assert recorder.sleeps == [2.0]  # the server's delay, not the shorter backoff
    assert recorder.attempts == ["rate_limited", "ok"]
    assert '"is_correct": false' in reply.content


def test_5xx_is_retried_with_jittered_exponential_backoff(
    server: FakeChatServer, recorder: Recorder
) -> None:
    server.script.extend(
        [error(500), error(503), error(502), verdict(reasoning="r", is_correct=True)]
    )
    ask(make_judge(server, recorder, backoff_initial=1.0, backoff_max=30.0, retries=3))
    assert server.calls == 4
    first, second, third = recorder.sleeps
    assert 0.5 <= first <= 1.0
    assert 1.0 <= second <= 2.0
    assert 2.0 <= third <= 4.0
    assert len(set(recorder.sleeps)) == 3
    assert recorder.attempts == ["server_error"] * 3 + ["ok"]


def test_gives_up_after_the_configured_retries(server: FakeChatServer, recorder: Recorder) -> None:
    server.default = error(500, message="boom")
    with pytest.raises(JudgeError, match=r"HTTP 500: boom \(after 3 attempts\)") as caught:
        ask(make_judge(server, recorder, retries=2))
    assert caught.value.kind == "server_error"
    assert server.calls == 3
    assert len(recorder.sleeps) == 2


def test_retry_after_beyond_backoff_max_fails_at_once(
    server: FakeChatServer, recorder: Recorder
) -> None:
    server.script.append(error(429, retry_after="120"))
    with pytest.raises(JudgeError, match="exceeds backoff_max") as caught:
        ask(make_judge(server, recorder, backoff_max=30.0))
    assert caught.value.kind == "gave_up"
    assert server.calls == 1
    assert recorder.sleeps == []


def test_client_errors_are_not_retried(server: FakeChatServer, recorder: Recorder) -> None:
    server.script.append(error(400, message="response_format is not supported"))
    with pytest.raises(JudgeError, match="HTTP 400: response_format is not supported"):
        ask(make_judge(server, recorder))
    assert server.calls == 1


def test_a_slow_answer_times_out_and_is_retried(server: FakeChatServer, recorder: Recorder) -> None:
    server.default = Reply(hold=True, content="{}")  # never answers until the test ends
    with pytest.raises(JudgeError, match=r"no answer within 0.2s \(after 2 attempts\)") as caught:
        ask(make_judge(server, recorder, timeout=0.2, retries=1))
    assert caught.value.kind == "timeout"
    assert server.calls == 2
    assert recorder.attempts == ["timeout", "timeout"]


@pytest.mark.parametrize(
    "body",
    [b"{not json", b'{"choices": []}', b'{"choices": [{"message": {"content": 3}}]}', b""],
)
def test_a_malformed_body_is_a_permanent_error(
    server: FakeChatServer, recorder: Recorder, body: bytes
) -> None:
    server.script.append(Reply(body=body))
    with pytest.raises(JudgeError, match="malformed chat-completions response") as caught:
        ask(make_judge(server, recorder))
    assert caught.value.kind == "malformed"
    assert server.calls == 1


def test_malformed_json_content_is_returned_for_the_tolerant_parser(
    server: FakeChatServer, recorder: Recorder
) -> None:
    """The HTTP answer is fine; its content is not JSON: parsing is the evaluator's job."""
    server.script.append(text('Sure! ```json\n{"reasoning": "x", "is_correct": true\n```'))
    assert ask(make_judge(server, recorder)).content.startswith("Sure!")


def test_requests_per_second_spaces_the_calls(server: FakeChatServer, recorder: Recorder) -> None:
    judge = make_judge(server, recorder, requests_per_second=2.0)  # the clock stands still

    async def three(j: Judge) -> None:
        for _ in range(3):
            await j.complete(REQUEST)

    with_judge(judge, three)
    assert server.calls == 3
    assert recorder.sleeps == [0.5]  # a burst of 2, then one every 0.5 s


def test_the_api_key_is_sent_but_never_logged_or_raised(
    server: FakeChatServer,
    recorder: Recorder,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("EVALD_TEST_JUDGE_KEY", KEY)
    config = settings(server, api_key_env="EVALD_TEST_JUDGE_KEY")
    key = read_api_key(config)
    assert key is not None
    assert KEY not in repr(key) and KEY not in repr(config)
    server.script.extend([verdict(reasoning="r", is_correct=True), Reply(echo_auth=True)])
    caplog.set_level(logging.DEBUG)
    judge = Judge("default", config, key, recorder, sleep=recorder.sleep)

    async def twice(j: Judge) -> str:
        await j.complete(REQUEST)
        try:
            await j.complete(REQUEST)
        except JudgeError as exc:
            logging.getLogger("test").exception("judge failed")
            return f"{exc!r} {exc} {exc.__context__!r} {exc.__cause__!r}"
        raise AssertionError("the 401 must raise")

    raised = with_judge(judge, twice)
    assert server.requests[0].headers["Authorization"] == f"Bearer {KEY}"
    assert "invalid key: Bearer ***" in raised  # the server echoed it; we redacted it
    assert KEY not in raised
    assert KEY not in caplog.text
    assert "invalid key" in caplog.text


def test_azure_style_key_header_query_and_extra_headers(
    server: FakeChatServer, recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALD_TEST_JUDGE_KEY", KEY)
    config = settings(
        server,
        api_key_env="EVALD_TEST_JUDGE_KEY",
        api_key_header="api-key",
        query={"api-version": "2024-10-21"},
        headers={"X-Gateway-Route": "judges"},
    )
    ask(Judge("default", config, read_api_key(config), recorder, sleep=recorder.sleep))
    (seen,) = server.requests
    assert seen.headers["api-key"] == KEY  # the bare key, as Azure OpenAI wants it
    assert "Authorization" not in seen.headers
    assert seen.query == {"api-version": "2024-10-21"}
    assert seen.headers["X-Gateway-Route"] == "judges"


@pytest.mark.parametrize("name", ["Authorization", "API-KEY"])
def test_a_key_header_in_the_config_is_refused(server: FakeChatServer, name: str) -> None:
    with pytest.raises(ValueError, match="never goes in the config"):
        settings(server, api_key_header="api-key", headers={name: "sk-secret"})


def test_without_a_key_no_authorization_header(server: FakeChatServer, recorder: Recorder) -> None:
    ask(make_judge(server, recorder))
    assert "Authorization" not in server.requests[0].headers


def test_a_missing_key_variable_names_the_setting(
    server: FakeChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EVALD_TEST_UNSET_KEY", raising=False)
    with pytest.raises(
        JudgeKeyError, match="api_key_env: environment variable 'EVALD_TEST_UNSET_KEY'"
    ):
        read_api_key(settings(server, api_key_env="EVALD_TEST_UNSET_KEY"))


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        ("7", 7.0),
        ("0.5", 0.5),
        ("Wed, 21 Oct 2015 07:28:10 GMT", 10.0),
        ("soon", None),
        (None, None),
    ],
)
def test_retry_after_forms(header: str | None, seconds: float | None) -> None:
    now = 1445412480.0  # 07:28:00 that day
    assert parse_retry_after(header, now=now) == seconds
