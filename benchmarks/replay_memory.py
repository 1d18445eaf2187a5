"""Peak RSS of ``evald replay`` on a 1 GB trace file versus a 10x smaller one.

Constant memory in the number of traces means the two peaks are about equal:
the ratio large/small is the figure to look at. Each replay runs in a fresh
process that reports its own peak resident set size (``ru_maxrss``), with the
JUnit and JSON reports and the results file enabled (everything a CI run keeps).

    python benchmarks/replay_memory.py [--large t100k.pb] [--small t10k.pb]

Without files it generates them with ``shared/bench/make_traces.py --pb``
(100 000 and 10 000 traces, about 1.03 GB and 103 MB; several minutes).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def make_file(bench_dir: Path, traces: int, directory: Path) -> Path:
    path = directory / f"traces-{traces}.pb"
    subprocess.run([sys.executable, str(bench_dir / "make_traces.py"), "--traces", str(traces),
                    "--pb", str(path)], check=True, stdout=subprocess.DEVNULL)  # fmt: skip
    return path


def child(path: Path, scratch: Path) -> None:
    """Replay ``path`` in this process and print the peak RSS and the traces replayed."""
    from collector.cli.command import main as evald

    started = time.perf_counter()
    code = evald([
        "--log-level", "WARNING", "replay", str(path),
        "--spec", str(ROOT / "config" / "specs"), "--report", "junit",
        "--report-out", str(scratch / "junit.xml"), "--results-out", str(scratch / "r.jsonl"),
    ])  # fmt: skip
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    seconds = time.perf_counter() - started
    print(json.dumps({"exit": code, "peak_rss_mib": peak_kib / 1024, "seconds": seconds}))


def measure(path: Path) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as scratch:
        out = subprocess.run(
            [sys.executable, __file__, "--child", str(path), "--scratch", scratch],
            check=True, capture_output=True, text=True,
        )  # fmt: skip
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--large", type=Path)
    parser.add_argument("--small", type=Path)
    parser.add_argument("--bench-dir", type=Path, default=ROOT.parent / "shared" / "bench")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--scratch", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.scratch)
        return
    with tempfile.TemporaryDirectory() as directory:
        small = args.small or make_file(args.bench_dir, 10_000, Path(directory))
        large = args.large or make_file(args.bench_dir, 100_000, Path(directory))
        figures = {path: measure(path) for path in (small, large)}
        sizes = {path: path.stat().st_size / 1e6 for path in (small, large)}
    for path, figure in figures.items():
        size = sizes[path]
        print(f"{path.name}: {size:,.0f} MB, peak RSS {figure['peak_rss_mib']:.0f} MiB, "
              f"{figure['seconds']:.0f} s, exit {figure['exit']:.0f}")  # fmt: skip
    ratio = figures[large]["peak_rss_mib"] / figures[small]["peak_rss_mib"]
    print(f"peak RSS large / small: {ratio:.2f} (1.00 = constant memory)")


if __name__ == "__main__":
    main()
