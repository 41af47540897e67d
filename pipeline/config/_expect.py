"""Expectations on a run's data (``[expect] checks``, ``boggle run --expect``): what each one
says, parsed and spelled one way, and the word-count bands they (and the report) name.

An expectation is ``METRIC OP NUMBER`` or ``METRIC within limits``:

* ``METRIC``: ``mean_score`` (points a board), ``bad_share`` (the share of bad boards, as the
  report counts them by default: fewer than 50 words) or ``band_share[BAND]`` (the share of
  boards whose word count is in ``BAND``: a preset name such as ``tanglet-medium``, or ``A..B``);
* ``OP``: ``>=``, ``>``, ``<=`` or ``<``; a share's ``NUMBER`` is a fraction (``0.05``) or a
  percentage (``5%``);
* ``within limits``: inside the control limits drawn from the earlier nights of the same
  design (the runs beside this one in its parent folder; see :mod:`pipeline.analyze.expect`).

>>> parse_expectation("mean_score>=120").text
'mean_score >= 120'
>>> parse_expectation("band_share[tanglet-medium] >= 5%").text
'band_share[tanglet-medium] >= 0.05'
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Annotated

from pipeline.config._checks import Convert, Invalid
from pipeline.errors import BoggleError, ConfigError

#: Tanglet's word-count bands for 4x4 boards (the game's easy, medium and hard settings), by
#: name: the lowest and highest word count, both included (``boggle select --preset``, the
#: report's "Boards to serve" and ``band_share[NAME]`` read them here).
WORD_BANDS: dict[str, tuple[int, int]] = {
    "tanglet-easy": (32, 42),
    "tanglet-medium": (200, 250),
    "tanglet-hard": (425, 525),
}
METRICS = ("mean_score", "bad_share", "band_share")
OPERATORS = (">=", "<=", ">", "<")
WITHIN = "within limits"

_SHAPE = re.compile(
    r"^\s*(?P<metric>[a-z_]+)\s*(?:\[\s*(?P<band>[^\]]*?)\s*\])?\s*"
    r"(?:(?P<op>>=|<=|>|<)\s*(?P<number>[-+0-9.eE]+)\s*(?P<percent>%)?|(?P<within>within\s+limits))\s*$"
)
_RANGE = re.compile(r"^(\d+)?\s*\.\.\s*(\d+)?$")
HELP = (
    "expected METRIC OP NUMBER or METRIC within limits, METRIC one of mean_score, bad_share, "
    "band_share[BAND] (BAND: " + ", ".join(WORD_BANDS) + " or A..B), OP one of >=, >, <=, <"
)


@dataclass(frozen=True)
class Expectation:
    """One expectation: ``metric`` (:data:`METRICS`), for ``band_share`` its ``band`` (its name
    as written) with ``lo``..``hi`` (word counts, None: open), and either ``op`` with ``bound``
    or ``within`` (the control limits of earlier nights)."""

    metric: str
    op: str | None = None
    bound: float | None = None
    band: str | None = None
    lo: int | None = None
    hi: int | None = None

    @property
    def within(self) -> bool:
        return self.op is None

    @property
    def is_share(self) -> bool:
        return self.metric != "mean_score"

    @property
    def name(self) -> str:
        """The metric as written: ``band_share[tanglet-medium]``."""
        return f"{self.metric}[{self.band}]" if self.band is not None else self.metric

    @property
    def text(self) -> str:
        """The one spelling: what the manifest and ``--summary-json`` record."""
        if self.within:
            return f"{self.name} {WITHIN}"
        return f"{self.name} {self.op} {self.bound:g}"

    def holds(self, value: float) -> bool:
        """Whether ``value`` meets ``op bound`` (not for ``within``)."""
        assert self.op is not None and self.bound is not None
        return {
            ">=": value >= self.bound,
            ">": value > self.bound,
            "<=": value <= self.bound,
            "<": value < self.bound,
        }[self.op]


def parse_expectation(text: str, where: str = "[expect] checks") -> Expectation:
    """``text`` as an :class:`Expectation`; a ConfigError (exit 2) naming ``where`` and what is
    expected for anything else."""
    m = _SHAPE.match(text) if isinstance(text, str) else None
    if m is None:
        raise ConfigError(f"{where} {text!r}: {HELP}")
    metric, band = m.group("metric"), m.group("band")
    if metric not in METRICS:
        raise ConfigError(f"{where} {text!r}: unknown metric {metric!r}; {HELP}")
    if (metric == "band_share") != (band is not None):
        need = "names its band: band_share[tanglet-medium]" if band is None else "takes no [BAND]"
        raise ConfigError(f"{where} {text!r}: {metric} {need}")
    lo = hi = None
    if band is not None:
        lo, hi = _band(band, text, where)
    if m.group("within"):
        return Expectation(metric, band=band, lo=lo, hi=hi)
    try:
        bound = float(m.group("number"))
    except ValueError:
        raise ConfigError(f"{where} {text!r}: {m.group('number')!r} is not a number") from None
    if not math.isfinite(bound):
        raise ConfigError(f"{where} {text!r}: the bound must be a finite number")
    if m.group("percent"):
        if metric == "mean_score":
            raise ConfigError(f"{where} {text!r}: mean_score is in points, not a percentage")
        bound /= 100
    if metric != "mean_score" and not 0 <= bound <= 1:
        raise ConfigError(f"{where} {text!r}: a share is from 0 to 1 (or 0% to 100%)")
    return Expectation(metric, m.group("op"), bound, band, lo, hi)


def _band(band: str, text: str, where: str) -> tuple[int | None, int | None]:
    if band in WORD_BANDS:
        return WORD_BANDS[band]
    expected = f"one of {', '.join(WORD_BANDS)} or A..B (word counts)"
    return read_range(band, f"{where} {text!r}: band {band!r}", expected)


def read_range(
    text: str,
    where: str,
    expected: str,
    *,
    error: type[BoggleError] = ConfigError,
    pattern: re.Pattern[str] = _RANGE,
) -> tuple[int | None, int | None]:
    """``A..B`` as (A, B), a side left out (``A..``, ``..B``) as None: ``pattern``'s two groups,
    each an optional whole number. Anything else, or A above B, is an ``error`` (exit 2) that
    starts with ``where`` (and says ``expected``, for anything else)."""
    m = pattern.match(text)
    if m is None or (m.group(1) is None and m.group(2) is None):
        raise error(f"{where}: expected {expected}")
    lo = None if m.group(1) is None else int(m.group(1))
    hi = None if m.group(2) is None else int(m.group(2))
    if lo is not None and hi is not None and lo > hi:
        raise error(f"{where}: the lower end is above the upper one")
    return lo, hi


def _checks_text(values: tuple[str, ...]) -> tuple[str, ...]:
    """Each expectation in its one spelling (a repeated one kept once); Invalid for a bad one."""
    out: list[str] = []
    for v in values:
        try:
            text = parse_expectation(v, "").text
        except ConfigError as exc:
            raise Invalid(problem=exc.message.strip()) from None
        if text not in out:
            out.append(text)
    return tuple(out)


@dataclass(frozen=True)
class ExpectConfig:
    """``[expect]``: checks on the run's data once it is written; a run that breaks one keeps
    its data and exits 6. Not part of the run's identity: changing them never invalidates a
    run."""

    checks: Annotated[tuple[str, ...], Convert(_checks_text)] = ()

    def parsed(self) -> list[Expectation]:
        return [parse_expectation(t) for t in self.checks]
