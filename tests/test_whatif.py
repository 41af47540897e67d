"""``boggle what-if``: a paired experiment of a dice set and a variant, checked against boards the
test builds and solves itself."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pipeline.boards import (
    Board,
    chunk_plan,
    chunk_seed,
    load_dice_set,
    parse_compact,
    read_dice_file,
    roll_dice_layout,
)
from pipeline.design import WhatIfResult, apply_swaps, paired_gain, parse_swap, run_what_if
from pipeline.errors import ConfigError
from pipeline.solve import solve_boards
from pipeline.store.dataset import read_run
from tests.conftest import one_error_line, run_boggle

COUNT, CHUNK, SEED = 600, 200, 4
NEW = load_dice_set("new")


def what_if(tmp_path: Path, swaps: list[str], name: str = "w") -> WhatIfResult:
    return run_what_if(
        "new",
        swaps,
        tmp_path / name,
        count=COUNT,
        seed=SEED,
        dictionary="enable2k",
        chunk_size=CHUNK,
        n_jobs=1,
    )


def layouts() -> tuple[np.ndarray, np.ndarray]:
    """The die and face index on every cell of every board, from the generator's own draws."""
    dies, sides = [], []
    for ch in chunk_plan(COUNT, CHUNK):
        order, side = roll_dice_layout(NEW, np.random.default_rng(chunk_seed(SEED, ch.chunk)), ch.count)
        dies.append(order)
        sides.append(side)
    return np.concatenate(dies), np.concatenate(sides)


def run_boards(run_dir: Path) -> tuple[list[str], np.ndarray]:
    t = read_run(run_dir, ["board_id", "board", "score"]).sort_by("board_id")
    return t.column("board").to_pylist(), t.column("score").to_numpy().astype(np.float64)


def test_swap_syntax_and_edits() -> None:
    v = apply_swaps(
        NEW, [parse_swap("die 15 = die 5"), parse_swap("Die 1: A -> qu"), parse_swap("16 : z -> _")]
    )
    assert v.dice[14] == NEW.dice[4] and v.dice[0] == ("qu", "a", "e", "e", "g", "n")
    assert v.dice[15] == ("h", "l", "n", "n", "r", "") and v.dice[1:14] == NEW.dice[1:14]
    with pytest.raises(ConfigError, match="no die 17; the set has 16 dice, numbered 1-16"):
        apply_swaps(NEW, [parse_swap("die 17 = die 1")])
    with pytest.raises(ConfigError, match=r"die 1 \(a a e e g n\) has no face 'z'"):
        apply_swaps(NEW, [parse_swap("die 1: z -> a")])
    for bad in ("die 1 -> die 2", "die 1: 4 -> a", "swap 1 and 2"):
        with pytest.raises(ConfigError, match="--swap"):
            parse_swap(bad)


def test_paired_gain_is_the_mean_difference_with_its_interval() -> None:
    rng = np.random.default_rng(0)
    a = rng.integers(0, 300, 500).astype(float)
    b = a + rng.normal(2.0, 5.0, 500)
    d = b - a
    mean, low, high, sd = paired_gain(a, b)
    half = 1.96 * np.std(d, ddof=1) / np.sqrt(500)
    assert mean == pytest.approx(d.mean()) and sd == pytest.approx(np.std(d, ddof=1))
    assert (low, high) == pytest.approx((d.mean() - half, d.mean() + half))


def test_no_change_measures_exactly_zero(tmp_path: Path) -> None:
    res = what_if(tmp_path, [])
    assert res.changed == [] and res.gain == 0.0 and res.gain_low <= 0.0 <= res.gain_high
    assert res.unchanged == 1.0 and res.higher == res.lower == 0.0 and res.boards_differ == 0.0
    assert res.prediction.estimate == 0.0
    assert run_boards(res.base_dir)[0] == run_boards(res.variant_dir)[0]


def test_planted_copy_is_recovered_by_solving_the_variant_boards_independently(
    tmp_path: Path, enable_lexicon: object
) -> None:
    res = what_if(tmp_path, ["die 15 = die 5"])
    assert res.changed == [15] and res.boards == COUNT
    base_boards, base_scores = run_boards(res.base_dir)
    variant_boards, variant_scores = run_boards(res.variant_dir)
    # build each variant board from its base board: die 15's cell shows die 5's face of the same index
    die, side = layouts()
    built = []
    for b, text in enumerate(base_boards):
        faces = list(parse_compact(text, (4, 4)).faces)
        for cell in range(16):
            assert faces[cell] == NEW.dice[die[b, cell]][side[b, cell]]  # the layout is the base's
            if die[b, cell] == 14:
                faces[cell] = NEW.dice[4][side[b, cell]]
        built.append(Board(4, 4, tuple(faces)))
    # the variant run holds exactly those boards: same permutation and face picks, one cell changed
    assert [parse_compact(t, (4, 4)) for t in variant_boards] == built
    mine = np.array([r.score for r in solve_boards(built, enable_lexicon)], dtype=np.float64)
    assert np.array_equal(mine, variant_scores)
    diff = mine - base_scores
    assert res.gain == pytest.approx(diff.mean()) and res.gain > 0  # vowels for h i m n qu u
    half = 1.96 * diff.std(ddof=1) / np.sqrt(COUNT)
    assert (res.gain_low, res.gain_high) == pytest.approx((diff.mean() - half, diff.mean() + half))
    assert (res.higher, res.lower, res.unchanged) == pytest.approx(
        ((diff > 0).mean(), (diff < 0).mean(), (diff == 0).mean())
    )
    # the model's prediction is the change in die 15's value that the analysis reports
    from pipeline.analyze._cells import adjusted_effects, decode_boards

    faces, codes = decode_boards(base_boards, 4, 4)
    _, fit, _ = adjusted_effects(codes, faces, base_scores)
    coef = dict(zip(faces, fit.coef, strict=True))
    expected = np.mean([coef[f] for f in NEW.dice[4]]) - np.mean([coef[f] for f in NEW.dice[14]])
    assert (
        res.prediction.estimate == pytest.approx(expected)
        and res.prediction.low < expected < res.prediction.high
    )
    # the variant's dice file reads back as the variant
    assert read_dice_file(str(tmp_path / "w" / "variant-dice.txt")).dice == res.variant.dice


def test_a_die_of_a_rare_letter_loses_points(tmp_path: Path) -> None:
    swaps = [
        "die 11: e -> j",
        "die 11: e -> j",
        "die 11: i -> j",
        "die 11: n -> j",
        "die 11: s -> j",
        "die 11: u -> j",
    ]
    res = what_if(tmp_path, swaps)
    assert res.variant.dice[10] == ("j",) * 6
    base_scores, variant_scores = run_boards(res.base_dir)[1], run_boards(res.variant_dir)[1]
    diff = variant_scores - base_scores
    assert res.gain == pytest.approx(diff.mean()) and res.gain_high < 0 and res.lower > res.higher
    assert res.prediction.estimate is not None and res.prediction.estimate < 0


@pytest.mark.integration
def test_cli_prints_and_records_the_comparison(tmp_path: Path) -> None:
    out, summary = tmp_path / "w", tmp_path / "s.json"
    res = run_boggle(
        "what-if",
        "new",
        "--swap",
        "die 15 = die 5",
        "--count",
        "300",
        "--chunk-size",
        "100",
        "--seed",
        "2",
        "-d",
        "enable2k",
        "-j",
        "1",
        "-q",
        "--out",
        str(out),
        "--summary-json",
        str(summary),
    )
    assert res.returncode == 0, res.stderr
    record = json.loads(summary.read_text())
    assert record["status"] == "complete" and record["changed_dice"] == [15] and record["boards"] == 300
    a, b = run_boards(out / "base")[1], run_boards(out / "variant")[1]
    assert record["gain"] == pytest.approx((b - a).mean())
    assert f"measured gain per board: {record['gain']:+.2f}" in res.stdout
    assert "additive model (base run) predicts" in res.stdout
    # both are normal runs the analysis compares
    rep = run_boggle("analyze", str(out / "base"), str(out / "variant"), "--out", str(tmp_path / "rep"), "-q")
    assert rep.returncode == 0, rep.stderr


def test_cli_refuses_a_bad_swap_before_writing(tmp_path: Path) -> None:
    out = tmp_path / "w"
    res = run_boggle("what-if", "new", "--swap", "die 99 = die 1", "--out", str(out))
    assert res.returncode == 2
    one_error_line(res, "--swap 'die 99 = die 1': no die 99")
    assert not out.exists()
    res = run_boggle("what-if", "new", "--dice-b", "big1979", "--out", str(out))
    assert res.returncode == 2 and not out.exists()
    one_error_line(res, "big1979")


def test_another_variant_in_the_same_folder_is_refused_before_its_dice_file_changes(tmp_path: Path) -> None:
    first = what_if(tmp_path, ["die 15 = die 5"])
    dice_file = tmp_path / "w" / "variant-dice.txt"
    before = dice_file.read_text()
    again = what_if(tmp_path, ["die 15 = die 5"])  # the same: both runs reused
    assert [s.status for s in again.runs] == ["already complete"] * 2 and again.gain == first.gain
    from pipeline.errors import OutputConflictError

    with pytest.raises(OutputConflictError, match="holds the run of another variant"):
        what_if(tmp_path, ["die 15 = die 6"])
    assert dice_file.read_text() == before
    with pytest.raises(ConfigError, match="letter generator"):
        run_what_if("uniform", [], tmp_path / "u", count=10, seed=0)
