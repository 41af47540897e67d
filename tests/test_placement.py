"""Placing the dice by a stated policy ([boards] placement, --placement): the policy's syntax,
what it refuses, what it does to a roll (hypothesis over random sets, shapes, policies and
seeds), runs without one unchanged to the byte, the policy in the run's identity, the layout
the workers record and the analysis re-rolls, and a what-if of a placement change."""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.boards import (
    POSITIONS,
    DiceSet,
    check_placement,
    chunk_dice_layout,
    generate_compact,
    load_dice_set,
    parse_compact,
    parse_placement,
    place_dice,
    position_codes,
    roll_dice_layout,
)
from pipeline.errors import BoggleError
from tests.conftest import ENABLE2K, one_error_line, read_side_json, run_boggle

QU_BORDER = "qu: corner, edge"


def inner_cells(rows: int, cols: int) -> set[int]:
    """Cells off the border, restated: not in the first or last row or column."""
    return {r * cols + c for r in range(1, rows - 1) for c in range(1, cols - 1)}


# ---------------------------------------------------------------- the policy


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("qu: corner, edge", "qu: corner, edge"),
        ("Qu: NOT inner", "qu: corner, edge"),
        ("qu:edge corner", "qu: corner, edge"),
        ("x, qu, die 7: inner", "qu, x, die 7: inner"),
        ("die 15 , die 2: not corner", "die 2, die 15: edge, inner"),
    ],
)
def test_a_policy_has_one_spelling(text: str, canonical: str) -> None:
    assert parse_placement(text).text == canonical
    assert parse_placement(canonical).text == canonical


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("qu", "expected FACES: POSITIONS"),
        (": corner", "expected FACES: POSITIONS"),
        ("qu: middle", "positions are corner, edge, inner"),
        ("qu: not corner edge inner", "allows no position at all"),
        ("die 0: corner", "numbered from 1"),
        ("two words: corner", "neither a face nor 'die N'"),
    ],
)
def test_bad_policies_are_refused(text: str, needle: str) -> None:
    with pytest.raises(BoggleError, match=needle):
        parse_placement(text)


def test_a_policy_the_dice_cannot_follow_is_refused() -> None:
    new = load_dice_set("new")
    check_placement(parse_placement(QU_BORDER), new)
    with pytest.raises(BoggleError, match="no die has the face 'q'"):
        check_placement(parse_placement("q: corner"), new)
    with pytest.raises(BoggleError, match="no die 17; the set has 16 dice"):
        check_placement(parse_placement("die 17: corner"), new)
    # more dice may show an e than there are corners
    with pytest.raises(
        BoggleError, match=r"dice may show what it names, and a 4x4 board has only 4 such cells"
    ):
        check_placement(parse_placement("e: corner"), new)


def test_positions_are_the_reports() -> None:
    from pipeline.stats import position_classes

    for rows, cols in ((4, 4), (5, 5), (1, 6), (3, 7), (1, 1), (2, 2)):
        assert np.array_equal(position_codes(rows, cols), position_classes(rows, cols))
        inner = {int(c) for c in np.flatnonzero(position_codes(rows, cols) == POSITIONS.index("inner"))}
        assert inner == inner_cells(rows, cols)


# ---------------------------------------------------------------- what it does to a roll


@st.composite
def cases(draw: st.DrawFn) -> tuple[DiceSet, Any, int]:
    rows, cols = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    width = draw(st.integers(1, 4))
    letters = st.sampled_from([*"abcdeqx", "qu"])
    dice = tuple(tuple(draw(st.lists(letters, min_size=width, max_size=width))) for _ in range(rows * cols))
    ds = DiceSet("random", rows, cols, dice)
    faces = sorted(ds.faces)
    named = draw(st.lists(st.sampled_from(faces), min_size=0, max_size=2, unique=True))
    dice_named = draw(st.lists(st.integers(1, len(dice)), max_size=2, unique=True))
    if not named and not dice_named:
        named = [faces[0]]
    allowed = draw(st.lists(st.sampled_from(POSITIONS), min_size=1, max_size=2, unique=True))
    subjects = ", ".join([*named, *(f"die {d}" for d in dice_named)])
    return ds, parse_placement(f"{subjects}: {', '.join(allowed)}"), draw(st.integers(0, 2**32 - 1))


@settings(max_examples=300, deadline=None)
@given(case=cases())
def test_a_placed_roll_meets_the_policy_and_moves_only_what_it_must(case: tuple[DiceSet, Any, int]) -> None:
    dice, policy, seed = case
    try:
        check_placement(policy, dice)
    except BoggleError:
        return  # too many dice may show what it names for the cells it allows
    count = 200
    order, face = roll_dice_layout(dice, np.random.default_rng(seed), count)
    placed_o, placed_f = roll_dice_layout(dice, np.random.default_rng(seed), count, policy)
    pos = position_codes(dice.rows, dice.cols)
    ok_cell = np.isin(pos, [POSITIONS.index(a) for a in policy.allowed])

    def named(o: np.ndarray, f: np.ndarray) -> np.ndarray:
        return np.array(
            [
                [
                    (d + 1) in policy.dice or dice.dice[d][k] in policy.faces
                    for d, k in zip(ro, rf, strict=True)
                ]
                for ro, rf in zip(o, f, strict=True)
            ],
            dtype=bool,
        ).reshape(o.shape)

    before, after = named(order, face), named(placed_o, placed_f)
    assert not (after & ~ok_cell).any()  # the policy holds on every board
    for b in range(count):
        # the same (die, face) pairs, each die once: only where they lie changes
        assert sorted(placed_o[b]) == list(range(len(dice.dice)))
        pairs = Counter(zip(order[b], face[b], strict=True))
        assert Counter(zip(placed_o[b], placed_f[b], strict=True)) == pairs
        moved = (placed_o[b] != order[b]) | (placed_f[b] != face[b])
        wrong = before[b] & ~ok_cell
        # a cell changes only when what lay there broke the policy, or it took what did
        assert (~moved | wrong | (~before[b] & ok_cell)).all()
        assert moved.sum() <= 2 * wrong.sum()
        assert not wrong.any() or moved[wrong].all()


def test_one_qu_lands_uniformly_on_the_allowed_cells() -> None:
    """With one die that can show Qu, a placed Qu is uniform over the 12 border cells of 4x4
    (the rolls that meet the policy, each as likely as before)."""
    new = load_dice_set("new")
    order, face = roll_dice_layout(new, np.random.default_rng(3), 60_000, parse_placement(QU_BORDER))
    shown = np.array([[f for f in d] for d in new.dice], dtype=object)[order, face]
    cells = np.nonzero(shown == "qu")[1]
    counts = np.bincount(cells, minlength=16)
    assert counts[sorted(inner_cells(4, 4))].sum() == 0
    border = counts[[c for c in range(16) if c not in inner_cells(4, 4)]]
    expected = len(cells) / 12
    chi2 = float(((border - expected) ** 2 / expected).sum())
    assert chi2 < 31.3  # chi-squared, 11 degrees of freedom, p = 0.001
    assert abs(len(cells) / 60_000 - 1 / 6) < 0.01  # Qu shows as often as without the policy


def test_place_dice_leaves_the_draws_and_draws_once_a_cell() -> None:
    new = load_dice_set("new")
    rng = np.random.default_rng(9)
    order, face = roll_dice_layout(new, rng, 50)
    o2, f2 = order.copy(), face.copy()
    place_dice(parse_placement(QU_BORDER), new, order, face, rng)
    assert np.array_equal(order, o2) and np.array_equal(face, f2)  # new arrays, the draws kept
    # the stream after a placed roll is one uniform draw per cell further on
    a, b = np.random.default_rng(4), np.random.default_rng(4)
    roll_dice_layout(new, a, 30, parse_placement(QU_BORDER))
    roll_dice_layout(new, b, 30)
    b.random((30, 16))
    assert a.random() == b.random()


# ---------------------------------------------------------------- runs


def test_runs_without_a_policy_roll_what_they_always_rolled() -> None:
    """Golden: the boards of fa74e83 (before placement existed), for three sets, and the run_id
    of a config without a policy. Since schema 6 a Qu face is written ``[qu]`` (fa74e83 wrote
    ``q``): the same boards in the notation of then; the run_id differs by the identity's
    schema version alone."""
    golden = {
        "new": "5a0d7db4678d1287c86e4b6e112e052f02d31a8473ff4b8b40c4d1d1c6b14179",
        "big1979": "e3888d91b24320f993a7e4a6542afaf9744d2a2afeff68bc4ed31103b74beaf1",
        "superbig": "65b36127ec871673acc06e8c24fee85c843231a587108046694759fb68c861e1",
    }
    for dice, digest in golden.items():
        text = "".join(generate_compact(dice, 3000, 42, None, 700)).replace("[qu]", "q")
        assert hashlib.sha256(text.encode()).hexdigest() == digest, dice
    from pipeline.config import config_from_dict
    from pipeline.runner._plan import plan_run
    from pipeline.store import run_id_of

    raw = {
        "boards": {"dice": "new", "count": 1000, "seed": 7, "chunk_size": 250},
        "lexicon": {"path": "enable2k"},
        "run": {"out": "/tmp/never-written"},
    }
    identity = plan_run(config_from_dict(raw)).identity
    assert identity["schema_version"] == 6 and run_id_of(identity) == "932e1321e7ab"
    assert run_id_of({**identity, "schema_version": 5}) == "6cb81b4bf196"
    raw["boards"]["placement"] = "qu: not inner"  # type: ignore[index]
    placed = plan_run(config_from_dict(raw))
    assert run_id_of(placed.identity) != "6cb81b4bf196"
    assert placed.identity["data"]["boards"]["placement"] == QU_BORDER


def test_the_config_refuses_a_policy_it_cannot_follow(tmp_path: Path) -> None:
    out = tmp_path / "r"
    for args, needle in (
        (["--placement", "qu: middle"], "--placement: placement 'qu: middle': positions are"),
        (["--placement", "e: corner"], "[boards] placement 'e: corner': 8 dice may show"),
        (["--dice", "uniform", "--placement", QU_BORDER], "the uniform generator rolls no dice to place"),
    ):
        res = run_boggle("run", "--count", "10", "-d", "enable2k", "--out", str(out), "-q", *args)
        assert res.returncode == 2, res.stderr
        one_error_line(res, needle)
    assert not out.exists()


@pytest.fixture(scope="module")
def placed_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from pipeline.runner import run_from_file
    from tests.conftest import REPO

    out = tmp_path_factory.mktemp("placed") / "qu-border"
    run_from_file(
        REPO / "configs" / "smoke.toml",
        {
            "run.out": str(out),
            "run.n_jobs": 1,
            "lexicon.path": ENABLE2K,
            "boards.dice": "new",
            "boards.count": 900,
            "boards.chunk_size": 300,
            "boards.seed": 5,
            "boards.placement": "Qu: not inner",
        },
    )
    return out


def _parts(run_dir: Path) -> list[Any]:
    import pyarrow.parquet as pq

    return [pq.read_table(f) for f in sorted(run_dir.glob("part-*.parquet"))]


def test_a_placed_run_holds_the_placed_boards_and_records_its_policy(placed_run: Path) -> None:
    boards = [b for t in _parts(placed_run) for b in t.column("board").to_pylist()]
    assert boards == "".join(generate_compact("new", 900, 5, None, 300, QU_BORDER)).splitlines()
    unplaced = "".join(generate_compact("new", 900, 5, None, 300)).splitlines()
    moved = [a != b for a, b in zip(boards, unplaced, strict=True)]
    assert 0 < sum(moved) < 90  # about 4% of boards had Qu inside
    for b in boards:
        faces = parse_compact(b, (4, 4)).faces
        assert not any(faces[c] == "qu" for c in inner_cells(4, 4))
    manifest = read_side_json(placed_run)
    assert manifest["config"]["boards"]["placement"] == QU_BORDER
    assert manifest["identity"]["data"]["boards"]["placement"] == QU_BORDER


def test_the_layout_recorded_and_re_rolled_is_the_placed_one(placed_run: Path) -> None:
    """The per-die counts the workers recorded are those of the placed dice, and the analysis
    re-rolls a chunk (for runs without statistics) with the run's policy: the re-rolled dice
    give back every stored board; without the policy they do not."""
    from dataclasses import replace

    from pipeline.analyze import load_runs
    from pipeline.analyze._gather import chunk_layout, dice_recipe
    from pipeline.stats import die_sums
    from tests.conftest import gathered

    (run,) = load_runs([placed_run])
    recipe, _, why = dice_recipe(run)
    assert recipe is not None and recipe.placement == QU_BORDER, why
    new = load_dice_set("new")
    n_total = s_total = 0
    for chunk, table in enumerate(_parts(placed_run)):
        layout = chunk_layout(recipe, chunk, table)
        assert layout is not None
        order, side = chunk_dice_layout(new, 5, chunk, table.num_rows, QU_BORDER)
        assert np.array_equal(layout.die, order) and np.array_equal(layout.side, side)
        assert chunk_layout(replace(recipe, placement=None), chunk, table) is None
        n, s = die_sums(layout, table.column("score").to_numpy().astype(np.int64))
        n_total, s_total = n_total + n, s_total + s
    g = gathered([placed_run])[0]
    assert g.parts_recorded == 3 and g.stats.die is not None
    assert (g.stats.die[0] == n_total).all() and (g.stats.die[1] == s_total).all()


def test_a_run_with_another_policy_is_another_run(placed_run: Path) -> None:
    base = ["run", "configs/smoke.toml", "-d", ENABLE2K, "--dice", "new", "--count", "900"]
    base += ["--chunk-size", "300", "--seed", "5", "-j", "1", "--out", str(placed_run), "-q"]
    same = run_boggle(*base, "--placement", "qu: corner,edge")  # the same policy spelled otherwise
    assert same.returncode == 0, same.stderr
    other = run_boggle(*base, "--placement", "qu: corner")
    assert other.returncode == 4
    none = run_boggle(*base)
    assert none.returncode == 4


def test_generate_prints_the_placed_boards() -> None:
    res = run_boggle(
        "generate", "--count", "400", "--seed", "5", "--chunk-size", "300", "--placement", QU_BORDER
    )
    assert res.returncode == 0, res.stderr
    assert (
        res.stdout.splitlines() == "".join(generate_compact("new", 400, 5, None, 300, QU_BORDER)).splitlines()
    )
    bad = run_boggle("generate", "--dice", "english", "--placement", QU_BORDER)
    assert bad.returncode == 2
    one_error_line(bad, "the english generator rolls no dice to place")


def test_what_if_measures_a_placement_change(tmp_path: Path) -> None:
    """Same draws, the policy applied to the variant only: the boards differ exactly where a Qu
    lay on an inner cell, and the measured gain is the mean of those boards' differences."""
    from pipeline.design import run_what_if

    res = run_what_if(
        "new",
        [],
        tmp_path / "w",
        count=3000,
        seed=2,
        dictionary=ENABLE2K,
        n_jobs=1,
        placement="qu: not inner",
    )
    assert (res.placement_base, res.placement_variant) == (None, QU_BORDER)
    assert res.changed == [] and res.prediction.estimate is None and "policies" in res.prediction.why
    base = "".join(generate_compact("new", 3000, 2)).splitlines()
    inside = [any(parse_compact(b, (4, 4)).faces[c] == "qu" for c in inner_cells(4, 4)) for b in base]
    assert res.boards_differ == pytest.approx(sum(inside) / 3000)
    assert (
        res.gain_low is not None and res.gain_high is not None and res.gain_low <= res.gain <= res.gain_high
    )
    rec = res.to_dict()
    assert rec["placement"] == {"base": None, "variant": QU_BORDER}
    with pytest.raises(BoggleError, match="--placement: placement 'j, k, qu, x, z: inner': 5 dice may show"):
        run_what_if("new", [], tmp_path / "x", count=10, seed=1, placement="j, k, x, z, qu: inner")
    assert not (tmp_path / "x").exists()
