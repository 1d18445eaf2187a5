"""Convention normalization: the only code that knows how instrumentations encode agent runs.

``normalize(trace, mappings)`` turns one assembled ``Trace`` into a ``Trajectory``
(OpenTelemetry GenAI, OpenInference, OpenLLMetry/Traceloop, Vercel AI SDK,
LangSmith, Google ADK, Strands, and user ``Mappings``); ``normalize_runs`` into one
per run the trace holds (a conversation's turns recorded in one trace are split).
``ATTRIBUTE_SELECTOR`` lists every span attribute it reads, so the decoder can skip
the rest.
"""

from collector.normalize.attribute_keys import ATTRIBUTE_SELECTOR
from collector.normalize.mappings import Mappings, ToolSpanRule
from collector.normalize.runs import normalize, normalize_for, normalize_runs
from collector.normalize.session_id import session_key
from collector.normalize.turns import Run, inherit_session

__all__ = [
    "ATTRIBUTE_SELECTOR",
    "Mappings",
    "Run",
    "ToolSpanRule",
    "inherit_session",
    "normalize",
    "normalize_for",
    "normalize_runs",
    "session_key",
]
