"""From trace completion to its samples on ``/metrics``, at half the sustainable load.

A real ``evald serve`` (``daemon_process.Evald``, ``pipeline.workers`` as given,
default 1) runs with ``assembly.idle_timeout`` = ``--idle``. First
``shared/bench/loadgen.py --max`` finds the rate it sustains (acknowledged spans/s);
then loadgen sends half that rate, and meanwhile, every ``--every`` seconds, one
probe trace (an ``invoke_agent`` root and one tool span, service
``latency-probe``) is exported over OTLP/gRPC in one request. The probe completes
``--idle`` seconds after it arrived (its root is there: the idle rule), and the
admin port's ``/debug/services`` is read back to back until it counts the probe.
The sinks are written in order, the Prometheus one before that digest, so at that
instant the probe's samples are in the registry a ``/metrics`` scrape renders.

Lag = when the count was seen - (when the export was acknowledged + idle timeout).
It includes the completion timer, the evaluation queue, normalizing and evaluating
the probe and the metric updates, plus up to one ``/debug/services`` answer (about a
millisecond); the acknowledgement comes after the spans arrived, so the send does
not inflate it. A scrape then takes its render time: ``/metrics`` is timed
separately under the same load and printed (its median and p99). With
``--via metrics`` the count is read from ``/metrics`` scrapes instead, back to back,
as a scraper would see it: the lag then includes rendering (and parsing) the scrape
that first shows the probe. Prints lag p50, p99 and max (issue 16: p99 below 50 ms).

``--switch-interval`` runs evald with another ``pipeline.switch_interval`` (ADR 0026:
the interval trades this lag's tail for throughput under load).

    python benchmarks/completion_latency.py [--probes 200] [--workers 1]
                                            [--via digest|metrics] [--switch-interval 5ms]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import grpc
from daemon_process import Evald, add_switch_interval, pipeline_settings
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2_grpc import TraceServiceStub
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

HERE = Path(__file__).resolve().parent
PROBE_SERVICE = "latency-probe"
PROBE_LABEL = f'service="{PROBE_SERVICE}"'


def _kv(key: str, value: str) -> KeyValue:
    return KeyValue(key=key, value=AnyValue(string_value=value))


def probe_request() -> ExportTraceServiceRequest:
    """One whole agent run: a root ``invoke_agent`` span and a tool span below it."""
    trace_id, root_id, tool_id = os.urandom(16), os.urandom(8), os.urandom(8)
    now = time.time_ns()
    root = Span(trace_id=trace_id, span_id=root_id, name="invoke_agent probe",
                start_time_unix_nano=now - 2_000_000, end_time_unix_nano=now,
                attributes=[_kv("gen_ai.operation.name", "invoke_agent"),
                            _kv("gen_ai.agent.name", "probe")])  # fmt: skip
    tool = Span(trace_id=trace_id, span_id=tool_id, parent_span_id=root_id,
                name="execute_tool lookup", start_time_unix_nano=now - 1_000_000,
                end_time_unix_nano=now - 500_000,
                attributes=[_kv("gen_ai.operation.name", "execute_tool"),
                            _kv("gen_ai.tool.name", "lookup")])  # fmt: skip
    resource = Resource(attributes=[_kv("service.name", PROBE_SERVICE)])
    return ExportTraceServiceRequest(
        resource_spans=[
            ResourceSpans(resource=resource, scope_spans=[ScopeSpans(spans=[tool, root])])
        ]
    )


def probe_count(evald: Evald) -> float:
    """The probe service's evaluated traces, as the digest counts them."""
    _, body = evald.get("/debug/services")
    services = json.loads(body)
    services = services.get("services", services)  # (a daemon with workers wraps them)
    return float(services.get(PROBE_SERVICE, {}).get("traces", 0))


def scraped_count(evald: Evald) -> float:
    """The probe service's evaluated traces, as a ``/metrics`` scrape shows them."""
    _, body = evald.get("/metrics")
    total = 0.0
    for line in body.decode().splitlines():
        if line.startswith("evald_traces_evaluated_total{") and PROBE_LABEL in line:
            total += float(line.rsplit(" ", 1)[1])
    return total


def scrape_seconds(evald: Evald) -> float:
    started = time.perf_counter()
    evald.get("/metrics")
    return time.perf_counter() - started


def loadgen(port: int, args: argparse.Namespace, rate: float, duration: float) -> dict:
    out = Path(tempfile.mkdtemp()) / "load.json"
    argv = [sys.executable, str(args.bench_dir / "loadgen.py"), "--target",
            f"127.0.0.1:{port}", "--protocol", "grpc", "--rate", str(int(rate)),
            "--duration", str(duration), "--warmup", "1", "--concurrency", "8",
            "--unique-ids", "--json-out", str(out)]  # fmt: skip
    subprocess.run(argv, check=False, stdout=subprocess.DEVNULL)
    return dict(json.loads(out.read_text()))


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--probes", type=int, default=200)
    parser.add_argument("--every", type=float, default=0.1, help="seconds between probes")
    parser.add_argument("--idle", type=float, default=0.5, help="assembly.idle_timeout, s")
    parser.add_argument("--workers", type=int, default=1)
    add_switch_interval(parser)
    parser.add_argument("--rate", type=float, help="background spans/s (default: half of --max)")
    parser.add_argument(
        "--via",
        choices=("digest", "metrics"),
        default="digest",
        help="read the count from /debug/services, or from /metrics scrapes (lag then "
        "includes rendering the scrape that shows it)",
    )
    parser.add_argument("--bench-dir", type=Path, default=HERE.parent.parent / "shared" / "bench")
    args = parser.parse_args()
    config = (f"assembly: {{idle_timeout: {args.idle}s}}\n"
              f"{pipeline_settings(args.workers, args.switch_interval)}"
              f"specs: ['{HERE.parent / 'config' / 'specs'}/*.yaml']\n")  # fmt: skip
    with Evald(config) as evald:
        rate = args.rate
        if rate is None:
            sustained = loadgen(evald.grpc_port, args, 0, 6)["acked_spans_per_s"]
            rate = sustained / 2
            print(f"sustained {sustained:,.0f} spans/s; background load {rate:,.0f} spans/s")
            time.sleep(args.idle * 4)  # what the run left held completes first
        duration = args.probes * args.every + 4
        background = threading.Thread(target=loadgen, args=(evald.grpc_port, args, rate, duration))
        background.start()
        time.sleep(2)  # past loadgen's warm-up
        stub = TraceServiceStub(grpc.insecure_channel(f"127.0.0.1:{evald.grpc_port}"))
        lags: list[float] = []
        scrapes: list[float] = []
        count_of = probe_count if args.via == "digest" else scraped_count
        seen = count_of(evald)
        for n in range(args.probes):
            stub.Export(probe_request(), timeout=10)
            complete = time.perf_counter() + args.idle
            if n % 4 == 0:
                scrapes.append(scrape_seconds(evald))  # while the probe waits to complete
            while True:
                count = count_of(evald)
                if count > seen:
                    lags.append(time.perf_counter() - complete)
                    seen = count
                    break
                if time.perf_counter() - complete > 10:
                    raise SystemExit("a probe was not evaluated within 10 s of completing")
            time.sleep(max(0.0, args.every - args.idle))
        background.join()
    ms = [lag * 1000 for lag in lags]
    print(f"{len(ms)} probes, workers {args.workers}, idle timeout {args.idle}s, via {args.via}, "
          f"switch interval {args.switch_interval or 'default'}")  # fmt: skip
    print(f"  lag p50 {percentile(ms, 0.5):6.1f} ms   p99 {percentile(ms, 0.99):6.1f} ms"
          f"   max {max(ms):6.1f} ms")  # fmt: skip
    median, p99 = (percentile(scrapes, share) * 1000 for share in (0.5, 0.99))
    print(f"  /metrics scrape under the same load: median {median:.1f} ms, p99 {p99:.1f} ms")


if __name__ == "__main__":
    main()
