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
a replacement neither removes nor adds one. The number of dice and of faces per die never
change.

**Per-die constraints** (:class:`~pipeline.design._constraints.DieConstraints`: ``min_vowels``,
``max_rare``, ``max_same``, ``keep_qu_die``): a move is drawn again until every die it changes
meets them, so from a set within them no candidate leaves them. A start outside them is first
brought within by the same moves, kept when they lower the dice's total excess (the *repair*,
from a stream of its own, untested on boards: :func:`constrained_start`); the search starts
from there. The constraints, when any is set, are part of the design's identity.

**Search**: first-improvement hill climbing. Step ``s`` holds an incumbent; candidates (random
moves, drawn from a stream keyed by the seed, the step and the candidate number) are evaluated
against it in batches of ``batch`` boards. Batch ``k`` of step ``s`` rolls its die permutation
and face indices from a stream keyed by (seed, step, k) and both sets show those draws
(:func:`pipeline.boards.roll_dice_layout`): a candidate board differs from the incumbent's only
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

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from pipeline import parallel
from pipeline.boards import (
    BLANK,
    GENERATORS,
    DiceSet,
    format_dice_text,
    load_dice_set,
    parse_shape,
    roll_dice_layout,
)
from pipeline.design._config import DesignConfig, Objective, check_draws, parse_objective, propose
from pipeline.design._constraints import DieConstraints, check_reachable, repair
from pipeline.design._eval import (
    MOVES_STREAM,
    REPAIR_STREAM,
    SEARCH_STREAM,
    Solver,
    evaluate_candidate,
    keyed_rng,
)
from pipeline.design._report import (
    DICE_OUT,
    FORMAT,
    MOVES,
    REPORT,
    STATE,
    build_report,
    moves_csv,
    validate,
)
from pipeline.errors import ConfigError, DamagedRunError
from pipeline.lexicon import CompiledLexicon

if TYPE_CHECKING:  # the store (and pyarrow) is imported when a search starts
    from pipeline.store import JobOutcome, JobStatus, Location, PartRef


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
    """The search's outcome (``status``: complete, resumed or already complete, as for every
    command: :class:`pipeline.store.JobOutcome`)."""

    status: JobStatus
    start: DiceSet
    proposed: DiceSet
    objective: Objective
    out: PartRef  # the job folder: a local path, or its URL in an object store
    report: dict[str, Any]
    moves: list[dict[str, Any]] = field(default_factory=list)


# ---------------------------------------------------------------- the job


def _initial_state(
    start: DiceSet, identity: dict[str, Any], dice: tuple[tuple[str, ...], ...], repaired: list[str]
) -> dict[str, Any]:
    return {
        "identity": identity,
        "dice": [list(d) for d in dice],
        "repair": repaired,
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


def prepare(cfg: DesignConfig) -> tuple[DiceSet, Objective, CompiledLexicon, list[str] | None]:
    """The start set, objective, compiled lexicon and the letters a replacement may bring
    (None: ``faces="fixed"``); every bad input is refused here, before anything is written."""
    from pipeline.lexicon import compile_for_boards, lexicon_alphabet
    from pipeline.rules import resolve_rules
    from pipeline.store import output_location, refuse_inside_job

    # the job folder itself may hold this search (resumed, or done); inside another job, never
    refuse_inside_job(output_location(cfg.out), itself=False)
    if cfg.start in GENERATORS:
        raise ConfigError(
            f"--start {cfg.start!r} is a letter generator, not dice: design-dice changes a set of dice"
        )
    objective = parse_objective(cfg.objective)
    wanted = parse_shape(cfg.shape) if cfg.shape else (None, None)
    start = load_dice_set(cfg.start, *wanted)
    check_draws(cfg, start.rows * start.cols)
    rules = resolve_rules(cfg.rules, (start.rows, start.cols))
    letters = None
    faces = set(start.faces)
    if cfg.faces == "free":
        letters = sorted(f for f in lexicon_alphabet(cfg.dictionary).faces if f != BLANK)
        faces |= set(letters)
    lexicon = compile_for_boards(cfg.dictionary, rules, faces)
    return start, objective, lexicon, letters


def constrained_start(
    cfg: DesignConfig, start: DiceSet, letters: list[str] | None
) -> tuple[tuple[tuple[str, ...], ...], list[str]]:
    """The set the search starts from: ``start`` brought within the per-die constraints by
    the search's own moves (none when it is within them already), and those moves' texts; a
    ConfigError (exit 2) when the constraints cannot be met. Keyed by the seed alone, so a
    resumed search starts where the first one did."""
    c = cfg.constraints
    if not c.any:
        return start.dice, []
    check_reachable(start.dice, c, letters, cfg.keep_qu)
    free = DieConstraints(keep_qu_die=c.keep_qu_die)  # the moves' own rules, the constraints aside
    return repair(
        start.dice,
        c,
        lambda dice, rng: propose(dice, rng, letters, cfg.keep_qu, constraints=free),
        keyed_rng(cfg.seed, REPAIR_STREAM),
    )


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
    from pipeline.store import file_entry

    start, objective, lexicon, letters = prepare(cfg)
    first, repaired = constrained_start(cfg, start, letters)  # refused here, before anything is written
    identity = cfg.identity(start, lexicon)
    out = store.output_location(cfg.out)  # a local folder, or one of an object store
    with store.JobDir.open(
        out, store.job_kind(FORMAT), identity, cfg.to_dict(), overwrite=cfg.overwrite, note=note, parts=0
    ) as job:
        if job.state is store.JobState.DONE:
            return _finished(job.outcome(), start, objective, out)
        state = job.saved_state(STATE)  # an unfinished search goes on from there
        if state is None:
            state = _initial_state(start, identity, first, repaired)
            job.save_state(STATE, state)
        t0 = time.process_time()
        cpu_before = float(state["cpu_s"])
        with parallel.parallel_backend(cfg.backend, cfg.n_jobs):
            solver = Solver(lexicon, cfg.dictionary, start.rows, start.cols, cfg.n_jobs)

            def cpu() -> float:
                return cpu_before + time.process_time() - t0 + solver.worker_cpu

            _search(cfg, job, state, start, objective, lexicon, letters, solver, cpu, progress)
            proposed = replace(start, dice=tuple(tuple(d) for d in state["dice"]))
            validation = validate(cfg, solver, lexicon, start, proposed, objective)
        report = build_report(cfg, state, start, proposed, objective, validation, cpu())
        dice_text = format_dice_text(
            replace(
                proposed, name="design", title=f"design-dice {objective.text} from {start.label}", file=None
            )
        )
        with job.side_file(DICE_OUT) as tmp:
            tmp.write_text(dice_text, encoding="utf-8")
        with job.side_file(MOVES) as tmp:
            tmp.write_text(moves_csv(state["moves"]), encoding="utf-8")
        with job.side_file(REPORT) as tmp:
            tmp.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        # the outputs' names do not start with "_", so the manifest records them under "outputs"
        # (size, BLAKE2b) rather than "files"; a finished search checks them (_finished)
        outputs = {name: file_entry(out, name) for name in (DICE_OUT, MOVES, REPORT)}
        job.finish(
            0, {"objective": objective.text, "seed": cfg.seed, "outputs": outputs}, side_files=(STATE,)
        )
        return _finished(job.outcome(), start, objective, out)


def _finished(outcome: JobOutcome, start: DiceSet, objective: Objective, out: Location) -> DesignResult:
    """The result of a finished search: the job's outcome, its outputs checked against the
    manifest and read back."""
    from pipeline.store import file_entry

    outputs = outcome.manifest.get("outputs", {})
    for name in (DICE_OUT, MOVES, REPORT):
        entry = file_entry(out, name) if out.is_file(name) else None
        if entry is None or entry != outputs.get(name):
            raise DamagedRunError(
                f"{out.url(name)}: {'missing' if entry is None else 'changed since the search wrote it'}; "
                "re-run with --overwrite to search again"
            )
    try:
        report = json.loads(out.read_bytes(REPORT).decode("utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise DamagedRunError(f"{out.url(REPORT)}: unreadable ({exc})") from None
    proposed = load_dice_set(out.url(DICE_OUT), start.rows, start.cols)
    moves = list(report.get("moves", []))
    return DesignResult(outcome.status, start, proposed, objective, out.ref(), report, moves)


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
            order, face = roll_dice_layout(
                self.dice, keyed_rng(cfg.seed, SEARCH_STREAM, self.step, k), cfg.batch
            )
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
            dice,
            keyed_rng(cfg.seed, MOVES_STREAM, step, state["candidate"]),
            letters,
            cfg.keep_qu,
            constraints=cfg.constraints,
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
        job.save_state(STATE, state)
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
    job.save_state(STATE, state)
