"""The ``judges`` config section, and spec entries' ``judge`` / ``sample_rate``."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError
from support.paths import ROOT

from collector.config.settings import Config, ConfigError, format_validation_error, load_config
from collector.processing.wiring import start_judge_worker
from collector.telemetry.registry import Telemetry
from evaluators.runner import EvaluationRunner
from evaluators.spec import SpecError, build_spec, load_spec
from evaluators.trajectory import Trajectory

ENDPOINT = {"base_url": "http://127.0.0.1:9/v1/", "model": "m"}


def test_judges_section_defaults_and_durations() -> None:
    config = Config.model_validate(
        {"judges": {"endpoints": {"default": {**ENDPOINT, "timeout": "1500ms"}}}}
    )
    judge = config.judges.endpoints["default"]
    assert judge.timeout == 1.5 and judge.backoff_max == 30.0
    assert judge.url == "http://127.0.0.1:9/v1/chat/completions"
    assert (config.judges.queue_size, config.judges.drain_timeout) == (100, 5.0)
    assert Config().judges.endpoints == {}


@pytest.mark.parametrize(
    ("endpoint", "where"),
    [
        ({**ENDPOINT, "modle": "x"}, "judges.endpoints.default.modle"),
        ({**ENDPOINT, "base_url": "api.openai.com"}, "judges.endpoints.default.base_url"),
        ({**ENDPOINT, "max_concurrency": 0}, "judges.endpoints.default.max_concurrency"),
        ({**ENDPOINT, "api_key_env": "A", "api_key_file": "k"}, "judges.endpoints.default"),
        ({**ENDPOINT, "budget": {"calls": -1}}, "judges.endpoints.default.budget.calls"),
    ],
)
def test_bad_judge_settings_name_the_key(endpoint: dict[str, object], where: str) -> None:
    with pytest.raises(ValidationError) as caught:
        Config.model_validate({"judges": {"endpoints": {"default": endpoint}}})
    assert f"evald.yaml: {where}:" in format_validation_error("evald.yaml", caught.value)


def test_a_missing_api_key_stops_start_up_naming_the_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("EVALD_TEST_NO_KEY", raising=False)
    endpoint = {**ENDPOINT, "api_key_env": "EVALD_TEST_NO_KEY"}
    config = Config.model_validate({"judges": {"endpoints": {"default": endpoint}}})
    with pytest.raises(ConfigError, match=r"judges\.endpoints\.default\.api_key_env: environment"):
        start_judge_worker(config, Telemetry())


def test_an_api_key_file_is_read_relative_to_the_config(tmp_path: Path) -> None:
    (tmp_path / "judge.key").write_text("sk-from-file\n")
    (tmp_path / "evald.yaml").write_text(
        "judges:\n  endpoints:\n    default:\n      base_url: http://127.0.0.1:9/v1\n"
        "      model: m\n      api_key_file: judge.key\n"
    )
    worker = start_judge_worker(load_config(tmp_path / "evald.yaml"), Telemetry())
    assert worker is not None
    worker.close(1.0)


def test_no_endpoints_no_worker() -> None:
    assert start_judge_worker(Config(), Telemetry()) is None


def test_the_default_config_runs_without_any_judge() -> None:
    config = load_config(ROOT / "config" / "evald.yaml")
    assert config.judges.endpoints == {}


SPEC = """\
id: judged
match: {sample_rate: 0.5}
reference: {response: "We have 20 songs"}
evaluators:
  - latency
  - {name: final_answer_correct, sample_rate: 0.2}
  - {name: step_necessity, judge: strict}
"""


def test_entries_get_judge_names_and_nested_sample_rates(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC)
    spec = load_spec(path, judges=["default", "strict"])
    latency, answer, steps = spec.bound
    assert (latency.judge, latency.sample_rate) == (None, 0.5)
    assert (answer.judge, answer.sample_rate) == ("default", pytest.approx(0.1))
    assert (steps.judge, steps.sample_rate) == ("strict", 0.5)


def test_an_unknown_judge_is_a_spec_error_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC)
    with pytest.raises(SpecError) as caught:
        load_spec(path, judges=["default"])
    assert str(caught.value) == (
        f"{path}:7: evaluators[2].judge: no judge named 'strict' is configured "
        "(judges.endpoints: default)"
    )


def test_judge_on_a_deterministic_evaluator_is_an_error() -> None:
    data = {"id": "s", "evaluators": [{"name": "latency", "judge": "default"}]}
    with pytest.raises(SpecError, match=r"evaluators\[0\]\.judge: 'latency' is not an LLM judge"):
        build_spec(data)


def test_entry_sampling_is_deterministic_by_trace_id_and_nested() -> None:
    data = {"id": "s", "evaluators": ["latency", {"name": "failure", "sample_rate": 0.3}]}
    spec = build_spec(data)
    traces = [
        Trajectory(f"{n:032x}", "s", None, None, None, None, False, 1, 0, ()) for n in range(2000)
    ]

    def chosen(bound_index: int) -> set[str]:
        with EvaluationRunner() as runner:
            return {t.trace_id for t in traces if runner.run(t, [spec.bound[bound_index]])}

    failure = chosen(1)
    assert chosen(1) == failure  # the same decisions every time
    assert 0.25 < len(failure) / len(traces) < 0.35
    assert chosen(0) == {t.trace_id for t in traces}
    half = build_spec({"id": "h", "evaluators": [{"name": "failure", "sample_rate": 0.5}]})
    with EvaluationRunner() as runner:
        at_half = {t.trace_id for t in traces if runner.run(t, [half.bound[0]])}
    assert failure < at_half  # rates nest: a trace kept at 0.3 is kept at 0.5


def test_every_public_judge_name_resolves() -> None:
    from evaluators import judges

    for name in judges.__all__:
        assert getattr(judges, name) is not None
    with pytest.raises(AttributeError):
        judges.NotThere  # noqa: B018 - the attribute access is the test
