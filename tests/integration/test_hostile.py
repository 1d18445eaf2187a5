"""A seeded sample of every class of hostile input against a running ``evald serve``:
no crash, hang or 500, each answered as OTLP says, and the daemon still serves
(issue 14, acceptance). ``benchmarks/hostile.py`` is the 10 000-input run."""

from __future__ import annotations

import random
import re
import time
from pathlib import Path

import pytest
from support.daemon_harness import golden_files
from support.hostile import KINDS, Ports, fresh_trace, probes, run
from support.serve_process import EVALD, Served, start_serve

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

SEED = 20261124
LIMIT = 256 * 1024  # max_request_size: small, so the oversize classes are quick
CONFIG = f"""
receivers:
  otlp:
    grpc: {{endpoint: 127.0.0.1:0}}
    http: {{endpoint: 127.0.0.1:0}}
    max_request_size: {LIMIT}
    max_in_flight_bytes: 4MiB
    connections: {{idle_timeout: 300ms, read_timeout: 300ms}}
admin: {{endpoint: 127.0.0.1:0, idle_timeout: 300ms}}
assembly: {{idle_timeout: 100ms}}
"""


def rss_kib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+)", status)[1])  # type: ignore[index]


def evaluated(served: Served) -> float:
    _, text = served.get("/metrics")
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("evald_traces_evaluated_total{")
    )


def test_hostile_inputs_of_every_class_are_answered_and_the_daemon_still_serves(
    tmp_path: Path, serve_with: list[Served]
) -> None:
    (tmp_path / "evald.yaml").write_text(CONFIG)
    served = start_serve([str(EVALD), "serve", "--config", str(tmp_path / "evald.yaml")])
    serve_with.append(served)
    ports = Ports(served.grpc_port, served.http_port, served.admin_port, LIMIT)
    rss_before = rss_kib(served.proc.pid)

    tally = run(probes(random.Random(SEED), 20 * len(KINDS), LIMIT), ports)

    assert not tally.wrong, "\n".join(tally.wrong[:20])
    answers = {answer for _, answer in tally.answers}
    assert not answers & {"500", "INTERNAL", "UNKNOWN"}
    assert {kind for kind, _ in tally.answers} == set(KINDS)  # every class was sent
    assert served.proc.poll() is None
    assert served.get("/readyz")[0] == 200
    before = evaluated(served)
    for line in fresh_trace(golden_files()[0]):
        assert served.post(line, "application/json") == 200
    deadline = time.monotonic() + 20
    while evaluated(served) <= before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert evaluated(served) > before  # a valid export afterwards is evaluated
    growth_mib = (rss_kib(served.proc.pid) - rss_before) / 1024
    assert growth_mib < 4 + 150, growth_mib  # in-flight budget + decode and allocator slack
