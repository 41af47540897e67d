"""Scheduled jobs: the schedule's date, the generator seed derived from it, and output path
patterns with placeholders (``--out 'runs/nightly/{date}'``).

A job started every night by cron, systemd or Airflow should roll new boards each night and
keep each night's run apart. The date is the schedule's (``--date 2026-12-01``, or ``today``:
the machine's local date), and the seed is derived from it by a stable hash, so re-running a
night (a retry, a backfill) rolls exactly that night's boards again:

    seed = int.from_bytes(sha256(b"2026-12-01").digest()[:8], "big")

>>> date_seed(datetime.date(2026, 12, 1))  # doctest: +SKIP
"""

from __future__ import annotations

import datetime
import hashlib
import string
from collections.abc import Mapping
from pathlib import Path

from pipeline.errors import ConfigError

DATE_SEED = "date"  # ``[boards] seed = "date"``: derive the seed from the schedule's date
TODAY = "today"
# what an output pattern may name; {date} takes a strftime format too: {date:%Y/%m/%d}
PLACEHOLDERS: dict[str, str] = {
    "date": "the schedule's date, YYYY-MM-DD (strftime formats allowed: {date:%Y/%m/%d})",
    "year": "its year, YYYY",
    "month": "its month, MM",
    "day": "its day of the month, DD",
    "config": "the config file's name without .toml (smoke for configs/smoke.toml)",
}


def parse_day(text: str, what: str = "--date") -> datetime.date:
    """``YYYY-MM-DD`` or ``today`` (the local date) as a date; anything else is a ConfigError
    naming ``what``."""
    if text.strip().lower() == TODAY:
        return datetime.date.today()
    try:
        if len(text) != 10:
            raise ValueError
        return datetime.date.fromisoformat(text)
    except ValueError:
        raise ConfigError(f"{what} {text!r}: expected a date YYYY-MM-DD or 'today'") from None


def date_seed(day: datetime.date) -> int:
    """The generator seed for a schedule's date: the first 8 bytes of the SHA-256 of its ISO
    form (``2026-12-01``) as a big-endian integer. Stable across machines, Python versions and
    releases (the documented formula is the contract)."""
    return int.from_bytes(hashlib.sha256(day.isoformat().encode("ascii")).digest()[:8], "big")


def placeholder_values(day: datetime.date, config: str | Path | None = None) -> dict[str, object]:
    """The values :func:`expand_pattern` fills in for ``day`` (and the config file, if any)."""
    values: dict[str, object] = {
        "date": day,
        "year": f"{day.year:04d}",
        "month": f"{day.month:02d}",
        "day": f"{day.day:02d}",
    }
    if config is not None:
        name = Path(config).name
        values["config"] = name[: -len(".toml")] if name.endswith(".toml") else name
    return values


def has_placeholders(pattern: str) -> bool:
    return "{" in pattern or "}" in pattern


def scheduled_day(seed_from_date: str | None, day: str | None, seed_given: bool) -> datetime.date | None:
    """The schedule's date of ``boggle run --seed-from-date D`` / ``--date D`` (None: neither,
    today when anything asks for it); ``seed_given``: ``--seed`` was given too (refused with
    ``--seed-from-date``, as is a ``--date`` that differs from it)."""
    if seed_from_date is None:
        return parse_day(day, "--date") if day is not None else None
    if seed_given:
        raise ConfigError("--seed and --seed-from-date both set the seed; give one")
    when = parse_day(seed_from_date, "--seed-from-date")
    if day is not None and parse_day(day, "--date") != when:
        raise ConfigError(f"--date {day} differs from --seed-from-date {seed_from_date}; give one")
    return when


def expand_pattern(
    pattern: str,
    values: Mapping[str, object] | datetime.date | None,
    config: str | Path | None = None,
    what: str = "--out",
) -> str:
    """``pattern`` with its ``{name}`` placeholders filled in (``{{`` and ``}}`` are literal
    braces) from ``values``, or from :func:`placeholder_values` of a date (None: today) and
    ``config``. An unknown or malformed placeholder is a ConfigError naming ``what``.

    >>> expand_pattern("runs/nightly/{date}", datetime.date(2026, 12, 1))
    'runs/nightly/2026-12-01'
    """
    if not has_placeholders(pattern):
        return pattern
    if values is None or isinstance(values, datetime.date):
        values = placeholder_values(values or datetime.date.today(), config)
    known = ", ".join("{" + k + "}" for k in PLACEHOLDERS)
    try:
        fields = list(string.Formatter().parse(pattern))
    except ValueError as exc:
        raise ConfigError(f"{what} {pattern!r}: {exc} (use {{{{ and }}}} for literal braces)") from None
    for _, name, spec, conversion in fields:
        if name is None:
            continue
        if name not in PLACEHOLDERS or conversion is not None or (spec and name != "date"):
            raise ConfigError(f"{what} {pattern!r}: unknown placeholder {{{name}}} (known: {known})")
        if name not in values:
            raise ConfigError(f"{what} {pattern!r}: {{{name}}} has no value here (no config file)")
    try:
        return pattern.format_map(dict(values))
    except ValueError as exc:  # a bad strftime format
        raise ConfigError(f"{what} {pattern!r}: {exc}") from None
