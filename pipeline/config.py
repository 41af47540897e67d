"""The typed run config: load a TOML file, apply overrides, validate, resolve defaults.

A config has four sections, nested exactly like ``configs/default.toml``::

    [boards]   source ("generate" | "ingest"), dice, count, seed, files, shape, chunk_size,
               faces, column, words
    [lexicon]  path (a word-list file or tanglet:<lang>)
    [rules]    name (boggle | big | superbig), min_length, scores, revisit
    [run]      out, n_jobs, backend (loky | threading | dask), scheduler, scheduler_file

Unknown sections and keys are errors naming the key (with a suggestion for a typo). Values from
the command line override the file (options and ``--set``). :meth:`RunConfig.resolve` fills in
every default that depends on other values (the shape from the dice set, the rule preset from
the shape, the dictionary from ``$BOGGLE_DICTIONARY``), and :meth:`RunConfig.to_dict` gives the
resolved config that every output records. Relative paths are taken from the current directory
(``[run] out`` is recorded as an absolute path; input and lexicon paths as written).

Other commands read their own section through the same machinery (:func:`load_section`):
``boggle optimize`` reads ``[optimize]`` into :class:`pipeline.optimize.OptimizeConfig`.
"""

from __future__ import annotations

import dataclasses
import difflib
import glob
import os
import tomllib
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from pipeline.errors import BoggleError, ConfigError
from pipeline.generate import (
    DEFAULT_CHUNK_SIZE,
    MAX_CHUNK_SIZE,
    MAX_CHUNKS,
    MAX_COUNT,
    check_chunk_cells,
    generator_shape,
)
from pipeline.store import MAX_PART

T = TypeVar("T")
Source = Literal["generate", "ingest"]
Backend = Literal["loky", "threading", "dask"]  # the joblib backends of pipeline.backends
SOURCES: tuple[Source, ...] = typing.get_args(Source)
BACKENDS: tuple[Backend, ...] = typing.get_args(Backend)
if MAX_CHUNKS != MAX_PART:  # generate cannot import the store (a lower layer), so check here
    raise ImportError("pipeline.generate.MAX_CHUNKS must equal pipeline.store.MAX_PART")
MAX_SEED = 2**128 - 1  # numpy.random.SeedSequence entropy; larger seeds are just wider


@dataclass(frozen=True)
class BoardsConfig:
    """Where boards come from. ``dice``/``count``/``seed`` are for generate; ``files``,
    ``faces`` and ``column`` for ingest; ``shape`` and ``chunk_size`` for both."""

    source: Source = "generate"
    dice: str = "new"
    count: int = 100_000
    seed: int = 0
    files: tuple[str, ...] = ()
    shape: str | None = None
    chunk_size: int = DEFAULT_CHUNK_SIZE
    faces: tuple[str, ...] = ()
    column: str = "board"
    # False: the parts hold no ``words`` column (scores only); every other column is the same
    words: bool = True


@dataclass(frozen=True)
class LexiconConfig:
    path: str | None = None


@dataclass(frozen=True)
class RulesConfig:
    name: str | None = None
    min_length: int | None = None
    scores: Mapping[int, int] | None = None
    revisit: bool | None = None


@dataclass(frozen=True)
class RunSettings:
    """How to run (not what): changing these never changes the data."""

    out: str = "runs/default"
    n_jobs: int = -1
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
        from pipeline.tanglet import TANGLET_PREFIX

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
            name=rule_set.name,
            min_length=rule_set.min_length,
            scores=dict(rule_set.scores),
            revisit=rule_set.revisit,
        )
        spec = utf8_path(self.lexicon.path or default_dictionary(), "[lexicon] path", where)
        if not spec.startswith(TANGLET_PREFIX):
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
        if self.boards.source == "generate":
            unused: tuple[str, ...] = ("files", "faces", "column")
        else:
            unused = ("dice", "count", "seed")
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
) -> RunConfig:
    """Load a TOML config (or start from the defaults when ``path`` is None), apply
    ``assignments`` (``"boards.count=1000"`` strings, TOML values) and then ``overrides``
    (``{"boards.count": 1000}``; None values are ignored), validate and resolve.

    >>> load_config("configs/smoke.toml", {"run.out": "/tmp/smoke"}).boards.count  # doctest: +SKIP
    """
    raw, origin = read_with_overrides(path, overrides, assignments)
    return config_from_dict(raw, origin=origin).resolve()


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
    with a hint. Values are checked against the field types (str, int, float, bool, or None
    where the type allows it); ``cls`` checks ranges and choices, raising ConfigError.

    >>> load_section("configs/optimize-4x4.toml", "optimize", OptimizeConfig).restarts  # doctest: +SKIP
    10
    """
    raw, origin = read_with_overrides(path, overrides, assignments)
    hints = typing.get_type_hints(cls)

    def check(section: str, key: str, value: Any, origin: str | None) -> Any:
        return _check_typed(section, key, value, hints[key], origin)

    values = _check_sections(raw, {section: cls}, check, origin).get(section, {})
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


def read_toml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise ConfigError(f"config file not found: {path}")
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"not valid TOML: {exc}", source=str(path)) from None
    except UnicodeDecodeError:
        raise ConfigError("not UTF-8 text", source=str(path)) from None


def parse_assignment(text: str) -> tuple[str, Any]:
    """``"section.key=value"`` -> (key, value); the value is read as TOML, else as a string."""
    if "=" not in text:
        raise ConfigError(f"--set {text!r}: expected section.key=value, e.g. boards.count=1000")
    key, value = (s.strip() for s in text.split("=", 1))
    try:
        parsed = tomllib.loads(f"v = {value}")["v"]
    except tomllib.TOMLDecodeError:
        parsed = value
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
    checked = _check_sections(raw, _SECTIONS, _check, origin)
    sections = {name: _SECTIONS[name](**values) for name, values in checked.items()}
    return RunConfig(**sections, origin=origin)


def _check_sections(
    raw: Mapping[str, Any],
    sections: Mapping[str, type],
    check: Callable[[str, str, Any, str | None], Any],
    origin: str | None,
) -> dict[str, dict[str, Any]]:
    """Reject unknown sections and keys (with a suggestion) and ``check`` every value."""
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
            checked[key] = check(section, key, value, origin)
        out[section] = checked
    return out


def _check_typed(section: str, key: str, value: Any, hint: Any, origin: str | None) -> Any:
    """Check a value against a dataclass field's type: str, int, float or bool (or a union of
    one of them with None). An int is accepted for a float."""
    kinds = [k for k in typing.get_args(hint) if k is not type(None)] or [hint]
    kind = kinds[0]
    if typing.get_origin(hint) is Literal or typing.get_origin(kind) is Literal:
        kind = str  # one of some strings: the dataclass checks which (its message names them)

    def fail(expected: str) -> ConfigError:
        return ConfigError(f"[{section}] {key}: expected {expected}, got {value!r}", source=origin)

    if kind is bool:
        if not isinstance(value, bool):
            raise fail("true or false")
        return value
    if kind is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise fail("an integer")
        return value
    if kind is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise fail("a number")
        return float(value)
    if kind is str:
        if not isinstance(value, str) or not value.strip():
            raise fail("a non-empty string")
        return value
    raise AssertionError(f"unhandled field type {hint!r} for [{section}] {key}")  # pragma: no cover


@dataclass(frozen=True)
class _Value:
    """One value of a config being checked: ``[section] key``, the value, and the file it came
    from; the checks return it in the dataclass's type or raise a one-line ConfigError."""

    where: str
    value: Any
    origin: str | None

    def fail(self, expected: str) -> ConfigError:
        return ConfigError(f"{self.where}: expected {expected}, got {self.value!r}", source=self.origin)

    def integer(self, minimum: int | None = None, maximum: int | None = None) -> int:
        value = self.value
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail("an integer")
        if minimum is not None and value < minimum:
            raise self.fail(f"an integer >= {minimum}")
        if maximum is not None and value > maximum:
            shown = f"{value:,}" if len(str(value)) <= 40 else f"a {len(str(value))}-digit number"
            raise ConfigError(f"{self.where}: at most {maximum:,}, got {shown}", source=self.origin)
        return value

    def text(self, choices: Sequence[str] | None = None) -> str:
        if not isinstance(self.value, str) or not self.value.strip():
            raise self.fail("a non-empty string")
        if choices is not None and self.value not in choices:
            raise self.fail("one of " + ", ".join(repr(c) for c in choices))
        return self.value

    def strings(self) -> tuple[str, ...]:
        items = [self.value] if isinstance(self.value, str) else self.value
        if not isinstance(items, list) or not all(isinstance(x, str) and x for x in items):
            raise self.fail("a list of non-empty strings")
        return tuple(items)

    def boolean(self) -> bool:
        if not isinstance(self.value, bool):
            raise self.fail("true or false")
        return self.value

    def shape(self) -> str:
        from pipeline.boards import check_cells, format_shape, parse_shape

        try:
            shape = parse_shape(self.text())
        except BoggleError:
            raise self.fail('a shape RxC, e.g. "4x4"') from None
        try:
            check_cells(*shape)
        except BoggleError as exc:
            raise ConfigError(f"{self.where}: {exc.message}", source=self.origin) from None
        return format_shape(*shape)

    def rules_name(self) -> str:
        from pipeline.rules import PRESETS

        return self.text(list(PRESETS))

    def scores(self) -> dict[int, int]:
        if not isinstance(self.value, Mapping) or not self.value:
            raise self.fail("a table of length = points, e.g. {3 = 1, 4 = 1, 5 = 2}")
        out: dict[int, int] = {}
        for k, v in self.value.items():
            bad_points = isinstance(v, bool) or not isinstance(v, int) or v < 0
            if not str(k).isdigit() or int(k) < 1 or bad_points:
                raise ConfigError(
                    f"{self.where}: {k!r} = {v!r}: lengths and points must be whole numbers "
                    "(length >= 1, points >= 0)",
                    source=self.origin,
                )
            out[int(k)] = v
        return dict(sorted(out.items()))

    def n_jobs(self) -> int:
        n = self.integer()
        if n == 0:
            raise self.fail("a non-zero integer (-1 = all cores)")
        return n


#: How each key of each section is checked (and converted): one line a key. Unknown sections
#: and keys never get here: :func:`_check_sections` refuses them with a "did you mean" hint.
CHECKS: dict[str, dict[str, Callable[[_Value], Any]]] = {
    "boards": {
        "source": lambda v: v.text(SOURCES),
        "dice": _Value.text,
        "count": lambda v: v.integer(1, MAX_COUNT),
        "seed": lambda v: v.integer(0, MAX_SEED),
        "files": _Value.strings,
        "shape": _Value.shape,
        "chunk_size": lambda v: v.integer(1, MAX_CHUNK_SIZE),
        "faces": _Value.strings,
        "column": _Value.text,
        "words": _Value.boolean,
    },
    "lexicon": {"path": _Value.text},
    "rules": {
        "name": _Value.rules_name,
        "min_length": lambda v: v.integer(1),
        "scores": _Value.scores,
        "revisit": _Value.boolean,
    },
    "run": {
        "out": _Value.text,
        "n_jobs": _Value.n_jobs,
        "backend": lambda v: v.text(BACKENDS),
        "scheduler": _Value.text,
        "scheduler_file": _Value.text,
    },
}


def _check(section: str, key: str, value: Any, origin: str | None) -> Any:
    """Type- and range-check one value of a run config (by :data:`CHECKS`)."""
    return CHECKS[section][key](_Value(f"[{section}] {key}", value, origin))


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
