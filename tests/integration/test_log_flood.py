"""A flood of malformed requests does not flood evald's log (issue 14, defect 4):
every per-request record, evald's own and the libraries', is rate limited."""

from __future__ import annotations

import signal
import socket
from pathlib import Path

import pytest
from support.serve_process import EVALD, Served, loopback_config, start_serve

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

BAD_HTTP = [
    b"GARBAGE\r\n\r\n",
    b"POST /v1/traces HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc",  # no Host header
    b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    b"Content-Length: 5\r\n\r\n{bad}",
]


def hit(port: int, payload: bytes) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(payload)
        sock.shutdown(socket.SHUT_WR)
        while sock.recv(65536):
            pass


def test_a_thousand_bad_requests_log_a_few_lines(tmp_path: Path, serve_with: list[Served]) -> None:
    served = start_serve([str(EVALD), "serve", "--config", str(loopback_config(tmp_path))])
    serve_with.append(served)
    for n in range(1000):
        hit(served.http_port, BAD_HTTP[n % len(BAD_HTTP)])
    assert served.get("/readyz")[0] == 200
    served.proc.send_signal(signal.SIGTERM)
    assert served.proc.stderr is not None
    log = served.proc.stderr.read()
    served.proc.wait(30)
    assert "Error handling request" in log  # some are logged …
    assert len(log) < 40_000, log[-2000:]  # … not 1 000 tracebacks (~300 KB before)
