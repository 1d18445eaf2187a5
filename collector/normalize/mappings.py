"""User-defined attribute mappings for in-house conventions (config: ``normalization.mappings``).

A mapping names the attribute that holds each piece; mapped keys are read
*before* the built-in conventions, so a mapping can also override them. The
decoder must keep the mapped keys: use ``Mappings.selector(ATTRIBUTE_SELECTOR)``.
"""

from __future__ import annotations

from typing import Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from collector.core.records import Span
from collector.decode.common import AttributeSelector


class ToolSpanRule(BaseModel):
    """How to recognise a tool span: every condition given must hold.

    ``attribute`` alone means "present"; with ``equals`` its value must equal it
    (compared as text); ``name_prefix`` tests the span name.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    attribute: str | None = None
    equals: str | None = None
    name_prefix: str | None = None

    @model_validator(mode="after")
    def _check(self) -> Self:
        if self.attribute is None and self.name_prefix is None:
            raise ValueError("give at least one of attribute, name_prefix")
        if self.equals is not None and self.attribute is None:
            raise ValueError("equals needs attribute")
        return self

    def matches(self, span: Span) -> bool:
        """True if ``span`` satisfies every given condition."""
        if self.name_prefix is not None and not span.name.startswith(self.name_prefix):
            return False
        if self.attribute is None:
            return True
        value = span.attributes.get(self.attribute)
        if value is None:
            return False
        return self.equals is None or str(value) == self.equals


DEFAULT_INTERNAL_TOOLS = ("final_result*", "final_answer", "finish")
"""Tools frameworks use to end their own loop: pydantic-ai's output tools
(``final_result``, ``final_result_<Type>``), smolagents' ``final_answer``, DSPy ReAct's
``finish``."""


class Mappings(BaseModel):
    """Which attribute holds what, for spans of an in-house convention.

    ``internal_tools`` (globs) are the tools a framework uses to steer its own loop:
    an executed one becomes a ``control`` step, not one of the agent's tool calls; a
    requested one that never ran (answered by the framework) is not a missing call.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    tool_span: ToolSpanRule | None = None
    tool_name: str | None = None
    tool_call_id: str | None = None
    tool_args: str | None = None
    tool_result: str | None = None
    agent_name: str | None = None
    session_id: str | None = None
    internal_tools: tuple[str, ...] = Field(default=DEFAULT_INTERNAL_TOOLS)

    def attribute_keys(self) -> frozenset[str]:
        """Every attribute key the mappings read."""
        keys = {
            self.tool_name,
            self.tool_call_id,
            self.tool_args,
            self.tool_result,
            self.agent_name,
            self.session_id,
            self.tool_span.attribute if self.tool_span is not None else None,
        }
        return frozenset(key for key in keys if key)

    def selector(self, base: AttributeSelector) -> AttributeSelector:
        """``base`` extended with the mapped keys, for the decoder."""
        return base.extended(keys=self.attribute_keys())
