"""What a dataset (eval set) is: items of input → expected reference and criteria.

A spec names its dataset in a ``dataset`` block (``DatasetRef``); each item of
the file (``DatasetItem``) is one case: the trace whose key equals the item's
key is judged against the item's ``reference`` and ``criteria`` (merged over the
spec's). Loading and binding are ``evaluators.datasets``.

Keys (``match_by``):

- ``input`` (default): the trace's user input, normalised (``normalize_input``)
  — the LangSmith way, where an example is its question;
- ``{attribute: eval.case.id}``: a root-span (then resource) attribute that the
  test harness sets to the item ``id`` — exact, for inputs that repeat or vary.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from evaluators.reference import Reference
from evaluators.trajectory import Trajectory

_BLANKS = re.compile(r"\s+")
_INPUT_KEYS = ("question", "input", "query", "prompt", "text")
_ANSWER_KEYS = ("answer", "output")  # LangSmith examples name the response either way


def normalize_input(text: str) -> str:
    """The matching form of a user input: NFKC, case-folded, blank runs as one space, trimmed.

    ``"  What album is  'Comfortably Numb' ON? "`` and ``"what album is 'comfortably
    numb' on?"`` are the same key; punctuation and wording are not touched.
    """
    return _BLANKS.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


class MatchByAttribute(BaseModel):
    """Match items by a trace attribute (root span, then resource) equal to the item id."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    attribute: str = Field(min_length=1)


class DatasetRef(BaseModel):
    """A spec's ``dataset`` block: ``{path, match_by}``, or just the path.

    ``path`` is relative to the spec file. A trace that matches the spec but no
    item is not evaluated by the spec and is counted as unmatched.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True)

    path: str = Field(min_length=1)
    match_by: Literal["input"] | MatchByAttribute = "input"

    @model_validator(mode="before")
    @classmethod
    def _accept_bare_path(cls, data: Any) -> Any:
        return {"path": data} if isinstance(data, str) else data

    def key_of(self, trajectory: Trajectory) -> str | None:
        """The item key ``trajectory`` looks for; None when it has none (no input …)."""
        if isinstance(self.match_by, MatchByAttribute):
            key = self.match_by.attribute
            for source in (trajectory.attributes, trajectory.resource_attributes):
                if source.get(key) is not None:
                    return str(source[key])
            return None
        return None if trajectory.input is None else normalize_input(trajectory.input)

    def describe(self) -> str:
        """``input`` or ``attribute eval.case.id``, for messages."""
        by = self.match_by
        return f"attribute {by.attribute}" if isinstance(by, MatchByAttribute) else "input"


class DatasetItem(BaseModel):
    """One case of a dataset.

    ``reference`` overrides the spec's reference key by key (a ``trajectory``
    given here replaces the spec's whole); ``criteria`` maps an evaluator id of
    the spec to criteria that override that entry's. The LangSmith example form
    ``{inputs: {question: …}, outputs: {response: …, trajectory: [names]}}`` is
    accepted too: names in ``outputs.trajectory`` match steps of any kind, other
    ``outputs`` keys become reference keys (e.g. ``route``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True)

    id: str | None = Field(default=None, min_length=1)
    input: str | None = Field(default=None, min_length=1)
    reference: Reference = Field(default_factory=Reference)
    criteria: dict[str, dict[str, Any]] = Field(default_factory=dict)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _accept_langsmith_example(cls, data: Any) -> Any:
        if not isinstance(data, dict) or not ({"inputs", "outputs"} & data.keys()):
            return data
        rest = {key: value for key, value in data.items() if key not in ("inputs", "outputs")}
        if "input" not in rest and "inputs" in data:
            rest["input"] = _example_input(data["inputs"])
        if "reference" not in rest and "outputs" in data:
            rest["reference"] = _example_reference(data["outputs"])
        return rest

    def reference_data(self) -> dict[str, Any]:
        """The reference keys this item sets, as plain data."""
        return self.reference.model_dump(mode="json", exclude_unset=True)


def _example_input(inputs: Any) -> Any:
    """A LangSmith example's ``inputs``: text, ``{question: …}`` or ``{messages: […]}``."""
    if not isinstance(inputs, dict):
        return inputs
    for key in _INPUT_KEYS:
        if isinstance(inputs.get(key), str):
            return inputs[key]
    messages = inputs.get("messages")
    if isinstance(messages, list):
        users = [m for m in messages if isinstance(m, dict) and m.get("role") in ("user", "human")]
        return users[-1].get("content") if users else None  # this turn's message
    return inputs  # reported as not a string


def _example_reference(outputs: Any) -> Any:
    if not isinstance(outputs, dict):
        return outputs
    reference = dict(outputs)
    for key in _ANSWER_KEYS:
        if key in reference and "response" not in reference:
            reference["response"] = reference.pop(key)
    steps = reference.get("trajectory")
    if isinstance(steps, list):
        reference["trajectory"] = [{"name": s} if isinstance(s, str) else s for s in steps]
    return reference
