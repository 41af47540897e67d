"""What a dice design is asked to do: the budget, the objective (``band``, ``bad``, ``mean``), the
search settings (:class:`DesignConfig`, validated) and the moves it may make on a dice set
(:func:`propose`: swap two faces, or replace one when faces are free).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from pipeline.boards import BLANK, QU, DiceSet
from pipeline.config import MAX_BATCH, MAX_BATCHES, MAX_BUDGET, MAX_SAME, MAX_VALIDATE
from pipeline.design._constraints import DieConstraints
from pipeline.errors import ConfigError, quote
from pipeline.lexicon import CompiledLexicon

_BUDGET = re.compile(r"^\s*(\d{1,30}(?:\.\d{1,30})?(?:[eE]\d{1,2})?)\s*([kKmMgG]?)\s*$")
_SUFFIX = {"": 1, "k": 1_000, "m": 1_000_000, "g": 1_000_000_000}

# The caps of the counts a design takes (MAX_BUDGET, MAX_BATCH, MAX_BATCHES, MAX_VALIDATE,
# MAX_SAME: pipeline.config, where the command line reads them), checked before anything is
# allocated or solved (docs/guides/dice.md): each far beyond any use, far below what would
# exhaust memory or time.
#: The cells of one batch's draws (a die and a face index per cell, 16 bytes), and of all the
#: batches a candidate may be tested on, which the incumbent keeps for its candidates.
MAX_BATCH_CELLS = 16_000_000
MAX_TESTED_CELLS = 64_000_000


def parse_budget(text: str | int) -> int:
    """``"2M"`` as 2,000,000 boards (suffixes k, M, G; ``1e6`` too), at most MAX_BUDGET; a
    ConfigError (exit 2) otherwise.

    >>> parse_budget("250k")
    250000
    """
    from decimal import Decimal

    m = _BUDGET.match(str(text))
    if not m:
        raise ConfigError(
            f"--budget {quote(str(text))}: expected a number of boards to solve, e.g. 500k or 20M"
        )
    n = int(Decimal(m.group(1)) * _SUFFIX[m.group(2).lower()])  # exact: no float to overflow
    if n < 1:
        raise ConfigError(f"--budget {text!r}: must be at least 1 board")
    if n > MAX_BUDGET:
        raise ConfigError(f"--budget {text!r}: at most {MAX_BUDGET:,} boards, got {n:,}")
    return n


def check_draws(cfg: DesignConfig, cells: int) -> None:
    """A ConfigError (exit 2) when a batch's draws, or those of every batch a candidate may be
    tested on (kept by the incumbent), have more cells than MAX_BATCH_CELLS / MAX_TESTED_CELLS
    on boards of ``cells`` cells."""
    if cfg.batch * cells > MAX_BATCH_CELLS:
        raise ConfigError(
            f"--batch: {cfg.batch:,} boards of {cells} cells are {cfg.batch * cells:,} cells a batch, more "
            f"than {MAX_BATCH_CELLS:,}; give --batch at most {max(2, MAX_BATCH_CELLS // cells):,}"
        )
    tested = cfg.batch * cfg.max_batches * cells
    if tested > MAX_TESTED_CELLS:
        raise ConfigError(
            f"--batch x --max-batches: {cfg.batch:,} x {cfg.max_batches:,} boards of {cells} cells are "
            f"{tested:,} cells of draws kept for a candidate, more than {MAX_TESTED_CELLS:,}; lower either"
        )


@dataclass(frozen=True)
class Objective:
    """What the search improves (see the module docstring); ``text`` as given on the CLI."""

    text: str
    kind: str  # "band", "bad" or "mean"
    lo: int | None = None
    hi: int | None = None
    words: int | None = None  # bad: fewer than this many words

    @property
    def sign(self) -> float:
        """+1 when a higher value is better (band, mean), -1 when lower is (bad)."""
        return -1.0 if self.kind == "bad" else 1.0

    @property
    def share(self) -> bool:
        return self.kind != "mean"

    def describe(self) -> str:
        if self.kind == "band":
            return f"share of boards with {self.lo}..{self.hi} words (higher is better)"
        if self.kind == "bad":
            return f"share of boards with fewer than {self.words} words (lower is better)"
        return "mean score (higher is better)"

    def values(self, score: np.ndarray, n_words: np.ndarray) -> np.ndarray:
        """The per-board value whose mean is the objective (float64)."""
        if self.kind == "band":
            lo = -(1 << 31) if self.lo is None else self.lo
            hi = (1 << 31) if self.hi is None else self.hi
            return ((n_words >= lo) & (n_words <= hi)).astype(np.float64)
        if self.kind == "bad":
            return (n_words < (self.words or 0)).astype(np.float64)
        return score.astype(np.float64)


def parse_objective(text: str) -> Objective:
    """``band:200..250``, ``bad:50`` or ``mean``; a ConfigError (exit 2) for anything else."""
    from pipeline.analyze import parse_range
    from pipeline.errors import BoggleError

    t = text.strip()
    if t == "mean":
        return Objective(t, "mean")
    kind, _, arg = t.partition(":")
    if kind == "band" and arg:
        try:
            lo, hi = parse_range(arg, "--objective band:")
        except BoggleError as exc:
            raise ConfigError(exc.message) from None
        return Objective(t, "band", lo, hi)
    if kind == "bad" and arg.strip().isdigit() and int(arg) >= 1:
        return Objective(t, "bad", words=int(arg))
    raise ConfigError(
        f"--objective {text!r}: expected band:A..B (e.g. band:200..250), bad:N (e.g. bad:50) or mean"
    )


#: :meth:`DesignConfig.settings`, in the order the report lists them.
SETTINGS = (
    "faces",
    "keep_qu",
    "keep_qu_die",
    "max_same",
    "min_vowels",
    "max_rare",
    "max_sd",
    "batch",
    "max_batches",
    "undecided",
    "z",
    "seed",
)
#: The dice constraints a search's identity holds only as its ``constraints``, when one is set
#: (:meth:`DesignConfig.identity`).
LATER_CONSTRAINTS = ("keep_qu_die", "min_vowels", "max_rare")


@dataclass(frozen=True)
class DesignConfig:
    """Everything ``boggle design-dice`` takes; :meth:`identity` is what decides the result."""

    start: str
    objective: str
    dictionary: str
    out: str
    budget: int = 1_000_000
    faces: str = "fixed"  # "fixed": swaps only; "free": swaps and replacements
    keep_qu: bool = True
    max_same: int | None = None  # no die shows one face more often than this
    min_vowels: int | None = None  # every die has at least this many vowel faces
    max_rare: int | None = None  # no die has more than this many rare faces (j k q x z, Qu)
    keep_qu_die: bool = False  # every Qu face stays on its die
    max_sd: float | None = None
    batch: int = 2_000
    max_batches: int = 5
    undecided: str = "estimate"  # after max_batches: "estimate" (accept iff mean > 0) or "reject"
    z: float = 2.0
    seed: int = 0
    validate: int = 40_000
    rules: str | None = None
    shape: str | None = None
    n_jobs: int = 1
    backend: str = "loky"
    overwrite: bool = False

    def __post_init__(self) -> None:
        if self.faces not in ("fixed", "free"):
            raise ConfigError(f"--faces {self.faces!r}: expected fixed (swaps only) or free")
        checks = (
            (self.budget >= 1, "--budget must be at least 1 board"),
            (self.batch >= 2, "--batch must be at least 2 boards (an interval needs two)"),
            (self.max_batches >= 1, "--max-batches must be at least 1"),
            (
                self.undecided in ("estimate", "reject"),
                f"--undecided {self.undecided!r}: expected estimate or reject",
            ),
            (self.max_same is None or self.max_same >= 1, "--max-same must be at least 1"),
            (self.min_vowels is None or self.min_vowels >= 1, "--min-vowels must be at least 1"),
            (self.max_rare is None or self.max_rare >= 0, "--max-rare must be 0 or more"),
            (self.z > 0 and math.isfinite(self.z), "--z must be a positive number"),
            (self.seed >= 0, "--seed must be 0 or more"),
            (self.validate >= 2, "--validate must be at least 2 boards"),
            (
                self.max_sd is None or (self.max_sd > 0 and math.isfinite(self.max_sd)),
                "--max-sd must be positive",
            ),
        )
        for ok, message in checks:
            if not ok:
                raise ConfigError(message)
        from pipeline.config import MAX_JOBS, check_count

        for name, most in (
            ("budget", MAX_BUDGET),
            ("batch", MAX_BATCH),
            ("max_batches", MAX_BATCHES),
            ("validate", MAX_VALIDATE),
            ("max_same", MAX_SAME),
        ):
            check_count(f"--{name.replace('_', '-')}", getattr(self, name), 1, most, "design-dice")
        check_count("--min-vowels", self.min_vowels, 1, MAX_SAME, "design-dice")
        check_count("--max-rare", self.max_rare, 0, MAX_SAME, "design-dice")
        if not -MAX_JOBS <= self.n_jobs <= MAX_JOBS or self.n_jobs == 0:
            raise ConfigError(f"design-dice: --n-jobs: expected -1 (all cores) or 1 to {MAX_JOBS:,}")
        obj = parse_objective(self.objective)
        if self.max_sd is not None and obj.kind != "mean":
            raise ConfigError("--max-sd caps the score's sd: it goes with --objective mean")
        if self.backend not in ("loky", "threading", "dask"):
            raise ConfigError(f"--backend {self.backend!r}: expected loky, threading or dask")

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}

    @property
    def constraints(self) -> DieConstraints:
        """What every die of a proposed set meets."""
        return DieConstraints(self.min_vowels, self.max_rare, self.max_same, self.keep_qu_die)

    def settings(self) -> dict[str, Any]:
        """How the search moves (and the dice it may propose), how it decides a move, and its
        seed: what the report lists as its settings."""
        return {k: getattr(self, k) for k in SETTINGS}

    def identity(self, start: DiceSet, lexicon: CompiledLexicon) -> dict[str, Any]:
        """What the result depends on (not ``n_jobs``, the backend, ``out``, ``overwrite``)."""
        settings = {k: v for k, v in self.settings().items() if k not in LATER_CONSTRAINTS}
        out = {
            "objective": self.objective,
            "budget": self.budget,
            **settings,
            "validate": self.validate,
            "start": {"dice": start.label, "sha256": start.sha256},
            "lexicon": {"content_hash": lexicon.content_hash, "alphabet": list(lexicon.alphabet.faces)},
            "rules": lexicon.rules.to_dict(),
        }
        # the per-die constraints, when any is set (a search with none keeps the identity it had
        # before they existed); with them the start is first brought within them (repair)
        if self.constraints.any:
            out["constraints"] = self.constraints.to_dict()
        return out


@dataclass(frozen=True)
class Move:
    """Swap face ``i`` of die ``a`` with face ``j`` of die ``b``, or (``new`` set) replace face
    ``i`` of die ``a`` by ``new``. Dice and faces numbered from 0 here, from 1 in text."""

    a: int
    i: int
    b: int = -1
    j: int = -1
    new: str | None = None

    def apply(self, dice: tuple[tuple[str, ...], ...]) -> tuple[tuple[str, ...], ...]:
        out = [list(d) for d in dice]
        if self.new is not None:
            out[self.a][self.i] = self.new
        else:
            out[self.a][self.i], out[self.b][self.j] = out[self.b][self.j], out[self.a][self.i]
        return tuple(tuple(d) for d in out)

    def text(self, dice: tuple[tuple[str, ...], ...]) -> str:
        """``die 3 face 2 (e) <-> die 9 face 5 (x)`` or ``die 3 face 2: e -> s`` (the dice
        before the move)."""
        fa = dice[self.a][self.i] or "_"
        if self.new is not None:
            return f"die {self.a + 1} face {self.i + 1}: {fa} -> {self.new}"
        fb = dice[self.b][self.j] or "_"
        return f"die {self.a + 1} face {self.i + 1} ({fa}) <-> die {self.b + 1} face {self.j + 1} ({fb})"


def propose(
    dice: tuple[tuple[str, ...], ...],
    rng: np.random.Generator,
    letters: list[str] | None,
    keep_qu: bool,
    max_same: int | None = None,
    constraints: DieConstraints | None = None,
) -> Move | None:
    """A random move that changes the set (None when there is none): a swap of two different
    faces of two dice, or (``letters``: the faces a replacement may bring) with probability 1/2
    a replacement. With ``keep_qu`` no replacement takes or brings a Qu face; with ``max_same``
    no move brings a face to a die that then shows it more than ``max_same`` times.

    ``constraints`` (which hold ``max_same`` when given): every die a move changes meets them
    after it, so from a set within them (:func:`~pipeline.design._constraints.repair`) no move
    leaves them; with ``keep_qu_die`` no move swaps or replaces a Qu face."""
    n, width = len(dice), len(dice[0])
    c = constraints if constraints is not None else DieConstraints(max_same=max_same)
    pinned = QU if c.keep_qu_die else None  # a face no move touches

    def fits(die: int, old: int, face: str) -> bool:  # die ``die`` with face ``old`` replaced by ``face``
        after = list(dice[die])
        after[old] = face
        return c.fits(after)

    for _ in range(1000):
        if letters is not None and rng.random() < 0.5:
            a, i = int(rng.integers(n)), int(rng.integers(width))
            old = dice[a][i]
            choices = [f for f in letters if f != old and not (keep_qu and f == QU) and fits(a, i, f)]
            if old in (BLANK, pinned) or (keep_qu and old == QU) or not choices:
                continue
            return Move(a, i, new=choices[int(rng.integers(len(choices)))])
        if n < 2:
            continue
        a, b = (int(x) for x in rng.choice(n, size=2, replace=False))
        i, j = int(rng.integers(width)), int(rng.integers(width))
        fa, fb = dice[a][i], dice[b][j]
        if fa != fb and pinned not in (fa, fb) and fits(a, i, fb) and fits(b, j, fa):
            return Move(a, i, b, j)
    return None
