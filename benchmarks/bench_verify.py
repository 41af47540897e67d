"""What readers pay for verifying a run: ``read_run`` (and ``run_relation`` + a scan) with and
without ``verify`` on one finished run, in alternating rounds so the ratios hold on a busy
machine. Makes the run first when RUN_DIR holds none (a generate run of ``--count`` boards).

    python -m benchmarks.bench_verify --dictionary enable2k --count 1000000
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    import pipeline
    from pipeline import store
    from pipeline.config import load_config
    from pipeline.runner import run_job

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dictionary", required=True)
    parser.add_argument("--count", type=int, default=1_000_000)
    parser.add_argument("--run-dir", type=Path, default=Path("runs/bench-verify"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--n-jobs", type=int, default=2)
    args = parser.parse_args(argv)
    cfg = load_config(
        None,
        {
            "boards.count": args.count,
            "boards.seed": 1,
            "boards.chunk_size": 100_000,
            "lexicon.path": args.dictionary,
            "run.out": str(args.run_dir),
            "run.n_jobs": args.n_jobs,
        },
    )
    t0 = time.perf_counter()
    summary = run_job(cfg)
    sys.stdout.write(f"run: {summary.status}, {summary.boards:,} boards ({time.perf_counter() - t0:.1f} s)\n")
    parts = store.open_run(args.run_dir, verify=False).parts
    size = sum(p.stat().st_size for p in parts)
    sys.stdout.write(f"{len(parts)} parts, {size / 1e6:,.0f} MB\n")

    def scan(verify: bool) -> int:
        rel = pipeline.run_relation(args.run_dir, verify=verify)
        return int(rel.aggregate("sum(score)").fetchall()[0][0])

    cases = {
        "read_run (all columns)": lambda v: pipeline.read_run(args.run_dir, verify=v).num_rows,
        "read_run (score only)": lambda v: pipeline.read_run(args.run_dir, ["score"], verify=v).num_rows,
        "run_relation sum(score)": scan,
    }
    times: dict[tuple[str, bool], list[float]] = {(name, v): [] for name in cases for v in (True, False)}
    for _ in range(args.rounds):
        for name, fn in cases.items():
            for verify in (False, True):
                t = time.perf_counter()
                fn(verify)
                times[(name, verify)].append(time.perf_counter() - t)
    sys.stdout.write(f"median of {args.rounds} alternating rounds\n")
    sys.stdout.write(
        f"{'reader':26s} {'verify=False':>13s} {'verify=True':>12s} {'extra':>8s} {'ratio':>6s}\n"
    )
    for name in cases:
        off = statistics.median(times[(name, False)])
        on = statistics.median(times[(name, True)])
        sys.stdout.write(f"{name:26s} {off:12.2f}s {on:11.2f}s {on - off:7.2f}s {on / off:6.2f}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
