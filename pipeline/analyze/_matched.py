"""Matched chunks of two paired runs: chunk k of one against chunk k of the other, read a few
columns at a time (never the word lists), into exact paired sums that add up over the chunks
(:class:`PairTotals`) for :mod:`pipeline.analyze._paired`.

Two runs pair when they hold the same boards (``boards``: another word list or rule set), or
when they share their draws (``draws``: a what-if's arms, the same seed, chunk size and number
of dice and sides, so each board has the same die on every cell and the same side of it, and
the boards differ only where the dice do). Boards that differ cannot share a face design, so
the paired face effects are for the first kind only."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from pipeline import stats
from pipeline.analyze._gather import part_jobs, read_part
from pipeline.errors import BoggleError

if TYPE_CHECKING:
    from pipeline.analyze._gather import Gathered, PartJob
    from pipeline.analyze._runs import RunInfo

# Each metric of compare.METRICS as a per-board column (and a threshold for the shares).
PAIRED_EXPR: dict[str, tuple[str, int | None]] = {
    "score": ("score", None),
    "words": ("n_words", None),
    "longest_len": ("max_word_len", None),
    "dead_cells": ("dead_cells", None),
    "share_lt10_words": ("n_words", -10),  # n_words < 10
    "share_dead_ge1": ("dead_cells", 1),  # dead_cells >= 1
}
PAIR_COLUMNS = ["board_id", "board", "score", "n_words", "max_word_len", "dead_cells"]
SAME_BOARDS, SAME_DRAWS = "boards", "draws"


@dataclass(frozen=True)
class PairPlan:
    """What the paired pass computes for one pair of runs (picklable)."""

    faces: tuple[str, ...] | None  # the reference's faces (None: no face effects)
    shape: tuple[int, int] | None
    coef_d: np.ndarray | None  # [1, K] the fit of the score difference
    coef_r: np.ndarray | None  # [1, K] the fit of the relative difference
    mean_a: float
    mean_b: float
    top: int
    kind: str = SAME_BOARDS
    bad: stats.BadDefinition = field(default_factory=stats.BadDefinition)
    # (name, lowest, highest word count) of each band whose share is compared board by board
    bands: tuple[tuple[str, int | None, int | None], ...] = ()

    def metrics(self) -> list[str]:
        """The paired metrics, in the order of :attr:`PairResult.sums`' rows."""
        return [*PAIRED_EXPR, "bad_share", *(f"band:{name}" for name, _, _ in self.bands)]


def _indicators(table: Any, plan: PairPlan) -> list[np.ndarray]:
    """Per board, 1 when it is bad and 1 when it is in each band (plan's order)."""
    n_words = table.column("n_words").to_numpy().astype(np.int64)
    score = table.column("score").to_numpy().astype(np.int64)
    out = [plan.bad.mask(n_words, score).astype(np.int64)]
    for _, lo, hi in plan.bands:
        inside = np.ones(len(n_words), dtype=bool)
        if lo is not None:
            inside &= n_words >= lo
        if hi is not None:
            inside &= n_words <= hi
        out.append(inside.astype(np.int64))
    return out


@dataclass
class PairResult:
    """One chunk's paired statistics (every sum an exact integer but the meats)."""

    same: bool
    diff_values: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    diff_counts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    sums: np.ndarray = field(default_factory=lambda: np.zeros((0, 6), np.int64))  # a row a metric
    cross: np.ndarray | None = None  # [6, K]
    meat_d: np.ndarray | None = None
    meat_r: np.ndarray | None = None
    top: list[tuple[int, int, int]] = field(default_factory=list)  # (|diff|, board_id, chunk)


def _metric(table: Any, column: str, threshold: int | None) -> np.ndarray:
    v = table.column(column).to_numpy().astype(np.int64)
    if threshold is None:
        return v
    return (v < -threshold).astype(np.int64) if threshold < 0 else (v >= threshold).astype(np.int64)


def pair_chunk(ref: PartJob, run: PartJob, plan: PairPlan) -> PairResult:
    """The paired statistics of one chunk of two runs (``same`` False: the chunks are not the
    same boards, or for ``draws`` not the same board ids)."""
    a_t = read_part(ref, PAIR_COLUMNS)
    b_t = read_part(run, PAIR_COLUMNS)
    same_ids = a_t.num_rows == b_t.num_rows and a_t.column("board_id").equals(b_t.column("board_id"))
    same_boards = same_ids and a_t.column("board").equals(b_t.column("board"))
    if not (same_boards or (same_ids and plan.kind == SAME_DRAWS)):
        return PairResult(False)
    out = PairResult(True)
    a = a_t.column("score").to_numpy().astype(np.int64)
    b = b_t.column("score").to_numpy().astype(np.int64)
    d = b - a
    out.diff_values, out.diff_counts = np.unique(d, return_counts=True)
    xs = [_metric(a_t, column, threshold) for column, threshold in PAIRED_EXPR.values()] + _indicators(
        a_t, plan
    )
    ys = [_metric(b_t, column, threshold) for column, threshold in PAIRED_EXPR.values()] + _indicators(
        b_t, plan
    )
    out.sums = np.array(
        [
            [len(x), x.sum(), y.sum(), (x * x).sum(), (y * y).sum(), (x * y).sum()]
            for x, y in zip(xs, ys, strict=True)
        ],
        dtype=np.int64,
    ).reshape(len(xs), 6)
    ids = a_t.column("board_id").to_numpy()
    order = np.lexsort((ids, -np.abs(d)))[: plan.top]
    out.top = [(int(abs(d[i])), int(ids[i]), ref.chunk) for i in order.tolist()]
    if plan.faces is not None and plan.shape is not None and plan.kind == SAME_BOARDS:
        part_faces, local = stats.decode_column(a_t.column("board"), *plan.shape)
        index = {f: i for i, f in enumerate(plan.faces)}
        codes = (
            np.array([index[f] for f in part_faces], np.int64)[local]
            if len(local)
            else local.astype(np.int64)
        )
        k = len(plan.faces)
        blank = index.get(stats.BLANK_FACE, -1)
        out.cross = stats.face_cross(codes, a, b, k, blank)
        zeros = np.zeros(len(a), np.int64)
        if plan.coef_d is not None and plan.coef_r is not None:
            out.meat_d, _ = stats.meat(codes, d.astype(np.float64), zeros, plan.coef_d, k, 1)
            r = b / plan.mean_b - a / plan.mean_a
            out.meat_r, _ = stats.meat(codes, r, zeros, plan.coef_r, k, 1)
    return out


@dataclass
class PairTotals:
    """A pair's paired statistics, summed over its chunks."""

    same: bool = True
    diff: dict[int, int] = field(default_factory=dict)
    sums: np.ndarray | None = None
    cross: np.ndarray | None = None
    meat_d: np.ndarray | None = None
    meat_r: np.ndarray | None = None
    top: list[tuple[int, int, int]] = field(default_factory=list)

    def add(self, res: PairResult, k: int) -> None:
        if not res.same:
            self.same = False
            return
        for v, c in zip(res.diff_values.tolist(), res.diff_counts.tolist(), strict=True):
            self.diff[v] = self.diff.get(v, 0) + c
        self.sums = res.sums.astype(object) if self.sums is None else self.sums + res.sums.astype(object)
        for name in ("cross", "meat_d", "meat_r"):
            got = getattr(res, name)
            if got is not None:
                acc = getattr(self, name)
                setattr(self, name, got.copy() if acc is None else acc + got)
        self.top = sorted(self.top + res.top, key=lambda t: (-t[0], t[1]))[:k]


def _shares_draws(a: RunInfo, b: RunInfo) -> bool:
    """Whether two generated dice runs roll the same draws: the same seed, chunk size, count,
    shape and placement, and dice sets of as many dice of as many sides (the dice permutation
    and the side of each die do not depend on the faces: :func:`pipeline.boards.roll_dice_layout`)."""
    from pipeline.analyze._gather import dice_recipe, dice_set_of

    ca, cb = a.config.get("boards"), b.config.get("boards")
    if not isinstance(ca, dict) or not isinstance(cb, dict):
        return False
    if any(ca.get(k) != cb.get(k) for k in ("source", "seed", "chunk_size", "count", "placement")):
        return False
    ra, rb = dice_recipe(a)[0], dice_recipe(b)[0]
    if ra is None or rb is None:
        return False
    try:
        da, db = dice_set_of(ra), dice_set_of(rb)
    except BoggleError:
        return False
    return (da.rows, da.cols, len(da.dice), max(map(len, da.dice))) == (
        db.rows,
        db.cols,
        len(db.dice),
        max(map(len, db.dice)),
    )


def pairing(ref: Gathered, run: Gathered) -> str | None:
    """How two runs pair, if they do: the same boards (same parts, row for row, and the same
    boards in the first part), or the same draws; the paired pass checks every part."""
    from pipeline.store import listed_parts

    pa_ = listed_parts(ref.run.manifest, str(ref.run.path))
    pb_ = listed_parts(run.run.manifest, str(run.run.path))
    if sorted(pa_) != sorted(pb_) or any(pa_[k].rows != pb_[k].rows for k in pa_) or not pa_:
        return None
    first_a, first_b = part_jobs(0, ref.run, None)[0], part_jobs(0, run.run, None)[0]
    a = read_part(first_a, ["board_id", "board"])
    b = read_part(first_b, ["board_id", "board"])
    if not a.column("board_id").equals(b.column("board_id")):
        return None
    if a.column("board").equals(b.column("board")):
        return SAME_BOARDS
    return SAME_DRAWS if _shares_draws(ref.run, run.run) else None
