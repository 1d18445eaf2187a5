"""RSS per span held in assembly, against the spans' size on the wire, in one run.

Input: ``shared/bench/make_traces.py --pb`` traces (10 spans each, GenAI semconv,
JSON arguments and results). The spans are decoded by the daemon's decoder with the
daemon's attribute selector and added, request by request, to a ``TraceAssembler``
built from the default config, as ``evald serve`` does; nothing is released (the
clock never moves, the limits are raised to hold them all). Resident memory is read
(``/proc/self/statm``, after a full collection) before the requests are decoded and
after the last is added, in a fresh process; the wire bytes are the requests' size.

Prints bytes of RSS per held span, wire bytes per span and their ratio (issue 16:
at most 1.5 KB per span with 100 000 spans held).

    python benchmarks/assembly_memory.py [--spans 100000] [--bench-dir ../shared/bench]
"""

from __future__ import annotations

import argparse
import gc
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = os.sysconf("SC_PAGE_SIZE")


def rss() -> int:
    gc.collect()
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * PAGE


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--spans", type=int, default=100_000)
    parser.add_argument("--bench-dir", type=Path, default=ROOT.parent / "shared" / "bench")
    args = parser.parse_args()
    traces = args.spans // 10
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "traces.pb"
        script = str(args.bench_dir / "make_traces.py")
        argv = [sys.executable, script, "--traces", str(traces), "--pb", str(path)]
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        # Imports before the first reading: their memory is not the spans'.
        from collector.assembly.traces import TraceAssembler
        from collector.config.settings import Config
        from collector.core.clock import ManualClock
        from collector.decode import decode_protobuf
        from collector.offline.readers import read_payloads
        from collector.processing.wiring import decoder_selector
        from collector.telemetry.registry import Telemetry

        config = Config()
        limits = config.assembly.model_copy(
            update={
                "max_spans": args.spans * 2,
                "max_traces": traces * 2,
                "max_spans_per_trace": 1_000,
            }
        )
        assembler = TraceAssembler(limits, ManualClock(), Telemetry())
        selector = decoder_selector(config)
        payloads = [payload.data for payload in read_payloads(path)]
        wire = sum(len(data) for data in payloads)
        before = rss() - wire  # the payloads are freed one by one below
        held = 0
        while payloads:
            spans = decode_protobuf(payloads.pop(), selector).spans
            result = assembler.add(spans, lambda trace: True)
            assert result is not None and not result.rejected, result
            held += len(spans)
        after = rss()
    per_span = (after - before) / held
    assert assembler.in_flight_spans == held
    print(f"{held:,} spans held in {assembler.in_flight_traces:,} traces")
    print(f"  RSS per held span   {per_span:8.0f} bytes")
    print(f"  wire per span       {wire / held:8.0f} bytes")
    print(f"  RSS / wire          {per_span / (wire / held):8.2f}")


if __name__ == "__main__":
    main()
