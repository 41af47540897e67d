"""Runs over time: the nights of one scheduled design (same dice, word list, rules and count; only
the seed and the schedule's date differ), each night's mean score and bad-board share with 95%
intervals, and control limits that say which nights stray further than chance explains.

**Which runs.** Every run that carries a schedule's date (the manifest's ``run_date``), when
two or more of one design do. The *design* is the run's identity without its seed and date (and
without the schema version and the word list's path: the list is named by its content hash).
The design most nights share (ties: the earliest night's) is the reference; a night of another
design (another word list, other dice...) is drawn and listed, flagged with what differs, and left
out of the pooled values and the limits.

**Control limits** (a Shewhart chart with the within-night variance known from the boards):
the pooled mean over the reference nights' boards ± 3 standard errors of a night,
``3 * s / sqrt(n_night)`` with ``s`` the pooled within-night standard deviation of the score;
for the bad share a p-chart, ``p ± 3 * sqrt(p * (1 - p) / n_night)`` with ``p`` the pooled share.
A night outside its limits varies more than the nights' own sampling noise allows (about 3 in
1,000 nights would by chance); the limits say nothing of nights of another design.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from pipeline.analyze._inference import mean_interval, wilson
from pipeline.analyze._runs import RunInfo

if TYPE_CHECKING:
    from pipeline.analyze._gather import Gathered

OTHER_DESIGN = "another design"
SIGMAS = 3.0  # control limits: the pooled value ± 3 standard errors of a night
TREND_COLUMNS = [
    "night",
    "run",
    "same_design",
    "differs",
    "boards",
    "score_mean",
    "score_low",
    "score_high",
    "score_lcl",
    "score_ucl",
    "bad",
    "bad_share",
    "bad_low",
    "bad_high",
    "bad_lcl",
    "bad_ucl",
    "flag",
]


def run_date(run: RunInfo) -> str | None:
    """The schedule's date a run was made for (``YYYY-MM-DD``), or None."""
    value = run.manifest.get("run_date")  # every run this release reads records it (schema 5)
    return str(value) if value else None


def _as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def design_key(run: RunInfo) -> str:
    """The run's design (:func:`pipeline.store.dataset.design_key`: its identity without its seed and
    date), as canonical JSON."""
    from pipeline.store.dataset import design_key as of_identity

    return of_identity(run.manifest.get("identity"))


def what_differs(run: RunInfo, reference: RunInfo) -> str:
    """What sets a night's design apart from the reference's, in words ("word list small.txt,
    not enable2k")."""
    from pipeline.analyze._provenance import describe

    a, b = describe(run.manifest), describe(reference.manifest)
    out = []
    if (a.lexicon, a.lexicon_hash) != (b.lexicon, b.lexicon_hash):
        same_name = a.lexicon == b.lexicon
        mine = f"{a.lexicon} #{a.lexicon_hash}" if same_name else a.lexicon
        theirs = f"{b.lexicon} #{b.lexicon_hash}" if same_name else b.lexicon
        out.append(f"word list {mine}, not {theirs}")
    for name, x, y in (("dice", a.dice, b.dice), ("rules", a.rules, b.rules), ("shape", a.shape, b.shape)):
        if x != y:
            out.append(f"{name} {x or '?'}, not {y or '?'}")
    ca, cb = _as_dict(run.config.get("boards")), _as_dict(reference.config.get("boards"))
    for key in ("count", "chunk_size", "words"):
        if ca.get(key) != cb.get(key):
            out.append(f"{key} {ca.get(key)}, not {cb.get(key)}")
    return "; ".join(out) or "another run identity"


def trend_table(gathered: Sequence[Gathered], bad_share: pd.DataFrame) -> pd.DataFrame:
    """The nights among the gathered runs, one row each in date order,
    with their control limits and flags (empty, without columns, unless two or more runs of one
    design carry a date); ``bad_share``: the report's bad-board shares
    (:func:`pipeline.analyze._bad.bad_tables`), so the trend uses the report's bad definition."""
    from pipeline.analyze._stats import Moments

    runs = [g.run for g in gathered]
    dated = [(d, r) for r in runs if (d := run_date(r)) is not None]
    if len(dated) < 2:
        return pd.DataFrame()
    dated.sort(key=lambda x: x[0])
    keys = {r.label: design_key(r) for _, r in dated}
    counts = Counter(keys.values())
    top = max(counts.values())
    if top < 2:  # dated runs of as many designs: a comparison, not nights of one schedule
        return pd.DataFrame()
    ref_key = next(keys[r.label] for _, r in dated if counts[keys[r.label]] == top)
    reference = next(r for _, r in dated if keys[r.label] == ref_key)
    m = {}
    for g in gathered:
        mo = Moments.of(*g.stats.value_counts("score"))
        m[g.run.label] = {"n": mo.n, "mean": mo.mean, "var": 0.0 if mo.n < 2 else mo.std**2}
    bad_of = dict(zip(bad_share["run"], bad_share["bad"], strict=True))
    rows = []
    for day, r in dated:
        n, mean, var = int(m[r.label]["n"]), float(m[r.label]["mean"]), float(m[r.label]["var"])
        ci = mean_interval(mean, math.sqrt(var), n)
        k = int(bad_of[r.label])
        share = wilson(k, n)
        same = keys[r.label] == ref_key
        differs = "" if same else what_differs(r, reference)
        rows.append(
            {
                "night": day,
                "run": r.label,
                "same_design": same,
                "differs": differs,
                "boards": n,
                "score_mean": mean,
                "score_low": ci.low,
                "score_high": ci.high,
                "bad": k,
                "bad_share": share.estimate,
                "bad_low": share.low,
                "bad_high": share.high,
                "_var": var,
            }
        )
    df = pd.DataFrame(rows)
    ref = df[df["same_design"]]
    n_all = float(ref["boards"].sum())
    grand = float((ref["score_mean"] * ref["boards"]).sum() / n_all)
    # pooled within-night variance: the nights' sums of squares about their own means
    dof = float((ref["boards"] - 1).sum())
    s = math.sqrt(float(((ref["boards"] - 1) * ref["_var"]).sum()) / dof) if dof > 0 else math.nan
    p = float(ref["bad"].sum()) / n_all
    size = df["boards"].astype(float).to_numpy()
    df["score_lcl"] = grand - SIGMAS * s / np.sqrt(size)
    df["score_ucl"] = grand + SIGMAS * s / np.sqrt(size)
    se_p = np.sqrt(p * (1 - p) / size)
    df["bad_lcl"] = np.maximum(p - SIGMAS * se_p, 0.0)
    df["bad_ucl"] = np.minimum(p + SIGMAS * se_p, 1.0)
    for col in ("score_lcl", "score_ucl", "bad_lcl", "bad_ucl"):  # the limits are the design's
        df.loc[~df["same_design"], col] = math.nan
    flags = []
    for rec in df.to_dict("records"):
        if not rec["same_design"]:
            flags.append(f"{OTHER_DESIGN} ({rec['differs']}): not in the limits")
            continue
        out = []
        for what, col in (("mean score", "score_mean"), ("bad share", "bad_share")):
            prefix = col.split("_")[0]
            if rec[col] > rec[f"{prefix}_ucl"]:
                out.append(f"{what} above the upper limit")
            elif rec[col] < rec[f"{prefix}_lcl"]:
                out.append(f"{what} below the lower limit")
        flags.append("; ".join(out))
    df["flag"] = flags
    return df[TREND_COLUMNS]


def verdict_lines(trend: pd.DataFrame) -> list[str]:
    """The trend's verdicts: each night outside its limits and each night of another design
    named, else that every night is within them."""
    if trend.empty:
        return []
    lines = []
    ref = trend[trend["same_design"]]
    for rec in trend.to_dict("records"):
        if not rec["same_design"]:
            lines.append(
                f"{rec['night']} was made with {OTHER_DESIGN} ({rec['differs']}): shown, but left out "
                "of the pooled values and the control limits."
            )
        elif rec["flag"]:
            lines.append(f"{rec['night']} is outside the control limits: {rec['flag']}.")
    if not any(ref["flag"].astype(bool)):
        n = float(ref["boards"].sum())
        grand = float((ref["score_mean"] * ref["boards"]).sum() / n)
        p = float(ref["bad"].sum()) / n
        lines.insert(
            0,
            f"All {len(ref)} nights of the design are within the control limits (pooled mean score "
            f"{grand:.2f}, bad share {100 * p:.1f}%).",
        )
    return lines
