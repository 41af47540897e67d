"""Comparisons between runs with 95% confidence intervals: every run against the first one
given, mean against mean and share against share, each face's raw and adjusted effect too.

Independent runs are compared with the intervals of :mod:`pipeline.analyze._inference` and a
sentence saying what the numbers mean. Runs whose boards are identical, board id by board id,
take the paired intervals of :mod:`pipeline.analyze._paired` instead (which also compares them
board by board).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from typing import Any

import pandas as pd

from pipeline.analyze._inference import (
    Z95,
    diff_of_means,
    diff_of_shares,
    difference_verdict,
    ratio_of_means,
    relative_verdict,
)
from pipeline.analyze._paired import PairedMoments
from pipeline.analyze._paired import paired as paired
from pipeline.analyze._stats import ALL_SOURCES

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
    "key",
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
    "pairing",
]


def run_rows(summary: pd.DataFrame) -> pd.DataFrame:
    """One summary row per run: its only source, or its ``(all)`` row."""
    multi = summary.groupby("run", sort=False)["source"].transform("nunique") > 1
    keep = (~multi) | (summary["source"] == ALL_SOURCES)
    return summary[keep].drop_duplicates("run").reset_index(drop=True)


def comparisons(
    summary: pd.DataFrame,
    paired_moments: Mapping[str, Mapping[str, PairedMoments]] | None = None,
    shares: Mapping[str, Mapping[str, float]] | None = None,
    share_names: Mapping[str, str] | None = None,
    pairing: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Every run against the first: differences of means and shares with 95% intervals,
    relative differences of means, and a verdict sentence for each. A run in
    ``paired_moments`` (run -> metric -> moments) pairs with the first run (``pairing``: run ->
    "boards" for the same boards, "draws" for the same draws): its intervals are the paired
    ones (column ``paired``). ``shares`` (run -> metric -> share) adds the shares the summary
    lacks (the bad boards, each band's), named in sentences by ``share_names``."""
    rows_df = run_rows(summary)
    if len(rows_df) < 2:
        return pd.DataFrame(columns=COMPARISON_COLUMNS)
    ref = rows_df.iloc[0]
    extra = [(col, what, "share") for col, what in (share_names or {}).items()]
    out = []
    for _, cur in rows_df.iloc[1:].iterrows():
        n_a, n_b = float(ref["boards"]), float(cur["boards"])
        moments = (paired_moments or {}).get(str(cur["run"]), {})
        both = {**dict(ref), **(shares or {}).get(str(ref["run"]), {})}
        this = {**dict(cur), **(shares or {}).get(str(cur["run"]), {})}
        for col, what, kind in [*METRICS, *extra]:
            if kind == "share" and (col not in both or col not in this):
                continue
            rec: dict[str, Any] = {
                "run": cur["run"],
                "reference": ref["run"],
                "key": col,
                "metric": what,
                "kind": kind,
            }
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
                a, b = float(both[col]), float(this[col])
                diff = pm_.diff() if pm_ else diff_of_shares(a, n_a, b, n_b)
                verdict = difference_verdict(str(cur["run"]), what, str(ref["run"]), diff, unit="points")
                rec.update(rel=math.nan, rel_low=math.nan, rel_high=math.nan)
            kind_of = (pairing or {}).get(str(cur["run"]), "boards") if pm_ else ""
            if pm_:
                verdict += " (same boards)" if kind_of == "boards" else " (same draws)"
            rec.update(
                reference_value=a,
                value=b,
                diff=diff.estimate,
                diff_low=diff.low,
                diff_high=diff.high,
                verdict=verdict,
                paired=bool(pm_),
                pairing=kind_of,
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


# (kind, effect column, its interval's low and high columns) of each face effect compared
EFFECT_KINDS = [
    ("adjusted", "adj_effect", "adj_low", "adj_high"),
    ("raw", "effect", "effect_low", "effect_high"),
]
DIFF_KEYS = ("diff", "diff_low", "diff_high", "rel_diff", "rel_low", "rel_high")


def face_comparisons(
    effects: pd.DataFrame,
    means: Mapping[str, float] | None = None,
    paired_effects: Mapping[str, pd.DataFrame] | None = None,
) -> pd.DataFrame:
    """Each face's raw and adjusted effect in every run against the first run: the difference
    with its 95% interval and a verdict; also each effect as a share of its run's mean score
    (``means``: run -> mean score), so that scaling every score reads as scaling and not as a
    change of face value. Independent runs: the two standard errors, read back from each
    effect's interval, add in quadrature. A run in ``paired_effects`` (run -> its paired face
    effects, :attr:`pipeline.analyze._paired.PairedTables.face_effects`) holds the first run's
    boards: its intervals are the paired ones. Faces in the shared face order."""
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
    out = []
    for run in runs[1:]:
        pe = (paired_effects or {}).get(run)
        pby = {(r["face"], r["kind"]): r for r in pe.to_dict("records")} if pe is not None else {}
        scale = (float(means.get(runs[0], math.nan)), float(means.get(run, math.nan)))
        for face in order:
            a, b = by.get((runs[0], face)), by.get((run, face))
            if a is not None and b is not None:
                out += _face_rows(run, runs[0], face, (a, b), scale, pby)
    return pd.DataFrame(out, columns=FACE_COMPARISON_COLUMNS)


def _face_rows(
    run: str,
    reference: str,
    face: str,
    effects: tuple[Mapping[Hashable, Any], Mapping[Hashable, Any]],
    means: tuple[float, float],
    paired_by: Mapping[tuple[Any, Any], Mapping[Hashable, Any]],
) -> list[dict[str, Any]]:
    """One face's rows (adjusted, raw) of :func:`face_comparisons`: ``effects`` are the
    reference's and the run's rows, ``means`` their mean scores, ``paired_by`` the paired
    differences by (face, kind) when the runs hold the same boards."""
    (a, b), (m_a, m_b) = effects, means
    out = []
    for kind, col, lo, hi in EFFECT_KINDS:
        if col not in a or pd.isna(a[col]) or pd.isna(b[col]):
            continue
        rec: dict[str, Any] = {
            "run": run,
            "reference": reference,
            "face": face,
            "kind": kind,
            "reference_effect": a[col],
            "effect": b[col],
            "rel_reference": a[col] / m_a if m_a else math.nan,
            "rel_effect": b[col] / m_b if m_b else math.nan,
        }
        got = paired_by.get((face, kind))
        if got is not None:
            rec.update({k: got[k] for k in DIFF_KEYS}, paired=True)
        else:
            se = ((a[hi] - a[lo]) / (2 * Z95), (b[hi] - b[lo]) / (2 * Z95))
            rec.update(
                _independent_diff(b[col] - a[col], rec["rel_effect"] - rec["rel_reference"], se, means)
            )
        rec["verdict"] = _face_verdict(rec)
        out.append(rec)
    return out


def _independent_diff(
    diff: float, rel: float, se: tuple[float, float], means: tuple[float, float]
) -> dict[str, Any]:
    """The intervals of two independent effects' difference (``diff``) and of the difference of
    their shares of the mean score (``rel``): the standard errors ``se`` add in quadrature."""
    (se_a, se_b), (m_a, m_b) = se, means
    half = Z95 * math.sqrt(se_a**2 + se_b**2)
    rel_half = Z95 * math.sqrt((se_a / m_a) ** 2 + (se_b / m_b) ** 2) if m_a and m_b else math.nan
    return {
        "diff": diff,
        "diff_low": diff - half,
        "diff_high": diff + half,
        "rel_diff": rel,
        "rel_low": rel - rel_half,
        "rel_high": rel + rel_half,
        "paired": False,
    }
