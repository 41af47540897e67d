"""The report's sections that compare runs: each run against the first with 95% intervals,
runs that hold the same boards compared board by board, and face effects against the first run.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from pipeline.analyze._html import Cell, ci, column_table, esc, field, mono, num, pct, pm, table, whole


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


def _words_cell(text: Any) -> str:
    words = str(text or "").split()
    if not words:
        return ""
    head = " ".join(words[:12])
    more = f" … (+{len(words) - 12})" if len(words) > 12 else ""
    return f'<span class="mono">{esc(head)}{esc(more)}</span>'


# Runs on the same boards: the per-board differences of a run against the reference.
PAIRED_COLUMNS: dict[str, Cell] = {
    "run": field(esc, "run"),
    "against": field(esc, "reference"),
    "boards": field(whole, "boards"),
    "mean difference": lambda r: f"{r['mean_diff']:+,.2f}",
    "95% CI": field(ci, "diff_low", "diff_high"),
    "median": field(num, "median_diff"),
    "10th percentile": field(num, "p10_diff"),
    "90th percentile": field(num, "p90_diff"),
    "boards higher": field(pct, "share_higher"),
    "boards lower": field(pct, "share_lower"),
    "unchanged": field(pct, "share_same"),
}

# The boards that change most, and (where the runs kept their word lists) the words behind it.
PAIRED_BOARD_COLUMNS: dict[str, Cell] = {
    "run": field(esc, "run"),
    "board id": field(whole, "board_id"),
    "board": field(mono, "board"),
    "score (reference)": field(whole, "score_reference"),
    "score (run)": field(whole, "score_run"),
    "difference": lambda r: f"{int(r['diff']):+,}",
}
WORD_CHANGE_COLUMNS: dict[str, Cell] = {
    "words only this run finds": field(_words_cell, "words_gained"),
    "words only the reference finds": field(_words_cell, "words_lost"),
}

# The words that account for the change.
PAIRED_WORD_COLUMNS: dict[str, Cell] = {
    "run": field(esc, "run"),
    "word": field(mono, "word"),
    "boards (reference)": field(whole, "boards_reference"),
    "boards (run)": field(whole, "boards_run"),
    "points per board": lambda r: f"{r['points_per_board']:+.3f}",
    "share of the change": field(pct, "share_of_change"),
}


def paired_section(paired: pd.DataFrame, boards: pd.DataFrame, words: pd.DataFrame, fig: str) -> str:
    out = (
        "<p>These runs hold the same boards (same dice, shape, count and seed: checked board by "
        "board), so each board's score can be compared directly, and the interval is that of the "
        "per-board differences.</p>"
        + fig
        + column_table(PAIRED_COLUMNS, paired.to_dict("records"), left=2, sortable=True)
    )
    if len(boards):
        columns = {**PAIRED_BOARD_COLUMNS, **(WORD_CHANGE_COLUMNS if "words_gained" in boards else {})}
        out += "<h3>The boards that change most</h3>" + column_table(
            columns,
            boards.to_dict("records"),
            left=3,
            text_cols=[6, 7],
            sortable=True,
            table_id="paired-boards",
        )
    if len(words):
        out += (
            "<h3>The words that account for the change</h3><p>Points per board each word adds "
            "(found on more boards) or takes away; summed over every word this is the mean "
            "difference exactly.</p>"
            + column_table(PAIRED_WORD_COLUMNS, words.to_dict("records"), left=2, sortable=True)
        )
    return out


def _share_of_mean(x: Any) -> str:
    return "–" if pd.isna(x) else f"{float(x) * 100:+.1f}%"


# A face's effect in a run against the first run: in points, and as a share of the mean score.
FACE_CHANGE_COLUMNS: dict[str, Cell] = {
    "run": field(esc, "run"),
    "face": field(mono, "face"),
    "effect": field(esc, "kind"),
    "first run (points)": field(num, "reference_effect", digits=1),
    "this run (points)": field(num, "effect", digits=1),
    "difference (± 95%)": field(pm, "diff", "diff_low", "diff_high", digits=1),
    "first run (% of mean)": field(_share_of_mean, "rel_reference"),
    "this run (% of mean)": field(_share_of_mean, "rel_effect"),
    "difference (percentage points, ± 95%)": lambda r: pm(
        r["rel_diff"] * 100, r["rel_low"] * 100, r["rel_high"] * 100, 1
    ),
    "boards": lambda r: "same boards" if r["paired"] else "independent",
}


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
    return (
        "<h3>Face effects against the first run</h3><p>The faces whose effect, as a share of the "
        "mean score, changes most (when every score is scaled, each face keeps its share):</p>"
        f'<ul class="verdicts">{items}</ul>'
        + column_table(
            FACE_CHANGE_COLUMNS, fc.to_dict("records"), left=3, sortable=True, table_id="face-comparisons"
        )
    )
