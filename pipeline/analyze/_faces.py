"""The faces boards show and each face's raw effect on the score: the mean score of the boards
showing it against those that do not, with its 95% interval; one face order is shared by every
run. Computed from the boards-with-face counts and score sums of the runs' statistics
(:mod:`pipeline.stats`); the adjusted effects (a face against an average face, the others held
fixed) are :mod:`pipeline.analyze._cells`'.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pandas as pd

from pipeline.stats import BLANK_FACE

if TYPE_CHECKING:
    from pipeline.analyze._gather import Gathered

FACE_EFFECT_COLUMNS = [
    "run",
    "source",
    "face",
    "boards_with",
    "boards_without",
    "share_with",
    "mean_score_with",
    "mean_score_without",
    "effect",
    "effect_low",
    "effect_high",
]


def face_effects(gathered: Sequence[Gathered]) -> pd.DataFrame:
    """For each face: share of boards showing it and mean score with it vs without it.

    ``effect`` = mean score with the face minus mean score without it, with its 95% interval
    (``effect_low``, ``effect_high``: Welch, normal approximation); a face every board shows has
    no "without" group (NaN). Rows are sorted by effect within each run; :func:`face_order`
    gives one order for all runs.
    """
    from pipeline.analyze._gather import groups
    from pipeline.analyze._inference import diff_of_means, var_from_sums

    frames = []
    for run, label, key, rs in groups(gathered):
        assert key is not None
        v, c = rs.value_counts("score", key)
        n = float(c.sum())
        s = float((v.astype(object) * c.astype(object)).sum())
        q = float((v.astype(object) ** 2 * c.astype(object)).sum())
        pres = rs.presence.get(key)
        rows = []
        for i, face in enumerate(rs.face_list):
            if pres is None or i >= pres.shape[1] or face == BLANK_FACE:
                continue
            n_w, s_w, q_w = (int(x) for x in pres[:, i])
            if n_w <= 0:
                continue
            n_o, s_o, q_o = n - n_w, s - s_w, q - q_w
            mean_w = s_w / n_w
            mean_o = s_o / n_o if n_o > 0 else math.nan
            low = high = math.nan
            if n_w >= 2 and n_o >= 2:
                sd_w = math.sqrt(var_from_sums(n_w, s_w, q_w))
                sd_o = math.sqrt(var_from_sums(n_o, s_o, q_o))
                iv = diff_of_means(mean_o, sd_o, n_o, mean_w, sd_w, n_w)
                low, high = iv.low, iv.high
            rows.append(
                {
                    "run": run,
                    "source": label,
                    "face": face,
                    "boards_with": n_w,
                    "boards_without": int(n) - n_w,
                    "share_with": n_w / n,
                    "mean_score_with": mean_w,
                    "mean_score_without": mean_o,
                    "effect": mean_w - mean_o,
                    "effect_low": low,
                    "effect_high": high,
                }
            )
        df = pd.DataFrame(rows, columns=FACE_EFFECT_COLUMNS)
        df["_neg"] = -df["effect"]
        frames.append(
            df.sort_values(["_neg", "face"], na_position="last", kind="stable").drop(columns="_neg")
        )
    if not frames:
        return pd.DataFrame(columns=FACE_EFFECT_COLUMNS)
    return pd.concat(frames, ignore_index=True)


def face_order(effects: pd.DataFrame) -> list[str]:
    """One face order for every run and panel: strongest mean adjusted effect across runs
    first (the raw effect where no adjusted one exists), ties alphabetical."""
    if effects.empty:
        return []
    col = "adj_effect" if "adj_effect" in effects and effects["adj_effect"].notna().any() else "effect"
    mean = effects.groupby("face")[col].mean().fillna(-math.inf)
    return sorted(mean.index, key=lambda f: (-mean[f], f))
