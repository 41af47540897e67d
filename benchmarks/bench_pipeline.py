"""Pipeline benchmark: ``python -m benchmarks.bench_pipeline [options]``.

Generates, solves and writes N ``new``-dice 4x4 boards (default 1,000,000, ENABLE2K, the default
chunk size) with the real runner, and prints each figure beside its target and ratio. The runs
alternate, ``--rounds`` times: the kernel alone on the same boards (one core, chunk by chunk,
word ids collected as the kernel benchmarks do, in a fresh process like a worker), the kernel in
``--jobs`` such processes at once (the ceiling of a ``--jobs``-process run on this machine: the
processes share caches and memory bandwidth), the end-to-end run with ``--jobs`` processes, and
(unless ``--skip-single``) with one, whose ratio times that ceiling is the most the
``--jobs``-process run can reach; ratios are per round, their median is printed, so a busy
machine slows both sides of a ratio alike. Also printed: where one process spends a chunk's time (roll,
kernel, word summary, Arrow table, Parquet encode + write + fsync + rename), the output size per
board and the peak memory of the job (PSS summed over the main process and its workers, sampled
every 0.2 s). ``--large N`` adds a run of N boards to show the peak memory does not grow with the
run's size. ``--no-words`` adds, in every round, the end-to-end run on the same boards with
``[boards] words = false`` (scores only, no ``words`` column), printed beside the run with words
(and its per-stage breakdown beside the other).

Targets (issue 12): end-to-end on 2 processes >= 0.8 x (2 x the single-core kernel rate); peak
memory for 1M boards < 600 MB across processes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median
from typing import Annotated, Any, NamedTuple

import typer

from benchmarks._cli import DictionaryOpt, bench_app
from pipeline.config import DEFAULT_CHUNK_SIZE

app = bench_app()


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


class RunFigures(NamedTuple):
    seconds: float
    bytes: int
    peak_total: int  # PSS summed over the run's processes
    peak_single: int  # the largest single RSS


def run_in_child(spec: str) -> None:
    """In a fresh interpreter (so the benchmark's own imports and kernel runs are not counted):
    start the workers with a small warm-up run, then time and sample the real one; print the
    figures as one JSON line."""
    import joblib

    from pipeline.config import load_config
    from pipeline.runner import execute

    args = json.loads(spec)
    count, jobs, out, common = args["count"], args["jobs"], Path(args["out"]), args["common"]
    with joblib.parallel_config(backend="loky", n_jobs=jobs):
        warm = load_config(
            None,
            {
                **common,
                "boards.count": min(count, 4 * jobs * 2000),
                "boards.chunk_size": 2000,
                "run.out": str(out / "warmup"),
            },
        )
        execute(warm)
        shutil.rmtree(out / "warmup", ignore_errors=True)
        cfg = load_config(None, {**common, "boards.count": count, "run.out": str(out / "run")})
        with RssSampler() as rss:
            t0 = time.perf_counter()
            summary = execute(cfg)
            elapsed = time.perf_counter() - t0
    if summary.boards != count:
        raise SystemExit(f"the run wrote {summary.boards} boards, not {count}")
    size = sum(p.stat().st_size for p in (out / "run").glob("part-*.parquet"))
    shutil.rmtree(out, ignore_errors=True)
    sys.stdout.write(json.dumps([elapsed, size, rss.peak_total, rss.peak_single]) + "\n")


def _run(count: int, jobs: int, out: Path, common: dict[str, Any]) -> RunFigures:
    spec = json.dumps({"count": count, "jobs": jobs, "out": str(out), "common": common})
    code = "import sys; from benchmarks.bench_pipeline import run_in_child; run_in_child(sys.argv[1])"
    proc = subprocess.run([sys.executable, "-c", code, spec], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"benchmark run failed:\n{proc.stderr[-2000:]}")
    return RunFigures(*json.loads(proc.stdout.strip().splitlines()[-1]))


def _kernel_rate(count: int, chunk_size: int, common: dict[str, Any]) -> tuple[float, float]:
    """Seconds the kernel alone takes on the run's boards (chunk by chunk, word ids collected),
    and the mean score (a check that the boards are the run's)."""
    import numpy as np

    from pipeline.boards import generator_alphabet, iter_generated
    from pipeline.config import load_config
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


def kernel_in_child(spec: str) -> None:
    """In one of several processes started together: get the kernel and the boards ready, say
    so, wait for a line on stdin, then time the kernel as :func:`_kernel_rate` does; print the
    seconds."""
    args = json.loads(spec)
    count, chunk_size, common = args["count"], args["chunk_size"], args["common"]
    _kernel_rate(min(count, chunk_size), chunk_size, common)  # load the lexicon and the kernel
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    sys.stdin.readline()
    seconds, mean = _kernel_rate(count, chunk_size, common)
    sys.stdout.write(json.dumps([seconds, mean]) + "\n")


def _kernels_at_once(
    count: int, chunk_size: int, common: dict[str, Any], jobs: int
) -> list[tuple[float, float]]:
    """(seconds, mean score) of each of ``jobs`` fresh processes running the kernel alone at
    the same time, each on the same ``count`` boards. With ``jobs`` = 1, the single-core kernel
    rate, measured in a process like the run's workers; with more, the most any
    ``jobs``-process run can reach on this machine, where the processes share caches and memory
    bandwidth."""
    spec = json.dumps({"count": count, "chunk_size": chunk_size, "common": common})
    code = "import sys; from benchmarks import bench_pipeline as b; b.kernel_in_child(sys.argv[1])"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, spec], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        for _ in range(jobs)
    ]
    try:
        for p in procs:
            assert p.stdout is not None
            if p.stdout.readline().strip() != "ready":
                raise SystemExit("a kernel process failed to start")
        for p in procs:
            assert p.stdin is not None
            p.stdin.write("go\n")
            p.stdin.flush()
        outs = [json.loads(p.communicate()[0].strip().splitlines()[-1]) for p in procs]
    finally:
        for p in procs:
            p.kill()
    return [(float(t), float(m)) for t, m in outs]


def _stages(count: int, chunk_size: int, common: dict[str, Any], out: Path) -> dict[str, float]:
    """Seconds one process spends in each stage of a worker's chunk (the steps of
    ``runner.solve_chunk``, timed one by one) over ``count`` boards."""
    import numpy as np

    from pipeline import store
    from pipeline.boards import chunk_plan, generate_chunk, generator_alphabet
    from pipeline.config import load_config
    from pipeline.lexicon import compile_lexicon
    from pipeline.solve import solve_arrays
    from pipeline.solve._summary import summarise_result

    cfg = load_config(None, {**common, "boards.count": count})
    lex = compile_lexicon(cfg.lexicon.path or "", generator_alphabet("new", 4, 4), cfg.rule_set())
    schema = store.board_schema(lex.rules.min_length, words=cfg.boards.words)
    bins = store.length_bins(lex.rules.min_length)
    tally = (int(bins[0]), len(bins))  # as the workers do
    metadata = store.parquet_metadata(cfg.data_dict(), lex.provenance(), lex.rules.to_dict())
    out.mkdir(parents=True, exist_ok=True)
    times = dict.fromkeys(
        ["roll boards", "kernel", "word summary", "Arrow table", "Parquet encode + write + fsync"], 0.0
    )
    for ch in chunk_plan(count, chunk_size):
        t0 = time.perf_counter()
        boards = generate_chunk("new", lex.alphabet, cfg.boards.seed, ch, 4, 4)[0]
        t1 = time.perf_counter()
        res = solve_arrays(boards, 4, 4, lex, collect=cfg.boards.words, bins=tally)
        t2 = time.perf_counter()
        summary = summarise_result(res, lex, *tally, sort=cfg.boards.words)
        t3 = time.perf_counter()
        ids = np.arange(ch.start, ch.start + ch.count, dtype=np.int64)
        table = store.results_table(
            boards, 4, 4, ids, res, lex, source="new", chunk=ch.chunk, schema=schema, summary=summary
        )
        t4 = time.perf_counter()
        store.write_part(out, ch.chunk, table, metadata)
        t5 = time.perf_counter()
        for key, dt in zip(times, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4), strict=True):
            times[key] += dt
    shutil.rmtree(out, ignore_errors=True)
    return times


@dataclass(frozen=True)
class Bench:
    """The benchmark's settings (main's options)."""

    count: int
    jobs: int
    chunk_size: int
    rounds: int
    profile: int
    large: int
    skip_single: bool
    no_words: bool
    dictionary: str

    @property
    def common(self) -> dict[str, Any]:
        """The config every run and kernel measurement shares."""
        return {
            "boards.dice": "new",
            "boards.seed": 1,
            "boards.chunk_size": self.chunk_size,
            "lexicon.path": self.dictionary,
        }

    @property
    def common_bare(self) -> dict[str, Any]:
        """--no-words: the same without word lists."""
        return {**self.common, "boards.words": False}


@dataclass
class Measured:
    """Every figure measured, per round where there are rounds."""

    kernel: list[float] = field(default_factory=list)  # seconds of the kernel alone on 1 core
    together: list[float] = field(default_factory=list)  # boards/s of `jobs` kernel processes at once
    par: list[RunFigures] = field(default_factory=list)  # end to end, `jobs` processes
    one: list[RunFigures] = field(default_factory=list)  # end to end, 1 process
    bare: list[RunFigures] = field(default_factory=list)  # --no-words: the parallel run without word lists
    mean: float = 0.0  # the boards' mean score (from the last round's kernel)
    big: RunFigures | None = None  # --large
    stages: dict[str, float] = field(default_factory=dict)
    bare_stages: dict[str, float] = field(default_factory=dict)


@app.command()
def main(
    count: Annotated[int, typer.Option(help="Boards per run.")] = 1_000_000,
    dictionary: DictionaryOpt = "enable2k",
    jobs: Annotated[int, typer.Option(help="Worker processes for the parallel run.")] = 2,
    chunk_size: Annotated[int, typer.Option(help="Boards per chunk.")] = DEFAULT_CHUNK_SIZE,
    rounds: Annotated[int, typer.Option(help="Alternating rounds (kernel, parallel run, 1 process).")] = 3,
    profile: Annotated[int, typer.Option(help="Boards for the per-stage breakdown (0: skip).")] = 200_000,
    large: Annotated[
        int, typer.Option(help="Also run this many boards to compare peak memory (0: skip).")
    ] = 0,
    skip_single: Annotated[bool, typer.Option(help="Skip the 1-process end-to-end runs.")] = False,
    no_words: Annotated[
        bool,
        typer.Option(
            "--no-words",
            help="Also run end to end without word lists ([boards] words = false), side by side.",
        ),
    ] = False,
    out: Annotated[Path | None, typer.Option(help="Scratch folder (default: a temp dir).")] = None,
) -> None:
    """Benchmark generate + solve + write end to end against the kernel alone."""
    bench = Bench(count, jobs, chunk_size, rounds, profile, large, skip_single, no_words, dictionary)
    scratch = Path(out) if out else Path(tempfile.mkdtemp(prefix="bench-pipeline-"))
    load_before = os.getloadavg()
    typer.echo(
        f"{count:,} new-dice 4x4 boards, {dictionary}, chunks of {chunk_size:,}; {rounds} alternating "
        f"rounds; {os.cpu_count()} CPUs, load average {load_before[0]:.2f} at start"
    )
    try:
        m = _measure(bench, scratch)
    finally:
        if out is None:
            shutil.rmtree(scratch, ignore_errors=True)
    rows = [*_rate_rows(bench, m), *_size_and_memory_rows(bench, m), *_stage_rows(bench, m)]
    load_after = os.getloadavg()
    rows.append(("load average (1 min)", f"{load_before[0]:12.2f} before, {load_after[0]:.2f} after"))
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        typer.echo(f"{k:<{width}}  {v}")


def _measure(bench: Bench, scratch: Path) -> Measured:
    """The alternating rounds (each printed as it ends), then the large run and the per-stage
    breakdowns."""
    m = Measured()
    for r in range(bench.rounds):
        _round(bench, m, scratch)
        typer.echo(f"  round {r + 1}: {_round_line(bench, m)}")
    count, jobs, common = bench.count, bench.jobs, bench.common
    m.big = _run(bench.large, jobs, scratch / "large", common) if bench.large else None
    if bench.profile:
        n = min(bench.profile, count)
        m.stages = _stages(n, bench.chunk_size, common, scratch / "stages")
        if bench.no_words:
            m.bare_stages = _stages(n, bench.chunk_size, bench.common_bare, scratch / "stages")
    return m


def _round(bench: Bench, m: Measured, scratch: Path) -> None:
    """One round: the kernel alone, `jobs` kernels at once, then the end-to-end runs."""
    count, jobs, common = bench.count, bench.jobs, bench.common
    ((t_kernel, m.mean),) = _kernels_at_once(count, bench.chunk_size, common, 1)
    m.kernel.append(t_kernel)
    m.together.append(sum(count / t for t, _ in _kernels_at_once(count, bench.chunk_size, common, jobs)))
    m.par.append(_run(count, jobs, scratch / "par", common))
    if bench.no_words:
        m.bare.append(_run(count, jobs, scratch / "bare", bench.common_bare))
    if not bench.skip_single:
        m.one.append(_run(count, 1, scratch / "one", common))


def _round_line(bench: Bench, m: Measured) -> str:
    count, jobs = bench.count, bench.jobs
    single = f", 1 process {count / m.one[-1].seconds:,.0f}/s" if m.one else ""
    nw = f", {jobs} processes no words {count / m.bare[-1].seconds:,.0f}/s" if m.bare else ""
    return (
        f"kernel {count / m.kernel[-1]:,.0f}/s, {jobs} kernels at once {m.together[-1]:,.0f}/s, "
        f"{jobs} processes {count / m.par[-1].seconds:,.0f}/s{nw}{single}"
    )


def _rate_rows(bench: Bench, m: Measured) -> list[tuple[str, str]]:
    """Rates: the kernel alone, the kernels at once (the ceiling), each end-to-end run and its
    ratio to the kernel (medians over the rounds)."""
    count, jobs = bench.count, bench.jobs
    rows: list[tuple[str, str]] = []
    k_med = median(count / t for t in m.kernel)
    rows.append(("kernel only, 1 core", f"{k_med:12,.0f} boards/s   (median; mean score {m.mean:.2f})"))
    ceiling = median(b / (jobs * count / t_k) for t_k, b in zip(m.kernel, m.together, strict=True))
    rows.append(
        (
            f"kernel only, {jobs} processes at once",
            f"{median(m.together):12,.0f} boards/s   (median) = {ceiling:.2f} x ({jobs} x kernel): the most "
            f"a {jobs}-process run can reach on this machine",
        )
    )
    ratio = median(t_k / (jobs * f.seconds) for t_k, f in zip(m.kernel, m.par, strict=True))
    rows.append(
        (
            f"end-to-end, {jobs} processes",
            f"{median(count / f.seconds for f in m.par):12,.0f} boards/s   (median)",
        )
    )
    rows.append(
        (
            f"  / ({jobs} x kernel)",
            f"{ratio:12.2f}        target >= 0.80: {ratio / 0.8:.2f} of target; "
            f"{ratio / ceiling:.2f} of the {jobs}-kernel ceiling",
        )
    )
    if m.bare:
        ratio_bare = median(t_k / (jobs * f.seconds) for t_k, f in zip(m.kernel, m.bare, strict=True))
        rows.append(
            (
                f"end-to-end, {jobs} processes, no words",
                f"{median(count / f.seconds for f in m.bare):12,.0f} boards/s   "
                "(median; [boards] words = false)",
            )
        )
        rows.append(
            (
                f"  / ({jobs} x kernel)",
                f"{ratio_bare:12.2f}        target >= 0.80: {ratio_bare / 0.8:.2f} of target; "
                f"{ratio_bare / ceiling:.2f} of the {jobs}-kernel ceiling",
            )
        )
    if m.one:
        r1 = median(t_k / f.seconds for t_k, f in zip(m.kernel, m.one, strict=True))
        rows.append(
            (
                "end-to-end, 1 process",
                f"{median(count / f.seconds for f in m.one):12,.0f} boards/s   ({r1:.2f} x kernel, median)",
            )
        )
        speedup = median(a.seconds / b.seconds for a, b in zip(m.one, m.par, strict=True))
        rows.append((f"  speed-up 1 -> {jobs} processes", f"{speedup:12.2f} x"))
        # jobs processes do at most jobs times one process's work, and at most the ceiling's share
        rows.append(
            (
                f"  most {jobs} processes can reach",
                f"{r1 * ceiling:12.2f} x ({jobs} x kernel) = "
                f"1 process's {r1:.2f} x the {ceiling:.2f} ceiling "
                f"(each process doing a chunk's work beside the kernel, with nothing lost to scaling)",
            )
        )
    return rows


def _size_and_memory_rows(bench: Bench, m: Measured) -> list[tuple[str, str]]:
    """Output bytes per board and the peak memory of each kind of run."""
    count, jobs, par, bare, one = bench.count, bench.jobs, m.par, m.bare, m.one
    rows: list[tuple[str, str]] = []
    rows.append(("output", f"{par[0].bytes / count:12.1f} bytes/board ({par[0].bytes / 1e6:,.0f} MB)"))
    if bare:
        size = bare[0].bytes
        rows.append(("output, no words", f"{size / count:12.1f} bytes/board ({size / 1e6:,.0f} MB)"))
    peak = max(f.peak_total for f in par)
    rows.append(
        (
            f"peak memory, {count:,} boards",
            f"{peak / 1e6:12,.0f} MB   target < 600: {peak / 600e6:.2f} of the limit (PSS, all {jobs + 1}+ "
            f"processes; largest process {max(f.peak_single for f in par) / 1e6:,.0f} MB RSS)",
        )
    )
    if m.big is not None:
        rows.append(
            (
                f"peak memory, {bench.large:,} boards",
                f"{m.big.peak_total / 1e6:12,.0f} MB   (PSS; {bench.large / m.big.seconds:,.0f} boards/s)",
            )
        )
    if bare:
        rows.append(("peak memory, no words", f"{max(f.peak_total for f in bare) / 1e6:12,.0f} MB   (PSS)"))
    if one:
        rows.append(("peak memory, 1 process", f"{max(f.peak_total for f in one) / 1e6:12,.0f} MB   (PSS)"))
    return rows


def _stage_rows(bench: Bench, m: Measured) -> list[tuple[str, str]]:
    """Where one process spends a chunk's time, with words and (--no-words) without."""
    rows: list[tuple[str, str]] = []
    for label, times in (("", m.stages), (", no words", m.bare_stages)):
        if not times:
            continue
        total = sum(times.values())
        n = min(bench.profile, bench.count)
        rows.append(
            (
                f"one process, per stage{label} ({n:,} boards)",
                f"{total:12.2f} s    ({n / total:,.0f} boards/s)",
            )
        )
        for name, sec in times.items():
            rows.append((f"  {name}", f"{sec:12.2f} s    {100 * sec / total:5.1f} %"))
    return rows


if __name__ == "__main__":
    app()
