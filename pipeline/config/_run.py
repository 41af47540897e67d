"""The run config's sections (``[boards]``, ``[lexicon]``, ``[rules]``, ``[run]``, ``[expect]``) and
:class:`RunConfig`, which resolves the defaults that depend on other values and gives the
recorded form of a run's config."""

from __future__ import annotations

import dataclasses
import datetime
import os
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pipeline.boards import (
    DEFAULT_CHUNK_SIZE,
    MAX_CHUNK_SIZE,
    MAX_CHUNKS,
    MAX_COUNT,
    check_cells,
    check_chunk_cells,
    format_shape,
    generator_shape,
    parse_shape,
)
from pipeline.config._checks import MAX_JOBS, Bounds, Convert, Invalid
from pipeline.config._expect import ExpectConfig
from pipeline.config._paths import expand_inputs, utf8_path
from pipeline.errors import BoggleError, ConfigError
from pipeline.rules import PRESETS
from pipeline.store import MAX_PART

Source = Literal["generate", "ingest"]
Backend = Literal["loky", "threading", "dask"]
RuleName = Literal["boggle", "big", "superbig"]  # the keys of pipeline.rules.PRESETS
SOURCES: tuple[str, ...] = typing.get_args(Source)
BACKENDS: tuple[str, ...] = typing.get_args(Backend)
if MAX_CHUNKS != MAX_PART:  # generate cannot import the store (a lower layer), so check here
    raise ImportError("pipeline.boards.MAX_CHUNKS must equal pipeline.store.MAX_PART")
if typing.get_args(RuleName) != tuple(PRESETS):
    raise ImportError("pipeline.config.RuleName must list pipeline.rules.PRESETS in order")
MAX_SEED = 2**128 - 1  # numpy.random.SeedSequence entropy; larger seeds are just wider


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


def _placement_text(value: str) -> str:
    """A placement policy in its canonical spelling (``"qu: not inner"`` is ``"qu: corner,
    edge"``), so two spellings of one policy are one run."""
    from pipeline.boards import parse_placement

    try:
        return parse_placement(value).text
    except BoggleError as exc:
        raise Invalid(problem=exc.message) from None


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
    ``faces``, ``column`` and ``mixed_shapes`` for ingest; ``shape`` and ``chunk_size`` for
    both. An ingest run keeps boards of one shape, ``shape`` or else the dice's (4x4 for the
    default dice), and rejects the others; ``mixed_shapes = true`` keeps every shape."""

    source: Source = "generate"
    dice: str = "new"
    count: Annotated[int, Bounds(1, MAX_COUNT)] = 100_000
    seed: Annotated[int, Bounds(0, MAX_SEED)] = 0
    files: tuple[str, ...] = ()
    shape: Annotated[str | None, Convert(_shape_text)] = None  # "RxC", kept as format_shape writes it
    chunk_size: Annotated[int, Bounds(1, MAX_CHUNK_SIZE)] = DEFAULT_CHUNK_SIZE
    faces: tuple[str, ...] = ()
    column: str = "board"
    # ingest: keep boards of every shape (each scored with the run's one rule set); false: only
    # boards of the run's shape ([boards] shape, else the dice's), the others rejected
    mixed_shapes: bool = False
    # False: the parts hold no ``words`` column (scores only); every other column is the same
    words: bool = True
    # the schedule's date the seed was derived from (``seed = "date"``), YYYY-MM-DD; None: not
    # derived (then left out of the identity, so runs keep the identity they had before)
    seed_date: Annotated[str | None, Convert(_iso_date)] = None
    # where the dice may lie (pipeline.boards.parse_placement, e.g. "qu: corner, edge"), kept in
    # its canonical spelling; None: wherever they are rolled (left out of the identity, so runs
    # without a policy keep the identity, and the boards, they had before)
    placement: Annotated[str | None, Convert(_placement_text)] = None


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
    expect: ExpectConfig = field(default_factory=ExpectConfig)
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
        from pipeline.lexicon import default_dictionary, is_named

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
            if b.placement is not None:
                _check_placement(b.placement, b.dice, rows, cols, where)
            boards = dataclasses.replace(b, shape=format_shape(rows, cols), files=(), faces=())
        else:
            if not b.files:
                raise ConfigError('[boards] files: source = "ingest" needs input files', source=where)
            if b.placement is not None:
                raise ConfigError(
                    "[boards] placement: places rolled dice; ingested boards are read as they are",
                    source=where,
                )
            files = tuple(utf8_path(f, "[boards] files", where) for f in expand_inputs(b.files, where))
            if b.mixed_shapes:
                if b.shape:
                    raise ConfigError(
                        f"[boards] shape = {b.shape!r} and mixed_shapes = true: a run keeps boards of "
                        "one shape, or of every shape; drop one",
                        source=where,
                    )
                boards = dataclasses.replace(b, files=files)
                rows, cols = 4, 4  # the rules' preset when none is named
            else:
                # the run's shape: [boards] shape, else the dice's (what the config rolls)
                rows, cols = parse_shape(b.shape) if b.shape else generator_shape(b.dice, None, where)
                boards = dataclasses.replace(b, files=files, shape=format_shape(rows, cols))
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
        return RunConfig(boards, LexiconConfig(spec), rules, run, self.expect, self.origin)

    def with_expectations(self, texts: Sequence[str], where: str = "--expect") -> RunConfig:
        """This config with the expectations ``texts`` added to ``[expect] checks`` (one
        that does not parse is a ConfigError naming ``where``)."""
        from pipeline.config._expect import parse_expectation

        added = [parse_expectation(t, where).text for t in texts]
        checks = tuple(dict.fromkeys([*self.expect.checks, *added]))
        return dataclasses.replace(self, expect=ExpectConfig(checks))

    def to_dict(self) -> dict[str, Any]:
        """The config as plain data (TOML-like nesting), as recorded in every output."""
        d: dict[str, Any] = {}
        for section in SECTIONS:
            values = dataclasses.asdict(getattr(self, section))
            for k, v in list(values.items()):
                if isinstance(v, tuple):
                    values[k] = list(v)
                elif isinstance(v, Mapping):
                    values[k] = {str(kk): vv for kk, vv in v.items()}
            d[section] = values
        return d

    def data_dict(self) -> dict[str, Any]:
        """The part of the resolved config that decides the data: [run], [expect] and the keys
        the board source does not use are left out, so changing them never invalidates a run.
        ``[boards] words`` is recorded only when false, so a run with word lists has the same
        identity (and byte-identical parts) as one written before the setting existed."""
        d = self.to_dict()
        d.pop("run")
        d.pop("expect")
        if self.boards.words:
            d["boards"].pop("words")
        if self.boards.seed_date is None:
            d["boards"].pop("seed_date")
        if not self.boards.mixed_shapes:
            d["boards"].pop("mixed_shapes")
        if self.boards.placement is None:
            d["boards"].pop("placement")
        if self.boards.source == "generate":
            unused: tuple[str, ...] = ("files", "faces", "column", "mixed_shapes")
        else:
            unused = ("dice", "count", "seed", "seed_date", "placement")
        for k in unused:
            d["boards"].pop(k, None)
        return d


def _check_placement(text: str, dice: str, rows: int, cols: int, where: str | None) -> None:
    """ConfigError unless the dice ``dice`` rolls can follow the placement policy ``text``."""
    from pipeline.boards import GENERATORS, check_placement, load_dice_set, parse_placement

    if dice in GENERATORS:
        raise ConfigError(
            f"[boards] placement: the {dice} generator rolls no dice to place (placement is for dice)",
            source=where,
        )
    try:
        check_placement(parse_placement(text), load_dice_set(dice, rows, cols))
    except BoggleError as exc:
        raise ConfigError(f"[boards] {exc.message}", source=where) from None


SECTIONS: dict[str, type] = {
    "boards": BoardsConfig,
    "lexicon": LexiconConfig,
    "rules": RulesConfig,
    "run": RunSettings,
    "expect": ExpectConfig,
}
