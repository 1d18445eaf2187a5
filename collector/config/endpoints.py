"""Endpoint values of the configuration: ``host:port`` listeners and ``http(s)://`` URLs."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator


def split_host_port(endpoint: str) -> tuple[str, int]:
    """``(host, port)`` from ``host:port`` (``[::1]:4317`` and port 0 allowed)."""
    host, _, port = endpoint.rpartition(":")
    return host.strip("[]") or "0.0.0.0", int(port)


def _check_endpoint(value: str) -> str:
    _, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"endpoint {value!r} must be host:port")
    return value


def _check_url(value: str) -> str:
    scheme, sep, rest = value.partition("://")
    if scheme not in ("http", "https") or not sep or not rest.strip("/"):
        raise ValueError(f"endpoint {value!r} must be a URL such as http://host:4317")
    return value


HostPort = Annotated[str, AfterValidator(_check_endpoint)]
"""A listener's ``host:port`` (port 0: any free port)."""

Url = Annotated[str, AfterValidator(_check_url)]
"""An ``http://`` or ``https://`` URL."""
