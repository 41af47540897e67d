"""The die diagnosis: which dice to look at next, and whether the model behind die values can be
trusted for a change.

* **Changed dice.** A dice run compared with a reference of as many dice: each die whose faces
  differ from the reference's die of the same number, with both faces, both dice's values (the
  model estimates of each run's own fit) and what the *reference's* model predicts changing that
  die is worth (the contrast of its fitted face coefficients: the new die's faces' shares minus
  the old one's, with its HC1 interval).
* **The model against the measurement.** For a run that shares the reference's draws (a
  what-if's arms: :mod:`pipeline.analyze._paired`), the sum of those predictions is set beside
  the measured paired gain; where their intervals do not meet, the additive model misses how the
  dice work together, and the report says to trust the measurement.
* **Suspects.** Per run, the dice with the lowest values and the die faces with the highest
  bad-board risk ratio (interval above 1): several, not one "worst die", each with the
  ``boggle what-if`` line that measures a change of it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from pipeline.analyze._inference import Interval
from pipeline.stats import BLANK_FACE

if TYPE_CHECKING:
    from pipeline.analyze._gather import Gathered

CHANGE_COLUMNS = [
    "run",
    "reference",
    "die",
    "faces_reference",
    "faces_run",
    "value_reference",
    "value_run",
    "predicted",
    "predicted_low",
    "predicted_high",
]
CHECK_COLUMNS = [
    "run",
    "reference",
    "dice_changed",
    "predicted",
    "predicted_low",
    "predicted_high",
    "measured",
    "measured_low",
    "measured_high",
    "agree",
    "note",
]
SUSPECT_COLUMNS = ["run", "by", "die", "faces", "what", "estimate", "low", "high", "what_if"]
SUSPECTS = 3  # per run and kind


def _faces_text(sides: Sequence[str]) -> str:
    return " ".join(s or "·" for s in sides)


def _shares(sides: Sequence[str], index: dict[str, int], k: int) -> np.ndarray | None:
    """A die's faces as shares of a cell (1/sides each), over the fit's faces; None when a face
    is not one of them (the reference's boards never showed it: no coefficient)."""
    w = np.zeros(k)
    for side in sides:
        label = BLANK_FACE if side == "" else side
        if label not in index:
            return None
        w[index[label]] += 1.0 / len(sides)
    return w


def dice_changes(gathered: Sequence[Gathered], dice: pd.DataFrame) -> pd.DataFrame:
    """Per later run of as many dice as the first run, each die whose faces differ (see the
    module's description); ``dice``: the report's dice table (each run's die values)."""
    rows: list[dict[str, Any]] = []
    if len(gathered) < 2:
        return pd.DataFrame(columns=CHANGE_COLUMNS)
    ref = gathered[0]
    ref_dice, model = ref.stats.dice, ref.models
    if ref_dice is None or model is None:
        return pd.DataFrame(columns=CHANGE_COLUMNS)
    fit = model.pooled.fit()
    index = {f: i for i, f in enumerate(model.faces)}
    k = len(model.faces)
    value = {(str(r["run"]), int(r["die"])): float(r["value"]) for r in dice.to_dict("records")}
    for g in gathered[1:]:
        run_dice = g.stats.dice
        if run_dice is None or len(run_dice) != len(ref_dice):
            continue
        for d, (old, new) in enumerate(zip(ref_dice, run_dice, strict=True)):
            if sorted(old) == sorted(new):
                continue
            w_old, w_new = _shares(old, index, k), _shares(new, index, k)
            iv = fit.contrast(w_new - w_old) if w_old is not None and w_new is not None else None
            rows.append(
                {
                    "run": g.run.label,
                    "reference": ref.run.label,
                    "die": d + 1,
                    "faces_reference": _faces_text(old),
                    "faces_run": _faces_text(new),
                    "value_reference": value.get((ref.run.label, d + 1), math.nan),
                    "value_run": value.get((g.run.label, d + 1), math.nan),
                    "predicted": iv.estimate if iv else math.nan,
                    "predicted_low": iv.low if iv else math.nan,
                    "predicted_high": iv.high if iv else math.nan,
                }
            )
    return pd.DataFrame(rows, columns=CHANGE_COLUMNS)


def mark_changed(dice: pd.DataFrame, gathered: Sequence[Gathered]) -> pd.DataFrame:
    """The dice table with ``changed``: whether each die's faces differ from the first run's
    die of the same number (False for the first run, and for runs of another number of dice)."""
    if dice.empty:
        return dice.assign(changed=pd.Series(dtype=bool))
    ref = gathered[0].stats.dice if gathered else None
    faces = {g.run.label: g.stats.dice for g in gathered}
    changed = []
    for rec in dice.to_dict("records"):
        mine = faces.get(str(rec["run"]))
        d = int(rec["die"]) - 1
        ok = ref is not None and mine is not None and len(mine) == len(ref)
        changed.append(bool(ok and sorted(mine[d]) != sorted(ref[d])))  # type: ignore[index]
    return dice.assign(changed=changed)


def model_check(gathered: Sequence[Gathered], changes: pd.DataFrame, paired: pd.DataFrame) -> pd.DataFrame:
    """Per run that shares the first run's draws and changed some dice: the additive model's
    prediction of the whole change (the reference's fit, every changed die's shares at once)
    against the measured paired gain, and whether their intervals meet."""
    if changes.empty or paired.empty or len(gathered) < 2:
        return pd.DataFrame(columns=CHECK_COLUMNS)
    ref = gathered[0]
    model = ref.models
    if model is None or ref.stats.dice is None:
        return pd.DataFrame(columns=CHECK_COLUMNS)
    fit = model.pooled.fit()
    index = {f: i for i, f in enumerate(model.faces)}
    k = len(model.faces)
    by_label = {g.run.label: g for g in gathered}
    rows = []
    for rec in paired.to_dict("records"):
        if rec.get("pairing") != "draws" or rec["run"] not in set(changes["run"]):
            continue
        g = by_label[rec["run"]]
        assert g.stats.dice is not None
        w = np.zeros(k)
        missing = False
        for old, new in zip(ref.stats.dice, g.stats.dice, strict=True):
            if sorted(old) == sorted(new):
                continue
            w_old, w_new = _shares(old, index, k), _shares(new, index, k)
            if w_old is None or w_new is None:
                missing = True
                break
            w += w_new - w_old
        if missing:
            continue
        pred = fit.contrast(w)
        meas = Interval(float(rec["mean_diff"]), float(rec["diff_low"]), float(rec["diff_high"]))
        agree = pred.low <= meas.high and meas.low <= pred.high
        n_changed = int((changes["run"] == rec["run"]).sum())
        note = (
            ""
            if agree
            else (
                f"{rec['run']}: the additive model behind the die values predicted "
                f"{pred.estimate:+.2f} points a board ({pred.low:+.2f} to {pred.high:+.2f}) for the "
                f"{n_changed} changed {'die' if n_changed == 1 else 'dice'}; measured on the same draws: "
                f"{meas.estimate:+.2f} "
                f"({meas.low:+.2f} to {meas.high:+.2f}). The model misses how these dice work with the "
                "others: trust the measurement, not the die values, for this change."
            )
        )
        rows.append(
            {
                "run": rec["run"],
                "reference": ref.run.label,
                "dice_changed": n_changed,
                "predicted": pred.estimate,
                "predicted_low": pred.low,
                "predicted_high": pred.high,
                "measured": meas.estimate,
                "measured_low": meas.low,
                "measured_high": meas.high,
                "agree": agree,
                "note": note,
            }
        )
    return pd.DataFrame(rows, columns=CHECK_COLUMNS)


def _dice_name(g: Gathered) -> str:
    """The dice a run was rolled with as ``boggle what-if`` takes them: the set's name, or the
    dice file's path as the run was given it."""
    record = g.run.manifest.get("dice")
    if isinstance(record, dict) and record.get("file"):
        return str(record["file"])
    boards = g.run.config.get("boards")
    return str(boards.get("dice") or "") if isinstance(boards, dict) else ""


def _what_if(g: Gathered, swap: str, die: int) -> str:
    dice = _dice_name(g)
    count = 40_000
    return f"boggle what-if {dice} --swap '{swap}' --count {count:,} --out runs/what-if-die{die}".replace(
        ",", ""
    )


def suspects(
    gathered: Sequence[Gathered], dice: pd.DataFrame, drivers: pd.DataFrame, adjusted: pd.DataFrame
) -> pd.DataFrame:
    """Per dice run: the :data:`SUSPECTS` dice of lowest value and the die faces of highest
    bad-board risk ratio (interval above 1), each with a ``boggle what-if`` line to measure a
    change: a low die replaced by a copy of the run's best die, a bad face by the run's best
    vowel face (by adjusted effect)."""
    rows: list[dict[str, Any]] = []
    for g in gathered:
        label = g.run.label
        mine = dice[dice["run"] == label] if len(dice) else dice
        if mine.empty:
            continue
        best = mine.sort_values(["value", "die"], ascending=[False, True], kind="stable").iloc[0]
        for rec in mine.sort_values(["value", "die"], kind="stable").head(SUSPECTS).to_dict("records"):
            die = int(rec["die"])
            swap = f"die {die} = die {int(best['die'])}"
            rows.append(
                {
                    "run": label,
                    "by": "value",
                    "die": die,
                    "faces": rec["faces"],
                    "what": "value (points a board against an average die; model estimate)",
                    "estimate": rec["value"],
                    "low": rec["value_low"],
                    "high": rec["value_high"],
                    "what_if": _what_if(g, swap, die) if die != int(best["die"]) else "",
                }
            )
        adj = adjusted[(adjusted["run"] == label)] if len(adjusted) else adjusted
        vowels = adj[adj["face"].isin(list("aeiou"))] if len(adj) else adj
        good = str(vowels.sort_values("adj_effect", ascending=False)["face"].iloc[0]) if len(vowels) else "e"
        bad_faces = drivers[(drivers["run"] == label) & (drivers["kind"] == "die") & (drivers["rr_low"] > 1)]
        top = bad_faces.sort_values(["risk_ratio"], ascending=False, kind="stable").head(SUSPECTS)
        for rec in top.to_dict("records"):
            factor = str(rec["factor"])  # "die D (faces) shows X"
            die = int(factor.split()[1])
            face = factor.rsplit(" shows ", 1)[1]
            faces = factor[factor.index("(") + 1 : factor.rindex(")")]
            swap = f"die {die}: {'_' if face == '·' else face} -> {good}"
            rows.append(
                {
                    "run": label,
                    "by": "bad boards",
                    "die": die,
                    "faces": faces,
                    "what": f"risk ratio of a bad board when it shows {face}",
                    "estimate": rec["risk_ratio"],
                    "low": rec["rr_low"],
                    "high": rec["rr_high"],
                    "what_if": _what_if(g, swap, die) if face != good else "",
                }
            )
    return pd.DataFrame(rows, columns=SUSPECT_COLUMNS)
