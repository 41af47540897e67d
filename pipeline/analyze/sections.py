"""The report's sections that answer a designer's questions: what decided each run, how runs
compare (with 95% intervals), boards shared by runs, face effects in one order, dice and cell
positions, and word lists ranked by how common the words are."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from pipeline.analyze.html import ci, esc, num, pct, pm, table
from pipeline.analyze.provenance import describe
from pipeline.analyze.runs import RunInfo
from pipeline.analyze.stats import series_labels


def _ci(low: Any, high: Any, digits: int = 2) -> str:
    """An interval ``"a to b"`` on one line (already HTML)."""
    return ci(low, high, digits)


def _mono(text: Any) -> str:
    return f'<span class="mono">{esc(text)}</span>'


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


def headline_section(head: pd.DataFrame) -> str:
    """The first screen: per run the mean score (points per board, 95% interval), mean words,
    the bad-board share, the Tanglet pools and the worst die (a model estimate)."""
    if head.empty:
        return ""
    has_bad = head["bad_share"].notna().any()
    has_pool = head[["pool_easy", "pool_medium", "pool_hard"]].notna().any().any()
    has_die = head["worst_die"].notna().any()
    header = ["run", "mean score (points per board)", "words per board"]
    if has_bad:
        header.append(f"bad boards ({head['bad_definition'].dropna().iloc[0]})")
    if has_pool:
        header.append("boards to serve (Tanglet easy · medium · hard)")
    if has_die:
        header.append("worst die (model estimate, points)")
    rows = []
    for r in head.to_dict("records"):
        mean = f'<b class="big">{num(r["score_mean"], 1)}</b> ' + pm_only(r["score_low"], r["score_high"])
        row = [esc(r["run"]), mean, num(r["words_mean"], 1)]
        if has_bad:
            row.append(
                ""
                if pd.isna(r["bad_share"])
                else f"<b>{pct(r['bad_share'])}</b> "
                f'<span class="ci">({num(r["bad"], 0)} of {num(r["boards"], 0)})</span>'
            )
        if has_pool:
            pools = [num(r[c], 0) for c in ("pool_easy", "pool_medium", "pool_hard")]
            row.append(f'<span class="ci">{" · ".join(pools)}</span> of {num(r["boards"], 0)}')
        if has_die:
            row.append(
                ""
                if pd.isna(r["worst_die"])
                else f"die {num(r['worst_die'], 0)} {_mono(r['worst_die_faces'])}: "
                f'<span class="ci">{r["worst_die_value"]:+.1f}</span>'
            )
        rows.append(row)
    r2 = head["model_r2"].dropna()
    notes = "Mean score with its 95% interval (±). "
    if has_pool:
        notes += "Boards to serve: how many boards of each run fall in each Tanglet band. "
    if has_die:
        notes += what_if_note(float(r2.iloc[0]) if len(r2) == 1 or r2.nunique() == 1 else float("nan"))
        if len(r2) > 1 and r2.nunique() > 1:
            notes += (
                " The model explains "
                + "; ".join(
                    f"{esc(run)}: {v:.0%} (R² {v:.2f})"
                    for run, v in zip(head["run"], head["model_r2"], strict=True)
                    if v == v
                )
                + " of the variation of the score."
            )
    return table(header, rows, left=1, table_id="headline-table") + f'<p class="small">{notes}</p>'


def pm_only(low: Any, high: Any) -> str:
    """``± half`` of a symmetric interval, on one line."""
    if pd.isna(low) or pd.isna(high):
        return ""
    return f'<span class="ci">± {(float(high) - float(low)) / 2:.1f}</span>'


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


def comparisons_section(comparisons: pd.DataFrame) -> str:
    rows = []
    for r in comparisons.to_dict("records"):
        share = r["kind"] == "share"
        fmt = pct if share else num
        scale = 100 if share else 1
        diff = f"{r['diff'] * scale:+,.2f}"
        rel = "" if pd.isna(r["rel"]) else f"{r['rel'] * 100:+.1f}%"
        rel_ci = "" if pd.isna(r["rel"]) else _ci(r["rel_low"] * 100, r["rel_high"] * 100, 1)
        how = "same boards" if r.get("paired") else "independent"
        rows.append(
            [
                esc(r["run"]),
                esc(r["reference"]),
                esc(r["metric"]),
                fmt(r["reference_value"]),
                fmt(r["value"]),
                diff,
                _ci(r["diff_low"] * scale, r["diff_high"] * scale),
                rel,
                rel_ci,
                esc(how),
            ]
        )
    header = [
        "run",
        "against",
        "metric",
        "reference",
        "run value",
        "difference",
        "95% CI",
        "relative (%)",
        "95% CI (relative, %)",
        "boards",
    ]
    return (
        "<p>Each run against the first one given. Differences of shares are in percentage points. "
        "Runs that hold the same boards are compared board by board (<i>same boards</i>); the "
        "others as independent samples. The verdicts are above the table of contents.</p>"
        + table(header, rows, left=3, sortable=True, table_id="comparisons")
    )


def paired_section(paired: pd.DataFrame, boards: pd.DataFrame, words: pd.DataFrame, fig: str) -> str:
    rows = []
    for r in paired.to_dict("records"):
        rows.append(
            [
                esc(r["run"]),
                esc(r["reference"]),
                num(r["boards"], 0),
                f"{r['mean_diff']:+,.2f}",
                (_ci(r["diff_low"], r["diff_high"])),
                num(r["median_diff"]),
                num(r["p10_diff"]),
                num(r["p90_diff"]),
                pct(r["share_higher"]),
                pct(r["share_lower"]),
                pct(r["share_same"]),
            ]
        )
    header = [
        "run",
        "against",
        "boards",
        "mean difference",
        "95% CI",
        "median",
        "10th percentile",
        "90th percentile",
        "boards higher",
        "boards lower",
        "unchanged",
    ]
    out = (
        "<p>These runs hold the same boards (same dice, shape, count and seed: checked board by "
        "board), so each board's score can be compared directly, and the interval is that of the "
        "per-board differences.</p>" + fig + table(header, rows, left=2, sortable=True)
    )
    if len(boards):
        has_words = "words_gained" in boards
        brows = []
        for r in boards.to_dict("records"):
            row = [
                esc(r["run"]),
                num(r["board_id"], 0),
                _mono(r["board"]),
                num(r["score_reference"], 0),
                num(r["score_run"], 0),
                f"{int(r['diff']):+,}",
            ]
            if has_words:
                row += [_words_cell(r["words_gained"]), _words_cell(r["words_lost"])]
            brows.append(row)
        bh = ["run", "board id", "board", "score (reference)", "score (run)", "difference"]
        bh += ["words only this run finds", "words only the reference finds"] if has_words else []
        out += "<h3>The boards that change most</h3>" + table(
            bh, brows, left=3, text_cols=[6, 7], sortable=True, table_id="paired-boards"
        )
    if len(words):
        wrows = [
            [
                esc(r["run"]),
                _mono(r["word"]),
                num(r["boards_reference"], 0),
                num(r["boards_run"], 0),
                f"{r['points_per_board']:+.3f}",
                pct(r["share_of_change"]),
            ]
            for r in words.to_dict("records")
        ]
        wh = ["run", "word", "boards (reference)", "boards (run)", "points per board", "share of the change"]
        out += (
            "<h3>The words that account for the change</h3><p>Points per board each word adds "
            "(found on more boards) or takes away; summed over every word this is the mean "
            "difference exactly.</p>" + table(wh, wrows, left=2, sortable=True)
        )
    return out


def _words_cell(text: Any) -> str:
    words = str(text or "").split()
    if not words:
        return ""
    head = " ".join(words[:12])
    more = f" … (+{len(words) - 12})" if len(words) > 12 else ""
    return f'<span class="mono">{esc(head)}{esc(more)}</span>'


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
        row = [_mono(face)]
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


def dice_section(
    dice: pd.DataFrame,
    positions: pd.DataFrame,
    fig: str,
    notes: Sequence[str],
    faces: pd.DataFrame | None = None,
) -> str:
    out = ""
    if len(dice):
        rows = []
        for r in dice.to_dict("records"):
            rows.append(
                [
                    esc(r["run"]),
                    num(r["rank"], 0),
                    num(r["die"], 0),
                    _mono(r["faces"]),
                    num(r["value"]),
                    (_ci(r["value_low"], r["value_high"])),
                    num(r.get("value_corner")),
                    num(r.get("value_edge")),
                    num(r.get("value_inner")),
                    _mono(r["worst_face"]),
                    _mono(r["best_face"]),
                    num(r["swing"]),
                ]
            )
        header = [
            "run",
            "rank (worst first)",
            "die",
            "faces",
            "value (model estimate)",
            "95% CI",
            "in a corner",
            "on an edge",
            "inside",
            "worst face",
            "best face",
            "best minus worst face",
        ]
        r2 = dice["model_r2"].dropna() if "model_r2" in dice else pd.Series(dtype=float)
        out += (
            "<p>The die on each cell is reconstructed from the run's seed and chunk plan with the "
            "generator's own draws, and used only when that gives back every stored board exactly. "
            "A die's <b>value</b> is the mean adjusted effect of its faces: the points a board gains "
            "from that die against an average cell. The lowest-valued dice are the first to "
            "redesign.</p>"
            + f"<p>{what_if_note(float(r2.iloc[0]) if r2.nunique() == 1 else float('nan'))}"
            + (
                " The model explains "
                + "; ".join(
                    f"{esc(run)}: {v:.0%} (R² {v:.2f})"
                    for run, v in dice.drop_duplicates("run").set_index("run")["model_r2"].items()
                )
                + " of the variation of the score."
                if r2.nunique() > 1
                else ""
            )
            + "</p>"
            + fig
            + table(header, rows, left=1, text_cols=[3, 9, 10], sortable=True, table_id="dice")
        )
    if faces is not None and len(faces):
        frows = [
            [
                esc(r["run"]),
                num(r["die"], 0),
                num(r["side"], 0),
                _mono(r["face"]),
                pct(r["share"]),
                num(r["mean_score"]),
                num(r["adj_effect"]),
            ]
            for r in faces.to_dict("records")
        ]
        fh = ["run", "die", "side", "face", "boards showing it", "mean score then", "adjusted face effect"]
        out += (
            "<details><summary>Every die, side by side: how often it shows each face and the mean "
            "score of those boards</summary>" + table(fh, frows, left=1, sortable=True) + "</details>"
        )
    if len(positions):
        p = positions.pivot_table(index="face", columns=["run", "position"], values="adj_effect", sort=False)
        rows = []
        for face, rec in p.iterrows():
            rows.append([_mono(face), *(num(v) for v in rec.tolist())])
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
                row += [_mono(rec["word"]), pct(rec["share"]), z]
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


def face_comparisons_section(fc: pd.DataFrame, shown: int = 5) -> str:
    """The faces whose adjusted effect, as a share of the mean score, differs most between
    runs (verdicts), then every face's raw and adjusted difference against the first run in a
    sortable table: in points and as a share of each run's mean score (so scaling every score
    reads as scaling, not as a change of face value)."""
    if fc.empty:
        return ""
    adj = fc[fc["kind"] == "adjusted"]
    key = adj["rel_diff"].abs() if "rel_diff" in adj else adj["diff"].abs()
    top = adj.assign(_abs=key).sort_values("_abs", ascending=False).head(shown)
    items = "".join(f"<li>{esc(v)}</li>" for v in top["verdict"])
    rows = [
        [
            esc(r["run"]),
            _mono(r["face"]),
            esc(r["kind"]),
            num(r["reference_effect"], 1),
            num(r["effect"], 1),
            pm(r["diff"], r["diff_low"], r["diff_high"], 1),
            _share_of_mean(r["rel_reference"]),
            _share_of_mean(r["rel_effect"]),
            pm(r["rel_diff"] * 100, r["rel_low"] * 100, r["rel_high"] * 100, 1),
            "same boards" if r["paired"] else "independent",
        ]
        for r in fc.to_dict("records")
    ]
    header = [
        "run",
        "face",
        "effect",
        "first run (points)",
        "this run (points)",
        "difference (± 95%)",
        "first run (% of mean)",
        "this run (% of mean)",
        "difference (percentage points, ± 95%)",
        "boards",
    ]
    return (
        "<h3>Face effects against the first run</h3><p>The faces whose effect, as a share of the "
        "mean score, changes most (when every score is scaled, each face keeps its share):</p>"
        f'<ul class="verdicts">{items}</ul>'
        + table(header, rows, left=3, sortable=True, table_id="face-comparisons")
    )


def _share_of_mean(x: Any) -> str:
    return "–" if pd.isna(x) else f"{float(x) * 100:+.1f}%"


def _pct_ci(low: Any, high: Any) -> str:
    if pd.isna(low) or pd.isna(high):
        return ""
    return f'<span class="ci">{float(low) * 100:.2f}% to {float(high) * 100:.2f}%</span>'


def _driver_rows(drivers: pd.DataFrame) -> list[list[str]]:
    return [
        [
            esc(r["run"]),
            esc(r["factor"]),
            num(r["risk_ratio"]),
            (_ci(r["rr_low"], r["rr_high"])),
            pct(r["p_bad_with"]),
            pct(r["p_bad_without"]),
            pct(r["share_of_boards"]),
            pct(r["share_of_bad"]),
            num(r["boards_with"], 0),
            num(r["bad_with"], 0),
        ]
        for r in drivers.to_dict("records")
    ]


DRIVER_HEADER = [
    "run",
    "factor",
    "risk ratio",
    "95% CI",
    "P(bad | with it)",
    "P(bad | without it)",
    "share of all boards with it",
    "share of bad boards with it",
    "boards with it",
    "bad boards with it",
]


def bad_boards_section(share: pd.DataFrame, drivers: pd.DataFrame, strongest: int = 10) -> str:
    """The share of bad boards per run (Wilson 95% CI), then what drives them: risk ratios of
    board-level factors, by cell position, and the dice faces with the highest risk ratios
    (every die face behind a toggle)."""
    if share.empty:
        return ""
    definition = str(share["definition"].iloc[0])
    rows = [
        [
            esc(r["run"]),
            num(r["boards"], 0),
            num(r["bad"], 0),
            pct(r["share"]),
            _pct_ci(r["share_low"], r["share_high"]),
        ]
        for r in share.to_dict("records")
    ]
    out = (
        f"<p>A board is <b>bad</b> when it has {esc(definition)} (<code>--bad-words</code>, "
        "<code>--bad-score</code>), with its 95% interval.</p>"
        + table(
            ["run", "boards", "bad boards", "share", "95% CI"],
            rows,
            left=1,
            table_id="bad-share",
        )
    )
    if drivers.empty:
        return out
    out += (
        "<h3>What makes a board bad</h3><p><b>Risk ratio</b>: the share of bad boards among the "
        "boards with the factor over the share among those without it, with its 95% interval; "
        "above 1 the factor comes with bad boards. Vowels: cells whose face holds a, e, i, "
        "o or u; Qu is not a vowel (its u only follows its q). Rare letters: j, k, q, x, z (Qu "
        "included). The factors overlap (a Qu die takes a vowel's place), so read them as "
        "associations; the adjusted face effects above separate the faces.</p>"
    )
    board = drivers[drivers["kind"] == "board"]
    out += table(DRIVER_HEADER, _driver_rows(board), left=2, sortable=True, table_id="bad-drivers")
    position = drivers[drivers["kind"] == "position"]
    if len(position):
        out += "<h4>By cell position</h4>" + table(
            DRIVER_HEADER,
            _driver_rows(position),
            left=2,
            sortable=True,
            table_id="bad-positions",
        )
    dice = drivers[drivers["kind"] == "die"]
    if len(dice):
        top = (
            dice[dice["rr_low"] > 1]
            .sort_values(["risk_ratio"], ascending=False, kind="stable")
            .groupby("run", sort=False)
            .head(strongest)
        )
        out += (
            f"<h4>Dice faces</h4><p>The die faces whose risk ratio's interval lies above 1 (at most "
            f"{strongest} per run, highest first): the faces that, shown, make a bad board likelier.</p>"
            + (
                table(
                    DRIVER_HEADER,
                    _driver_rows(top),
                    left=2,
                    sortable=True,
                    table_id="bad-dice",
                )
                if len(top)
                else "<p>None.</p>"
            )
            + "<details><summary>Every die face</summary>"
            + table(DRIVER_HEADER, _driver_rows(dice), left=2, sortable=True)
            + "</details>"
        )
    return out


def serve_section(bands: pd.DataFrame) -> str:
    """Per run, the share of boards in each of Tanglet's word-count bands (Wilson 95% CI) and
    what a run of 100,000 boards yields: the pool ``boggle select --preset`` would write."""
    if bands.empty:
        return ""
    rows = [
        [
            esc(r["run"]),
            esc(r["band"]),
            esc(r["words"]),
            num(r["in_band"], 0),
            num(r["boards"], 0),
            pct(r["share"]),
            _pct_ci(r["share_low"], r["share_high"]),
            num(r["per_100k"], 0),
            _ci(r["per_100k_low"], r["per_100k_high"], 0),
        ]
        for r in bands.to_dict("records")
    ]
    header = [
        "run",
        "band",
        "words",
        "boards in band",
        "boards",
        "share",
        "95% CI",
        "per 100,000 boards",
        "95% CI (per 100,000)",
    ]
    return (
        "<p>Tanglet serves 4x4 boards by word count: easy 32-42, medium 200-250, hard 425-525 words. "
        "How many boards of each run fall in each band (with the 95% interval), and so how many a run "
        "of 100,000 boards yields; <code>boggle select RUN --preset tanglet-medium --out "
        "pool.parquet</code> writes them.</p>"
        + table(header, rows, left=3, sortable=True, table_id="serve-bands")
    )


def trend_section(trend: pd.DataFrame, definition: str, plot_html: str) -> str:
    """Runs over time: the verdict lines, the plot, then one row per night with its intervals,
    control limits and flag (a night outside its limits, or of another design)."""
    from pipeline.analyze.trend import verdict_lines

    if trend.empty:
        return ""
    lines = "".join(f"<li>{esc(t)}</li>" for t in verdict_lines(trend))
    rows = [
        [
            f'<span class="ci">{esc(r["night"])}</span>',
            esc(r["run"]),
            num(r["boards"], 0),
            num(r["score_mean"]),
            _ci(r["score_low"], r["score_high"]),
            _ci(r["score_lcl"], r["score_ucl"]),
            pct(r["bad_share"]),
            _pct_ci(r["bad_low"], r["bad_high"]),
            _pct_ci(r["bad_lcl"], r["bad_ucl"]),
            esc(r["flag"]),
        ]
        for r in trend.to_dict("records")
    ]
    classes = ["flagged" if r["flag"] else "" for r in trend.to_dict("records")]
    return (
        f'<ul class="verdicts" id="trend-verdicts">{lines}</ul>'
        "<p>One point per night of the schedule (runs that carry a date), in date order: the mean "
        f"score and the share of bad boards ({esc(definition)}), each with its 95% interval, and "
        "the control limits of the nights of one design (see the method section). A flagged night "
        "is outside its limits, or was made with another design and is left out of them.</p>"
        + plot_html
        + table(
            [
                "night",
                "run",
                "boards",
                "mean score",
                "95% CI",
                "control limits",
                "bad share",
                "95% CI",
                "control limits",
                "flag",
            ],
            rows,
            left=2,
            text_cols=[9],
            row_classes=classes,
            table_id="trend",
            all_rows=True,
        )
    )
