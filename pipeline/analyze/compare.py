"""Comparisons between runs with 95% confidence intervals, and paired comparisons of runs that
hold the same boards (same dice, shape, count, chunk size and seed; another lexicon or rules).

Independent runs are compared mean against mean and share against share (each run against the
first one given), with the intervals of :mod:`pipeline.analyze.inference` and a sentence saying
what the numbers mean. Runs whose boards are identical, board id by board id, are also compared
board by board: the distribution of the per-board score difference, the boards that change most
and the words that account for the change.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from pipeline.analyze.cells import read_board_faces
from pipeline.analyze.inference import (
    Z95,
    Interval,
    diff_of_means,
    diff_of_shares,
    difference_verdict,
    mean_interval,
    ratio_of_means,
    relative_verdict,
    share_text,
)
from pipeline.analyze.runs import query
from pipeline.analyze.stats import ALL_SOURCES, quantiles_from_counts
from pipeline.analyze.words import word_counts

if TYPE_CHECKING:
    import duckdb

    from pipeline.analyze.runs import RunInfo

# (column, name in a sentence, kind): kind "mean" compares means (relative and absolute),
# "share" compares shares in percentage points.
METRICS: list[tuple[str, str, str]] = [
    ("score", "mean score", "mean"),
    ("words", "mean word count", "mean"),
    ("longest_len", "mean longest word (letters)", "mean"),
    ("dead_cells", "mean dead cells", "mean"),
    ("share_lt10_words", "share of boards under 10 words", "share"),
    ("share_dead_ge1", "share of boards with a dead cell", "share"),
]

COMPARISON_COLUMNS = [
    "run",
    "reference",
    "metric",
    "kind",
    "reference_value",
    "value",
    "diff",
    "diff_low",
    "diff_high",
    "rel",
    "rel_low",
    "rel_high",
    "verdict",
    "paired",
]


def run_rows(summary: pd.DataFrame) -> pd.DataFrame:
    """One summary row per run: its only source, or its ``(all)`` row."""
    multi = summary.groupby("run", sort=False)["source"].transform("nunique") > 1
    keep = (~multi) | (summary["source"] == ALL_SOURCES)
    return summary[keep].drop_duplicates("run").reset_index(drop=True)


# Each metric of METRICS as a per-board SQL expression, for the paired comparisons.
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


def comparisons(
    summary: pd.DataFrame, paired_moments: Mapping[str, Mapping[str, PairedMoments]] | None = None
) -> pd.DataFrame:
    """Every run against the first: differences of means and shares with 95% intervals,
    relative differences of means, and a verdict sentence for each. A run in
    ``paired_moments`` (run -> metric -> moments) holds the first run's boards: its intervals
    are the paired ones (column ``paired``)."""
    rows_df = run_rows(summary)
    if len(rows_df) < 2:
        return pd.DataFrame(columns=COMPARISON_COLUMNS)
    ref = rows_df.iloc[0]
    out = []
    for _, cur in rows_df.iloc[1:].iterrows():
        n_a, n_b = float(ref["boards"]), float(cur["boards"])
        moments = (paired_moments or {}).get(str(cur["run"]), {})
        for col, what, kind in METRICS:
            rec: dict[str, Any] = {"run": cur["run"], "reference": ref["run"], "metric": what, "kind": kind}
            pm_ = moments.get(col)
            if kind == "mean":
                a, b = float(ref[f"{col}_mean"]), float(cur[f"{col}_mean"])
                sa, sb = float(ref[f"{col}_std"]), float(cur[f"{col}_std"])
                diff = pm_.diff() if pm_ else diff_of_means(a, sa, n_a, b, sb, n_b)
                rel = pm_.ratio() if pm_ else ratio_of_means(a, sa, n_a, b, sb, n_b)
                verdict = (
                    relative_verdict(str(cur["run"]), what, str(ref["run"]), rel)
                    if col in ("score", "words")
                    else difference_verdict(str(cur["run"]), what, str(ref["run"]), diff)
                )
                rec.update(rel=rel.estimate, rel_low=rel.low, rel_high=rel.high)
            else:
                a, b = float(ref[col]), float(cur[col])
                diff = pm_.diff() if pm_ else diff_of_shares(a, n_a, b, n_b)
                verdict = difference_verdict(str(cur["run"]), what, str(ref["run"]), diff, unit="points")
                rec.update(rel=math.nan, rel_low=math.nan, rel_high=math.nan)
            if pm_:
                verdict += " (same boards)"
            rec.update(
                reference_value=a,
                value=b,
                diff=diff.estimate,
                diff_low=diff.low,
                diff_high=diff.high,
                verdict=verdict,
                paired=bool(pm_),
            )
            out.append(rec)
    return pd.DataFrame(out, columns=COMPARISON_COLUMNS)


FACE_COMPARISON_COLUMNS = [
    "run",
    "reference",
    "face",
    "kind",
    "reference_effect",
    "effect",
    "diff",
    "diff_low",
    "diff_high",
    "rel_reference",
    "rel_effect",
    "rel_diff",
    "rel_low",
    "rel_high",
    "paired",
    "verdict",
]


def _face_verdict(rec: Mapping[str, Any]) -> str:
    run, ref, face, kind = rec["run"], rec["reference"], rec["face"], rec["kind"]
    diff, low, high = float(rec["diff"]), float(rec["diff_low"]), float(rec["diff_high"])
    what = f"face {face} ({kind} effect)"
    more = "more" if diff >= 0 else "less"
    same = ", same boards" if rec["paired"] else ""
    if low > 0 or high < 0:
        lo_, hi_ = sorted((abs(low), abs(high)))
        text = (
            f"{run}: {what} is worth {abs(diff):.1f} points {more} than in {ref} "
            f"(95% CI {lo_:.1f} to {hi_:.1f}{same})"
        )
    else:
        text = f"{run}: {what} {abs(diff):.1f} points {more} than in {ref}; the 95% CI includes no difference"
    if not math.isnan(float(rec["rel_diff"])):
        text += (
            f"; as a share of the mean score {float(rec['rel_reference']) * 100:.1f}% in {ref}, "
            f"{float(rec['rel_effect']) * 100:.1f}% here"
        )
        if rec["rel_low"] <= 0 <= rec["rel_high"]:
            text += " (no real change: the points change only as every score scales)"
    return text


def face_comparisons(
    effects: pd.DataFrame,
    means: Mapping[str, float] | None = None,
    paired_effects: Mapping[str, pd.DataFrame] | None = None,
) -> pd.DataFrame:
    """Each face's raw and adjusted effect in every run against the first run: the difference
    with its 95% interval and a verdict; also each effect as a share of its run's mean score
    (``means``: run -> mean score), so that scaling every score reads as scaling and not as a
    change of face value. Independent runs: the two standard errors, read back from each
    effect's interval, add in quadrature. A run in ``paired_effects`` (run -> the frame of
    :func:`paired_face_effects`) holds the first run's boards: its intervals are the paired
    ones. Faces in the shared face order."""
    if effects.empty:
        return pd.DataFrame(columns=FACE_COMPARISON_COLUMNS)
    means = means or {}
    rows_df = effects[effects["source"] != ALL_SOURCES]
    multi = rows_df.groupby("run", sort=False)["source"].transform("nunique") > 1
    rows_df = rows_df[~multi]  # runs of several sources: compared per run only in the summary
    runs = list(dict.fromkeys(rows_df["run"]))
    if len(runs) < 2:
        return pd.DataFrame(columns=FACE_COMPARISON_COLUMNS)
    by = {(r["run"], r["face"]): r for r in rows_df.to_dict("records")}
    order: list[str] = (
        rows_df.sort_values(["face_order", "face"])["face"].drop_duplicates().tolist()
        if "face_order" in rows_df
        else list(dict.fromkeys(rows_df["face"]))
    )
    kinds = [
        ("adjusted", "adj_effect", "adj_low", "adj_high"),
        ("raw", "effect", "effect_low", "effect_high"),
    ]
    out = []
    m_a = float(means.get(runs[0], math.nan))
    for run in runs[1:]:
        m_b = float(means.get(run, math.nan))
        pe = (paired_effects or {}).get(run)
        pby = {(r["face"], r["kind"]): r for r in pe.to_dict("records")} if pe is not None else {}
        for face in order:
            a, b = by.get((runs[0], face)), by.get((run, face))
            if a is None or b is None:
                continue
            for kind, col, lo, hi in kinds:
                if col not in a or pd.isna(a[col]) or pd.isna(b[col]):
                    continue
                se_a = (a[hi] - a[lo]) / (2 * Z95)
                se_b = (b[hi] - b[lo]) / (2 * Z95)
                rec: dict[str, Any] = {
                    "run": run,
                    "reference": runs[0],
                    "face": face,
                    "kind": kind,
                    "reference_effect": a[col],
                    "effect": b[col],
                    "rel_reference": a[col] / m_a if m_a else math.nan,
                    "rel_effect": b[col] / m_b if m_b else math.nan,
                }
                got = pby.get((face, kind))
                if got is not None:
                    rec.update(
                        {
                            k: got[k]
                            for k in ("diff", "diff_low", "diff_high", "rel_diff", "rel_low", "rel_high")
                        }
                    )
                    rec["paired"] = True
                else:
                    diff = b[col] - a[col]
                    half = Z95 * math.sqrt(se_a**2 + se_b**2)
                    rel = rec["rel_effect"] - rec["rel_reference"]
                    rel_half = (
                        Z95 * math.sqrt((se_a / m_a) ** 2 + (se_b / m_b) ** 2) if m_a and m_b else math.nan
                    )
                    rec.update(
                        diff=diff,
                        diff_low=diff - half,
                        diff_high=diff + half,
                        rel_diff=rel,
                        rel_low=rel - rel_half,
                        rel_high=rel + rel_half,
                        paired=False,
                    )
                rec["verdict"] = _face_verdict(rec)
                out.append(rec)
    return pd.DataFrame(out, columns=FACE_COMPARISON_COLUMNS)


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


# ---------------------------------------------------------------- paired runs


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
