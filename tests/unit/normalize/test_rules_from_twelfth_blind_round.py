"""Rules from the twelfth round of blind captures (ADR 0017, session 23): minimal traces
of the shapes the captures showed, never keyed to a library's names."""

from __future__ import annotations

import pytest

from collector.normalize.results import parse_result

# CAMEL's ChatAgent (under AgentOps' OpenAI instrumentation) tells the model a tool failed
# with a notice of its own in front of the exception's report.


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("Tool execution failed: Error executing tool 'refund': Execution of function refund"
         " failed with kwargs={'invoice_id': 877}. Error: RefundWindowExpired: too old", True),
        ("Build failed: StoreError: the store is closed", True),
        ("Payment failed: 3 retries, then the card was accepted", False),
        ("The nightly job failed: Error budget reports are attached below", False),
        ("Tool execution failed: Error budget is fine", False),
    ],
)  # fmt: skip
def test_a_failure_notice_in_front_of_an_error_opening_is_an_error(text: str, error: bool) -> None:
    assert (parse_result(text).error is not None) is error
