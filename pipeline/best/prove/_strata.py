"""The stratified estimate of a whole proof's cost from a sample of its classes, and the ratio
of two provers' totals on the same classes: the statistics behind
:mod:`benchmarks.prove_strata` (its docstring describes the design)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pipeline.best.prove._status import bootstrap_total

FLOOR_S = 1e-3  # seconds added before the log: a class can take no measurable time
KINDS = ("corner", "edge", "inner")


def features(space: Any, ids: np.ndarray) -> np.ndarray:
    """Per class: 1, the number of cells of each kind holding each bucket, and the products of
    every two of those counts (float [n, F]): a quadratic model of log seconds (on the Greek
    certificate it explains 89% of their variance, the linear one 79%)."""
    from pipeline.best.prove._classes import cell_kind

    digits = space.digits(np.asarray(ids, np.int64))
    kinds = np.array([KINDS.index(cell_kind(space.rows, space.cols, c)) for c in range(space.n_cells)])
    cols = [np.ones(len(digits))]
    for k in range(len(KINDS)):
        cells = kinds == k
        if not cells.any():
            continue
        for b in range(int(space.radices[cells].max())):
            cols.append((digits[:, cells] == b).sum(axis=1).astype(np.float64))
    counts = cols[1:]
    cols += [a * b for i, a in enumerate(counts) for b in counts[i:]]
    return np.column_stack(cols)


def fit(x: np.ndarray, seconds: np.ndarray) -> np.ndarray:
    """Least-squares coefficients of log(seconds + FLOOR_S) on ``x``."""
    coef, *_ = np.linalg.lstsq(x, np.log(seconds + FLOOR_S), rcond=None)
    return np.asarray(coef)


def cut_strata(predicted: np.ndarray, n_strata: int) -> np.ndarray:
    """Stratum of each class (0 = cheapest): ordered by predicted cost, cut into ``n_strata``
    groups of equal predicted total (a group holds at least one class)."""
    order = np.argsort(predicted, kind="stable")
    ranked = predicted[order]
    share = (np.cumsum(ranked) - ranked / 2) / ranked.sum()  # where each class's middle falls
    label = np.minimum((share * n_strata).astype(np.int64), n_strata - 1)
    out = np.empty(len(predicted), np.int64)
    out[order] = label
    return np.unique(out, return_inverse=True)[1]  # renumber: strata with no class vanish


def allocate(sizes: np.ndarray, n: int) -> np.ndarray:
    """Classes to draw per stratum: ``n`` spread equally, a stratum smaller than its share taken
    whole and its rest spread over the others; at least 2 a stratum where it has them."""
    take = np.zeros(len(sizes), np.int64)
    left, open_ = n, np.ones(len(sizes), bool)
    while left > 0 and open_.any():
        share = max(left // int(open_.sum()), 1)
        for h in np.flatnonzero(open_):
            add = min(share, sizes[h] - take[h], left)
            take[h] += add
            left -= add
            if take[h] == sizes[h]:
                open_[h] = False
            if left == 0:
                break
    return np.maximum(take, np.minimum(2, sizes))


@dataclass(frozen=True)
class Estimate:
    total_s: float
    low_s: float
    high_s: float


def stratified_total(sizes: np.ndarray, labels: np.ndarray, seconds: np.ndarray) -> Estimate:
    """The total over every class from drawn classes' ``seconds`` and their strata ``labels``
    (``sizes``: the classes in each stratum), with a normal 95% interval."""
    total, var = 0.0, 0.0
    for h, big_n in enumerate(sizes):
        y = seconds[labels == h]
        if len(y) == 0:
            raise ValueError(f"stratum {h} has no drawn class")
        total += big_n * y.mean()
        if len(y) > 1 and len(y) < big_n:
            var += big_n**2 * (1 - len(y) / big_n) * y.var(ddof=1) / len(y)
    half = 1.96 * float(np.sqrt(var))
    return Estimate(total, max(total - half, 0.0), total + half)


def design(
    x_all: np.ndarray,
    x_pilot: np.ndarray,
    pilot_s: np.ndarray,
    n: int,
    n_strata: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(stratum of every class, stratum sizes, indices of the classes to prove) from a pilot."""
    predicted = np.exp(x_all @ fit(x_pilot, pilot_s))
    labels = cut_strata(predicted, n_strata)
    sizes = np.bincount(labels)
    take = allocate(sizes, n)
    drawn = [rng.choice(np.flatnonzero(labels == h), int(k), replace=False) for h, k in enumerate(take)]
    return labels, sizes, np.sort(np.concatenate(drawn))


def validate_costs(
    x: np.ndarray, seconds: np.ndarray, *, pilot: int, n: int, n_strata: int, rounds: int, seed: int
) -> dict[str, Any]:
    """The design repeated ``rounds`` times on known per-class costs: each round draws a pilot
    and a stratified sample of ``n`` and a simple random sample of ``pilot + n`` (the same
    classes proved). Returns the estimates' ratios to the truth and how often each interval
    covered it."""
    rng = np.random.default_rng(seed)
    truth = float(seconds.sum())
    strat, srs = [], []
    for _ in range(rounds):
        p = rng.choice(len(seconds), pilot, replace=False)
        labels, sizes, drawn = design(x, x[p], seconds[p], n, n_strata, rng)
        est = stratified_total(sizes, labels[drawn], seconds[drawn])
        strat.append((est.total_s / truth, est.low_s <= truth <= est.high_s))
        simple = seconds[rng.choice(len(seconds), pilot + n, replace=False)]
        b = bootstrap_total(simple, len(seconds), seed=int(rng.integers(2**31)), rounds=2000)
        srs.append((b["cpu_h"] * 3600 / truth, b["low_cpu_h"] * 3600 <= truth <= b["high_cpu_h"] * 3600))

    def summary(rows: list[tuple[float, bool]]) -> dict[str, float]:
        ratio = np.array([r for r, _ in rows])
        return {
            "ratio_p05": float(np.quantile(ratio, 0.05)),
            "ratio_median": float(np.median(ratio)),
            "ratio_p95": float(np.quantile(ratio, 0.95)),
            "within_10pct": float(np.mean(np.abs(ratio - 1) <= 0.10)),
            "coverage": float(np.mean([c for _, c in rows])),
        }

    return {"truth_s": truth, "stratified": summary(strat), "simple": summary(srs)}


def paired_ratio(
    ours: np.ndarray, theirs: np.ndarray, rng: np.random.Generator, rounds: int = 10_000
) -> Estimate:
    """sum(ours) / sum(theirs) over paired classes, with a 95% bootstrap interval (the classes
    resampled, each keeping its pair)."""
    idx = rng.integers(0, len(ours), (rounds, len(ours)))
    boot = ours[idx].sum(axis=1) / np.maximum(theirs[idx].sum(axis=1), 1e-12)
    return Estimate(
        float(ours.sum() / theirs.sum()), float(np.quantile(boot, 0.025)), float(np.quantile(boot, 0.975))
    )


def stratified_ratio(
    sizes: np.ndarray, labels: np.ndarray, ours: np.ndarray, theirs: np.ndarray, rng: np.random.Generator
) -> tuple[Estimate, float, float]:
    """(ratio of the two provers' stratified totals with a 95% interval from resampling each
    stratum's pairs, ours' total, theirs')."""
    groups = [np.flatnonzero(labels == h) for h in range(len(sizes))]

    def totals(pick: list[np.ndarray]) -> tuple[float, float]:
        a = sum(float(n * ours[g].mean()) for n, g in zip(sizes, pick, strict=True) if len(g))
        b = sum(float(n * theirs[g].mean()) for n, g in zip(sizes, pick, strict=True) if len(g))
        return a, b

    a, b = totals(groups)
    boot = []
    for _ in range(2000):
        x, y = totals([rng.choice(g, len(g)) if len(g) else g for g in groups])
        boot.append(x / max(y, 1e-12))
    return Estimate(a / b, float(np.quantile(boot, 0.025)), float(np.quantile(boot, 0.975))), a, b
