"""JUnit XML: one test case per (trace, spec), so CI systems show failing traces natively.

Layout (the Ant/Surefire structure that Jenkins, GitLab, GitHub test reporters
and Azure DevOps read)::

    <testsuites name="evald replay" tests= failures= errors= time=>
      <testsuite name="SPEC" tests= failures= errors= skipped="0" time=>
        <testcase classname="SPEC" name="TRACE_ID: input…" time="agent latency s">
          <failure type="threshold" message=…>one line per failed evaluator</failure>
          <error type="evaluator_error" message=…>one line per evaluator error</error>
          <system-out>service, agent, input, every score</system-out>

The always-on evaluators form the suite ``evaluation.always``. A ``scope:
session`` spec has one test case per session, named ``LAST_TRACE_ID: session ID (N
turns): first input…`` (its time: first turn start to last turn end). A test case's
``time`` is the agent run's latency (deterministic, and what a person scanning
CI wants to see), not evaluation time. Test cases are spooled to one file per
suite while the replay runs, so memory does not grow with the number of
traces; ``write_junit`` adds the counted headers at the end.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO
from xml.sax.saxutils import escape, quoteattr

from collector.offline.reports.summary import MetricKey
from collector.sinks.base import ResultSink
from evaluators.results import ErrorResult, score_of
from evaluators.runner import Outcome
from evaluators.session_merge import session_turns
from evaluators.trajectory import Trajectory

ALWAYS_SUITE = "evaluation.always"
_NAME_INPUT_CHARS = 80
# Characters XML 1.0 cannot carry at all; traffic may contain them.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")

Thresholds = Mapping[MetricKey, float | None]


def xml_text(text: str) -> str:
    return escape(_NOT_XML.sub("\ufffd", text))


def xml_attr(text: str) -> str:
    return quoteattr(_NOT_XML.sub("\ufffd", text))


@dataclass
class Suite:
    """Counts of one suite and the spool files holding its test cases (one per worker)."""

    name: str
    files: list[Path] = field(default_factory=list)
    tests: int = 0
    failures: int = 0
    errors: int = 0
    time: float = 0.0

    def merge(self, other: Suite) -> None:
        self.files.extend(other.files)
        self.tests += other.tests
        self.failures += other.failures
        self.errors += other.errors
        self.time += other.time


def merge_suites(into: dict[str, Suite], other: Mapping[str, Suite]) -> None:
    """Fold the suites of another worker into ``into``."""
    for name, suite in other.items():
        into.setdefault(name, Suite(name)).merge(suite)


class JUnitSpool(ResultSink):
    """A result sink writing each (trace, spec) test case to its suite's spool file."""

    name = "junit"

    def __init__(self, directory: Path, thresholds: Thresholds) -> None:
        self._directory = directory
        self._thresholds = thresholds
        self.suites: dict[str, Suite] = {}
        self._files: dict[str, IO[str]] = {}

    def write(self, trajectory: Trajectory, outcomes: Sequence[Outcome]) -> None:
        by_spec: dict[str | None, list[Outcome]] = {}
        for outcome in outcomes:
            by_spec.setdefault(outcome.spec_id, []).append(outcome)
        for spec, group in by_spec.items():
            self._write_case(spec or ALWAYS_SUITE, trajectory, group)

    def close(self) -> None:
        for handle in self._files.values():
            handle.close()
        self._files.clear()

    def _write_case(self, suite_name: str, trajectory: Trajectory, group: list[Outcome]) -> None:
        suite = self.suites.get(suite_name)
        if suite is None:
            suite = self.suites[suite_name] = Suite(suite_name)
            path = self._directory / f"suite-{len(self.suites)}.xml.part"
            suite.files.append(path)
            self._files[suite_name] = path.open("w", encoding="utf-8")
        failures = [o for o in group if o.passed is False]
        errors = [o for o in group if isinstance(o.result, ErrorResult)]
        suite.tests += 1
        suite.failures += bool(failures)
        suite.errors += bool(errors)
        suite.time += trajectory.latency_s
        self._files[suite_name].write(self._case(suite_name, trajectory, group, failures, errors))

    def _case(
        self,
        suite: str,
        trajectory: Trajectory,
        group: list[Outcome],
        failures: list[Outcome],
        errors: list[Outcome],
    ) -> str:
        name = _case_id(trajectory)
        if trajectory.input:
            name += ": " + " ".join(trajectory.input.split())[:_NAME_INPUT_CHARS].rstrip()
        parts = [
            f"    <testcase classname={xml_attr(suite)} name={xml_attr(name)}"
            f' time="{trajectory.latency_s:.3f}">\n'
        ]
        if failures:
            parts.append(self._element("failure", "threshold", failures))
        if errors:
            parts.append(self._element("error", "evaluator_error", errors))
        parts.append(f"      <system-out>{xml_text(_scores(trajectory, group))}</system-out>\n")
        parts.append("    </testcase>\n")
        return "".join(parts)

    def _element(self, tag: str, kind: str, outcomes: list[Outcome]) -> str:
        lines = [self._line(outcome) for outcome in outcomes]
        return (
            f"      <{tag} type={xml_attr(kind)} message={xml_attr('; '.join(lines))}>"
            f"{xml_text(chr(10).join(lines))}</{tag}>\n"
        )

    def _line(self, outcome: Outcome) -> str:
        result = outcome.result
        if isinstance(result, ErrorResult):
            return f"{outcome.evaluator}: error: {result.error}"
        threshold = self._thresholds.get((outcome.spec_id, outcome.evaluator))
        limit = "" if threshold is None else f" (threshold {threshold:g})"
        why = f": {result.explanation}" if result.explanation else ""
        return f"{outcome.evaluator} = {_score(outcome)}{limit}{why}"


def _score(outcome: Outcome) -> str:
    score = score_of(outcome.result)
    return "error" if score is None else f"{score:.3f}"


def _verdict(outcome: Outcome) -> str:
    if isinstance(outcome.result, ErrorResult):
        return "error"
    return {True: "pass", False: "FAIL", None: "-"}[outcome.passed]


def _case_id(trajectory: Trajectory) -> str:
    """The trace id; for a session's results also the session (the id is its last turn's)."""
    turns = session_turns(trajectory)
    if turns is None:
        return trajectory.trace_id
    return f"{trajectory.trace_id}: session {trajectory.session_id} ({turns} turns)"


def _scores(trajectory: Trajectory, group: Iterable[Outcome]) -> str:
    lines = [f"trace {trajectory.trace_id}", f"service {trajectory.service}"]
    turns = session_turns(trajectory)
    if turns is not None:
        lines[0] += f" (last of the {turns} turns of session {trajectory.session_id})"
    if trajectory.agent:
        lines.append(f"agent {trajectory.agent}")
    if trajectory.input:
        lines.append(f"input {trajectory.input}")
    lines.extend(f"{o.evaluator} {_score(o)} {_verdict(o)}" for o in group)
    return "\n".join(lines)


def write_junit(suites: Mapping[str, Suite], out: IO[str]) -> None:
    """The whole document: counted headers around the spooled test cases."""
    ordered = sorted(suites.values(), key=lambda s: (s.name != ALWAYS_SUITE, s.name))
    totals = Suite("evald replay")
    for suite in ordered:
        totals.merge(Suite(suite.name, [], suite.tests, suite.failures, suite.errors, suite.time))
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write(f'<testsuites name="evald replay"{_counts(totals)}>\n')
    for suite in ordered:
        out.write(f'  <testsuite name={xml_attr(suite.name)}{_counts(suite)} skipped="0">\n')
        for path in suite.files:
            with path.open(encoding="utf-8") as spooled:
                shutil.copyfileobj(spooled, out)
        out.write("  </testsuite>\n")
    out.write("</testsuites>\n")


def _counts(suite: Suite) -> str:
    return (
        f' tests="{suite.tests}" failures="{suite.failures}" errors="{suite.errors}"'
        f' time="{suite.time:.3f}"'
    )
