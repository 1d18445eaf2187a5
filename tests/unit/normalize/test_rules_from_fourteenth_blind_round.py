"""Rules from the fourteenth blind round (session 25, ADR 0017 addendum): minimal traces
of the shapes the session's captures showed, never keyed to a library's names."""

from __future__ import annotations

from support.span_kit import genai_chat, run, span

from collector.normalize import Mappings


def test_a_span_its_children_name_under_a_dot_agent_name_key_is_that_agent() -> None:
    """Rule 99 (rule 66 unmapped): a plain span named X, a child recording X under a key
    ending in ``.agent.name`` (Langtrace's ``agno.agent.name`` on a zero-length
    ``Agent.arun`` beside the model calls), a model call below: agent X's run."""
    trajectory = run(
        span(1, "music_store_support", {}),
        span(2, "Agent.arun", {"vendor.agent.name": "music_store_support"}, parent=1),
        genai_chat(3, [], parent=1, text="Done."),
    )
    assert trajectory.agent == "music_store_support"
    assert {step.agent for step in trajectory.steps} == {"music_store_support"}


def test_no_name_without_the_match_a_model_call_or_agreement() -> None:
    named_else = run(
        span(1, "music_store_support", {}),
        span(2, "Agent.arun", {"vendor.agent.name": "other"}, parent=1),
        genai_chat(3, [], parent=1, text="Done."),
    )
    no_model = run(
        span(1, "music_store_support", {}),
        span(2, "Agent.arun", {"vendor.agent.name": "music_store_support"}, parent=1),
    )
    names = {"vendor.agent.name": "music_store_support", "other.agent.name": "billing"}
    disagreeing = [
        run(
            span(1, "music_store_support", {}),
            span(2, "Agent.arun", dict(order), parent=1),
            genai_chat(3, [], parent=1, text="Done."),
        )
        for order in (names.items(), reversed(names.items()))
    ]
    bare_key = run(  # (a bare ``agent_name`` is no namespaced key)
        span(1, "music_store_support", {}),
        span(2, "Agent.arun", {"agent_name": "music_store_support"}, parent=1),
        genai_chat(3, [], parent=1, text="Done."),
    )
    assert [t.agent for t in (named_else, no_model, *disagreeing, bare_key)] == [None] * 5


def test_a_mapped_key_is_read_as_before() -> None:
    """With ``normalization.mappings.agent_name`` the mapped key alone is read."""
    spans = (
        span(1, "music_store_support", {}),
        span(2, "turn", {"x.turn.agent_name": "music_store_support"}, parent=1),
        genai_chat(3, [], parent=1, text="Done."),
    )
    assert run(*spans).agent is None
    mapped = Mappings.model_validate({"agent_name": "x.turn.agent_name"})
    assert run(*spans, mappings=mapped).agent == "music_store_support"
