"""``ReceiverSecurity.authorized``: the bearer scheme per RFC 7235 / RFC 6750."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from collector.receivers.security import ReceiverSecurity

TOKEN = "s3cret-token"


@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "BEARER", "bEaReR"])
def test_the_auth_scheme_is_case_insensitive(scheme: str) -> None:
    # RFC 7235 §2.1: "It uses a case-insensitive token as a means to identify the scheme".
    security = ReceiverSecurity(token=SecretStr(TOKEN))
    assert security.authorized(f"{scheme} {TOKEN}")


@pytest.mark.parametrize(
    "header",
    [f"Basic {TOKEN}", f"Bearer{TOKEN}", f"Bearerx {TOKEN}", f"bearer {TOKEN.upper()}", "bearer"],
)
def test_other_schemes_and_a_case_changed_token_are_refused(header: str) -> None:
    assert not ReceiverSecurity(token=SecretStr(TOKEN)).authorized(header)


def test_spaces_between_scheme_and_token_are_allowed() -> None:
    assert ReceiverSecurity(token=SecretStr(TOKEN)).authorized(f"bearer   {TOKEN}")
