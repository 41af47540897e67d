"""What the commands show: text and JSON lines, progress bars and live tables (rich, on stderr).

One function (or context manager) per command's display, so the CLI stays a list of calls and a
new command adds its own here. Nothing here imports typer: lines are returned for the CLI to
print; live displays write to stderr themselves and are stopped on leaving their ``with`` block.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from rich.console import Console

if TYPE_CHECKING:  # the results each display shows (imported by the commands that make them)
    from pipeline.analyze import AnalysisResult
    from pipeline.optimize import OptimizeProgress, OptimizeResult
    from pipeline.prove import ProveProgress, ProveSummary
    from pipeline.prove.status import ProofStatus
    from pipeline.runner import Progress as RunProgress
    from pipeline.runner import RunSummary
    from pipeline.solve import BoardResult

# ------------------------------------------------------------------ solve


def solve_json(res: BoardResult, rules_name: str) -> str:
    """One board's result as one JSON line (``boggle solve --json``)."""
    from pipeline.boards import format_compact

    return json.dumps(
        {
            "board": format_compact(res.board),
            "rows": res.board.rows,
            "cols": res.board.cols,
            "rules": rules_name,
            "score": res.score,
            "n_words": res.n_words,
            "longest_word": res.longest,
            "dead_cells": res.dead_cells,
            "words": res.words,
        },
        ensure_ascii=False,
    )


def solve_text(res: BoardResult) -> list[str]:
    """One board's result as text lines: header, grid, a blank line, ``word points`` lines, the
    totals and a closing blank line."""
    from pipeline.boards import format_compact, format_grid

    lines = [
        f"Board {format_compact(res.board)} ({res.board.rows}x{res.board.cols})",
        format_grid(res.board),
        "",
    ]
    lines += [f"{word} {pts}" for word, pts in zip(res.words, res.points, strict=True)]
    return [*lines, f"Found {res.n_words} words", f"Total score: {res.score}", ""]


LOG_WIDTH = 200  # columns of a progress line written to a file or pipe (a log)


def stderr_console() -> Console:
    """A console on stderr for progress: a terminal's width, or, written to a log (not a
    terminal) without ``$COLUMNS``, :data:`LOG_WIDTH` columns, so a line is not cut at rich's
    default of 80."""
    import os
    import sys

    if sys.stderr.isatty() or os.environ.get("COLUMNS"):
        return Console(stderr=True)
    return Console(stderr=True, width=LOG_WIDTH)


# ------------------------------------------------------------------ analyze


def analyze_progress(quiet: bool) -> Callable[[str], None]:
    """The ``analyze`` stage messages, dimmed on stderr (nothing when quiet)."""
    console = Console(stderr=True)

    def progress(message: str) -> None:
        if not quiet:
            console.print(f"[dim]analyze:[/dim] {message}")

    return progress


def analyze_outcome(result: AnalysisResult, run_dirs: list[str]) -> dict[str, Any]:
    """What ``boggle analyze --summary-json`` records of a finished analysis: each run (as
    given, its label, run_id and boards), the boards in all, the report and every file written."""
    from pipeline.analyze import PLOT_DIR
    from pipeline.store import run_id_of

    runs = []
    for given, run in zip(run_dirs, result.runs, strict=False):
        identity = run.manifest.get("identity")
        counts = run.manifest.get("counts") or {}
        runs.append({
            "run_dir": str(given), "label": run.label,
            "run_id": run_id_of(identity) if isinstance(identity, dict) else None,
            "boards": counts.get("boards"),
        })  # fmt: skip
    boards = [r["boards"] for r in runs]
    files = sorted({str(p.resolve()) for paths in result.table_files.values() for p in paths})
    plot_dir = result.out_dir / PLOT_DIR
    files += [str((plot_dir / p.file).resolve()) for p in result.plots]
    return {
        "status": "complete", "runs": runs, "report": str(result.report.resolve()),
        "out_dir": str(result.out_dir.resolve()), "files": files,
        "boards": sum(boards) if all(isinstance(b, int) for b in boards) else None,
    }  # fmt: skip


# ------------------------------------------------------------------ run


@contextmanager
def run_progress() -> Iterator[Callable[[RunProgress], None]]:
    """A progress bar on stderr (boards done, boards/s, ETA) and the callback that feeds it; the
    bar appears with the first report (not for a run that has nothing to do)."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(
        TextColumn("[bold]solving[/bold]"), BarColumn(),
        TextColumn("{task.fields[done]} boards"), TextColumn("{task.fields[rate]}"),
        TextColumn("{task.fields[eta]}"), TimeElapsedColumn(),
        console=stderr_console(), transient=False,
    )  # fmt: skip
    task = bar.add_task("run", total=None, done="0", rate="", eta="")
    t0 = time.perf_counter()
    reused_at_start: list[int] = []

    def update(p: RunProgress) -> None:
        if not reused_at_start:
            reused_at_start.append(p.boards_reused)
            bar.start()
        elapsed = time.perf_counter() - t0
        # reused chunks arrive at once: the rate counts only boards solved in this process
        fresh = p.boards_done - max(p.boards_reused, reused_at_start[0])
        rate = fresh / elapsed if elapsed > 0 and fresh > 0 else 0.0
        total = f"/{p.boards_total:,}" if p.boards_total is not None else ""
        eta = ""
        if p.boards_total is not None and rate > 0:
            eta = f"ETA {max(0.0, (p.boards_total - p.boards_done) / rate):.0f} s"
        bar.update(
            task, completed=p.boards_done, total=p.boards_total, done=f"{p.boards_done:,}{total}",
            rate=f"{rate:,.0f} boards/s" if rate else "", eta=eta,
        )  # fmt: skip

    try:
        yield update
    finally:
        if bar.live.is_started:
            bar.stop()


def run_summary(summary: RunSummary) -> str:
    """The line ``boggle run`` prints on stdout when it ends."""
    if summary.status == "already complete":
        return f"{summary.run_dir}: already complete ({summary.boards:,} boards); nothing to do"
    reused = f", {plural(summary.chunks_reused, 'chunk')} reused" if summary.chunks_reused else ""
    return (
        f"{summary.run_dir}: {summary.boards:,} boards in {plural(summary.chunks, 'part')}{reused}; "
        f"{summary.boards_solved:,} solved in {summary.elapsed_s:.1f} s "
        f"({summary.boards_per_s:,.0f} boards/s)"
    )


def plural(n: int, noun: str) -> str:
    """``1 part``, ``2 parts``, ``1,000 parts``."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def run_outcome(summary: RunSummary) -> dict[str, Any]:
    """The run's figures for ``--summary-json``."""
    from pipeline.store import run_id_of

    manifest = getattr(summary, "manifest", None) or {}
    identity = manifest.get("identity")
    return {
        "status": summary.status, "run_dir": str(summary.run_dir), "boards": summary.boards,
        "rejected": summary.rejected, "input_rows": summary.input_rows, "chunks": summary.chunks,
        "chunks_total": summary.chunks, "chunks_done": summary.chunks,
        "chunks_reused": summary.chunks_reused, "boards_solved": summary.boards_solved,
        "run_id": run_id_of(identity) if isinstance(identity, dict) else None,
    }  # fmt: skip


def run_progress_outcome(p: RunProgress) -> dict[str, Any]:
    """What a progress report says for ``--summary-json`` (what a run stopped early had done)."""
    return {
        "chunks_total": p.chunks_total, "chunks": p.chunks_total, "chunks_done": p.chunks_done,
        "chunks_reused": p.chunks_reused, "run_id": p.run_id,
    }  # fmt: skip


def run_rejected(summary: RunSummary) -> str:
    """The stderr line for a run that rejected input rows."""
    return f"{summary.rejected:,} of {summary.input_rows:,} input rows rejected: see {summary.rejects_file}"


# ------------------------------------------------------------------ optimize


@contextmanager
def optimize_progress(restarts: int) -> Iterator[Callable[[OptimizeProgress], None]]:
    """A live table on stderr (best score so far, one line per restart) and the callback that
    feeds it; it appears with the first report."""
    from rich.live import Live
    from rich.table import Table

    state: dict[int, OptimizeProgress] = {}
    best: list[OptimizeProgress | None] = [None]

    def render() -> Table:
        b = best[0]
        title = f"best so far: {b.best_score} {b.best_board}" if b is not None else "starting..."
        done = b.restarts_done if b is not None else 0
        table = Table(title=f"{title}   ({done}/{restarts} restarts done)", title_justify="left")
        for col in ("restart", "iteration", "best", "seconds", "boards/s", ""):
            table.add_column(col, justify="right")
        for r in sorted(state):
            p = state[r]
            rate = p.evaluations / p.elapsed if p.elapsed > 0 else 0.0
            table.add_row(
                str(r),
                f"{p.iteration:,}",
                str(p.restart_best),
                f"{p.elapsed:.1f}",
                f"{rate:,.0f}",
                "done" if p.event == "done" else "",
            )
        return table

    live = Live(render(), console=stderr_console(), refresh_per_second=4, transient=False)

    def update(p: OptimizeProgress) -> None:
        if not live.is_started:
            live.start()
        if state.get(p.restart) is None or state[p.restart].event != "done":
            state[p.restart] = p
        best[0] = p
        live.update(render())

    try:
        yield update
    finally:
        if live.is_started:
            live.stop()
            if not live.console.is_terminal:
                live.console.line()  # a redirected Live leaves its last line open


def optimize_restarts(res: OptimizeResult) -> list[str]:
    """One stderr line per restart: its best, iterations, seconds and why it stopped."""
    lines = []
    for r in res.restarts:
        reached = f", target after {r.target_s:.1f} s" if r.target_s is not None else ""
        lines.append(
            f"restart {r.restart}: best {r.best_score} in {r.iterations:,} iterations, "
            f"{r.seconds:.1f} s ({r.stopped_by}{reached})"
        )
    return lines


def optimize_boards(res: OptimizeResult) -> list[str]:
    """The best distinct boards (stdout, tab-separated) and where they were written."""
    from pipeline.boards import format_compact

    lines = [
        f"{b.score}\t{format_compact(b.board)}\t{b.n_words} words\trestart {b.restart}" for b in res.boards
    ]
    return [*lines, f"wrote {res.out}"]


def optimize_best(res: OptimizeResult) -> str:
    """``BEST <board> <score>``: always the last line of ``boggle optimize``."""
    from pipeline.boards import format_compact

    return f"BEST {format_compact(res.best.board)} {res.best.score}"


def optimize_interrupted(out: str | None) -> list[str]:
    """What an interrupted search found so far (from ``OUT/_interrupted.json``), for stderr."""
    import json
    from pathlib import Path

    from pipeline.optimize.output import INTERRUPTED

    if out is None:
        return []
    path = Path(out) / INTERRUPTED
    try:
        boards = json.loads(path.read_text(encoding="utf-8"))["boards"]
    except (OSError, ValueError, KeyError):
        return []
    if not boards:
        return [f"unfinished: no board found yet ({path})"]
    best = boards[0]
    return [f"unfinished: best so far {best['board']} {best['score']} ({len(boards)} boards in {path})"]


# ------------------------------------------------------------------ prove


@contextmanager
def prove_progress() -> Iterator[Callable[[ProveProgress], None]]:
    """A progress bar on stderr (classes done, boards found, best so far, ETA) and the callback
    that feeds it."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    bar = Progress(
        TextColumn("[bold]proving[/bold]"), BarColumn(), TextColumn("{task.fields[classes]}"),
        TextColumn("{task.fields[found]}"), TextColumn("{task.fields[best]}"),
        TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
        # chunks of a proof finish a minute or more apart: the ETA averages over ten minutes
        console=stderr_console(), transient=False, speed_estimate_period=600,
    )  # fmt: skip
    task = bar.add_task("prove", total=None, classes="", found="", best="")

    def update(p: ProveProgress) -> None:
        best = f"best {p.best_score} {p.best_board}" if p.best_score is not None else ""
        bar.update(
            task, completed=p.classes_done, total=p.classes_total, best=best,
            classes=f"{p.classes_done:,}/{p.classes_total:,} classes", found=f"{p.boards_found:,} hits",
        )  # fmt: skip
        if not bar.live.is_started:
            bar.start()

    try:
        yield update
    finally:
        if bar.live.is_started:  # stopping a bar never shown prints an empty line
            bar.stop()


def prove_summary(res: ProveSummary, hits: int | None = None) -> str:
    """The stderr line after a proof: classes, eliminations, boards scored, time, and the
    progress bar's ``hits`` (placements >= the threshold, symmetric copies counted apart) beside
    the distinct boards they are, which the last line counts."""
    distinct = f"{plural(len(res.boards), 'board')} >= {res.threshold}"
    found = f"{plural(hits, 'hit')} = {distinct}" if hits is not None else distinct
    return (
        f"{res.status}: {res.classes_done:,} classes ({res.eliminated:,} eliminated by the bound), "
        f"{res.boards_scored:,} boards scored, {found} (symmetric copies merged), "
        f"{res.wall_s:.1f} s wall, {res.cpu_s:.1f} s CPU in workers{_proof_cpu(res)}"
    )


def _proof_cpu(res: ProveSummary) -> str:
    """The CPU and wall time of a proof written over several sessions, from what its parts
    record (parts older than a record leave it out: they are counted)."""
    if res.parts_reused == 0 and res.parts_recorded == res.parts_wall == res.parts_total:
        return ""  # in memory, or all of it is this session's figure
    cpu, wall = f"{res.cpu_s_recorded / 3600:.2f} CPU-h", f"{res.wall_s_recorded / 3600:.2f} h wall"
    if res.parts_recorded == res.parts_wall == res.parts_total:
        return f"; {cpu} and {wall} over every session"

    def over(figure: str, parts: int) -> str:
        if parts == res.parts_total:
            return f"{figure} over every session"
        return f"{figure} over the {parts:,} of {res.parts_total:,} parts that record it"

    return f"; {over(cpu, res.parts_recorded)}; {over(wall, res.parts_wall)}"


def prove_boards(res: ProveSummary, shown: int = 20) -> list[str]:
    """The best boards found (score, board), what a sample certifies, and where it went."""
    lines = [f"{b.score}\t{b.board}" for b in res.boards[:shown]]
    if res.status == "sample":
        lines.append(f"sample of {res.classes_done:,} of {res.classes_total:,} classes: nothing certified")
    lines.append(f"wrote {res.out}")
    return lines


def prove_best(res: ProveSummary) -> str:
    """The last line: ``BEST <board> <score> (<n> boards >= T, <k> classes)``."""
    best = res.best
    shown = f"{best.board} {best.score}" if best is not None else "- -"
    # plain numbers: scripts parse this line
    boards, classes = len(res.boards), res.classes_done
    return (
        f"BEST {shown} ({boards} board{'' if boards == 1 else 's'} >= {res.threshold}, "
        f"{classes} class{'' if classes == 1 else 'es'})"
    )


def prove_status(st: ProofStatus, shown: int = 10) -> list[str]:
    """``boggle prove --status``: the proof in a few lines (see :mod:`pipeline.prove.status`)."""
    cfg = st.config
    state = "finished proof" if st.finished else "unfinished proof"
    lines = [
        f"{st.out}: {state}, {cfg['dictionary']} {cfg['shape']}, T={cfg['threshold']}, classes {st.spec!r}",
        f"parts: {st.parts_verified:,} of {st.parts_total:,} verified ({st.classes_done:,} of "
        f"{st.classes_total:,} classes), {len(st.distrusted):,} not",
    ]
    for name, why in st.distrusted[:3]:
        lines.append(
            f"  {name}: {why}; " + ("the proof refuses it" if st.finished else "the proof recomputes it")
        )
    if len(st.distrusted) > 3:
        lines.append(f"  and {len(st.distrusted) - 3:,} more")
    best = f"; best board scored {st.best_scored[0]} {st.best_scored[1]}" if st.best_scored else ""
    lines.append(
        f"{'' if st.finished else 'so far: '}{st.eliminated:,} classes eliminated by the bound, "
        f"{st.boards_scored:,} boards scored, {plural(len(st.boards), 'board')} >= {cfg['threshold']}{best}"
    )
    lines += [f"{score}\t{board}" for board, score in st.boards[:shown]]

    def over(figure: str, parts: int) -> str:
        return figure + ("" if parts == st.parts_verified else f" over the {parts:,} parts that record it")

    cpu, wall = f"{st.cpu_s / 3600:.2f} CPU-h", f"{st.wall_s / 3600:.2f} h wall"
    lines.append(f"spent: {over(cpu, st.parts_cpu)}; {over(wall, st.parts_wall)}")
    if not st.finished:
        classes_left = st.classes_total - st.classes_done
        if st.left is None:
            lines.append(f"left: {classes_left:,} classes; too few parts record their CPU to estimate it")
        else:
            lf = st.left
            lines.append(
                f"left: {classes_left:,} classes, about {lf.cpu_s / 3600:.2f} CPU-h (95% interval "
                f"{lf.low_s / 3600:.2f}-{lf.high_s / 3600:.2f}), about {lf.cpu_s / 3600 / st.workers:.1f} h "
                f"at -j {st.workers}; from {lf.parts_sampled:,} parts in {lf.strata} ranges of class ids"
            )
    lines += [f"note: {n}" for n in st.notes]
    return lines
