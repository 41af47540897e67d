"""The 95% interval of a mean and of a share, from the counts and sums the statistics keep: what
the report (:mod:`pipeline.analyze._inference`) and a run's expectations
(:mod:`pipeline.runner._expect`) state beside each measured value.

A mean has the normal approximation (a run holds thousands of boards); a share the Wilson score
interval, which stays inside [0, 1] for rare events.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

Z95 = 1.959963984540054  # the standard normal's 97.5% quantile


@dataclass(frozen=True)
class Interval:
    """An estimate with its 95% confidence interval."""

    estimate: float
    low: float
    high: float

    @property
    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0


def normal_interval(est: float, se: float) -> Interval:
    """``est`` ± 1.96 standard errors."""
    return Interval(est, est - Z95 * se, est + Z95 * se)


def wilson(k: float, n: float) -> Interval:
    """The share ``k / n`` with its Wilson score interval (95%): unlike the Wald interval it
    stays inside [0, 1] and keeps its coverage for rare events (a band holding 0.5% of boards)
    and small runs. NaN for ``n = 0``.

    >>> round(wilson(0, 100).high, 4)
    0.037
    """
    if n <= 0:
        return Interval(math.nan, math.nan, math.nan)
    p = k / n
    z2 = Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    # at k = 0 (k = n) the bound is 0 (1) exactly; the formula leaves a rounding error there
    low = 0.0 if k <= 0 else max(0.0, centre - half)
    high = 1.0 if k >= n else min(1.0, centre + half)
    return Interval(p, low, high)


def mean_interval(mean: float, sd: float, n: float) -> Interval:
    """A mean (of paired differences, say) with its interval."""
    return normal_interval(mean, sd / math.sqrt(n) if n > 0 else math.nan)
