"""Bad boards, explained: how many boards of each run a player would call bad, and what makes
them bad.

**Definition** (:class:`BadDefinition`, stated in the report): a board is bad when it has fewer
than 50 words (``boggle analyze --bad-words 50``); ``--bad-score N`` makes boards under N points
bad too (alone, it replaces the word count). The share of bad boards per run comes with its 95%
Wilson interval.

**Drivers.** For each factor a board may have, the *risk ratio* ``P(bad | factor) /
P(bad | no factor)`` with its 95% interval (log method, :func:`~pipeline.analyze.inference.risk_ratio`),
and the share of all boards and of bad boards that have it:

* at most 3 vowel cells: a cell counts when its face holds a, e, i, o or u, except Qu (its u
  can only follow its q, so it never serves as a vowel of its own); a multi-letter face such
  as ``in`` or ``er`` counts once;
* a dead cell (the run's ``dead_cells`` column: a non-blank cell no found word uses);
* a Qu face; a rare letter (a face holding j, k, q, x or z; Qu included);
* per position class: a rare letter, or Qu, on a corner, an edge or an inner cell
  (:func:`pipeline.analyze.cells.position_classes`);
* per die, for dice runs whose layout the analysis rebuilds (:func:`pipeline.analyze.cells.reconstruct_dice`):
  the die showing each of its faces.

Risk ratios are associations, not effects: a Qu face comes with fewer vowels elsewhere, so the
factors overlap (the adjusted face effects of the report separate the faces).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from pipeline.analyze.cells import BLANK_FACE, POSITIONS, DiceLayout, position_classes, read_board_faces
from pipeline.analyze.inference import risk_ratio, wilson
from pipeline.analyze.runs import RunInfo
from pipeline.errors import BoggleError

if TYPE_CHECKING:
    import duckdb

VOWELS = frozenset("aeiou")
RARE_LETTERS = frozenset("jkqxz")
QU = "qu"
MAX_VOWELS = 3
DEFAULT_BAD_WORDS = 50

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


@dataclass(frozen=True)
class BadDefinition:
    """A board is bad when it has fewer than ``words`` words or fewer than ``score`` points
    (a criterion that is None is not used; at least one must be set).

    >>> BadDefinition().describe()
    'fewer than 50 words'
    """

    words: int | None = DEFAULT_BAD_WORDS
    score: int | None = None

    def __post_init__(self) -> None:
        if self.words is None and self.score is None:
            raise BoggleError("a bad board needs a definition: --bad-words N or --bad-score N")
        for name, v in (("--bad-words", self.words), ("--bad-score", self.score)):
            if v is not None and v < 1:
                raise BoggleError(f"{name} {v}: must be 1 or more (boards under it are bad)")

    @classmethod
    def from_options(cls, words: int | None, score: int | None) -> BadDefinition:
        """The CLI's ``--bad-words``/``--bad-score``: neither gives the default, ``--bad-score``
        alone replaces the word count, both together mean either."""
        if words is None and score is None:
            return cls()
        return cls(words, score)

    def describe(self) -> str:
        parts = []
        if self.words is not None:
            parts.append(f"fewer than {self.words:,} words")
        if self.score is not None:
            parts.append(f"fewer than {self.score:,} points")
        return " or ".join(parts)

    def mask(self, n_words: np.ndarray, score: np.ndarray) -> np.ndarray:
        bad = np.zeros(len(n_words), dtype=bool)
        if self.words is not None:
            bad |= np.asarray(n_words) < self.words
        if self.score is not None:
            bad |= np.asarray(score) < self.score
        return bad


def vowel_face(face: str) -> bool:
    """Whether a cell showing ``face`` counts as a vowel (Qu does not)."""
    return face != QU and face != BLANK_FACE and any(ch in VOWELS for ch in face)


def rare_face(face: str) -> bool:
    return face != BLANK_FACE and any(ch in RARE_LETTERS for ch in face)


def driver_row(run: str, kind: str, factor: str, has: np.ndarray, bad: np.ndarray) -> dict[str, Any]:
    """One factor's counts, shares and risk ratio (95% log interval)."""
    n = len(bad)
    n1 = int(has.sum())
    a = int((has & bad).sum())
    c = int((~has & bad).sum())
    n0 = n - n1
    total_bad = int(bad.sum())
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


def bad_tables(
    con: duckdb.DuckDBPyConnection,
    runs: Sequence[RunInfo],
    definition: BadDefinition | None = None,
    layouts: Mapping[str, DiceLayout] | None = None,
) -> BadTables:
    """Bad boards of every run of the ``boards`` view: their share (Wilson 95% CI) and the risk
    ratio of each driver (see the module's description). ``layouts``: the dice layouts the
    analysis rebuilt (per run label), for the per-die factors."""
    definition = definition or BadDefinition()
    shares, drivers, notes = [], [], []
    for run in runs:
        got = con.execute(
            "SELECT board_id, n_words, score, dead_cells FROM boards WHERE run = ? ORDER BY board_id",
            [run.label],
        ).fetchnumpy()
        n_words, score = np.asarray(got["n_words"]), np.asarray(got["score"])
        bad = definition.mask(n_words, score)
        iv = wilson(int(bad.sum()), len(bad))
        shares.append(
            {
                "run": run.label,
                "definition": definition.describe(),
                "boards": len(bad),
                "bad": int(bad.sum()),
                "share": iv.estimate,
                "share_low": iv.low,
                "share_high": iv.high,
            }
        )
        rows = [driver_row(run.label, "board", "a dead cell", np.asarray(got["dead_cells"]) >= 1, bad)]
        bf = read_board_faces(con, run.label)
        if bf is None or not np.array_equal(bf.board_id, np.asarray(got["board_id"])):
            notes.append(f"{run.label}: boards of several shapes; only the dead-cell driver of bad boards")
            drivers += rows
            continue
        vowel = np.array([vowel_face(f) for f in bf.faces])[bf.codes]
        rare = np.array([rare_face(f) for f in bf.faces])[bf.codes]
        qu = np.array([f == QU for f in bf.faces])[bf.codes]
        few_vowels = vowel.sum(axis=1) <= MAX_VOWELS
        rows += [
            driver_row(run.label, "board", f"at most {MAX_VOWELS} vowels", few_vowels, bad),
            driver_row(run.label, "board", "a Qu face", qu.any(axis=1), bad),
            driver_row(run.label, "board", "a rare letter (j k q x z)", rare.any(axis=1), bad),
        ]
        classes = position_classes(bf.rows, bf.cols)
        for what, flags in (("a rare letter", rare), ("Qu", qu)):
            for k in sorted(set(classes.tolist())):
                where = {"corner": "on a corner", "edge": "on an edge", "inner": "on an inner cell"}[
                    POSITIONS[k]
                ]
                has = (flags & (classes == k)[None, :]).any(axis=1)
                rows.append(driver_row(run.label, "position", f"{what} {where}", has, bad))
        layout = (layouts or {}).get(run.label)
        if layout is not None:
            for d, sides in enumerate(layout.dice):
                on = layout.die == d
                named = " ".join(f or "·" for f in sides)
                for face in dict.fromkeys(sides):  # a face printed on two sides is one factor
                    js = [j for j, s in enumerate(sides) if s == face]
                    has = (on & np.isin(layout.side, js)).any(axis=1)
                    factor = f"die {d + 1} ({named}) shows {face or '·'}"
                    rows.append(driver_row(run.label, "die", factor, has, bad))
        drivers += rows
    return BadTables(
        pd.DataFrame(shares, columns=SHARE_COLUMNS), pd.DataFrame(drivers, columns=DRIVER_COLUMNS), notes
    )
