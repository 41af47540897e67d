"""Board-level models: face effects adjusted for the other faces, effects by cell position
(corner, edge, inner) and, for dice runs, what each die is worth.

**Model.** ``score = sum over faces f of beta_f * count_f + error``, one coefficient per face
(blank cells included as a face), fitted by least squares with HC1 robust intervals (see
:mod:`pipeline.analyze._inference`). The counts of a board add up to its cells, so only
differences of coefficients are identified: the *adjusted effect* of a face is ``beta_f`` minus
the cell-weighted mean coefficient, i.e. the points a board gains when one of its cells shows
``f`` instead of an average face, the other cells unchanged. The position model fits one
coefficient per (face, position class), compared within the class.

The fits come from the runs' merged ``X'X`` and ``X'y`` and the meat of the second pass
(:mod:`pipeline.analyze._gather`): the same numbers as a fit over every board in memory, which
:func:`adjusted_effects` and :func:`position_effects` still do for the boards a caller holds
(``boggle what-if``, the tests).

**Dice.** The die on each cell is not stored in the parts: the worker that rolled a chunk
counted, per die and side, the boards showing it and their score (a part written before that
gets its dice re-rolled from the seed, used only when they give back its boards exactly). A
die's *value* is the mean adjusted effect of its faces (each face shows with probability
1/faces): the points a board gains, on average, from that die against an average cell. The
lowest-valued dice are the ones to redesign.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from pipeline.analyze._inference import Fit
from pipeline.stats import BLANK_FACE, POSITIONS, decode_boards, position_classes

if TYPE_CHECKING:
    from pipeline.analyze._gather import Gathered
    from pipeline.analyze._models import Model

__all__ = [
    "BLANK_FACE",
    "POSITIONS",
    "CellTables",
    "adjusted_effects",
    "cell_tables",
    "count_design_matrix",
    "decode_boards",
    "fit_counts",
    "position_classes",
    "position_effects",
    "r_squared",
]


def design(codes: np.ndarray, n_faces: int, classes: np.ndarray | None = None) -> np.ndarray:
    """Each cell's column in the count design: the face, or (with ``classes``) the pair
    (face, class) as column ``class * n_faces + face``."""
    if classes is None:
        return codes.astype(np.int64)
    return codes.astype(np.int64) + classes.astype(np.int64)[None, :] * n_faces


def count_design_matrix(codes: np.ndarray, n_faces: int) -> np.ndarray:
    """The dense count design (boards x faces) that :func:`fit_counts` never builds: for
    checks and small data."""
    n = codes.shape[0]
    keys = (np.arange(n)[:, None] * n_faces + codes.astype(np.int64)).ravel()
    return np.bincount(keys, minlength=n * n_faces).reshape(n, n_faces).astype(np.float64)


def _gram(cols: np.ndarray, k: int, weights: np.ndarray | None) -> np.ndarray:
    """``X.T @ diag(weights) @ X`` of the count design without building X: every board adds 1
    (or its weight) at (column of cell i, column of cell j) for each pair of cells, so one
    weighted bincount per cell i does it, over the cells j > i (the gram is symmetric; dense
    products are several times slower here)."""
    cells = cols.shape[1]
    upper = np.zeros(k * k)
    for i in range(cells - 1):
        keys = (cols[:, i : i + 1] * k + cols[:, i + 1 :]).ravel()
        w = None if weights is None else np.repeat(weights, cells - 1 - i)
        upper += np.bincount(keys, weights=w, minlength=k * k)
    w_all = None if weights is None else np.repeat(weights, cells)
    diag = np.bincount((cols * (k + 1)).ravel(), weights=w_all, minlength=k * k)
    a = upper.reshape(k, k)
    return a + a.T + diag.reshape(k, k)


def fit_counts(cols: np.ndarray, k: int, y: np.ndarray) -> tuple[Fit, np.ndarray]:
    """Least squares of ``y`` on the cell counts of each column (no intercept: the counts of a
    board add up to its cells), with the HC1 covariance; also each column's share of cells."""
    from pipeline.analyze._inference import hc1_fit

    n, cells = cols.shape
    flat = cols.ravel()
    counts = np.bincount(flat, minlength=k).astype(np.float64)
    xty = np.bincount(flat, weights=np.repeat(y, cells), minlength=k)
    xtx = _gram(cols, k, None)

    def resid_of(coef: np.ndarray) -> np.ndarray:
        return y - coef[cols].sum(axis=1)

    fit = hc1_fit(xtx, xty, n, resid_of, lambda r: _gram(cols, k, r * r))
    return fit, counts / max(1.0, counts.sum())


def _centred(fit: Fit, weights: np.ndarray, cols: Sequence[int], k: int) -> list[tuple[float, float, float]]:
    """For each column c of ``cols``: coef[c] minus the ``weights``-average of ``cols``' coefs."""
    out = []
    for c in cols:
        w = np.zeros(k)
        w[list(cols)] -= weights
        w[c] += 1.0
        iv = fit.contrast(w)
        out.append((iv.estimate, iv.low, iv.high))
    return out


def adjusted_effects(
    codes: np.ndarray, faces: Sequence[str], score: np.ndarray
) -> tuple[pd.DataFrame, Fit, np.ndarray]:
    """Adjusted effect of each face (points for one cell showing it instead of an average
    face) with its 95% interval; the blank pseudo-face is fitted but not listed. Also the fit
    and each face's share of the cells."""
    f = len(faces)
    fit, share = fit_counts(design(codes, f), f, score)
    rows = []
    for i, (est, lo, hi) in enumerate(_centred(fit, share, range(f), f)):
        if faces[i] != BLANK_FACE:
            rows.append(
                {"face": faces[i], "cell_share": share[i], "adj_effect": est, "adj_low": lo, "adj_high": hi}
            )
    return pd.DataFrame(rows, columns=["face", "cell_share", "adj_effect", "adj_low", "adj_high"]), fit, share


def r_squared(fit: Fit, codes: np.ndarray, score: np.ndarray) -> float:
    """The share of the variance of ``score`` that the additive face model ``fit`` explains
    (1 - residual sum of squares / total sum of squares; NaN for constant scores)."""
    resid = score - fit.coef[design(codes, fit.coef.shape[0])].sum(axis=1)
    total = float(((score - score.mean()) ** 2).sum())
    return 1.0 - float((resid**2).sum()) / total if total > 0 else float("nan")


def position_effects(
    codes: np.ndarray, faces: Sequence[str], score: np.ndarray, rows: int, cols: int
) -> tuple[pd.DataFrame, Fit, np.ndarray]:
    """Adjusted effect of each face in each position class, against the average face of that
    class; also the fit and the (face, class) cell shares for the dice values."""
    f = len(faces)
    classes = position_classes(rows, cols)
    present = sorted(set(classes.tolist()))
    width = f * (max(present) + 1)
    fit, totals = fit_counts(design(codes, f, classes), width, score)
    table, shares = _position_rows(fit, totals, faces, present)
    return table, fit, shares


def _position_rows(
    fit: Fit, totals: np.ndarray, faces: Sequence[str], present: Sequence[int]
) -> tuple[pd.DataFrame, np.ndarray]:
    """The (face, position class) table of a fit 3 classes wide, each class's effects centred
    on its cells' faces (weighted by ``totals``, the columns' cell counts), and the weights."""
    f, width = len(faces), len(totals)
    shares = np.zeros(width)
    out = []
    for k in present:
        cols_k = list(range(k * f, (k + 1) * f))
        total_k = totals[cols_k].sum()
        w = totals[cols_k] / total_k if total_k > 0 else totals[cols_k]
        shares[cols_k] = w
        for i, (est, lo, hi) in enumerate(_centred(fit, w, cols_k, width)):
            if faces[i] != BLANK_FACE and totals[k * f + i] > 0:
                out.append([faces[i], POSITIONS[k], w[i], est, lo, hi])
    return pd.DataFrame(out, columns=POSITION_COLUMNS), shares


# ---------------------------------------------------------------- from merged statistics


ADJUSTED_COLUMNS = ["face", "cell_share", "adj_effect", "adj_low", "adj_high"]
POSITION_COLUMNS = ["face", "position", "cell_share", "adj_effect", "adj_low", "adj_high"]


def adjusted_table(model: Model, faces: Sequence[str], cells: int) -> tuple[pd.DataFrame, Fit, np.ndarray]:
    """:func:`adjusted_effects` of a merged model: the table, the fit, each face's cell share."""
    f = len(faces)
    fit = model.fit()
    share = model.cell_shares(cells)
    rows = []
    for i, (est, lo, hi) in enumerate(_centred(fit, share, range(f), f)):
        if faces[i] != BLANK_FACE:
            rows.append(
                {"face": faces[i], "cell_share": share[i], "adj_effect": est, "adj_low": lo, "adj_high": hi}
            )
    return pd.DataFrame(rows, columns=ADJUSTED_COLUMNS), fit, share


def position_table(
    model: Model, faces: Sequence[str], rows: int, cols: int
) -> tuple[pd.DataFrame, Fit, np.ndarray]:
    """:func:`position_effects` of a merged (face, class) model (3 classes wide)."""
    present = sorted(set(position_classes(rows, cols).tolist()))
    fit = model.fit()
    table, shares = _position_rows(fit, model.xtx.sum(axis=1).astype(np.float64), faces, present)
    return table, fit, shares


def dice_tables(
    faces: Sequence[str],
    dice: Sequence[Sequence[str]],
    die: np.ndarray,
    boards: int,
    shape: tuple[int, int],
    pos_fit: Fit,
    pos_shares: np.ndarray,
    adjusted: pd.DataFrame,
    pooled: Fit,
    pooled_shares: np.ndarray,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per die: value (mean adjusted effect of its faces, 95% CI), value by position class,
    swing (best minus worst face), ranked worst first; per die and face: mean score of the
    boards where the die shows it (``die``: [3, D, M] boards, score sum, bad per die and side)."""
    f = len(faces)
    index = {face: i for i, face in enumerate(faces)}
    classes = position_classes(*shape)
    adj = dict(zip(adjusted["face"], adjusted["adj_effect"], strict=True))
    die_rows, face_rows = [], []
    for d, sides in enumerate(dice):
        labels = [BLANK_FACE if s == "" else s for s in sides]
        w = np.zeros(f)
        for lab in labels:
            w[index[lab]] += 1.0 / len(labels)
        value = pooled.contrast(w - pooled_shares)
        rec: dict[str, Any] = {
            "die": d + 1,
            "faces": " ".join(s or "·" for s in sides),
            "value": value.estimate,
            "value_low": value.low,
            "value_high": value.high,
        }
        for k in sorted(set(classes.tolist())):
            wk = np.zeros(pos_shares.shape[0])
            wk[k * f : (k + 1) * f] = w
            wk[k * f : (k + 1) * f] -= pos_shares[k * f : (k + 1) * f]
            rec[f"value_{POSITIONS[k]}"] = pos_fit.contrast(wk).estimate
        effects = [adj.get(lab, 0.0) for lab in labels]
        rec["worst_face"] = labels[int(np.argmin(effects))]
        rec["best_face"] = labels[int(np.argmax(effects))]
        rec["swing"] = float(max(effects) - min(effects))
        die_rows.append(rec)
        for j, lab in enumerate(labels):
            c = int(die[0, d, j])
            face_rows.append(
                {
                    "die": d + 1,
                    "side": j + 1,
                    "face": lab,
                    "share": c / boards if boards else np.nan,
                    "mean_score": int(die[1, d, j]) / c if c else np.nan,
                    "adj_effect": adj.get(lab, np.nan),
                }
            )
    dice_df = pd.DataFrame(die_rows).sort_values(["value", "die"], kind="stable").reset_index(drop=True)
    dice_df.insert(0, "rank", np.arange(1, len(dice_df) + 1))
    return dice_df, pd.DataFrame(face_rows)


@dataclass
class CellTables:
    """The board-level tables of every run (empty frames where a run has no such analysis)."""

    adjusted: pd.DataFrame
    positions: pd.DataFrame
    dice: pd.DataFrame
    dice_faces: pd.DataFrame
    notes: list[str]


def _total_ss(g: Gathered) -> float:
    v, c = g.stats.value_counts("score")
    n = int(c.sum())
    s = sum(int(x) * int(k) for x, k in zip(v.tolist(), c.tolist(), strict=True))
    q = sum(int(x) * int(x) * int(k) for x, k in zip(v.tolist(), c.tolist(), strict=True))
    return (q - s * s / n) if n else 0.0


def cell_tables(gathered: Sequence[Gathered]) -> CellTables:
    """Adjusted face effects per run and source; position effects and dice per run."""
    adjusted, positions, dice, dice_faces, notes = [], [], [], [], []
    for g in gathered:
        label, m, rs = g.run.label, g.models, g.stats
        if m is None or rs.shape is None:
            notes.append(f"{label}: boards of several shapes, no cell-level analysis")
            continue
        sources = rs.sources()
        for source in sources:
            df, pooled, pooled_shares = adjusted_table(m.by_source[source], m.faces, m.cells)
            adjusted.append(df.assign(run=label, source=source))
        pos, pos_fit, pos_shares = position_table(m.position, m.faces, *rs.shape)
        positions.append(pos.assign(run=label))
        if rs.dice is None or rs.die is None:
            notes.append(f"{label}: no per-die analysis ({g.dice_note or 'no dice recorded'})")
            continue
        adj_all = df
        if len(sources) > 1:
            adj_all, pooled, pooled_shares = adjusted_table(m.pooled, m.faces, m.cells)
        d_df, f_df = dice_tables(
            m.faces, rs.dice, rs.die, rs.boards, rs.shape, pos_fit, pos_shares, adj_all, pooled, pooled_shares
        )
        # how much of the score the additive model behind the dice values explains
        total = _total_ss(g)
        d_df["model_r2"] = 1.0 - m.pooled.rss / total if total > 0 else float("nan")
        dice.append(d_df.assign(run=label, dice=g.dice_name))
        dice_faces.append(f_df.assign(run=label, dice=g.dice_name))

    def cat(frames: list[pd.DataFrame], front: list[str]) -> pd.DataFrame:
        if not frames:
            return pd.DataFrame(columns=front)
        df = pd.concat(frames, ignore_index=True)
        return df[front + [c for c in df.columns if c not in front]]

    return CellTables(
        cat(adjusted, ["run", "source", "face"]),
        cat(positions, ["run", "face", "position"]),
        cat(dice, ["run", "dice", "rank", "die"]),
        cat(dice_faces, ["run", "dice", "die", "side"]),
        notes,
    )
