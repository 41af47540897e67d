"""The summary tables of finished runs, from their merged statistics
(:mod:`pipeline.analyze._gather`): distributions of scores and words, words and points by
length, the longest words, the best boards and the score histograms.

Every number is read from exact integer value counts and sums (:mod:`pipeline.stats`), so a
quantile or a standard deviation is the one the boards themselves give, computed without
reading them again, and does not depend on the order the parts were read in.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from pipeline.analyze._faces import face_effects
from pipeline.analyze._gather import ALL_SOURCES as ALL_SOURCES
from pipeline.analyze._gather import groups
from pipeline.analyze._words import FREQUENT_WORDS_COLUMNS, frequent_words

if TYPE_CHECKING:
    from pipeline.analyze._gather import Gathered

# Word-count thresholds of the "thin board" shares in the summary.
FEW_WORDS = (10, 25, 50)


# ---------------------------------------------------------------- tables


QUANTILES: dict[str, float] = {"median": 0.5, "p10": 0.1, "p90": 0.9, "p99": 0.99}


def quantiles_from_counts(values: np.ndarray, counts: np.ndarray, qs: Sequence[float]) -> list[float]:
    """Quantiles of a sample given as distinct values and their counts, interpolated linearly
    between order statistics exactly as ``numpy.percentile``'s default."""
    order = np.argsort(values)
    v = np.asarray(values, dtype=np.float64)[order]
    cum = np.cumsum(np.asarray(counts, dtype=np.int64)[order])
    n = int(cum[-1])
    out = []
    for q in qs:
        h = (n - 1) * q
        lo = math.floor(h)
        v_lo = v[np.searchsorted(cum, lo, side="right")]
        v_hi = v[np.searchsorted(cum, min(lo + 1, n - 1), side="right")]
        out.append(float(v_lo + (h - lo) * (v_hi - v_lo)))
    return out


@dataclass(frozen=True)
class Moments:
    """Count, mean, sample standard deviation, min and max of an integer column, exactly."""

    n: int
    mean: float
    std: float
    lo: int
    hi: int

    @classmethod
    def of(cls, values: np.ndarray, counts: np.ndarray) -> Moments:
        n = int(counts.sum())
        v = [int(x) for x in values.tolist()]
        c = [int(x) for x in counts.tolist()]
        s = sum(x * k for x, k in zip(v, c, strict=True))
        q = sum(x * x * k for x, k in zip(v, c, strict=True))
        # exact integer sums, the variance rounded once (as the boards' own sums would give)
        std = math.sqrt((n * q - s * s) / (n * (n - 1))) if n > 1 else math.nan
        return cls(n, s / n if n else math.nan, std, min(v) if v else 0, max(v) if v else 0)


SUMMARY_COLUMNS = [
    "run",
    "source",
    "boards",
    *(
        f"{name}_{stat}"
        for name in ("score", "words")
        for stat in ("mean", "median", "std", "p10", "p90", "p99", "min", "max")
    ),
    *(f"share_lt{k}_words" for k in FEW_WORDS),
    "dead_cells_mean",
    "dead_cells_std",
    "share_dead_ge1",
    "longest_len_mean",
    "longest_len_std",
    "longest_len_max",
]


def summary(gathered: Sequence[Gathered]) -> pd.DataFrame:
    """One row per run and source: score and word-count distributions, thin and dead boards.

    A run with several sources also gets a row with source ``(all)``. Quantiles interpolate
    linearly (as numpy's default); the standard deviation is the sample one (ddof=1).
    """
    rows = []
    for run, label, key, rs in groups(gathered, total=True):
        rec: dict[str, Any] = {"run": run, "source": label}
        sv, sc = rs.value_counts("score", key)
        wv, wc = rs.value_counts("n_words", key)
        rec["boards"] = int(sc.sum())
        for name, (v, c) in (("score", (sv, sc)), ("words", (wv, wc))):
            m = Moments.of(v, c)
            qs = dict(zip(QUANTILES, quantiles_from_counts(v, c, list(QUANTILES.values())), strict=True))
            rec.update(
                {
                    f"{name}_mean": m.mean,
                    f"{name}_median": qs["median"],
                    f"{name}_std": m.std,
                    f"{name}_p10": qs["p10"],
                    f"{name}_p90": qs["p90"],
                    f"{name}_p99": qs["p99"],
                    f"{name}_min": m.lo,
                    f"{name}_max": m.hi,
                }
            )
        n = rec["boards"]
        for k in FEW_WORDS:
            rec[f"share_lt{k}_words"] = float(wc[wv < k].sum()) / n
        dv, dc = rs.value_counts("dead_cells", key)
        dead = Moments.of(dv, dc)
        rec["dead_cells_mean"], rec["dead_cells_std"] = dead.mean, dead.std
        rec["share_dead_ge1"] = float(dc[dv >= 1].sum()) / n
        lv, lc = rs.value_counts("max_word_len", key)
        longest = Moments.of(lv, lc)
        rec["longest_len_mean"], rec["longest_len_std"] = longest.mean, longest.std
        rec["longest_len_max"] = longest.hi
        rows.append(rec)
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def longest_words(
    gathered: Sequence[Gathered], languages: Mapping[str, str] | None = None, candidates: int = 40
) -> pd.DataFrame:
    """How many boards have their longest word of each length (0 = no word at all), with an
    example: of the ``candidates`` longest words found on most boards, the most common in real
    text (wordfreq; ties: found on more boards, then alphabetical)."""
    from pipeline.analyze._words import language_of, zipf

    langs = dict(languages or {})
    rows = []
    for run, label, key, rs in groups(gathered):
        lv, lc = rs.value_counts("max_word_len", key)
        assert rs.longest is not None
        words, counts = rs.longest.items(key)
        lengths = np.fromiter((len(w) for w in words), dtype=np.int64, count=len(words))
        # most boards first, then alphabetical: the candidates of every length at once
        order = np.lexsort((np.array(words, dtype=object), -counts)) if words else np.zeros(0, np.int64)
        n_all = int(lc.sum())
        for length, n in zip(lv.tolist(), lc.tolist(), strict=True):
            picked = order[lengths[order] == int(length)][: int(candidates)]
            example = ""
            if len(picked):
                cand = [(words[i], int(counts[i])) for i in picked.tolist()]
                freq = zipf([w for w, _ in cand], langs.get(run, language_of(None)))
                example = sorted(cand, key=lambda wn: (-_finite(freq[wn[0]]), -wn[1], wn[0]))[0][0]
            rows.append(
                {
                    "run": run,
                    "source": label,
                    "length": int(length),
                    "boards": int(n),
                    "share": n / n_all,
                    "example": example,
                }
            )
    return pd.DataFrame(rows, columns=["run", "source", "length", "boards", "share", "example"])


def _finite(x: float) -> float:
    return 0.0 if math.isnan(x) else x


def by_length(gathered: Sequence[Gathered]) -> pd.DataFrame:
    """Words and points by word length (3 ... 8, 9+): totals, per board and share of points.

    A run without a length's columns (another minimum length) counts zero there.
    """
    every: list[str] = []
    for g in gathered:
        for b in g.stats.bins or []:
            if b not in every:
                every.append(b)
    bins = sorted((b for b in every if b.isdigit()), key=int) + (["9plus"] if "9plus" in every else [])
    rows = []
    for run, label, key, rs in groups(gathered):
        assert key is not None
        own = rs.bins or []
        n = int(rs.value_counts("score", key)[1].sum())
        w_all = {b: int(x) for b, x in zip(own, rs.length_words[key].tolist(), strict=True)}
        p_all = {b: int(x) for b, x in zip(own, rs.length_points[key].tolist(), strict=True)}
        total_words, total_points = sum(w_all.values()), sum(p_all.values())
        for b in bins:
            words, points = w_all.get(b, 0), p_all.get(b, 0)
            rows.append(
                {
                    "run": run,
                    "source": label,
                    "length": "9+" if b == "9plus" else b,
                    "words_total": words,
                    "points_total": points,
                    "words_per_board": words / n,
                    "points_per_board": points / n,
                    "share_of_words": words / total_words if total_words else 0.0,
                    "share_of_points": points / total_points if total_points else 0.0,
                }
            )
    return pd.DataFrame(
        rows,
        columns=[
            "run",
            "source",
            "length",
            "words_total",
            "points_total",
            "words_per_board",
            "points_per_board",
            "share_of_words",
            "share_of_points",
        ],
    )


TOP_COLUMNS = [
    "run",
    "source",
    "rank",
    "board_id",
    "board",
    "rows",
    "cols",
    "score",
    "n_words",
    "longest_word",
    "dead_cells",
    "words",
]


def top_boards(gathered: Sequence[Gathered], n: int = 20) -> pd.DataFrame:
    """The ``n`` highest-scoring boards of each run and source (ties: lower board_id), with
    their words (None for a run without word lists)."""
    rows = []
    for run, label, key, rs in groups(gathered):
        assert key is not None
        for rank, rec in enumerate(rs.top.get(key, [])[: int(n)], start=1):
            rows.append({"run": run, "source": label, "rank": rank, **rec})
    return pd.DataFrame(rows, columns=TOP_COLUMNS)


def histogram(gathered: Sequence[Gathered], column: str, bins: int = 60) -> pd.DataFrame:
    """Counts of ``column`` (score or n_words) in equal-width integer bins shared by all runs."""
    if column not in ("score", "n_words", "dead_cells", "max_word_len"):
        raise ValueError(f"no histogram for column {column!r}")
    hi = 0
    for _, _, key, rs in groups(gathered):
        v, _ = rs.value_counts(column, key)
        if len(v):
            hi = max(hi, int(v.max()))
    width = max(1, math.ceil((hi + 1) / bins))
    rows = []
    for run, label, key, rs in groups(gathered):
        v, c = rs.value_counts(column, key)
        lo = (v // width) * width
        n = int(c.sum())
        for b, k in zip(*_sum_by(lo, c), strict=True):
            rows.append(
                {
                    "run": run,
                    "source": label,
                    "bin_lo": int(b),
                    "bin_hi": int(b) + width,
                    "boards": int(k),
                    "share": k / n,
                }
            )
    return pd.DataFrame(rows, columns=["run", "source", "bin_lo", "bin_hi", "boards", "share"])


def _sum_by(keys: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    uniq, inv = np.unique(keys, return_inverse=True)
    return uniq, np.bincount(inv, weights=counts, minlength=len(uniq)).astype(np.int64)


def series_labels(df: pd.DataFrame) -> pd.Series:
    """A display label per row: the run, with the source added where a run has several."""
    per_run = df[df["source"] != ALL_SOURCES].groupby("run")["source"].nunique()
    return pd.Series(
        [
            f"{r} · {s}" if per_run.get(r, 1) > 1 else str(r)
            for r, s in zip(df["run"], df["source"], strict=True)
        ],
        index=df.index,
        dtype=object,
    )


def score_counts(gathered: Sequence[Gathered]) -> pd.DataFrame:
    """Boards of each score per run and source (for cumulative distributions and tails)."""
    rows = []
    for run, label, key, rs in groups(gathered):
        v, c = rs.value_counts("score", key)
        cum = np.cumsum(c) / max(1, int(c.sum()))
        for score, n, share in zip(v.tolist(), c.tolist(), cum.tolist(), strict=True):
            rows.append({"run": run, "source": label, "score": score, "boards": n, "cum_share": share})
    return pd.DataFrame(rows, columns=["run", "source", "score", "boards", "cum_share"])


def _empty() -> pd.DataFrame:
    return pd.DataFrame()


@dataclass
class Tables:
    """Every summary table of an analysis, as pandas frames (small: aggregates only)."""

    summary: pd.DataFrame
    by_length: pd.DataFrame
    longest_words: pd.DataFrame
    top_boards: pd.DataFrame
    frequent_words: pd.DataFrame
    face_effects: pd.DataFrame
    score_histogram: pd.DataFrame
    words_histogram: pd.DataFrame
    score_counts: pd.DataFrame = field(default_factory=_empty)
    comparisons: pd.DataFrame = field(default_factory=_empty)
    face_comparisons: pd.DataFrame = field(default_factory=_empty)
    face_positions: pd.DataFrame = field(default_factory=_empty)
    dice: pd.DataFrame = field(default_factory=_empty)
    dice_faces: pd.DataFrame = field(default_factory=_empty)
    paired: pd.DataFrame = field(default_factory=_empty)
    paired_histogram: pd.DataFrame = field(default_factory=_empty)
    paired_boards: pd.DataFrame = field(default_factory=_empty)
    paired_words: pd.DataFrame = field(default_factory=_empty)
    bad_share: pd.DataFrame = field(default_factory=_empty)
    bad_drivers: pd.DataFrame = field(default_factory=_empty)
    serve_bands: pd.DataFrame = field(default_factory=_empty)
    headline: pd.DataFrame = field(default_factory=_empty)
    dice_changes: pd.DataFrame = field(default_factory=_empty)
    model_check: pd.DataFrame = field(default_factory=_empty)
    suspects: pd.DataFrame = field(default_factory=_empty)
    trend: pd.DataFrame = field(default_factory=_empty)
    notes: list[str] = field(default_factory=list)

    def items(self) -> list[tuple[str, pd.DataFrame]]:
        """(name, frame) of every table that applies (frames without columns are left out)."""
        out = [(name, getattr(self, name)) for name in self.__dataclass_fields__ if name != "notes"]
        return [(name, df) for name, df in out if len(df.columns)]


def compute_tables(
    gathered: Sequence[Gathered],
    *,
    top: int = 20,
    top_words: int = 50,
    bins: int = 60,
    languages: Mapping[str, str] | None = None,
) -> Tables:
    """The summary tables of the gathered runs. The board-level tables (adjusted face
    effects, positions, dice, comparisons with intervals, paired runs) come from
    :func:`pipeline.analyze._tables.compute_all`. ``languages`` maps a run to its wordfreq
    language (default English)."""
    langs = dict(languages or {})
    words = any(g.stats.has_word_lists for g in gathered)
    return Tables(
        summary=summary(gathered),
        by_length=by_length(gathered),
        longest_words=longest_words(gathered, langs),
        top_boards=top_boards(gathered, top),
        frequent_words=(
            frequent_words(gathered, top_words, langs)
            if words
            else pd.DataFrame(columns=FREQUENT_WORDS_COLUMNS)
        ),
        face_effects=face_effects(gathered),
        score_histogram=histogram(gathered, "score", bins),
        words_histogram=histogram(gathered, "n_words", bins),
        score_counts=score_counts(gathered),
    )
