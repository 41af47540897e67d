"""The pieces every display shares: the stderr console, the log style (text or JSON lines), the
:class:`ProgressLog` that writes progress to a file or pipe, the rich progress bar on stderr, and
small wording helpers.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.console import Console

from pipeline import settings

if TYPE_CHECKING:
    from rich.progress import Progress

if TYPE_CHECKING:  # the results each display shows (imported by the commands that make them)
    pass


LOG_WIDTH = 200  # columns of a progress line written to a file or pipe (a log)


def stderr_console() -> Console:
    """A console on stderr for progress: a terminal's width, or, written to a log (not a
    terminal) without ``$COLUMNS``, :data:`LOG_WIDTH` columns, so a line is not cut at rich's
    default of 80."""
    import sys

    if sys.stderr.isatty() or settings.get().columns:
        return Console(stderr=True)
    return Console(stderr=True, width=LOG_WIDTH)


def stderr_bar(title: str, *fields: str, eta: bool = False, **options: Any) -> Progress:
    """A progress bar on stderr, not yet started: the bold ``title``, the bar, one text column per
    ``fields`` template, the time elapsed and, with ``eta``, the time remaining."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    remaining = [TextColumn("ETA"), TimeRemainingColumn()] if eta else []
    return Progress(
        TextColumn(f"[bold]{title}[/bold]"),
        BarColumn(),
        *map(TextColumn, fields),
        TimeElapsedColumn(),
        *remaining,
        console=stderr_console(),
        transient=False,
        **options,
    )


@contextmanager
def stopped_after(bar: Progress) -> Iterator[None]:
    """Stop ``bar`` on leaving, if it was ever shown (stopping a bar never shown prints an empty
    line)."""
    try:
        yield
    finally:
        if bar.live.is_started:
            bar.stop()


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


RECENT_S = 60.0  # the ETA follows the rate of the reports of the last minute


class RecentRate:
    """The rate of the last :data:`RECENT_S` seconds of reports (work done by this process), so
    an ETA follows a job that speeds up or slows down instead of its average since the start."""

    def __init__(self, window: float = RECENT_S) -> None:
        from collections import deque

        self.window = window
        self._samples: deque[tuple[float, int]] = deque()

    def add(self, t: float, fresh: int) -> None:
        self._samples.append((t, fresh))
        # keep one sample at or before the window's start, so the window is always spanned
        while len(self._samples) > 2 and self._samples[1][0] <= t - self.window:
            self._samples.popleft()

    def rate(self) -> float | None:
        if len(self._samples) < 2:
            return None
        (t0, d0), (t1, d1) = self._samples[0], self._samples[-1]
        return (d1 - d0) / (t1 - t0) if t1 > t0 and d1 > d0 else None


class ProgressLog:
    """Progress as lines for a log: one when the first report arrives, one every ``interval``
    seconds after it (from a timer thread, so a chunk that takes minutes still shows the job is
    alive), and a last one (``finished``, or ``stopped`` when the block ends by an exception).

    Each line has the UTC time, done/total, percent, rate (of what this process did: work found
    done by an earlier session is not counted), ETA and elapsed time; ``fields`` add what the
    command knows (best board, hits). The rate is the work over the seconds it took: the
    reporter's own clock when it gives one (``work_s``: then the lines agree with the summary
    the command prints), else the time since the first report. The ETA is what is left over the
    rate of the last minute (:class:`RecentRate`). No colours, cursor moves or carriage returns:
    a line is written whole and flushed. With ``style.format == "json"`` each line is one JSON
    object with the keys ``time command event done total unit percent rate rate_recent eta_s
    elapsed_s`` and the fields.
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
        self._work_s: float | None = None  # the reporter's own seconds of work, when it gives them
        self._recent = RecentRate()

    def update(
        self,
        done: int,
        total: int | None,
        base: int | None = None,
        work_s: float | None = None,
        **fields: Any,
    ) -> None:
        """Record the latest report; the first one writes a line and starts the timer.
        ``base``: work found done (not this process's); ``work_s``: the seconds this process's
        work took so far by the reporter's clock (the rate's basis, as in its summary)."""
        import threading

        with self._lock:
            now = time.perf_counter()
            first = self._thread is None
            if first:
                self._t0, self._base = now, done
            if base is not None:
                self._base = max(self._base, base)
            if total is None or done < total:
                self._t_end = None
            elif self._t_end is None:
                self._t_end = now
            self._done, self._total, self._fields = done, total, fields
            self._work_s = work_s
            self._recent.add(now, done - self._base)
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
            if self._work_s is not None:
                working = self._work_s
            done, total, fields = self._done, self._total, dict(self._fields)
            fresh = done - self._base
            recent = self._recent.rate()
        rate = fresh / working if working > 0 and fresh > 0 else None
        pace = recent if recent is not None else rate
        eta = (total - done) / pace if total is not None and pace else None
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
            "rate_recent": round(recent, 3) if recent is not None else None,
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
    starts (saying how long the one before took), the stage again every ``interval`` seconds
    while it lasts (with its own time, and the command's), and a last line (with the last
    stage's time). Each stage times itself: ``stage_s`` is the seconds since it began,
    ``previous_s`` what the stage before took."""

    _stage_t0 = 0.0
    _previous: tuple[str, float] | None = None

    def stage(self, message: str) -> None:
        started = self._thread is not None
        now = time.perf_counter()
        with self._lock:
            if started:
                self._previous = (str(self._fields.get("stage", "")), now - self._stage_t0)
            self._stage_t0 = now
        self.update(0, None, stage=message)  # the first writes the "start" line
        if started:
            self.write("stage")

    def record(self, event: str) -> dict[str, Any]:
        r = super().record(event)
        with self._lock:
            r["stage_s"] = round(time.perf_counter() - self._stage_t0, 1)
            r["previous_s"] = round(self._previous[1], 1) if self._previous and event == "stage" else None
            previous = self._previous[0] if self._previous else ""
        r["previous"] = previous if event == "stage" else None
        return r

    def line(self, event: str) -> str:
        r = self.record(event)
        if self.style.format == "json":
            keys = ("time", "command", "event", "elapsed_s", "stage", "stage_s", "previous", "previous_s")
            return json.dumps({k: r[k] for k in keys}, ensure_ascii=False)
        elapsed, took = _duration(r["elapsed_s"]), _duration(r["stage_s"])
        said = {
            "start": r["stage"],
            "stage": f"{r['stage']} ({r['previous']} took {_duration(r['previous_s'] or 0.0)})",
            "progress": f"still {r['stage']}, for {took} (elapsed {elapsed})",
        }
        last = f"{event} in {elapsed} ({r['stage']} took {took})"
        return f"{r['time']} {self.command}: " + said.get(event, last)


RECORD_KEYS = (
    "time",
    "command",
    "event",
    "done",
    "total",
    "unit",
    "percent",
    "rate",
    "rate_recent",
    "eta_s",
    "elapsed_s",
)


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


def plural(n: int, noun: str) -> str:
    """``1 part``, ``2 parts``, ``1,000 parts``."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"
