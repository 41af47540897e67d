"""Runs that hold the same boards, compared board by board.

The runs share dice, shape, count, chunk size and seed (another lexicon or rules). Computed here:
the distribution of the per-board score difference, the per-board moments of every metric (for
the paired intervals of :mod:`pipeline.analyze.compare`), how much of the change a scaling of
every score explains, the boards that change most, the words that account for the change, and
the paired face effects.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from pipeline.analyze.cells import read_board_faces
from pipeline.analyze.inference import Z95, Interval, diff_of_means, mean_interval, share_text
from pipeline.analyze.runs import query
from pipeline.analyze.stats import quantiles_from_counts
from pipeline.analyze.words import word_counts

if TYPE_CHECKING:
    import duckdb

    from pipeline.analyze.runs import RunInfo


# Each metric of compare.METRICS as a per-board SQL expression, for the paired comparisons.
PAIRED_EXPR = {
    "score": "score",
    "words": "n_words",
    "longest_len": "max_word_len",
    "dead_cells": "dead_cells",
    "share_lt10_words": "(n_words < 10)::DOUBLE",
    "share_dead_ge1": "(dead_cells >= 1)::DOUBLE",
}


@dataclass(frozen=True)
class PairedMoments:
    """Per-board moments of one metric over the boards two runs share (``a``: the reference)."""

    n: float
    mean_a: float
    mean_b: float
    var_diff: float
    var_a: float
    var_b: float
    cov: float

    def diff(self) -> Interval:
        """``mean_b - mean_a`` with the paired interval (the per-board differences)."""
        return mean_interval(self.mean_b - self.mean_a, math.sqrt(max(self.var_diff, 0.0)), self.n)

    def ratio(self) -> Interval:
        """``mean_b / mean_a - 1`` with the paired interval (ratio estimator: the standard
        error of ``b - R a`` over ``mean_a``)."""
        if self.mean_a <= 0 or self.mean_b <= 0 or self.n <= 0:
            return Interval(math.nan, math.nan, math.nan)
        if self.mean_a == self.mean_b and self.var_diff == 0:
            return Interval(0.0, 0.0, 0.0)  # the same value on every board
        r = self.mean_b / self.mean_a
        var = max(self.var_b - 2 * r * self.cov + r * r * self.var_a, 0.0)
        se = math.sqrt(var / self.n) / self.mean_a
        return Interval(r - 1, r - 1 - Z95 * se, r - 1 + Z95 * se)


def paired_face_effects(
    con: duckdb.DuckDBPyConnection, reference: str, run: str, mean_a: float, mean_b: float
) -> pd.DataFrame:
    """Face effects of ``run`` minus those of ``reference`` on the boards both hold, with the
    paired intervals: the raw and adjusted effects of the per-board score difference
    (``diff``), and of the difference of each board's score as a share of its run's mean
    (``rel_diff``: zero for every face when one run's scores are the other's scaled). Empty
    when the boards have several shapes."""
    from pipeline.analyze.cells import BLANK_FACE, adjusted_effects

    fa, fb = read_board_faces(con, reference), read_board_faces(con, run)
    if fa is None or fb is None or not np.array_equal(fa.codes, fb.codes) or not mean_a or not mean_b:
        return pd.DataFrame(
            columns=["face", "kind", "diff", "diff_low", "diff_high", "rel_diff", "rel_low", "rel_high"]
        )
    d = fb.score - fa.score
    r = fb.score / mean_b - fa.score / mean_a
    adj_d = adjusted_effects(fa.codes, fa.faces, d)[0].set_index("face")
    adj_r = adjusted_effects(fa.codes, fa.faces, r)[0].set_index("face")
    rows = []
    for i, face in enumerate(fa.faces):
        if face == BLANK_FACE:
            continue
        rows.append(
            {
                "face": face,
                "kind": "adjusted",
                "diff": adj_d.at[face, "adj_effect"],
                "diff_low": adj_d.at[face, "adj_low"],
                "diff_high": adj_d.at[face, "adj_high"],
                "rel_diff": adj_r.at[face, "adj_effect"],
                "rel_low": adj_r.at[face, "adj_low"],
                "rel_high": adj_r.at[face, "adj_high"],
            }
        )
        shown = (fa.codes == i).any(axis=1)
        if shown.all() or not shown.any():
            continue
        raw = []
        for y in (d, r):
            w, wo = y[shown], y[~shown]
            sd_w = float(w.std(ddof=1)) if len(w) > 1 else math.nan
            sd_wo = float(wo.std(ddof=1)) if len(wo) > 1 else math.nan
            raw.append(diff_of_means(float(wo.mean()), sd_wo, len(wo), float(w.mean()), sd_w, len(w)))
        rows.append(
            {
                "face": face,
                "kind": "raw",
                "diff": raw[0].estimate,
                "diff_low": raw[0].low,
                "diff_high": raw[0].high,
                "rel_diff": raw[1].estimate,
                "rel_low": raw[1].low,
                "rel_high": raw[1].high,
            }
        )
    return pd.DataFrame(rows)


@dataclass
class PairedTables:
    summary: pd.DataFrame
    histogram: pd.DataFrame
    boards: pd.DataFrame
    words: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    # run -> metric (a METRICS column) -> its per-board moments against the first run
    moments: dict[str, dict[str, PairedMoments]] = field(default_factory=dict)


PAIRED_SUMMARY_COLUMNS = [
    "run",
    "reference",
    "boards",
    "mean_diff",
    "diff_low",
    "diff_high",
    "sd_diff",
    "median_diff",
    "p10_diff",
    "p90_diff",
    "share_higher",
    "share_lower",
    "share_same",
    "scale_factor",
    "scale_explains",
    "verdict",
]

# A scaling that explains at least this share of the board-by-board change is called "mostly".
MOSTLY_SCALING = 0.9


def paired_moments(
    con: duckdb.DuckDBPyConnection, a: str, b: str
) -> tuple[dict[str, PairedMoments], float, float]:
    """The per-board moments of every METRICS column over the boards of runs ``a`` and ``b``
    (joined on board id); also the score's scaling: the factor ``s`` that best gives run b's
    score as ``s`` times run a's (least squares through zero) and the share of the squared
    per-board change it accounts for (1.0: a pure scaling)."""
    cols = ", ".join(f"{e} AS m_{k}" for k, e in PAIRED_EXPR.items())
    stats = []
    for k in PAIRED_EXPR:
        x, y = f"x.m_{k}", f"y.m_{k}"
        stats += [
            f"avg({x})",
            f"avg({y})",
            f"var_samp({y} - {x})",
            f"var_samp({x})",
            f"var_samp({y})",
            f"covar_samp({x}, {y})",
        ]
    stats += [
        "sum(x.m_score * x.m_score)",
        "sum(x.m_score * y.m_score)",
        "sum(y.m_score * y.m_score)",
        "sum((y.m_score - x.m_score) ^ 2)",
        "count(*)",
    ]
    got = con.execute(
        f"""SELECT {", ".join(stats)}
            FROM (SELECT board_id, {cols} FROM boards WHERE run = ?) x
            JOIN (SELECT board_id, {cols} FROM boards WHERE run = ?) y USING (board_id)""",
        [a, b],
    ).fetchone()
    assert got is not None  # an aggregate always returns one row
    vals = [math.nan if v is None else float(v) for v in got]
    n = vals[-1]
    out = {k: PairedMoments(n, *vals[6 * i : 6 * i + 6]) for i, k in enumerate(PAIRED_EXPR)}
    saa, sab, sbb, sdd = vals[-5:-1]
    factor = sab / saa if saa > 0 else math.nan
    explains = math.nan
    if saa > 0 and sdd > 0:
        resid = max(sbb - sab * sab / saa, 0.0)
        explains = 1.0 - resid / sdd if resid > 1e-12 * sbb else 1.0
    return out, factor, explains


def _scaling_text(factor: float, explains: float) -> str:
    if math.isnan(explains) or math.isnan(factor):
        return ""
    change = f"{abs(factor - 1):.1%} {'higher' if factor >= 1 else 'lower'}"
    if explains == 1.0:
        return (
            f". A pure scaling: every board scores {change} (×{factor:.4g}), so each face keeps its "
            "share of the mean score"
        )
    if explains >= MOSTLY_SCALING:
        return (
            f". Mostly a scaling: scoring every board {change} (×{factor:.3g}) accounts for "
            f"{explains:.0%} of the board-by-board change"
        )
    return ""


def same_boards(con: duckdb.DuckDBPyConnection, a: str, b: str) -> bool:
    """Whether runs ``a`` and ``b`` hold the same boards under the same ids (one join)."""
    got = con.execute(
        """WITH x AS (SELECT board_id, board FROM boards WHERE run = ?),
                y AS (SELECT board_id, board FROM boards WHERE run = ?)
           SELECT (SELECT count(*) FROM x), (SELECT count(*) FROM y),
                  (SELECT count(*) FROM x JOIN y USING (board_id) WHERE x.board = y.board)""",
        [a, b],
    ).fetchone()
    return got is not None and got[0] == got[1] == got[2] and got[0] > 0


def _rules_points(run: RunInfo) -> Any:
    from pipeline.rules import Rules

    d = run.rules
    try:
        return Rules(
            name=str(d.get("name", "boggle")),
            min_length=int(d.get("min_length", 3)),
            scores={int(k): int(v) for k, v in dict(d.get("scores") or {}).items()} or {3: 1},
            per_letter_from=d.get("per_letter_from"),
            per_letter=int(d.get("per_letter") or 0),
            revisit=bool(d.get("revisit", False)),
        ).points
    except (TypeError, ValueError, AttributeError):
        return None


def paired(con: duckdb.DuckDBPyConnection, runs: Sequence[RunInfo], *, top: int = 10) -> PairedTables:
    """Board-by-board comparison of every later run that holds the first run's boards."""
    empty = PairedTables(
        pd.DataFrame(columns=PAIRED_SUMMARY_COLUMNS),
        pd.DataFrame(columns=["run", "reference", "diff", "boards"]),
        pd.DataFrame(),
        pd.DataFrame(),
    )
    if len(runs) < 2:
        return empty
    ref = runs[0]
    summaries, hists, tops, words = [], [], [], []
    all_moments: dict[str, dict[str, PairedMoments]] = {}
    for run in runs[1:]:
        if not same_boards(con, ref.label, run.label):
            continue
        d = query(
            con,
            """SELECT b.score - a.score AS diff, count(*) AS boards
               FROM (SELECT board_id, score FROM boards WHERE run = ?) a
               JOIN (SELECT board_id, score FROM boards WHERE run = ?) b USING (board_id)
               GROUP BY ALL ORDER BY diff""",
            [ref.label, run.label],
        )
        v, c = d["diff"].to_numpy(dtype=np.float64), d["boards"].to_numpy(dtype=np.int64)
        n = int(c.sum())
        mean = float((v * c).sum() / n)
        sd = math.sqrt(float((c * (v - mean) ** 2).sum()) / (n - 1)) if n > 1 else math.nan
        iv = mean_interval(mean, sd, n)
        med, p10, p90 = quantiles_from_counts(v, c, [0.5, 0.1, 0.9])
        got = con.execute("SELECT avg(score) FROM boards WHERE run = ?", [ref.label]).fetchone()
        ref_mean = float(got[0]) if got and got[0] is not None else 0.0
        rel = f", {mean / ref_mean * 100:+.1f}% of its mean" if ref_mean else ""
        more = "more" if mean >= 0 else "fewer"
        moments, factor, explains = paired_moments(con, ref.label, run.label)
        higher, lower, same = (float(c[m].sum()) / n for m in (v > 0, v < 0, v == 0))
        verdict = (
            f"{run.label}: on the same boards, {abs(mean):.1f} {more} points a board than {ref.label} "
            f"(95% CI {iv.low:+.1f} to {iv.high:+.1f}{rel}); {share_text(higher)} of boards score higher, "
            f"{share_text(lower)} lower, {share_text(same)} the same" + _scaling_text(factor, explains)
        )
        all_moments[run.label] = moments
        summaries.append(
            {
                "run": run.label,
                "reference": ref.label,
                "boards": n,
                "mean_diff": mean,
                "diff_low": iv.low,
                "diff_high": iv.high,
                "sd_diff": sd,
                "median_diff": med,
                "p10_diff": p10,
                "p90_diff": p90,
                "share_higher": float(c[v > 0].sum()) / n,
                "share_lower": float(c[v < 0].sum()) / n,
                "share_same": same,
                "scale_factor": factor,
                "scale_explains": explains,
                "verdict": verdict,
            }
        )
        hists.append(d.assign(run=run.label, reference=ref.label)[["run", "reference", "diff", "boards"]])
        tops.append(_top_changes(con, ref, run, top))
        if ref.has_words and run.has_words:
            words.append(_word_changes(con, ref, run, n, top))
    if not summaries:
        return empty
    return PairedTables(
        pd.DataFrame(summaries, columns=PAIRED_SUMMARY_COLUMNS),
        pd.concat(hists, ignore_index=True),
        pd.concat(tops, ignore_index=True),
        pd.concat(words, ignore_index=True) if words else pd.DataFrame(),
        moments=all_moments,
    )


def _top_changes(con: duckdb.DuckDBPyConnection, ref: RunInfo, run: RunInfo, top: int) -> pd.DataFrame:
    """The boards whose score changes most (ties: lower board id), with the words only one run
    finds on them."""
    has_words = ref.has_words and run.has_words
    words = ", a.words AS words_a, b.words AS words_b" if has_words else ""
    df = query(
        con,
        f"""WITH d AS (
                SELECT a.board_id, abs(b.score - a.score) AS change
                FROM (SELECT board_id, score FROM boards WHERE run = $1) a
                JOIN (SELECT board_id, score FROM boards WHERE run = $2) b USING (board_id)),
            best AS (SELECT unnest(max_by(board_id, (change, -board_id), $3)) AS board_id FROM d)
            SELECT a.board_id, a.board, a.score AS score_reference, b.score AS score_run,
                   b.score - a.score AS diff{words}
            FROM (SELECT * FROM boards WHERE run = $1) a
            JOIN (SELECT * FROM boards WHERE run = $2) b USING (board_id)
            JOIN best USING (board_id)""",
        [ref.label, run.label, int(top)],
    )
    df = df.assign(_abs=df["diff"].abs()).sort_values(["_abs", "board_id"], ascending=[False, True])
    df = df.drop(columns="_abs").reset_index(drop=True)
    if has_words:
        gained, lost = [], []
        for a, b in zip(df.pop("words_a"), df.pop("words_b"), strict=True):
            sa, sb = set(a), set(b)
            gained.append(" ".join(sorted(sb - sa, key=lambda w: (-len(w), w))))
            lost.append(" ".join(sorted(sa - sb, key=lambda w: (-len(w), w))))
        df["words_gained"] = gained
        df["words_lost"] = lost
    df.insert(0, "reference", ref.label)
    df.insert(0, "run", run.label)
    return df


def _word_changes(
    con: duckdb.DuckDBPyConnection, ref: RunInfo, run: RunInfo, n: int, top: int
) -> pd.DataFrame:
    """The words that account for most of the change in mean score: for each word, boards
    finding it in ``run`` minus in ``ref`` times its points, per board. Summed over every
    word this is the mean per-board score difference exactly (words score independently)."""
    word_counts(con)
    df = query(
        con,
        """WITH a AS (SELECT word, sum(boards) AS n FROM word_counts WHERE run = ? GROUP BY word),
                b AS (SELECT word, sum(boards) AS n FROM word_counts WHERE run = ? GROUP BY word)
           SELECT word, coalesce(a.n, 0) AS boards_reference, coalesce(b.n, 0) AS boards_run
           FROM a FULL OUTER JOIN b USING (word)
           WHERE coalesce(a.n, 0) <> coalesce(b.n, 0)""",
        [ref.label, run.label],
    )
    pts_a, pts_b = _rules_points(ref), _rules_points(run)
    if pts_a is None or pts_b is None or df.empty:
        return pd.DataFrame()
    letters = df["word"].str.len().to_numpy()
    pa_ = np.array([pts_a(int(k)) for k in letters], dtype=np.float64)
    pb_ = np.array([pts_b(int(k)) for k in letters], dtype=np.float64)
    df["points_per_board"] = (df["boards_run"] * pb_ - df["boards_reference"] * pa_) / n
    df = df.assign(_abs=df["points_per_board"].abs()).sort_values(["_abs", "word"], ascending=[False, True])
    total = float(df["points_per_board"].sum())
    df = df.drop(columns="_abs").head(int(top) * 3).reset_index(drop=True)
    df["share_of_change"] = df["points_per_board"] / total if total else math.nan
    df.insert(0, "reference", ref.label)
    df.insert(0, "run", run.label)
    return df
