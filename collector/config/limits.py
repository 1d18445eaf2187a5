"""Limits on what clients may hold: connections and their timeouts (issue 14).

A section of ``receivers.otlp`` (``collector.config.settings``); its own module so
the config stays in files of readable size.
"""

from __future__ import annotations

from pydantic import Field

from collector.config.units import Duration, Section


class Connections(Section):
    """What one client connection may hold on the OTLP ports (issue 14: slow and
    half-open clients, descriptor exhaustion)."""

    max_connections: int | None = Field(
        default=None,
        gt=0,
        description="open OTLP/HTTP connections; beyond, new ones get 503. null: a quarter "
        "of the open-file limit, at most 4096",
    )
    idle_timeout: Duration = Field(
        default=60.0,
        gt=0,
        description="HTTP: a connection without a complete request header for this long is "
        "closed (also idle keep-alive); gRPC: GOAWAY after this long without RPCs",
    )
    read_timeout: Duration = Field(
        default=30.0, gt=0, description="HTTP: the longest one request body may take to arrive"
    )
    max_age: Duration = Field(
        default=1800.0, gt=0, description="gRPC: clients are asked to reconnect after this long"
    )
    keepalive: Duration = Field(
        default=60.0,
        gt=0,
        description="gRPC: an idle client is pinged after this long, closed if silent 20s",
    )
