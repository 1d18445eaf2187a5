"""Reading a verdict out of a model's reply, tolerantly.

With ``response_format: json_schema`` a conforming server returns exactly one
JSON object, but many OpenAI-compatible servers and models only approximate it:
the object wrapped in a Markdown fence, preceded by reasoning, followed by a
remark. ``extract_json`` accepts all of those; evaluators then validate the
object with their pydantic verdict model and may fall back to their own reading
of free text (``JudgeEvaluator.fallback``, e.g. seed 000's final ``Y``/``N`` line).
"""

from __future__ import annotations

import json
from typing import Any

_DECODER = json.JSONDecoder()


class VerdictError(ValueError):
    """The reply holds no usable verdict."""


def extract_json(text: str) -> dict[str, Any]:
    """The reply as a JSON object: the whole text, else the first object found in it.

    Fenced blocks (```json … ```) need no special case: scanning for the first
    ``{`` that starts a complete object finds their content. Raises ``VerdictError``.
    """
    stripped = text.strip()
    try:
        whole = json.loads(stripped)
    except ValueError:
        pass
    else:
        if isinstance(whole, dict):
            return whole
    start = stripped.find("{")
    while start != -1:
        try:
            found, _ = _DECODER.raw_decode(stripped, start)
        except ValueError:
            found = None
        if isinstance(found, dict):
            return found
        start = stripped.find("{", start + 1)
    raise VerdictError(f"no JSON object in the judge's reply: {_preview(text)!r}")


def last_line(text: str) -> str:
    """The last non-blank line, stripped (seed 000 puts its verdict there)."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _preview(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
