"""Aggregations over finished runs, computed by DuckDB straight from the Parquet parts.

Why DuckDB: a run of 10 million boards holds about a billion found words. DuckDB scans the
part files column by column, unnests the ``words`` lists in a streaming hash aggregate and
spills to disk when memory runs short, so nothing here ever holds a run's word lists in
Python (pandas sees only the small result tables). The same SQL reads one run or several at
once: every table is grouped by ``run`` and ``source`` so runs (dice sets, rules, languages)
compare side by side.

The runs and the connection come from :mod:`pipeline.analyze.runs`; the faces boards show and
their raw effects from :mod:`pipeline.analyze.faces`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from pipeline.analyze.faces import board_faces as board_faces
from pipeline.analyze.faces import face_effects
from pipeline.analyze.runs import query
from pipeline.analyze.words import FREQUENT_WORDS_COLUMNS, frequent_words

if TYPE_CHECKING:
    import duckdb

# Word-count thresholds of the "thin board" shares in the summary.
FEW_WORDS = (10, 25, 50)
ALL_SOURCES = "(all)"


# ---------------------------------------------------------------- tables


QUANTILES: dict[str, float] = {"median": 0.5, "p10": 0.1, "p90": 0.9, "p99": 0.99}


def _std(col: str) -> str:
    """The sample standard deviation of an integer column, from exact integer sums.

    DuckDB's ``stddev_samp`` updates a running variance in whatever order its threads meet the
    rows, so its last bits vary from one read of the same data to the next (a run read from S3
    and the same run read from disk gave different ``score_std``). Sums of HUGEINTs are exact
    whatever the order; the variance is rounded once.
    """
    x = f"({col})::HUGEINT"
    return (
        f"CASE WHEN count({col}) > 1 THEN sqrt((count({col}) * sum({x} * {x}) - sum({x}) * sum({x}))::DOUBLE"
        f" / (count({col}) * (count({col}) - 1))::DOUBLE) END"
    )


def _dist(col: str, name: str) -> str:
    return (
        f"avg({col}) AS {name}_mean, {_std(col)} AS {name}_std, "
        f"min({col}) AS {name}_min, max({col}) AS {name}_max"
    )


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


def _quantiles(con: duckdb.DuckDBPyConnection, col: str, name: str) -> pd.DataFrame:
    """Median, p10 and p90 of an integer column per run/source and per run.

    Computed from the value counts (a few thousand distinct scores at most) rather than by
    DuckDB's quantile aggregate, which holds every value in memory: this stays small and exact
    however many boards a run has.
    """
    vc = query(
        con,
        f"""SELECT run, CASE WHEN GROUPING(source) = 1 THEN '{ALL_SOURCES}' ELSE source END
                       AS source, {col} AS v, count(*) AS n
            FROM boards GROUP BY GROUPING SETS ((run, source, {col}), (run, {col}))""",
    )
    rows = []
    for (run, source), g in vc.groupby(["run", "source"], sort=False):
        qs = quantiles_from_counts(g["v"].to_numpy(), g["n"].to_numpy(), list(QUANTILES.values()))
        rows.append(
            {"run": run, "source": source, **{f"{name}_{k}": x for k, x in zip(QUANTILES, qs, strict=True)}}
        )
    return pd.DataFrame(rows, columns=["run", "source", *(f"{name}_{k}" for k in QUANTILES)])


def summary(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """One row per run and source: score and word-count distributions, thin and dead boards.

    A run with several sources also gets a row with source ``(all)``. Quantiles interpolate
    linearly (as numpy's default); the standard deviation is the sample one (ddof=1).
    """
    few = ", ".join(f"avg((n_words < {k})::DOUBLE) AS share_lt{k}_words" for k in FEW_WORDS)
    sql = f"""
        WITH g AS (
            SELECT run, source, GROUPING(source) AS is_total,
                   count(*) AS boards, {_dist("score", "score")}, {_dist("n_words", "words")},
                   {few},
                   avg(dead_cells) AS dead_cells_mean, {_std("dead_cells")} AS dead_cells_std,
                   avg((dead_cells >= 1)::DOUBLE) AS share_dead_ge1,
                   avg(max_word_len) AS longest_len_mean, {_std("max_word_len")} AS longest_len_std,
                   max(max_word_len) AS longest_len_max
            FROM boards
            GROUP BY GROUPING SETS ((run, source), (run))
        ), n AS (SELECT run, count(DISTINCT source) AS n_sources FROM boards GROUP BY run)
        SELECT g.* EXCLUDE (is_total, source),
               CASE WHEN is_total = 1 THEN '{ALL_SOURCES}' ELSE g.source END AS source
        FROM g JOIN n USING (run)
        WHERE is_total = 0 OR n_sources > 1
        ORDER BY run, is_total, source
    """
    df = query(con, sql)
    for col, name in (("score", "score"), ("n_words", "words")):
        df = df.merge(_quantiles(con, col, name), on=["run", "source"], how="left", sort=False)
    dist = [
        f"{name}_{stat}"
        for name in ("score", "words")
        for stat in ("mean", "median", "std", "p10", "p90", "p99", "min", "max")
    ]
    rest = [c for c in df.columns if c not in ("run", "source", "boards", *dist)]
    return df[["run", "source", "boards", *dist, *rest]].reset_index(drop=True)


def longest_words(
    con: duckdb.DuckDBPyConnection, languages: Mapping[str, str] | None = None, candidates: int = 40
) -> pd.DataFrame:
    """How many boards have their longest word of each length (0 = no word at all), with an
    example: of the ``candidates`` longest words found on most boards, the most common in real
    text (wordfreq; ties: found on more boards, then alphabetical)."""
    from pipeline.analyze.words import language_of, zipf

    sql = """
        SELECT run, source, max_word_len AS length, count(*) AS boards,
               count(*) / sum(count(*)) OVER (PARTITION BY run, source) AS share
        FROM boards GROUP BY run, source, max_word_len
        ORDER BY run, source, length
    """
    df = query(con, sql)
    cand = query(
        con,
        """WITH c AS (SELECT run, source, max_word_len AS length, longest_word AS word, count(*) AS n
                      FROM boards GROUP BY ALL)
           SELECT * FROM c
           QUALIFY row_number() OVER (PARTITION BY run, source, length ORDER BY n DESC, word) <= ?""",
        [int(candidates)],
    )
    langs = dict(languages or {})
    best: dict[tuple[str, str, int], str] = {}
    for key, g in cand.groupby(["run", "source", "length"], sort=False):
        run, source, length = (str(k) for k in key)
        freq = zipf(g["word"], langs.get(str(run), language_of(None)))
        ranked = sorted(
            zip(g["word"], g["n"], strict=True), key=lambda wn: (-_finite(freq[wn[0]]), -wn[1], wn[0])
        )
        best[(str(run), str(source), int(length))] = str(ranked[0][0])
    df["example"] = [
        best.get((str(r), str(s), int(n)), "")
        for r, s, n in zip(df["run"], df["source"], df["length"], strict=True)
    ]
    return df


def _finite(x: float) -> float:
    return 0.0 if math.isnan(x) else x


def length_columns(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    """(column suffix, label) of the per-length columns present, shortest first.

    Runs whose minimum length is below 3 carry extra columns (``words_len_2`` ...).
    """
    cols = [r[0] for r in con.execute("DESCRIBE boards").fetchall()]
    found = {m.group(1) for c in cols if (m := re.fullmatch(r"words_len_(\d+|9plus)", c))}
    found &= {m.group(1) for c in cols if (m := re.fullmatch(r"points_len_(\d+|9plus)", c))}
    numeric = sorted(int(x) for x in found if x.isdigit())
    out = [(str(n), str(n)) for n in numeric]
    if "9plus" in found:
        out.append(("9plus", "9+"))
    return out


def by_length(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Words and points by word length (3 ... 8, 9+): totals, per board and share of points.

    A run without a length's columns (another minimum length) counts zero there.
    """
    bins = length_columns(con)
    sums = ", ".join(
        f"coalesce(sum(words_len_{s}), 0)::BIGINT AS w_{i}, coalesce(sum(points_len_{s}), 0)::BIGINT AS p_{i}"
        for i, (s, _) in enumerate(bins)
    )
    wide = query(con, f"SELECT run, source, count(*) AS boards, {sums} FROM boards GROUP BY ALL ORDER BY ALL")
    rows = []
    for rec in wide.to_dict("records"):
        total_points = sum(int(rec[f"p_{i}"]) for i in range(len(bins)))
        total_words = sum(int(rec[f"w_{i}"]) for i in range(len(bins)))
        for i, (_, label) in enumerate(bins):
            words, points = int(rec[f"w_{i}"]), int(rec[f"p_{i}"])
            rows.append(
                {
                    "run": rec["run"],
                    "source": rec["source"],
                    "length": label,
                    "words_total": words,
                    "points_total": points,
                    "words_per_board": words / rec["boards"],
                    "points_per_board": points / rec["boards"],
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


def top_boards(con: duckdb.DuckDBPyConnection, n: int = 20) -> pd.DataFrame:
    """The ``n`` highest-scoring boards of each run and source (ties: lower board_id), with
    their words (NULL for a run without word lists)."""
    # A bounded top-n aggregate picks the winners (ties: lower board_id) in O(n) memory per
    # group; only their rows, word lists included, are then read back.
    sql = """
        WITH best AS (
            SELECT run, source, unnest(max_by(board_id, (score, -board_id), ?)) AS board_id
            FROM boards GROUP BY run, source
        ), rows AS (
            SELECT b.run, b.source, b.board_id, b.board, b.rows, b.cols, b.score, b.n_words,
                   b.longest_word, b.dead_cells, array_to_string(b.words, ' ') AS words
            FROM boards b JOIN best USING (run, source, board_id)
        )
        SELECT run, source,
               row_number() OVER (PARTITION BY run, source ORDER BY score DESC, board_id) AS rank,
               * EXCLUDE (run, source)
        FROM rows ORDER BY run, source, rank
    """
    return query(con, sql, [int(n)])


def histogram(con: duckdb.DuckDBPyConnection, column: str, bins: int = 60) -> pd.DataFrame:
    """Counts of ``column`` (score or n_words) in equal-width integer bins shared by all runs."""
    if column not in ("score", "n_words", "dead_cells", "max_word_len"):
        raise ValueError(f"no histogram for column {column!r}")
    top = con.execute(f"SELECT max({column}) FROM boards").fetchone()
    hi = int(top[0]) if top and top[0] is not None else 0
    width = max(1, math.ceil((hi + 1) / bins))
    sql = f"""
        WITH b AS (SELECT run, source, ({column} // {width}) * {width} AS bin_lo FROM boards)
        SELECT run, source, bin_lo::BIGINT AS bin_lo, (bin_lo + {width})::BIGINT AS bin_hi,
               count(*) AS boards,
               count(*) / sum(count(*)) OVER (PARTITION BY run, source) AS share
        FROM b GROUP BY run, source, bin_lo ORDER BY run, source, bin_lo
    """
    return query(con, sql)


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


def score_counts(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Boards of each score per run and source (for cumulative distributions and tails)."""
    return query(
        con,
        """WITH c AS (SELECT run, source, score, count(*) AS boards FROM boards GROUP BY run, source, score)
           SELECT run, source, score, boards,
                  sum(boards) OVER (PARTITION BY run, source ORDER BY score) /
                  sum(boards) OVER (PARTITION BY run, source) AS cum_share
           FROM c ORDER BY run, source, score""",
    )


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
    trend: pd.DataFrame = field(default_factory=_empty)
    notes: list[str] = field(default_factory=list)

    def items(self) -> list[tuple[str, pd.DataFrame]]:
        """(name, frame) of every table that applies (frames without columns are left out)."""
        out = [(name, getattr(self, name)) for name in self.__dataclass_fields__ if name != "notes"]
        return [(name, df) for name, df in out if len(df.columns)]


def compute_tables(
    con: duckdb.DuckDBPyConnection,
    *,
    top: int = 20,
    top_words: int = 50,
    bins: int = 60,
    words: bool = True,
    languages: Mapping[str, str] | None = None,
) -> Tables:
    """Compute every table over the ``boards`` view of :func:`connect`. ``words=False`` (no run
    has word lists) leaves ``frequent_words`` empty instead of scanning the NULL lists.
    ``languages`` maps a run to its wordfreq language (default English).

    The board-level tables (adjusted face effects, positions, dice, comparisons with intervals,
    paired runs) come from :func:`pipeline.analyze.tables.compute_all`.
    """
    langs = dict(languages or {})
    return Tables(
        summary=summary(con),
        by_length=by_length(con),
        longest_words=longest_words(con, langs),
        top_boards=top_boards(con, top),
        frequent_words=(
            frequent_words(con, top_words, langs) if words else pd.DataFrame(columns=FREQUENT_WORDS_COLUMNS)
        ),
        face_effects=face_effects(con),
        score_histogram=histogram(con, "score", bins),
        words_histogram=histogram(con, "n_words", bins),
        score_counts=score_counts(con),
    )
