"""HTML building blocks of the report: escaping, number formats and tables."""

from __future__ import annotations

import html
import math
import re
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any

# A cell that starts with a value to sort by (see :func:`pm`).
_SORT_VALUE = re.compile(r'<span class="ci" data-value="([^"]+)">')

__all__ = [
    "Cell",
    "Record",
    "ci",
    "column_table",
    "esc",
    "field",
    "mono",
    "num",
    "pct",
    "pct_ci",
    "pm",
    "table",
    "whole",
]

Record = Mapping[Hashable, Any]  # a table's row, as DataFrame.to_dict("records") gives it
Cell = Callable[[Record], str]  # what a column of a table shows of a row


def _missing(value: Any) -> bool:
    """None, NaN, or pandas' NA (which no float takes)."""
    try:
        return value is None or math.isnan(float(value))
    except TypeError:
        return True


def esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def mono(value: Any) -> str:
    """Text in the monospace face of boards and words (escaped)."""
    return f'<span class="mono">{esc(value)}</span>'


def num(value: Any, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    # a whole number prints without decimals whatever ``digits`` asks (153, not 153.00)
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return f"{int(value):,}"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    try:
        as_float = float(value)
    except (TypeError, ValueError):
        return esc(value)
    if as_float.is_integer() and not isinstance(value, float):
        return f"{int(as_float):,}"
    return f"{as_float:,.{digits}f}"


def whole(value: Any) -> str:
    """A count: :func:`num` without decimals."""
    return num(value, 0)


def pct(value: Any) -> str:
    """A share as a percentage: ``<0.1%`` / ``>99.9%`` rather than a rounded 0% or 100%."""
    from pipeline.analyze._inference import share_text

    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return share_text(float(value))


def ci(low: Any, high: Any, digits: int = 2) -> str:
    """A 95% interval ``"a to b"`` on one line (never wrapped inside a table cell)."""
    if low is None or high is None or math.isnan(float(low)) or math.isnan(float(high)):
        return ""
    return f'<span class="ci">{num(float(low), digits)} to {num(float(high), digits)}</span>'


def pct_ci(low: Any, high: Any) -> str:
    """A 95% interval of a share, ``"1.20% to 3.40%"``, on one line."""
    if _missing(low) or _missing(high):
        return ""
    return f'<span class="ci">{float(low) * 100:.2f}% to {float(high) * 100:.2f}%</span>'


def pm(estimate: Any, low: Any, high: Any, digits: int = 2) -> str:
    """An estimate with its symmetric 95% interval, ``"10.5 ± 0.4"``, on one line."""
    if estimate is None or math.isnan(float(estimate)):
        return "–"
    # data-value: what the interactive table sorts the cell by (the estimate, not the text)
    text = f"{float(estimate):,.{digits}f}"
    if low is not None and high is not None and not math.isnan(float(low)) and not math.isnan(float(high)):
        text += f" ± {(float(high) - float(low)) / 2:,.{digits}f}"
    return f'<span class="ci" data-value="{float(estimate)!r}">{text}</span>'


def table(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    left: int = 0,
    text_cols: Sequence[int] = (),
    *,
    sortable: bool = False,
    row_classes: Sequence[str] | None = None,
    table_id: str = "",
    all_rows: bool = False,
) -> str:
    """An HTML table from already-escaped cells; the first ``left`` columns and ``text_cols``
    are left-aligned (numbers stay right-aligned). ``sortable`` marks it for DataTables (see
    :mod:`pipeline.analyze._interactive`), whose numeric sort needs empty cells, not dashes;
    ``all_rows`` keeps every row on one page (a table whose last rows matter, as the worst faces)."""

    def cls(i: int) -> str:
        return ' class="l"' if i < left or i in text_cols else ""

    head = "".join(f"<th{cls(i)}>{esc(h)}</th>" for i, h in enumerate(header))
    thead = f"<thead><tr>{head}</tr></thead>" if any(header) else ""
    classes = list(row_classes) if row_classes is not None else [""] * len(rows)

    def cell(c: str) -> str:
        return "" if sortable and c == "–" else c

    # DataTables reads data-order for a column only when its first row has one: so every cell of
    # a column with a sort value gets one (empty for an empty cell)
    values = [[_SORT_VALUE.match(c) if sortable else None for c in row] for row in rows]
    ordered = {i for row in values for i, got in enumerate(row) if got}

    def order(i: int, got: re.Match[str] | None) -> str:
        if i not in ordered:
            return ""
        return f' data-order="{got.group(1) if got else ""}"'

    body = "".join(
        (f'<tr class="{rc}">' if rc else "<tr>")
        + "".join(
            f"<td{cls(i)}{order(i, v)}>{cell(c)}</td>" for i, (c, v) in enumerate(zip(row, vr, strict=True))
        )
        + "</tr>"
        for row, vr, rc in zip(rows, values, classes, strict=True)
    )
    attrs = (' class="dt"' if sortable else "") + (f' id="{table_id}"' if table_id else "")
    attrs += ' data-all-rows="1"' if all_rows else ""
    return f"<table{attrs}>{thead}<tbody>{body}</tbody></table>"


def field(fmt: Callable[..., str], *keys: str, **options: Any) -> Cell:
    """A column that shows ``fmt`` of a row's values at ``keys`` (``options``: ``fmt``'s other
    arguments), as ``field(ci, "low", "high", digits=0)``."""
    return lambda r: fmt(*(r[k] for k in keys), **options)


def column_table(columns: Mapping[str, Cell], records: Iterable[Record], **options: Any) -> str:
    """:func:`table` of ``records`` with a column per entry of ``columns``: its header, and what
    it shows of a row; ``options``: the table's (``left``, ``sortable``, ...)."""
    return table(list(columns), [[cell(r) for cell in columns.values()] for r in records], **options)
