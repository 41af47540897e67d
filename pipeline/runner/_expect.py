"""A run's expectations (``[expect] checks``, ``boggle run --expect``) measured on its boards once
they are written: each one's value with its 95% interval, met or broken, and one line saying so.

What is measured (from the parts' ``score`` and ``n_words`` columns):

* ``mean_score``: points a board, with the normal interval of a mean;
* ``bad_share``: the share of bad boards as the report counts them by default (fewer than 50
  words, :class:`pipeline.stats.BadDefinition`), with the Wilson interval;
* ``band_share[BAND]``: the share of boards whose word count is in the band, Wilson interval.

``OP NUMBER`` compares the measured value (the estimate, not an end of its interval) with the
number. ``within limits`` compares it with the **control limits of the same design's earlier
nights**: the finished runs beside this one (its parent folder, ``runs/nightly``), of the same
design (:func:`pipeline.store.dataset.design_key`: the identity without seed and date) and with an
earlier schedule's date (``run_date``), the latest :data:`NIGHTS` of them. As in the report's
trend (:mod:`pipeline.analyze._trend`), a Shewhart chart: the pooled mean of those nights ± 3
standard errors of a night of this run's size (the pooled within-night standard deviation over
the square root of this run's boards), a share's p ± 3 sqrt(p (1 - p) / n). The night being
judged is not in its own limits. With fewer than :data:`MIN_NIGHTS` earlier nights (or a run
with no schedule's date) the expectation is not checked, which the line says; it does not fail.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pipeline.config import Expectation

NIGHTS = 30  # the earlier nights the control limits are drawn from, at most (the latest)
MIN_NIGHTS = 2  # fewer earlier nights of the design: a ``within limits`` is not checked
SIGMAS = 3.0
COLUMNS = ["score", "n_words"]


@dataclass
class Measures:
    """What expectations are measured on, summed over a run's parts: boards, the score's sum and
    sum of squares, bad boards, and the boards of each word count."""

    boards: int = 0
    score_sum: int = 0
    score_squares: int = 0
    bad: int = 0
    words: dict[int, int] | None = None

    def add(self, table: Any) -> None:
        from pipeline.stats import BadDefinition

        score = table.column("score").to_numpy(zero_copy_only=False).astype(np.int64)
        n_words = table.column("n_words").to_numpy(zero_copy_only=False).astype(np.int64)
        self.boards += len(score)
        self.score_sum += int(score.sum())
        self.score_squares += int((score * score).sum())
        self.bad += int(BadDefinition().mask(n_words, score).sum())
        values, counts = np.unique(n_words, return_counts=True)
        words = self.words if self.words is not None else {}
        for v, c in zip(values.tolist(), counts.tolist(), strict=True):
            words[v] = words.get(v, 0) + c
        self.words = words

    @property
    def mean(self) -> float:
        return self.score_sum / self.boards if self.boards else math.nan

    @property
    def sd(self) -> float:
        n = self.boards
        if n < 2:
            return math.nan
        return math.sqrt(max(0.0, (self.score_squares - self.score_sum**2 / n) / (n - 1)))

    def count(self, e: Expectation) -> int:
        """The boards a share expectation counts (bad ones, or those in its band)."""
        if e.metric == "bad_share":
            return self.bad
        lo = -math.inf if e.lo is None else e.lo
        hi = math.inf if e.hi is None else e.hi
        return sum(c for v, c in (self.words or {}).items() if lo <= v <= hi)

    def value(self, e: Expectation) -> tuple[float, float, float]:
        """The measured value of ``e``'s metric with its 95% interval (low, high)."""
        from pipeline.stats import mean_interval, wilson

        iv = (
            mean_interval(self.mean, self.sd, self.boards)
            if not e.is_share
            else wilson(self.count(e), self.boards)
        )
        return iv.estimate, iv.low, iv.high


def measure(tables: Iterable[Any]) -> Measures:
    m = Measures()
    for t in tables:
        m.add(t)
    return m


def part_tables(loc: Any, files: Sequence[str]) -> Iterator[Any]:
    """The ``score`` and ``n_words`` columns of each part file ``files`` of the job folder
    ``loc`` (a :class:`pipeline.store.Location`)."""
    import pyarrow.parquet as pq

    for name in files:
        with loc.open(name) as fh, pq.ParquetFile(fh) as pf:
            yield pf.read(columns=COLUMNS)


def earlier_nights(run_dir: Any, identity: Mapping[str, Any], run_date: str | None) -> list[Measures]:
    """The measures of the latest :data:`NIGHTS` finished runs beside ``run_dir`` (in its parent
    folder) of the same design with an earlier ``run_date``, oldest first."""
    from pipeline import store
    from pipeline.errors import BoggleError
    from pipeline.store.dataset import design_key

    if run_date is None:
        return []
    here = store.location(run_dir)
    parent_spec = str(run_dir).rstrip("/").rpartition("/")[0]
    if not parent_spec:
        return []
    design = design_key(identity)
    found: list[tuple[str, Any, list[str]]] = []
    try:
        folders = store.location(parent_spec).folders_holding((store.MANIFEST,))
    except BoggleError:
        return []
    for path, _ in folders:
        loc = store.location(path)
        if str(loc) == str(here):
            continue
        try:
            manifest = store.read_manifest(loc)
        except BoggleError:  # damaged: left out of the limits
            continue
        date = manifest.get("run_date")
        if manifest.get("format") != store.FORMAT or not date or str(date) >= run_date:
            continue
        if design_key(manifest.get("identity")) != design:
            continue
        files = [str(p["file"]) for p in manifest.get("parts") or [] if isinstance(p, dict) and "file" in p]
        found.append((str(date), loc, files))
    found.sort(key=lambda x: x[0])
    return [measure(part_tables(loc, files)) for _, loc, files in found[-NIGHTS:]]


def control_limits(e: Expectation, nights: Sequence[Measures], n: int) -> tuple[float, float]:
    """The lower and upper control limit for a night of ``n`` boards from ``nights``."""
    total = sum(m.boards for m in nights)
    if e.is_share:
        p = sum(m.count(e) for m in nights) / total
        se = math.sqrt(p * (1 - p) / n)
        return max(p - SIGMAS * se, 0.0), min(p + SIGMAS * se, 1.0)
    grand = sum(m.score_sum for m in nights) / total
    dof = sum(m.boards - 1 for m in nights)
    ss = sum((m.boards - 1) * m.sd**2 for m in nights if m.boards > 1)
    s = math.sqrt(ss / dof) if dof > 0 else math.nan
    return grand - SIGMAS * s / math.sqrt(n), grand + SIGMAS * s / math.sqrt(n)


def _number(x: float) -> float | None:
    """``x`` as JSON keeps it: None for NaN (a run of one board has no interval)."""
    return None if math.isnan(x) else float(x)


def _shown(e: Expectation, x: float) -> str:
    if math.isnan(x):
        return "n/a"
    return f"{x:.2%}" if e.is_share else f"{x:,.2f}"


def check(e: Expectation, m: Measures, nights: Sequence[Measures] | None) -> dict[str, Any]:
    """One expectation measured on ``m``: what the manifest and ``--summary-json`` record
    (``check``, ``met``: True, False or None when not checked, ``value``, ``low``, ``high``,
    ``boards``, ``limits``, ``nights``) and its ``line``. ``nights``: the earlier nights'
    measures (``within limits``)."""
    value, low, high = m.value(e)
    out: dict[str, Any] = {
        "check": e.text,
        "met": None,
        "value": _number(value),
        "low": _number(low),
        "high": _number(high),
        "boards": m.boards,
        "limits": None,
        "nights": None,
    }
    measured = f"{_shown(e, value)} (95% CI {_shown(e, low)} to {_shown(e, high)}, {m.boards:,} boards)"
    if m.boards == 0:
        out["line"] = f"expectation not checked: {e.text}: the run has no boards"
        return out
    if not e.within:
        out["met"] = e.holds(value)
    else:
        nights = nights or []
        out["nights"] = len(nights)
        if len(nights) < MIN_NIGHTS:
            out["line"] = (
                f"expectation not checked: {e.text}: {measured}; {len(nights)} earlier night(s) of "
                f"this design beside the run, {MIN_NIGHTS} needed for control limits"
            )
            return out
        lcl, ucl = control_limits(e, nights, m.boards)
        out["limits"] = [_number(lcl), _number(ucl)]
        out["met"] = lcl <= value <= ucl
        measured += (
            f"; control limits {_shown(e, lcl)} to {_shown(e, ucl)} from {len(nights)} earlier "
            "nights of this design"
        )
    out["line"] = f"expectation {'met' if out['met'] else 'failed'}: {e.text}: {measured}"
    return out


def check_all(
    expectations: Sequence[Expectation],
    tables: Iterable[Any],
    run_dir: Any,
    identity: Mapping[str, Any],
    run_date: str | None,
) -> list[dict[str, Any]]:
    """Every expectation measured on the run whose part tables are ``tables`` (the earlier
    nights read only when one asks for control limits)."""
    if not expectations:
        return []
    m = measure(tables)
    nights = None
    if any(e.within for e in expectations):
        nights = earlier_nights(run_dir, identity, run_date)
    return [check(e, m, nights) for e in expectations]


def broken(results: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The expectations that failed (not those left unchecked)."""
    return [r for r in results if r.get("met") is False]
