"""Spans/s through ``evald serve`` versus a decode-only grpcio receiver, in one run.

The load comes from ``shared/bench/loadgen.py`` pinned to CPU 1 (OTLP/gRPC, 512-span
requests, unique ids every pass), the same settings for every target, one after
the other:

1. the decode-only grpcio receiver, pinned to CPU 0;
2. ``evald serve`` with ``pipeline.workers: 1`` (one process), pinned to CPU 0;
3. ``evald serve`` with ``--workers`` workers (front + workers), not pinned: it
   may use every CPU, sharing CPU 1 with the load generator;
4. ``evald serve`` with ``pipeline.workers: 1`` again, not pinned: what one process
   loses by sharing the CPUs as the workers do (the threads of a process moving
   between CPUs, and CPU 1 shared with the load generator).

Prints the rates (with each target's peak resident memory, all its processes),
(a) one worker against the receiver (rate and per CPU-second)
and (b) the workers' spans per daemon CPU-second (user + sys of every daemon
process, from ``/proc``) against one worker's, and how many cores the daemon used;
(b') the same against the unpinned single process's: the cost of the front and of
the forwarding, apart from the cost of sharing the CPUs.

With ``--repeat N`` the four runs are repeated N times, interleaved; the figures
above are each target's best, and each round's own ratios follow with their medians.

``--switch-interval`` runs evald with another ``pipeline.switch_interval`` (ADR 0026).

    python benchmarks/serve_throughput.py [--duration 15] [--workers 2] [--repeat 1]
                                          [--switch-interval 5ms]
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from daemon_process import add_switch_interval, pipeline_settings

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


def run_evald(bench_dir: Path, args: argparse.Namespace, workers: int, cpus: str | None) -> dict:
    grpc_port, http_port, admin_port = free_port(), free_port(), free_port()
    config = Path(tempfile.mkdtemp()) / "evald.yaml"
    config.write_text(
        f"receivers: {{otlp: {{grpc: {{endpoint: 127.0.0.1:{grpc_port}}},"
        f" http: {{endpoint: 127.0.0.1:{http_port}}}}}}}\n"
        f"admin: {{endpoint: 127.0.0.1:{admin_port}}}\n"
        f"assembly: {{idle_timeout: 1s}}\n"
        f"{pipeline_settings(workers, args.switch_interval)}"
        f"specs: [{ROOT / 'config' / 'specs' / '*.yaml'}]\n"
    )
    evald = Path(sys.executable).parent / "evald"
    argv = [str(evald), "--log-level", "WARNING", "serve", "--config", str(config)]
    proc = subprocess.Popen(argv if cpus is None else pinned(cpus, argv))
    try:
        url = f"http://127.0.0.1:{admin_port}/readyz"
        wait_for(lambda: _ok(url))
        result = load(bench_dir, grpc_port, proc.pid, args, f"evald-{workers}")
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
    parser.add_argument("--workers", type=int, default=2, help="for the all-workers run")
    parser.add_argument("--repeat", type=int, default=1, help="interleaved rounds; best kept")
    add_switch_interval(parser)
    args = parser.parse_args()
    runs: dict[str, list[dict]] = {"baseline": [], "one": [], "all": [], "one unpinned": []}
    for _ in range(args.repeat):
        runs["baseline"].append(run_baseline(args.bench_dir, args))
        runs["one"].append(run_evald(args.bench_dir, args, 1, "0"))
        runs["all"].append(run_evald(args.bench_dir, args, args.workers, None))
        runs["one unpinned"].append(run_evald(args.bench_dir, args, 1, None))
    baseline, one, every, loose = (
        max(r, key=lambda x: x["acked_spans_per_s"]) for r in runs.values()
    )
    base_rate, one_rate = baseline["acked_spans_per_s"], one["acked_spans_per_s"]
    print(f"baseline decode-only grpcio receiver: {base_rate:,.0f} spans/s{_cpu(baseline)}")
    print(f"evald serve, workers: 1, CPU 0: {one_rate:,.0f} spans/s{_cpu(one)}")
    print(f"evald serve, workers: {args.workers}, unpinned: "
          f"{every['acked_spans_per_s']:,.0f} spans/s{_cpu(every)}")  # fmt: skip
    print(f"evald serve, workers: 1, unpinned: {loose['acked_spans_per_s']:,.0f} spans/s"
          f"{_cpu(loose)}")  # fmt: skip
    for label, result in (("1 worker", one), (f"{args.workers} workers", every)):
        print(
            f"  traces evaluated during the {label} run: {result.get('evaluated_traces', 0):,.0f}"
        )
    print(f"(a) ratio one worker / baseline: {one_rate / base_rate:.3f}")
    per_cpu = [r.get("acked_spans_per_target_cpu_s") for r in (one, baseline, every, loose)]
    if all(per_cpu):  # less sensitive to other load on the receiver's CPU than the rates
        print(f"    ratio per receiver CPU-second: {per_cpu[0] / per_cpu[1]:.3f}")
        print(f"(b) {args.workers} workers, spans per daemon CPU-second / one worker's: "
              f"{per_cpu[2] / per_cpu[0]:.3f}")  # fmt: skip
        print(f"(b') the same / one worker's unpinned: {per_cpu[2] / per_cpu[3]:.3f}"
              f" (one worker unpinned / pinned: {per_cpu[3] / per_cpu[0]:.3f})")  # fmt: skip
        busy = every.get("system_cpu_pct") or 0.0
        print(f"    daemon cores used: {every['target_cpu_pct'] / 100:.2f} "
              f"(machine: {busy / 100:.2f} cores busy in all)")  # fmt: skip
    if args.repeat > 1:
        _per_round(runs)


def _per_round(runs: dict[str, list[dict]]) -> None:
    """Each round's own ratios and their medians. The best of each target (above) may
    come from different rounds; on a machine whose speed changes between minutes, the
    ratios of one round (its runs back to back) are the fairer figures."""
    rounds = list(
        zip(runs["baseline"], runs["one"], runs["all"], runs["one unpinned"], strict=True)
    )
    a = [one["acked_spans_per_s"] / base["acked_spans_per_s"] for base, one, _, _ in rounds]
    _round_line("(a)", a)
    key = "acked_spans_per_target_cpu_s"
    if all(one.get(key) and every.get(key) and loose.get(key) for _, one, every, loose in rounds):
        _round_line("(b)", [every[key] / one[key] for _, one, every, _ in rounds])
        _round_line("(b')", [every[key] / loose[key] for _, _, every, loose in rounds])


def _round_line(label: str, ratios: list[float]) -> None:
    shown = " ".join(f"{ratio:.3f}" for ratio in ratios)
    print(f"per round {label}: {shown}; median {statistics.median(ratios):.3f}")


def _cpu(result: dict) -> str:
    """The receiver's CPU use, spans per CPU-second and peak resident memory (every
    process: front and workers), when loadgen could measure them."""
    if not result.get("target_cpu_pct"):
        return ""
    memory = result.get("target_rss_mb_max")
    return (
        f" (receiver CPU {result['target_cpu_pct']:.0f} %,"
        f" {result['acked_spans_per_target_cpu_s']:,.0f} spans per CPU-second"
        + (f", peak RSS {memory:,.0f} MB)" if memory else ")")
    )


if __name__ == "__main__":
    main()
