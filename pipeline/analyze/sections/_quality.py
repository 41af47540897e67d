"""The report's sections on board quality for serving: bad boards and what drives them, the
boards of each Tanglet band, and runs over time (the nights of a schedule).
"""

from __future__ import annotations

import pandas as pd

from pipeline.analyze._html import Cell, ci, column_table, esc, field, num, pct, pct_ci, table, whole

# What makes a board bad: a factor's risk ratio and the shares behind it.
DRIVER_COLUMNS: dict[str, Cell] = {
    "run": field(esc, "run"),
    "factor": field(esc, "factor"),
    "risk ratio": field(num, "risk_ratio"),
    "95% CI": field(ci, "rr_low", "rr_high"),
    "P(bad | with it)": field(pct, "p_bad_with"),
    "P(bad | without it)": field(pct, "p_bad_without"),
    "share of all boards with it": field(pct, "share_of_boards"),
    "share of bad boards with it": field(pct, "share_of_bad"),
    "boards with it": field(whole, "boards_with"),
    "bad boards with it": field(whole, "bad_with"),
}


def _drivers_table(drivers: pd.DataFrame, table_id: str = "") -> str:
    return column_table(DRIVER_COLUMNS, drivers.to_dict("records"), left=2, sortable=True, table_id=table_id)


# Per run: its bad boards, as a count and a share.
BAD_SHARE_COLUMNS: dict[str, Cell] = {
    "run": field(esc, "run"),
    "boards": field(whole, "boards"),
    "bad boards": field(whole, "bad"),
    "share": field(pct, "share"),
    "95% CI": field(pct_ci, "share_low", "share_high"),
}


def bad_boards_section(share: pd.DataFrame, drivers: pd.DataFrame, strongest: int = 10) -> str:
    """The share of bad boards per run (Wilson 95% CI), then what drives them: risk ratios of
    board-level factors, by cell position, and the dice faces with the highest risk ratios
    (every die face behind a toggle)."""
    if share.empty:
        return ""
    definition = str(share["definition"].iloc[0])
    out = (
        f"<p>A board is <b>bad</b> when it has {esc(definition)} (<code>--bad-words</code>, "
        "<code>--bad-score</code>), with its 95% interval.</p>"
        + column_table(BAD_SHARE_COLUMNS, share.to_dict("records"), left=1, table_id="bad-share")
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
    out += _drivers_table(board, "bad-drivers")
    together = drivers[drivers["kind"] == "interaction"]
    if len(together):
        out += (
            "<h4>Together</h4><p>Two Qu faces, two rare letters, and a Qu with no vowel on any cell "
            "around it (a word can only go on from its u through a neighbour): what one face alone "
            "does not show.</p>" + _drivers_table(together, "bad-together")
        )
    position = drivers[drivers["kind"] == "position"]
    if len(position):
        out += "<h4>By cell position</h4>" + _drivers_table(position, "bad-positions")
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
            + (_drivers_table(top, "bad-dice") if len(top) else "<p>None.</p>")
            + "<details><summary>Every die face</summary>"
            + _drivers_table(dice)
            + "</details>"
        )
    return out


# Per run and Tanglet band: the boards in it, as a share and per 100,000 boards.
SERVE_COLUMNS: dict[str, Cell] = {
    "run": field(esc, "run"),
    "band": field(esc, "band"),
    "words": field(esc, "words"),
    "boards in band": field(whole, "in_band"),
    "boards": field(whole, "boards"),
    "share": field(pct, "share"),
    "95% CI": field(pct_ci, "share_low", "share_high"),
    "per 100,000 boards": field(whole, "per_100k"),
    "95% CI (per 100,000)": field(ci, "per_100k_low", "per_100k_high", digits=0),
}


def serve_section(bands: pd.DataFrame) -> str:
    """Per run, the share of boards in each of Tanglet's word-count bands (Wilson 95% CI) and
    what a run of 100,000 boards yields: the pool ``boggle select --preset`` would write."""
    if bands.empty:
        return ""
    return (
        "<p>Tanglet serves 4x4 boards by word count: easy 32-42, medium 200-250, hard 425-525 words. "
        "How many boards of each run fall in each band (with the 95% interval), and so how many a run "
        "of 100,000 boards yields; <code>boggle select RUN --preset tanglet-medium --out "
        "pool.parquet</code> writes them.</p>"
        + column_table(SERVE_COLUMNS, bands.to_dict("records"), left=3, sortable=True, table_id="serve-bands")
    )


def trend_section(trend: pd.DataFrame, definition: str, plot_html: str) -> str:
    """Runs over time: the verdict lines, the plot, then one row per night with its intervals,
    control limits and flag (a night outside its limits, or of another design)."""
    from pipeline.analyze._trend import verdict_lines

    if trend.empty:
        return ""
    lines = "".join(f"<li>{esc(t)}</li>" for t in verdict_lines(trend))
    rows = [
        [
            f'<span class="ci">{esc(r["night"])}</span>',
            esc(r["run"]),
            num(r["boards"], 0),
            num(r["score_mean"]),
            ci(r["score_low"], r["score_high"]),
            ci(r["score_lcl"], r["score_ucl"]),
            pct(r["bad_share"]),
            pct_ci(r["bad_low"], r["bad_high"]),
            pct_ci(r["bad_lcl"], r["bad_ucl"]),
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
