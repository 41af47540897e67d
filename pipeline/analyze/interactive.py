"""Sortable, filterable tables in the report, still one self-contained file.

The tables are plain HTML (readable without JavaScript, printable); DataTables enhances every
``<table class="dt">`` with sorting by header click, a filter box and paging. Its code and styles
come from the bundle the **itables** package ships (``dt_for_itables``: DataTables with its
extensions, an ES module), embedded in the page: the styles inline, the module as base64 that a
small loader turns into a ``blob:`` URL and imports, so the page needs no network and no server.
"""

from __future__ import annotations

import base64
from functools import lru_cache
from importlib import resources

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
    new DataTable(table, {
      paging: rows > PAGE, pageLength: PAGE, info: rows > PAGE, searching: rows > 5,
      order: [], autoWidth: false,
    });
  }
  document.documentElement.dataset.tables = "ready";
})();
"""


@lru_cache(maxsize=1)
def _bundle() -> tuple[str, str, str] | None:
    """(css, base64 of the JS module, itables version), or None without itables."""
    try:
        html = resources.files("itables").joinpath("html")
        js = html.joinpath("dt_bundle.js").read_bytes()
        css = html.joinpath("dt_bundle.css").read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError, OSError):
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
    if b is None:
        return "tables: static (itables is not installed)"
    return f"interactive tables: DataTables from itables {b[2]}, embedded (works offline)"
