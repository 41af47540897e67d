"""Figures on a matplotlib Agg canvas: a new figure, its PNG bytes (for notebooks and
embedding) or file (atomically), the colour cycle, and the picture of a board.

Figures are built with :class:`matplotlib.figure.Figure` on an Agg canvas rather than pyplot,
so no global backend or figure registry is touched (safe in notebooks, threads and tests).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from pipeline.boards import BLANK, parse_compact
from pipeline.io import atomic_path

DPI = 100


def new_figure(width: float = 9.0, height: float = 4.5) -> Figure:
    fig = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def png_bytes(fig: Figure) -> bytes:
    """The figure as PNG bytes (for notebooks and embedding)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI)
    return buf.getvalue()


def save_png(fig: Figure, path: Path) -> Path:
    """Write the figure as a PNG, atomically."""
    data = png_bytes(fig)
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)
    return path


def series_colors(n: int) -> list[Any]:
    """One colour of matplotlib's cycle per series (``C0`` ... ``C9``, then again)."""
    return [f"C{i % 10}" for i in range(n)]


def face_label(face: str) -> str:
    """A face as printed on a die (``Qu``, ``Th``; a blank as ``·``)."""
    return face[:1].upper() + face[1:] if face else "·"


def board_plot(board: str, rows: int, cols: int, *, title: str = "") -> Figure:
    """Render a compact board as a grid of dice faces (Qu capitalised, blanks shaded)."""
    parsed = parse_compact(board, (int(rows), int(cols)))
    cell = min(0.9, 7.0 / max(parsed.rows, parsed.cols))
    fig = new_figure(max(3.0, cell * parsed.cols + 0.4), max(3.0, cell * parsed.rows + 0.9))
    ax = fig.subplots()
    font = max(4.0, 30 * cell)
    for r in range(parsed.rows):
        for c in range(parsed.cols):
            face = parsed.face(r, c)
            y = parsed.rows - 1 - r
            blank = face == BLANK
            ax.add_patch(_rounded(c + 0.06, y + 0.06, 0.88, 0.88, "#555555" if blank else "#f6ecd2"))
            if not blank:
                text = face_label(face)
                size = font * (0.75 if len(text) > 1 else 1.0)
                ax.text(
                    c + 0.5,
                    y + 0.47,
                    text,
                    ha="center",
                    va="center",
                    fontsize=size,
                    fontweight="bold",
                    color="#222222",
                )
    ax.set_xlim(0, parsed.cols)
    ax.set_ylim(0, parsed.rows)
    ax.set_aspect("equal")
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize="medium")
    return fig


def _rounded(x: float, y: float, w: float, h: float, color: str) -> Any:
    from matplotlib.patches import FancyBboxPatch

    return FancyBboxPatch(
        (x, y),
        w,
        h,
        boxstyle="round,pad=0,rounding_size=0.12",
        facecolor=color,
        edgecolor="#8a7a55",
        linewidth=1.2,
    )
