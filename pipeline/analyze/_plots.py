"""Plots of the summary tables (matplotlib, Agg canvas, PNG), and :func:`make_plots`, which
writes every plot of an analysis.

Every function takes the small tables of :mod:`pipeline.analyze._stats`, never raw boards; the
canvas, the PNG files and the picture of a board are :mod:`pipeline.analyze._figures`'.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from pipeline.analyze._figures import board_plot as board_plot
from pipeline.analyze._figures import face_label, new_figure, save_png, series_colors
from pipeline.analyze._figures import png_bytes as png_bytes
from pipeline.analyze._stats import ALL_SOURCES, Tables, series_labels

# Beyond this many faces the face-effect plot keeps the strongest effects only.
MAX_FACES_SHOWN = 40


@dataclass(frozen=True)
class Plot:
    """A PNG written by :func:`make_plots`: file name (relative to the plot folder) and caption."""

    name: str
    file: str
    title: str
    caption: str


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
    for color, name in zip(series_colors(len(series)), series, strict=True):
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
    p99 = f"{mean_col.split('_')[0]}_p99"
    if p99 in summ and summ[p99].notna().any():
        # The few richest boards would squeeze the body into a corner: cut at the 99th
        # percentile (the cumulative view shows the whole tail).
        cut = float(summ[p99].max()) * 1.15
        if cut < ax.get_xlim()[1]:
            ax.set_xlim(0, cut)
            ax.text(
                0.99,
                0.02,
                "x axis cut at 1.15 x the 99th percentile",
                transform=ax.transAxes,
                ha="right",
                va="bottom",
                fontsize="x-small",
                color="#666666",
            )
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    return fig


def _grouped_bars(ax: Any, table: pd.DataFrame, x_col: str, y_col: str, xs: list[Any]) -> None:
    series = list(dict.fromkeys(table["series"]))
    width = 0.8 / max(1, len(series))
    pos = np.arange(len(xs))
    for k, (color, name) in enumerate(zip(series_colors(len(series)), series, strict=True)):
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
    """Share of boards whose longest word has each length: numeric axis, linear scale (a share
    drawn on a log scale makes 0.01% look like a quarter of 37%)."""
    table = _without_totals(longest)
    fig = new_figure(9, 4)
    ax = fig.subplots()
    series = list(dict.fromkeys(table["series"]))
    width = 0.8 / max(1, len(series))
    for k, (color, name) in enumerate(zip(series_colors(len(series)), series, strict=True)):
        t = table[table["series"] == name]
        x = t["length"].to_numpy(dtype=float) + (k - (len(series) - 1) / 2) * width
        ax.bar(x, t["share"].to_numpy() * 100, width, color=color, label=name)
    lengths = sorted(int(x) for x in table["length"].unique())
    if lengths:
        ax.set_xticks(range(lengths[0], lengths[-1] + 1))
        ax.set_xlim(lengths[0] - 0.7, lengths[-1] + 0.7)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("length of the longest word (letters; 0 = no word)")
    ax.set_ylabel("boards (%)")
    ax.set_title("Longest word per board")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize="small")
    return fig


def score_cdf_plot(counts: pd.DataFrame) -> Figure:
    """Cumulative share of boards by score (left) with p10, median, p90 and p99 marked, and the
    tail (right): the share of boards scoring at least each score from the 90th percentile on,
    on a linear scale (a share on a log scale misleads the eye)."""
    table = _without_totals(counts)
    fig = new_figure(11, 4.3)
    ax_c, ax_l = fig.subplots(1, 2)
    series = list(dict.fromkeys(table["series"]))
    for color, name in zip(series_colors(len(series)), series, strict=True):
        t = table[table["series"] == name].sort_values("score")
        x, cum = t["score"].to_numpy(), t["cum_share"].to_numpy()
        ax_c.step(x, cum * 100, where="post", color=color, label=name, linewidth=1.5)
        for q, marker in ((0.1, "v"), (0.5, "o"), (0.9, "^"), (0.99, "D")):
            xq = x[min(np.searchsorted(cum, q), len(x) - 1)]
            ax_c.plot([xq], [q * 100], marker=marker, color=color, markersize=5)
        share = t["boards"].to_numpy() / max(1, t["boards"].sum())
        at_least = 1.0 - cum + share
        tail = x >= x[min(np.searchsorted(cum, 0.9), len(x) - 1)]
        ax_l.step(x[tail], at_least[tail] * 100, where="post", color=color, label=name, linewidth=1.5)
    ax_c.set_xlabel("score")
    ax_c.set_ylabel("boards scoring at most x (%)")
    ax_c.set_title("Cumulative score distribution (▼ p10, ● median, ▲ p90, ◆ p99)", fontsize="medium")
    ax_c.grid(alpha=0.3)
    ax_c.legend(fontsize="small", loc="lower right")
    ax_l.set_ylim(bottom=0)
    ax_l.set_xlabel("score")
    ax_l.set_ylabel("boards scoring at least x (%)")
    ax_l.set_title("The tail: the top 10% of boards by score", fontsize="medium")
    ax_l.grid(alpha=0.3)
    return fig


def face_effects_plot(effects: pd.DataFrame) -> Figure:
    """Raw (with minus without) and adjusted (for the other faces) effect of each face with 95%
    intervals, every run in one face order (strongest adjusted effect on top)."""
    table = _without_totals(effects)
    if "face_order" not in table:
        from pipeline.analyze._faces import face_order

        order = {f: i for i, f in enumerate(face_order(table))}
        table = table.assign(face_order=table["face"].map(order))
    faces = list(table.sort_values("face_order")["face"].drop_duplicates())
    if len(faces) > MAX_FACES_SHOWN:
        faces = faces[: MAX_FACES_SHOWN // 2] + faces[-MAX_FACES_SHOWN // 2 :]
    has_adj = "adj_effect" in table and table["adj_effect"].notna().any()
    panels = [("effect", "effect_low", "effect_high", "raw: mean score with face − without")]
    if has_adj:
        panels.append(
            ("adj_effect", "adj_low", "adj_high", "adjusted: one cell showing it vs an average face")
        )
    series = list(dict.fromkeys(table["series"]))
    fig = new_figure(5.2 * len(panels) + 1.5, max(3.0, 0.24 * len(faces) + 1.6))
    axes = np.atleast_1d(fig.subplots(1, len(panels), sharey=True, squeeze=False)).ravel()
    ypos = {f: len(faces) - 1 - i for i, f in enumerate(faces)}
    step = 0.7 / max(1, len(series))
    for ax, (col, lo, hi, title) in zip(axes, panels, strict=True):
        for k, (color, name) in enumerate(zip(series_colors(len(series)), series, strict=True)):
            t = table[(table["series"] == name) & table["face"].isin(ypos)].dropna(subset=[col])
            y = np.array([ypos[f] for f in t["face"]]) + (k - (len(series) - 1) / 2) * step
            est = t[col].to_numpy(dtype=float)
            if lo in t:
                err = np.vstack([est - t[lo].to_numpy(dtype=float), t[hi].to_numpy(dtype=float) - est])
                err = np.nan_to_num(err, nan=0.0)
            else:
                err = None
            ax.errorbar(
                est, y, xerr=err, fmt="o", color=color, markersize=3.5, elinewidth=1.2, capsize=2, label=name
            )
        ax.axvline(0, color="black", linewidth=0.8)
        ax.set_title(title, fontsize="medium")
        ax.set_xlabel("points per board")
        ax.grid(axis="x", alpha=0.3)
    axes[0].set_yticks(list(ypos.values()), [face_label(f) for f in ypos])
    axes[-1].legend(fontsize="small", loc="lower right")
    if not faces:
        axes[0].text(0.5, 0.5, "every board shows every face", ha="center", va="center")
    fig.suptitle("How each face relates to the score (95% intervals)")
    return fig


def dice_plot(dice: pd.DataFrame) -> Figure:
    """Each die's value (mean adjusted effect of its faces) with its 95% interval, worst first,
    one panel per dice run."""
    runs = list(dict.fromkeys(dice["run"])) if len(dice) else []
    n = max(1, len(runs))
    n_dice = max([1, *(int((dice["run"] == r).sum()) for r in runs)])
    fig = new_figure(5.6 * n, max(3.0, 0.28 * n_dice + 1.4))
    axes = np.atleast_1d(fig.subplots(1, n, squeeze=False)).ravel()
    for ax, run in zip(axes, runs, strict=False):
        t = dice[dice["run"] == run].sort_values("rank", ascending=False)
        labels = [f"die {int(d)}: {f}" for d, f in zip(t["die"], t["faces"], strict=True)]
        est = t["value"].to_numpy(dtype=float)
        err = np.vstack(
            [est - t["value_low"].to_numpy(dtype=float), t["value_high"].to_numpy(dtype=float) - est]
        )
        colors = ["#2a9d55" if e >= 0 else "#c8553d" for e in est]
        ax.barh(labels, est, xerr=err, color=colors, capsize=2)
        ax.axvline(0, color="black", linewidth=0.8)
        ax.set_title(str(run), fontsize="medium")
        ax.set_xlabel("points vs an average cell (model estimate)")
        ax.tick_params(axis="y", labelsize="small")
        ax.grid(axis="x", alpha=0.3)
    fig.suptitle("Each die's value, a model estimate (95% intervals; worst at the top)", fontsize="medium")
    return fig


def paired_plot(hist: pd.DataFrame, paired: pd.DataFrame) -> Figure:
    """Distribution of the per-board score difference of runs that share their boards."""
    pairs = list(dict.fromkeys(zip(hist["run"], hist["reference"], strict=True)))
    fig = new_figure(9, 3.8)
    ax = fig.subplots()
    for color, (run, ref) in zip(series_colors(len(pairs)), pairs, strict=True):
        t = hist[(hist["run"] == run) & (hist["reference"] == ref)].sort_values("diff")
        share = t["boards"].to_numpy() / max(1, t["boards"].sum())
        ax.step(t["diff"].to_numpy(), share * 100, where="mid", color=color, label=f"{run} − {ref}")
        row = paired[(paired["run"] == run) & (paired["reference"] == ref)]
        if len(row):
            ax.axvline(float(row["mean_diff"].iloc[0]), color=color, linestyle="--", linewidth=1)
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_xlabel("score difference on the same board (points)")
    ax.set_ylabel("boards (%)")
    ax.set_title("Per-board score difference (dashed: mean)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    return fig


def trend_plot(trend: pd.DataFrame) -> Figure:
    """Per night (date axis): mean score (top) and bad-board share (bottom), each with its 95%
    interval and the control limits (dashed); nights of another design drawn hollow, nights
    outside their limits in red."""
    fig = new_figure(9.0, 6.0)
    top, bottom = fig.subplots(2, 1, sharex=True)
    days = pd.to_datetime(trend["night"])
    same = trend["same_design"].astype(bool).to_numpy()
    flagged = trend["flag"].astype(bool).to_numpy() & same
    for ax, col, scale, label in (
        (top, "score", 1.0, "mean score"),
        (bottom, "bad", 100.0, "bad boards (%)"),
    ):
        value = trend["score_mean" if col == "score" else "bad_share"].to_numpy(float) * scale
        low = trend[f"{col}_low"].to_numpy(float) * scale
        high = trend[f"{col}_high"].to_numpy(float) * scale
        ax.step(
            days[same],
            trend[f"{col}_lcl"][same] * scale,
            where="mid",
            ls="--",
            color="0.45",
            lw=1,
            label="control limits",
        )
        ax.step(days[same], trend[f"{col}_ucl"][same] * scale, where="mid", ls="--", color="0.45", lw=1)
        for mask, style in (
            (same & ~flagged, {"color": "C0"}),
            (flagged, {"color": "C3"}),
            (~same, {"color": "C1", "mfc": "white"}),
        ):
            if mask.any():
                ax.errorbar(
                    days[mask],
                    value[mask],
                    yerr=[value[mask] - low[mask], high[mask] - value[mask]],
                    fmt="o",
                    capsize=3,
                    **style,
                )
        ax.plot(days[same], value[same], color="C0", lw=0.8, alpha=0.6)
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    top.legend(loc="best", fontsize="small")
    bottom.set_xlabel("night")
    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter, DateFormatter

    if len(days) <= 16:  # a tick on each night, named by its date
        bottom.set_xticks(days)
        bottom.xaxis.set_major_formatter(DateFormatter("%Y-%m-%d"))
    else:
        locator = AutoDateLocator()
        bottom.xaxis.set_major_locator(locator)
        bottom.xaxis.set_major_formatter(ConciseDateFormatter(locator))
    fig.autofmt_xdate()
    return fig


def _slug(text: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()
    return slug or "run"


# Every plot of an analysis but the best boards, in report order: (name, title, caption, the
# table it needs rows in (None: always drawn), how to draw it from the tables).
PLOTS: list[tuple[str, str, str, str | None, Callable[[Tables], Figure]]] = [
    (
        "score_distribution",
        "Score distribution",
        "Share of boards in each score bin; dashed lines mark each mean.",
        None,
        lambda t: distribution_plot(t.score_histogram, t.summary, what="score", mean_col="score_mean"),
    ),
    (
        "score_cdf",
        "Cumulative score distribution and tail",
        "Left: share of boards scoring at most each score, percentiles marked. Right: the tail, "
        "the share of boards scoring at least each score from the 90th percentile on.",
        "score_counts",
        lambda t: score_cdf_plot(t.score_counts),
    ),
    (
        "words_distribution",
        "Word-count distribution",
        "Share of boards by number of distinct words found; dashed lines mark each mean.",
        None,
        lambda t: distribution_plot(t.words_histogram, t.summary, what="words", mean_col="words_mean"),
    ),
    (
        "points_by_length",
        "Words and points by word length",
        "Mean words and points per board contributed by each word length.",
        None,
        lambda t: by_length_plot(t.by_length),
    ),
    (
        "longest_word",
        "Longest word",
        "Share of boards whose longest word has each length.",
        None,
        lambda t: longest_word_plot(t.longest_words),
    ),
    (
        "face_effects",
        "Face effects",
        "Left: mean score of boards showing a face minus boards not showing it. Right (when "
        "computed): the effect adjusted for the other faces on the board. Bars: 95% intervals.",
        None,
        lambda t: face_effects_plot(t.face_effects),
    ),
    (
        "dice_values",
        "Die values",
        "Each die's value: the mean adjusted effect of its faces, i.e. the points a board "
        "gains from that die against an average cell (95% intervals). Redesign the lowest.",
        "dice",
        lambda t: dice_plot(t.dice),
    ),
    (
        "paired_difference",
        "Per-board score difference",
        "Runs holding the same boards: distribution of each board's score difference.",
        "paired_histogram",
        lambda t: paired_plot(t.paired_histogram, t.paired),
    ),
    (
        "trend",
        "Runs over time",
        "Each night's mean score (top) and share of bad boards (bottom) with 95% intervals; "
        "dashed: control limits of the design's nights; red: a night outside them; hollow "
        "orange: a night of another design, left out of the limits.",
        "trend",
        lambda t: trend_plot(t.trend),
    ),
]


# Plots with a series, panel or picture per run draw at most this many runs: past a dozen they
# are unreadable, and each costs a fraction of a second to draw (a report of 200 nightly runs
# would spend minutes on pictures no one can read). The tables and the trend hold every run.
MAX_RUNS_DRAWN = 12


def drawn_runs(tables: Tables) -> list[str]:
    """The runs the per-run plots draw: the first :data:`MAX_RUNS_DRAWN`, in the given order."""
    runs = list(dict.fromkeys(tables.summary["run"])) if len(tables.summary) else []
    return runs[:MAX_RUNS_DRAWN]


def _only(tables: Tables, runs: list[str]) -> Tables:
    """``tables`` with every frame that has a ``run`` column cut to ``runs``."""
    import dataclasses

    keep = set(runs)
    out = dataclasses.replace(tables)
    for name, df in tables.items():
        if "run" in df.columns:
            setattr(out, name, df[df["run"].isin(keep)].reset_index(drop=True))
    return out


def make_plots(tables: Tables, out_dir: Path) -> list[Plot]:
    """Write every plot of an analysis into ``out_dir`` and describe them."""
    out_dir = Path(out_dir)
    plots: list[Plot] = []

    def emit(fig: Figure, name: str, title: str, caption: str) -> None:
        file = f"{name}.png"
        save_png(fig, out_dir / file)
        plots.append(Plot(name, file, title, caption))

    runs = list(dict.fromkeys(tables.summary["run"])) if len(tables.summary) else []
    drawn = drawn_runs(tables)
    few = tables if len(drawn) == len(runs) else _only(tables, drawn)
    more = (
        ""
        if few is tables
        else f" Drawn: the first {len(drawn)} of the {len(runs)} runs (the tables hold all)."
    )
    for name, title, caption, needs, draw in PLOTS:
        source = tables if name == "trend" else few
        if needs is None or len(getattr(source, needs)):
            emit(draw(source), name, title, caption + ("" if name == "trend" else more))
    best = few.top_boards[few.top_boards["rank"] == 1].copy()
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
            f"best_board_{slug}",
            f"Best board: {rec['series']}",
            f"{rec['board']} ({rec['rows']}x{rec['cols']}), longest word {rec['longest_word'] or '-'}.",
        )
    return plots
