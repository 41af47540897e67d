"""The report's first screen: per run, the few numbers a designer asks for first.

Each run's mean score with its 95% interval, mean words per board, the share of bad boards
(:mod:`pipeline.analyze._bad`), the pools of Tanglet's word-count bands (the "Boards to serve"
section, :mod:`pipeline.analyze._select`) and the worst die with its value, a model estimate
(:mod:`pipeline.analyze._cells`). Every number is read from the tables the later sections show,
so the first screen and the sections cannot disagree.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import pandas as pd

from pipeline.analyze._compare import run_rows
from pipeline.analyze._inference import mean_interval

if TYPE_CHECKING:
    from pipeline.analyze._stats import Tables

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
    *(f"{p}_{x}" for p in ("pool_easy", "pool_medium", "pool_hard") for x in ("share", "low", "high")),
    # against the first run: the score in points a board, the shares in points (percentage
    # points); paired where the runs hold the same boards or share their draws
    "pairing",
    *(
        f"{c}_change{x}"
        for c in ("score", "bad", "pool_easy", "pool_medium", "pool_hard")
        for x in ("", "_low", "_high")
    ),
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
    # each table split by run once (filtering it again for every run is quadratic in the runs:
    # 200 runs in one report)
    bands = _by_run(tables.serve_bands)
    comparisons = _by_run(tables.comparisons)
    dice_of = _by_run(tables.dice)
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
            row.update(_fields(bad.loc[run], BAD_FIELDS))
        mine = bands.get(run)
        for col, band in POOLS.items():
            got = mine[mine["band"] == band] if mine is not None else _NONE
            row[col] = int(got["in_band"].iloc[0]) if len(got) else math.nan
            for x, src in (("share", "share"), ("low", "share_low"), ("high", "share_high")):
                row[f"{col}_{x}"] = float(got[src].iloc[0]) if len(got) else math.nan
        row.update(_changes(comparisons.get(run), run))
        dice = dice_of.get(run)
        if dice is not None:
            row.update(_fields(dice.sort_values(["value", "die"], kind="stable").iloc[0], WORST_DIE_FIELDS))
        out.append(row)
    return pd.DataFrame(out, columns=HEADLINE_COLUMNS)


def _estimate(names: tuple[str, str, str], col: str) -> dict[str, tuple[str, type]]:
    """The headline's columns ``names`` (an estimate, its 95% interval's low and high end) read
    from a table's ``col``, ``{col}_low`` and ``{col}_high``."""
    return {name: (src, float) for name, src in zip(names, (col, f"{col}_low", f"{col}_high"), strict=True)}


# The headline's columns read from a run's row of the bad-board table and from its worst die's
# row of the dice table: headline column -> (that table's column, type).
BAD_FIELDS: dict[str, tuple[str, type]] = {
    "bad_definition": ("definition", str),
    "bad": ("bad", int),
    **_estimate(("bad_share", "bad_share_low", "bad_share_high"), "share"),
}
WORST_DIE_FIELDS: dict[str, tuple[str, type]] = {
    "worst_die": ("die", int),
    "worst_die_faces": ("faces", str),
    **_estimate(("worst_die_value", "worst_die_low", "worst_die_high"), "value"),
    "model_r2": ("model_r2", float),
}


# The headline's changes, by the comparison keys they are read from.
CHANGES = {"score": "score", "bad": "bad_share", **{p: f"band:{b}" for p, b in POOLS.items()}}


_NONE = pd.DataFrame()  # no rows: a run absent from a table


def _by_run(df: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """``df``'s rows by run (a run without rows: absent)."""
    return {str(run): part for run, part in df.groupby("run", sort=False)} if len(df) else {}


def _changes(mine: pd.DataFrame | None, run: str) -> dict[str, Any]:
    """A later run's changes against the first (``mine``: its rows of the comparisons; None for
    the first run, whose changes are NaN), and how it pairs."""
    out: dict[str, Any] = {"pairing": ""}
    for name, key in CHANGES.items():
        got = mine[mine["key"] == key] if mine is not None else _NONE
        rec = got.iloc[0] if len(got) else None
        for x, src in (("", "diff"), ("_low", "diff_low"), ("_high", "diff_high")):
            out[f"{name}_change{x}"] = float(rec[src]) if rec is not None else math.nan
        if rec is not None and rec["pairing"]:
            out["pairing"] = str(rec["pairing"])
    return out


def _fields(rec: pd.Series, spec: dict[str, tuple[str, type]]) -> dict[str, Any]:
    """``rec``'s values as the headline's columns (a column ``rec`` lacks: NaN)."""
    return {name: kind(rec.get(col, math.nan)) for name, (col, kind) in spec.items()}
