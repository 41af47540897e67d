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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.console import Console

from pipeline import settings

if TYPE_CHECKING:  # the results each display shows (imported by the commands that make them)
    from pipeline.analyze import AnalysisResult
    from pipeline.analyze.inference import Interval
    from pipeline.analyze.select import SelectResult
    from pipeline.catalog import CatalogEntry, QueryResult, Verification
    from pipeline.design import DesignProgress, DesignResult
    from pipeline.dice import DiceSet
    from pipeline.optimize import OptimizeProgress, OptimizeResult
    from pipeline.prove import ProveProgress, ProveSummary
    from pipeline.prove.status import ProofStatus
    from pipeline.runner import Progress as RunProgress
    from pipeline.runner import RunSummary
    from pipeline.solve import BoardResult
    from pipeline.whatif import WhatIfResult

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
    import sys

    if sys.stderr.isatty() or settings.get().columns:
        return Console(stderr=True)
    return Console(stderr=True, width=LOG_WIDTH)


# ------------------------------------------------------------------ progress in a log

LOG_FORMATS = ("text", "json")
PROGRESS_INTERVAL = 10.0  # seconds between two progress lines in a log


@dataclass(frozen=True)
class LogStyle:
    """How progress goes to stderr when it is a log: a plain line (``text``) or a JSON object
    (``json``) every ``interval`` seconds. A terminal gets a progress bar instead, unless
    ``json`` is asked for (collectors read JSON lines wherever stderr goes)."""

    interval: float = PROGRESS_INTERVAL
    format: str = "text"

    def plain(self) -> bool:
        """Lines (not a bar or live table): stderr is not a terminal, or JSON is asked for."""
        import sys

        return self.format == "json" or not sys.stderr.isatty()


def utc_now() -> str:
    """The time of a progress line: ISO 8601, UTC, to the second (``2026-12-03T17:55:48Z``)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _duration(seconds: float) -> str:
    """``2.5 s``, ``45 s``, ``12 min 5 s``, ``3 h 20 min``: a duration a log reader takes in at a glance."""
    if seconds < 59.5:
        return f"{seconds:.1f} s" if seconds < 10 else f"{seconds:.0f} s"
    s = round(seconds)
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60} min"


class ProgressLog:
    """Progress as lines for a log: one when the first report arrives, one every ``interval``
    seconds after it (from a timer thread, so a chunk that takes minutes still shows the job is
    alive), and a last one (``finished``, or ``stopped`` when the block ends by an exception).

    Each line has the UTC time, done/total, percent, rate (of what this process did: work found
    done by an earlier session is not counted), ETA and elapsed time; ``fields`` add what the
    command knows (best board, hits). No colours, cursor moves or carriage returns: a line is
    written whole and flushed. With ``style.format == "json"`` each line is one JSON object with
    the keys ``time command event done total unit percent rate eta_s elapsed_s`` and the fields.
    """

    def __init__(self, command: str, unit: str, style: LogStyle, stream: Any = None) -> None:
        import threading

        self.command, self.unit, self.style = command, unit, style
        self._stream = stream
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._t0 = 0.0
        self._base = 0  # done at the first report, or reused: not this process's work
        self._done = 0
        self._total: int | None = None
        self._fields: dict[str, Any] = {}
        self._t_end: float | None = None  # when the work was all done (the rate stops there)

    def update(self, done: int, total: int | None, base: int | None = None, **fields: Any) -> None:
        """Record the latest report; the first one writes a line and starts the timer."""
        import threading

        with self._lock:
            first = self._thread is None
            if first:
                self._t0, self._base = time.perf_counter(), done
            if base is not None:
                self._base = max(self._base, base)
            if total is None or done < total:
                self._t_end = None
            elif self._t_end is None:
                self._t_end = time.perf_counter()
            self._done, self._total, self._fields = done, total, fields
        if first:
            self.write("start")
            self._thread = threading.Thread(target=self._tick, name="progress-log", daemon=True)
            self._thread.start()

    def _tick(self) -> None:
        while not self._stop.wait(self.style.interval):
            self.write("progress")

    def close(self, event: str = "finished") -> None:
        """Stop the timer and write the last line (nothing if no report ever came)."""
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        self.write(event)

    def record(self, event: str) -> dict[str, Any]:
        """What a line says, as the JSON format writes it."""
        with self._lock:
            elapsed = time.perf_counter() - self._t0
            working = (self._t_end if self._t_end is not None else time.perf_counter()) - self._t0
            done, total, fields = self._done, self._total, dict(self._fields)
            fresh = done - self._base
        rate = fresh / working if working > 0 and fresh > 0 else None
        eta = (total - done) / rate if total is not None and rate else None
        if total is not None and done >= total:
            eta = 0.0
        return {
            "time": utc_now(),
            "command": self.command,
            "event": event,
            "done": done,
            "total": total,
            "unit": self.unit,
            "percent": round(100 * done / total, 1) if total else None,
            "rate": round(rate, 3) if rate is not None else None,
            "eta_s": round(eta, 1) if eta is not None else None,
            "elapsed_s": round(elapsed, 1),
            **fields,
        }

    def line(self, event: str) -> str:
        """One line: the JSON object, or text such as ``2026-12-03T17:55:48Z run: 120,000/1,000,000
        boards (12.0%), 24,000 boards/s, ETA 37 s, elapsed 5 s``."""
        r = self.record(event)
        if self.style.format == "json":
            return json.dumps(r, ensure_ascii=False)
        total = f"/{r['total']:,}" if r["total"] is not None else ""
        percent = f" ({r['percent']:.1f}%)" if r["percent"] is not None else ""
        rate = f"{_rate(r['rate'])} {self.unit}/s" if r["rate"] is not None else f"- {self.unit}/s"
        eta = _duration(r["eta_s"]) if r["eta_s"] is not None else "unknown"
        head = "" if event in ("start", "progress") else f"{event}: "
        parts = [f"{head}{r['done']:,}{total} {self.unit}{percent}", rate]
        if event in ("start", "progress"):
            parts.append(f"ETA {eta}")
        parts.append(f"elapsed {_duration(r['elapsed_s'])}")
        extra = {k: v for k, v in r.items() if k not in RECORD_KEYS and v is not None}
        if "best_score" in extra:
            parts.append(f"best {extra.pop('best_score')} {extra.pop('best_board', '')}".rstrip())
        parts += [_field_text(k, v) for k, v in extra.items()]
        return f"{r['time']} {self.command}: " + ", ".join(parts)

    def write(self, event: str) -> None:
        import sys

        text = self.line(event) + "\n"
        with self._lock:
            stream = self._stream if self._stream is not None else sys.stderr
            stream.write(text)
            stream.flush()


def _rate(per_s: float) -> str:
    """``24,000``, ``3.5``, ``0.0125``: three significant figures at least."""
    return f"{per_s:,.0f}" if per_s >= 100 else f"{per_s:.3g}"


class StageLog(ProgressLog):
    """Progress of a command that goes through stages (``analyze``): a line as each stage
    starts, the stage again every ``interval`` seconds while it lasts, and a last line."""

    def stage(self, message: str) -> None:
        started = self._thread is not None
        self.update(0, None, stage=message)  # the first writes the "start" line
        if started:
            self.write("stage")

    def line(self, event: str) -> str:
        r = self.record(event)
        if self.style.format == "json":
            return json.dumps(
                {k: r[k] for k in ("time", "command", "event", "elapsed_s", "stage")}, ensure_ascii=False
            )
        elapsed = _duration(r["elapsed_s"])
        said = {
            "start": r["stage"],
            "stage": r["stage"],
            "progress": f"still {r['stage']}, elapsed {elapsed}",
        }
        return f"{r['time']} {self.command}: " + said.get(event, f"{event} in {elapsed}")


RECORD_KEYS = ("time", "command", "event", "done", "total", "unit", "percent", "rate", "eta_s", "elapsed_s")


def _field_text(key: str, value: Any) -> str:
    """A command's own field in a text line: ``5 hits``, ``stage drawing plots``."""
    if isinstance(value, int):
        return f"{value:,} {key.replace('_', ' ')}"
    return f"{key.replace('_', ' ')} {value}"


@contextmanager
def log_progress(command: str, unit: str, style: LogStyle) -> Iterator[ProgressLog]:
    """A :class:`ProgressLog` for a ``with`` block: its last line says ``finished``, or
    ``stopped`` when the block ends by an exception (Ctrl-C, a damaged run)."""
    log = ProgressLog(command, unit, style)
    try:
        yield log
    except BaseException:
        log.close("stopped")
        raise
    log.close("finished")


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
    """What ``boggle select`` prints: each run's pool size, per band, with the 95% interval on
    the share and the yield of a run of ``res.per`` boards; then the file written."""
    lines = []
    bands = {b.name: b for b in res.filters.bands}
    for run in res.runs:
        lines.append(f"{run.label}: {_share_and_yield(run.selected, run.boards, run.share, res.per)}")
        for bc in run.bands:
            text = bands[bc.band].text()
            band = bc.band if bc.band == f"words {text}" else f"{bc.band} ({text} words)"
            lines.append(f"  {band}: {_share_and_yield(bc.selected, run.boards, bc.share, res.per)}")
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
    JSON: a :class:`ProgressLog`'s lines instead."""
    style = style or LogStyle()
    if style.plain():
        with log_progress("run", "boards", style) as log:

            def report(p: RunProgress) -> None:
                # reused chunks arrive at once: the rate counts only boards solved in this process
                log.update(p.boards_done, p.boards_total, base=p.boards_reused, rejected=p.rejected or None)

            yield report
        return
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(
        TextColumn("[bold]solving[/bold]"),
        BarColumn(),
        TextColumn("{task.fields[done]} boards"),
        TextColumn("{task.fields[rate]}"),
        TextColumn("{task.fields[eta]}"),
        TimeElapsedColumn(),
        console=stderr_console(),
        transient=False,
    )
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
            task,
            completed=p.boards_done,
            total=p.boards_total,
            done=f"{p.boards_done:,}{total}",
            rate=f"{rate:,.0f} boards/s" if rate else "",
            eta=eta,
        )

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
    from pipeline.dice import BLANK_TOKEN, format_dice_text

    lines = format_dice_text(dice).splitlines()
    width = len(str(len(dice.dice)))
    out = [lines[0]] + [f"{line:<24} # die {d:>{width}}" for d, line in enumerate(lines[1:], 1)]
    counts = dice.face_counts()
    shown = "  ".join(
        f"{f or BLANK_TOKEN} {n}" for f, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
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


# ------------------------------------------------------------------ design-dice


@contextmanager
def design_progress() -> Iterator[Callable[[DesignProgress], None]]:
    """A progress bar on stderr for ``boggle design-dice``: boards solved of the budget, moves
    accepted, candidates tried, the last move decided."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(
        TextColumn("[bold]designing[/bold]"),
        BarColumn(),
        TextColumn("{task.fields[done]}"),
        TextColumn("{task.fields[moves]}"),
        TimeElapsedColumn(),
        console=stderr_console(),
        transient=False,
    )
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

    try:
        yield update
    finally:
        if bar.live.is_started:
            bar.stop()


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
    lines.append(
        f"proposed dice: {res.out / 'dice.txt'} (sha256 {r['proposed']['sha256'][:8]}); "
        f"report: {res.out / 'report.json'}"
    )
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
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    bar = Progress(
        TextColumn("[bold]proving[/bold]"),
        BarColumn(),
        TextColumn("{task.fields[classes]}"),
        TextColumn("{task.fields[found]}"),
        TextColumn("{task.fields[best]}"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        # chunks of a proof finish a minute or more apart: the ETA averages over ten minutes
        console=stderr_console(),
        transient=False,
        speed_estimate_period=600,
    )
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


# ------------------------------------------------------------------ runs (the catalog)


def size_text(n: int) -> str:
    """``812 B``, ``4.1 kB``, ``221.0 MB``, ``1.3 GB`` (powers of 1,000)."""
    value = float(n)
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if value < 1000 or unit == "TB":
            return f"{n} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    raise AssertionError("unreachable")


def _aligned(header: list[str], rows: list[list[str]], right: set[int]) -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return [
        "  ".join(
            (c.rjust(w) if i in right else c.ljust(w)) for i, (c, w) in enumerate(zip(r, widths, strict=True))
        ).rstrip()
        for r in [header, *rows]
    ]


def catalog_lines(entries: list[CatalogEntry]) -> list[str]:
    """``boggle runs ls``: one aligned line a job directory (kind, state, date, count, config,
    size, path), and what is wrong with each damaged one."""
    if not entries:
        return ["no run, proof or search here"]
    rows = []
    for e in entries:
        count = f"{e.count:,} {e.unit}" if e.count is not None else "-"
        date = (e.date or "-")[:19].replace("T", " ")
        rows.append([e.kind, e.state, date, count, e.config or "-", size_text(e.bytes), e.path])
    lines = _aligned(["KIND", "STATE", "DATE", "COUNT", "CONFIG", "SIZE", "PATH"], rows, {3, 5})
    lines += [f"{e.path}: {e.problem}" for e in entries if e.problem]
    return lines


def catalog_show(d: dict[str, Any]) -> list[str]:
    """``boggle runs show``: a job directory in a few lines (see
    :func:`pipeline.catalog.describe_job`)."""
    count = f"{d['count']:,} {d['unit']}" if d["count"] is not None else "-"
    lines = [
        f"{d['path']}: {d['state']} {d['kind']} ({d['format']}, schema {d['schema_version']})",
        f"config: {d['config']}",
        f"count: {count}",
        f"started: {d['started_at'] or '-'}; finished: {d['finished_at'] or '-'}",
    ]
    parts = d["parts"]
    unrecorded = f", {parts['without_record']} without a record" if parts.get("without_record") else ""
    lines.append(
        f"parts: {plural(parts['files'], 'file')}, {parts['rows']:,} rows, {size_text(parts['bytes'])}"
        f"{unrecorded}; {size_text(d['bytes'])} in all"
    )
    if d["problem"]:
        lines.append(f"problem: {d['problem']}")
    packages = d.get("packages") or {}
    if packages:
        lines.append("packages: " + ", ".join(f"{k} {v}" for k, v in sorted(packages.items())))
    lines.append(f"command: {d['command'] or 'not recorded'}")
    for key, value in d["figures"].items():
        if isinstance(value, dict | list):
            value = json.dumps(value, ensure_ascii=False, default=str)
            value = value if len(value) <= 160 else value[:157] + "..."
        lines.append(f"{key}: {value}")
    full = json.dumps(d["config_full"], ensure_ascii=False, sort_keys=True, default=str)
    lines.append(f"config (full): {full}")
    return lines


def catalog_verified(v: Verification) -> list[str]:
    """``boggle runs verify``: ``intact`` in one line, or each problem found."""
    if v.intact:
        return [f"{v.path}: intact ({v.state} {v.kind}, {plural(v.parts, 'part')} verified)"]
    return [f"{v.path}: {name}: {why}" for name, why in v.problems]


def query_output(result: QueryResult, fmt: str) -> list[str]:
    """``boggle runs query``'s rows: an aligned ``table``, ``csv`` (with a header) or ``json``
    (one object a line)."""
    if fmt == "json":
        return [
            json.dumps(dict(zip(result.columns, row, strict=True)), ensure_ascii=False, default=str)
            for row in result.rows
        ]
    if fmt == "csv":
        import csv
        import io

        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(result.columns)
        writer.writerows(result.rows)
        return buf.getvalue().splitlines()

    def cell(value: Any) -> str:
        if value is None:
            return "NULL"
        if isinstance(value, float):
            return f"{value:.6g}"
        return str(value)

    rows = [[cell(v) for v in row] for row in result.rows]
    numeric = {
        i
        for i in range(len(result.columns))
        if result.rows and all(isinstance(row[i], int | float) for row in result.rows if row[i] is not None)
    }
    return [*_aligned(list(result.columns), rows, numeric), f"({plural(len(rows), 'row')})"]
