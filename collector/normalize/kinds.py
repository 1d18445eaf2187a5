"""``StepKind``'s members as constants of the compiled normalizer.

``StepKind`` lives in the plug-in API (``evaluators.trajectory``), which is not
compiled: from compiled code, ``StepKind.TOOL`` is a lookup of the class in the
module's dict and of the member on the class (≈ 45 ns), on every use. These ``Final``
names are read from C variables.
"""

from __future__ import annotations

from typing import Final

from evaluators.trajectory import StepKind

AGENT: Final = StepKind.AGENT
LLM: Final = StepKind.LLM
TOOL: Final = StepKind.TOOL
CONTROL: Final = StepKind.CONTROL
OTHER: Final = StepKind.OTHER
