"""Pipeline benchmark: ``python -m pipeline.bench_pipeline [options]``.

Generates, solves and writes N ``new``-dice 4x4 boards (default 1,000,000, ENABLE2K) with the
real runner, and prints side by side: the kernel-only rate on the same boards (one core, chunk
by chunk, word ids collected as the pipeline does), the end-to-end rate with 1 and with
``--jobs`` processes, their ratios, the output size per board and the peak memory of the job
(main process + workers, sampled every 0.1 s). ``--large N`` adds a second run of N boards to
show the peak memory does not grow with the run's size.

Targets (issue 3): end-to-end on 2 cores >= 60% of 2 x the single-core kernel rate; 2 processes
>= 1.7 x one; peak RSS < 1 GB and flat between 1M and 5M boards.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Annotated, Any

import typer

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


class RssSampler:
    """Peak memory of this process and its descendants, sampled in a thread: the sum of their
    proportional set sizes (PSS: shared pages such as numba's and Arrow's libraries are split
    between the processes that map them, not counted once per process) and the largest
    single resident set (RSS)."""

    def __init__(self, interval: float = 0.2):
        import psutil

        self._psutil = psutil
        self.interval = interval
        self.peak_total = 0
        self.peak_single = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        me = self._psutil.Process()
        procs = [me, *me.children(recursive=True)]
        pss, rss = [], []
        for p in procs:
            try:
                info = p.memory_full_info()
            except (self._psutil.NoSuchProcess, self._psutil.AccessDenied):
                continue
            pss.append(getattr(info, "pss", info.rss))
            rss.append(info.rss)
        self.peak_total = max(self.peak_total, sum(pss))
        self.peak_single = max(self.peak_single, max(rss, default=0))

    def _run(self) -> None:
        while not self._stop.is_set():
            self._sample()
            self._stop.wait(self.interval)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()


def _run(count: int, jobs: int, out: Path, common: dict[str, Any]) -> tuple[float, int, RssSampler]:
    import joblib

    from pipeline.config import load_config
    from pipeline.runner import execute

    shutil.rmtree(out, ignore_errors=True)
    cfg = load_config(None, {**common, "boards.count": count, "run.out": str(out)})
    with RssSampler() as rss, joblib.parallel_config(backend="loky", n_jobs=jobs):
        t0 = time.perf_counter()
        summary = execute(cfg)
        elapsed = time.perf_counter() - t0
    size = sum(p.stat().st_size for p in out.glob("part-*.parquet"))
    assert summary.boards == count
    return elapsed, size, rss


def _kernel_rate(count: int, chunk_size: int, common: dict[str, Any]) -> tuple[float, float]:
    """Seconds the kernel alone takes on the run's boards (chunk by chunk, word ids collected),
    and the mean score (a check that the boards are the run's)."""
    import numpy as np

    from pipeline.config import load_config
    from pipeline.dice import generator_alphabet
    from pipeline.generate import iter_generated
    from pipeline.lexicon import compile_lexicon
    from pipeline.solve import solve_arrays

    cfg = load_config(None, {**common, "boards.count": count})
    alphabet = generator_alphabet("new", 4, 4)
    lex = compile_lexicon(cfg.lexicon.path or "", alphabet, cfg.rule_set())
    solve_arrays(np.zeros((1, 16), np.int8), 4, 4, lex)
    total = 0.0
    score = 0
    for _, boards in iter_generated("new", count, cfg.boards.seed, 4, 4, chunk_size, alphabet):
        t0 = time.perf_counter()
        res = solve_arrays(boards, 4, 4, lex, collect=True)
        total += time.perf_counter() - t0
        score += int(res.score.sum(dtype=np.int64))
    return total, score / count


@app.command()
def main(
    count: Annotated[int, typer.Option(help="Boards per run.")] = 1_000_000,
    dictionary: Annotated[str, typer.Option(help="Word list.")] = "../shared/data/enable2k.txt",
    jobs: Annotated[int, typer.Option(help="Worker processes for the parallel run.")] = 2,
    chunk_size: Annotated[int, typer.Option(help="Boards per chunk.")] = 25_000,
    large: Annotated[int, typer.Option(help="Also run this many boards to compare peak RSS (0: skip).")] = 0,
    skip_single: Annotated[bool, typer.Option(help="Skip the 1-process end-to-end run.")] = False,
    out: Annotated[Path | None, typer.Option(help="Scratch folder (default: a temp dir).")] = None,
) -> None:
    """Benchmark generate + solve + write end to end against the kernel alone."""
    scratch = Path(out) if out else Path(tempfile.mkdtemp(prefix="bench-pipeline-"))
    common = {
        "boards.dice": "new", "boards.seed": 1, "boards.chunk_size": chunk_size,
        "lexicon.path": dictionary,
    }  # fmt: skip
    load_before = os.getloadavg()
    typer.echo(f"{count:,} new-dice 4x4 boards, {dictionary}, chunks of {chunk_size:,}; "
               f"{os.cpu_count()} CPUs, load average {load_before[0]:.2f} at start")  # fmt: skip
    try:
        warm = _run(
            min(count, 2 * jobs * 2000), jobs, scratch / "warmup", {**common, "boards.chunk_size": 2000}
        )
        typer.echo(f"warm-up (starts {jobs} workers, fills caches): {warm[0]:.1f} s, not counted")
        t_par, size, rss = _run(count, jobs, scratch / "par", common)
        rows: list[tuple[str, str]] = []
        rss_large = None
        if large:
            rss_large = _run(large, jobs, scratch / "large", common)
            shutil.rmtree(scratch / "large", ignore_errors=True)
        t_one = None
        if not skip_single:
            t_one, _, rss_one = _run(count, 1, scratch / "one", common)
        t_kernel, mean = _kernel_rate(count, chunk_size, common)
    finally:
        if out is None:
            shutil.rmtree(scratch, ignore_errors=True)

    kernel = count / t_kernel
    par = count / t_par
    rows.append(
        ("kernel only, 1 core", f"{kernel:12,.0f} boards/s   ({t_kernel:.1f} s; mean score {mean:.2f})")
    )
    if t_one is not None:
        one = count / t_one
        rows.append(
            ("end-to-end, 1 process", f"{one:12,.0f} boards/s   ({t_one:.1f} s; {one / kernel:.2f} x kernel)")
        )
    rows.append((f"end-to-end, {jobs} processes", f"{par:12,.0f} boards/s   ({t_par:.1f} s)"))
    rows.append((f"  / ({jobs} x kernel)", f"{par / (jobs * kernel):12.2f}        (target >= 0.60)"))
    if t_one is not None:
        rows.append((f"  speed-up 1 -> {jobs} processes", f"{t_one / t_par:12.2f} x      (target >= 1.7)"))
    rows.append(("output", f"{size / count:12.1f} bytes/board ({size / 1e6:,.0f} MB)"))
    rows.append((
        f"peak memory, {count:,} boards",
        f"{rss.peak_total / 1e6:12,.0f} MB (PSS, all processes; target < 1,000), "
        f"largest process {rss.peak_single / 1e6:,.0f} MB RSS",
    ))  # fmt: skip
    if rss_large is not None:
        r = rss_large[2]
        rows.append((
            f"peak memory, {large:,} boards",
            f"{r.peak_total / 1e6:12,.0f} MB (PSS, all processes), largest process "
            f"{r.peak_single / 1e6:,.0f} MB RSS "
            f"({large / rss_large[0]:,.0f} boards/s)",
        ))  # fmt: skip
    if t_one is not None:
        rows.append(("peak memory, 1 process", f"{rss_one.peak_total / 1e6:12,.0f} MB (PSS)"))
    load_after = os.getloadavg()
    rows.append(("load average (1 min)", f"{load_before[0]:12.2f} before, {load_after[0]:.2f} after"))
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        typer.echo(f"{k:<{width}}  {v}")


if __name__ == "__main__":
    app()
