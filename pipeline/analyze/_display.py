"""Tables formatted for people (the notebook): shares as percentages, counts as integers with
thousands separators, other numbers with two decimals, never scientific notation.

A column is a share when its name says so (``share``, ``share_*``, ``*_share``, ``rel*``), a
count when it holds integers (or is named like one: ``boards``, ``count``, ``rank``...).
"""

from __future__ import annotations

import math
import os
import re
from typing import Any

import pandas as pd

from pipeline import settings

_SHARE = re.compile(r"(^|_)(share|rel)(_|$)|^share")
_COUNT = re.compile(r"(^|_)(boards|count|rank|words_total|points_total|letters|die|side)(_|$)")


def _fmt_number(v: Any, kind: str) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA:
        return "–"
    try:
        x = float(v)
    except (TypeError, ValueError):
        return str(v)
    if kind == "share":
        from pipeline.analyze._inference import share_text

        return share_text(x)
    if kind == "count":
        return f"{round(x):,}"
    return f"{x:,.2f}"


def column_kind(name: str, series: pd.Series) -> str:
    """``share``, ``count``, ``number`` or ``text`` for a column."""
    if pd.api.types.is_bool_dtype(series) or not pd.api.types.is_numeric_dtype(series):
        return "text"
    if _SHARE.search(name):
        return "share"
    if pd.api.types.is_integer_dtype(series) or _COUNT.search(name):
        return "count"
    return "number"


def pretty(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` as strings formatted by what each column holds; a ``count`` row (as
    ``DataFrame.describe`` makes) is shown as integers."""
    out = pd.DataFrame(index=df.index)
    for col in df.columns:
        kind = column_kind(str(col), df[col])
        out[col] = df[col].map(lambda v, k=kind: _fmt_number(v, k)) if kind != "text" else df[col]
    if "count" in df.index:
        for col in df.columns:
            if pd.api.types.is_numeric_dtype(df[col]):
                out.loc["count", col] = _fmt_number(df.loc["count", col], "count")
    return out


def summary_frame(summary: pd.DataFrame) -> pd.DataFrame:
    """The summary table with metrics as rows and runs as columns, each cell formatted
    (boards as integers, shares as percentages)."""
    from pipeline.analyze._report import SUMMARY_ROWS
    from pipeline.analyze._stats import series_labels

    s = summary.copy()
    s["series"] = series_labels(s)
    data = {label: [fmt(v) for v in s[col].tolist()] for col, label, fmt in SUMMARY_ROWS if col in s.columns}
    return pd.DataFrame(data, index=s["series"].tolist()).T


# Column headers for people; a column not listed reads with its underscores as spaces.
COLUMN_NAMES = {
    "n_words": "words",
    "dead_cells": "dead cells",
    "longest_word": "longest word",
    "words_per_board": "words per board",
    "points_per_board": "points per board",
    "share_of_points": "share of points",
    "share": "share of boards",
    "share_with": "boards with it",
    "effect": "raw effect",
    "effect_low": "raw: 95% low",
    "effect_high": "raw: 95% high",
    "adj_effect": "adjusted effect",
    "adj_low": "adjusted: 95% low",
    "adj_high": "adjusted: 95% high",
    "rank_common": "rank (common words)",
    "zipf": "how common (Zipf)",
    "value": "value (model estimate)",
    "value_low": "value: 95% low",
    "value_high": "value: 95% high",
    "value_corner": "in a corner",
    "value_edge": "on an edge",
    "value_inner": "inside",
    "worst_face": "worst face",
    "best_face": "best face",
    "swing": "best minus worst face",
    "reference_value": "first run",
    "diff": "difference",
    "diff_low": "difference: 95% low",
    "diff_high": "difference: 95% high",
    "rel": "relative",
    "rel_low": "relative: 95% low",
    "rel_high": "relative: 95% high",
}


def header(name: str) -> str:
    """A column's header for people: ``adj_effect`` -> ``adjusted effect``."""
    return COLUMN_NAMES.get(name, name.replace("_", " "))


def readable(df: pd.DataFrame, *, keep_index: bool = False) -> pd.DataFrame:
    """:func:`pretty` with headers for people and a clean 0..n-1 index (``keep_index``: keep a
    meaningful one, as ``describe``'s count/mean/... rows).

    >>> readable(pd.DataFrame({"adj_effect": [1.5], "boards": [3]}, index=[7]))
      adjusted effect boards
    0            1.50      3
    """
    out = pretty(df)
    if not keep_index:
        out = out.reset_index(drop=True)
    return out.rename(columns=lambda c: header(str(c)))


def compare_dirs_from_env(value: str | None = None) -> list[str]:
    """The run directories of ``$BOGGLE_COMPARE_DIRS`` (or ``value``), separated by commas or
    by the path separator (``:``; ``;`` on Windows); empty entries are skipped.

    >>> compare_dirs_from_env("runs/a, runs/b:runs/c")
    ['runs/a', 'runs/b', 'runs/c']
    """
    text = settings.get().compare_dirs if value is None else value
    parts = [p for chunk in text.split(",") for p in chunk.split(os.pathsep)]
    return [p.strip() for p in parts if p.strip()]
