"""LLM-as-judge evaluators on any OpenAI-compatible chat-completions endpoint.

- ``JudgeSettings``: one endpoint + model with its limits (``judges.endpoints.<name>``);
- ``JudgeEvaluator``: the base of judge evaluators (pure ``prompt`` / ``interpret``);
  built-ins ``final_answer_correct``, ``step_necessity``, ``response_follows_trajectory``,
  ``rubric``, ``pairwise_preference`` register through the ``evald.evaluators``
  entry points like every evaluator;
- ``JudgeRunner`` (async: cache, budget, rate limits, retries, parsing) and
  ``JudgeWorker`` (its thread, the non-blocking ``submit`` that sheds when full,
  and the blocking ``evaluate`` / ``call`` used offline);
- ``prefer`` / ``pairwise_prompt`` / ``Preference``: pairwise judging as a function.

Names are imported on first use, so that loading a config or a spec does not pay
for the HTTP stack. This package never imports ``collector``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evaluators.judges.answer import FinalAnswerCorrect
    from evaluators.judges.base import DEFAULT_JUDGE, JudgeConfig, JudgeEvaluator, Verdict
    from evaluators.judges.metrics import JudgeMetrics, NoJudgeMetrics
    from evaluators.judges.pairwise import (
        PairwisePreference,
        Preference,
        pairwise_prompt,
        position_seed,
        prefer,
    )
    from evaluators.judges.prompt import DataLimits, JudgePrompt
    from evaluators.judges.protocol import JudgeError, RetryableError
    from evaluators.judges.rubric import Rubric
    from evaluators.judges.runner import BudgetSpent, JudgeRunner, UnreadableVerdict
    from evaluators.judges.settings import JudgeBudget, JudgeKeyError, JudgeSettings
    from evaluators.judges.setup import build_judges, start_worker
    from evaluators.judges.steps import ResponseFollowsTrajectory, StepNecessity
    from evaluators.judges.worker import JudgeWorker

_EXPORTS = {
    "FinalAnswerCorrect": "answer",
    "DEFAULT_JUDGE": "base",
    "JudgeConfig": "base",
    "JudgeEvaluator": "base",
    "Verdict": "base",
    "JudgeMetrics": "metrics",
    "NoJudgeMetrics": "metrics",
    "PairwisePreference": "pairwise",
    "Preference": "pairwise",
    "pairwise_prompt": "pairwise",
    "position_seed": "pairwise",
    "prefer": "pairwise",
    "DataLimits": "prompt",
    "JudgePrompt": "prompt",
    "JudgeError": "protocol",
    "RetryableError": "protocol",
    "Rubric": "rubric",
    "BudgetSpent": "runner",
    "JudgeRunner": "runner",
    "UnreadableVerdict": "runner",
    "JudgeBudget": "settings",
    "JudgeKeyError": "settings",
    "JudgeSettings": "settings",
    "build_judges": "setup",
    "start_worker": "setup",
    "ResponseFollowsTrajectory": "steps",
    "StepNecessity": "steps",
    "JudgeWorker": "worker",
}

__all__ = [
    "DEFAULT_JUDGE",
    "BudgetSpent",
    "DataLimits",
    "FinalAnswerCorrect",
    "JudgeBudget",
    "JudgeConfig",
    "JudgeError",
    "JudgeEvaluator",
    "JudgeKeyError",
    "JudgeMetrics",
    "JudgePrompt",
    "JudgeRunner",
    "JudgeSettings",
    "JudgeWorker",
    "NoJudgeMetrics",
    "PairwisePreference",
    "Preference",
    "ResponseFollowsTrajectory",
    "RetryableError",
    "Rubric",
    "StepNecessity",
    "UnreadableVerdict",
    "Verdict",
    "build_judges",
    "pairwise_prompt",
    "position_seed",
    "prefer",
    "start_worker",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
