"""Every benchmark in ``benchmarks/``, one after the other, with short settings (``make bench``).

Each benchmark runs in its own process with the arguments below (a few seconds
of load instead of the defaults' longer runs; pass ``--full`` for the defaults)
and prints its own ratios; a summary of exit codes and durations follows. A
script added to ``benchmarks/`` runs too, with its defaults, until it is given
short arguments here. Exits 1 if any benchmark failed.

    python benchmarks/run_all.py [--only normalize_throughput ...] [--full]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCH_DIR = HERE.parent.parent / "shared" / "bench"
# Not benchmarks: this runner, serve's baseline, the evald process the hardening ones watch.
HELPERS = {"run_all.py", "baseline_receiver.py", "daemon_process.py"}
SHORT: dict[str, list[str]] = {
    "normalize_throughput.py": ["--traces", "1000", "--repeat", "5"],
    "replay_throughput.py": ["--traces", "2000"],
    "replay_stages.py": ["--traces", "2000", "--repeat", "2"],
    "serve_throughput.py": ["--duration", "5", "--warmup", "2"],
    "judge_shedding.py": ["--duration", "5", "--warmup", "2", "--rounds", "1",
                          "--judge-delay", "2"],
    "hostile.py": ["--inputs", "1000"],
    "grpc_server_overhead.py": ["--duration", "4", "--warmup", "1", "--repeat", "1"],
    "assembly_memory.py": ["--spans", "20000"],
    "completion_latency.py": ["--probes", "30"],
    "cardinality.py": ["--combinations", "5000", "--seconds", "2", "--scrapes", "3"],
    "soak.py": ["--minutes", "1", "--reload-every", "20", "--report-every", "15"],
}  # fmt: skip
MEMORY_TRACES = (5_000, 500)  # replay_memory.py: large and small file, 10x apart


def benchmarks(only: list[str]) -> list[Path]:
    found = sorted(path for path in HERE.glob("*.py") if path.name not in HELPERS)
    if not only:
        return found
    wanted = {name.removesuffix(".py") for name in only}
    unknown = wanted - {path.stem for path in found}
    if unknown:
        raise SystemExit(f"no such benchmark: {', '.join(sorted(unknown))}")
    return [path for path in found if path.stem in wanted]


def arguments(script: Path, scratch: Path, bench_dir: Path, full: bool) -> list[str]:
    if script.name == "replay_memory.py" and not full:
        large, small = (make_traces(bench_dir, n, scratch) for n in MEMORY_TRACES)
        return ["--large", str(large), "--small", str(small), "--bench-dir", str(bench_dir)]
    return ["--bench-dir", str(bench_dir)] + ([] if full else SHORT.get(script.name, []))


def make_traces(bench_dir: Path, traces: int, scratch: Path) -> Path:
    path = scratch / f"traces-{traces}.pb"
    if not path.exists():
        argv = [str(bench_dir / "make_traces.py"), "--traces", str(traces), "--pb", str(path)]
        subprocess.run([sys.executable, *argv], check=True, stdout=subprocess.DEVNULL)
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", nargs="+", default=[], metavar="NAME", help="run only these")
    parser.add_argument("--full", action="store_true", help="each benchmark's own defaults")
    parser.add_argument("--bench-dir", type=Path, default=BENCH_DIR)
    args = parser.parse_args()
    summary: list[tuple[str, int, float]] = []
    with tempfile.TemporaryDirectory() as scratch:
        for script in benchmarks(args.only):
            argv = arguments(script, Path(scratch), args.bench_dir, args.full)
            print(f"\n=== {script.stem} {' '.join(argv)}", flush=True)
            started = time.perf_counter()
            code = subprocess.run([sys.executable, str(script), *argv], check=False).returncode
            summary.append((script.stem, code, time.perf_counter() - started))
    print("\n=== summary")
    for name, code, seconds in summary:
        print(f"  {name:<24} {'ok' if code == 0 else f'FAILED ({code})':<12} {seconds:6.1f} s")
    return 0 if all(code == 0 for _, code, _ in summary) else 1


if __name__ == "__main__":
    sys.exit(main())
