"""Demo traffic: replays the demo corpus over OTLP/HTTP in a loop, as live agents would.

The docker compose stack runs it (service ``demo-traffic``) so the Grafana dashboard
shows passing and failing agents on first start::

    python deploy/demo_traffic.py --endpoint http://otel-collector:4318 examples/demo/traces

Each round sends every trace file of the corpus (OTLP/JSON lines, one export request
per line) with fresh trace and span ids, so evald sees new traces rather than late
spans of traces it already evaluated, and with times moved so that each file's last
span ends now (durations unchanged). Standard library only: it runs in any Python
image. A refused request (429, 503, a connection error) is retried after a pause.
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

RETRY_STATUS = (429, 502, 503, 504)
TIME_FIELDS = ("startTimeUnixNano", "endTimeUnixNano", "timeUnixNano")


class IdMap:
    """New random ids for the ids of one replayed file, the same new id for the same old."""

    def __init__(self) -> None:
        self._ids: dict[str, str] = {}

    def __call__(self, old: str) -> str:
        if not old:
            return old  # a root span's empty parent id stays empty
        if old not in self._ids:
            self._ids[old] = secrets.token_hex(len(old) // 2)
        return self._ids[old]


def spans(request: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every span of an OTLP/JSON ``ExportTraceServiceRequest``."""
    for resource_spans in request.get("resourceSpans", []):
        for scope_spans in resource_spans.get("scopeSpans", []):
            yield from scope_spans.get("spans", [])


def last_end(requests: Sequence[dict[str, Any]]) -> int:
    """The latest span end time of ``requests``, in Unix nanoseconds (0 if none)."""
    return max((int(span["endTimeUnixNano"]) for r in requests for span in spans(r)), default=0)


def rebase(request: dict[str, Any], ids: IdMap, shift_ns: int) -> dict[str, Any]:
    """A copy of ``request`` with ids mapped through ``ids`` and times moved by ``shift_ns``."""
    copy: dict[str, Any] = json.loads(json.dumps(request))
    for span in spans(copy):
        for key in ("traceId", "spanId", "parentSpanId"):
            if key in span:
                span[key] = ids(span[key])
        _shift(span, shift_ns)
        for event in span.get("events", []):
            _shift(event, shift_ns)
    return copy


def _shift(item: dict[str, Any], shift_ns: int) -> None:
    for key in TIME_FIELDS:
        if key in item:  # a string in Python's OTLP/JSON, a number in JavaScript's
            moved = int(item[key]) + shift_ns
            item[key] = str(moved) if isinstance(item[key], str) else moved


def read_requests(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def post(endpoint: str, request: dict[str, Any], attempts: int = 30) -> None:
    """POST one export request to ``endpoint``/v1/traces, retrying refusals."""
    body = json.dumps(request).encode()
    for _ in range(attempts):
        message = urllib.request.Request(
            endpoint.rstrip("/") + "/v1/traces", data=body, method="POST",
            headers={"Content-Type": "application/json"},
        )  # fmt: skip
        try:
            with urllib.request.urlopen(message, timeout=10):
                return
        except urllib.error.HTTPError as exc:
            if exc.code not in RETRY_STATUS:
                raise
        except OSError:
            pass  # not up yet (compose starts everything at once), or restarting
        time.sleep(2)
    raise RuntimeError(f"{endpoint}: no export accepted after {attempts} attempts")


def send_file(endpoint: str, path: Path) -> int:
    """Send one trace file as new traces ending now; returns the requests sent."""
    requests = read_requests(path)
    shift = time.time_ns() - last_end(requests)
    ids = IdMap()
    for request in requests:
        post(endpoint, rebase(request, ids, shift))
    return len(requests)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path, help="directory of OTLP/JSON lines files")
    parser.add_argument("--endpoint", default="http://localhost:4318", help="OTLP/HTTP base URL")
    parser.add_argument("--interval", type=float, default=2.0, help="seconds between files")
    parser.add_argument("--rounds", type=int, default=0, help="rounds over the corpus (0: forever)")
    args = parser.parse_args(argv)
    files = sorted(args.corpus.rglob("*.jsonl"))
    if not files:
        print(f"demo_traffic: no *.jsonl file under {args.corpus}", file=sys.stderr)
        return 2
    round_ = 0
    while args.rounds == 0 or round_ < args.rounds:
        round_ += 1
        for path in files:
            send_file(args.endpoint, path)
            time.sleep(args.interval)
        print(f"demo_traffic: round {round_}: {len(files)} files sent", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
