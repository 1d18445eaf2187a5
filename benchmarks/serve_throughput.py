"""Spans/s through ``evald serve`` versus a decode-only grpcio receiver, in one run.

Both receivers run pinned to CPU 0 and are driven by ``shared/bench/loadgen.py``
pinned to CPU 1 (OTLP/gRPC, 512-span requests, unique ids every pass), one after
the other with the same load settings. Prints both rates and their ratio; the
ratio is the figure to compare across machines.

    python benchmarks/serve_throughput.py [--duration 15] [--bench-dir ../shared/bench]
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for(predicate: object, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.1)
    raise TimeoutError("the receiver did not become ready")


def pinned(cpu: str, argv: list[str]) -> list[str]:
    return ["taskset", "-c", cpu, *argv] if _has_taskset() else argv


def _has_taskset() -> bool:
    return shutil.which("taskset") is not None


def load(bench_dir: Path, port: int, pid: int, args: argparse.Namespace, label: str) -> dict:
    out = Path(tempfile.mkdtemp()) / "result.json"
    argv = [
        sys.executable, str(bench_dir / "loadgen.py"),
        "--target", f"127.0.0.1:{port}", "--protocol", "grpc", "--max",
        "--duration", str(args.duration), "--warmup", str(args.warmup),
        "--concurrency", str(args.concurrency), "--unique-ids", "--pid", str(pid),
        "--affinity", "1", "--label", label, "--json-out", str(out),
    ]  # fmt: skip
    # loadgen exits 1 when no call succeeded; the JSON still says why (errors by code).
    subprocess.run(argv, check=False, stdout=subprocess.DEVNULL)
    result: dict = json.loads(out.read_text())
    if result["errors"]:
        print(f"{label}: errors by status {result['errors']}", file=sys.stderr)
    return result


def run_baseline(bench_dir: Path, args: argparse.Namespace) -> dict:
    port = free_port()
    proc = subprocess.Popen(
        pinned("0", [sys.executable, str(HERE / "baseline_receiver.py"), str(port)]),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        proc.stdout.readline()  # "ready"
        return load(bench_dir, port, proc.pid, args, "baseline")
    finally:
        proc.terminate()
        proc.wait(10)


def run_evald(bench_dir: Path, args: argparse.Namespace) -> dict:
    grpc_port, http_port, admin_port = free_port(), free_port(), free_port()
    config = Path(tempfile.mkdtemp()) / "evald.yaml"
    config.write_text(
        f"receivers: {{otlp: {{grpc: {{endpoint: 127.0.0.1:{grpc_port}}},"
        f" http: {{endpoint: 127.0.0.1:{http_port}}}}}}}\n"
        f"admin: {{endpoint: 127.0.0.1:{admin_port}}}\n"
        f"assembly: {{idle_timeout: 1s}}\n"
        f"specs: [{ROOT / 'config' / 'specs' / '*.yaml'}]\n"
    )
    evald = Path(sys.executable).parent / "evald"
    proc = subprocess.Popen(
        pinned("0", [str(evald), "--log-level", "WARNING", "serve", "--config", str(config)])
    )
    try:
        url = f"http://127.0.0.1:{admin_port}/readyz"
        wait_for(lambda: _ok(url))
        result = load(bench_dir, grpc_port, proc.pid, args, "evald")
        metrics = urllib.request.urlopen(f"http://127.0.0.1:{admin_port}/metrics").read().decode()
        result["evaluated_traces"] = _sum_metric(metrics, "evald_traces_evaluated_total")
        return result
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)


def _ok(url: str) -> bool:
    try:
        return bool(urllib.request.urlopen(url, timeout=1).status == 200)
    except OSError:
        return False


def _sum_metric(text: str, name: str) -> float:
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(name))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bench-dir", type=Path, default=ROOT.parent / "shared" / "bench")
    parser.add_argument("--duration", type=float, default=15.0)
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    baseline = run_baseline(args.bench_dir, args)
    evald = run_evald(args.bench_dir, args)
    base_rate, evald_rate = baseline["acked_spans_per_s"], evald["acked_spans_per_s"]
    print(f"baseline decode-only grpcio receiver: {base_rate:,.0f} spans/s{_cpu(baseline)}")
    print(f"evald serve (decode → assembly → normalize → evaluate): {evald_rate:,.0f} spans/s"
          f"{_cpu(evald)}")  # fmt: skip
    print(f"  traces evaluated during the run: {evald.get('evaluated_traces', 0):,.0f}")
    print(f"ratio evald / baseline: {evald_rate / base_rate:.3f}")
    per_cpu = [r.get("acked_spans_per_target_cpu_s") for r in (evald, baseline)]
    if all(per_cpu):  # less sensitive to other load on the receiver's CPU than the rates
        print(f"ratio per receiver CPU-second: {per_cpu[0] / per_cpu[1]:.3f}")


def _cpu(result: dict) -> str:
    """The receiver's CPU use and spans per CPU-second, when loadgen could measure them."""
    if not result.get("target_cpu_pct"):
        return ""
    return (
        f" (receiver CPU {result['target_cpu_pct']:.0f} %,"
        f" {result['acked_spans_per_target_cpu_s']:,.0f} spans per CPU-second)"
    )


if __name__ == "__main__":
    main()
