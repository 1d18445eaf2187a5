"""The music store as an MCP server (stdio), for ``mcp_tools_openai_agents.py``.

Started by the capture script as a subprocess (``MCPServerStdio``), with the venv's python.
``mcp`` 2.x: ``FastMCP`` is now ``mcp.server.mcpserver.MCPServer`` (same decorator API).
The five store tools are thin: each forwards its arguments to the capture script's
loopback ``POST /store/<tool>`` (``STORE_URL``), where ``common.Script.call`` runs the
store backend and records the call; the refused refund comes back as ``{"error": …}`` and
the tool raises it as ``ToolError`` (MCP's idiom for an anticipated failure: the message
reaches the client in an ``isError`` result; any other exception would be reduced to
"Error executing tool refund").

Tracing: the server has its own ``TracerProvider`` (service ``music-store-mcp-server``)
exporting with the SDK's OTLP/HTTP protobuf exporter to the capture script's receiver
(``OTLP_TRACES_URL``), flushed when the server exits. Its spans are the MCP SDK's native
ones (``OpenTelemetryMiddleware``: one SERVER span per inbound request), parented to the
client's spans through the W3C trace context the client puts in ``_meta``. With
``MCP_OPENINFERENCE=1`` openinference-instrumentation-mcp is instrumented here too.
"""

from __future__ import annotations

import json
import os
import urllib.request
from typing import Any

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

PROVIDER = TracerProvider(
    resource=Resource.create(
        {"service.name": "music-store-mcp-server", "deployment.environment.name": "acceptance-test"}
    )
)
PROVIDER.add_span_processor(
    BatchSpanProcessor(
        OTLPSpanExporter(endpoint=os.environ["OTLP_TRACES_URL"]),
        schedule_delay_millis=60_000,
        max_queue_size=8192,
        max_export_batch_size=4096,
    )
)
trace.set_tracer_provider(PROVIDER)
if os.environ.get("MCP_OPENINFERENCE") == "1":
    from openinference.instrumentation.mcp import MCPInstrumentor

    MCPInstrumentor().instrument(tracer_provider=PROVIDER)

from mcp.server.mcpserver import MCPServer  # noqa: E402
from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402

STORE_URL = os.environ["STORE_URL"]
mcp = MCPServer("music_store")


def _store(tool: str, **args: Any) -> Any:
    request = urllib.request.Request(
        f"{STORE_URL}/{tool}",
        data=json.dumps(args).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=30) as response:  # loopback only
        answer = json.loads(response.read())
    if answer.get("error") is not None:
        raise ToolError(answer["error"])
    return answer["result"]


@mcp.tool()
def lookup_track(track_name: str) -> dict[str, Any]:
    """Look up a track in the catalogue by its exact name."""
    return _store("lookup_track", track_name=track_name)


@mcp.tool()
def lookup_album(album_title: str) -> dict[str, Any]:
    """Look up an album by its title."""
    return _store("lookup_album", album_title=album_title)


@mcp.tool()
def lookup_artist(artist_name: str) -> dict[str, Any]:
    """Look up an artist and the albums the store sells by them."""
    return _store("lookup_artist", artist_name=artist_name)


@mcp.tool()
def lookup_invoice(customer_id: int, invoice_id: int) -> dict[str, Any]:
    """Fetch an invoice of a customer (lines reference track ids)."""
    return _store("lookup_invoice", customer_id=customer_id, invoice_id=invoice_id)


@mcp.tool()
def refund(invoice_id: int, track_id: int, reason: str) -> dict[str, Any]:
    """Refund one purchased track of an invoice."""
    return _store("refund", invoice_id=invoice_id, track_id=track_id, reason=reason)


if __name__ == "__main__":
    try:
        mcp.run("stdio")
    finally:
        PROVIDER.shutdown()  # exports the server's spans (one batch per scenario)
