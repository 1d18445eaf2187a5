"""What forwarding spans to worker processes costs, per MB of OTLP (ADR 0018's figures).

Measured on ``shared/bench`` requests (512 spans each), CPU time of this process
(and of the reading process for the IPC figure), fastest of ``--repeat`` passes:

- full decode: ``decode_protobuf`` with the daemon's attribute selector (what one
  worker pays per request in any design);
- decode keeping one shard of two: what each worker would pay when every worker
  receives and decodes every request (``keep``, as replay workers do);
- wire split: ``collector.receivers.wire_split.split_traces`` into 2 shards (what
  the front pays in the forwarding design; attributes stay undecoded bytes);
- IPC: the bytes written to a Unix socket and read by another process, per MB,
  both sides' CPU.

    python benchmarks/shard_forwarding.py [--bench-dir ../shared/bench] [--repeat 5]
"""

from __future__ import annotations

import argparse
import multiprocessing
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path

from collector.decode import decode_protobuf
from collector.normalize import ATTRIBUTE_SELECTOR
from collector.receivers.wire_split import shard_of, split_traces

ROOT = Path(__file__).resolve().parent.parent
_CHUNK = 1 << 20


def cpu_per_mb(payloads: list[bytes], work: Callable[[bytes], object], repeat: int) -> float:
    """CPU milliseconds per MB of payload, fastest pass."""
    megabytes = sum(len(p) for p in payloads) / 1e6
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        for payload in payloads:
            work(payload)
        best = min(best, time.process_time() - start)
    return best * 1000 / megabytes


def _reader(sock: socket.socket, total: int, out: object) -> None:
    start = time.process_time()
    left = total
    buffer = bytearray(_CHUNK)
    while left > 0:
        got = sock.recv_into(buffer, min(_CHUNK, left))
        if not got:
            break
        left -= got
    out.value = time.process_time() - start  # type: ignore[attr-defined]


def ipc_per_mb(payloads: list[bytes], repeat: int) -> tuple[float, float]:
    """(sender, reader) CPU milliseconds per MB over a Unix socket pair."""
    context = multiprocessing.get_context("spawn")
    best = (float("inf"), float("inf"))
    total = sum(len(p) for p in payloads) * 4
    for _ in range(repeat):
        ours, theirs = socket.socketpair()
        reader_cpu = context.Value("d", 0.0)
        reader = context.Process(target=_reader, args=(theirs, total, reader_cpu))
        reader.start()
        theirs.close()
        start = time.process_time()
        for _ in range(4):
            for payload in payloads:
                ours.sendall(len(payload).to_bytes(4, "little"))
                ours.sendall(payload)
        sent = time.process_time() - start
        reader.join()
        ours.close()
        megabytes = total / 1e6
        pair = (sent * 1000 / megabytes, reader_cpu.value * 1000 / megabytes)
        best = min(best, pair, key=sum)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bench-dir", type=Path, default=ROOT.parent / "shared" / "bench")
    parser.add_argument("--requests", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    sys.path.insert(0, str(args.bench_dir))
    from make_traces import encoded_requests  # type: ignore[import-not-found]

    payloads: list[bytes] = encoded_requests(args.requests, 512)
    size = sum(len(p) for p in payloads) / len(payloads)
    print(f"{len(payloads)} requests of 512 spans, {size / 1e3:.0f} kB each")
    decode = cpu_per_mb(payloads, lambda p: decode_protobuf(p, ATTRIBUTE_SELECTOR), args.repeat)
    half = cpu_per_mb(
        payloads,
        lambda p: decode_protobuf(p, ATTRIBUTE_SELECTOR, keep=lambda t: shard_of(t, 2) == 0),
        args.repeat,
    )
    split = cpu_per_mb(payloads, lambda p: split_traces(p, 2), args.repeat)
    sender, reader = ipc_per_mb(payloads, args.repeat)
    print(f"full decode (one worker's share in any design):  {decode:7.2f} ms CPU per MB")
    print(f"decode keeping 1 shard of 2 (every worker decodes): {half:7.2f} ms CPU per MB")
    print(f"wire split into 2 shards (front):                 {split:7.2f} ms CPU per MB")
    print(f"IPC over a Unix socket: send {sender:.2f} + read {reader:.2f} ms CPU per MB")


if __name__ == "__main__":
    main()
