"""Sortable, filterable tables and a zoomable score plot in the report, still one
self-contained file.

The tables are plain HTML (readable without JavaScript, printable); DataTables enhances every
``<table class="dt">`` with sorting by header click, a filter box and paging. Its code and styles
come from the bundle the **itables** package ships (``dt_for_itables``: DataTables with its
extensions, an ES module), embedded in the page: the styles inline, the module as base64 that a
small loader turns into a ``blob:`` URL and imports, so the page needs no network and no server.

The cumulative score distribution is also drawn with **plotly** (zoom into the tail, hover to
read a score's percentile), its plotly.js embedded once (about 4.8 MB); without plotly the
page keeps the static PNG only.
"""

from __future__ import annotations

import base64
import importlib.util
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

# matplotlib's default cycle (C0, C1...), so a run has one colour in every plot of the page.
MATPLOTLIB_COLORS = [
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
]
# Tables with more rows than this get pages.
PAGE = 25

_LOADER = """
(async () => {
  const text = document.getElementById("dt-bundle").textContent.trim();
  const bytes = Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  const url = URL.createObjectURL(new Blob([bytes], { type: "text/javascript" }));
  let DataTable;
  try {
    DataTable = (await import(url)).default;
  } finally {
    URL.revokeObjectURL(url);
  }
  for (const table of document.querySelectorAll("table.dt")) {
    const rows = table.tBodies.length ? table.tBodies[0].rows.length : 0;
    const paged = rows > PAGE && table.dataset.allRows !== "1";
    new DataTable(table, {
      paging: paged, pageLength: PAGE, info: paged, searching: rows > 5,
      order: [], autoWidth: false,
    });
  }
  document.documentElement.dataset.tables = "ready";
})();
"""


def _package_folder(name: str) -> Path | None:
    """An installed package's folder, the package not imported (None: not installed)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


@lru_cache(maxsize=1)
def _bundle() -> tuple[str, str, str] | None:
    """(css, base64 of the JS module, itables version), or None without itables."""
    # the package's folder found without importing it: importing itables imports its sample
    # data frames, and with them polars (0.5 CPU-s of every analysis)
    folder = _package_folder("itables")
    if folder is None:
        return None
    try:
        html = folder / "html"
        js = (html / "dt_bundle.js").read_bytes()
        css = (html / "dt_bundle.css").read_text(encoding="utf-8")
    except OSError:
        return None
    from importlib import metadata

    return css, base64.b64encode(js).decode("ascii"), metadata.version("itables")


def available() -> bool:
    return _bundle() is not None


def head() -> str:
    """The styles of the interactive tables (empty without itables)."""
    b = _bundle()
    return f"<style>{b[0]}</style>" if b else ""


def scripts() -> str:
    """The embedded DataTables module and its loader, for the end of the page."""
    b = _bundle()
    if b is None:
        return ""
    return (
        f'<script type="application/octet-stream" id="dt-bundle">{b[1]}</script>'
        f"<script>{_LOADER.replace('PAGE', str(PAGE))}</script>"
    )


def source_note() -> str:
    b = _bundle()
    tables = (
        "tables: static (itables is not installed)"
        if b is None
        else f"interactive tables: DataTables from itables {b[2]}, embedded (works offline)"
    )
    if not plotly_available():
        return tables
    from importlib import metadata

    return f"{tables}; zoomable score plot: plotly {metadata.version('plotly')}, plotly.js embedded"


def plotly_available() -> bool:
    return _package_folder("plotly") is not None


def plotly_script() -> str:
    """plotly.js, inline (once per page)."""
    import plotly.offline

    return f'<script charset="utf-8">{plotly.offline.get_plotlyjs()}</script>'


@lru_cache(maxsize=2)
def _plotly_template(name: str) -> dict[str, Any]:
    """One of plotly's templates as the JSON plotly ships it (its package data)."""
    import json

    folder = _package_folder("plotly")
    assert folder is not None
    data: dict[str, Any] = json.loads(
        (folder / "package_data" / "templates" / f"{name}.json").read_text("utf-8")
    )
    return data


def score_cdf_figure(counts: pd.DataFrame, labels: list[str]) -> str:
    """A zoomable cumulative score distribution (one line per series) as an HTML div, or ""
    without plotly. ``labels``: the display label of each row of ``counts``."""
    if not plotly_available() or counts.empty:
        return ""
    import plotly.io as pio

    # the figure as plotly's JSON, written out unvalidated: go.Figure's validators load a 0.2 s
    # cache and the template's objects another 0.2 s, for one line plot an analysis
    traces = []
    table = counts.assign(series=labels)
    for name, g in table.groupby("series", sort=False):
        g = g.sort_values("score")
        traces.append(
            {
                "type": "scatter",
                "x": g["score"].tolist(),
                "y": (g["cum_share"] * 100).tolist(),
                "mode": "lines",
                "line": {"shape": "hv"},
                "name": str(name),
                "hovertemplate": "score ≤ %{x}: %{y:.2f}% of boards<extra>%{fullData.name}</extra>",
            }
        )
    layout = {
        "title": {"text": "Cumulative score distribution (drag to zoom, double-click to reset)"},
        "xaxis": {"title": {"text": "score"}},
        "yaxis": {"title": {"text": "boards scoring at most x (%)"}},
        "height": 420,
        "margin": {"l": 60, "r": 20, "t": 50, "b": 50},
        "legend": {"x": 0.98, "xanchor": "right", "y": 0.05},
        "template": _plotly_template("plotly_white"),
        "colorway": MATPLOTLIB_COLORS,
    }
    html: str = pio.to_html(
        {"data": traces, "layout": layout},
        full_html=False,
        include_plotlyjs=False,
        div_id="plotly-score-cdf",
        config={"displaylogo": False},
        validate=False,
    )
    return html
