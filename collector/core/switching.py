"""How long a thread of a serving process keeps the interpreter while another waits.

A serving process runs two busy threads: the event loop (receivers, decoding,
assembly, the completion timer) and the evaluation thread (normalization, evaluators,
sinks). CPython hands the interpreter between them every ``sys.getswitchinterval()``
(5 ms by default), and under load those hand-overs cost a large share of the CPU: one
worker at CPython's 5 ms took 65-74 thousand spans per CPU-second of
``shared/bench/loadgen.py`` load, at 10 ms 72-83 thousand, at 20 ms 78-88 thousand
(ADR 0026 has the figures). The price is latency: an export waits up to the interval
for the event loop while evaluation is busy, and at 20 ms the completion lag's tail
crossed issue 16's goal; 10 ms kept it. ``pipeline.switch_interval`` sets it.
"""

from __future__ import annotations

import sys


def hand_over_every(seconds: float) -> None:
    """Let a thread run ``seconds`` of Python before a waiting thread may take over.

    Process-wide; call once, in a process that ``evald serve`` runs (the single process,
    the front, each worker)."""
    sys.setswitchinterval(seconds)
