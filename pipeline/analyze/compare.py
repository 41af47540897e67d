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
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from pipeline.analyze.inference import (
    Z95,
    diff_of_means,
    diff_of_shares,
    difference_verdict,
    mean_interval,
    ratio_of_means,
    relative_verdict,
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
    "run", "reference", "metric", "kind", "reference_value", "value", "diff", "diff_low", "diff_high",
    "rel", "rel_low", "rel_high", "verdict",
]  # fmt: skip


def run_rows(summary: pd.DataFrame) -> pd.DataFrame:
    """One summary row per run: its only source, or its ``(all)`` row."""
    multi = summary.groupby("run", sort=False)["source"].transform("nunique") > 1
    keep = (~multi) | (summary["source"] == ALL_SOURCES)
    return summary[keep].drop_duplicates("run").reset_index(drop=True)


def comparisons(summary: pd.DataFrame) -> pd.DataFrame:
    """Every run against the first: differences of means and shares with 95% intervals,
    relative differences of means, and a verdict sentence for each."""
    rows_df = run_rows(summary)
    if len(rows_df) < 2:
        return pd.DataFrame(columns=COMPARISON_COLUMNS)
    ref = rows_df.iloc[0]
    out = []
    for _, cur in rows_df.iloc[1:].iterrows():
        n_a, n_b = float(ref["boards"]), float(cur["boards"])
        for col, what, kind in METRICS:
            rec: dict[str, Any] = {"run": cur["run"], "reference": ref["run"], "metric": what, "kind": kind}
            if kind == "mean":
                a, b = float(ref[f"{col}_mean"]), float(cur[f"{col}_mean"])
                sa, sb = float(ref[f"{col}_std"]), float(cur[f"{col}_std"])
                diff = diff_of_means(a, sa, n_a, b, sb, n_b)
                rel = ratio_of_means(a, sa, n_a, b, sb, n_b)
                verdict = (
                    relative_verdict(str(cur["run"]), what, str(ref["run"]), rel)
                    if col in ("score", "words")
                    else difference_verdict(str(cur["run"]), what, str(ref["run"]), diff)
                )
                rec.update(rel=rel.estimate, rel_low=rel.low, rel_high=rel.high)
            else:
                a, b = float(ref[col]), float(cur[col])
                diff = diff_of_shares(a, n_a, b, n_b)
                verdict = difference_verdict(str(cur["run"]), what, str(ref["run"]), diff, unit="pp")
                rec.update(rel=math.nan, rel_low=math.nan, rel_high=math.nan)
            rec.update(reference_value=a, value=b, diff=diff.estimate, diff_low=diff.low,
                       diff_high=diff.high, verdict=verdict)  # fmt: skip
            out.append(rec)
    return pd.DataFrame(out, columns=COMPARISON_COLUMNS)


FACE_COMPARISON_COLUMNS = [
    "run", "reference", "face", "kind", "reference_effect", "effect", "diff", "diff_low", "diff_high",
    "verdict",
]  # fmt: skip


def face_comparisons(effects: pd.DataFrame) -> pd.DataFrame:
    """Each face's raw and adjusted effect in every run against the first run: the difference
    with its 95% interval (independent runs: the two standard errors, read back from each
    effect's interval, add in quadrature) and a verdict. Faces in the shared face order."""
    if effects.empty:
        return pd.DataFrame(columns=FACE_COMPARISON_COLUMNS)
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
    for run in runs[1:]:
        for face in order:
            a, b = by.get((runs[0], face)), by.get((run, face))
            if a is None or b is None:
                continue
            for kind, col, lo, hi in kinds:
                if col not in a or pd.isna(a[col]) or pd.isna(b[col]):
                    continue
                se_a = (a[hi] - a[lo]) / (2 * Z95)
                se_b = (b[hi] - b[lo]) / (2 * Z95)
                diff = b[col] - a[col]
                half = Z95 * math.sqrt(se_a**2 + se_b**2)
                iv_low, iv_high = diff - half, diff + half
                what = f"face {face} ({kind} effect)"
                more = "more" if diff >= 0 else "less"
                if iv_low > 0 or iv_high < 0:
                    lo_, hi_ = sorted((abs(iv_low), abs(iv_high)))
                    verdict = (
                        f"{run}: {what} is worth {abs(diff):.1f} points {more} than in {runs[0]} "
                        f"(95% CI {lo_:.1f}-{hi_:.1f})"
                    )
                else:
                    verdict = (
                        f"{run}: {what} {abs(diff):.1f} points {more} than in {runs[0]}; "
                        "the 95% CI includes no difference"
                    )
                out.append({"run": run, "reference": runs[0], "face": face, "kind": kind,
                            "reference_effect": a[col], "effect": b[col], "diff": diff,
                            "diff_low": iv_low, "diff_high": iv_high, "verdict": verdict})  # fmt: skip
    return pd.DataFrame(out, columns=FACE_COMPARISON_COLUMNS)


# ---------------------------------------------------------------- paired runs


@dataclass
class PairedTables:
    summary: pd.DataFrame
    histogram: pd.DataFrame
    boards: pd.DataFrame
    words: pd.DataFrame
    notes: list[str] = field(default_factory=list)


PAIRED_SUMMARY_COLUMNS = [
    "run", "reference", "boards", "mean_diff", "diff_low", "diff_high", "sd_diff", "median_diff",
    "p10_diff", "p90_diff", "share_higher", "share_lower", "share_same", "verdict",
]  # fmt: skip


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
            name=str(d.get("name", "boggle")), min_length=int(d.get("min_length", 3)),
            scores={int(k): int(v) for k, v in dict(d.get("scores") or {}).items()} or {3: 1},
            per_letter_from=d.get("per_letter_from"), per_letter=int(d.get("per_letter") or 0),
            revisit=bool(d.get("revisit", False)),
        ).points  # fmt: skip
    except (TypeError, ValueError, AttributeError):
        return None


def paired(con: duckdb.DuckDBPyConnection, runs: Sequence[RunInfo], *, top: int = 10) -> PairedTables:
    """Board-by-board comparison of every later run that holds the first run's boards."""
    empty = PairedTables(
        pd.DataFrame(columns=PAIRED_SUMMARY_COLUMNS),
        pd.DataFrame(columns=["run", "reference", "diff", "boards"]), pd.DataFrame(), pd.DataFrame(),
    )  # fmt: skip
    if len(runs) < 2:
        return empty
    ref = runs[0]
    summaries, hists, tops, words = [], [], [], []
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
        rel = f" ({mean / ref_mean * 100:+.1f}% of its mean)" if ref_mean else ""
        more = "more" if mean >= 0 else "fewer"
        verdict = (
            f"{run.label}: on the same boards, {abs(mean):.2f} {more} points a board than {ref.label}{rel}, "
            f"95% CI {iv.low:+.2f} to {iv.high:+.2f}; {float(c[v > 0].sum()) / n:.0%} of boards "
            f"score higher, {float(c[v < 0].sum()) / n:.0%} lower"
        )
        summaries.append({
            "run": run.label, "reference": ref.label, "boards": n, "mean_diff": mean, "diff_low": iv.low,
            "diff_high": iv.high, "sd_diff": sd, "median_diff": med, "p10_diff": p10, "p90_diff": p90,
            "share_higher": float(c[v > 0].sum()) / n, "share_lower": float(c[v < 0].sum()) / n,
            "share_same": float(c[v == 0].sum()) / n, "verdict": verdict,
        })  # fmt: skip
        hists.append(d.assign(run=run.label, reference=ref.label)[["run", "reference", "diff", "boards"]])
        tops.append(_top_changes(con, ref, run, top))
        if ref.has_words and run.has_words:
            words.append(_word_changes(con, ref, run, n, top))
    if not summaries:
        return empty
    return PairedTables(
        pd.DataFrame(summaries, columns=PAIRED_SUMMARY_COLUMNS), pd.concat(hists, ignore_index=True),
        pd.concat(tops, ignore_index=True), pd.concat(words, ignore_index=True) if words else pd.DataFrame(),
    )  # fmt: skip


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
