"""A finished replay's report: the run summary, what the specs promised, the gate."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from collector.offline.reports.gate import Catalogue, GateVerdict
from collector.offline.reports.junit import Suite
from collector.offline.reports.summary import RunSummary


class Report(NamedTuple):
    """Input of every report format. ``junit``: the spooled test-case suites, if any."""

    summary: RunSummary
    catalogue: Catalogue
    verdict: GateVerdict
    junit: Mapping[str, Suite] | None = None
