"""The report's sections that answer a designer's questions: the headline, what decided each run,
the verdicts, face effects in one order, dice and cell positions, and word lists ranked by how
common the words are. The sections comparing runs are in ``_compare``, those on bad boards,
serving and nights in ``_quality``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd

from pipeline.analyze._html import Cell, ci, column_table, esc, field, mono, num, pct, pm, table, whole
from pipeline.analyze._provenance import describe
from pipeline.analyze._runs import RunInfo
from pipeline.analyze._stats import series_labels


def what_if_note(r2: float) -> str:
    """What a die's value is, said once wherever die values are shown."""
    fit = (
        f" It explains {r2:.0%} of the board-to-board variation of the score (R² {r2:.2f})."
        if r2 == r2
        else ""
    )
    return (
        "Die values are <b>model estimates</b>: an additive model in which every face adds a fixed "
        f"number of points wherever it lies and whatever its neighbours.{fit} The model overstates "
        "what swapping a die gains; for a measured answer on the same boards run "
        "<code>boggle what-if</code>."
    )


def model_fit_text(fits: Iterable[tuple[Any, float]]) -> str:
    """How much of the score's variation the additive model explains in each run (``fits``:
    run, R²), said when the runs differ."""
    each = "; ".join(f"{esc(run)}: {v:.0%} (R² {v:.2f})" for run, v in fits)
    return f" The model explains {each} of the variation of the score."


def runs_header(runs: Sequence[RunInfo]) -> str:
    """Per run: dice, lexicon (name + hash), rules, shape, seed or inputs, boards."""
    descs = [describe(r.manifest) for r in runs]
    fields = [k for k, _ in descs[0].rows()] if descs else []
    rows = [[esc(r.label), *(esc(v) for _, v in d.rows())] for r, d in zip(runs, descs, strict=True)]
    return table(["run", *fields], rows, left=len(fields) + 1)


def verdicts(comparisons: pd.DataFrame, paired: pd.DataFrame) -> str:
    """The plain-language findings: one line per comparison whose interval excludes zero
    for score, plus every paired verdict."""
    items = []
    if len(comparisons):
        for rec in comparisons.to_dict("records"):
            if rec["metric"] in ("mean score", "mean word count", "share of boards with a dead cell"):
                items.append(rec["verdict"])
    items += [str(v) for v in paired.get("verdict", pd.Series(dtype=object)).tolist()]
    if not items:
        return ""
    return '<ul class="verdicts">' + "".join(f"<li>{esc(t)}</li>" for t in items) + "</ul>"


def face_effects_section(effects: pd.DataFrame) -> str:
    """Faces as rows in one order shared by every run; per run the raw effect and the
    adjusted one, each with its 95% interval."""
    e = effects.copy()
    e["series"] = series_labels(e) if len(e) else pd.Series(dtype=object)
    e = e[e["source"] != "(all)"]
    order = (
        e.sort_values(["face_order", "face"])["face"].drop_duplicates().tolist() if "face_order" in e else []
    )
    order = order or list(dict.fromkeys(e["face"]))
    series = list(dict.fromkeys(e["series"]))
    by = {(rec["series"], rec["face"]): rec for rec in e.to_dict("records")}
    has_adj = "adj_effect" in e
    rows = []
    for face in order:
        row = [mono(face)]
        for s in series:
            rec = by.get((s, face))
            if rec is None:
                row += ["", ""] + ([""] if has_adj else [])
                continue
            row += [pct(rec["share_with"]), pm(rec["effect"], rec["effect_low"], rec["effect_high"], 1)]
            if has_adj:
                row.append(pm(rec["adj_effect"], rec["adj_low"], rec["adj_high"], 1))
        rows.append(row)
    header = ["face"]
    for s in series:
        header += [f"{s}: boards with it", f"{s}: raw (± 95%)"] + (
            [f"{s}: adjusted (± 95%)"] if has_adj else []
        )
    # every face on one page: the worst faces are the last rows
    return table(header, rows, left=1, sortable=True, table_id="face-effects", all_rows=True)


# A changed die: its faces and values in both runs, and what the first run's model predicts.
CHANGED_DICE_COLUMNS: dict[str, Cell] = {
    "run": field(esc, "run"),
    "die": field(whole, "die"),
    "faces (first run → this run)": lambda r: mono(r["faces_reference"]) + " → " + mono(r["faces_run"]),
    "value, first run": field(num, "value_reference"),
    "value, this run": field(num, "value_run"),
    "predicted change": field(num, "predicted"),
    "95% CI": field(ci, "predicted_low", "predicted_high"),
}


def dice_changes_section(changes: pd.DataFrame, check: pd.DataFrame) -> str:
    """The dice a later run changed against the first run: both faces, both values, what the
    first run's model predicts the change is worth; then the model against the measurement."""
    if changes.empty:
        return ""
    out = (
        "<h3>Changed dice</h3><p>What the first run's additive model predicts each change is worth, "
        "in points a board (its fitted face values, the new die's faces against the old's).</p>"
        + column_table(CHANGED_DICE_COLUMNS, changes.to_dict("records"), left=1, text_cols=[2])
    )
    for r in check.to_dict("records") if len(check) else []:
        verdict = "agree" if r["agree"] else "<b>disagree</b>"
        out += (
            f"<p>{esc(r['run'])}: the model predicts {num(r['predicted'])} "
            f"({ci(r['predicted_low'], r['predicted_high'])}) for all its changed dice; measured on the "
            f"same draws {num(r['measured'])} ({ci(r['measured_low'], r['measured_high'])}): "
            f"they {verdict}.</p>"
        )
    return out


_CHANGED = ' <b title="its faces differ from the first run\'s die of this number">changed</b>'

# A die: its value (the model's estimate), by kind of cell, and its worst and best face.
DICE_COLUMNS: dict[str, Cell] = {
    "run": field(esc, "run"),
    "rank (worst first)": field(whole, "rank"),
    "die": lambda r: whole(r["die"]) + (_CHANGED if r.get("changed") else ""),
    "faces": field(mono, "faces"),
    "value (model estimate)": field(num, "value"),
    "95% CI": field(ci, "value_low", "value_high"),
    "in a corner": lambda r: num(r.get("value_corner")),
    "on an edge": lambda r: num(r.get("value_edge")),
    "inside": lambda r: num(r.get("value_inner")),
    "worst face": field(mono, "worst_face"),
    "best face": field(mono, "best_face"),
    "best minus worst face": field(num, "swing"),
}

# A die's side: how often it shows its face, the mean score then, and the face's effect.
DIE_FACE_COLUMNS: dict[str, Cell] = {
    "run": field(esc, "run"),
    "die": field(whole, "die"),
    "side": field(whole, "side"),
    "face": field(mono, "face"),
    "boards showing it": field(pct, "share"),
    "mean score then": field(num, "mean_score"),
    "adjusted face effect": field(num, "adj_effect"),
}


def dice_section(
    dice: pd.DataFrame,
    positions: pd.DataFrame,
    fig: str,
    notes: Sequence[str],
    faces: pd.DataFrame | None = None,
) -> str:
    out = ""
    if len(dice):
        r2 = dice["model_r2"].dropna() if "model_r2" in dice else pd.Series(dtype=float)
        out += (
            "<p>The worker that rolled each chunk counted which die showed which face on every "
            "board (a run made before that has its dice re-rolled from its seed, used only when "
            "that gives back every stored board exactly). "
            "A die's <b>value</b> is the mean adjusted effect of its faces: the points a board gains "
            "from that die against an average cell. The lowest-valued dice are the first to "
            "redesign. A die marked <b>changed</b> differs from the first run's die of that "
            "number: its value is against its own run's average die, so set it beside the change "
            "table below, which gives what the first run's model predicts the change is worth.</p>"
            + f"<p>{what_if_note(float(r2.iloc[0]) if r2.nunique() == 1 else float('nan'))}"
            + (
                model_fit_text(dice.drop_duplicates("run").set_index("run")["model_r2"].items())
                if r2.nunique() > 1
                else ""
            )
            + "</p>"
            + fig
            + column_table(
                DICE_COLUMNS,
                dice.to_dict("records"),
                left=1,
                text_cols=[3, 9, 10],
                sortable=True,
                table_id="dice",
            )
        )
    if faces is not None and len(faces):
        out += (
            "<details><summary>Every die, side by side: how often it shows each face and the mean "
            "score of those boards</summary>"
            + column_table(DIE_FACE_COLUMNS, faces.to_dict("records"), left=1, sortable=True)
            + "</details>"
        )
    if len(positions):
        p = positions.pivot_table(index="face", columns=["run", "position"], values="adj_effect", sort=False)
        rows = []
        for face, rec in p.iterrows():
            rows.append([mono(face), *(num(v) for v in rec.tolist())])
        header = ["face", *(f"{col[0]}: {col[1]}" for col in p.columns)]
        out += (
            "<h3>Face effects by cell position</h3><p>Adjusted effect of a face on a corner, edge "
            "or inner cell, against the average face of that kind of cell (a cell with more "
            "neighbours gives a good letter more words).</p>"
            + table(header, rows, left=1, sortable=True, table_id="positions")
        )
    if notes:
        out += "".join(f'<p class="note">{esc(n)}</p>' for n in notes)
    return out


def frequent_words_section(freq: pd.DataFrame, source: str, n: int) -> str:
    """Common words first (ranked among words of Zipf ≥ threshold); every word, obscure ones
    included, behind a toggle."""
    f = freq.copy()
    f["series"] = series_labels(f) if len(f) else pd.Series(dtype=object)
    series = list(dict.fromkeys(f["series"]))

    def side_by_side(rank_col: str, sub: pd.DataFrame, table_id: str) -> str:
        ranks = sorted(int(x) for x in sub[rank_col].dropna().unique())
        by = {
            (rec["series"], int(rec[rank_col])): rec
            for rec in sub.dropna(subset=[rank_col]).to_dict("records")
        }
        rows, classes = [], []
        for rank in ranks:
            row = [num(rank, 0)]
            obscure = False
            for s in series:
                rec = by.get((s, rank))
                if rec is None:
                    row += ["", "", ""]
                    continue
                obscure |= not bool(rec["common"])
                z = "" if pd.isna(rec["zipf"]) else f"{float(rec['zipf']):.1f}"
                row += [mono(rec["word"]), pct(rec["share"]), z]
            rows.append(row)
            classes.append("obscure" if obscure else "")
        header = ["rank"]
        for s in series:
            header += [f"{s}: word", "boards with it", "how common (0-8)"]
        text_cols = list(range(1, len(header), 3))
        return table(header, rows, 1, text_cols, sortable=True, row_classes=classes, table_id=table_id)

    common = side_by_side("rank_common", f, "words-common")
    every = side_by_side("rank", f[f["rank"] <= n], "words-all")
    return (
        f"<p>Share of boards on which each word can be found, common words only (by {esc(source)}). "
        "Obscure entries of the word list (tes, oes, eth...) are in the full ranking below.</p>"
        + common
        + f"<details><summary>Show every word, obscure ones included (marked)</summary>{every}</details>"
    )
