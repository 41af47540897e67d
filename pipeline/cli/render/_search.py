"""What the searching commands show: ``design-dice``, ``optimize`` and ``prove`` progress (bars on
a terminal, log lines otherwise), their outcomes and a proof's status.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from pipeline.cli.render._log import LogStyle, log_progress, plural, stderr_bar, stderr_console, stopped_after

if TYPE_CHECKING:  # the results each display shows (imported by the commands that make them)
    from pipeline.best.optimize import OptimizeProgress, OptimizeResult
    from pipeline.best.prove import ProofStatus, ProveProgress, ProveSummary
    from pipeline.design import DesignProgress, DesignResult


# ------------------------------------------------------------------ design-dice


@contextmanager
def design_progress() -> Iterator[Callable[[DesignProgress], None]]:
    """A progress bar on stderr for ``boggle design-dice``: boards solved of the budget, moves
    accepted, candidates tried, the last move decided."""
    bar = stderr_bar("designing", "{task.fields[done]}", "{task.fields[moves]}")
    task = bar.add_task("design", total=None, done="", moves="")

    def update(p: DesignProgress) -> None:
        if not bar.live.is_started:
            bar.start()
        bar.update(
            task,
            completed=min(p.boards_solved, p.budget),
            total=p.budget,
            done=f"{p.boards_solved:,}/{p.budget:,} boards",
            moves=f"{plural(p.step, 'move')} accepted of {p.candidates:,} tried; last {p.last}: {p.move}",
        )

    with stopped_after(bar):
        yield update


def _figure(x: float, share: bool) -> str:
    return f"{x:.2%}" if share else f"{x:.2f}"


def _difference(x: float | None, share: bool) -> str:
    if x is None:
        return "?"
    return f"{x * 100:+.2f} points" if share else f"{x:+.2f}"


def design_lines(res: DesignResult) -> list[str]:
    """What ``boggle design-dice`` prints: the moves, the validation (start vs proposed, paired)
    and where the files are."""
    r = res.report
    v = r["validation"]
    lines = [
        f"design-dice {res.objective.text} from {res.start.label}: {plural(r['moves_accepted'], 'move')} "
        f"accepted of {r['candidates']:,} tried; {r['boards_solved']:,} boards solved, "
        f"{r['cpu_s'] / 3600:.3f} CPU-h ({r['stop'] or res.status})",
    ]
    lines += [f"  {m['step']:>3}. {m['move']}" for m in res.moves[:30]]
    if len(res.moves) > 30:
        lines.append(f"  ... {len(res.moves) - 30:,} more in {res.out / 'moves.csv'}")
    lines.append(
        f"validation on {v['boards']:,} fresh boards, paired ({v['boards_differ']:.1%} show other faces):"
    )
    for name in ("objective", "mean", "bad"):
        m = v[name]
        if name != "objective" and m["definition"] == v["objective"]["definition"]:
            continue
        share = not m["definition"].startswith("mean")
        label = {
            "objective": f"objective {m['definition']}",
            "mean": "mean score",
            "bad": f"{m['definition']} share",
        }
        lines.append(
            f"  {label[name]:<28} start {_figure(m['start'], share)}  "
            f"proposed {_figure(m['proposed'], share)}  "
            f"difference {_difference(m['difference'], share)} (95% CI {_difference(m['low'], share)} to "
            f"{_difference(m['high'], share)}){'  better' if m['better'] else ''}"
        )
    lines += _dice_lines(r)
    lines.append(
        f"proposed dice: {res.out / 'dice.txt'} (sha256 {r['proposed']['sha256'][:8]}); "
        f"report: {res.out / 'report.json'}"
    )
    return lines


def _dice_lines(r: dict[str, Any]) -> list[str]:
    """The proposed set die by die: the moves that brought the start within the per-die
    constraints, each changed die against the start's, and the printability warnings."""
    lines = []
    repair = r.get("repair") or []
    if repair:
        lines.append(
            f"start brought within the per-die constraints by {plural(len(repair), 'move')} (untested):"
        )
        lines += [f"  {m}" for m in repair[:10]]
        if len(repair) > 10:
            lines.append(f"  ... {len(repair) - 10:,} more in report.json")
    changes = r.get("dice_changes")
    if changes is not None:
        lines.append(f"dice changed, start -> proposed: {len(changes)} of {len(r['proposed']['faces'])}")
        width = max((len(" ".join(c["start"])) for c in changes), default=0)
        for c in changes:
            diff = " ".join([*(f"-{f}" for f in c["removed"]), *(f"+{f}" for f in c["added"])])
            before, after = " ".join(c["start"]), " ".join(c["proposed"])
            lines.append(f"  die {c['die']:>2}: {before:<{width}}  ->  {after}  ({diff})")
    warnings = r.get("warnings")
    if warnings is not None:
        if not warnings:
            lines.append("printability: no warning")
        else:
            lines.append(f"printability warnings ({len(warnings)}):")
            for w in warnings:
                since = "as in the start" if w["in_start"] else "new"
                lines.append(f"  die {w['die']:>2} ({w['faces']}): {w['warning']} ({since})")
    return lines


def design_outcome(res: DesignResult) -> dict[str, Any]:
    """The designer's figures for ``--summary-json``."""
    r = res.report
    return {
        "status": res.status,
        "out": str(res.out),
        "objective": r["objective"]["text"],
        "start": r["start"],
        "proposed": r["proposed"],
        "moves_accepted": r["moves_accepted"],
        "candidates": r["candidates"],
        "boards_solved": r["boards_solved"],
        "cpu_s": r["cpu_s"],
        "validation": r["validation"],
        "constraints": r.get("constraints"),
        "repair": r.get("repair"),
        "dice_changes": r.get("dice_changes"),
        "warnings": r.get("warnings"),
    }


# ------------------------------------------------------------------ optimize


@contextmanager
def optimize_progress(
    restarts: int, style: LogStyle | None = None
) -> Iterator[Callable[[OptimizeProgress], None]]:
    """A live table on stderr (best score so far, one line per restart) and the callback that
    feeds it; it appears with the first report. In a log, or as JSON, a :class:`ProgressLog`'s
    lines (restarts done, the best so far, the boards scored by all restarts)."""
    style = style or LogStyle()
    if style.plain():
        scored: dict[int, int] = {}
        with log_progress("optimize", "restarts", style) as log:

            def report(p: OptimizeProgress) -> None:
                scored[p.restart] = max(scored.get(p.restart, 0), p.evaluations)
                log.update(
                    p.restarts_done,
                    p.restarts_total,
                    best_score=p.best_score,
                    best_board=p.best_board,
                    boards_scored=sum(scored.values()),
                )

            yield report
        return
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
    from pathlib import Path

    from pipeline.best.optimize import INTERRUPTED

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
def prove_progress(style: LogStyle | None = None) -> Iterator[Callable[[ProveProgress], None]]:
    """A progress bar on stderr (classes done, boards found, best so far, ETA) and the callback
    that feeds it; in a log, or as JSON, a :class:`ProgressLog`'s lines."""
    style = style or LogStyle()
    if style.plain():
        with log_progress("prove", "classes", style) as log:

            def report(p: ProveProgress) -> None:
                log.update(
                    p.classes_done,
                    p.classes_total,
                    best_score=p.best_score,
                    best_board=p.best_board,
                    hits=p.boards_found,
                )

            yield report
        return
    # chunks of a proof finish a minute or more apart: the ETA averages over ten minutes
    fields = ("{task.fields[classes]}", "{task.fields[found]}", "{task.fields[best]}")
    bar = stderr_bar("proving", *fields, eta=True, speed_estimate_period=600)
    task = bar.add_task("prove", total=None, classes="", found="", best="")

    def update(p: ProveProgress) -> None:
        best = f"best {p.best_score} {p.best_board}" if p.best_score is not None else ""
        bar.update(
            task,
            completed=p.classes_done,
            total=p.classes_total,
            best=best,
            classes=f"{p.classes_done:,}/{p.classes_total:,} classes",
            found=f"{p.boards_found:,} hits",
        )
        if not bar.live.is_started:
            bar.start()

    with stopped_after(bar):
        yield update


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
    from pipeline.store import JobStatus

    lines = [f"{b.score}\t{b.board}" for b in res.boards[:shown]]
    if res.status == JobStatus.SAMPLE:
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
    """``boggle prove --status``: the proof in a few lines (see :mod:`pipeline.best.prove._status`)."""
    cfg = st.config
    state = "finished proof" if st.finished else "unfinished proof"
    if st.sample:  # a timing sample ends without _SUCCESS: finished when its parts all verify
        state = (
            f"{'finished' if st.sample_done else 'unfinished'} sample of {st.classes_total:,} of the "
            f"proof's {st.classes_all:,} classes "
            f"({'--class-ids' if cfg.get('class_ids') else '--limit-classes'}; nothing certified)"
        )
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
    so_far = "" if st.finished or st.sample_done else "so far: "
    lines.append(
        f"{so_far}{st.eliminated:,} classes eliminated by the bound, "
        f"{st.boards_scored:,} boards scored, {plural(len(st.boards), 'board')} >= {cfg['threshold']}{best}"
    )
    lines += [f"{score}\t{board}" for board, score in st.boards[:shown]]

    def over(figure: str, parts: int) -> str:
        return figure + ("" if parts == st.parts_verified else f" over the {parts:,} parts that record it")

    cpu, wall = f"{st.cpu_s / 3600:.2f} CPU-h", f"{st.wall_s / 3600:.2f} h wall"
    lines.append(f"spent: {over(cpu, st.parts_cpu)}; {over(wall, st.parts_wall)}")
    if not st.finished and not st.sample_done:
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
