"""Runs that hold the same boards, compared board by board.

The runs share dice, shape, count, chunk size and seed (another lexicon or rules), so their
parts hold the same boards chunk by chunk. They are compared part by part: chunk k of one run
against chunk k of the other, never both runs in memory. Computed here: the distribution of the
per-board score difference, the per-board moments of every metric (for the paired intervals of
:mod:`pipeline.analyze._compare`), how much of the change a scaling of every score explains, the
boards that change most, the words that account for the change, and the paired face effects.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from pipeline import stats
from pipeline.analyze._gather import PartJob, parallel, part_jobs, read_part
from pipeline.analyze._inference import Z95, Interval, diff_of_means, mean_interval, share_text
from pipeline.analyze._matched import SAME_BOARDS, PairPlan, PairResult, PairTotals, pair_chunk, pairing
from pipeline.analyze._stats import quantiles_from_counts

Bands = tuple[tuple[str, "int | None", "int | None"], ...]

if TYPE_CHECKING:
    from pipeline.analyze._gather import Gathered
    from pipeline.analyze._runs import RunInfo


FACE_COLUMNS = ["face", "kind", "diff", "diff_low", "diff_high", "rel_diff", "rel_low", "rel_high"]


@dataclass(frozen=True)
class PairedMoments:
    """Per-board moments of one metric over the boards two runs share (``a``: the reference)."""

    n: float
    mean_a: float
    mean_b: float
    var_diff: float
    var_a: float
    var_b: float
    cov: float

    def diff(self) -> Interval:
        """``mean_b - mean_a`` with the paired interval (the per-board differences)."""
        return mean_interval(self.mean_b - self.mean_a, math.sqrt(max(self.var_diff, 0.0)), self.n)

    def ratio(self) -> Interval:
        """``mean_b / mean_a - 1`` with the paired interval (ratio estimator: the standard
        error of ``b - R a`` over ``mean_a``)."""
        if self.mean_a <= 0 or self.mean_b <= 0 or self.n <= 0:
            return Interval(math.nan, math.nan, math.nan)
        if self.mean_a == self.mean_b and self.var_diff == 0:
            return Interval(0.0, 0.0, 0.0)  # the same value on every board
        r = self.mean_b / self.mean_a
        var = max(self.var_b - 2 * r * self.cov + r * r * self.var_a, 0.0)
        se = math.sqrt(var / self.n) / self.mean_a
        return Interval(r - 1, r - 1 - Z95 * se, r - 1 + Z95 * se)


@dataclass
class PairedTables:
    summary: pd.DataFrame
    histogram: pd.DataFrame
    boards: pd.DataFrame
    words: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    # run -> metric (a METRICS column) -> its per-board moments against the first run
    moments: dict[str, dict[str, PairedMoments]] = field(default_factory=dict)
    # run -> its paired face effects against the first run (FACE_COLUMNS)
    face_effects: dict[str, pd.DataFrame] = field(default_factory=dict)
    # run -> how it pairs with the first run: "boards" (the same boards) or "draws"
    kinds: dict[str, str] = field(default_factory=dict)


PAIRED_SUMMARY_COLUMNS = [
    "run",
    "reference",
    "boards",
    "mean_diff",
    "diff_low",
    "diff_high",
    "sd_diff",
    "median_diff",
    "p10_diff",
    "p90_diff",
    "share_higher",
    "share_lower",
    "share_same",
    "scale_factor",
    "scale_explains",
    "pairing",
    "verdict",
]

# A scaling that explains at least this share of the board-by-board change is called "mostly".
MOSTLY_SCALING = 0.9


def _scaling_text(factor: float, explains: float) -> str:
    if math.isnan(explains) or math.isnan(factor):
        return ""
    change = f"{abs(factor - 1):.1%} {'higher' if factor >= 1 else 'lower'}"
    if explains == 1.0:
        return (
            f". A pure scaling: every board scores {change} (×{factor:.4g}), so each face keeps its "
            "share of the mean score"
        )
    if explains >= MOSTLY_SCALING:
        return (
            f". Mostly a scaling: scoring every board {change} (×{factor:.3g}) accounts for "
            f"{explains:.0%} of the board-by-board change"
        )
    return ""


def _rules_points(run: RunInfo) -> Any:
    from pipeline.rules import Rules

    d = run.rules
    try:
        return Rules(
            name=str(d.get("name", "boggle")),
            min_length=int(d.get("min_length", 3)),
            scores={int(k): int(v) for k, v in dict(d.get("scores") or {}).items()} or {3: 1},
            per_letter_from=d.get("per_letter_from"),
            per_letter=int(d.get("per_letter") or 0),
            revisit=bool(d.get("revisit", False)),
        ).points
    except (TypeError, ValueError, AttributeError):
        return None


def _plan(
    ref: Gathered, run: Gathered, top: int, kind: str, bad: stats.BadDefinition, bands: Bands
) -> PairPlan:
    from pipeline.analyze._models import Model

    mean_a = _mean(ref)
    mean_b = _mean(run)
    m = ref.models
    shape = ref.stats.shape
    if (
        kind != SAME_BOARDS
        or m is None
        or run.models is None
        or shape is None
        or m.faces != run.models.faces
        or not mean_a
        or not mean_b
    ):
        return PairPlan(None, None, None, None, mean_a, mean_b, top, kind, bad, bands)
    xa, xb = m.pooled.xty.astype(np.float64), run.models.pooled.xty.astype(np.float64)
    xtx = m.pooled.xtx
    fit_d = Model(xtx, np.rint(xb - xa).astype(np.int64), m.pooled.n)
    coef_r = fit_d.inv @ (xb / mean_b - xa / mean_a)
    return PairPlan(
        tuple(m.faces), shape, fit_d.coef[None, :], coef_r[None, :], mean_a, mean_b, top, kind, bad, bands
    )


def _mean(g: Gathered) -> float:
    v, c = g.stats.value_counts("score")
    n = int(c.sum())
    return sum(int(x) * int(k) for x, k in zip(v.tolist(), c.tolist(), strict=True)) / n if n else 0.0


def paired(
    gathered: Sequence[Gathered],
    *,
    top: int = 10,
    n_jobs: int | None = None,
    bad: stats.BadDefinition | None = None,
    bands: Bands = (),
) -> PairedTables:
    """Board-by-board comparison of every later run that holds the first run's boards or
    shares its draws; ``bad`` and ``bands`` (name, lowest, highest word count): the bad boards
    and the bands whose shares are compared board by board too."""
    empty = PairedTables(
        pd.DataFrame(columns=PAIRED_SUMMARY_COLUMNS),
        pd.DataFrame(columns=["run", "reference", "diff", "boards"]),
        pd.DataFrame(),
        pd.DataFrame(),
    )
    if len(gathered) < 2:
        return empty
    ref = gathered[0]
    kinds = {g.run.label: pairing(ref, g) for g in gathered[1:]}
    pairs = [g for g in gathered[1:] if kinds[g.run.label] is not None]
    if not pairs:
        return empty
    ref_jobs = {j.chunk: j for j in part_jobs(0, ref.run, None)}
    definition = bad or stats.BadDefinition()
    plans = {g.run.label: _plan(ref, g, top, str(kinds[g.run.label]), definition, bands) for g in pairs}
    tasks = []
    for i, g in enumerate(pairs):
        for j in part_jobs(i, g.run, None):
            tasks.append((ref_jobs[j.chunk], j, plans[g.run.label]))
    totals = [PairTotals() for _ in pairs]

    def tagged(ref_job: PartJob, job: PartJob, plan: PairPlan) -> tuple[int, PairResult]:
        return job.run, pair_chunk(ref_job, job, plan)

    for i, res in parallel(tagged, tasks, n_jobs):
        totals[i].add(res, top)
    summaries, hists, tops, words = [], [], [], []
    out = PairedTables(pd.DataFrame(), pd.DataFrame(), pd.DataFrame(), pd.DataFrame())
    for g, t in zip(pairs, totals, strict=True):
        if not t.same:
            continue
        run = g.run
        v = np.array(sorted(t.diff), dtype=np.float64)
        c = np.array([t.diff[int(x)] for x in v], dtype=np.int64)
        n = int(c.sum())
        mean = float((v * c).sum() / n)
        sd = math.sqrt(float((c * (v - mean) ** 2).sum()) / (n - 1)) if n > 1 else math.nan
        iv = mean_interval(mean, sd, n)
        med, p10, p90 = quantiles_from_counts(v, c, [0.5, 0.1, 0.9])
        ref_mean = _mean(ref)
        rel = f", {mean / ref_mean * 100:+.1f}% of its mean" if ref_mean else ""
        more = "more" if mean >= 0 else "fewer"
        plan = plans[run.label]
        assert t.sums is not None
        moments, factor, explains = _moments(t.sums, plan.metrics())
        higher, lower, same = (float(c[m].sum()) / n for m in (v > 0, v < 0, v == 0))
        on = "on the same boards" if plan.kind == SAME_BOARDS else "on the same draws"
        verdict = (
            f"{run.label}: {on}, {abs(mean):.1f} {more} points a board than {ref.run.label} "
            f"(95% CI {iv.low:+.1f} to {iv.high:+.1f}{rel}); {share_text(higher)} of boards score higher, "
            f"{share_text(lower)} lower, {share_text(same)} the same" + _scaling_text(factor, explains)
        )
        out.moments[run.label] = moments
        out.kinds[run.label] = plan.kind
        summaries.append(
            {
                "run": run.label,
                "reference": ref.run.label,
                "boards": n,
                "mean_diff": mean,
                "diff_low": iv.low,
                "diff_high": iv.high,
                "sd_diff": sd,
                "median_diff": med,
                "p10_diff": p10,
                "p90_diff": p90,
                "share_higher": higher,
                "share_lower": lower,
                "share_same": same,
                "scale_factor": factor,
                "scale_explains": explains,
                "pairing": plan.kind,
                "verdict": verdict,
            }
        )
        hists.append(
            pd.DataFrame(
                {"run": run.label, "reference": ref.run.label, "diff": v.astype(np.int64), "boards": c}
            )
        )
        tops.append(_top_changes(ref, g, t.top))
        if ref.run.has_words and run.has_words:
            words.append(_word_changes(ref, g, n, top))
        if plan.kind == SAME_BOARDS:
            out.face_effects[run.label] = _face_effects(ref, g, t, plan)
    if not summaries:
        return empty
    out.summary = pd.DataFrame(summaries, columns=PAIRED_SUMMARY_COLUMNS)
    out.histogram = pd.concat(hists, ignore_index=True)
    out.boards = pd.concat(tops, ignore_index=True)
    out.words = pd.concat(words, ignore_index=True) if words else pd.DataFrame()
    return out


def _var(n: int, total: int, squares: int) -> float:
    """The sample variance (ddof=1) from exact integer sums, rounded once."""
    return (n * squares - total * total) / (n * (n - 1))


def _moments(sums: np.ndarray, names: Sequence[str]) -> tuple[dict[str, PairedMoments], float, float]:
    """Every metric's per-board moments from its exact sums (n, Σx, Σy, Σx², Σy², Σxy), and the
    score's scaling: the factor ``s`` that best gives run b's score as ``s`` times run a's (least
    squares through zero) and the share of the squared per-board change it accounts for."""
    out = {}
    for i, key in enumerate(names):
        n, sx, sy, sxx, syy, sxy = (int(x) for x in sums[i])
        if n < 2:
            out[key] = PairedMoments(float(n), math.nan, math.nan, math.nan, math.nan, math.nan, math.nan)
            continue
        sd_, sdd = sy - sx, syy - 2 * sxy + sxx
        cov = (n * sxy - sx * sy) / (n * (n - 1))
        out[key] = PairedMoments(
            float(n), sx / n, sy / n, _var(n, sd_, sdd), _var(n, sx, sxx), _var(n, sy, syy), cov
        )
    n, sx, sy, saa, sbb, sab = (int(x) for x in sums[0])
    sdd = sbb - 2 * sab + saa
    factor = sab / saa if saa > 0 else math.nan
    explains = math.nan
    if saa > 0 and sdd > 0:
        resid = max(sbb - sab * sab / saa, 0.0)
        explains = 1.0 - resid / sdd if resid > 1e-12 * sbb else 1.0
    return out, factor, explains


def _face_effects(ref: Gathered, run: Gathered, t: PairTotals, plan: PairPlan) -> pd.DataFrame:
    """Face effects of ``run`` minus those of the reference on the boards both hold, with the
    paired intervals: the raw and adjusted effects of the per-board score difference
    (``diff``), and of the difference of each board's score as a share of its run's mean
    (``rel_diff``: zero for every face when one run's scores are the other's scaled). Empty
    when the boards have several shapes."""
    from pipeline.analyze._cells import adjusted_table
    from pipeline.analyze._models import Model

    m = ref.models
    if plan.faces is None or m is None or t.cross is None or t.meat_d is None or t.meat_r is None:
        return pd.DataFrame(columns=FACE_COLUMNS)
    faces = list(plan.faces)
    ma, mb = plan.mean_a, plan.mean_b
    xa = m.pooled.xty.astype(object)
    assert run.models is not None
    xb = run.models.pooled.xty.astype(object)
    fit_d = Model(m.pooled.xtx, np.array([int(x) for x in (xb - xa)], np.int64), m.pooled.n)
    fit_d.meat = t.meat_d[0]
    fit_r = Model(m.pooled.xtx, np.zeros(len(faces), np.int64), m.pooled.n)
    fit_r.coef = fit_r.inv @ (xb.astype(np.float64) / mb - xa.astype(np.float64) / ma)
    fit_r.meat = t.meat_r[0]
    adj_d = adjusted_table(fit_d, faces, m.cells)[0].set_index("face")
    adj_r = adjusted_table(fit_r, faces, m.cells)[0].set_index("face")
    n_all, sa_all, sb_all, saa_all, sbb_all, sab_all = (int(x) for x in ref_pair_totals(t))
    rows = []
    for i, face in enumerate(faces):
        if face == stats.BLANK_FACE:
            continue
        rows.append(
            {
                "face": face,
                "kind": "adjusted",
                "diff": adj_d.at[face, "adj_effect"],
                "diff_low": adj_d.at[face, "adj_low"],
                "diff_high": adj_d.at[face, "adj_high"],
                "rel_diff": adj_r.at[face, "adj_effect"],
                "rel_low": adj_r.at[face, "adj_low"],
                "rel_high": adj_r.at[face, "adj_high"],
            }
        )
        nw, sa, sb, saa, sbb, sab = (int(x) for x in t.cross[:, i])
        no = n_all - nw
        if nw == 0 or no == 0:
            continue
        raw = []
        for kind in ("d", "r"):
            groups_ = []
            for cnt, a1, b1, aa, bb, ab in (
                (nw, sa, sb, saa, sbb, sab),
                (no, sa_all - sa, sb_all - sb, saa_all - saa, sbb_all - sbb, sab_all - sab),
            ):
                if kind == "d":
                    total = b1 - a1
                    squares = bb - 2 * ab + aa
                    mean = total / cnt
                    var = (cnt * squares - total * total) / (cnt * (cnt - 1)) if cnt > 1 else math.nan
                else:
                    total_f = b1 / mb - a1 / ma
                    squares_f = bb / mb**2 - 2 * ab / (ma * mb) + aa / ma**2
                    mean = total_f / cnt
                    var = max(0.0, (squares_f - total_f * total_f / cnt) / (cnt - 1)) if cnt > 1 else math.nan
                groups_.append((mean, math.sqrt(var) if var == var else math.nan, cnt))
            (mw, sw, cw), (mo, so, co) = groups_
            raw.append(diff_of_means(mo, so, co, mw, sw, cw))
        rows.append(
            {
                "face": face,
                "kind": "raw",
                "diff": raw[0].estimate,
                "diff_low": raw[0].low,
                "diff_high": raw[0].high,
                "rel_diff": raw[1].estimate,
                "rel_low": raw[1].low,
                "rel_high": raw[1].high,
            }
        )
    return pd.DataFrame(rows, columns=FACE_COLUMNS)


def ref_pair_totals(t: PairTotals) -> list[int]:
    """(n, Σa, Σb, Σa², Σb², Σab) of the score over every board of the pair."""
    assert t.sums is not None
    n, sx, sy, sxx, syy, sxy = (int(x) for x in t.sums[0])
    return [n, sx, sy, sxx, syy, sxy]


def _top_changes(ref: Gathered, run: Gathered, best: list[tuple[int, int, int]]) -> pd.DataFrame:
    """The boards whose score changes most (ties: lower board id), with the words only one run
    finds on them (read from the few parts that hold them)."""
    has_words = ref.run.has_words and run.run.has_words
    cols = ["board_id", "board", "score", *(["words"] if has_words else [])]
    by_chunk: dict[int, list[int]] = {}
    for _, board_id, chunk in best:
        by_chunk.setdefault(chunk, []).append(board_id)
    jobs_a = {j.chunk: j for j in part_jobs(0, ref.run, None)}
    jobs_b = {j.chunk: j for j in part_jobs(0, run.run, None)}
    found: dict[int, dict[str, Any]] = {}
    import pyarrow as pa
    import pyarrow.compute as pc

    for chunk, ids in by_chunk.items():
        a = read_part(jobs_a[chunk], cols)
        b = read_part(jobs_b[chunk], cols)
        mask = pc.is_in(a.column("board_id"), value_set=pa.array(ids, pa.int64()))
        ra, rb = a.filter(mask).to_pylist(), b.filter(mask).to_pylist()
        for x, y in zip(ra, rb, strict=True):
            rec: dict[str, Any] = {
                "board_id": x["board_id"],
                "board": x["board"],
                "board_run": y["board"],
                "score_reference": x["score"],
                "score_run": y["score"],
                "diff": y["score"] - x["score"],
            }
            if has_words:
                sa, sb = set(x["words"]), set(y["words"])
                rec["words_gained"] = " ".join(sorted(sb - sa, key=lambda w: (-len(w), w)))
                rec["words_lost"] = " ".join(sorted(sa - sb, key=lambda w: (-len(w), w)))
            found[int(x["board_id"])] = rec
    df = pd.DataFrame([found[b] for _, b, _ in best])
    df.insert(0, "reference", ref.run.label)
    df.insert(0, "run", run.run.label)
    return df


def _word_changes(ref_g: Gathered, run_g: Gathered, n: int, top: int) -> pd.DataFrame:
    """The words that account for most of the change in mean score: for each word, boards
    finding it in ``run`` minus in ``ref`` times its points, per board. Summed over every
    word this is the mean per-board score difference exactly (words score independently)."""
    ref, run = ref_g.run, run_g.run
    assert ref_g.stats.words is not None and run_g.stats.words is not None
    wa, ca = ref_g.stats.words.items(None)
    wb, cb = run_g.stats.words.items(None)
    a = dict(zip(wa, ca.tolist(), strict=True))
    b = dict(zip(wb, cb.tolist(), strict=True))
    changed = sorted(w for w in set(a) | set(b) if a.get(w, 0) != b.get(w, 0))
    df = pd.DataFrame(
        {
            "word": pd.Series(changed, dtype=object),
            "boards_reference": np.array([a.get(w, 0) for w in changed], np.int64),
            "boards_run": np.array([b.get(w, 0) for w in changed], np.int64),
        }
    )
    pts_a, pts_b = _rules_points(ref), _rules_points(run)
    if pts_a is None or pts_b is None or df.empty:
        return pd.DataFrame()
    letters = df["word"].str.len().to_numpy()
    pa_ = np.array([pts_a(int(k)) for k in letters], dtype=np.float64)
    pb_ = np.array([pts_b(int(k)) for k in letters], dtype=np.float64)
    df["points_per_board"] = (df["boards_run"] * pb_ - df["boards_reference"] * pa_) / n
    df = df.assign(_abs=df["points_per_board"].abs()).sort_values(["_abs", "word"], ascending=[False, True])
    total = float(df["points_per_board"].sum())
    df = df.drop(columns="_abs").head(int(top) * 3).reset_index(drop=True)
    df["share_of_change"] = df["points_per_board"] / total if total else math.nan
    df.insert(0, "reference", ref.label)
    df.insert(0, "run", run.label)
    return df
