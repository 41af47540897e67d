"""The report's first screen: per run, the few numbers a designer asks for first.

Each run's mean score with its 95% interval, mean words per board, the share of bad boards
(:mod:`pipeline.analyze.bad`), the pools of Tanglet's word-count bands (the "Boards to serve"
section, :mod:`pipeline.analyze.select`) and the worst die with its value, a model estimate
(:mod:`pipeline.analyze.cells`). Every number is read from the tables the later sections show,
so the first screen and the sections cannot disagree.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import pandas as pd

from pipeline.analyze.compare import run_rows
from pipeline.analyze.inference import mean_interval

if TYPE_CHECKING:
    from pipeline.analyze.stats import Tables

HEADLINE_COLUMNS = [
    "run",
    "boards",
    "score_mean",
    "score_low",
    "score_high",
    "words_mean",
    "bad_definition",
    "bad",
    "bad_share",
    "bad_share_low",
    "bad_share_high",
    "pool_easy",
    "pool_medium",
    "pool_hard",
    "worst_die",
    "worst_die_faces",
    "worst_die_value",
    "worst_die_low",
    "worst_die_high",
    "model_r2",
]

# The bands of the "Boards to serve" section, by their preset names.
POOLS = {"pool_easy": "tanglet-easy", "pool_medium": "tanglet-medium", "pool_hard": "tanglet-hard"}


def headline(tables: Tables) -> pd.DataFrame:
    """One row per run (in run order) with the first screen's numbers; NaN where a run has no
    such number (no dice rebuilt, no 4x4 boards for the bands)."""
    rows_df = run_rows(tables.summary)
    out = []
    bad = tables.bad_share.set_index("run") if len(tables.bad_share) else pd.DataFrame()
    bands = tables.serve_bands
    for rec in rows_df.to_dict("records"):
        run = rec["run"]
        iv = mean_interval(float(rec["score_mean"]), float(rec["score_std"]), float(rec["boards"]))
        row: dict[str, Any] = {
            "run": run,
            "boards": int(rec["boards"]),
            "score_mean": iv.estimate,
            "score_low": iv.low,
            "score_high": iv.high,
            "words_mean": float(rec["words_mean"]),
        }
        if run in bad.index:
            row.update(_bad_fields(bad.loc[run]))
        for col, band in POOLS.items():
            got = bands[(bands["run"] == run) & (bands["band"] == band)] if len(bands) else bands
            row[col] = int(got["in_band"].iloc[0]) if len(got) else math.nan
        dice = tables.dice[tables.dice["run"] == run] if len(tables.dice) else tables.dice
        if len(dice):
            row.update(_worst_die_fields(dice.sort_values(["value", "die"], kind="stable").iloc[0]))
        out.append(row)
    return pd.DataFrame(out, columns=HEADLINE_COLUMNS)


def _bad_fields(b: pd.Series) -> dict[str, Any]:
    """A run's row of the bad-board table as the headline's columns."""
    return {
        "bad_definition": str(b["definition"]),
        "bad": int(b["bad"]),
        "bad_share": float(b["share"]),
        "bad_share_low": float(b["share_low"]),
        "bad_share_high": float(b["share_high"]),
    }


def _worst_die_fields(worst: pd.Series) -> dict[str, Any]:
    """The worst die's row of the dice table as the headline's columns."""
    return {
        "worst_die": int(worst["die"]),
        "worst_die_faces": str(worst["faces"]),
        "worst_die_value": float(worst["value"]),
        "worst_die_low": float(worst["value_low"]),
        "worst_die_high": float(worst["value_high"]),
        "model_r2": float(worst.get("model_r2", math.nan)),
    }
