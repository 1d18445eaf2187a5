"""Testing evaluators: a fluent trajectory builder and the evaluator contract check.

::

    from evaluators.testing import TrajectoryBuilder, check_evaluator

    trajectory = (
        TrajectoryBuilder("Refund invoice 1042")
        .tool("lookup_invoice", {"invoice_id": 1042}, result={"total": 0.99})
        .tool("refund", {"invoice_id": 1042}, error="RefundWindowExpired")
        .output("Sorry, I can't.")
        .build()
    )
    check_evaluator(MyEvaluator, criteria={"expected_tools": ["refund"]})

Steps of real trajectories hold their arguments and results lazily parsed
(``evaluators.lazy``); ``TrajectoryBuilder(..., lazy=True)`` builds them that way,
and ``check_evaluator`` runs its sample in both forms.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Self

from evaluators.contract import ContractReport, EvaluatorContractError, check_evaluator
from evaluators.lazy import LazyValue
from evaluators.trajectory import Step, StepKind, Trajectory

__all__ = [
    "ContractReport",
    "EvaluatorContractError",
    "TrajectoryBuilder",
    "check_evaluator",
    "lazily_parsed",
]

_START_NS = 1_700_000_000_000_000_000


class TrajectoryBuilder:
    """Builds a ``Trajectory`` step by step; every method but ``build`` returns the builder.

    Steps start one after the other (each ``duration_s`` long, from a fixed
    epoch), span ids are numbered, and the trace id is derived from the input
    unless given, so a built trajectory is the same on every run. With ``lazy``,
    tool arguments and results are stored as their JSON text, parsed on first read,
    as the normalizer stores them (``lazily_parsed``).
    """

    def __init__(
        self,
        input: str | None = "test input",  # the Trajectory field's name
        *,
        service: str = "test-service",
        agent: str | None = "test-agent",
        trace_id: str | None = None,
        lazy: bool = False,
    ) -> None:
        self._lazy = lazy
        self._fields: dict[str, Any] = {"service": service, "agent": agent, "input": input}
        self._trace_id = trace_id
        self._steps: list[Step] = []
        self._clock_ns = _START_NS
        self._attributes: dict[str, Any] = {}
        self._resource: dict[str, Any] = {}

    def tool(
        self,
        name: str,
        args: Any = None,
        result: Any = None,
        *,
        error: str | None = None,
        duration_s: float = 0.01,
        call_id: str | None = None,
        agent: str | None = None,
    ) -> Self:
        """An executed tool call; ``error`` makes it a failed one."""
        extra = {"args": args, "result": result, "error": error, "call_id": call_id}
        return self._step(StepKind.TOOL, name, duration_s, agent=agent, **extra)

    def requested(self, name: str, args: Any = None) -> Self:
        """A tool call the model requested that never ran (the run stopped first)."""
        step = Step(StepKind.TOOL, name, "", None, self._clock_ns, 0.0, args=args, executed=False)
        self._steps.append(step)
        return self

    def llm(
        self,
        model: str = "test-model",
        *,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
        duration_s: float = 0.1,
    ) -> Self:
        """One model inference."""
        tokens = {"input_tokens": input_tokens, "output_tokens": output_tokens}
        return self._step(StepKind.LLM, model, duration_s, model=model, **tokens)

    def agent(self, name: str, *, duration_s: float = 0.0) -> Self:
        """An agent / sub-agent / graph-node hop."""
        return self._step(StepKind.AGENT, name, duration_s, agent=name)

    def output(self, text: str | None) -> Self:
        """The final answer."""
        self._fields["output"] = text
        return self

    def failed(self, error: str = "the agent run failed") -> Self:
        """Mark the run as ended in error."""
        self._fields.update(failed=True, error=error)
        return self

    def session(self, session_id: str) -> Self:
        self._fields["session_id"] = session_id
        return self

    def gaps(self, *names: str, conventions: tuple[str, ...] = ()) -> Self:
        """What the instrumentation did not record (``evaluators.gaps``), and which
        conventions it used (they choose the setting a gap's explanation names)."""
        self._fields["gaps"] = tuple(names)
        if conventions:
            self._fields["conventions"] = conventions
        return self

    def attribute(self, key: str, value: Any) -> Self:
        """A root-span attribute (what spec ``match.attributes`` and datasets read)."""
        self._attributes[key] = value
        return self

    def resource(self, key: str, value: Any) -> Self:
        """A resource attribute of the root span."""
        self._resource[key] = value
        return self

    def build(self) -> Trajectory:
        """The trajectory; the builder can go on and build again."""
        steps = tuple(self._steps)
        if self._lazy:
            steps = tuple(lazily_parsed_step(step) for step in steps)
        fields = {"output": None, "failed": False, "session_id": None, **self._fields}
        agents = tuple(dict.fromkeys(s.name for s in steps if s.kind is StepKind.AGENT))
        return Trajectory(
            trace_id=self._trace_id or _trace_id(fields["input"], steps),
            latency_s=(self._clock_ns - _START_NS) / 1e9,
            start_unix_nano=_START_NS,
            steps=steps,
            agents=agents,
            root_span_id="0" * 15 + "1",
            attributes=dict(self._attributes),
            resource_attributes={"service.name": fields["service"], **self._resource},
            **fields,
        )

    def _step(self, kind: StepKind, name: str, duration_s: float, **extra: Any) -> Self:
        span_id = f"{len(self._steps) + 2:016x}"
        start, self._clock_ns = self._clock_ns, self._clock_ns + int(duration_s * 1e9)
        if extra.get("agent") is None:
            extra["agent"] = self._fields["agent"]
        self._steps.append(Step(kind, name, span_id, "0" * 15 + "1", start, duration_s, **extra))
        return self


def lazily_parsed(trajectory: Trajectory) -> Trajectory:
    """``trajectory`` with every step's ``args`` and ``result`` held as a ``LazyValue``
    of its JSON text: the form the normalizer gives. Reads give equal values (JSON
    ones: a tuple comes back as a list)."""
    return trajectory._replace(steps=tuple(lazily_parsed_step(s) for s in trajectory.steps))


def lazily_parsed_step(step: Step) -> Step:
    """``step`` with ``args`` and ``result`` (when set) held lazily (``lazily_parsed``)."""
    args, result = step.args, step.result
    return step._replace(
        args=None if args is None else LazyValue.of_json(json.dumps(args)),
        result=None if result is None else LazyValue.of_json(json.dumps(result)),
    )


def _trace_id(text: str | None, steps: tuple[Step, ...]) -> str:
    seed = repr((text, [(s.kind.value, s.name) for s in steps])).encode()
    return hashlib.blake2b(seed, digest_size=16).hexdigest()
