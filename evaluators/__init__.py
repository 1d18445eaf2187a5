"""evald's evaluator side: the trajectory model, the evaluator API, specs and the runner.

The names a plug-in author needs are re-exported here (``from evaluators import
Evaluator, Criteria, NumericResult, Trajectory``). This package never imports
``collector``: plug-ins and offline tools depend on it alone.
"""

from evaluators.base import Criteria, Evaluator, EvaluatorConfig, NoCriteria
from evaluators.results import BooleanResult, ErrorResult, EvaluationResult, NumericResult
from evaluators.trajectory import Step, StepKind, Trajectory

__all__ = [
    "BooleanResult",
    "Criteria",
    "ErrorResult",
    "EvaluationResult",
    "Evaluator",
    "EvaluatorConfig",
    "NoCriteria",
    "NumericResult",
    "Step",
    "StepKind",
    "Trajectory",
]
