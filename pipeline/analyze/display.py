"""Tables formatted for people (the notebook): shares as percentages, counts as integers with
thousands separators, other numbers with two decimals, never scientific notation.

A column is a share when its name says so (``share``, ``share_*``, ``*_share``, ``rel*``), a
count when it holds integers (or is named like one: ``boards``, ``count``, ``rank``...).
"""

from __future__ import annotations

import math
import re
from typing import Any

import pandas as pd

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
        return f"{x * 100:.1f}%"
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
    from pipeline.analyze.report import SUMMARY_ROWS
    from pipeline.analyze.stats import series_labels

    s = summary.copy()
    s["series"] = series_labels(s)
    data = {label: [fmt(v) for v in s[col].tolist()] for col, label, fmt in SUMMARY_ROWS if col in s.columns}
    return pd.DataFrame(data, index=s["series"].tolist()).T
