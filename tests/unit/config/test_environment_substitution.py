"""`${env:VAR}` and `${env:VAR:-default}` in the config file, as the Collector writes them."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from collector.config.environment import EnvironmentReferenceError, substitute
from collector.config.settings import ConfigError, load_config


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "evald.yaml"
    path.write_text(text)
    return path


def test_values_come_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALD_TEST_HOST", "127.0.0.1")
    monkeypatch.setenv("EVALD_TEST_TRACES", "123")
    config = load_config(write(tmp_path, (
        "receivers: {otlp: {grpc: {endpoint: '${env:EVALD_TEST_HOST}:4317'}}}\n"
        "assembly: {max_traces: '${env:EVALD_TEST_TRACES}',\n"
        "           idle_timeout: '${env:EVALD_TEST_IDLE:-2s}'}\n"
        "outputs: {otlp: {headers: {authorization: 'Bearer ${env:EVALD_TEST_HOST}'}}}\n"
    )))  # fmt: skip
    assert config.receivers.otlp.grpc.endpoint == "127.0.0.1:4317"
    assert config.assembly.max_traces == 123
    assert config.assembly.idle_timeout == 2.0
    assert config.outputs.otlp.headers == {"authorization": "Bearer 127.0.0.1"}


def test_an_unset_variable_without_default_names_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EVALD_TEST_MISSING", raising=False)
    path = write(tmp_path, "admin: {endpoint: '0.0.0.0:${env:EVALD_TEST_MISSING}'}\n")
    with pytest.raises(ConfigError) as error:
        load_config(path)
    assert str(error.value) == (
        f"{path}: admin.endpoint: environment variable EVALD_TEST_MISSING is not set "
        "(${env:EVALD_TEST_MISSING}, no default)"
    )


def test_a_whole_value_reference_takes_its_yaml_type() -> None:
    environ = {"N": "42", "FLAG": "false", "NOTHING": "null", "TEXT": "a: b", "EMPTY": ""}
    whole = {"n": "${env:N}", "flag": "${env:FLAG}", "none": "${env:NOTHING}"}
    assert substitute(whole, environ) == {"n": 42, "flag": False, "none": None}
    # A mapping is not a scalar: the text stays text; inside a longer string, always text.
    assert substitute(["${env:TEXT}", "x${env:N}", "${env:EMPTY}"], environ) == ["a: b", "x42", ""]


def test_defaults_apply_only_to_unset_variables() -> None:
    environ = {"SET_EMPTY": ""}
    assert substitute("${env:SET_EMPTY:-d}", environ) == ""
    assert substitute("${env:UNSET:-d}", environ) == "d"
    assert substitute("${env:UNSET:-}", environ) == ""
    assert substitute("${env:UNSET:-http://a:1/x}", environ) == "http://a:1/x"


def test_dollar_dollar_is_a_literal_dollar() -> None:
    assert substitute("$${env:X} costs $$5", {}) == "${env:X} costs $5"
    assert substitute("$$", {}) == "$"
    assert substitute("plain $ sign", {}) == "plain $ sign"


@pytest.mark.parametrize("text", ["${X}", "${env:}", "${env:1X}", "${ENV:X}", "${env:X-d}"])
def test_other_references_are_errors_naming_the_key(text: str) -> None:
    with pytest.raises(EnvironmentReferenceError) as error:
        substitute({"specs": ["a.yaml", text]}, {"X": "1"})
    assert error.value.key == "specs.1"
    assert "unsupported reference" in str(error.value)


def test_keys_are_not_substituted() -> None:
    assert substitute({"${env:X}": "${env:X}"}, {"X": "v"}) == {"${env:X}": "v"}


def test_the_default_config_needs_no_variable() -> None:
    path = Path(__file__).resolve().parents[3] / "config" / "evald.yaml"
    raw = yaml.safe_load(path.read_text())
    assert substitute(raw, {}) == raw  # comments may show references; values hold none
    load_config(path)
