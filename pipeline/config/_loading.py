"""Loading a config: the TOML file, ``--set`` assignments and option overrides, in that order;
``seed = "date"`` and the placeholders of ``[run] out`` filled in from the schedule's date."""

from __future__ import annotations

import datetime
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pipeline.config._checks import check_sections, check_value
from pipeline.config._run import SECTIONS, RunConfig
from pipeline.config._schedule import DATE_SEED, date_seed, expand_pattern, has_placeholders
from pipeline.errors import BoggleError, ConfigError, quote

T = TypeVar("T")


def load_config(
    path: str | Path | None,
    overrides: Mapping[str, Any] | None = None,
    assignments: Sequence[str] = (),
    *,
    day: datetime.date | None = None,
    option_names: Mapping[str, str] | None = None,
) -> RunConfig:
    """Load a TOML config (or start from the defaults when ``path`` is None), apply
    ``assignments`` (``"boards.count=1000"`` strings, TOML values) and then ``overrides``
    (``{"boards.count": 1000}``; None values are ignored), validate and resolve.

    ``day`` is the schedule's date (default: today) for ``seed = "date"`` and for the
    placeholders of ``[run] out`` in the file or ``--set`` (an ``overrides`` value is taken as
    it is: the command line expands its own). ``option_names`` maps an override's key to the
    option that gave it (``{"boards.count": "--count"}``): a bad value is blamed on the option,
    not on the file.

    >>> load_config("configs/smoke.toml", {"run.out": "/tmp/smoke"}).boards.count  # doctest: +SKIP
    """
    raw, origin = read_with_overrides(path, None, assignments)
    when = day if day is not None else datetime.date.today()
    _expand_out(raw, when, path, origin)
    for key, value in (overrides or {}).items():
        if value is not None:
            _check_option(key, value, (option_names or {}).get(key))
            _set_dotted(raw, key, value, origin)
    _seed_from_date(raw, when, origin)
    return config_from_dict(raw, origin=origin).resolve()


def _expand_out(raw: dict[str, Any], day: datetime.date, path: str | Path | None, origin: str | None) -> None:
    """The placeholders of ``[run] out`` (``runs/nightly/{date}``) filled in from ``day``."""
    run = raw.get("run")
    out = run.get("out") if isinstance(run, Mapping) else None
    if isinstance(out, str) and has_placeholders(out):
        try:
            raw["run"]["out"] = expand_pattern(out, day, path, "[run] out")
        except ConfigError as exc:
            raise ConfigError(exc.message, source=origin) from None


def _check_option(key: str, value: Any, option: str | None) -> None:
    """The value of ``key`` given by the command-line ``option`` (None: not given by one),
    checked now so that a bad one is blamed on the option, not on the file."""
    if option is None or (key == "boards.seed" and value == DATE_SEED):
        return
    section, name = key.split(".", 1)
    check_value(SECTIONS[section], name, value, option)
    if key == "run.out" and isinstance(value, str):
        from pipeline.urls import check_url, is_url

        if is_url(value):  # a URL refused (credentials in it...) is the option's, not the file's
            check_url(value, option)


def _seed_from_date(raw: dict[str, Any], day: datetime.date, origin: str | None) -> None:
    """``[boards] seed = "date"``: the seed derived from ``day``, recorded with the date as
    ``seed_date``. A ``seed_date`` alone (a recorded config) gives its seed; one with a seed
    that does not derive from it is refused."""
    boards = raw.get("boards")
    if not isinstance(boards, dict):
        return
    seed = boards.get("seed")
    if isinstance(seed, str) and seed != DATE_SEED:
        raise ConfigError(
            '[boards] seed: expected an integer >= 0, or "date" (derived from the schedule\'s date), '
            f"got {seed!r}",
            source=origin,
        )
    if seed == DATE_SEED:
        boards["seed"] = date_seed(day)
        boards["seed_date"] = day.isoformat()
        return
    derived = _recorded_date_seed(boards.get("seed_date"))
    if derived is None or seed == derived:
        return
    if seed is not None:
        raise ConfigError(
            f"[boards] seed {seed!r} does not derive from seed_date {boards['seed_date']!r} "
            f'(that gives {derived}); drop one, or write seed = "date"',
            source=origin,
        )
    boards["seed"] = derived


def _recorded_date_seed(text: Any) -> int | None:
    """The seed a recorded ``seed_date`` derives; None when it is absent or no date (the checks
    name a bad one)."""
    if not isinstance(text, str) or len(text) != 10:
        return None
    try:
        return date_seed(datetime.date.fromisoformat(text))
    except ValueError:
        return None


def load_section(
    path: str | Path | None,
    section: str,
    cls: type[T],
    overrides: Mapping[str, Any] | None = None,
    assignments: Sequence[str] = (),
) -> T:
    """One command's section of a TOML file (``[optimize]``, ``[prove]``...) as the dataclass
    ``cls``, loaded like a run config: ``assignments`` (``--set optimize.seed=3``), then
    ``overrides`` (``{"optimize.seed": 3}``, None ignored), unknown sections and keys rejected
    with a hint. Values are checked against the field types like a run config's
    (:func:`check_value`); ``cls`` may check more (how values fit together), raising ConfigError.

    >>> load_section("configs/optimize-4x4.toml", "optimize", OptimizeConfig).restarts  # doctest: +SKIP
    10
    """
    raw, origin = read_with_overrides(path, overrides, assignments)
    values = check_sections(raw, {section: cls}, origin).get(section, {})
    try:
        return cls(**values)
    except ConfigError as exc:
        if exc.source is not None:
            raise
        raise ConfigError(exc.message, source=origin) from None


def read_with_overrides(
    path: str | Path | None, overrides: Mapping[str, Any] | None, assignments: Sequence[str]
) -> tuple[dict[str, Any], str | None]:
    """The TOML document at ``path`` (empty when None) with ``assignments`` and then
    ``overrides`` applied, and its origin for messages."""
    raw: dict[str, Any] = {}
    origin = None
    if path is not None:
        origin = str(path)
        raw = read_toml(Path(path))
    for text in assignments:
        key, value = parse_assignment(text)
        _set_dotted(raw, key, value, origin)
    for key, value in (overrides or {}).items():
        if value is not None:
            _set_dotted(raw, key, value, origin)
    return raw, origin


# a config is a page of settings: a file beyond this is not one (and is not read whole)
MAX_CONFIG_BYTES = 1 << 20


def read_toml(path: Path) -> dict[str, Any]:
    """The TOML document at ``path``; anything that keeps it from being one (missing, not a
    regular file, too large, not UTF-8, not TOML, nested too deeply) is one ConfigError."""
    from pipeline.io import read_regular_bytes

    try:
        data = read_regular_bytes(path, MAX_CONFIG_BYTES, "config")
    except BoggleError as exc:
        raise ConfigError(exc.message, source=exc.source, line=exc.line) from None
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError("not UTF-8 text", source=str(path)) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"not valid TOML: {exc}", source=str(path)) from None
    except RecursionError:
        raise ConfigError("not valid TOML: arrays or tables nested too deeply", source=str(path)) from None


def parse_assignment(text: str) -> tuple[str, Any]:
    """``"section.key=value"`` -> (key, value); the value is read as TOML, else as a string."""
    if "=" not in text:
        raise ConfigError(f"--set {text!r}: expected section.key=value, e.g. boards.count=1000")
    key, value = (s.strip() for s in text.split("=", 1))
    try:
        parsed = tomllib.loads(f"v = {value}")["v"]
    except tomllib.TOMLDecodeError:
        parsed = value
    except RecursionError:
        raise ConfigError(f"--set {quote(text)}: the value is nested too deeply") from None
    return key, parsed


def _set_dotted(raw: dict[str, Any], key: str, value: Any, origin: str | None) -> None:
    parts = key.split(".")
    if len(parts) != 2 or not all(parts):
        raise ConfigError(f"setting {key!r}: expected section.key, e.g. boards.count", source=origin)
    section, name = parts
    table = raw.setdefault(section, {})
    if not isinstance(table, dict):
        raise ConfigError(f"[{section}] must be a table", source=origin)
    table[name] = value


def config_from_dict(raw: Mapping[str, Any], *, origin: str | None = None) -> RunConfig:
    """Validate a parsed TOML document (types, ranges, unknown keys) into a RunConfig."""
    checked = check_sections(raw, SECTIONS, origin)
    sections = {name: SECTIONS[name](**values) for name, values in checked.items()}
    return RunConfig(**sections, origin=origin)
