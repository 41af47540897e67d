"""The dice designer (``boggle design-dice``): a local search over dice sets, each move tested
by a paired experiment with common random numbers.

**Objectives** (a per-board value, averaged over boards):

* ``band:A..B``: the share of boards whose word count is in ``A..B`` (inclusive), maximised;
* ``bad:N``: the share of boards with fewer than ``N`` words, minimised;
* ``mean``: the mean score, maximised; with ``max_sd`` a candidate whose score sd (on the boards
  it was evaluated on) is above ``max(max_sd, the incumbent's sd on the same boards)`` is
  rejected (a cap that never lets the spread grow past it).

**Moves**: swap a face of one die with a face of another (the multiset of faces is kept); with
``faces="free"`` also replace one face by another letter of the lexicon's alphabet (blank faces
are never replaced). ``keep_qu`` (default) keeps the number of Qu faces as the start has it:
a replacement neither removes nor adds one. ``max_same``: no move brings a face to a die that
would then show it more than ``max_same`` times (a die already over it is left as it is). The
number of dice and of faces per die never change.

**Search**: first-improvement hill climbing. Step ``s`` holds an incumbent; candidates (random
moves, drawn from a stream keyed by the seed, the step and the candidate number) are evaluated
against it in batches of ``batch`` boards. Batch ``k`` of step ``s`` rolls its die permutation
and face indices from a stream keyed by (seed, step, k) and both sets show those draws
(:func:`pipeline.dice.roll_dice_layout`): a candidate board differs from the incumbent's only
where a changed face shows, and only those boards are solved for the candidate; the
incumbent's batches are solved once per step and shared by its candidates. After each batch,
with ``d`` the per-board differences (candidate minus incumbent, signed so that positive is
better) over all batches so far: reject when ``mean(d) + z se < 0``, accept when
``mean(d) - z se > 0``; after ``max_batches`` batches accept iff ``mean(d) > 0`` (``undecided
= "estimate"``, the default) or reject (``undecided = "reject"``: only clear gains). An accepted
move starts step ``s + 1`` with fresh draws. The search stops when ``budget`` boards have been
solved (incumbent and candidate boards; validation not counted).

**Validation**: ``validate`` boards from a stream the search never uses, both the start and the
proposed set, paired as above: the objective for both, the difference with a 95% paired
interval (mean +- 1.96 sd / sqrt(n)), and the same for the mean score and the share of bad
boards (fewer than 50 words, or the objective's N).

**Job**: the output folder is a job directory (:class:`pipeline.store.JobDir`, format
``boggle-design``): the state after every decided candidate is written atomically and sealed
(``_design.json``), so a killed search re-run with the same arguments goes on from there and
ends with the same set as an uninterrupted one (everything random is keyed by the counters the
state holds). It ends with ``dice.txt`` (the proposed set as a dice file), ``report.json`` and
``moves.csv`` (the accepted moves) and the sealed manifest.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from pipeline import backends
from pipeline.boards import BLANK, QU, parse_shape
from pipeline.dice import GENERATORS, DiceSet, format_dice_text, load_dice_set, roll_dice_layout
from pipeline.errors import ConfigError, DamagedRunError
from pipeline.lexicon import CompiledLexicon
from pipeline.whatif import Z95, paired_gain

FORMAT = "boggle-design"
SCHEMA_VERSION = 1
STATE = "_design.json"
DICE_OUT = "dice.txt"
REPORT = "report.json"
MOVES = "moves.csv"
MOVE_COLUMNS = ["step", "candidate", "move", "estimate", "low", "high", "boards", "boards_solved"]
DEFAULT_BAD_WORDS = 50
# the streams of random draws: search boards, moves, validation boards (never shared)
_SEARCH, _MOVES, _VALIDATE = 0, 1, 2
_BUDGET = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmMgG]?)\s*$")
_SUFFIX = {"": 1, "k": 1_000, "m": 1_000_000, "g": 1_000_000_000}


def parse_budget(text: str | int) -> int:
    """``"2M"`` as 2,000,000 boards (suffixes k, M, G); a ConfigError (exit 2) otherwise.

    >>> parse_budget("250k")
    250000
    """
    m = _BUDGET.match(str(text))
    if not m:
        raise ConfigError(f"--budget {text!r}: expected a number of boards to solve, e.g. 500k or 20M")
    n = int(float(m.group(1)) * _SUFFIX[m.group(2).lower()])
    if n < 1:
        raise ConfigError(f"--budget {text!r}: must be at least 1 board")
    return n


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
    from pipeline.analyze.select import parse_range
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
    max_same: int | None = None  # no move makes a die show one face more often than this
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
        obj = parse_objective(self.objective)
        if self.max_sd is not None and obj.kind != "mean":
            raise ConfigError("--max-sd caps the score's sd: it goes with --objective mean")
        if self.backend not in ("loky", "threading", "dask"):
            raise ConfigError(f"--backend {self.backend!r}: expected loky, threading or dask")

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}

    def identity(self, start: DiceSet, lexicon: CompiledLexicon) -> dict[str, Any]:
        """What the result depends on (not ``n_jobs``, the backend, ``out``, ``overwrite``)."""
        keep = (
            "objective",
            "budget",
            "faces",
            "keep_qu",
            "max_same",
            "max_sd",
            "batch",
            "max_batches",
            "undecided",
            "z",
            "seed",
            "validate",
        )
        return {
            **{k: getattr(self, k) for k in keep},
            "start": {"dice": start.label, "sha256": start.sha256},
            "lexicon": {"content_hash": lexicon.content_hash, "alphabet": list(lexicon.alphabet.faces)},
            "rules": lexicon.rules.to_dict(),
        }


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
) -> Move | None:
    """A random move that changes the set (None when there is none): a swap of two different
    faces of two dice, or (``letters``: the faces a replacement may bring) with probability 1/2
    a replacement. With ``keep_qu`` no replacement takes or brings a Qu face; with ``max_same``
    no move brings a face to a die that then shows it more than ``max_same`` times."""
    n, width = len(dice), len(dice[0])

    def crowded(die: int, face: str) -> bool:  # the die already shows ``face`` max_same times
        return max_same is not None and face != BLANK and dice[die].count(face) >= max_same

    for _ in range(1000):
        if letters is not None and rng.random() < 0.5:
            a, i = int(rng.integers(n)), int(rng.integers(width))
            old = dice[a][i]
            choices = [f for f in letters if f != old and not (keep_qu and f == QU) and not crowded(a, f)]
            if old == BLANK or (keep_qu and old == QU) or not choices:
                continue
            return Move(a, i, new=choices[int(rng.integers(len(choices)))])
        if n < 2:
            continue
        a, b = (int(x) for x in rng.choice(n, size=2, replace=False))
        i, j = int(rng.integers(width)), int(rng.integers(width))
        if dice[a][i] != dice[b][j] and not crowded(a, dice[b][j]) and not crowded(b, dice[a][i]):
            return Move(a, i, b, j)
    return None


@dataclass(frozen=True)
class DesignProgress:
    """After each decided candidate."""

    step: int  # accepted moves so far
    candidates: int
    boards_solved: int
    budget: int
    last: str  # "accepted", "rejected"
    move: str


ProgressCallback = Callable[[DesignProgress], None]


@dataclass
class DesignResult:
    """The search's outcome (``status``: complete, resumed, already complete)."""

    status: str
    start: DiceSet
    proposed: DiceSet
    objective: Objective
    out: Path
    report: dict[str, Any]
    moves: list[dict[str, Any]] = field(default_factory=list)


def _rng(seed: int, *key: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=key))


def _solve_part(
    handle: Any, boards: np.ndarray, rows: int, cols: int
) -> tuple[np.ndarray, np.ndarray, float, int]:
    """(score, words, CPU seconds of this thread, process id) of a slice of boards, in a worker."""
    from pipeline.runner.workers import worker_lexicon
    from pipeline.solve import solve_arrays

    t = time.thread_time()
    res = solve_arrays(boards, rows, cols, worker_lexicon(handle), collect=False)
    return res.score.astype(np.int64), res.n_words.astype(np.int64), time.thread_time() - t, os.getpid()


class Solver:
    """Solves batches of encoded boards in this process (``n_jobs`` 1) or on the active joblib
    backend, and counts the boards and the CPU seconds."""

    def __init__(self, lexicon: CompiledLexicon, spec: str, rows: int, cols: int, n_jobs: int):
        from pipeline.runner.workers import make_handle

        self.rows, self.cols, self.n_jobs = rows, cols, n_jobs
        self.handle = make_handle(spec, lexicon, ship=n_jobs != 1 and backends.backend_is_dask())
        self.boards = 0
        self.worker_cpu = 0.0

    def solve(self, boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        self.boards += len(boards)
        if len(boards) == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        if self.n_jobs == 1 or len(boards) < 512:
            s, w, _, _ = _solve_part(self.handle, boards, self.rows, self.cols)
            return s, w
        import joblib

        parts = max(1, min(joblib.effective_n_jobs(self.n_jobs), len(boards) // 256))
        out = joblib.Parallel(n_jobs=self.n_jobs)(
            joblib.delayed(_solve_part)(self.handle, b, self.rows, self.cols)
            for b in np.array_split(boards, parts)
        )
        # this process's CPU time already holds what its own threads (threading backend) spent
        self.worker_cpu += sum(c for _, _, c, pid in out if pid != os.getpid())
        return np.concatenate([s for s, _, _, _ in out]), np.concatenate([w for _, w, _, _ in out])


@dataclass
class Paired:
    """Per-board figures of two sets on the same draws (b: the second set)."""

    score_a: np.ndarray
    words_a: np.ndarray
    score_b: np.ndarray
    words_b: np.ndarray
    differ: int  # boards that show other faces


def paired_batch(
    solver: Solver,
    table_a: np.ndarray,
    table_b: np.ndarray,
    order: np.ndarray,
    face: np.ndarray,
    known_a: tuple[np.ndarray, np.ndarray] | None = None,
) -> Paired:
    """Both sets on the same draws; only the boards whose faces differ are solved for ``b``
    (``known_a``: the first set's figures, already solved)."""
    boards_a, boards_b = table_a[order, face], table_b[order, face]
    sa, wa = known_a if known_a is not None else solver.solve(boards_a)
    differ = (boards_a != boards_b).any(axis=1)
    sb, wb = sa.copy(), wa.copy()
    if differ.any():
        sb[differ], wb[differ] = solver.solve(boards_b[differ])
    return Paired(sa, wa, sb, wb, int(differ.sum()))


def _interval(d: np.ndarray, z: float) -> tuple[float, float, float]:
    mean = float(d.mean())
    half = z * float(d.std(ddof=1)) / math.sqrt(len(d)) if len(d) > 1 else math.inf
    return mean, mean - half, mean + half


@dataclass
class Decision:
    accept: bool
    estimate: float
    low: float
    high: float
    boards: int


def evaluate_candidate(
    solver: Solver,
    objective: Objective,
    cfg: DesignConfig,
    table_inc: np.ndarray,
    table_cand: np.ndarray,
    batch_of: Callable[[int], tuple[Any, ...]],
) -> Decision:
    """The sequential paired test of a candidate against the incumbent (module docstring);
    ``batch_of(k)`` gives batch ``k``'s draws and the incumbent's figures on them."""
    ds: list[np.ndarray] = []
    scores_a: list[np.ndarray] = []
    scores_b: list[np.ndarray] = []
    est = low = high = 0.0
    for k in range(cfg.max_batches):
        order, face, known = batch_of(k)
        p = paired_batch(solver, table_inc, table_cand, order, face, known)
        va, vb = objective.values(p.score_a, p.words_a), objective.values(p.score_b, p.words_b)
        ds.append(objective.sign * (vb - va))
        scores_a.append(p.score_a)
        scores_b.append(p.score_b)
        d = np.concatenate(ds)
        est, low, high = _interval(d, cfg.z)
        if high < 0:
            return Decision(False, est, low, high, len(d))
        if low > 0 and _sd_ok(cfg, scores_a, scores_b):
            return Decision(True, est, low, high, len(d))
    n = sum(len(x) for x in ds)
    accept = cfg.undecided == "estimate" and est > 0 and _sd_ok(cfg, scores_a, scores_b)
    return Decision(accept, est, low, high, n)


def _sd_ok(cfg: DesignConfig, scores_a: list[np.ndarray], scores_b: list[np.ndarray]) -> bool:
    if cfg.max_sd is None:
        return True
    sa, sb = np.concatenate(scores_a), np.concatenate(scores_b)
    return float(sb.std(ddof=1)) <= max(cfg.max_sd, float(sa.std(ddof=1)))


# ---------------------------------------------------------------- the job


def _initial_state(start: DiceSet, identity: dict[str, Any]) -> dict[str, Any]:
    return {
        "identity": identity,
        "dice": [list(d) for d in start.dice],
        "step": 0,
        "candidate": 0,
        "candidates": 0,
        "boards_solved": 0,
        "incumbent_batches": 0,
        "cpu_s": 0.0,
        "moves": [],
        "done": False,
        "stop": "",
    }


def _read_state(job: Any, identity: dict[str, Any]) -> dict[str, Any] | None:
    from pipeline.store.manifest import read_manifest

    if not job.loc.is_file(STATE):
        return None
    state = read_manifest(job.loc, STATE)
    if "seal" not in state or state.get("identity") != identity:
        raise DamagedRunError(f"{job.loc.url(STATE)}: not this search's state (no seal or another identity)")
    return state


def _write_state(job: Any, state: dict[str, Any]) -> None:
    from pipeline.store.manifest import SEAL, seal_of
    from pipeline.store.parts import write_json

    body = {k: v for k, v in state.items() if k != SEAL}
    job.check_lease()
    write_json(job.loc, STATE, {**body, SEAL: seal_of(body)})


def prepare(cfg: DesignConfig) -> tuple[DiceSet, Objective, CompiledLexicon, list[str] | None]:
    """The start set, objective, compiled lexicon and the letters a replacement may bring
    (None: ``faces="fixed"``); every bad input is refused here, before anything is written."""
    from pipeline.lexicon import compile_for_boards, lexicon_alphabet
    from pipeline.rules import resolve_rules
    from pipeline.urls import is_url

    if is_url(cfg.out):
        raise ConfigError(f"--out {cfg.out}: design-dice writes to a local folder")
    if cfg.start in GENERATORS:
        raise ConfigError(
            f"--start {cfg.start!r} is a letter generator, not dice: design-dice changes a set of dice"
        )
    objective = parse_objective(cfg.objective)
    wanted = parse_shape(cfg.shape) if cfg.shape else (None, None)
    start = load_dice_set(cfg.start, *wanted)
    rules = resolve_rules(cfg.rules, (start.rows, start.cols))
    letters = None
    faces = set(start.faces)
    if cfg.faces == "free":
        letters = sorted(f for f in lexicon_alphabet(cfg.dictionary).faces if f != BLANK)
        faces |= set(letters)
    lexicon = compile_for_boards(cfg.dictionary, rules, faces)
    return start, objective, lexicon, letters


def design_dice(
    cfg: DesignConfig, progress: ProgressCallback | None = None, note: Callable[[str], None] | None = None
) -> DesignResult:
    """Search, validate and write ``cfg.out`` (module docstring). A finished search of the same
    config is returned as it is; an unfinished one goes on from its last state; another
    config's folder is refused (exit 4) unless ``cfg.overwrite``.

    >>> cfg = DesignConfig("new", "band:200..250", "enable2k", "runs/design", budget=2_000_000)
    >>> design_dice(cfg).report["validation"]  # doctest: +SKIP
    """
    from pipeline import store
    from pipeline.store.manifest import file_entry

    start, objective, lexicon, letters = prepare(cfg)
    identity = cfg.identity(start, lexicon)
    out = Path(cfg.out)
    with store.JobDir.open(
        out, store.job_kind(FORMAT), identity, cfg.to_dict(), overwrite=cfg.overwrite, note=note
    ) as job:
        if job.state == "done":
            return _finished(job, start, objective, out, "already complete")
        state = _read_state(job, identity) if job.state == "resume" else None
        status = "complete" if state is None else "resumed"
        if state is None:
            state = _initial_state(start, identity)
            _write_state(job, state)
        t0 = time.process_time()
        cpu_before = float(state["cpu_s"])
        with backends.parallel_backend(cfg.backend, cfg.n_jobs):
            solver = Solver(lexicon, cfg.dictionary, start.rows, start.cols, cfg.n_jobs)

            def cpu() -> float:
                return cpu_before + time.process_time() - t0 + solver.worker_cpu

            _search(cfg, job, state, start, objective, lexicon, letters, solver, cpu, progress)
            proposed = replace(start, dice=tuple(tuple(d) for d in state["dice"]))
            validation = validate(cfg, solver, lexicon, start, proposed, objective)
        report = _report(cfg, state, start, proposed, objective, validation, cpu())
        dice_text = format_dice_text(
            replace(
                proposed, name="design", title=f"design-dice {objective.text} from {start.label}", file=None
            )
        )
        with job.side_file(DICE_OUT) as tmp:
            tmp.write_text(dice_text, encoding="utf-8")
        with job.side_file(MOVES) as tmp:
            tmp.write_text(_moves_csv(state["moves"]), encoding="utf-8")
        with job.side_file(REPORT) as tmp:
            tmp.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        # the outputs' names do not start with "_", so the manifest records them under "outputs"
        # (size, BLAKE2b) rather than "files"; a finished search checks them (_finished)
        outputs = {name: file_entry(out, name) for name in (DICE_OUT, MOVES, REPORT)}
        job.finish(
            0, {"objective": objective.text, "seed": cfg.seed, "outputs": outputs}, side_files=(STATE,)
        )
        return _finished(job, start, objective, out, status)


def _finished(job: Any, start: DiceSet, objective: Objective, out: Path, status: str) -> DesignResult:
    from pipeline.store.manifest import file_entry

    outputs = (job.manifest or {}).get("outputs", {})
    for name in (DICE_OUT, MOVES, REPORT):
        entry = file_entry(out, name) if (out / name).is_file() else None
        if entry is None or entry != outputs.get(name):
            raise DamagedRunError(
                f"{out / name}: {'missing' if entry is None else 'changed since the search wrote it'}; "
                "re-run with --overwrite to search again"
            )
    try:
        report = json.loads((out / REPORT).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DamagedRunError(f"{out / REPORT}: unreadable ({exc})") from None
    proposed = load_dice_set(str(out / DICE_OUT), start.rows, start.cols)
    return DesignResult(status, start, proposed, objective, out, report, list(report.get("moves", [])))


class _Incumbent:
    """The incumbent of step ``step``: its batches' draws and figures, solved once for all its
    candidates (and counted once in the budget, a resumed step's included)."""

    def __init__(
        self,
        cfg: DesignConfig,
        state: dict[str, Any],
        solver: Solver,
        dice: DiceSet,
        alphabet: Any,
        step: int,
    ):
        self.cfg, self.state, self.solver, self.dice, self.step = cfg, state, solver, dice, step
        self.table = dice.face_table(alphabet)
        self.cache: dict[int, tuple[Any, ...]] = {}
        self.solved_now = 0  # boards solved for the incumbent while the candidate in hand is tested

    def batch(self, k: int) -> tuple[Any, ...]:
        if k not in self.cache:
            cfg, state = self.cfg, self.state
            order, face = roll_dice_layout(self.dice, _rng(cfg.seed, _SEARCH, self.step, k), cfg.batch)
            known = self.solver.solve(self.table[order, face])
            self.solved_now += cfg.batch
            if k >= state["incumbent_batches"]:
                state["boards_solved"] += cfg.batch
                state["incumbent_batches"] = k + 1
            self.cache[k] = (order, face, known)
        return self.cache[k]


def _search(
    cfg: DesignConfig,
    job: Any,
    state: dict[str, Any],
    start: DiceSet,
    objective: Objective,
    lexicon: CompiledLexicon,
    letters: list[str] | None,
    solver: Solver,
    cpu: Callable[[], float],
    progress: ProgressCallback | None,
) -> None:
    """First-improvement hill climbing until the budget is spent; ``state`` is updated and
    written after every decided candidate."""
    alphabet = lexicon.alphabet
    inc: _Incumbent | None = None
    while not state["done"]:
        if state["boards_solved"] >= cfg.budget:
            state.update(done=True, stop=f"budget of {cfg.budget:,} boards solved")
            break
        dice = tuple(tuple(d) for d in state["dice"])
        step = state["step"]
        if inc is None or inc.step != step:  # a new incumbent: new draws, solved once for its candidates
            inc = _Incumbent(cfg, state, solver, replace(start, dice=dice), alphabet, step)
        move = propose(
            dice, _rng(cfg.seed, _MOVES, step, state["candidate"]), letters, cfg.keep_qu, cfg.max_same
        )
        if move is None:
            state.update(done=True, stop="no move changes the set")
            break
        cand = move.apply(dice)
        table_cand = replace(start, dice=cand).face_table(alphabet)
        before, inc.solved_now = solver.boards, 0
        decision = evaluate_candidate(solver, objective, cfg, inc.table, table_cand, inc.batch)
        state["boards_solved"] += solver.boards - before - inc.solved_now
        state["candidates"] += 1
        text = move.text(dice)
        if decision.accept:
            state["moves"].append(
                {
                    "step": step + 1,
                    "candidate": state["candidates"],
                    "move": text,
                    "estimate": decision.estimate,
                    "low": decision.low,
                    "high": decision.high,
                    "boards": decision.boards,
                    "boards_solved": state["boards_solved"],
                }
            )
            state.update(dice=[list(d) for d in cand], step=step + 1, candidate=0, incumbent_batches=0)
        else:
            state["candidate"] += 1
        state["cpu_s"] = cpu()
        _write_state(job, state)
        if progress is not None:
            progress(
                DesignProgress(
                    state["step"],
                    state["candidates"],
                    state["boards_solved"],
                    cfg.budget,
                    "accepted" if decision.accept else "rejected",
                    text,
                )
            )
    state["cpu_s"] = cpu()
    _write_state(job, state)


def validate(
    cfg: DesignConfig,
    solver: Solver,
    lexicon: CompiledLexicon,
    start: DiceSet,
    proposed: DiceSet,
    objective: Objective,
) -> dict[str, Any]:
    """The start and the proposed set on ``cfg.validate`` fresh boards, paired: the objective,
    the mean score and the bad share for both, each difference with its 95% interval."""
    ta, tb = start.face_table(lexicon.alphabet), proposed.face_table(lexicon.alphabet)
    rng = _rng(cfg.seed, _VALIDATE)
    parts: list[Paired] = []
    left = cfg.validate
    while left > 0:
        n = min(left, 20_000)
        order, face = roll_dice_layout(start, rng, n)
        parts.append(paired_batch(solver, ta, tb, order, face))
        left -= n
    sa = np.concatenate([p.score_a for p in parts])
    sb = np.concatenate([p.score_b for p in parts])
    wa = np.concatenate([p.words_a for p in parts])
    wb = np.concatenate([p.words_b for p in parts])
    bad_n = objective.words if objective.kind == "bad" else DEFAULT_BAD_WORDS
    metrics = {
        "objective": objective,
        "mean": Objective("mean", "mean"),
        "bad": Objective(f"bad:{bad_n}", "bad", words=bad_n),
    }
    out: dict[str, Any] = {"boards": len(sa), "boards_differ": sum(p.differ for p in parts) / len(sa)}
    for name, obj in metrics.items():
        va, vb = obj.values(sa, wa), obj.values(sb, wb)
        gain, low, high, _ = paired_gain(va, vb)
        # better: the whole interval on the good side of 0 (above for band and mean, below for bad)
        better = low is not None and high is not None and (low > 0 if obj.sign > 0 else high < 0)
        out[name] = {
            "definition": obj.text,
            "start": float(va.mean()),
            "proposed": float(vb.mean()),
            "difference": gain,
            "low": low,
            "high": high,
            "better": better,
        }
    out["z"] = Z95
    return out


def _report(
    cfg: DesignConfig,
    state: dict[str, Any],
    start: DiceSet,
    proposed: DiceSet,
    objective: Objective,
    validation: dict[str, Any],
    cpu_s: float,
) -> dict[str, Any]:
    counts = start.face_counts()
    after = proposed.face_counts()
    changes = {f or "_": after.get(f, 0) - counts.get(f, 0) for f in sorted(set(counts) | set(after))}
    return {
        "objective": {"text": objective.text, "definition": objective.describe()},
        "start": {"dice": start.label, "sha256": start.sha256},
        "proposed": {"file": DICE_OUT, "sha256": proposed.sha256, "faces": [list(d) for d in proposed.dice]},
        "face_count_changes": {f: n for f, n in changes.items() if n},
        "moves_accepted": len(state["moves"]),
        "candidates": state["candidates"],
        "boards_solved": state["boards_solved"],
        "budget": cfg.budget,
        "stop": state["stop"],
        "cpu_s": round(cpu_s, 3),
        "validation": validation,
        "moves": state["moves"],
        "settings": {k: getattr(cfg, k) for k in SETTINGS},
    }


SETTINGS = ("faces", "keep_qu", "max_same", "max_sd", "batch", "max_batches", "undecided", "z", "seed")


def _moves_csv(moves: list[dict[str, Any]]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=MOVE_COLUMNS, lineterminator="\n")
    w.writeheader()
    for m in moves:
        w.writerow({k: m[k] for k in MOVE_COLUMNS})
    return buf.getvalue()
