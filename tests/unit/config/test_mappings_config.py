"""`normalization.mappings` in the config: an in-house convention, end to end through replay
(decoder selector included: mapped keys of child spans must survive decoding)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from collector.cli.command import main
from collector.config.settings import ConfigError, load_config

TRACE_ID = "5b8aa5a2d2c872e8321cf37308d69df2"
MAPPINGS = """
normalization:
  mappings:
    tool_span: {attribute: acme.kind, equals: tool}
    tool_name: acme.tool
    tool_args: acme.args
    tool_result: acme.out
    agent_name: acme.agent
"""


def attr(key: str, value: str) -> dict[str, object]:
    return {"key": key, "value": {"stringValue": value}}


def in_house_trace(path: Path) -> Path:
    root = {
        "traceId": TRACE_ID,
        "spanId": "0000000000000001",
        "name": "handle_request",
        "kind": 2,
        "startTimeUnixNano": "1000",
        "endTimeUnixNano": "9000",
        "attributes": [attr("acme.agent", "billing_bot")],
    }
    tool = {
        "traceId": TRACE_ID, "spanId": "0000000000000002", "parentSpanId": "0000000000000001",
        "name": "call", "kind": 1, "startTimeUnixNano": "2000", "endTimeUnixNano": "3000",
        "attributes": [
            attr("acme.kind", "tool"), attr("acme.tool", "lookup_invoice"),
            attr("acme.args", '{"invoice_id": 1042}'), attr("acme.out", '{"total": 2.97}'),
        ],
    }  # fmt: skip
    service = {"attributes": [attr("service.name", "in-house")]}
    document = {"resourceSpans": [{"resource": service, "scopeSpans": [{"spans": [root, tool]}]}]}
    path.write_text(json.dumps(document) + "\n")
    return path


def replayed_steps(tmp_path: Path, config_text: str) -> tuple[str | None, list[dict[str, object]]]:
    config = tmp_path / "evald.yaml"
    config.write_text(config_text)
    out = tmp_path / "trajectories.jsonl"
    trace = in_house_trace(tmp_path / "trace.jsonl")
    main(["replay", str(trace), "--config", str(config), "--trajectories-out", str(out)])
    (trajectory,) = [json.loads(line) for line in out.read_text().splitlines()]
    if trajectory.get("skip_reason") is not None:  # not an agent run as far as evald sees
        return None, []
    return trajectory["agent"], [s for s in trajectory["steps"] if s["kind"] == "tool"]


def test_configured_mappings_turn_in_house_spans_into_tool_steps(tmp_path: Path) -> None:
    agent, tools = replayed_steps(tmp_path, MAPPINGS)
    assert agent == "billing_bot"
    assert [(s["name"], s["args"], s["result"]) for s in tools] == [
        ("lookup_invoice", {"invoice_id": 1042}, {"total": 2.97})
    ]


def test_without_mappings_the_same_spans_have_no_tool_step(tmp_path: Path) -> None:
    _, tools = replayed_steps(tmp_path, "specs: []\n")
    assert tools == []


def test_a_typo_in_mappings_names_the_key(tmp_path: Path) -> None:
    config = tmp_path / "evald.yaml"
    config.write_text("normalization: {mappings: {tool_nam: acme.tool}}\n")
    with pytest.raises(ConfigError, match=r"normalization\.mappings\.tool_nam"):
        load_config(config)
