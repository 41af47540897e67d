"""Bad boards, explained: how many boards of each run a player would call bad, and what makes
them bad.

**Definition** (:class:`BadDefinition`, stated in the report): a board is bad when it has fewer
than 50 words (``boggle analyze --bad-words 50``); ``--bad-score N`` makes boards under N points
bad too (alone, it replaces the word count). The share of bad boards per run comes with its 95%
Wilson interval.

**Drivers.** For each factor a board may have, the *risk ratio* ``P(bad | factor) /
P(bad | no factor)`` with its 95% interval (log method, :func:`~pipeline.analyze._inference.risk_ratio`),
and the share of all boards and of bad boards that have it:

* at most 3 vowel cells: a cell counts when its face holds a, e, i, o or u, except Qu (its u
  can only follow its q, so it never serves as a vowel of its own); a multi-letter face such
  as ``in`` or ``er`` counts once;
* a dead cell (the run's ``dead_cells`` column: a non-blank cell no found word uses);
* a Qu face; a rare letter (a face holding j, k, q, x or z; Qu included);
* per position class: a rare letter, or Qu, on a corner, an edge or an inner cell
  (:func:`pipeline.analyze._cells.position_classes`);
* per die, for dice runs whose layout the analysis rebuilds
  (:func:`pipeline.analyze._cells.reconstruct_dice`): the die showing each of its faces.

Risk ratios are associations, not effects: a Qu face comes with fewer vowels elsewhere, so the
factors overlap (the adjusted face effects of the report separate the faces).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from pipeline.analyze._inference import risk_ratio, wilson
from pipeline.stats import (
    DEAD_CELL,
    DEFAULT_BAD_WORDS,
    MAX_VOWELS,
    QU,
    RARE_LETTERS,
    VOWELS,
    BadDefinition,
    rare_face,
    vowel_face,
)

if TYPE_CHECKING:
    from pipeline.analyze._gather import Gathered

__all__ = [
    "DEFAULT_BAD_WORDS",
    "DRIVER_COLUMNS",
    "MAX_VOWELS",
    "QU",
    "RARE_LETTERS",
    "SHARE_COLUMNS",
    "VOWELS",
    "BadDefinition",
    "BadTables",
    "bad_tables",
    "driver_row",
    "rare_face",
    "vowel_face",
]

SHARE_COLUMNS = ["run", "definition", "boards", "bad", "share", "share_low", "share_high"]
DRIVER_COLUMNS = [
    "run",
    "kind",
    "factor",
    "boards_with",
    "share_of_boards",
    "bad_with",
    "share_of_bad",
    "p_bad_with",
    "p_bad_without",
    "risk_ratio",
    "rr_low",
    "rr_high",
]


def driver_row(run: str, kind: str, factor: str, n1: int, a: int, n: int, total_bad: int) -> dict[str, Any]:
    """One factor's counts, shares and risk ratio (95% log interval): ``n1`` of the ``n``
    boards have it, ``a`` of them bad, of ``total_bad`` bad boards in all."""
    c = total_bad - a
    n0 = n - n1
    rr = risk_ratio(a, n1, c, n0)
    return {
        "run": run,
        "kind": kind,
        "factor": factor,
        "boards_with": n1,
        "share_of_boards": n1 / n if n else np.nan,
        "bad_with": a,
        "share_of_bad": a / total_bad if total_bad else np.nan,
        "p_bad_with": a / n1 if n1 else np.nan,
        "p_bad_without": c / n0 if n0 else np.nan,
        "risk_ratio": rr.estimate,
        "rr_low": rr.low,
        "rr_high": rr.high,
    }


@dataclass
class BadTables:
    """The share of bad boards per run and the drivers (one row per run and factor)."""

    share: pd.DataFrame
    drivers: pd.DataFrame
    notes: list[str]


def bad_tables(gathered: Sequence[Gathered], definition: BadDefinition | None = None) -> BadTables:
    """Bad boards of every run: their share (Wilson 95% CI) and the risk ratio of each driver
    (see the module's description), from the runs' statistics (counted for ``definition``)."""
    definition = definition or BadDefinition()
    shares, drivers, notes = [], [], []
    for g in gathered:
        rs, label = g.stats, g.run.label
        n, total_bad = rs.boards, rs.bad
        iv = wilson(total_bad, n)
        shares.append(
            {
                "run": label,
                "definition": definition.describe(),
                "boards": n,
                "bad": total_bad,
                "share": iv.estimate,
                "share_low": iv.low,
                "share_high": iv.high,
            }
        )
        for name, (has, bad) in rs.factors.items():
            # boards of several shapes: only the dead-cell driver counts every board
            if rs.shape is None and name != DEAD_CELL:
                continue
            kind, factor = name.split("\t", 1)
            drivers.append(driver_row(label, kind, factor, has, bad, n, total_bad))
        if rs.shape is None:
            notes.append(f"{label}: boards of several shapes; only the dead-cell driver of bad boards")
            continue
        if rs.dice is not None and rs.die is not None:
            for d, sides in enumerate(rs.dice):
                named = " ".join(f or "·" for f in sides)
                for face in dict.fromkeys(sides):  # a face printed on two sides is one factor
                    js = [j for j, side in enumerate(sides) if side == face]
                    has = int(rs.die[0, d, js].sum())
                    bad = int(rs.die[2, d, js].sum())
                    factor = f"die {d + 1} ({named}) shows {face or '·'}"
                    drivers.append(driver_row(label, "die", factor, has, bad, n, total_bad))
    return BadTables(
        pd.DataFrame(shares, columns=SHARE_COLUMNS), pd.DataFrame(drivers, columns=DRIVER_COLUMNS), notes
    )
