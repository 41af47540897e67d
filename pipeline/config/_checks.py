"""What a config key takes, and the checks every command's config goes through.

A section is a frozen dataclass whose field types say what each key takes; :func:`check_value`
reads them, :func:`check_sections` checks a whole TOML document against its sections (unknown
sections and keys refused with a "did you mean" hint). The caps of the count options and their
checks (:func:`check_count`, :func:`check_jobs`) are here too, for the commands whose config is
not a section (``prove``, ``analyze``).
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pipeline.errors import ConfigError

# The caps of the count options, checked with the config, before anything is allocated
# (docs/reference/config.md): each is far beyond any use and far below what would exhaust memory
MAX_JOBS = 1024  # worker processes, -j (either sign): more cores than any machine this runs on
MAX_RESTARTS = 100_000  # optimize: a restart is seconds; its seeds and results are held together
MAX_POOL = 100_000  # optimize: boards in the hill-climbing pool
MAX_KEEP = 100_000  # optimize: best boards reported and written
MAX_CYCLE = 1_000_000_000  # optimize: moves per cooling cycle
MAX_ITERATIONS = 1_000_000_000_000  # optimize: generations or moves per restart
MAX_PROVE_CHUNK = 1_000_000  # prove: classes per task and part file
MAX_CLASSES = 1_000_000_000  # prove --limit-classes
MAX_TOP = 1_000_000  # analyze --top, --top-words
MAX_OPTIMIZE_SEED = 2**63 - 1  # optimize: its results record the seed in an int64 column
# design-dice and what-if (docs/guides/dice.md); here, not in pipeline.design, so the command
# line checks them without importing the designer (and the kernels it imports)
MAX_BUDGET = 10_000_000_000  # design-dice: boards the search may solve (--budget)
MAX_BATCH = 1_000_000  # design-dice: boards a batch (--batch; its draws are capped in cells too)
MAX_BATCHES = 1_000  # design-dice: batches a candidate is tested on (--max-batches)
MAX_VALIDATE = 10_000_000  # design-dice: boards of the final validation (four numbers a board kept)
MAX_SAME = 1_000  # design-dice --max-same, --min-vowels, --max-rare: more than any die has faces
MAX_WHATIF_BOARDS = 10_000_000  # what-if --count: both runs' scores and boards are compared in memory


def check_count(name: str, value: int | None, least: int, most: int, what: str) -> None:
    """ConfigError (exit 2, one line) unless ``value`` (None: unset) is from ``least`` to
    ``most``; ``what`` names the command (``optimize``)."""
    if value is None or least <= value <= most:
        return
    shown = f"{value:,}" if len(str(value)) <= 40 else f"a {len(str(value))}-digit number"
    if value < least:
        raise ConfigError(f"{what}: {name} must be >= {least:,}, got {shown}")
    raise ConfigError(f"{what}: {name}: at most {most:,}, got {shown}")


def check_jobs(n_jobs: int | None, what: str) -> None:
    """Worker processes: -1 (all cores) or any count up to ``MAX_JOBS`` either way, never 0."""
    if n_jobs is not None and (n_jobs == 0 or abs(n_jobs) > MAX_JOBS):
        shown = f"{n_jobs:,}" if len(str(n_jobs)) <= 40 else f"a {len(str(n_jobs))}-digit number"
        raise ConfigError(f"{what}: n_jobs: expected -1 (all cores) or 1 to {MAX_JOBS:,}, got {shown}")


# ---------------------------------------------------------------- what a key takes
#
# A field's type says what its key takes: bool, int, float, str (non-empty), a Literal of
# choices, or tuple[str, ...] (a list of strings, or one string); ``X | None`` takes what X
# takes. ``Annotated`` adds a range (:class:`Bounds`) or a last check and conversion
# (:class:`Convert`). :func:`check_value` reads them for every section of every command.

Check = Callable[[Any], Any]  # a value in, the value to keep out, or Invalid


class Invalid(Exception):
    """A value its key does not take: the message is "expected <expected>, got <value>", or
    ``problem`` when given (raised by the checks below and by :class:`Convert` functions)."""

    def __init__(self, expected: str = "", *, problem: str | None = None):
        super().__init__(problem or expected)
        self.expected = expected
        self.problem = problem


@dataclass(frozen=True)
class Bounds:
    """An integer's range (either end may be open)."""

    minimum: int | None = None
    maximum: int | None = None

    def __call__(self, value: int) -> int:
        if self.minimum is not None and value < self.minimum:
            raise Invalid(f"an integer >= {self.minimum}")
        if self.maximum is not None and value > self.maximum:
            shown = f"{value:,}" if len(str(value)) <= 40 else f"a {len(str(value))}-digit number"
            raise Invalid(problem=f"at most {self.maximum:,}, got {shown}")
        return value


@dataclass(frozen=True)
class Convert:
    """A check after the type's own: ``fn(value)`` returns the value to keep or raises Invalid.
    On a type the checker does not know (a Mapping), ``fn`` does the whole check."""

    fn: Callable[[Any], Any]

    def __call__(self, value: Any) -> Any:
        return self.fn(value)


def _unknown(kind: str, name: str, known: Sequence[str], origin: str | None) -> ConfigError:
    close = difflib.get_close_matches(name, known, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return ConfigError(f"unknown {kind} {name!r}{hint} (known: {', '.join(known)})", source=origin)


def check_sections(
    raw: Mapping[str, Any], sections: Mapping[str, type], origin: str | None
) -> dict[str, dict[str, Any]]:
    """Reject unknown sections and keys (with a suggestion) and check every value against its
    section's dataclass field (:func:`check_value`)."""
    out: dict[str, dict[str, Any]] = {}
    for section, values in raw.items():
        if section not in sections:
            raise _unknown("section", f"[{section}]", [f"[{s}]" for s in sections], origin)
        if not isinstance(values, Mapping):
            raise ConfigError(f"[{section}] must be a table", source=origin)
        known = [f.name for f in dataclasses.fields(sections[section])]
        checked: dict[str, Any] = {}
        for key, value in values.items():
            if key not in known:
                raise _unknown(f"key in [{section}]", key, known, origin)
            if value is None:  # not from TOML (it has no null): a recorded config's unset value
                continue
            checked[key] = check_value(sections[section], key, value, f"[{section}] {key}", origin)
        out[section] = checked
    return out


def check_value(cls: type, key: str, value: Any, where: str, origin: str | None = None) -> Any:
    """``value`` checked against the type of field ``key`` of the dataclass ``cls`` (see "what
    a key takes" above) and returned as the field keeps it; else ConfigError ``where: ...``.

    >>> from pipeline.config import BoardsConfig, RunSettings
    >>> check_value(RunSettings, "backend", "loky", "[run] backend")
    'loky'
    >>> check_value(BoardsConfig, "shape", "4X4", "[boards] shape")
    '4x4'
    """
    kind, checks = _field_checks(cls)[key]
    try:
        checked = kind(value) if kind is not None else value
        for check in checks:
            checked = check(checked)
    except Invalid as exc:
        problem = exc.problem or f"expected {exc.expected}, got {value!r}"
        raise ConfigError(f"{where}: {problem}", source=origin) from None
    return checked


@functools.cache
def _field_checks(cls: type) -> dict[str, tuple[Check | None, tuple[Check, ...]]]:
    """For each field of ``cls``: the check of its type (None: a Convert does it all) and the
    checks from its ``Annotated`` metadata, run in that order."""
    out: dict[str, tuple[Check | None, tuple[Check, ...]]] = {}
    for name, hint in typing.get_type_hints(cls, include_extras=True).items():
        checks: tuple[Check, ...] = ()
        if typing.get_origin(hint) is Annotated:
            hint, *meta = typing.get_args(hint)
            checks = tuple(meta)
        if typing.get_origin(hint) in (typing.Union, types.UnionType):  # X | None takes what X takes
            hint = next(h for h in typing.get_args(hint) if h is not type(None))
        kind: Check | None
        if typing.get_origin(hint) is Literal:
            kind, checks = _text, (_one_of(typing.get_args(hint)), *checks)
        else:
            kind = _KINDS.get(typing.get_origin(hint) or hint)
        if kind is None and not checks:
            raise TypeError(f"{cls.__name__}.{name}: no check for the type {hint!r}")
        out[name] = (kind, checks)
    return out


def _boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise Invalid("true or false")
    return value


def _integer(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise Invalid("an integer")
    return value


def _number(value: Any) -> float:
    """An int is taken for a float."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise Invalid("a number")
    return float(value)


def _text(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise Invalid("a non-empty string")
    return value


def _strings(value: Any) -> tuple[str, ...]:
    """A list of strings, or one string for a list of one."""
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(x, str) and x for x in items):
        raise Invalid("a list of non-empty strings")
    return tuple(items)


def _one_of(choices: Sequence[str]) -> Check:
    def check(value: str) -> str:
        if value not in choices:
            raise Invalid("one of " + ", ".join(repr(c) for c in choices))
        return value

    return check


_KINDS: dict[Any, Check] = {bool: _boolean, int: _integer, float: _number, str: _text, tuple: _strings}
