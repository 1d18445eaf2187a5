"""The admin endpoint over loopback: /metrics (text and OpenMetrics), /healthz, /readyz."""

from __future__ import annotations

import gzip
import threading
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any, NamedTuple

import pytest

from collector.config.settings import Admin
from collector.daemon.admin import AdminServer
from collector.telemetry.registry import Telemetry

pytestmark = [pytest.mark.integration, pytest.mark.timeout(30)]


class Answer(NamedTuple):
    status: int
    content_type: str
    content_encoding: str | None
    body: bytes


class Readiness:
    def __init__(self) -> None:
        self.ready = False

    def __call__(self) -> bool:
        return self.ready


@pytest.fixture
def readiness() -> Readiness:
    return Readiness()


@pytest.fixture
def admin(start: Callable[[Any], Any], telemetry: Telemetry, readiness: Readiness) -> AdminServer:
    return start(AdminServer(Admin(endpoint="127.0.0.1:0"), telemetry, readiness))  # type: ignore[no-any-return]


def get(admin: AdminServer, path: str, method: str = "GET", **headers: str) -> Answer:
    url = f"http://127.0.0.1:{admin.port}{path}"
    request = urllib.request.Request(url, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            headers_ = response.headers
            return Answer(
                response.status,
                headers_["Content-Type"],
                headers_["Content-Encoding"],
                response.read(),
            )
    except urllib.error.HTTPError as error:
        with error:
            return Answer(error.code, error.headers["Content-Type"], None, error.read())


def test_metrics_in_prometheus_text_format(admin: AdminServer, telemetry: Telemetry) -> None:
    telemetry.ingest.spans_received.labels(transport="grpc").inc(3)

    answer = get(admin, "/metrics")

    assert answer.status == 200
    assert answer.content_type.startswith("text/plain; version=0.0.4")
    assert b'evald_spans_received_total{transport="grpc"} 3.0' in answer.body


def test_metrics_include_process_and_gc_metrics(admin: AdminServer) -> None:
    body = get(admin, "/metrics").body
    for name in (b"process_resident_memory_bytes ", b"process_cpu_seconds_total ",
                 b"process_open_fds ", b"python_gc_collections_total{"):  # fmt: skip
        assert b"\n" + name in body, name


def test_metrics_in_openmetrics_when_asked(admin: AdminServer, telemetry: Telemetry) -> None:
    telemetry.ingest.spans_received.labels(transport="http").inc()

    answer = get(admin, "/metrics", Accept="application/openmetrics-text; version=1.0.0")

    assert answer.status == 200
    assert answer.content_type.startswith("application/openmetrics-text; version=1.0.0")
    assert answer.body.endswith(b"# EOF\n")
    assert b'evald_spans_received_total{transport="http"} 1.0' in answer.body


def test_metrics_gzipped_when_accepted(admin: AdminServer) -> None:
    answer = get(admin, "/metrics", **{"Accept-Encoding": "gzip"})
    assert answer.content_encoding == "gzip"
    assert b"evald_spans_received" in gzip.decompress(answer.body)


def test_healthz_always_and_readyz_follows_ready(admin: AdminServer, readiness: Readiness) -> None:
    assert get(admin, "/healthz").status == 200
    assert get(admin, "/readyz").status == 503
    readiness.ready = True
    assert get(admin, "/readyz").status == 200
    readiness.ready = False
    assert get(admin, "/readyz").status == 503
    assert get(admin, "/healthz").status == 200


def test_unknown_path_and_method(admin: AdminServer) -> None:
    assert get(admin, "/nope").status == 404
    assert get(admin, "/metrics", method="POST").status == 405


class _Broken:
    """A registry collector whose exposition cannot be rendered (while ``broken``)."""

    broken = True

    def collect(self) -> Any:
        if self.broken:
            raise UnicodeEncodeError("utf-8", "x\ud800", 1, 2, "surrogates not allowed")
        return iter(())


def test_readyz_is_not_ready_while_metrics_cannot_render(
    admin: AdminServer, telemetry: Telemetry, readiness: Readiness
) -> None:
    readiness.ready = True
    broken = _Broken()
    telemetry.registry.register(broken)  # type: ignore[arg-type]
    assert get(admin, "/metrics").status == 500
    answer = get(admin, "/readyz")
    assert answer.status == 503 and b"/metrics" in answer.body
    broken.broken = False
    assert get(admin, "/metrics").status == 200
    assert get(admin, "/readyz").status == 200


class _Held:
    """A collector that holds every render until ``release`` is set."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    def collect(self) -> Any:
        self.entered.set()
        self.release.wait(10)
        return iter(())


def test_a_slow_render_does_not_block_the_event_loop(
    admin: AdminServer, telemetry: Telemetry, readiness: Readiness
) -> None:
    held = _Held()
    telemetry.registry.register(held)  # type: ignore[arg-type]
    scrape = threading.Thread(target=get, args=(admin, "/metrics"))
    scrape.start()
    try:
        assert held.entered.wait(10)
        # While /metrics renders, the loop (receivers, probes) still answers.
        with urllib.request.urlopen(f"http://127.0.0.1:{admin.port}/healthz", timeout=2) as ok:
            assert ok.status == 200
    finally:
        held.release.set()
        scrape.join(10)
