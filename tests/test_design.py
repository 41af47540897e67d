"""boggle design-dice: the paired evaluation, the moves' constraints, the search finding a
planted improvement, determinism, resume, and the CLI's refusals."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pipeline.boards import load_dice_set, roll_dice_layout
from pipeline.design import (
    DesignConfig,
    Objective,
    Solver,
    design_dice,
    evaluate_candidate,
    paired_batch,
    parse_budget,
    parse_objective,
    prepare,
    propose,
)
from pipeline.solve import solve_arrays
from tests.conftest import one_error_line, run_boggle

# a 3x3 set: nine dice of the new set, the first made of rare letters (the planted flaw)
RARE = "j j x x z z\n"
NEW9 = [
    "a a e e g n",
    "a b b j o o",
    "a c h o p s",
    "a f f k p s",
    "a o o t t w",
    "c i m o t u",
    "d e i l r x",
    "d e l r v y",
    "d i s t t y",
]


def dice_file(tmp_path: Path, first: str | None = None) -> str:
    path = tmp_path / "start.txt"
    lines = [*NEW9]
    if first is not None:
        lines[0] = first.strip()
    lines[4] = "e i o qu t w"  # one Qu face
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def config(tmp_path: Path, start: str, out: str = "out", objective: str = "mean", **kw: Any) -> DesignConfig:
    settings: dict[str, Any] = {
        "budget": 12_000,
        "batch": 400,
        "max_batches": 3,
        "validate": 4_000,
        "seed": 5,
    }
    return DesignConfig(start, objective, "enable2k", str(tmp_path / out), **{**settings, **kw})


def test_parse_objective_and_budget() -> None:
    assert parse_objective("band:200..250") == Objective("band:200..250", "band", 200, 250)
    assert parse_objective("bad:50").words == 50
    assert parse_objective("mean").kind == "mean"
    assert parse_budget("2M") == 2_000_000 and parse_budget("250k") == 250_000
    for bad in ("band:", "bad:0", "median", "band:9..3"):
        with pytest.raises(Exception, match="--objective"):
            parse_objective(bad)


def test_objective_values() -> None:
    score = np.array([10, 200, 30])
    words = np.array([40, 220, 260])
    assert parse_objective("band:200..250").values(score, words).tolist() == [0, 1, 0]
    assert parse_objective("bad:50").values(score, words).tolist() == [1, 0, 0]
    assert parse_objective("mean").values(score, words).tolist() == [10, 200, 30]


def test_paired_batch_equal_candidate_is_exactly_zero_and_shortcut_is_exact(tmp_path: Path) -> None:
    cfg = config(tmp_path, dice_file(tmp_path))
    start, objective, lexicon, _ = prepare(cfg)
    solver = Solver(lexicon, "enable2k", 3, 3, 1)
    table = start.face_table(lexicon.alphabet)
    order, face = roll_dice_layout(start, np.random.default_rng(1), 1000)
    same = paired_batch(solver, table, table.copy(), order, face)
    assert same.differ == 0
    assert np.array_equal(same.score_a, same.score_b) and np.array_equal(same.words_a, same.words_b)

    def batch_of(k: int) -> tuple[Any, ...]:
        o, f = roll_dice_layout(start, np.random.default_rng(k), 500)
        return o, f, None

    d = evaluate_candidate(solver, objective, cfg, table, table.copy(), batch_of)
    assert (d.estimate, d.low, d.high, d.accept) == (0.0, 0.0, 0.0, False)

    # a changed die: only the boards showing it are solved for the candidate, and the result is
    # what solving every candidate board gives
    other = table.copy()
    other[0] = table[3]
    p = paired_batch(solver, table, other, order, face)
    full = solve_arrays(other[order, face], 3, 3, lexicon, collect=False)
    assert np.array_equal(p.score_b, full.score) and np.array_equal(p.words_b, full.n_words)
    assert 0 < p.differ < 1000


def test_moves_respect_constraints(tmp_path: Path) -> None:
    start = load_dice_set(dice_file(tmp_path))
    rng = np.random.default_rng(0)
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1) if chr(c) != "q"] + ["qu"]
    for _ in range(300):
        swap = propose(start.dice, rng, None, True)
        assert swap is not None and swap.new is None
        after = swap.apply(start.dice)
        assert Counter(f for d in after for f in d) == start.face_counts() and after != start.dice
        move = propose(start.dice, rng, letters, True)
        assert move is not None
        after = move.apply(start.dice)
        assert sum(d.count("qu") for d in after) == 1
        assert [len(d) for d in after] == [6] * 9


def test_max_same_caps_a_letter_on_a_die(tmp_path: Path) -> None:
    start = load_dice_set(dice_file(tmp_path))
    rng = np.random.default_rng(1)
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1) if chr(c) != "q"]
    dice = start.dice
    for _ in range(400):  # a walk of accepted moves: every die keeps at most 2 of a letter
        move = propose(dice, rng, letters, True, max_same=2)
        assert move is not None
        dice = move.apply(dice)
        assert max(Counter(d).most_common(1)[0][1] for d in dice) <= 2
    # without the cap the same walk piles letters up
    dice, rng = start.dice, np.random.default_rng(1)
    peaks = []
    for _ in range(400):
        move = propose(dice, rng, letters, True)
        assert move is not None
        dice = move.apply(dice)
        peaks.append(max(Counter(d).most_common(1)[0][1] for d in dice))
    assert max(peaks) > 2


def test_planted_flaw_found_validated_deterministic(tmp_path: Path) -> None:
    start = dice_file(tmp_path, RARE)
    kw = dict(faces="free", budget=16_000)
    res = design_dice(config(tmp_path, start, "a", **kw))
    assert res.status == "complete" and res.report["moves_accepted"] >= 1
    proposed = load_dice_set(str(res.out / "dice.txt"))
    rare = sum(proposed.dice[0].count(x) for x in "jxz")
    assert rare < 6  # the search replaced rare faces of the planted die
    assert sum(d.count("qu") for d in proposed.dice) == 1
    v = res.report["validation"]["objective"]
    assert v["difference"] > 0 and v["low"] > 0 and v["better"]
    # an independent check: fresh boards of each set, solved whole, unpaired
    _, _, lexicon, _ = prepare(config(tmp_path, start, "x", **kw))
    from pipeline.boards import generate_boards

    means = []
    for dice in (load_dice_set(start), proposed):
        boards = generate_boards(dice, lexicon.alphabet, np.random.default_rng(99), 6000, 3, 3)
        means.append(solve_arrays(boards, 3, 3, lexicon, collect=False).score.mean())
    assert means[1] > means[0]
    assert abs((means[1] - means[0]) - v["difference"]) < 4 * max(1.0, v["high"] - v["low"])
    # the same seed and arguments: the same set, byte for byte; a re-run reuses the result
    again = design_dice(config(tmp_path, start, "b", **kw))
    assert (again.out / "dice.txt").read_bytes() == (res.out / "dice.txt").read_bytes()
    assert design_dice(config(tmp_path, start, "a", **kw)).status == "already complete"


def test_fixed_faces_keep_letter_counts(tmp_path: Path) -> None:
    start = dice_file(tmp_path, RARE)
    res = design_dice(config(tmp_path, start, objective="bad:20", budget=8_000))
    proposed = load_dice_set(str(res.out / "dice.txt"))
    assert proposed.face_counts() == load_dice_set(start).face_counts()
    report = json.loads((res.out / "report.json").read_text())
    assert report["face_count_changes"] == {}
    lines = (res.out / "moves.csv").read_text().splitlines()
    assert len(lines) == 1 + report["moves_accepted"]


class Stop(Exception):
    pass


def test_resume_after_interruption_gives_the_same_result(tmp_path: Path) -> None:
    start = dice_file(tmp_path, RARE)
    kw = dict(faces="free", budget=12_000)
    whole = design_dice(config(tmp_path, start, "whole", **kw))
    calls = []

    def stop(p: Any) -> None:
        calls.append(p)
        if len(calls) == 4:
            raise Stop

    with pytest.raises(Stop):
        design_dice(config(tmp_path, start, "cut", **kw), progress=stop)
    assert not (tmp_path / "cut" / "_SUCCESS").exists()
    resumed = design_dice(config(tmp_path, start, "cut", **kw))
    assert resumed.status == "resumed"
    assert (tmp_path / "cut" / "dice.txt").read_bytes() == (tmp_path / "whole" / "dice.txt").read_bytes()
    for key in ("moves", "candidates", "boards_solved", "validation"):
        assert resumed.report[key] == whole.report[key], key


def test_bad_settings_refused(tmp_path: Path) -> None:
    from pipeline.errors import ConfigError

    start = dice_file(tmp_path)
    for kw, needle in (
        ({"faces": "any"}, "--faces"),
        ({"objective": "band:1..2", "max_sd": 3.0}, "--max-sd"),
        ({"batch": 1}, "--batch"),
        ({"max_batches": 0}, "--max-batches"),
        ({"max_same": 0}, "--max-same"),
        ({"undecided": "maybe"}, "--undecided"),
        ({"validate": 1}, "--validate"),
    ):
        with pytest.raises(ConfigError, match=needle):
            config(tmp_path, start, **kw)
    with pytest.raises(ConfigError, match="--budget"):
        parse_budget("lots")


def test_cli_refusals(tmp_path: Path) -> None:
    start = dice_file(tmp_path)
    base = ["design-dice", "--start", start, "-d", "enable2k", "--out", str(tmp_path / "o"), "-q"]
    res = run_boggle(*base, "--objective", "median")
    assert res.returncode == 2, res.stderr
    one_error_line(res, "--objective")
    res = run_boggle("design-dice", "--start", "uniform", "--out", str(tmp_path / "u"), "--budget", "lots")
    assert res.returncode == 2
    one_error_line(res, "--budget")
    assert not (tmp_path / "o").exists() and not (tmp_path / "u").exists()


def test_cli_runs_and_refuses_another_config(tmp_path: Path) -> None:
    start = dice_file(tmp_path)
    out = tmp_path / "cli"
    args = [
        "design-dice",
        "--start",
        start,
        "--objective",
        "mean",
        "--budget",
        "3k",
        "--batch",
        "300",
        "--validate",
        "2000",
        "-d",
        "enable2k",
        "--out",
        str(out),
        "-q",
        "--summary-json",
        "-",
    ]
    res = run_boggle(*args)
    assert res.returncode == 0, res.stderr
    summary = json.loads(res.stdout)
    assert summary["status"] == "complete" and summary["validation"]["boards"] == 2000
    assert "validation on 2,000 fresh boards" in res.stderr
    load_dice_set(str(out / "dice.txt"))
    other = run_boggle(*[a if a != "3k" else "4k" for a in args])
    assert other.returncode == 4
    one_error_line(other, "different config")


def test_workers_do_not_change_the_result(tmp_path: Path) -> None:
    """Batches solved on two loky workers or two threads give the same search, byte for byte, as
    in-process."""
    start = dice_file(tmp_path, RARE)
    kw: dict[str, Any] = {"faces": "free", "budget": 6_000, "batch": 600, "max_batches": 2, "validate": 2_000}
    one = design_dice(config(tmp_path, start, "one", **kw))
    two = design_dice(config(tmp_path, start, "two", n_jobs=2, **kw))
    assert (one.out / "dice.txt").read_bytes() == (two.out / "dice.txt").read_bytes()
    assert one.report["moves"] == two.report["moves"]
    assert one.report["validation"] == two.report["validation"]
    threads = design_dice(config(tmp_path, start, "threads", n_jobs=2, backend="threading", **kw))
    assert (threads.out / "dice.txt").read_bytes() == (one.out / "dice.txt").read_bytes()
    assert threads.report["cpu_s"] > 0


def test_undecided_reject_accepts_only_clear_gains(tmp_path: Path) -> None:
    start = dice_file(tmp_path, RARE)
    res = design_dice(config(tmp_path, start, faces="free", budget=10_000, undecided="reject"))
    moves = res.report["moves"]
    assert moves and all(m["low"] > 0 for m in moves)
    loose = design_dice(config(tmp_path, start, "loose", faces="free", budget=10_000))
    assert any(m["low"] <= 0 for m in loose.report["moves"])  # the default lets some through on the estimate
