"""What to search for and how: :class:`OptimizeConfig`, the ``[optimize]`` section of a TOML
file (``configs/optimize-4x4.toml``), loaded like a run config and overridden by CLI options."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from pipeline.boards import format_shape, parse_shape
from pipeline.errors import ConfigError

SECTION = "optimize"
Strategy = Literal["hill", "anneal"]
Objective = Literal["points", "words", "subset"]
STRATEGIES: tuple[Strategy, ...] = get_args(Strategy)
OBJECTIVES: tuple[Objective, ...] = get_args(Objective)
# pipeline.config.Backend but dask: restarts run where the process can give them its lexicon
Backend = Literal["loky", "threading"]
BACKENDS: tuple[Backend, ...] = get_args(Backend)
DEFAULT_OUT = "runs/optimize"  # where the CLI writes when neither the file nor --out says


@dataclass(frozen=True)
class OptimizeConfig:
    """``iterations`` counts pool generations (hill) or moves (anneal) per restart; with neither
    ``iterations`` nor ``time_limit`` a restart is one climb (hill) or one cooling cycle
    (anneal). ``target`` stops a restart once reached. ``dictionary`` None: the default one."""

    dictionary: str | None = None
    shape: str = "4x4"
    dice: str | None = None
    rules: str | None = None
    min_length: int | None = None
    strategy: Strategy = "anneal"
    objective: Objective = "points"
    subset: str | None = None
    restarts: int = 4
    seed: int = 0
    iterations: int | None = None
    time_limit: float | None = None
    target: int | None = None
    pool_size: int = 50
    keep: int = 10
    # measured on 4x4 with ENABLE2K: the optimum appears while the temperature is about 50-70;
    # longer, colder cycles only polish local optima (see pipeline.best.optimize._anneal)
    t_start: float = 100.0
    t_end: float = 20.0
    cycle: int = 80_000
    swap_p: float = 0.5
    # how to run, not what: never part of the run's identity
    n_jobs: int | None = None
    backend: Backend = "loky"
    out: str | None = None
    overwrite: bool = False

    def __post_init__(self) -> None:
        def bad(msg: str) -> ConfigError:
            return ConfigError(f"optimize: {msg}")

        if self.strategy not in STRATEGIES:
            raise bad(f"unknown strategy {self.strategy!r}; choose one of {', '.join(STRATEGIES)}")
        if self.objective not in OBJECTIVES:
            raise bad(f"unknown objective {self.objective!r}; choose one of {', '.join(OBJECTIVES)}")
        if (self.objective == "subset") != (self.subset is not None):
            raise bad("--objective subset needs --subset FILE, and --subset needs --objective subset")
        if self.backend not in BACKENDS:
            raise bad(f"unknown backend {self.backend!r}; choose one of {', '.join(BACKENDS)}")
        from pipeline.config import (
            MAX_CYCLE,
            MAX_ITERATIONS,
            MAX_KEEP,
            MAX_OPTIMIZE_SEED,
            MAX_POOL,
            MAX_RESTARTS,
            check_count,
            check_jobs,
        )

        # caps checked before anything is allocated (a trillion restarts grew memory unbounded)
        for name, most in (
            ("restarts", MAX_RESTARTS),
            ("pool_size", MAX_POOL),
            ("keep", MAX_KEEP),
            ("cycle", MAX_CYCLE),
            ("iterations", MAX_ITERATIONS),
        ):
            check_count(name, getattr(self, name), 1, most, "optimize")
        check_jobs(self.n_jobs, "optimize")
        if self.time_limit is not None and not self.time_limit > 0:
            raise bad(f"time limit must be > 0 seconds, got {self.time_limit}")
        if self.seed < 0:
            raise bad(f"seed must be >= 0, got {self.seed}")
        check_count("seed", self.seed, 0, MAX_OPTIMIZE_SEED, "optimize")
        if self.min_length is not None and self.min_length < 1:
            raise bad(f"min_length must be >= 1, got {self.min_length}")
        if not (0 < self.t_end <= self.t_start) or not math.isfinite(self.t_start):
            raise bad(f"temperatures need 0 < t_end <= t_start, got {self.t_start} -> {self.t_end}")
        if not 0 <= self.swap_p <= 1:
            raise bad(f"swap probability must be in [0, 1], got {self.swap_p}")
        parse_shape(self.shape)

    @property
    def rows_cols(self) -> tuple[int, int]:
        return parse_shape(self.shape)

    def resolve(self) -> OptimizeConfig:
        """Fill in the dictionary and rule preset defaults and make paths absolute."""
        from pipeline.lexicon import default_dictionary, is_named
        from pipeline.rules import resolve_rules

        rows, cols = self.rows_cols
        from pipeline.urls import resolve_out

        out = resolve_out(self.out, "--out", None) if self.out else None
        dictionary = self.dictionary or default_dictionary()
        if not is_named(dictionary):
            dictionary = str(Path(dictionary).expanduser())
        return dataclasses.replace(
            self,
            shape=format_shape(rows, cols),
            rules=resolve_rules(self.rules, (rows, cols)).name,
            dictionary=dictionary,
            out=out,
        )

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def identity(self) -> dict[str, Any]:
        """The settings that decide the result (not n_jobs, backend, out, overwrite)."""
        d = self.to_dict()
        for k in ("n_jobs", "backend", "out", "overwrite"):
            d.pop(k)
        return d


def load_optimize_config(
    path: str | Path | None,
    overrides: Mapping[str, Any] | None = None,
    assignments: Sequence[str] = (),
) -> OptimizeConfig:
    """The ``[optimize]`` section of ``path`` (defaults when None), then ``--set`` style
    ``assignments`` (``"optimize.seed=3"``), then ``overrides`` (``{"optimize.seed": 3}``,
    None ignored). Unknown keys are ConfigErrors with a suggestion, as for ``boggle run``."""
    from pipeline.config import load_section

    return load_section(path, SECTION, OptimizeConfig, overrides, assignments)


def load_command_config(
    path: str | Path | None,
    overrides: Mapping[str, Any] | None = None,
    assignments: Sequence[str] = (),
) -> OptimizeConfig:
    """``boggle optimize``'s settings: :func:`load_optimize_config`, then, where nothing set
    them, output to :data:`DEFAULT_OUT` on every core (the library default writes nothing)."""
    cfg = load_optimize_config(path, overrides, assignments)
    return dataclasses.replace(
        cfg,
        out=DEFAULT_OUT if cfg.out is None else cfg.out,
        n_jobs=-1 if cfg.n_jobs is None else cfg.n_jobs,
    )
