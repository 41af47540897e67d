"""Board-level models: face effects adjusted for the other faces, effects by cell position
(corner, edge, inner) and, for dice runs, which die lies on each cell and what each die is worth.

These need each board's faces cell by cell, so the ``board`` and ``score`` columns of each run
come back to numpy (a few MB per 100,000 boards; never the word lists). Everything else of the
analysis stays in DuckDB.

**Model.** ``score = sum over faces f of beta_f * count_f + error``, one coefficient per face
(blank cells included as a face), fitted by least squares with HC1 robust intervals (see
:mod:`pipeline.analyze.inference`). The counts of a board add up to its cells, so only
differences of coefficients are identified: the *adjusted effect* of a face is ``beta_f`` minus
the cell-weighted mean coefficient, i.e. the points a board gains when one of its cells shows
``f`` instead of an average face, the other cells unchanged. The position model fits one
coefficient per (face, position class), compared within the class.

**Dice.** The die on each cell is not stored (so the run schema needs no new column); it is
reconstructed from the run's seed and chunk plan through the generator's own draws
(:func:`pipeline.boards.roll_dice_layout`) and the faces the run recorded (a dice file's too, so
the file is not needed), and the reconstruction is used only when it gives
back every stored board exactly. A die's *value* is the mean adjusted effect of its faces
(each face shows with probability 1/faces): the points a board gains, on average, from that die
against an average cell. The lowest-valued dice are the ones to redesign.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from pipeline.analyze.inference import Fit
from pipeline.analyze.provenance import LETTER_GENERATORS

if TYPE_CHECKING:
    import duckdb

    from pipeline.analyze.runs import RunInfo

BLANK_FACE = "(blank)"
POSITIONS = ("corner", "edge", "inner")


@dataclass
class BoardFaces:
    """One run's boards as face codes: ``codes[b, cell]`` indexes ``faces``; blank is a face."""

    run: str
    source: np.ndarray
    board_id: np.ndarray
    boards: list[str]
    score: np.ndarray
    rows: int
    cols: int
    faces: list[str]
    codes: np.ndarray


def _char_face(ch: str) -> str:
    if ch == ".":
        return BLANK_FACE
    return "qu" if ch in ("q", "Q") else ch.lower()


def decode_boards(boards: Sequence[str], rows: int, cols: int) -> tuple[list[str], np.ndarray]:
    """Face list and int16 codes [n, cells] of compact boards of one shape.

    Plain ASCII boards (one character a cell, the dice sets' usual case) are decoded as one
    byte buffer; boards with bracketed or non-ASCII faces go through ``parse_compact``.
    """
    cells = rows * cols
    n = len(boards)
    joined = "".join(boards)
    data = joined.encode("utf-8", errors="replace")
    if len(data) == n * cells and "[" not in joined:
        arr = np.frombuffer(data, dtype=np.uint8).reshape(n, cells) if n else np.zeros((0, cells), np.uint8)
        present = np.flatnonzero(np.bincount(arr.ravel(), minlength=256))
        faces = sorted({_char_face(chr(b)) for b in present})
        index = {f: i for i, f in enumerate(faces)}
        lut = np.zeros(256, dtype=np.int16)
        for b in present:
            lut[b] = index[_char_face(chr(b))]
        return faces, lut[arr]
    from pipeline.boards import BLANK, parse_compact

    parsed = [parse_compact(b, (rows, cols)).faces for b in boards]
    faces = sorted({BLANK_FACE if f == BLANK else f for p in parsed for f in p})
    index = {f: i for i, f in enumerate(faces)}
    codes = np.array(
        [[index[BLANK_FACE if f == BLANK else f] for f in p] for p in parsed], dtype=np.int16
    ).reshape(n, cells)
    return faces, codes


def position_classes(rows: int, cols: int) -> np.ndarray:
    """Per cell (row-major) 0 = corner, 1 = edge (border, not a corner), 2 = inner."""
    r, c = np.divmod(np.arange(rows * cols), cols)
    border_r = (r == 0) | (r == rows - 1)
    border_c = (c == 0) | (c == cols - 1)
    return np.where(border_r & border_c, 0, np.where(border_r | border_c, 1, 2)).astype(np.int8)


def read_board_faces(con: duckdb.DuckDBPyConnection, run: str) -> BoardFaces | None:
    """One run's boards (board_id order), or None when its boards have several shapes."""
    shapes = con.execute("SELECT DISTINCT rows, cols FROM boards WHERE run = ?", [run]).fetchall()
    if len(shapes) != 1:
        return None
    rows, cols = (int(x) for x in shapes[0])
    got = con.execute(
        "SELECT board_id, source, board, score FROM boards WHERE run = ? ORDER BY board_id", [run]
    ).fetchnumpy()
    boards = [str(b) for b in got["board"]]
    faces, codes = decode_boards(boards, rows, cols)
    return BoardFaces(
        run,
        np.asarray(got["source"], dtype=object),
        np.asarray(got["board_id"], dtype=np.int64),
        boards,
        np.asarray(got["score"], dtype=np.float64),
        rows,
        cols,
        faces,
        codes,
    )


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
    from pipeline.analyze.inference import hc1_fit

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
    shares = np.zeros_like(totals)
    out = []
    for k in present:
        cols_k = list(range(k * f, (k + 1) * f))
        total_k = totals[cols_k].sum()
        w = totals[cols_k] / total_k if total_k > 0 else totals[cols_k]
        shares[cols_k] = w
        for i, (est, lo, hi) in enumerate(_centred(fit, w, cols_k, width)):
            if faces[i] != BLANK_FACE and totals[k * f + i] > 0:
                out.append(
                    {
                        "face": faces[i],
                        "position": POSITIONS[k],
                        "cell_share": w[i],
                        "adj_effect": est,
                        "adj_low": lo,
                        "adj_high": hi,
                    }
                )
    cols_out = ["face", "position", "cell_share", "adj_effect", "adj_low", "adj_high"]
    return pd.DataFrame(out, columns=cols_out), fit, shares


# ---------------------------------------------------------------- dice


@dataclass
class DiceLayout:
    """Which die (``die[b, cell]``) and which of its faces (``side[b, cell]``) every board shows."""

    name: str
    dice: tuple[tuple[str, ...], ...]
    die: np.ndarray
    side: np.ndarray


def reconstruct_dice(run: RunInfo, bf: BoardFaces) -> tuple[DiceLayout | None, str]:
    """The die on every cell of a generated dice run, from its seed and chunk plan, or None
    and the reason (ingested or letter-generated boards, another shape, or a mismatch)."""
    from pipeline.boards import (
        chunk_plan,
        chunk_seed,
        compact_strings,
        dice_from_record,
        generator_alphabet,
        load_dice_set,
        roll_dice_layout,
    )
    from pipeline.errors import BoggleError

    got = run.config.get("boards")
    boards_cfg: dict[str, Any] = got if isinstance(got, dict) else {}
    if boards_cfg.get("source", "generate") != "generate":
        return None, "ingested boards have no dice"
    name = str(boards_cfg.get("dice") or "")
    if not name or name in LETTER_GENERATORS:
        return None, f"boards from the {name or 'unknown'} generator are not rolled with dice"
    record = run.manifest.get("dice")
    try:
        # the faces the run recorded (a dice file's, which may be gone or edited since), else the
        # built-in set of that name (runs made before the record existed)
        dice = dice_from_record(record) if isinstance(record, dict) else load_dice_set(name, bf.rows, bf.cols)
        if dice.file is not None:
            name = f"{Path(dice.file).name} (sha256 {dice.sha256[:8]})"
        alphabet = generator_alphabet(dice)
        count, seed = int(boards_cfg["count"]), int(boards_cfg["seed"])
        size = int(boards_cfg["chunk_size"])
    except (BoggleError, KeyError, TypeError, ValueError) as exc:
        return None, f"cannot re-roll the dice ({exc})"
    if count != len(bf.boards) or not np.array_equal(bf.board_id, np.arange(count)):
        return None, "the run's boards are not the generated sequence 0..count-1"
    table = dice.face_table(alphabet)
    dies, sides = [], []
    for ch in chunk_plan(count, size):
        order, side = roll_dice_layout(dice, np.random.default_rng(chunk_seed(seed, ch.chunk)), ch.count)
        rolled = compact_strings(table[order, side], alphabet.faces).to_pylist()
        if rolled != bf.boards[ch.start : ch.start + ch.count]:
            return None, f"re-rolling chunk {ch.chunk} does not give the stored boards"
        dies.append(order)
        sides.append(side)
    return DiceLayout(name, dice.dice, np.concatenate(dies), np.concatenate(sides)), ""


def dice_tables(
    bf: BoardFaces,
    layout: DiceLayout,
    pos_fit: Fit,
    pos_shares: np.ndarray,
    adjusted: pd.DataFrame,
    pooled: Fit,
    pooled_shares: np.ndarray,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per die: value (mean adjusted effect of its faces, 95% CI), value by position class,
    swing (best minus worst face), ranked worst first; per die and face: mean score of the
    boards where the die shows it (raw, from the reconstructed dice)."""
    f = len(bf.faces)
    index = {face: i for i, face in enumerate(bf.faces)}
    classes = position_classes(bf.rows, bf.cols)
    adj = dict(zip(adjusted["face"], adjusted["adj_effect"], strict=True))
    n_sides = max(len(d) for d in layout.dice)
    n = len(bf.score)
    keys = (layout.die * n_sides + layout.side).ravel()
    scores = np.repeat(bf.score, bf.codes.shape[1])
    cnt = np.bincount(keys, minlength=len(layout.dice) * n_sides)
    tot = np.bincount(keys, weights=scores, minlength=len(layout.dice) * n_sides)
    die_rows, face_rows = [], []
    for d, sides in enumerate(layout.dice):
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
            c = cnt[d * n_sides + j]
            face_rows.append(
                {
                    "die": d + 1,
                    "side": j + 1,
                    "face": lab,
                    "share": c / n if n else np.nan,
                    "mean_score": tot[d * n_sides + j] / c if c else np.nan,
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
    layouts: dict[str, DiceLayout] = field(default_factory=dict)  # per run label, where rebuilt


def cell_tables(con: duckdb.DuckDBPyConnection, runs: Sequence[RunInfo]) -> CellTables:
    """Adjusted face effects per run and source; position effects and dice per run."""
    adjusted, positions, dice, dice_faces, notes = [], [], [], [], []
    layouts: dict[str, DiceLayout] = {}
    for run in runs:
        bf = read_board_faces(con, run.label)
        if bf is None:
            notes.append(f"{run.label}: boards of several shapes, no cell-level analysis")
            continue
        sources = list(dict.fromkeys(bf.source.tolist()))
        for source in sources:
            mask = bf.source == source
            df, pooled, pooled_shares = adjusted_effects(bf.codes[mask], bf.faces, bf.score[mask])
            adjusted.append(df.assign(run=run.label, source=source))
        pos, pos_fit, pos_shares = position_effects(bf.codes, bf.faces, bf.score, bf.rows, bf.cols)
        positions.append(pos.assign(run=run.label))
        layout, why = reconstruct_dice(run, bf)
        if layout is None:
            notes.append(f"{run.label}: no per-die analysis ({why})")
            continue
        layouts[run.label] = layout
        adj_all = df
        if len(sources) > 1:
            adj_all, pooled, pooled_shares = adjusted_effects(bf.codes, bf.faces, bf.score)
        d_df, f_df = dice_tables(bf, layout, pos_fit, pos_shares, adj_all, pooled, pooled_shares)
        # how much of the score the additive model behind the dice values explains
        d_df["model_r2"] = r_squared(pooled, bf.codes, bf.score)
        dice.append(d_df.assign(run=run.label, dice=layout.name))
        dice_faces.append(f_df.assign(run=run.label, dice=layout.name))

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
        layouts,
    )
