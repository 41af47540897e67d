"""Confidence intervals for the comparisons of the report, and their plain-language verdicts.

Every interval is a **normal approximation** at 95%: a run holds thousands of boards, so the
means and shares compared here are close to normal (central limit theorem) and a bootstrap would
cost a pass over the boards per resample for the same answer. Differences of means use Welch's
standard error (unequal variances), shares the Wald one, ratios of means the delta method on the
log scale, and regression coefficients the heteroskedasticity-robust (HC1) covariance. A single
share (how many boards fall in a band, how many are bad) has the Wilson interval, which stays
inside [0, 1] for rare events; a risk ratio the log (Katz) interval. The tests
check the coverage of these intervals on simulated samples with a known difference.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

# the interval of one mean and of one share live with the statistics (the run's expectations state
# them too); the report's comparisons build on them here
from pipeline.stats import Z95 as Z95
from pipeline.stats import Interval as Interval
from pipeline.stats import mean_interval as mean_interval
from pipeline.stats import normal_interval as _interval
from pipeline.stats import wilson as wilson

METHOD = "normal approximation (Welch standard errors; delta method for ratios; HC1 for regressions)"


def var_from_sums(n: float, total: float, squares: float) -> float:
    """Sample variance (ddof=1) from the count, sum and sum of squares (NaN below 2 values)."""
    if n < 2:
        return math.nan
    return max(0.0, (squares - total * total / n) / (n - 1))


def diff_of_means(mean_a: float, sd_a: float, n_a: float, mean_b: float, sd_b: float, n_b: float) -> Interval:
    """``mean_b - mean_a`` of two independent samples (Welch standard error)."""
    se = math.sqrt(sd_a**2 / n_a + sd_b**2 / n_b) if n_a > 0 and n_b > 0 else math.nan
    return _interval(mean_b - mean_a, se)


def ratio_of_means(
    mean_a: float, sd_a: float, n_a: float, mean_b: float, sd_b: float, n_b: float
) -> Interval:
    """``mean_b / mean_a - 1`` (relative difference), delta method on log(mean_b / mean_a).

    NaN when either mean is not positive (a ratio is then meaningless)."""
    if mean_a <= 0 or mean_b <= 0 or n_a <= 0 or n_b <= 0:
        return Interval(math.nan, math.nan, math.nan)
    log_ratio = math.log(mean_b / mean_a)
    se = math.sqrt(sd_a**2 / (n_a * mean_a**2) + sd_b**2 / (n_b * mean_b**2))
    return Interval(math.expm1(log_ratio), math.expm1(log_ratio - Z95 * se), math.expm1(log_ratio + Z95 * se))


def diff_of_shares(p_a: float, n_a: float, p_b: float, n_b: float) -> Interval:
    """``p_b - p_a`` of two independent shares (Wald standard error)."""
    se = math.sqrt(p_a * (1 - p_a) / n_a + p_b * (1 - p_b) / n_b) if n_a > 0 and n_b > 0 else math.nan
    return _interval(p_b - p_a, se)


def risk_ratio(a: float, n1: float, c: float, n0: float) -> Interval:
    """``(a / n1) / (c / n0)``: how many times likelier an outcome is with a factor (``a`` of
    ``n1`` boards) than without it (``c`` of ``n0``), with the 95% interval of the log method
    (Katz: standard error of log RR = sqrt(1/a - 1/n1 + 1/c - 1/n0)). NaN, interval included,
    when a group is empty or has no case (a zero count leaves the log undefined).

    >>> iv = risk_ratio(20, 100, 10, 100)
    >>> round(iv.estimate, 2), round(iv.low, 2), round(iv.high, 2)
    (2.0, 0.99, 4.05)
    """
    if a <= 0 or c <= 0 or n1 <= 0 or n0 <= 0:
        return Interval(math.nan, math.nan, math.nan)
    log_rr = math.log((a / n1) / (c / n0))
    se = math.sqrt(1 / a - 1 / n1 + 1 / c - 1 / n0)
    return Interval(math.exp(log_rr), math.exp(log_rr - Z95 * se), math.exp(log_rr + Z95 * se))


@dataclass(frozen=True)
class Fit:
    """Least squares ``y ~ X @ coef`` with the HC1 robust covariance of ``coef``."""

    coef: np.ndarray
    cov: np.ndarray
    n: int

    def contrast(self, weights: np.ndarray) -> Interval:
        """``weights @ coef`` with its interval."""
        w = np.asarray(weights, dtype=np.float64)
        est = float(w @ self.coef)
        var = float(w @ self.cov @ w)
        return _interval(est, math.sqrt(max(var, 0.0)))


def ols(x: np.ndarray, y: np.ndarray) -> Fit:
    """Ordinary least squares with White's HC1 covariance (scores are skewed and their spread
    grows with the mean, so the classical covariance would understate the uncertainty).

    Columns that are all zero get a zero coefficient and zero variance (a face a run never
    shows); a rank-deficient design is solved by the pseudo-inverse.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n = x.shape[0]
    xtx = x.T @ x
    inv = np.linalg.pinv(xtx)
    coef = inv @ (x.T @ y)
    resid = y - x @ coef
    xe = x * resid[:, None]
    meat = xe.T @ xe
    rank = int(np.linalg.matrix_rank(xtx))
    scale = n / max(1, n - rank)
    cov = scale * inv @ meat @ inv
    return Fit(coef, cov, n)


def hc1_fit(
    xtx: np.ndarray,
    xty: np.ndarray,
    n: int,
    resid_of: Callable[[np.ndarray], np.ndarray],
    meat_of: Callable[[np.ndarray], np.ndarray],
) -> Fit:
    """:func:`ols` from the normal equations, for designs that compute ``X.T @ X`` and the
    meat ``X.T @ diag(e^2) @ X`` their own (faster) way."""
    inv = np.linalg.pinv(xtx)
    coef = inv @ xty
    resid = resid_of(coef)
    rank = int(np.linalg.matrix_rank(xtx))
    cov = (n / max(1, n - rank)) * inv @ meat_of(resid) @ inv
    return Fit(coef, cov, n)


def share_text(p: float) -> str:
    """A share as a percentage rounded so that it never says more than it knows: ``"0%"`` and
    ``"100%"`` only for exactly 0 and 1, ``"<0.1%"`` and ``">99.9%"`` for what rounds to them.

    >>> share_text(0.0005), share_text(0.998), share_text(0.9995), share_text(0.0), share_text(1.0)
    ('<0.1%', '99.8%', '>99.9%', '0%', '100%')
    """
    if math.isnan(p):
        return "–"
    if p == 0 or p == 1:
        return f"{p * 100:.0f}%"
    if 0 < p < 0.001:
        return "<0.1%"
    if 0.999 < p < 1:
        return ">99.9%"
    return f"{p * 100:.1f}%"


def points_text(x: float) -> str:
    """Percentage points (``x`` a difference of shares, 0.012 = 1.2 points) with as many decimals
    as a small difference needs to show it is not zero: ``1.2``, ``0.12``, ``0.012``."""
    v = abs(x) * 100
    if v == 0 or v >= 1:
        return f"{v:.1f}"
    return f"{v:.2f}" if v >= 0.1 else f"{v:.2g}" if v >= 0.001 else "<0.001"


def _pct(x: float) -> str:
    return f"{abs(x) * 100:.1f}%"


def relative_verdict(subject: str, what: str, reference: str, rel: Interval) -> str:
    """``"classic dice: mean score 11.3% lower than new dice (95% CI 10.6% to 12.1%)"``; says
    when the interval includes no difference."""
    if math.isnan(rel.estimate):
        return f"{subject}: no ratio of {what} (a mean is zero)"
    if rel.estimate == rel.low == rel.high == 0:
        return f"{subject}: {what} the same as {reference}"
    direction = "higher" if rel.estimate >= 0 else "lower"
    lo, hi = sorted((abs(rel.low), abs(rel.high)))
    if not rel.excludes_zero:
        return (
            f"{subject}: {what} {_pct(rel.estimate)} {direction} than {reference}, but the 95% CI "
            f"({rel.low * 100:+.1f}% to {rel.high * 100:+.1f}%) includes no difference"
        )
    return (
        f"{subject}: {what} {_pct(rel.estimate)} {direction} than {reference} "
        f"(95% CI {_pct(lo)} to {_pct(hi)})"
    )


def difference_verdict(subject: str, what: str, reference: str, diff: Interval, *, unit: str = "") -> str:
    """``"classic dice: mean dead cells 3.20 more than new dice (95% CI 3.00 to 3.40)"``;
    ``unit="points"``: a difference of shares, in percentage points (written out once)."""
    if math.isnan(diff.estimate):
        return f"{subject}: no comparison of {what}"
    if diff.estimate == diff.low == diff.high == 0:
        return f"{subject}: {what} the same as {reference}"
    points = unit == "points"

    def fmt(v: float) -> str:
        return points_text(v) if points else f"{abs(v):.2f}{unit}"

    more = "more" if diff.estimate >= 0 else "less"
    tail = " percentage points" if points else ""
    if not diff.excludes_zero:
        return (
            f"{subject}: {what} {fmt(diff.estimate)}{tail} {more} than {reference}; the 95% CI "
            f"includes no difference"
        )
    lo, hi = sorted((abs(diff.low), abs(diff.high)))
    return (
        f"{subject}: {what} {fmt(diff.estimate)}{tail} {more} than {reference} "
        f"(95% CI {fmt(lo)} to {fmt(hi)})"
    )
