"""Errors reported as the text of a tool's result, and a cheap hint of them.

Frameworks report a handled failure in the result text the model is shown: text that
opens with an error word up to a colon (``Error: …``, ``Error executing tool x: …``,
``StoreError: …``), or, in a short text, a sentence saying so ("An error occurred while
running the tool. Please try again.", "Failed to invoke Tool `x` … . Error: …").
``error_hint`` says, without parsing, whether a text may hold any error form
``results`` reads (so its value may be parsed later), ``error_text`` whether a plain text
is such a report.
"""

from __future__ import annotations

import re
from typing import Final

# Plain-text results that open with an error word, up to the first colon:
# "Error: …", "Error executing tool refund: …", "StoreError: …", "ERROR - …"; or an
# opening sentence with an error word, then one more up to a colon (CrewAI's "Error
# executing tool. coworker mentioned not found, it must be one of the following
# options:"). Not any colon or hyphen within 120 characters: "Error rates for the
# checkout service stayed below the 0.1% objective for the week of March 12: …" is
# no error.
_ERROR_OPENING: Final = re.compile(
    r"\A\s*(?:[A-Za-z_][\w.]*)?(?:Error|Exception|ERROR)\b"
    r"(?:[^\n:]{0,80}[:\-]|[^\n:.]{0,80}\.\s[^\n:]{0,120}:)"
)
# Sentences frameworks hand the model instead of a failed tool's result, read as errors
# only in a short text (narrative text may open with the same words): "An error
# occurred while running the tool. Please try again." (the OpenAI Agents SDK), and a
# text that opens by saying something failed whose next sentence opens with an error
# word up to a colon (Haystack's ToolInvoker: "Failed to invoke Tool `refund` with
# parameters {...}. Error: RefundWindowExpired: ..."), or whose opening clause says
# a tool's execution (tool, function, execution, call, invocation) failed, up to a
# colon, and an error opening follows it (CAMEL's "Tool execution failed: Error executing
# tool 'refund': ..."): a framework's notice in front of the exception's report. All are
# needed: "Payment failed: 3 retries" is a result, and so is a status report a tool
# returns ("Deployment 42 failed: RuntimeError: out of memory: ...").
_ERROR_SENTENCE: Final = re.compile(
    r"\A\s*(?:(?:An? )?(?:unexpected )?[Ee]rror (?:has )?occurred"
    r"(?: while| during| when|[.:!]|\s*$)"
    r"|Failed to\b[^\n]{0,400}?[.!]\s+(?:[A-Za-z_][\w.]*)?(?:Error|Exception)\b[^\n:]{0,80}:"
    r"|(?i:[^\n:]{0,60}\b(?:tool|function|execution|call|invocation)\b[^\n:]{0,30}?"
    r"\b(?:failed|failure))\s*:\s*(?:[A-Za-z_][\w.]*)?(?:Error|Exception)\b[^\n:]{0,80}:)"
)
# A Python traceback handed to the model as the result (DSPy's ReAct: "Execution error in
# refund: \nTraceback (most recent call last): … StoreError: RefundWindowExpired: …"):
# the language's own report of an exception (rule 75), when the text opens with it (after
# at most one line that says so: an error word) and ends in the exception's line. A
# result that quotes one after text of its own (a log search's match) is no failure.
_TRACEBACK: Final = "Traceback (most recent call last):"
_RAISED: Final = re.compile(r"[ \t]*(?:[A-Za-z_][\w.]*)?(?:Error|Exception)\b")
_SAYS_FAILED: Final = re.compile(r"(?i)\b(?:error|exception|failed|failure)\b")
_MAX_SENTENCE_CHARS: Final = 600
_OPENING_CHARS: Final = 64  # where those sentences must begin, quotes and white space allowed
_NOTICE_CHARS: Final = 96  # where a failure notice's colon must be (its clause: 80 characters)
_AFTER_ERROR_FIELD: Final = frozenset("\"'\\=(")  # "(": an exception's repr (rule 100)
_OPENING: Final = frozenset("\"'\\")
_SPACE_ESCAPES: Final = frozenset("nrtfv")


# What a Python exception object printed as is its repr, ``StoreError('RefundWindowExpired:
# …')`` (the class, one quoted argument): a framework that keeps the exception a tool
# raised as the tool's output records nothing else of the failure (rule 100). The whole
# text is the repr, or (WayFlow's ``{'result': StoreError(...)}``, its outputs printed
# with ``str()``) the one value of a one-key dict's repr whose key is the tool's one
# declared output (``declared_outputs``): any other key is a field a tool may return.
_EXCEPTION_REPR: Final = re.compile(
    r"(?:\{\s*'(?P<key>\w+)'\s*:\s*)?"
    r"(?P<name>(?:[A-Z]\w*)?(?:Error|Exception))"
    r"\((?:'(?P<single>(?:[^'\\\n]|\\.)*)'|\"(?P<double>(?:[^\"\\\n]|\\.)*)\")\)"
    r"(?(key)\s*\}|)"
)


def raised_repr(text: str, key: str | None = None) -> str | None:
    """The failure an exception's repr states (``Name: message``) when ``text`` is one
    (``_EXCEPTION_REPR``), or the one value of ``{key: ...}`` when ``key`` is given;
    else None. Escapes are decoded; what cannot be text (a lone surrogate) stays
    escaped."""
    stripped = text.strip()
    if stripped[-1:] not in (")", "}"):
        return None  # (cheap: a long text that is no repr is not searched)
    found = _EXCEPTION_REPR.fullmatch(stripped)
    if found is None or found["key"] != key:
        return None
    quoted = found["single"] if found["single"] is not None else found["double"]
    message = quoted.encode("latin-1", "backslashreplace").decode("unicode_escape", "replace")
    message = message.encode("utf-8", "backslashreplace").decode("utf-8")
    return f"{found['name']}: {message}" if message else str(found["name"])


def error_text(text: str) -> str | None:
    """``text`` itself when it reads as an error report (module docstring), else None."""
    if _ERROR_OPENING.match(text):
        return text
    if len(text) <= _MAX_SENTENCE_CHARS and _ERROR_SENTENCE.match(text):
        return text
    if _TRACEBACK in text and _traceback_report(text):
        return text
    return None


def _traceback_report(text: str) -> bool:
    """Whether ``text`` is a traceback report (``_TRACEBACK``): linear in its length."""
    before = text[: text.find(_TRACEBACK)].strip()
    if before and ("\n" in before or not _SAYS_FAILED.search(before)):
        return False
    last = text.rstrip().rsplit("\n", 1)[-1]
    return _RAISED.match(last) is not None


def error_hint(raw: str) -> bool:
    """Whether ``raw`` may hold one of the error forms above. Each needs, written in the
    text, either a field or value that ends in ``error`` right before a closing quote,
    a backslash (nested JSON) or ``=`` (an object repr's field): ``"error"``,
    ``"is_error"``, ``isError``, ``status='error'``; or an error word (``Error``,
    ``ERROR``, ``Exception``, maybe after an identifier) opening a string: right after
    a quote, a backslash or the text's start, whitespace allowed before it; or the
    sentence "an error (has) occurred", or "failed"/"failure" (any case) near the start."""
    # (One-character searches first: far faster than a word's, and the letters are rare.)
    return (
        _word_hint(raw, "rror")
        or ("R" in raw and _word_hint(raw, "RROR"))
        or ("x" in raw and _word_hint(raw, "xception"))
        or raw.find("occurred", 0, _OPENING_CHARS) >= 0  # (both sentences open the text)
        or raw.find("Failed to", 0, _OPENING_CHARS) >= 0
        or raw.find("ailed", 0, _NOTICE_CHARS) >= 0  # (Failed, failed)
        or raw.find("ailure", 0, _NOTICE_CHARS) >= 0
        or raw.find("AILED", 0, _NOTICE_CHARS) >= 0
    )


def _word_hint(raw: str, word: str) -> bool:
    """``error_hint`` for one of (E)rror, (E)RROR, (E)xception, and error; a text that
    holds the word anywhere else may hold a traceback (searched for only then: a
    traceback ends in an ``…Error`` or ``…Exception`` line)."""
    size = len(raw)
    at = raw.find(word)
    if at < 0:
        return False
    while at >= 0:
        end = at + len(word)
        if end < size and raw[end] in _AFTER_ERROR_FIELD:
            return True
        if at > 0 and raw[at - 1] == "E" and _opens_string(raw, at - 1):
            return True
        at = raw.find(word, end)
    return _TRACEBACK in raw


def _opens_string(raw: str, at: int) -> bool:
    """Whether the word at ``at`` may open a string: only identifier characters, then
    only whitespace (or its escapes, ``\\n``), between it and a quote, a backslash or
    the start of the text."""
    i = at - 1
    while i >= 0 and (raw[i].isalnum() or raw[i] in "_."):
        i -= 1
    while i >= 0:
        if raw[i].isspace():
            i -= 1
        elif i > 0 and raw[i] in _SPACE_ESCAPES and raw[i - 1] == "\\":
            i -= 2
        else:
            break
    return i < 0 or raw[i] in _OPENING
