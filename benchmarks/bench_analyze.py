"""What analysing a run costs beside making it: ``make bench-analyze``.

For each size (100,000 and 1,000,000 ``new``-dice boards with word lists, 10,000,000 without;
ENABLE2K, the default config) it runs ``boggle run`` and then ``boggle analyze`` as a user
would, each in its own process, ``--repeat`` times (run, analyse, run, analyse...), and prints,
side by side: the run's CPU (the process and its workers) and peak memory (the sum of the
tree's resident sets, sampled), the analysis's CPU and peak resident set (medians), the median
of the pairs' CPU ratios and each of them, and the analysis's peak against the smallest run's. Then the
cost of many small runs in one report (``--many``: 20, 60 and 200 runs of 200 boards), which
must grow linearly with the runs.

Targets (issue 51): analyze peak RSS at 1M boards with word lists <= 500 MB and <= 1.3x its
peak at 100k; analyze CPU <= 0.25x the run's CPU; 200 small runs analysed in < 30 s.

The figures are whole processes measured one after the other on the same machine; the CPU
ratios hold on a busy machine better than the wall times do.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from benchmarks._cli import DictionaryOpt, bench_app

app = bench_app()
REPO = Path(__file__).resolve().parents[2]
MB = 1 << 20


@dataclass(frozen=True)
class Cost:
    cpu_s: float  # user + system CPU of the process and every descendant it waited for
    wall_s: float
    peak_mb: float  # the largest sum of the tree's resident sets seen (sampled every 0.1 s)


def measure(argv: list[str]) -> Cost:
    """Run ``argv`` (a boggle command) to completion and measure it."""
    import psutil

    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    peak = 0
    while True:
        try:
            root = psutil.Process(proc.pid)
            tree = [root, *root.children(recursive=True)]
            peak = max(peak, sum(p.memory_info().rss for p in tree if p.is_running()))
        except psutil.Error:
            pass
        try:
            _, status, usage = os.wait4(proc.pid, os.WNOHANG)
        except ChildProcessError:
            break
        if _ != 0:
            proc.returncode = os.waitstatus_to_exitcode(status)
            break
        time.sleep(0.1)
    wall = time.perf_counter() - start
    err = proc.stderr.read() if proc.stderr is not None else ""
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}): {err.strip()[-500:]}")
    # the whole tree's peak is at least the root's own (the samples may miss a short spike)
    peak = max(peak, usage.ru_maxrss * 1024)
    return Cost(usage.ru_utime + usage.ru_stime, wall, peak / MB)


def boggle(*args: str) -> list[str]:
    return [sys.executable, "-m", "pipeline.cli", *args]


@dataclass(frozen=True)
class Row:
    label: str
    boards: int
    runs: list[Cost]  # one a pair, in order
    analyses: list[Cost]  # the analysis of each run, made right after it

    @property
    def run(self) -> Cost:
        return _median(self.runs)

    @property
    def analyze(self) -> Cost:
        return _median(self.analyses)

    @property
    def ratios(self) -> list[float]:
        """Each pair's analysis CPU over its run's: alternated, so a machine that slows down
        for a while slows both sides of the pairs it touches."""
        return sorted(a.cpu_s / r.cpu_s for r, a in zip(self.runs, self.analyses, strict=True))


def _median(costs: list[Cost]) -> Cost:
    return sorted(costs, key=lambda c: c.cpu_s)[len(costs) // 2]


def _size_row(scratch: Path, count: int, words: bool, dictionary: str, jobs: int, repeat: int) -> Row:
    config = str(REPO / "configs" / "default.toml")
    extra = [] if words else ["--set", "boards.words=false"]
    runs, analyses = [], []
    # run, analyse, run again...: a shared machine's noise is about +-15% of one process's CPU
    # and drifts over minutes, so each ratio is taken from a run and the analysis right after it
    for i in range(repeat):
        out = scratch / f"run-{count}-{'words' if words else 'scores'}-{i}"
        run = ["run", config, "--count", str(count), "--out", str(out), "--dictionary", dictionary]
        runs.append(measure(boggle(*run, "--n-jobs", str(jobs), "--quiet", *extra)))
        analyses.append(
            measure(boggle("analyze", str(out), "--out", str(scratch / f"report-{out.name}"), "--quiet"))
        )
        shutil.rmtree(out, ignore_errors=True)
    label = f"{count:,} boards, {'word lists' if words else 'no word lists'}"
    return Row(label, count, runs, analyses)


def _many(scratch: Path, n_runs: list[int], dictionary: str) -> list[tuple[int, Cost]]:
    from pipeline.runner import run_from_file

    most = max(n_runs)
    dirs = []
    for i in range(most):
        out = scratch / "many" / f"r{i:03d}"
        overrides = {"run.out": str(out), "run.n_jobs": 1, "boards.count": 200, "boards.chunk_size": 100,
                     "boards.seed": i, "lexicon.path": dictionary}  # fmt: skip
        run_from_file(REPO / "configs" / "smoke.toml", overrides)
        dirs.append(str(out))
    costs = []
    for n in n_runs:
        cost = measure(boggle("analyze", *dirs[:n], "--out", str(scratch / f"report-many-{n}"), "--quiet"))
        costs.append((n, cost))
    return costs


@app.command()
def main(
    dictionary: DictionaryOpt = "enable2k",
    sizes: Annotated[
        str, typer.Option(help="Run sizes with word lists, comma-separated.")
    ] = "100000,1000000",
    scores_only: Annotated[
        int, typer.Option(help="A run without word lists of this size (0: none).")
    ] = 10_000_000,
    many: Annotated[
        str, typer.Option(help="Numbers of 200-board runs in one report (empty: none).")
    ] = "20,60,200",
    jobs: Annotated[int, typer.Option(help="Worker processes of the runs.")] = 2,
    repeat: Annotated[
        int, typer.Option(help="Runs of each size, each analysed right after it (medians shown).")
    ] = 3,
    scratch: Annotated[
        Path | None, typer.Option(help="Folder for the runs (default: a temporary one).")
    ] = None,
) -> None:
    """Print what ``boggle analyze`` costs beside ``boggle run`` at several sizes."""
    repeat = max(1, repeat)
    base = Path(tempfile.mkdtemp(prefix="bench-analyze-", dir=scratch))
    try:
        rows = [_size_row(base, int(n), True, dictionary, jobs, repeat) for n in sizes.split(",") if n]
        if scores_only:
            rows.append(_size_row(base, scores_only, False, dictionary, jobs, repeat))
        first = rows[0].analyze.peak_mb if rows else 0.0
        head = (
            f"{'run':<34} {'run CPU s':>10} {'run peak MB':>12} {'analyze CPU s':>14} {'ratio':>6} "
            f"{'µs/board':>9} {'analyze MB':>11} {'x first':>8}  ratio of each pair"
        )
        typer.echo(head)
        for r in rows:
            # medians of the pairs; the ratio column is the median of the pairs' ratios
            ratios = r.ratios
            typer.echo(
                f"{r.label:<34} {r.run.cpu_s:>10.1f} {r.run.peak_mb:>12,.0f} {r.analyze.cpu_s:>14.2f} "
                f"{ratios[len(ratios) // 2]:>6.3f} {r.analyze.cpu_s / r.boards * 1e6:>9.2f} "
                f"{r.analyze.peak_mb:>11,.0f} {r.analyze.peak_mb / first:>8.2f}  "
                f"{', '.join(f'{x:.3f}' for x in ratios)} ({repeat} runs, each analysed after it)"
            )
        typer.echo(
            "targets: ratio <= 0.25; analyze MB <= 500 at 1M boards with word lists and <= 1.3 x first"
        )
        counts = [int(n) for n in many.split(",") if n]
        if counts:
            typer.echo(
                f"\n{'runs in one report':<20} {'CPU s':>8} {'wall s':>8} {'CPU s a run':>12} {'peak MB':>8}"
            )
            for n, c in _many(base, counts, dictionary):
                typer.echo(
                    f"{n:<20} {c.cpu_s:>8.1f} {c.wall_s:>8.1f} {c.cpu_s / n:>12.3f} {c.peak_mb:>8,.0f}"
                )
            typer.echo("target: 200 runs in < 30 s, the CPU a run flat")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    app()
