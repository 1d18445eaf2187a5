"""Records built and changed by position are those ``Step(...)``, ``Trajectory(...)`` and
``_replace`` give; a ``LazyValue`` built without its ``__init__`` is the one it builds."""

from __future__ import annotations

import json
import pickle

from collector.core.records import Resource, Span
from collector.normalize.step_records import (
    ATTEMPTS,
    CALL_ID,
    KIND,
    MODEL,
    STEP_FIELDS,
    duration_s,
    new_lazy,
    new_step,
    new_trajectory,
    with_fields,
)
from evaluators.lazy import LazyValue
from evaluators.trajectory import Step, StepKind, Trajectory

FIELDS = (StepKind.TOOL, "search", "ab", None, 5, 0.25, {"q": 1}, "ok", None, "c1", '{"q": 1}',
          "agent", True, None, None, None)  # fmt: skip


def test_new_step_is_the_step_the_constructor_builds() -> None:
    built = new_step(*FIELDS)
    assert type(built) is Step
    assert built == Step(*FIELDS)
    assert built._asdict() == Step(*FIELDS)._asdict()
    assert new_step(*FIELDS, "messages", 3) == Step(*FIELDS, source="messages", attempts=3)
    assert Step._fields == STEP_FIELDS


def test_changed_fields_are_those_replace_changes_and_lazy_values_stay_unread() -> None:
    lazy = LazyValue.of_json('{"q": 2}')
    step = Step(*FIELDS)._replace(args=lazy)
    changed = with_fields(step, {KIND: StepKind.CONTROL})
    assert type(changed) is Step
    assert changed == step._replace(kind=StepKind.CONTROL)
    assert changed[6] is lazy and not lazy.loaded
    several = with_fields(step, {CALL_ID: "c2", MODEL: "m", ATTEMPTS: 2})
    assert several == step._replace(call_id="c2", model="m", attempts=2)
    assert several[6] is lazy and not lazy.loaded


def test_duration_is_the_span_property() -> None:
    resource = Resource("svc", {})
    for start, end in ((0, 1_500_000_000), (10, 10), (20, 5), (1, 2**62)):
        span = Span(b"t" * 16, b"s" * 8, b"", "n", 1, start, end, 0, "", {}, (), resource, "")
        assert duration_s(span) == span.duration_s


def test_new_trajectory_is_the_trajectory_the_constructor_builds() -> None:
    fields = {
        "trace_id": "ab", "service": "svc", "agent": "a", "session_id": None, "input": "in",
        "output": None, "failed": False, "latency_s": 0.5, "start_unix_nano": 3,
        "steps": (Step(*FIELDS),), "error": None, "agents": ("a",), "root_span_id": "cd",
        "attributes": {"k": "v"}, "resource_attributes": {}, "conventions": ("genai",),
        "incomplete": False, "gaps": ("tool_args",), "skip_reason": None,
    }  # fmt: skip
    built = new_trajectory(**fields)
    assert type(built) is Trajectory
    assert built == Trajectory(**fields)
    assert built._asdict() == fields


def test_new_lazy_is_the_lazy_value_the_constructor_builds() -> None:
    loads: list[str] = []

    def load(text: str) -> object:
        loads.append(text)
        return json.loads(text)

    for maybe_none in (False, True):
        built, called = (
            new_lazy(load, '{"q": [1]}', maybe_none),
            LazyValue(load, '{"q": [1]}', maybe_none),
        )
        assert type(built) is LazyValue
        assert not built.loaded and built.maybe_none is maybe_none
        assert not loads  # nothing parsed until read
        assert built == called == {"q": [1]} and built["q"] == [1]
        assert built.loaded and loads == ['{"q": [1]}', '{"q": [1]}']
        assert pickle.loads(pickle.dumps(built)) == {"q": [1]}
        loads.clear()
