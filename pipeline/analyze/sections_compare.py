"""The report's sections that compare runs: each run against the first with 95% intervals,
runs that hold the same boards compared board by board, and face effects against the first run.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from pipeline.analyze.html import ci, esc, mono, num, pct, pm, table


def comparisons_section(comparisons: pd.DataFrame) -> str:
    rows = []
    for r in comparisons.to_dict("records"):
        share = r["kind"] == "share"
        fmt = pct if share else num
        scale = 100 if share else 1
        diff = f"{r['diff'] * scale:+,.2f}"
        rel = "" if pd.isna(r["rel"]) else f"{r['rel'] * 100:+.1f}%"
        rel_ci = "" if pd.isna(r["rel"]) else ci(r["rel_low"] * 100, r["rel_high"] * 100, 1)
        how = "same boards" if r.get("paired") else "independent"
        rows.append(
            [
                esc(r["run"]),
                esc(r["reference"]),
                esc(r["metric"]),
                fmt(r["reference_value"]),
                fmt(r["value"]),
                diff,
                ci(r["diff_low"] * scale, r["diff_high"] * scale),
                rel,
                rel_ci,
                esc(how),
            ]
        )
    header = [
        "run",
        "against",
        "metric",
        "reference",
        "run value",
        "difference",
        "95% CI",
        "relative (%)",
        "95% CI (relative, %)",
        "boards",
    ]
    return (
        "<p>Each run against the first one given. Differences of shares are in percentage points. "
        "Runs that hold the same boards are compared board by board (<i>same boards</i>); the "
        "others as independent samples. The verdicts are above the table of contents.</p>"
        + table(header, rows, left=3, sortable=True, table_id="comparisons")
    )


def paired_section(paired: pd.DataFrame, boards: pd.DataFrame, words: pd.DataFrame, fig: str) -> str:
    rows = []
    for r in paired.to_dict("records"):
        rows.append(
            [
                esc(r["run"]),
                esc(r["reference"]),
                num(r["boards"], 0),
                f"{r['mean_diff']:+,.2f}",
                (ci(r["diff_low"], r["diff_high"])),
                num(r["median_diff"]),
                num(r["p10_diff"]),
                num(r["p90_diff"]),
                pct(r["share_higher"]),
                pct(r["share_lower"]),
                pct(r["share_same"]),
            ]
        )
    header = [
        "run",
        "against",
        "boards",
        "mean difference",
        "95% CI",
        "median",
        "10th percentile",
        "90th percentile",
        "boards higher",
        "boards lower",
        "unchanged",
    ]
    out = (
        "<p>These runs hold the same boards (same dice, shape, count and seed: checked board by "
        "board), so each board's score can be compared directly, and the interval is that of the "
        "per-board differences.</p>" + fig + table(header, rows, left=2, sortable=True)
    )
    if len(boards):
        has_words = "words_gained" in boards
        brows = []
        for r in boards.to_dict("records"):
            row = [
                esc(r["run"]),
                num(r["board_id"], 0),
                mono(r["board"]),
                num(r["score_reference"], 0),
                num(r["score_run"], 0),
                f"{int(r['diff']):+,}",
            ]
            if has_words:
                row += [_words_cell(r["words_gained"]), _words_cell(r["words_lost"])]
            brows.append(row)
        bh = ["run", "board id", "board", "score (reference)", "score (run)", "difference"]
        bh += ["words only this run finds", "words only the reference finds"] if has_words else []
        out += "<h3>The boards that change most</h3>" + table(
            bh, brows, left=3, text_cols=[6, 7], sortable=True, table_id="paired-boards"
        )
    if len(words):
        wrows = [
            [
                esc(r["run"]),
                mono(r["word"]),
                num(r["boards_reference"], 0),
                num(r["boards_run"], 0),
                f"{r['points_per_board']:+.3f}",
                pct(r["share_of_change"]),
            ]
            for r in words.to_dict("records")
        ]
        wh = ["run", "word", "boards (reference)", "boards (run)", "points per board", "share of the change"]
        out += (
            "<h3>The words that account for the change</h3><p>Points per board each word adds "
            "(found on more boards) or takes away; summed over every word this is the mean "
            "difference exactly.</p>" + table(wh, wrows, left=2, sortable=True)
        )
    return out


def _words_cell(text: Any) -> str:
    words = str(text or "").split()
    if not words:
        return ""
    head = " ".join(words[:12])
    more = f" … (+{len(words) - 12})" if len(words) > 12 else ""
    return f'<span class="mono">{esc(head)}{esc(more)}</span>'


def face_comparisons_section(fc: pd.DataFrame, shown: int = 5) -> str:
    """The faces whose adjusted effect, as a share of the mean score, differs most between
    runs (verdicts), then every face's raw and adjusted difference against the first run in a
    sortable table: in points and as a share of each run's mean score (so scaling every score
    reads as scaling, not as a change of face value)."""
    if fc.empty:
        return ""
    adj = fc[fc["kind"] == "adjusted"]
    key = adj["rel_diff"].abs() if "rel_diff" in adj else adj["diff"].abs()
    top = adj.assign(_abs=key).sort_values("_abs", ascending=False).head(shown)
    items = "".join(f"<li>{esc(v)}</li>" for v in top["verdict"])
    rows = [
        [
            esc(r["run"]),
            mono(r["face"]),
            esc(r["kind"]),
            num(r["reference_effect"], 1),
            num(r["effect"], 1),
            pm(r["diff"], r["diff_low"], r["diff_high"], 1),
            _share_of_mean(r["rel_reference"]),
            _share_of_mean(r["rel_effect"]),
            pm(r["rel_diff"] * 100, r["rel_low"] * 100, r["rel_high"] * 100, 1),
            "same boards" if r["paired"] else "independent",
        ]
        for r in fc.to_dict("records")
    ]
    header = [
        "run",
        "face",
        "effect",
        "first run (points)",
        "this run (points)",
        "difference (± 95%)",
        "first run (% of mean)",
        "this run (% of mean)",
        "difference (percentage points, ± 95%)",
        "boards",
    ]
    return (
        "<h3>Face effects against the first run</h3><p>The faces whose effect, as a share of the "
        "mean score, changes most (when every score is scaled, each face keeps its share):</p>"
        f'<ul class="verdicts">{items}</ul>'
        + table(header, rows, left=3, sortable=True, table_id="face-comparisons")
    )


def _share_of_mean(x: Any) -> str:
    return "–" if pd.isna(x) else f"{float(x) * 100:+.1f}%"
