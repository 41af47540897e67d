"""The least-squares fits of the report's board-level models, from a run's merged statistics:
the count design's ``X'X`` and ``X'y`` (:mod:`pipeline.stats`) give the coefficients; the meat
of the HC1 covariance and the residual sum of squares come from the analysis's second pass
(:mod:`pipeline.analyze._gather`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pipeline import stats


@dataclass
class Model:
    """One least-squares fit of the count design from its merged ``X'X`` and ``X'y``, and the
    meat and residual sum of squares of its second pass."""

    xtx: np.ndarray
    xty: np.ndarray
    n: int
    meat: np.ndarray | None = None
    rss: float = 0.0
    inv: np.ndarray = field(init=False)
    coef: np.ndarray = field(init=False)
    rank: int = field(init=False)

    def __post_init__(self) -> None:
        a = self.xtx.astype(np.float64)
        self.inv = np.linalg.pinv(a)
        self.coef = self.inv @ self.xty.astype(np.float64)
        self.rank = int(np.linalg.matrix_rank(a))
        self.meat = np.zeros_like(a)

    def fit(self) -> Any:
        """The :class:`~pipeline.analyze._inference.Fit` with the HC1 covariance."""
        from pipeline.analyze._inference import Fit

        assert self.meat is not None
        cov = (self.n / max(1, self.n - self.rank)) * self.inv @ self.meat @ self.inv
        return Fit(self.coef, cov, self.n)

    def cell_shares(self, cells: int) -> np.ndarray:
        """Each column's share of the cells: a board's counts add up to its cells, so a row of
        ``X'X`` sums to ``cells`` times the column's cell count."""
        counts = self.xtx.sum(axis=1).astype(np.float64) / cells
        return counts / max(1.0, counts.sum())


@dataclass
class RunModels:
    """A run's fits over its faces (sorted, the blank included): one per source, all sources
    pooled, and the (face, position class) fit."""

    faces: list[str]
    cells: int
    by_source: dict[str, Model]
    pooled: Model
    position: Model


def _pad(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    out = np.zeros(shape, a.dtype)
    out[tuple(slice(0, n) for n in a.shape)] = a
    return out


def run_models(rs: stats.RunStats) -> RunModels | None:
    """The run's fits over its faces, or None when its boards have several shapes."""
    shape = rs.shape
    if shape is None or rs.pos_xtx is None or rs.pos_xty is None:
        return None
    faces, order = rs.faces_sorted()
    k = len(faces)
    cells = shape[0] * shape[1]
    by_source = {}
    pooled_xtx = np.zeros((k, k), np.int64)
    pooled_xty = np.zeros(k, np.int64)
    for name in rs.sources():
        # a source's sums are as wide as the faces known when its last part came
        xtx = _pad(rs.xtx[name], (k, k))[np.ix_(order, order)]
        xty = _pad(rs.xty[name], (k,))[order]
        n = int(rs.value_counts("score", name)[1].sum())
        by_source[name] = Model(xtx, xty, n)
        pooled_xtx += xtx
        pooled_xty += xty
    one = len(by_source) == 1
    pooled = next(iter(by_source.values())) if one else Model(pooled_xtx, pooled_xty, rs.boards)
    pxtx = rs.pos_xtx[:, order][:, :, :, order].reshape(3 * k, 3 * k)
    pxty = rs.pos_xty[:, order].reshape(3 * k)
    return RunModels(faces, cells, by_source, pooled, Model(pxtx, pxty, rs.boards))
