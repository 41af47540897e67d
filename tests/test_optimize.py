"""Best-board search: kernels against the batch solver, moves, canonical forms, objectives,
reproducibility, output, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.boards import Board, canonical, format_compact, parse_compact, symmetries
from pipeline.errors import ConfigError, OutputConflictError
from pipeline.optimize import (
    OptimizeConfig,
    Scorer,
    Tables,
    apply_move,
    canonical_key,
    dice_space,
    free_space,
    key_faces,
    make_objective,
    optimize,
    prepare,
    run_optimize,
    shape_symmetries,
)
from pipeline.solve import encode_boards, solve_arrays
from pipeline.solve.reference import ReferenceSolver

BEST_4X4 = "perslatgsineters"  # DOMAIN.md: 3625 points, 1045 words with ENABLE2K
LETTERS = set("aeilnprstgdo")


@pytest.fixture(scope="module")
def small_dict(tmp_path_factory: pytest.TempPathFactory, enable_words: list[str]) -> str:
    """ENABLE2K words of at most 6 letters drawn from 12 common letters (a few thousand words):
    a lexicon that is quick to compile and to search."""
    words = [w for w in enable_words if len(w) <= 6 and set(w) <= LETTERS]
    path = tmp_path_factory.mktemp("lex") / "small.txt"
    path.write_text("\n".join(words) + "\n", encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def small(small_dict: str):  # type: ignore[no-untyped-def]
    """(config, lexicon, objective, space, tables) for free letters, 4x4, the small lexicon."""
    return prepare(OptimizeConfig(small_dict))


def _random_boards(
    rng: np.random.Generator, n_faces: int, count: int, cells: int, blanks: bool = True
) -> np.ndarray:
    boards = rng.integers(0, n_faces, size=(count, cells)).astype(np.int8)
    if blanks:
        boards[rng.random((count, cells)) < 0.05] = -1
    return boards


# ---------------------------------------------------------------- kernels vs the batch solver


def test_kernel_scores_the_known_best_board(enable2k_path: str) -> None:
    _, lexicon, _, _, tables = prepare(OptimizeConfig(enable2k_path))
    board = encode_boards([parse_compact(BEST_4X4)], lexicon)[0]
    assert Scorer(tables).score(board) == 3625
    words = make_objective(lexicon, "words")
    assert Scorer(Tables.of(words, 4, 4)).score(board) == 1045


@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 5)])
def test_score_kernels_match_batch_solver(enable2k_path: str, shape: tuple[int, int]) -> None:
    rows, cols = shape
    _, lexicon, _, _, tables = prepare(OptimizeConfig(enable2k_path, shape=f"{rows}x{cols}"))
    rng = np.random.default_rng(7)
    boards = _random_boards(rng, len(lexicon.alphabet), 200, rows * cols)
    best = encode_boards([parse_compact(BEST_4X4)], lexicon)[0]
    if shape == (4, 4):
        boards[:20] = best  # high-scoring boards exercise long words
        boards[1:20, rng.integers(0, 16, 19)] = rng.integers(0, 26, 19)
    want = solve_arrays(boards, rows, cols, lexicon, collect=False).score
    scorer = Scorer(tables)
    assert scorer.score_many(boards).tolist() == want.tolist()
    # the wildcard walk gives each cell's every face at once
    for b in boards[:12]:
        for cell in range(0, rows * cols, 3):
            variants = np.repeat(b[None], len(lexicon.alphabet), 0)
            variants[:, cell] = np.arange(len(lexicon.alphabet))
            want_cell = solve_arrays(variants, rows, cols, lexicon, collect=False).score
            got = _cell_scores(scorer, b, cell, len(lexicon.alphabet))
            assert got.tolist() == want_cell.tolist()


def _cell_scores(scorer: Scorer, board: np.ndarray, cell: int, n_faces: int) -> np.ndarray:
    return scorer.cell_scores(board, cell, n_faces)


@pytest.mark.parametrize("dice", [None, "new"])
def test_neighbourhood_scores_every_move(enable2k_path: str, dice: str | None) -> None:
    _, lexicon, _, space, tables = prepare(OptimizeConfig(enable2k_path, dice=dice))
    scorer = Scorer(tables)
    rng = np.random.default_rng(3)
    for _ in range(3):
        die, fidx = space.random_state(rng)
        kind, a, b, score = scorer.neighbourhood(space, die, fidx)
        faces = space.faces(die, fidx)
        boards = np.stack(
            [
                space.faces(*apply_move(die, fidx, int(k), int(x), int(y)))
                for k, x, y in zip(kind, a, b, strict=True)
            ]
        )
        # every neighbour differs from the board, and none is listed twice
        assert (boards != faces).any(axis=1).all()
        assert len({r.tobytes() for r in boards}) == len(boards)
        want = solve_arrays(boards, 4, 4, lexicon, collect=False).score
        assert score.tolist() == want.tolist()
        n_swaps = sum(1 for i in range(16) for j in range(i + 1, 16) if faces[i] != faces[j])
        assert (kind == 1).sum() == n_swaps
        if dice is None:
            assert (kind == 0).sum() == 16 * (len(lexicon.alphabet) - 1)


def test_score_kernel_matches_reference_solver(small_dict: str, small) -> None:  # type: ignore[no-untyped-def]
    _, lexicon, _, _, tables = small
    ref = ReferenceSolver(lexicon.words, lexicon.rules)
    rng = np.random.default_rng(11)
    faces = lexicon.alphabet.faces
    scorer = Scorer(tables)
    for row in _random_boards(rng, len(faces), 30, 16):
        board = Board(4, 4, tuple("" if f < 0 else faces[f] for f in row))
        assert scorer.score(row) == ref.solve(board).score


# ---------------------------------------------------------------- canonical form

face_strategy = st.sampled_from(["a", "e", "qu", "s", "t", "", "th"])


@given(st.lists(face_strategy, min_size=16, max_size=16))
@settings(max_examples=100, deadline=None)
def test_all_symmetries_share_one_canonical_key(faces: list[str]) -> None:
    from pipeline.trie import Alphabet

    alphabet = Alphabet.from_faces(["a", "e", "qu", "s", "t", "th"])
    board = Board(4, 4, tuple(faces))
    perms = shape_symmetries(4, 4)
    assert len(perms) == 8
    keys = {canonical_key(alphabet.encode(s.faces), perms)[0] for s in symmetries(board)}
    assert len(keys) == 1
    # and the key is pipeline.boards.canonical's board
    key = keys.pop()
    names = alphabet.faces
    assert tuple("" if f < 0 else names[f] for f in key_faces(key)) == canonical(board).faces


def test_rectangles_use_the_four_shape_preserving_symmetries() -> None:
    perms = shape_symmetries(3, 5)
    assert len(perms) == 4
    faces = np.arange(15, dtype=np.int8)
    images = {canonical_key(faces[p], perms)[0] for p in perms}
    assert len(images) == 1


# ---------------------------------------------------------------- moves keep dice boards rollable


@given(seed=st.integers(0, 2**32 - 1), picks=st.lists(st.integers(0, 10**6), min_size=1, max_size=25))
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_dice_moves_never_make_an_unrollable_board(small_dict: str, seed: int, picks: list[int]) -> None:
    from pipeline.dice import load_dice_set

    _, lexicon, _, space, tables = prepare(OptimizeConfig(small_dict, dice="new"))
    dice = load_dice_set("new")
    scorer = Scorer(tables)
    die, fidx = space.random_state(np.random.default_rng(seed))
    names = lexicon.alphabet.faces

    def rollable(d: np.ndarray, f: np.ndarray) -> bool:
        board = Board(4, 4, tuple(names[x] for x in space.faces(d, f)))
        return sorted(d.tolist()) == list(range(16)) and dice.can_roll(board)

    assert rollable(die, fidx)
    for pick in picks:
        kind, a, b, _ = scorer.neighbourhood(space, die, fidx)
        m = pick % len(kind)
        die, fidx = apply_move(die, fidx, int(kind[m]), int(a[m]), int(b[m]))
        assert rollable(die, fidx)
    # annealing moves too
    state = [die, fidx, scorer.score(space.faces(die, fidx)), die.copy(), fidx.copy(), 0]
    scorer.anneal(
        space, state, 0, 300, OptimizeConfig(small_dict, t_start=50, t_end=1, cycle=300), seed % 2**31
    )
    assert rollable(state[0], state[1]) and rollable(state[3], state[4])
    assert scorer.score(space.faces(state[0], state[1])) == state[2]


def test_dice_search_reports_rollable_boards(small_dict: str) -> None:
    from pipeline.dice import load_dice_set

    res = optimize(
        OptimizeConfig(small_dict, dice="new", strategy="hill", restarts=2, iterations=4, pool_size=8)
    )
    dice = load_dice_set("new")
    assert res.boards and all(dice.can_roll(b.board) for b in res.boards)


# ---------------------------------------------------------------- objectives


def test_words_objective_counts_words(small_dict: str) -> None:
    res = optimize(
        OptimizeConfig(small_dict, objective="words", strategy="hill", restarts=1, iterations=3, pool_size=8)
    )
    assert res.boards
    for b in res.boards:
        assert b.score == b.n_words
        assert b.points >= b.n_words


def test_subset_objective_counts_only_subset_words(small_dict: str, tmp_path: Path, small) -> None:  # type: ignore[no-untyped-def]
    _, lexicon, _, _, _ = small
    subset = [w for w in lexicon.words if w.endswith("s")][::3]
    path = tmp_path / "subset.txt"
    path.write_text("\n".join([*subset, "notalexiconword"]) + "\n", encoding="utf-8")
    res = optimize(
        OptimizeConfig(
            small_dict,
            objective="subset",
            subset=str(path),
            strategy="hill",
            restarts=1,
            iterations=3,
            pool_size=8,
        )
    )
    wanted = set(subset)
    assert res.manifest["objective"]["subset_in_lexicon"] == len(subset)
    for b in res.boards:
        assert b.score == sum(lexicon.rules.points(len(w)) for w in b.words if w in wanted)
        assert b.points == sum(lexicon.rules.points(len(w)) for w in b.words)
        assert b.score < b.points


def test_subset_sharing_no_word_is_an_error(small_dict: str, tmp_path: Path) -> None:
    path = tmp_path / "subset.txt"
    path.write_text("zyzzyva\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="shares no word"):
        optimize(OptimizeConfig(small_dict, objective="subset", subset=str(path), restarts=1, iterations=1))


# ---------------------------------------------------------------- search behaviour


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


@pytest.mark.parametrize("strategy", ["hill", "anneal"])
def test_results_do_not_depend_on_n_jobs(small_dict: str, strategy: str) -> None:
    cfg = OptimizeConfig(
        small_dict, strategy=strategy, restarts=3, seed=9, pool_size=8, cycle=5000,
        iterations=4 if strategy == "hill" else 6000,
    )  # fmt: skip
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


# ---------------------------------------------------------------- output


def test_run_writes_parquet_and_manifest(small_dict: str, tmp_path: Path) -> None:
    out = tmp_path / "opt"
    cfg = OptimizeConfig(
        small_dict, strategy="hill", restarts=2, iterations=3, pool_size=8, keep=5, out=str(out), n_jobs=1
    )
    res = run_optimize(cfg)
    table = pq.read_table(out / "part-00000.parquet")
    assert table.column_names == [
        "board",
        "rows",
        "cols",
        "score",
        "points",
        "n_words",
        "words",
        "restart",
        "iteration",
        "iterations",
        "strategy",
        "objective",
        "seed",
    ]
    rows = table.to_pylist()
    assert len(rows) == len(res.boards) <= 5
    for row, b in zip(rows, res.boards, strict=True):
        assert row["board"] == format_compact(b.board) and row["score"] == b.score
        assert row["words"] == sorted(row["words"]) and len(row["words"]) == row["n_words"]
        assert row["strategy"] == "hill" and row["seed"] == 0
    manifest = json.loads((out / "_SUCCESS").read_text())
    assert manifest["format"] == "boggle-optimize"
    assert manifest["lexicon"]["content_hash"] and manifest["rules"]["name"] == "boggle"
    assert manifest["counts"]["restarts"] == 2 and manifest["counts"]["boards"] == len(rows)
    assert manifest["best"] == {"board": rows[0]["board"], "score": rows[0]["score"]}
    assert "numpy" in manifest["packages"] and manifest["config"]["restarts"] == 2
    assert not [p.name for p in out.iterdir() if p.name.endswith(".tmp")]
    # a different config may not overwrite it, unless asked
    other = OptimizeConfig(
        small_dict, strategy="hill", restarts=1, iterations=2, pool_size=8, out=str(out), n_jobs=1
    )
    with pytest.raises(OutputConflictError):
        run_optimize(other)
    import dataclasses

    run_optimize(dataclasses.replace(other, overwrite=True))
    assert json.loads((out / "_SUCCESS").read_text())["config"]["restarts"] == 1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"strategy": "tabu"}, "unknown strategy"),
        ({"objective": "subset"}, "needs --subset"),
        ({"restarts": 0}, "restarts must be"),
        ({"time_limit": -1.0}, "time limit"),
        ({"t_start": 1.0, "t_end": 5.0}, "temperatures"),
        ({"shape": "4by4"}, "shape"),
    ],
)
def test_bad_config_is_a_config_error(kwargs: dict, message: str) -> None:
    from pipeline.errors import BoggleError

    with pytest.raises(BoggleError, match=message):
        OptimizeConfig("x.txt", **kwargs)


def test_too_large_board_is_refused(small_dict: str) -> None:
    with pytest.raises(ConfigError, match="at most 64 cells"):
        prepare(OptimizeConfig(small_dict, shape="9x9"))


def test_dice_set_must_fit_the_shape(small_dict: str) -> None:
    from pipeline.errors import BoggleError

    with pytest.raises(BoggleError, match="5x5"):
        prepare(OptimizeConfig(small_dict, dice="big1979", shape="4x4"))


def test_free_and_dice_spaces() -> None:
    from pipeline.dice import load_dice_set
    from pipeline.trie import Alphabet

    space = free_space(2, 3, 26)
    assert space.table.shape == (6, 26) and (space.n_opts == 26).all()
    alphabet = Alphabet.english()
    dspace = dice_space(4, 4, load_dice_set("new"), alphabet)
    assert (dspace.n_opts == 6).all()
    assert alphabet.faces[dspace.table[0, 0]] == load_dice_set("new").dice[0][0]


# ---------------------------------------------------------------- CLI


def test_cli_optimize_prints_best_last(small_dict: str, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from pipeline.cli import app

    out = tmp_path / "cli"
    result = CliRunner().invoke(app, [
        "optimize", "-d", small_dict, "--strategy", "hill", "--restarts", "2", "--iterations", "3",
        "--pool-size", "8", "--n-jobs", "1", "--out", str(out), "--quiet",
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    last = result.output.strip().splitlines()[-1]
    table = pq.read_table(out / "part-00000.parquet").to_pylist()
    assert last == f"BEST {table[0]['board']} {table[0]['score']}"
    bad = CliRunner().invoke(app, ["optimize", "-d", small_dict, "--strategy", "tabu", "--out", str(out)])
    assert bad.exit_code == 2 and "'tabu' is not one of 'anneal', 'hill'" in bad.output
    missing = CliRunner().invoke(
        app, ["optimize", "-d", str(tmp_path / "nope.txt"), "--out", str(tmp_path / "x")]
    )
    assert missing.exit_code == 2 and "not found" in missing.output


# ---------------------------------------------------------------- the known optimum (slow)


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
