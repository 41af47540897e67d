"""The typed run config: load a TOML file, apply overrides, validate, resolve defaults.

A config has four sections, nested exactly like ``configs/default.toml``::

    [boards]   source ("generate" | "ingest"), dice, count, seed, seed_date, files, shape,
               chunk_size, faces, column, words
    [lexicon]  path (a word-list file or tanglet:<lang>)
    [rules]    name (boggle | big | superbig), min_length, scores, revisit
    [run]      out, n_jobs, backend (loky | threading | dask), scheduler, scheduler_file

Unknown sections and keys are errors naming the key (with a suggestion for a typo). Values from
the command line override the file (options and ``--set``). :meth:`RunConfig.resolve` fills in
every default that depends on other values (the shape from the dice set, the rule preset from
the shape, the dictionary from ``$BOGGLE_DICTIONARY``), and :meth:`RunConfig.to_dict` gives the
resolved config that every output records. Relative paths are taken from the current directory
(``[run] out`` is recorded as an absolute path; input and lexicon paths as written).

``seed = "date"`` derives the seed from the schedule's date (``load_config(..., day=...)``,
else today; :mod:`pipeline.schedule`), recorded as ``seed`` and ``seed_date``; ``[run] out``
may hold placeholders (``runs/nightly/{date}``), filled in when the config is loaded.

Other commands read their own section through the same machinery (:func:`load_section`):
``boggle optimize`` reads ``[optimize]`` into :class:`pipeline.optimize.OptimizeConfig`.

Validation is declarative: each section is a frozen dataclass whose field types say what a key
takes (``Literal`` choices, ``Annotated`` ranges and conversions), read by one small checker
(:func:`check_value`). msgspec and pydantic v2 were tried and not taken: both reject an unknown
key without a "did you mean" hint ("Object contains unknown field `cuont`", "Extra inputs are
not permitted"), word other errors their own way ("Invalid enum value 'magic'" without the
choices, "Input should be a valid integer"), and pydantic's strict mode (needed to refuse
``true`` for an integer) refuses a TOML list for a tuple field. A wrapper rewriting every error
type would be as long as this checker, the domain checks (shapes, score tables, limits written
``1,000,000``) stay custom either way, and either library would be a new dependency.
"""

from __future__ import annotations

import dataclasses
import datetime
import difflib
import functools
import glob
import os
import tomllib
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pipeline.boards import check_cells, format_shape, parse_shape
from pipeline.errors import BoggleError, ConfigError, quote
from pipeline.generate import (
    DEFAULT_CHUNK_SIZE,
    MAX_CHUNK_SIZE,
    MAX_CHUNKS,
    MAX_COUNT,
    check_chunk_cells,
    generator_shape,
)
from pipeline.rules import PRESETS
from pipeline.schedule import DATE_SEED, date_seed, expand_pattern, has_placeholders
from pipeline.store import MAX_PART

T = TypeVar("T")
Source = Literal["generate", "ingest"]
Backend = Literal["loky", "threading", "dask"]
RuleName = Literal["boggle", "big", "superbig"]  # the keys of pipeline.rules.PRESETS
SOURCES: tuple[str, ...] = typing.get_args(Source)
BACKENDS: tuple[str, ...] = typing.get_args(Backend)
if MAX_CHUNKS != MAX_PART:  # generate cannot import the store (a lower layer), so check here
    raise ImportError("pipeline.generate.MAX_CHUNKS must equal pipeline.store.MAX_PART")
if typing.get_args(RuleName) != tuple(PRESETS):
    raise ImportError("pipeline.config.RuleName must list pipeline.rules.PRESETS in order")
MAX_SEED = 2**128 - 1  # numpy.random.SeedSequence entropy; larger seeds are just wider
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


def _shape_text(value: str) -> str:
    try:
        shape = parse_shape(value)
    except BoggleError:
        raise Invalid('a shape RxC, e.g. "4x4"') from None
    try:
        check_cells(*shape)
    except BoggleError as exc:
        raise Invalid(problem=exc.message) from None
    return format_shape(*shape)


def _score_table(value: Any) -> dict[int, int]:
    if not isinstance(value, Mapping) or not value:
        raise Invalid("a table of length = points, e.g. {3 = 1, 4 = 1, 5 = 2}")
    out: dict[int, int] = {}
    for k, v in value.items():
        bad_points = isinstance(v, bool) or not isinstance(v, int) or v < 0
        if not str(k).isdigit() or int(k) < 1 or bad_points:
            raise Invalid(
                problem=f"{k!r} = {v!r}: lengths and points must be whole numbers (length >= 1, points >= 0)"
            )
        out[int(k)] = v
    return dict(sorted(out.items()))


def _iso_date(value: str) -> str:
    try:
        if len(value) != 10:
            raise ValueError
        datetime.date.fromisoformat(value)
    except ValueError:
        raise Invalid("a date YYYY-MM-DD") from None
    return value


def _non_zero(value: int) -> int:
    if value == 0:
        raise Invalid("a non-zero integer (-1 = all cores)")
    return value


@dataclass(frozen=True)
class BoardsConfig:
    """Where boards come from. ``dice``/``count``/``seed`` are for generate; ``files``,
    ``faces`` and ``column`` for ingest; ``shape`` and ``chunk_size`` for both."""

    source: Source = "generate"
    dice: str = "new"
    count: Annotated[int, Bounds(1, MAX_COUNT)] = 100_000
    seed: Annotated[int, Bounds(0, MAX_SEED)] = 0
    files: tuple[str, ...] = ()
    shape: Annotated[str | None, Convert(_shape_text)] = None  # "RxC", kept as format_shape writes it
    chunk_size: Annotated[int, Bounds(1, MAX_CHUNK_SIZE)] = DEFAULT_CHUNK_SIZE
    faces: tuple[str, ...] = ()
    column: str = "board"
    # False: the parts hold no ``words`` column (scores only); every other column is the same
    words: bool = True
    # the schedule's date the seed was derived from (``seed = "date"``), YYYY-MM-DD; None: not
    # derived (then left out of the identity, so runs keep the identity they had before)
    seed_date: Annotated[str | None, Convert(_iso_date)] = None


@dataclass(frozen=True)
class LexiconConfig:
    path: str | None = None


@dataclass(frozen=True)
class RulesConfig:
    name: RuleName | None = None
    min_length: Annotated[int | None, Bounds(1)] = None
    scores: Annotated[Mapping[int, int] | None, Convert(_score_table)] = None  # sorted by length
    revisit: bool | None = None


@dataclass(frozen=True)
class RunSettings:
    """How to run (not what): changing these never changes the data."""

    out: str = "runs/default"
    n_jobs: Annotated[int, Convert(_non_zero), Bounds(-MAX_JOBS, MAX_JOBS)] = -1
    backend: Backend = "loky"
    scheduler: str | None = None
    scheduler_file: str | None = None  # dask: a scheduler file (`dask scheduler --scheduler-file`)


@dataclass(frozen=True)
class RunConfig:
    boards: BoardsConfig = field(default_factory=BoardsConfig)
    lexicon: LexiconConfig = field(default_factory=LexiconConfig)
    rules: RulesConfig = field(default_factory=RulesConfig)
    run: RunSettings = field(default_factory=RunSettings)
    origin: str | None = None  # the file it was loaded from (for messages), not recorded

    # ------------------------------------------------------------ derived values

    @property
    def shape(self) -> tuple[int, int] | None:
        from pipeline.boards import parse_shape

        return parse_shape(self.boards.shape) if self.boards.shape else None

    def rule_set(self, shape: tuple[int, int] | None = None) -> Any:
        """The :class:`pipeline.rules.Rules` this config asks for (resolve first, or pass the
        board shape whose preset applies when no name is set)."""
        from pipeline.rules import resolve_rules

        r = self.rules
        return resolve_rules(r.name, shape, min_length=r.min_length, scores=r.scores, revisit=r.revisit)

    def resolve(self) -> RunConfig:
        """Fill in every default that depends on other values; ``out`` becomes absolute.

        Raises ConfigError (or the dice/rules errors) for values that do not fit together.
        """
        from pipeline.boards import format_shape, parse_shape
        from pipeline.lexicon import default_dictionary
        from pipeline.wordlists import is_named

        b = self.boards
        where = self.origin
        if b.source == "generate":
            n_chunks = -(-b.count // b.chunk_size)
            if n_chunks > MAX_CHUNKS:
                raise ConfigError(
                    f"[boards] count: {b.count:,} boards in chunks of {b.chunk_size:,} make {n_chunks:,} "
                    f"part files, more than {MAX_CHUNKS:,}; raise [boards] chunk_size",
                    source=where,
                )
            rows, cols = generator_shape(b.dice, b.shape, where)
            check_chunk_cells(b.chunk_size, rows, cols, where)
            boards = dataclasses.replace(b, shape=format_shape(rows, cols), files=(), faces=())
        else:
            if not b.files:
                raise ConfigError('[boards] files: source = "ingest" needs input files', source=where)
            files = tuple(utf8_path(f, "[boards] files", where) for f in expand_inputs(b.files, where))
            boards = dataclasses.replace(b, files=files)
            rows, cols = parse_shape(b.shape) if b.shape else (4, 4)
        rule_set = self.rule_set((rows, cols))
        rules = RulesConfig(
            name=typing.cast(RuleName, rule_set.name),
            min_length=rule_set.min_length,
            scores=dict(rule_set.scores),
            revisit=rule_set.revisit,
        )
        spec = utf8_path(self.lexicon.path or default_dictionary(), "[lexicon] path", where)
        if not is_named(spec):
            spec = os.path.expanduser(spec)
        from pipeline.urls import resolve_out

        out = utf8_path(resolve_out(self.run.out, "[run] out", where), "[run] out", where)
        run = dataclasses.replace(self.run, out=out)
        return RunConfig(boards, LexiconConfig(spec), rules, run, self.origin)

    def to_dict(self) -> dict[str, Any]:
        """The config as plain data (TOML-like nesting), as recorded in every output."""
        d: dict[str, Any] = {}
        for section in ("boards", "lexicon", "rules", "run"):
            values = dataclasses.asdict(getattr(self, section))
            for k, v in list(values.items()):
                if isinstance(v, tuple):
                    values[k] = list(v)
                elif isinstance(v, Mapping):
                    values[k] = {str(kk): vv for kk, vv in v.items()}
            d[section] = values
        return d

    def data_dict(self) -> dict[str, Any]:
        """The part of the resolved config that decides the data: [run] and the keys the
        board source does not use are left out, so changing them never invalidates a run.
        ``[boards] words`` is recorded only when false, so a run with word lists has the same
        identity (and byte-identical parts) as one written before the setting existed."""
        d = self.to_dict()
        d.pop("run")
        if self.boards.words:
            d["boards"].pop("words")
        if self.boards.seed_date is None:
            d["boards"].pop("seed_date")
        if self.boards.source == "generate":
            unused: tuple[str, ...] = ("files", "faces", "column")
        else:
            unused = ("dice", "count", "seed", "seed_date")
        for k in unused:
            d["boards"].pop(k, None)
        return d


_SECTIONS: dict[str, type] = {
    "boards": BoardsConfig,
    "lexicon": LexiconConfig,
    "rules": RulesConfig,
    "run": RunSettings,
}


# ---------------------------------------------------------------- loading


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
    out = raw.get("run", {}).get("out") if isinstance(raw.get("run"), Mapping) else None
    if isinstance(out, str) and has_placeholders(out):
        try:
            raw["run"]["out"] = expand_pattern(out, when, path, "[run] out")
        except ConfigError as exc:
            raise ConfigError(exc.message, source=origin) from None
    names = option_names or {}
    for key, value in (overrides or {}).items():
        if value is None:
            continue
        if key in names and not (key == "boards.seed" and value == DATE_SEED):
            section, name = key.split(".", 1)
            check_value(_SECTIONS[section], name, value, names[key])
            if key == "run.out" and isinstance(value, str):
                from pipeline.urls import check_url, is_url

                if is_url(value):  # a URL refused (credentials in it...) is the option's, not the file's
                    check_url(value, names[key])
        _set_dotted(raw, key, value, origin)
    _seed_from_date(raw, when, origin)
    return config_from_dict(raw, origin=origin).resolve()


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
    text = boards.get("seed_date")
    if not isinstance(text, str):
        return  # absent, or a wrong type that the checks name
    try:
        derived = date_seed(datetime.date.fromisoformat(text)) if len(text) == 10 else None
    except ValueError:
        derived = None
    if derived is None:
        return  # the checks name the bad date
    if seed is None:
        boards["seed"] = derived
    elif seed != derived:
        raise ConfigError(
            f"[boards] seed {seed!r} does not derive from seed_date {text!r} (that gives {derived}); "
            'drop one, or write seed = "date"',
            source=origin,
        )


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
    values = _check_sections(raw, {section: cls}, origin).get(section, {})
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


def _unknown(kind: str, name: str, known: Sequence[str], origin: str | None) -> ConfigError:
    close = difflib.get_close_matches(name, known, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return ConfigError(f"unknown {kind} {name!r}{hint} (known: {', '.join(known)})", source=origin)


def config_from_dict(raw: Mapping[str, Any], *, origin: str | None = None) -> RunConfig:
    """Validate a parsed TOML document (types, ranges, unknown keys) into a RunConfig."""
    checked = _check_sections(raw, _SECTIONS, origin)
    sections = {name: _SECTIONS[name](**values) for name, values in checked.items()}
    return RunConfig(**sections, origin=origin)


def _check_sections(
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


# ---------------------------------------------------------------- resolving helpers


def shown_path(path: str) -> str:
    """A path as text that any terminal, log or JSON file takes: bytes of a file name that are
    not UTF-8 (Python keeps them as surrogates) become ``\\xNN``."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def utf8_path(path: str, key: str, where: str | None) -> str:
    """``path`` if it is valid UTF-8, else ConfigError: runs record their paths in JSON and in
    Parquet's UTF-8 columns, which cannot hold such a name."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise ConfigError(
            f"{key}: '{shown_path(path)}' is not a UTF-8 name; rename it (a run records its paths as UTF-8)",
            source=where,
        ) from None
    return path


def expand_inputs(files: Sequence[str], where: str | None = None) -> list[str]:
    """Input paths with glob patterns (``*``, ``?``, ``[``) expanded in sorted order. Paths
    stay as written (relative to the current directory), since they name each board's source."""
    out: list[str] = []
    from pipeline.urls import check_url, is_url

    for f in files:
        if is_url(f):  # read through fsspec (pipeline.ingest.local_input); no globbing
            try:
                out.append(check_url(f, "[boards] files"))
            except ConfigError as exc:
                raise ConfigError(exc.message, source=where) from None
            continue
        path = os.path.expanduser(f)
        if any(ch in path for ch in "*?["):
            matches = sorted(glob.glob(path))
            if not matches:
                raise ConfigError(f"[boards] files: no file matches {f!r}", source=where)
            out.extend(matches)
        else:
            out.append(path)
    return out
