"""Plots of the summary tables (matplotlib, Agg canvas, PNG).

Figures are built with :class:`matplotlib.figure.Figure` on an Agg canvas rather than pyplot,
so no global backend or figure registry is touched (safe in notebooks, threads and tests).
Every function takes the small tables of :mod:`pipeline.analyze.stats`, never raw boards.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from pipeline.analyze.stats import ALL_SOURCES, Tables, series_labels
from pipeline.boards import BLANK, parse_compact
from pipeline.io import atomic_path

DPI = 100
# Beyond this many faces the face-effect plot keeps the strongest effects only.
MAX_FACES_SHOWN = 40


@dataclass(frozen=True)
class Plot:
    """A PNG written by :func:`make_plots`: file name (relative to the plot folder) and caption."""

    name: str
    file: str
    title: str
    caption: str


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


def _colors(n: int) -> list[Any]:
    base = [f"C{i % 10}" for i in range(n)]
    return base


def _without_totals(df: pd.DataFrame) -> pd.DataFrame:
    out = df[df["source"] != ALL_SOURCES].copy()
    out["series"] = series_labels(out)
    return out


def distribution_plot(hist: pd.DataFrame, summary: pd.DataFrame, *, what: str, mean_col: str) -> Figure:
    """Share of boards per bin, one step line per run/source, dashed line at each mean."""
    hist = _without_totals(hist)
    summ = _without_totals(summary)
    fig = new_figure()
    ax = fig.subplots()
    series = list(dict.fromkeys(hist["series"]))
    for color, name in zip(_colors(len(series)), series, strict=True):
        h = hist[hist["series"] == name].sort_values("bin_lo")
        edges = np.append(h["bin_lo"].to_numpy(), h["bin_hi"].to_numpy()[-1:])
        # Missing bins are zero: expand onto a contiguous grid so the step line drops to 0.
        width = int(h["bin_hi"].iloc[0] - h["bin_lo"].iloc[0])
        grid = np.arange(edges[0], edges[-1] + width, width)
        share = np.zeros(len(grid) - 1)
        share[((h["bin_lo"].to_numpy() - edges[0]) // width).astype(int)] = h["share"].to_numpy()
        mean = summ.loc[summ["series"] == name, mean_col]
        label = name if mean.empty else f"{name} (mean {float(mean.iloc[0]):.1f})"
        ax.stairs(share * 100, grid, color=color, linewidth=1.6, label=label)
        if not mean.empty:
            ax.axvline(float(mean.iloc[0]), color=color, linestyle="--", linewidth=1)
    ax.set_xlabel(what)
    ax.set_ylabel("boards (%)")
    ax.set_title(f"Distribution of {what} per board")
    ax.set_xlim(left=0)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    return fig


def _grouped_bars(ax: Any, table: pd.DataFrame, x_col: str, y_col: str, xs: list[Any]) -> None:
    series = list(dict.fromkeys(table["series"]))
    width = 0.8 / max(1, len(series))
    pos = np.arange(len(xs))
    for k, (color, name) in enumerate(zip(_colors(len(series)), series, strict=True)):
        t = table[table["series"] == name].set_index(x_col)[y_col].reindex(xs).fillna(0)
        ax.bar(pos + (k - (len(series) - 1) / 2) * width, t.to_numpy(), width, color=color, label=name)
    ax.set_xticks(pos, [str(x) for x in xs])
    ax.grid(axis="y", alpha=0.3)


def by_length_plot(by_length: pd.DataFrame) -> Figure:
    """Mean words and mean points per board by word length, grouped by run/source."""
    table = _without_totals(by_length)
    fig = new_figure(10, 4.2)
    ax_w, ax_p = fig.subplots(1, 2)
    lengths = list(dict.fromkeys(table["length"]))
    _grouped_bars(ax_w, table, "length", "words_per_board", lengths)
    _grouped_bars(ax_p, table, "length", "points_per_board", lengths)
    ax_w.set_title("Words per board by length")
    ax_p.set_title("Points per board by length")
    for ax in (ax_w, ax_p):
        ax.set_xlabel("word length (letters)")
    ax_w.set_ylabel("mean words per board")
    ax_p.set_ylabel("mean points per board")
    ax_p.legend(fontsize="small")
    return fig


def longest_word_plot(longest: pd.DataFrame) -> Figure:
    """Share of boards whose longest word has each length."""
    table = _without_totals(longest)
    lengths = sorted(int(x) for x in table["length"].unique())
    fig = new_figure(9, 4)
    ax = fig.subplots()
    table = table.assign(pct=table["share"] * 100)
    _grouped_bars(ax, table, "length", "pct", lengths)
    ax.set_xlabel("length of the longest word (letters; 0 = no word)")
    ax.set_ylabel("boards (%)")
    ax.set_title("Longest word per board")
    ax.legend(fontsize="small")
    return fig


def face_effects_plot(effects: pd.DataFrame) -> Figure:
    """Mean score with a face minus without it, one panel per run/source."""
    table = _without_totals(effects).dropna(subset=["effect"])
    series = list(dict.fromkeys(table["series"]))
    n = max(1, len(series))
    n_faces = max([1, *(int((table["series"] == s).sum()) for s in series)])
    shown = min(n_faces, MAX_FACES_SHOWN)
    ncols = min(n, 3)
    nrows = -(-n // ncols)
    fig = new_figure(4.2 * ncols, max(3.0, 0.22 * shown + 1.2) * nrows)
    axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False)).ravel()
    for ax, name in zip(axes, series, strict=False):
        t = table[table["series"] == name]
        if len(t) > MAX_FACES_SHOWN:
            t = t.reindex(t["effect"].abs().sort_values(ascending=False).index[:MAX_FACES_SHOWN])
        t = t.sort_values("effect")
        colors = ["#2a9d55" if e >= 0 else "#c8553d" for e in t["effect"]]
        ax.barh([_face_label(f) for f in t["face"]], t["effect"], color=colors)
        ax.axvline(0, color="black", linewidth=0.8)
        ax.set_title(name, fontsize="medium")
        ax.set_xlabel("mean score with face − without")
        ax.tick_params(axis="y", labelsize="small")
        ax.grid(axis="x", alpha=0.3)
    for ax in axes[len(series) :]:
        ax.set_visible(False)
    if not series:
        axes[0].set_visible(True)
        axes[0].text(0.5, 0.5, "every board shows every face", ha="center", va="center")
    fig.suptitle("How each face relates to the score")
    return fig


def _face_label(face: str) -> str:
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
                text = _face_label(face)
                size = font * (0.75 if len(text) > 1 else 1.0)
                ax.text(c + 0.5, y + 0.47, text, ha="center", va="center", fontsize=size,
                        fontweight="bold", color="#222222")  # fmt: skip
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
        (x, y), w, h, boxstyle="round,pad=0,rounding_size=0.12", facecolor=color,
        edgecolor="#8a7a55", linewidth=1.2,
    )  # fmt: skip


def _slug(text: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()
    return slug or "run"


def make_plots(tables: Tables, out_dir: Path) -> list[Plot]:
    """Write every plot of an analysis into ``out_dir`` and describe them."""
    out_dir = Path(out_dir)
    plots: list[Plot] = []

    def emit(fig: Figure, name: str, title: str, caption: str) -> None:
        file = f"{name}.png"
        save_png(fig, out_dir / file)
        plots.append(Plot(name, file, title, caption))

    emit(
        distribution_plot(tables.score_histogram, tables.summary, what="score", mean_col="score_mean"),
        "score_distribution", "Score distribution",
        "Share of boards in each score bin; dashed lines mark each mean.",
    )  # fmt: skip
    emit(
        distribution_plot(tables.words_histogram, tables.summary, what="words", mean_col="words_mean"),
        "words_distribution", "Word-count distribution",
        "Share of boards by number of distinct words found; dashed lines mark each mean.",
    )  # fmt: skip
    emit(
        by_length_plot(tables.by_length), "points_by_length", "Words and points by word length",
        "Mean words and points per board contributed by each word length.",
    )  # fmt: skip
    emit(
        longest_word_plot(tables.longest_words), "longest_word", "Longest word",
        "Share of boards whose longest word has each length.",
    )  # fmt: skip
    emit(
        face_effects_plot(tables.face_effects), "face_effects", "Face effects",
        "Mean score of boards showing a face minus boards not showing it "
        "(green helps, red hurts).",
    )  # fmt: skip
    best = tables.top_boards[tables.top_boards["rank"] == 1].copy()
    best["series"] = series_labels(best)
    used: set[str] = set()
    for rec in best.to_dict("records"):
        slug = _slug(str(rec["series"]))
        while slug in used:
            slug += "-x"
        used.add(slug)
        title = f"{rec['series']}: best board, {rec['score']} points, {rec['n_words']} words"
        emit(
            board_plot(str(rec["board"]), int(rec["rows"]), int(rec["cols"]), title=title),
            f"best_board_{slug}", f"Best board: {rec['series']}",
            f"{rec['board']} ({rec['rows']}x{rec['cols']}), longest word "
            f"{rec['longest_word'] or '-'}.",
        )  # fmt: skip
    return plots
