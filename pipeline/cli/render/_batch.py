"""What the batch commands show: ``analyze`` stage messages and outcome, ``select``, the ``run``
progress bar, summary and rejects line, ``dice show`` and ``what-if``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from rich.console import Console

from pipeline.cli.render._log import (
    LogStyle,
    RecentRate,
    StageLog,
    log_progress,
    plural,
    stderr_bar,
    stopped_after,
)

if TYPE_CHECKING:  # the results each display shows (imported by the commands that make them)
    from pipeline.analyze import AnalysisResult, SelectResult
    from pipeline.boards import DiceSet
    from pipeline.design import WhatIfResult
    from pipeline.runner import Progress as RunProgress
    from pipeline.runner import RunSummary
    from pipeline.stats import Interval


# ------------------------------------------------------------------ analyze


@contextmanager
def analyze_progress(quiet: bool, style: LogStyle | None = None) -> Iterator[Callable[[str], None]]:
    """The ``analyze`` stage messages on stderr (nothing when quiet): dimmed on a terminal; in a
    log (or as JSON), timestamped, repeated every ``style.interval`` while a stage lasts."""
    style = style or LogStyle()
    if quiet:
        yield lambda _message: None
        return
    if style.plain():
        log = StageLog("analyze", "stages", style)
        try:
            yield log.stage
        except BaseException:
            log.close("stopped")
            raise
        log.close("finished")
        return
    console = Console(stderr=True)
    yield lambda message: console.print(f"[dim]analyze:[/dim] {message}")


def analyze_outcome(result: AnalysisResult, run_dirs: list[str]) -> dict[str, Any]:
    """What ``boggle analyze --summary-json`` records of a finished analysis: each run (as
    given, its label, run_id and boards), the boards in all, the report and every file written."""
    from pipeline.analyze import PLOT_DIR
    from pipeline.store import run_id_of

    runs = []
    for given, run in zip(run_dirs, result.runs, strict=False):
        identity = run.manifest.get("identity")
        counts = run.manifest.get("counts") or {}
        runs.append(
            {
                "run_dir": str(given),
                "label": run.label,
                "run_id": run_id_of(identity) if isinstance(identity, dict) else None,
                "boards": counts.get("boards"),
            }
        )
    boards = [r["boards"] for r in runs]
    files = sorted({str(p.resolve()) for paths in result.table_files.values() for p in paths})
    plot_dir = result.out_dir / PLOT_DIR
    files += [str((plot_dir / p.file).resolve()) for p in result.plots]
    return {
        "status": "complete",
        "runs": runs,
        "report": str(result.report.resolve()),
        "out_dir": str(result.out_dir.resolve()),
        "files": files,
        "boards": sum(boards) if all(isinstance(b, int) for b in boards) else None,
    }


# ------------------------------------------------------------------ select


def _share(x: float) -> str:
    """A share as a percentage with two decimals, four below 0.1% (so a rare band's upper bound
    does not print as 0.00%)."""
    return f"{x:.4%}" if 0 < x < 0.001 else f"{x:.2%}"


def _share_and_yield(k: int, n: int, iv: Interval, per: int) -> str:
    if n == 0:
        return f"{k:,} of 0 boards"
    return (
        f"{k:,} of {n:,} boards ({_share(iv.estimate)}, 95% CI {_share(iv.low)}-{_share(iv.high)}); a run of "
        f"{per:,} boards yields about {iv.estimate * per:,.0f} ({iv.low * per:,.0f}-{iv.high * per:,.0f})"
    )


def select_lines(res: SelectResult) -> list[str]:
    """What ``boggle select`` prints: per run, the boards left after each filter in the order
    applied, then the last line, all filters, with the 95% interval on the share and the yield
    of a run of ``res.per`` boards (and, for several bands, how many of them each band holds);
    then the file written."""
    lines = []
    bands = {b.name: b for b in res.filters.bands}
    for run in res.runs:
        lines.append(f"{run.label}: {plural(run.boards, 'board')}")
        for step in run.steps:
            share = f" ({_share(step.share.estimate)})" if run.boards else ""
            lines.append(f"  {step.label}: {step.kept:,}{share}")
        last = "all filters" if run.steps else "no filters"
        lines.append(f"  {last}: {_share_and_yield(run.selected, run.boards, run.share, res.per)}")
        if len(run.bands) > 1:
            for bc in run.bands:
                text = bands[bc.band].text()
                band = bc.band if bc.band == f"words {text}" else f"{bc.band} ({text} words)"
                lines.append(f"    {band}: {_share_and_yield(bc.selected, run.boards, bc.share, res.per)}")
    cut = f" (the first {res.written:,} of {res.selected:,}: --limit)" if res.written < res.selected else ""
    lines.append(f"pool: {plural(res.written, 'board')}{cut} written to {res.out}")
    return lines


def select_outcome(res: SelectResult, run_dirs: list[str]) -> dict[str, Any]:
    """What ``boggle select --summary-json`` records: the pool file and size, the filters, and
    per run (and band) the qualifying boards with the share's 95% interval."""

    def share(k: int, iv: Interval) -> dict[str, Any]:
        nan = iv.estimate != iv.estimate
        return {
            "selected": k,
            "share": None if nan else iv.estimate,
            "share_low": None if nan else iv.low,
            "share_high": None if nan else iv.high,
        }

    runs = []
    for given, run in zip(run_dirs, res.runs, strict=False):
        runs.append(
            {
                "run_dir": str(given),
                "label": run.label,
                "run_id": run.run_id,
                "boards": run.boards,
                **share(run.selected, run.share),
                "bands": [{"band": b.band, **share(b.selected, b.share)} for b in run.bands],
                # the boards left after each filter, in the order applied (the last: every filter)
                "steps": [{"filter": s.key, "label": s.label, **share(s.kept, s.share)} for s in run.steps],
            }
        )
    return {
        "status": "complete",
        "runs": runs,
        "boards": res.written,
        "selected": res.selected,
        "out": str(res.out.resolve()),
        "filters": res.filters.describe(),
    }


# ------------------------------------------------------------------ run


@contextmanager
def run_progress(style: LogStyle | None = None) -> Iterator[Callable[[RunProgress], None]]:
    """A progress bar on stderr (boards done, boards/s, ETA) and the callback that feeds it; the
    bar appears with the first report (not for a run that has nothing to do). In a log, or as
    JSON: a :class:`ProgressLog`'s lines instead. The rate is the runner's (boards solved over
    the seconds of solving, as the summary line gives it); the ETA follows the last minute's."""
    style = style or LogStyle()
    if style.plain():
        with log_progress("run", "boards", style) as log:

            def report(p: RunProgress) -> None:
                # reused chunks arrive at once: the rate counts only boards solved in this process
                solve_s = getattr(p, "solve_s", None) or None  # 0: nothing solved yet
                log.update(
                    p.boards_done,
                    p.boards_total,
                    base=p.boards_reused,
                    work_s=solve_s,
                    rejected=p.rejected or None,
                )

            yield report
        return
    bar = stderr_bar("solving", "{task.fields[done]} boards", "{task.fields[rate]}", "{task.fields[eta]}")
    task = bar.add_task("run", total=None, done="0", rate="", eta="")
    t0 = time.perf_counter()
    reused_at_start: list[int] = []
    recent = RecentRate()

    def update(p: RunProgress) -> None:
        if not reused_at_start:
            reused_at_start.append(p.boards_reused)
            bar.start()
        now = time.perf_counter()
        elapsed = getattr(p, "solve_s", None) or now - t0
        # reused chunks arrive at once: the rate counts only boards solved in this process
        fresh = p.boards_done - max(p.boards_reused, reused_at_start[0])
        recent.add(now, fresh)
        rate = fresh / elapsed if elapsed > 0 and fresh > 0 else 0.0
        pace = recent.rate() or rate
        total = f"/{p.boards_total:,}" if p.boards_total is not None else ""
        eta = ""
        if p.boards_total is not None and pace > 0:
            eta = f"ETA {max(0.0, (p.boards_total - p.boards_done) / pace):.0f} s"
        bar.update(
            task,
            completed=p.boards_done,
            total=p.boards_total,
            done=f"{p.boards_done:,}{total}",
            rate=f"{rate:,.0f} boards/s" if rate else "",
            eta=eta,
        )

    with stopped_after(bar):
        yield update


def run_summary(summary: RunSummary) -> str:
    """The line ``boggle run`` prints on stdout when it ends."""
    from pipeline.store import JobStatus

    if summary.status == JobStatus.ALREADY_COMPLETE:
        return f"{summary.run_dir}: already complete ({summary.boards:,} boards); nothing to do"
    reused = f", {plural(summary.chunks_reused, 'chunk')} reused" if summary.chunks_reused else ""
    # the solving stage's seconds, as the progress lines count them; the whole run's after
    solve_s = getattr(summary, "solve_s", 0.0) or summary.elapsed_s
    return (
        f"{summary.run_dir}: {summary.boards:,} boards in {plural(summary.chunks, 'part')}{reused}; "
        f"{summary.boards_solved:,} solved in {solve_s:.1f} s ({summary.boards_per_s:,.0f} boards/s), "
        f"{summary.elapsed_s:.1f} s in all"
    )


def run_outcome(summary: RunSummary) -> dict[str, Any]:
    """The run's figures for ``--summary-json``."""
    from pipeline.store import run_id_of

    manifest = getattr(summary, "manifest", None) or {}
    identity = manifest.get("identity")
    return {
        "status": summary.status,
        "run_dir": str(summary.run_dir),
        "boards": summary.boards,
        "rejected": summary.rejected,
        "input_rows": summary.input_rows,
        "chunks": summary.chunks,
        "chunks_total": summary.chunks,
        "chunks_done": summary.chunks,
        "chunks_reused": summary.chunks_reused,
        "boards_solved": summary.boards_solved,
        "run_id": run_id_of(identity) if isinstance(identity, dict) else None,
        "expectations": list(getattr(summary, "expectations", None) or []),
    }


def run_progress_outcome(p: RunProgress) -> dict[str, Any]:
    """What a progress report says for ``--summary-json`` (what a run stopped early had done)."""
    return {
        "chunks_total": p.chunks_total,
        "chunks": p.chunks_total,
        "chunks_done": p.chunks_done,
        "chunks_reused": p.chunks_reused,
        "run_id": p.run_id,
    }


def run_rejected(summary: RunSummary) -> str:
    """The stderr line for a run that rejected input rows."""
    return f"{summary.rejected:,} of {summary.input_rows:,} input rows rejected: see {summary.rejects_file}"


# ------------------------------------------------------------------ dice, what-if


def dice_show(dice: DiceSet) -> list[str]:
    """``boggle dice show``: the set as a dice file (one die a line, numbered as the analysis
    numbers them in a comment), then how many faces show each face."""
    from pipeline.boards import DIE_BLANK_TOKEN, format_dice_text

    lines = format_dice_text(dice).splitlines()
    width = len(str(len(dice.dice)))
    out = [lines[0]] + [f"{line:<24} # die {d:>{width}}" for d, line in enumerate(lines[1:], 1)]
    counts = dice.face_counts()
    shown = "  ".join(
        f"{f or DIE_BLANK_TOKEN} {n}" for f, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    )
    total = sum(counts.values())
    return [*out, f"# faces ({total:,} in all, {len(counts)} different): {shown}"]


def _signed(x: float | None) -> str:
    return "?" if x is None else f"{x:+.2f}"


def whatif_lines(res: WhatIfResult) -> list[str]:
    """What ``boggle what-if`` prints: the measured gain next to the model's prediction."""
    changed = ", ".join(str(d) for d in res.changed) or "none"
    lines = [
        f"what-if: {res.base.label} -> variant ({'; '.join(res.swaps) or 'no swaps'}); "
        f"dice changed: {changed}",
    ]
    if res.placement_base is not None or res.placement_variant is not None:
        lines.append(
            f"  placement: base {res.placement_base or 'none (as rolled)'}; "
            f"variant {res.placement_variant or 'none (as rolled)'}"
        )
    lines += [
        f"  base    mean score {res.mean_base:.2f}  ({res.base_dir})",
        f"  variant mean score {res.mean_variant:.2f}  ({res.variant_dir}, dice {res.variant.file})",
    ]
    if res.gain_low is None:
        interval = "no interval from one board"
    else:
        interval = f"95% paired CI {_signed(res.gain_low)} to {_signed(res.gain_high)}; sd {res.sd:.2f}"
    lines.append(f"  measured gain per board: {_signed(res.gain)} ({interval}; n {res.boards:,})")
    lines.append(
        f"  boards: {res.higher:.1%} higher, {res.lower:.1%} lower, {res.unchanged:.1%} unchanged "
        f"({res.boards_differ:.1%} show other faces)"
    )
    p = res.prediction
    if p.estimate is None:
        lines.append(f"  additive model (base run): no prediction: {p.why}")
    else:
        lines.append(
            f"  additive model (base run) predicts: {_signed(p.estimate)} "
            f"(95% CI {_signed(p.low)} to {_signed(p.high)}): the changed dice's value, new minus old"
        )
    return lines


def whatif_outcome(res: WhatIfResult) -> dict[str, Any]:
    """The what-if's figures for ``--summary-json``."""
    return {"status": "complete", **res.to_dict()}
