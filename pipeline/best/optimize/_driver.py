"""Running the restarts in parallel with joblib and relaying their progress.

Restart ``i`` draws everything from ``numpy.random.SeedSequence(seed).spawn(restarts)[i]``, so
an iteration-bounded run does not depend on the number of workers or the backend (a time limit
only cuts a trajectory short). Workers send :class:`RestartEvent` through a queue; one thread
turns them into :class:`OptimizeProgress` for the caller's callback.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from pipeline.best.optimize._anneal import simulated_annealing
from pipeline.best.optimize._budget import Clock, RestartEvent, RestartResult
from pipeline.best.optimize._config import OptimizeConfig
from pipeline.best.optimize._hill import hill_climb
from pipeline.best.optimize._scorer import Scorer, Tables
from pipeline.best.optimize._space import SearchSpace
from pipeline.boards import canonical, format_compact
from pipeline.parallel import lifeline


@dataclass(frozen=True)
class RestartTask:
    restart: int
    seed: np.random.SeedSequence
    cfg: OptimizeConfig
    space: SearchSpace
    tables: Tables


def run_restart(task: RestartTask, sink: Any = None) -> RestartResult:
    """One restart, start to finish (what a joblib worker runs); ``sink.put(RestartEvent)``
    receives its progress when given."""
    lifeline.arm()  # a kill -9 of the main process leaves no worker searching on
    rng = np.random.default_rng(task.seed)
    scorer = Scorer(task.tables)
    clock = Clock(task.restart, task.cfg, sink)
    strategy = hill_climb if task.cfg.strategy == "hill" else simulated_annealing
    result = strategy(task.space, scorer, rng, task.cfg, clock)
    if sink is not None:
        sink.put(
            RestartEvent(
                "done", task.restart, result.iterations, result.seconds, result.evaluations, result.best_score
            )
        )
    return result


@dataclass(frozen=True)
class OptimizeProgress:
    """What the search reports: the event, the restart it came from, and the run's best."""

    event: str  # "best" (a restart improved), "tick" (heartbeat), "done" (a restart finished)
    restart: int
    iteration: int
    elapsed: float  # seconds since that restart started
    evaluations: int  # boards that restart scored so far
    restart_best: int
    best_score: int  # the best over all restarts so far
    best_board: str  # compact notation
    restarts_done: int
    restarts_total: int


ProgressCallback = Callable[[OptimizeProgress], None]


class Relay:
    """Turns restart events into OptimizeProgress for the callback, on one thread."""

    def __init__(
        self,
        space: SearchSpace,
        alphabet: Any,
        total: int,
        progress: ProgressCallback | None,
        found: dict[str, int] | None = None,
    ):
        self.found = found if found is not None else {}  # every board a restart improved to
        self.space = space
        self.alphabet = alphabet
        self.total = total
        self.progress = progress
        self.best = -1
        self.board = ""
        self.done = 0

    def put(self, ev: RestartEvent) -> None:
        if ev.kind == "best":
            board = self.space.board(np.frombuffer(ev.faces, dtype=np.int8), self.alphabet)
            # annealing reports its raw state; show the form the results will use
            key = format_compact(canonical(board) if board.rows == board.cols else board)
            self.found[key] = max(ev.score, self.found.get(key, ev.score))
            if ev.score > self.best:
                self.best, self.board = ev.score, key
        if ev.kind == "done":
            self.done += 1
        if self.progress is not None:
            update = OptimizeProgress(
                event=ev.kind,
                restart=ev.restart,
                iteration=ev.iteration,
                elapsed=ev.elapsed,
                evaluations=ev.evaluations,
                restart_best=ev.score,
                best_score=self.best,
                best_board=self.board,
                restarts_done=self.done,
                restarts_total=self.total,
            )
            self.progress(update)


def search(
    cfg: OptimizeConfig,
    space: SearchSpace,
    tables: Tables,
    alphabet: Any,
    progress: ProgressCallback | None = None,
    n_jobs: int | None = None,
    found: dict[str, int] | None = None,
) -> list[RestartResult]:
    """Run every restart (in parallel under the caller's ``joblib.parallel_config``) and return
    their results in restart order. Progress events reach ``progress`` on one thread; ``found``
    collects every board a restart improved to (compact: board -> score) as the search goes, so
    an interrupted search still has its best boards so far."""
    import joblib

    seeds = np.random.SeedSequence(cfg.seed).spawn(cfg.restarts)
    tasks = [RestartTask(i, s, cfg, space, tables) for i, s in enumerate(seeds)]
    relay = Relay(space, alphabet, cfg.restarts, progress, found)
    lifeline.mark_main()
    if joblib.effective_n_jobs(n_jobs) == 1 or cfg.restarts == 1:
        return [run_restart(t, relay) for t in tasks]
    import queue
    from multiprocessing.managers import SyncManager

    # a Manager queue, unlike a multiprocessing.Queue, can be pickled into loky workers; its
    # server process dies with this one like the workers do
    manager = SyncManager()
    manager.start(lifeline.arm, (os.getpid(),))
    try:
        events = manager.Queue()
        stop = threading.Event()

        def drain() -> None:
            while True:
                try:
                    ev = events.get(timeout=0.1)
                except queue.Empty:
                    if stop.is_set():
                        return
                    continue
                except (EOFError, OSError):
                    return
                relay.put(ev)

        pump = threading.Thread(target=drain, name="optimize-progress", daemon=True)
        pump.start()
        try:
            results = joblib.Parallel(n_jobs=n_jobs, return_as="generator_unordered")(
                joblib.delayed(run_restart)(t, events) for t in tasks
            )
            out = sorted(results, key=lambda r: r.restart)
        finally:
            stop.set()
            pump.join()
    finally:
        manager.shutdown()
    return out
