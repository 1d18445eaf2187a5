"""Rendering a ``Report`` in one of the replay report formats."""

from __future__ import annotations

from typing import TextIO

from collector.offline.reports import FORMATS
from collector.offline.reports.json_report import write_json
from collector.offline.reports.junit import write_junit
from collector.offline.reports.model import Report
from collector.offline.reports.text import write_markdown, write_table


def write_report(report: Report, fmt: str, out: TextIO) -> None:
    """Render ``report`` as ``fmt`` (one of ``FORMATS``); junit needs ``report.junit``."""
    if fmt == "table":
        write_table(report, out)
    elif fmt == "json":
        write_json(report, out)
    elif fmt == "markdown":
        write_markdown(report, out)
    elif fmt == "junit":
        write_junit(report.junit or {}, out)
    else:
        raise ValueError(f"unknown report format {fmt!r}; expected one of {', '.join(FORMATS)}")
