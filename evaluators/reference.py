"""What a spec expects: reference trajectory items and the ``reference`` block.

These models are shared by specs (which validate the ``reference`` block once, at
load) and by the criteria of evaluators that compare against a reference.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from evaluators.trajectory import StepKind

_KIND_KEYS = ("tool", "agent")


class ExpectedStep(BaseModel):
    """One expected call of a reference trajectory.

    Accepted forms (YAML / JSON)::

        lookup_invoice                                  # a tool, any arguments
        {tool: lookup_invoice, args: {invoice_id: 1042}}
        {agent: refund_agent}                           # a sub-agent / graph-node hop
        {name: model, kind: llm|tool|agent|other, args: {...}}

    ``kind`` None (the ``name`` form without ``kind``) matches a step of any kind.
    ``args`` None means "not specified"; how that is compared is the matcher's
    choice (see ``evaluators.matching``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1)
    kind: StepKind | None = None
    args: dict[str, Any] | None = None

    @model_validator(mode="before")
    @classmethod
    def _accept_shorthands(cls, data: Any) -> Any:
        if isinstance(data, str):
            return {"name": data, "kind": StepKind.TOOL.value}
        if not isinstance(data, dict):
            return data
        given = [key for key in _KIND_KEYS if key in data]
        if not given:
            return data
        if len(given) > 1 or "name" in data or "kind" in data:
            raise ValueError("give exactly one of 'tool', 'agent' or 'name' (+ 'kind')")
        rest = {key: value for key, value in data.items() if key != given[0]}
        return {"name": data[given[0]], "kind": given[0], **rest}

    def label(self) -> str:
        """A short human label: the name, prefixed by the kind unless it is a tool."""
        if self.kind in (None, StepKind.TOOL):
            return self.name
        return f"{self.kind.value}:{self.name}"


class Reference(BaseModel):
    """The ``reference`` block of a spec: per-case expectations.

    Evaluators receive, as criteria, the reference fields their criteria model
    declares. Keys beyond ``trajectory`` and ``response`` are allowed so that a
    custom evaluator can take its own per-case data from here; the spec loader
    rejects any key that no evaluator of the spec declares (typos surface).
    """

    model_config = ConfigDict(frozen=True, extra="allow")

    trajectory: tuple[ExpectedStep, ...] | None = None
    response: str | None = None
