"""Pairwise preference (seed 002): which of two answers is better, A, B or a tie?

LLM judges favour a position, so the two candidates are shown in an order drawn
from a seed — recorded with the verdict, so the same seed shows the same order
(and hits the cache) on a replay. The model's "A"/"B" refer to the *shown*
order and are mapped back to the caller's ``a``/``b``.

Two doors:

- ``pairwise_prompt`` + ``Preference.from_verdict`` (pure) and ``prefer`` (async,
  through a ``JudgeRunner``: cache, budget, limits) — the function API for
  ``evald compare``, where ``a`` and ``b`` are two runs of the same input;
- the ``pairwise_preference`` evaluator, which prefers the trace's final answer
  (``a``) or the spec's reference answer (``b``): score 1, 0.5 for a tie, 0.
"""

from __future__ import annotations

import hashlib
import random
from typing import Any, Literal, NamedTuple

from pydantic import Field

from evaluators.base import Criteria
from evaluators.judges.base import JudgeConfig, JudgeEvaluator, Verdict, read_verdict
from evaluators.judges.prompt import DataLimits, JudgePrompt
from evaluators.judges.runner import JudgeRunner
from evaluators.judges.views import steps_view, text_view
from evaluators.results import EvaluationResult, NumericResult
from evaluators.trajectory import StepKind, Trajectory

PAIRWISE_INSTRUCTIONS = """\
Act as an impartial judge and evaluate the quality of the responses provided by \
two AI assistants, A and B, to the user input shown in the data. Choose the \
assistant that follows the user's instructions and answers the user's input better. \
Consider the helpfulness, relevance, accuracy, depth and level of detail of their \
responses, and the actions they took when those are shown. Begin by comparing the \
two responses and give a short explanation. Avoid any position bias: the order in \
which the responses are presented must not influence your decision. Do not let the \
length of the responses influence you. Do not favour either assistant's name. Be as \
objective as possible. Answer "tie" only if neither response is better."""

Side = Literal["a", "b"]
_DEFAULT_LIMITS = DataLimits()
Candidate = str | Trajectory | None


class PairwiseVerdict(Verdict):
    reasoning: str = Field(description="your comparison of the two responses")
    preferred: Literal["A", "B", "tie"] = Field(description="the better response, or tie")


class Preference(NamedTuple):
    """A pairwise verdict in the caller's terms: ``preferred`` is ``a``, ``b`` or None (tie)."""

    preferred: Side | None
    seed: int
    swapped: bool  # True when ``b`` was shown as "A"
    reasoning: str

    @classmethod
    def from_verdict(cls, verdict: PairwiseVerdict, context: Any) -> Preference:
        swapped = bool(context["swapped"])
        shown = {"A": "b" if swapped else "a", "B": "a" if swapped else "b"}
        preferred: Any = shown.get(verdict.preferred)
        return cls(preferred, int(context["seed"]), swapped, verdict.reasoning)

    def details(self) -> dict[str, Any]:
        return {"preferred": self.preferred or "tie", "seed": self.seed, "swapped": self.swapped}


def position_seed(*parts: str) -> int:
    """A 63-bit seed derived from text (trace id, evaluator id …): stable across runs."""
    digest = hashlib.blake2b("\x1f".join(parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


def pairwise_prompt(
    question: str | None,
    a: Candidate,
    b: Candidate,
    seed: int,
    *,
    criteria: str | None = None,
    step_kinds: tuple[StepKind, ...] = (StepKind.TOOL,),
) -> JudgePrompt:
    """The prompt comparing ``a`` and ``b`` (answers, or whole trajectories whose steps
    are shown too), in the order ``seed`` draws. ``criteria`` adds to the instructions."""
    swapped = random.Random(seed).random() < 0.5  # a fair coin
    first, second = (b, a) if swapped else (a, b)
    instructions = PAIRWISE_INSTRUCTIONS + (f"\n\nAlso judge by: {criteria}" if criteria else "")

    def data(field_chars: int, steps: int) -> dict[str, Any]:
        return {
            "input": text_view(question, field_chars, "(no input recorded)"),
            "assistant_A": _candidate(first, step_kinds, field_chars, steps // 2),
            "assistant_B": _candidate(second, step_kinds, field_chars, steps // 2),
        }

    return JudgePrompt(instructions, data, PairwiseVerdict, {"seed": seed, "swapped": swapped})


async def prefer(
    runner: JudgeRunner,
    question: str | None,
    a: Candidate,
    b: Candidate,
    *,
    seed: int,
    judge: str = "default",
    criteria: str | None = None,
    limits: DataLimits = _DEFAULT_LIMITS,
) -> Preference:
    """Ask ``judge`` which of ``a`` and ``b`` is better. Raises ``JudgeError``,
    ``BudgetSpent`` or ``UnreadableVerdict`` (see ``JudgeRunner.ask``)."""
    prompt = pairwise_prompt(question, a, b, seed, criteria=criteria)
    answer = await runner.ask(judge, prompt, limits, _read_pairwise)
    return Preference.from_verdict(answer.verdict, prompt.context)


class PairwiseCriteria(Criteria):
    """The answer to compare the trace's answer with (usually ``reference.response``)."""

    response: str


class PairwiseConfig(JudgeConfig):
    criteria: str | None = Field(default=None, description="extra judging criteria")
    seed: int = Field(default=0, description="mixed with the trace id into the position seed")


class PairwisePreference(JudgeEvaluator[PairwiseCriteria, PairwiseConfig]):
    """LLM judge: the trace's final answer is preferred to the reference (1, tie 0.5, 0)."""

    id = "pairwise_preference"
    criteria_model = PairwiseCriteria
    config_model = PairwiseConfig
    verdict_model = PairwiseVerdict
    description = __doc__ or ""

    def prompt(
        self, trajectory: Trajectory, criteria: PairwiseCriteria
    ) -> JudgePrompt | EvaluationResult:
        seed = position_seed(str(self.config.seed), trajectory.trace_id)
        return pairwise_prompt(
            trajectory.input,
            trajectory.output,
            criteria.response,
            seed,
            criteria=self.config.criteria,
        )

    def interpret(self, verdict: Verdict, prompt: JudgePrompt) -> EvaluationResult:
        assert isinstance(verdict, PairwiseVerdict)
        preference = Preference.from_verdict(verdict, prompt.context)
        score = {"a": 1.0, "b": 0.0, None: 0.5}[preference.preferred]
        return NumericResult(
            score=score, explanation=preference.reasoning, details=preference.details()
        )


def _candidate(
    candidate: Candidate, kinds: tuple[StepKind, ...], field_chars: int, steps: int
) -> dict[str, Any]:
    if isinstance(candidate, Trajectory):
        return {
            "steps": steps_view(candidate, kinds, field_chars, max(1, steps)),
            "response": text_view(candidate.output, field_chars),
        }
    return {"response": text_view(candidate, field_chars)}


def _read_pairwise(text: str, prompt: JudgePrompt) -> PairwiseVerdict:
    result: PairwiseVerdict = read_verdict(text, PairwiseVerdict)
    return result
