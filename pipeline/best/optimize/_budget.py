"""One restart's budget and bookkeeping: the clock, the stop reason, the progress events it
sends, the distinct boards it keeps, and what it reports."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pipeline.best.optimize._config import OptimizeConfig

HEARTBEAT_S = 0.5  # seconds between "tick" events


@dataclass(frozen=True)
class RestartEvent:
    """What a restart tells the driver (through a queue when it runs in a worker process)."""

    kind: str  # "best" (the restart improved), "tick" (heartbeat), "done" (it finished)
    restart: int
    iteration: int
    elapsed: float  # seconds since the restart started
    evaluations: int  # boards scored so far
    score: int  # the restart's best so far
    faces: bytes = b""  # with "best": the board's face indices (int8)


@dataclass
class Found:
    """A board a restart found: canonical key, score, its dice, and when."""

    key: bytes
    score: int
    die: np.ndarray
    fidx: np.ndarray
    iteration: int


@dataclass
class RestartResult:
    restart: int
    best_score: int
    iterations: int
    evaluations: int
    climbs: int  # climbs (hill) or cooling cycles (anneal) started
    seconds: float
    target_s: float | None  # seconds until the target was reached
    target_iteration: int | None
    stopped_by: str  # "converged", "cycle", "iterations", "time", "target"
    found: list[Found] = field(default_factory=list)  # the best distinct boards, best first

    def summary(self) -> dict[str, Any]:
        d = {k: v for k, v in dataclasses.asdict(self).items() if k != "found"}
        d["seconds"] = round(self.seconds, 3)
        if self.target_s is not None:
            d["target_s"] = round(self.target_s, 3)
        return d


class Clock:
    """Budget and progress for one restart; ``sink.put(RestartEvent)`` when a sink is given."""

    def __init__(self, restart: int, cfg: OptimizeConfig, sink: Any = None):
        self.restart = restart
        self.cfg = cfg
        self.sink = sink
        self.t0 = time.monotonic()
        self.last_beat = self.t0
        self.best = -1
        self.target_s: float | None = None
        self.target_iteration: int | None = None

    @property
    def has_budget(self) -> bool:
        """With an iteration or time budget a restart starts climbs/cycles until it is spent."""
        return self.cfg.iterations is not None or self.cfg.time_limit is not None

    def elapsed(self) -> float:
        return time.monotonic() - self.t0

    def out_of_time(self) -> bool:
        return self.cfg.time_limit is not None and self.elapsed() >= self.cfg.time_limit

    def stop_reason(self, iterations: int | None = None) -> str | None:
        """Why the restart must stop now: ``"target"``, ``"time"`` or (when ``iterations``
        done are given) ``"iterations"``, in that order; None to go on."""
        if self.target_s is not None:
            return "target"
        if self.out_of_time():
            return "time"
        if iterations is not None and self.cfg.iterations is not None and iterations >= self.cfg.iterations:
            return "iterations"
        return None

    def offer(self, score: int, faces: np.ndarray, iteration: int, evaluations: int) -> None:
        """Record a restart-best candidate (and tell the sink when it improves)."""
        if score <= self.best:
            return
        self.best = score
        if self.cfg.target is not None and score >= self.cfg.target and self.target_s is None:
            self.target_s = self.elapsed()
            self.target_iteration = iteration
        self.send("best", iteration, evaluations, faces.tobytes())

    def beat(self, iteration: int, evaluations: int) -> None:
        now = time.monotonic()
        if self.sink is not None and now - self.last_beat >= HEARTBEAT_S:
            self.last_beat = now
            self.send("tick", iteration, evaluations)

    def send(self, kind: str, iteration: int, evaluations: int, faces: bytes = b"") -> None:
        if self.sink is not None:
            event = RestartEvent(kind, self.restart, iteration, self.elapsed(), evaluations, self.best, faces)
            self.sink.put(event)


def keep_best(found: dict[bytes, Found], new: Sequence[Found], keep: int) -> dict[bytes, Found]:
    """The ``keep`` best distinct boards of ``found`` and ``new`` (a board keeps its earliest
    iteration)."""
    for f in new:
        old = found.get(f.key)
        if old is None or old.iteration > f.iteration:
            found[f.key] = f
    ranked = sorted(found.values(), key=lambda f: (-f.score, f.key))[:keep]
    return {f.key: f for f in ranked}


def restart_result(
    clock: Clock, evaluations: int, kept: dict[bytes, Found], iterations: int, climbs: int, stopped_by: str
) -> RestartResult:
    """What one restart of either strategy reports: its distinct boards best first."""
    return RestartResult(
        clock.restart,
        max(f.score for f in kept.values()),
        iterations,
        evaluations,
        climbs,
        clock.elapsed(),
        clock.target_s,
        clock.target_iteration,
        stopped_by,
        sorted(kept.values(), key=lambda f: (-f.score, f.key)),
    )
