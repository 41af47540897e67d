"""Search behaviour: improvement, reproducibility, independence of n_jobs, stop reasons."""

from __future__ import annotations

import pytest

from pipeline.best.optimize import OptimizeConfig, optimize
from pipeline.best.optimize._run import prepare
from pipeline.boards import canonical, format_compact
from pipeline.solve import encode_boards, solve_arrays

BEST_4X4 = "perslatgsineters"  # docs/rules.md: 3625 points, 1045 words with ENABLE2K


@pytest.mark.parametrize("strategy", ["hill", "anneal"])
def test_short_search_improves_on_its_start(small_dict: str, strategy: str) -> None:
    events: list = []
    res = optimize(
        OptimizeConfig(
            small_dict,
            strategy=strategy,
            restarts=1,
            iterations=4 if strategy == "hill" else 20_000,
            pool_size=10,
            cycle=20_000,
        ),
        progress=events.append,
    )
    bests = [e for e in events if e.event == "best"]
    start = bests[0].restart_best
    assert res.best.score > start
    assert res.best.score == bests[-1].best_score
    # the reported board really scores that
    assert (
        solve_arrays(
            encode_boards([res.best.board], prepare(OptimizeConfig(small_dict))[1]),
            4,
            4,
            prepare(OptimizeConfig(small_dict))[1],
            collect=False,
        ).score[0]
        == res.best.score
    )


def _trajectory(events: list) -> list[tuple[int, int, int, str]]:
    return sorted((e.restart, e.iteration, e.restart_best, e.event) for e in events if e.event == "best")


@pytest.mark.parametrize("strategy", ["hill", "anneal"])
def test_fixed_seed_reproduces_the_trajectory(small_dict: str, strategy: str) -> None:
    cfg = OptimizeConfig(
        small_dict,
        strategy=strategy,
        restarts=2,
        seed=5,
        pool_size=8,
        cycle=10_000,
        iterations=5 if strategy == "hill" else 12_000,
    )
    runs = []
    for _ in range(2):
        events: list = []
        res = optimize(cfg, progress=events.append)
        runs.append(
            (
                _trajectory(events),
                [(format_compact(b.board), b.score, b.restart, b.iteration) for b in res.boards],
            )
        )
    assert runs[0] == runs[1]
    other = optimize(OptimizeConfig(**{**cfg.to_dict(), "seed": 6}))
    assert [(format_compact(b.board), b.score) for b in other.boards] != [x[:2] for x in runs[0][1]]


@pytest.mark.integration
@pytest.mark.parametrize("strategy", ["hill", "anneal"])
def test_results_do_not_depend_on_n_jobs(small_dict: str, strategy: str) -> None:
    cfg = OptimizeConfig(
        small_dict,
        strategy=strategy,
        restarts=3,
        seed=9,
        pool_size=8,
        cycle=5000,
        iterations=4 if strategy == "hill" else 6000,
    )
    runs = []
    for n_jobs in (1, 2):
        events: list = []
        res = optimize(cfg, progress=events.append, n_jobs=n_jobs)
        runs.append(
            (
                _trajectory(events),
                [(format_compact(b.board), b.score, b.restart, b.iteration) for b in res.boards],
                [(r.best_score, r.iterations, r.evaluations) for r in res.restarts],
            )
        )
        assert sum(e.event == "done" for e in events) == 3
    assert runs[0] == runs[1]


def test_best_boards_are_distinct_under_symmetry(small_dict: str) -> None:
    res = optimize(
        OptimizeConfig(small_dict, strategy="hill", restarts=2, iterations=5, pool_size=10, keep=10)
    )
    forms = [canonical(b.board) for b in res.boards]
    assert forms == [b.board for b in res.boards]
    assert len(set(forms)) == len(forms)
    scores = [b.score for b in res.boards]
    assert scores == sorted(scores, reverse=True)


def test_target_stops_a_restart(small_dict: str) -> None:
    res = optimize(
        OptimizeConfig(small_dict, strategy="hill", restarts=1, iterations=50, pool_size=8, target=1)
    )
    r = res.restarts[0]
    assert r.stopped_by == "target" and r.target_iteration == 0 and r.iterations == 0


@pytest.mark.slow
@pytest.mark.parametrize("strategy", ["anneal", "hill"])
def test_search_reaches_the_4x4_optimum(enable2k_path: str, strategy: str) -> None:
    res = optimize(
        OptimizeConfig(enable2k_path, strategy=strategy, restarts=1, seed=1, time_limit=300, target=3625)
    )
    assert res.best.score == 3625
    assert format_compact(res.best.board) == BEST_4X4
    assert res.best.n_words == 1045
    assert res.restarts[0].stopped_by == "target"


def test_one_stop_reason_in_a_fixed_order() -> None:
    import time

    import numpy as np

    from pipeline.best.optimize._budget import Clock, RestartEvent

    events: list[RestartEvent] = []

    class Sink:
        def put(self, ev: RestartEvent) -> None:
            events.append(ev)

    clock = Clock(3, OptimizeConfig(iterations=5, target=10), Sink())
    assert clock.has_budget
    assert clock.stop_reason() is None and clock.stop_reason(4) is None
    assert clock.stop_reason(5) == "iterations"
    clock.offer(9, np.zeros(16, np.int8), 2, 100)
    assert clock.stop_reason(1) is None
    clock.offer(10, np.ones(16, np.int8), 4, 200)
    assert clock.stop_reason(5) == "target" and clock.target_iteration == 4
    assert [(e.kind, e.restart, e.iteration, e.score) for e in events] == [
        ("best", 3, 2, 9),
        ("best", 3, 4, 10),
    ]
    assert np.frombuffer(events[1].faces, np.int8).tolist() == [1] * 16
    timed = Clock(0, OptimizeConfig(time_limit=0.01, iterations=1))
    time.sleep(0.02)
    assert timed.stop_reason(1) == "time"  # time before iterations
    assert not Clock(0, OptimizeConfig()).has_budget
