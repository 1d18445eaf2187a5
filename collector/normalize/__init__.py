"""Convention normalization: the only code that knows how instrumentations encode agent runs.

``normalize(trace, mappings)`` turns one assembled ``Trace`` into a ``Trajectory``
(OpenTelemetry GenAI, OpenInference, OpenLLMetry/Traceloop, Vercel AI SDK,
LangSmith, Google ADK, Strands, and user ``Mappings``). ``ATTRIBUTE_SELECTOR``
lists every span attribute it reads, so the decoder can skip the rest.
"""

from collector.normalize.attribute_keys import ATTRIBUTE_SELECTOR
from collector.normalize.build import normalize, normalize_for
from collector.normalize.mappings import Mappings, ToolSpanRule
from collector.normalize.session_id import session_key

__all__ = [
    "ATTRIBUTE_SELECTOR",
    "Mappings",
    "ToolSpanRule",
    "normalize",
    "normalize_for",
    "session_key",
]
