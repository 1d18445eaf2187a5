"""Hostile input against a running ``evald serve`` (issue 14's acceptance run).

Sends ``--inputs`` (default 12 000) seeded probes over every class of
``tests/support/hostile.py`` (malformed protobuf and OTLP/JSON, gzip bombs, oversize
bodies, wrong content types, paths and methods, slow and half-open connections)
from ``--threads`` clients, over OTLP/HTTP, OTLP/gRPC and the admin port, while a
thread samples the daemon's RSS. Then checks that the daemon is alive and ready,
``/metrics`` answers 200, and a valid export sent afterwards is evaluated. Prints
the answers per class and the figures; exits 1 if any answer was wrong (a 500, a
hang, an answer OTLP does not allow for that input) or a check failed.

    python benchmarks/hostile.py [--inputs 12000] [--seed 14] [--threads 8]
"""

from __future__ import annotations

import argparse
import random
import sys
import threading
import time

from daemon_process import ROOT, Evald, wait_until

sys.path.insert(0, str(ROOT / "tests"))  # the shared hostile traffic (tests/support)

from support.daemon_harness import golden_files
from support.hostile import KINDS, Ports, fresh_trace, probes, run

MAX_REQUEST = 4 * 1024 * 1024
IN_FLIGHT = 64 * 1024 * 1024
CONFIG = f"""
receivers:
  otlp:
    max_request_size: {MAX_REQUEST}
    max_in_flight_bytes: {IN_FLIGHT}
    connections: {{idle_timeout: 1s, read_timeout: 1s}}
admin: {{idle_timeout: 1s}}
assembly: {{idle_timeout: 200ms}}
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", type=int, default=12_000)
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--bench-dir", help="unused (make bench passes it to every script)")
    args = parser.parse_args()
    with Evald(CONFIG) as evald:
        start = evald.stats()
        peak = [start.rss_mib]
        done = threading.Event()
        threading.Thread(target=_sample, args=(evald, peak, done), daemon=True).start()
        ports = Ports(evald.grpc_port, evald.http_port, evald.admin_port, MAX_REQUEST)
        began = time.monotonic()
        tally = run(probes(random.Random(args.seed), args.inputs, MAX_REQUEST), ports, args.threads)
        took = time.monotonic() - began
        done.set()
        end = evald.stats()
        checks = _after(evald)
        _report(tally, took, (start, end, peak[0]), checks)
        bound = start.rss_mib + IN_FLIGHT / 2**20 + 150
        checks["rss within start + in-flight budget + 150 MiB"] = peak[0] < bound
        print(f"rss bound {bound:.0f} MiB: {'ok' if peak[0] < bound else 'EXCEEDED'}")
        crashes = _unexpected(evald.log)
    failed = tally.wrong or not all(checks.values()) or tally.count < args.inputs
    for line in tally.wrong[:30]:
        print("WRONG", line)
    if crashes:
        print("daemon log of the unexpected failures:", *crashes[:200], sep="\n", end="")
    return 1 if failed else 0


def _unexpected(log: list[str]) -> list[str]:
    """The daemon's log lines from each "failed unexpectedly" on, to its traceback's end."""
    kept: list[str] = []
    inside = False
    for line in log:
        if "failed unexpectedly" in line:
            inside = True
        elif inside and not line.startswith((" ", "Traceback", "\t")) and kept[-1][:1] != " ":
            inside = False
        if inside:
            kept.append(line)
    return kept


def _sample(evald: Evald, peak: list[float], done: threading.Event) -> None:
    while not done.wait(0.2):
        if evald.alive:
            peak[0] = max(peak[0], evald.stats().rss_mib)


def _after(evald: Evald) -> dict[str, bool]:
    checks = {"alive": evald.alive, "ready": evald.get("/readyz")[0] == 200}
    status, body = evald.get("/metrics")
    checks["metrics 200"] = status == 200 and b"evald_build_info" in body
    before = evald.metric("evald_traces_evaluated_total")
    lines = fresh_trace(golden_files()[0])
    checks["valid export accepted"] = all(_post(evald, line) == 200 for line in lines)
    checks["valid export evaluated"] = wait_until(
        lambda: evald.metric("evald_traces_evaluated_total") > before, timeout=30
    )
    return checks


def _post(evald: Evald, body: bytes) -> int:
    import urllib.request

    request = urllib.request.Request(
        f"http://127.0.0.1:{evald.http_port}/v1/traces",
        data=body,
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return int(response.status)


def _report(tally, took, rss, checks) -> None:  # type: ignore[no-untyped-def]
    start, end, peak = rss
    print(f"hostile inputs: {tally.count} in {took:.1f}s over {len(KINDS)} classes")
    for kind, answers in sorted(tally.by_kind().items()):
        shown = ", ".join(f"{answer} x{n}" for answer, n in answers.most_common())
        print(f"  {kind:22} {shown}")
    all_answers = {answer for _, answer in tally.answers}
    fives = sum(n for (_, a), n in tally.answers.items() if a in ("500", "INTERNAL", "UNKNOWN"))
    print(f"wrong answers {len(tally.wrong)}, 500/INTERNAL {fives}, slowest {tally.slowest_s:.2f}s")
    print(f"answers seen: {sorted(all_answers)}")
    print(f"rss {start.rss_mib:.0f} -> peak {peak:.0f} -> {end.rss_mib:.0f} MiB, "
          f"fds {start.fds} -> {end.fds}, threads {start.threads} -> {end.threads}")  # fmt: skip
    for name, ok in checks.items():
        print(f"  {name}: {'ok' if ok else 'FAILED'}")


if __name__ == "__main__":
    sys.exit(main())
