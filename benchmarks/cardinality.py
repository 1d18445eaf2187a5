"""Many label combinations: /metrics size, scrape time, and OTLP export latency during a scrape.

Sends ``--combinations`` (default 20 000) traces to ``evald serve``, each with its own
``service.name``, agent and tool, waits until all are evaluated, then measures the
exposition (text and OpenMetrics: bytes, render-and-transfer time over
``--scrapes``), and the latency of small OTLP/HTTP exports sent back to back,
first with no scrape running (the median), then while another process scrapes
/metrics every ``--scrape-interval`` seconds (0: back to back), counting the
exports that overlapped a scrape. Issue 14's bounds: /metrics under 5 MB, a scrape
under 1 s, the median latency of exports during scrapes within 2x the median
without; exits 1 if one is exceeded.

    python benchmarks/cardinality.py [--combinations 20000] [--scrapes 10] [--seconds 10]
"""

from __future__ import annotations

import argparse
import http.client
import statistics
import subprocess
import sys
import time

from daemon_process import Evald, wait_until
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

OPENMETRICS = "application/openmetrics-text; version=1.0.0"
# Scrapes every argv[2] seconds (0: back to back), printing each one's monotonic
# start and end (CLOCK_MONOTONIC: the same clock in every process).
SCRAPE_LOOP = """
import sys, time, urllib.request
url = f"http://127.0.0.1:{sys.argv[1]}/metrics"
headers = {"Accept": "application/openmetrics-text; version=1.0.0"}
interval = float(sys.argv[2])
while True:
    start = time.monotonic()
    urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=60).read()
    print(start, time.monotonic(), flush=True)
    time.sleep(max(0.0, start + interval - time.monotonic()))
"""
MAX_BYTES, MAX_SCRAPE_S, MAX_RATIO = 5_000_000, 1.0, 2.0


def attr(key: str, value: str) -> KeyValue:
    return KeyValue(key=key, value=AnyValue(string_value=value))


def trace(n: int) -> ResourceSpans:
    trace_id = (n + 1).to_bytes(16, "big")  # never all zero
    root = Span(trace_id=trace_id, span_id=b"\x01" * 8, name=f"invoke_agent agent-{n}",
                start_time_unix_nano=1, end_time_unix_nano=3,
                attributes=[attr("gen_ai.operation.name", "invoke_agent"),
                            attr("gen_ai.agent.name", f"agent-{n}")])  # fmt: skip
    tool = Span(trace_id=trace_id, span_id=b"\x02" * 8, parent_span_id=b"\x01" * 8,
                name=f"execute_tool tool-{n}", start_time_unix_nano=2, end_time_unix_nano=3,
                attributes=[attr("gen_ai.operation.name", "execute_tool"),
                            attr("gen_ai.tool.name", f"tool-{n}")])  # fmt: skip
    resource_spans = ResourceSpans(scope_spans=[ScopeSpans(spans=[root, tool])])
    resource_spans.resource.attributes.append(attr("service.name", f"service-{n}"))
    return resource_spans


class Exporter:
    """OTLP/HTTP exports on one kept-alive connection; latency of each in seconds."""

    def __init__(self, port: int) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.sent = 1_000_000_000

    def post(self, body: bytes) -> float:
        """Latency of one accepted export; a 503 is retried after its Retry-After."""
        while True:
            started = time.perf_counter()
            self.connection.request(
                "POST", "/v1/traces", body, {"Content-Type": "application/x-protobuf"}
            )
            response = self.connection.getresponse()
            response.read()
            if response.status == 200:
                return time.perf_counter() - started
            if response.status != 503:
                raise RuntimeError(f"export answered {response.status}")
            time.sleep(float(response.headers.get("Retry-After", "1")))

    def small(self) -> float:
        self.sent += 1
        request = ExportTraceServiceRequest(resource_spans=[trace(self.sent)])
        return self.post(request.SerializeToString())


def send_all(evald: Evald, combinations: int) -> None:
    exporter = Exporter(evald.http_port)
    for start in range(0, combinations, 200):
        batch = [trace(n) for n in range(start, min(start + 200, combinations))]
        exporter.post(ExportTraceServiceRequest(resource_spans=batch).SerializeToString())


def scrape(evald: Evald, accept: str) -> tuple[int, float]:
    connection = http.client.HTTPConnection("127.0.0.1", evald.admin_port, timeout=60)
    started = time.perf_counter()
    connection.request("GET", "/metrics", headers={"Accept": accept})
    body = connection.getresponse().read()
    took = time.perf_counter() - started
    connection.close()
    return len(body), took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--combinations", type=int, default=20_000)
    parser.add_argument("--scrapes", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument(
        "--scrape-interval",
        type=float,
        default=1.0,
        help="seconds between scrapes; 0: back to back",
    )
    parser.add_argument("--bench-dir", help="unused (make bench passes it to every script)")
    args = parser.parse_args()
    with Evald("assembly: {idle_timeout: 200ms}") as evald:
        began = time.monotonic()
        send_all(evald, args.combinations)
        done = wait_until(
            lambda: evald.metric("evald_traces_evaluated_total") >= args.combinations, 600, 0.5
        )
        print(f"{args.combinations} combinations sent and evaluated ({done}) in "
              f"{time.monotonic() - began:.1f}s")  # fmt: skip
        sizes = {}
        for name, accept in (("text", "text/plain"), ("openmetrics", OPENMETRICS)):
            runs = [scrape(evald, accept) for _ in range(args.scrapes)]
            sizes[name] = (
                runs[0][0],
                statistics.median(t for _, t in runs),
                max(t for _, t in runs),
            )
            print(f"/metrics {name}: {runs[0][0] / 1e6:.2f} MB, scrape median "
                  f"{sizes[name][1]:.3f}s, max {sizes[name][2]:.3f}s")  # fmt: skip
        ratio = export_latency_during_scrapes(evald, args.seconds, args.scrape_interval)
        print(f"series overflowed into 'other': {evald.metric('evald_series_overflow_total'):.0f}")
        stats = evald.stats()
        print(f"daemon: rss {stats.rss_mib:.0f} MiB, fds {stats.fds}, threads {stats.threads}")
    ok = all(size < MAX_BYTES and worst < MAX_SCRAPE_S for size, _, worst in sizes.values())
    ok = ok and ratio <= MAX_RATIO and done
    print("PASS" if ok else "FAIL", f"(bounds: < {MAX_BYTES / 1e6:.0f} MB, < {MAX_SCRAPE_S}s, "
          f"<= {MAX_RATIO}x)")  # fmt: skip
    return 0 if ok else 1


def export_latency_during_scrapes(evald: Evald, seconds: float, interval: float) -> float:
    """The median latency of exports that overlapped a scrape, over the median of
    exports sent with no scrape running; scrapes start every ``interval`` seconds."""
    exporter = Exporter(evald.http_port)
    timed(exporter, 1.0)  # warm up
    alone = [took for _, _, took in timed(exporter, seconds)]
    # The scraper is a process of its own: a thread here would compete with the
    # exporter for this process's GIL and add its own delays to the measurement.
    scraper = subprocess.Popen(
        [sys.executable, "-c", SCRAPE_LOOP, str(evald.admin_port), str(interval)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        exports = timed(exporter, seconds)
    finally:
        scraper.terminate()
        out, _ = scraper.communicate(timeout=30)
    scrapes = [tuple(map(float, line.split())) for line in out.splitlines()]
    during = [took for start, end, took in exports if _overlaps(start, end, scrapes)]
    base, median = statistics.median(alone), statistics.median(during)
    p99, worst = sorted(during)[int(len(during) * 0.99)], max(during)
    busy = sum(end - start for start, end in scrapes) / seconds
    print(f"export latency with no scrape: median {base * 1e3:.2f} ms ({len(alone)} exports); "
          f"overlapping one of {len(scrapes)} scrapes (every {interval:g}s, busy "
          f"{busy:.0%} of the time): median {median * 1e3:.2f} ms ({median / base:.2f}x), "
          f"p99 {p99 * 1e3:.2f} ms, max {worst * 1e3:.2f} ms, {len(during)} exports")  # fmt: skip
    return median / base


def timed(exporter: Exporter, seconds: float) -> list[tuple[float, float, float]]:
    """(start, end, latency) of back-to-back small exports for ``seconds``."""
    out = []
    deadline = time.monotonic() + seconds
    while (start := time.monotonic()) < deadline:
        took = exporter.small()
        out.append((start, time.monotonic(), took))
    return out


def _overlaps(start: float, end: float, scrapes: list[tuple[float, ...]]) -> bool:
    return any(begin < end and start < finish for begin, finish in scrapes)


if __name__ == "__main__":
    sys.exit(main())
