"""The report's sections on board quality for serving: bad boards and what drives them, the
boards of each Tanglet band, and runs over time (the nights of a schedule).
"""

from __future__ import annotations

import pandas as pd

from pipeline.analyze.html import ci, esc, num, pct, pct_ci, table


def _driver_rows(drivers: pd.DataFrame) -> list[list[str]]:
    return [
        [
            esc(r["run"]),
            esc(r["factor"]),
            num(r["risk_ratio"]),
            (ci(r["rr_low"], r["rr_high"])),
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
            pct_ci(r["share_low"], r["share_high"]),
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
    together = drivers[drivers["kind"] == "interaction"]
    if len(together):
        out += (
            "<h4>Together</h4><p>Two Qu faces, two rare letters, and a Qu with no vowel on any cell "
            "around it (a word can only go on from its u through a neighbour): what one face alone "
            "does not show.</p>"
            + table(DRIVER_HEADER, _driver_rows(together), left=2, sortable=True, table_id="bad-together")
        )
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
            pct_ci(r["share_low"], r["share_high"]),
            num(r["per_100k"], 0),
            ci(r["per_100k_low"], r["per_100k_high"], 0),
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
