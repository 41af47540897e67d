"""Every table of an analysis: the aggregates of :mod:`pipeline.analyze._stats` plus the
board-level ones a designer asks for (adjusted face effects, cell positions, dice, comparisons
with 95% intervals, paired runs)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pandas as pd

from pipeline.analyze._bad import BadDefinition, bad_tables
from pipeline.analyze._cells import cell_tables
from pipeline.analyze._compare import comparisons, face_comparisons, run_rows
from pipeline.analyze._diagnosis import dice_changes, mark_changed, model_check, suspects
from pipeline.analyze._faces import face_order
from pipeline.analyze._headline import headline
from pipeline.analyze._paired import paired
from pipeline.analyze._plots import MAX_RUNS_DRAWN
from pipeline.analyze._select import PRESETS, band_shares
from pipeline.analyze._stats import Tables, compute_tables
from pipeline.analyze._trend import trend_table
from pipeline.analyze._words import run_languages

if TYPE_CHECKING:
    from pipeline.analyze._gather import Gathered


def decision_shares(
    bad_share: pd.DataFrame, bands: pd.DataFrame
) -> tuple[dict[str, dict[str, float]], dict[str, str]]:
    """The shares a designer decides on, per run (the bad boards, each Tanglet band), keyed as
    the paired metrics are (``bad_share``, ``band:NAME``), and their names in sentences."""
    shares: dict[str, dict[str, float]] = {}
    names: dict[str, str] = {}
    for rec in bad_share.to_dict("records"):
        shares.setdefault(str(rec["run"]), {})["bad_share"] = float(rec["share"])
        names["bad_share"] = f"share of bad boards ({rec['definition']})"
    for rec in bands.to_dict("records"):
        key = f"band:{rec['band']}"
        shares.setdefault(str(rec["run"]), {})[key] = float(rec["share"])
        names[key] = f"share of boards in the {rec['band']} band ({rec['words']} words)"
    return shares, names


def compute_all(
    gathered: Sequence[Gathered],
    *,
    top: int = 20,
    top_words: int = 50,
    bins: int = 60,
    bad: BadDefinition | None = None,
    n_jobs: int | None = None,
) -> Tables:
    """:func:`~pipeline.analyze._stats.compute_tables` for the gathered runs (in order), then
    the board-level tables, the bad boards (``bad``: their definition, default fewer than 50
    words; the statistics were gathered for it) and the Tanglet word-count bands."""
    langs = run_languages({g.run.label: g.run.lexicon.get("name") for g in gathered})
    tables = compute_tables(gathered, top=top, top_words=top_words, bins=bins, languages=langs)
    cells = cell_tables(gathered)
    fe = tables.face_effects
    if not cells.adjusted.empty:
        adj = cells.adjusted[["run", "source", "face", "adj_effect", "adj_low", "adj_high"]]
        fe = fe.merge(adj, on=["run", "source", "face"], how="left", sort=False)
    order = {f: i for i, f in enumerate(face_order(fe))}
    fe["face_order"] = fe["face"].map(order)
    tables.face_effects = fe
    tables.face_positions = cells.positions
    tables.dice = cells.dice
    tables.dice_faces = cells.dice_faces
    bt = bad_tables(gathered, bad)
    tables.bad_share, tables.bad_drivers = bt.share, bt.drivers
    tables.serve_bands = band_shares(gathered)
    bands = tuple((b.name, b.lo, b.hi) for b in PRESETS.values())
    pt = paired(gathered, top=min(top, 10), n_jobs=n_jobs, bad=bad, bands=bands)
    shares, names = decision_shares(tables.bad_share, tables.serve_bands)
    tables.comparisons = comparisons(tables.summary, pt.moments, shares, names, pt.kinds)
    rows = run_rows(tables.summary)
    means = dict(zip(rows["run"], rows["score_mean"].astype(float), strict=True))
    tables.face_comparisons = face_comparisons(fe, means, pt.face_effects)
    tables.paired, tables.paired_histogram = pt.summary, pt.histogram
    tables.paired_boards, tables.paired_words = pt.boards, pt.words
    tables.trend = trend_table(gathered, tables.bad_share)
    tables.dice = mark_changed(tables.dice, gathered)
    tables.dice_changes = dice_changes(gathered, tables.dice)
    tables.model_check = model_check(gathered, tables.dice_changes, tables.paired)
    tables.suspects = suspects(gathered, tables.dice, tables.bad_drivers, cells.adjusted)
    tables.headline = headline(tables)
    tables.notes = cells.notes + pt.notes + bt.notes
    if len(gathered) > MAX_RUNS_DRAWN:
        tables.notes.append(
            f"{len(gathered)} runs: the plots with a series or a board per run draw the first "
            f"{MAX_RUNS_DRAWN}; the tables (and the trend) hold every run"
        )
    return tables
