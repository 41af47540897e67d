"""boggle prove: bounds are sound, branch and bound equals brute force, resume, coverage, CLI."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from unittest.mock import patch

import numpy as np
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import pipeline.best.prove._job as prove_job
import pipeline.best.prove._search as search
from pipeline.best.prove import ProveConfig, run_prove
from pipeline.best.prove._bounds import build_prove_trie, class_bounds, class_bounds_reference
from pipeline.best.prove._bounds import class_boards as pipeline_class_boards
from pipeline.best.prove._certificate import check_coverage
from pipeline.best.prove._classes import (
    ClassSpace,
    canonical_class_ids,
    class_digits,
    default_spec,
    parse_buckets,
)
from pipeline.best.prove._job import META_CPU, META_SESSION, META_SESSION_S, dispatch_order
from pipeline.best.prove._search import ClassOutcome, ClassProver
from pipeline.boards import Board, canonical, format_compact, geometry, parse_compact
from pipeline.cli import app, render
from pipeline.errors import BoggleError, ConfigError
from pipeline.lexicon import compile_for_boards
from pipeline.lexicon.trie import Alphabet
from pipeline.rules import get_rules
from pipeline.solve import solve_arrays
from tests.conftest import tiny_proof_args

CLI = CliRunner()


def test_our_solver_scores_the_3x3_optimum(enable2k_path: str) -> None:
    lex = compile_for_boards(enable2k_path, get_rules("boggle"))
    board = parse_compact("streaedlp", (3, 3))
    faces = lex.alphabet.encode(board.faces)[None, :]
    assert int(solve_arrays(faces, 3, 3, lex, collect=False).score[0]) == 545


# ---------------------------------------------------------------- classes


def test_canonical_class_counts_match_burnside() -> None:
    # 2-colourings of the 2x2 and 3x3 squares up to rotation and reflection: 6 and 102;
    # 2x3 (4 symmetries) with 2 colours: (64 + 8 + 8 + 16) / 4 = 24
    assert len(canonical_class_ids(2, 2, 2)) == 6
    assert len(canonical_class_ids(3, 3, 2)) == 102
    assert len(canonical_class_ids(2, 3, 2)) == 24


def test_bucket_spec_must_partition_the_alphabet() -> None:
    alpha = Alphabet(("a", "b", "c", "qu"))
    assert parse_buckets("aq bc", alpha) == [[0, 3], [1, 2]]
    with pytest.raises(ConfigError, match="in no bucket"):
        parse_buckets("ab", alpha)
    with pytest.raises(ConfigError, match="in buckets"):
        parse_buckets("ab bcq", alpha)
    with pytest.raises(ConfigError, match="not a face"):
        parse_buckets("abz cq", alpha)


def test_default_spec_uses_every_face_once() -> None:
    alpha = Alphabet(tuple(sorted("aäbcdeéfgh")))
    spec = default_spec(alpha, ["bad", "cab", "éché"])
    buckets = parse_buckets(spec, alpha)
    assert sorted(f for b in buckets for f in b) == list(range(len(alpha)))
    assert sorted(spec.split()[0]) == sorted("aäeé")  # vowels, accented ones included, form one bucket


def test_other_alphabets_get_vowel_buckets_and_the_corner_layout_from_3x4_on() -> None:
    russian = Alphabet(tuple(sorted("аеёийклмнопрстуыэюяб")))
    words = ["кот", "нос", "рот", "мост", "стон", "тонн", "стол", "лис", "бык", "сон"]
    assert default_spec(russian, words, 9).split()[0] == "аеиоуыэюяё"  # й is no vowel
    spec = default_spec(russian, words, 12)
    # vowels | the frequent 40% of the 10 consonants (с 6, т 6, н 5, к 2 before л 2) | the rest;
    # corners: the vowels with с and т | the rest
    assert spec == "аеиоуыэюяё кнст бйлмпр, corner:аеиостуыэюяё бйклмнпр"
    space = ClassSpace.from_spec(spec, russian, 3, 4)
    assert len(space.canonical_ids()) == 27_135  # the English corner recipe's count: 3 and 2 buckets
    greek = Alphabet(tuple(sorted("αβγδεηικλμνοπρστυω")))
    assert default_spec(greek, ["λογος"], 9).split()[0] == "αεηιουω"


def test_the_english_default_is_the_corner_recipe_from_3x4_on() -> None:
    english = Alphabet.english()
    assert default_spec(english, [], 9) == "bdfgjqvwxz aeiou lnrsy chkmpt"
    corner = "aeijou bcdfgmpqvwxz hklnrsty, corner:aeiosuy bcdfghjklmnpqrtvwxz"
    assert default_spec(english, [], 12) == default_spec(english, [], 16) == corner
    # 3 buckets on the 8 other cells, 2 on the 4 corners: 3**8 * 2**4 classes, 27,135 canonical
    space = ClassSpace.from_spec(corner, english, 3, 4)
    assert len(space.canonical_ids()) == 27_135


# ---------------------------------------------------------------- bounds


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_bounds_are_sound_on_random_classes(tiny, draw_class, class_boards, data: st.DataObject) -> None:
    rows, cols, masks = draw_class(data)
    n = rows * cols
    exact = solve_arrays(class_boards(masks), rows, cols, tiny, collect=False).score
    trie = build_prove_trie(tiny, n)
    geo = geometry(rows, cols)
    arr = np.array(masks, dtype=np.uint64)
    seen = np.zeros(tiny.n_words, np.int64)
    stamp = np.zeros(1, np.int64)
    s, m = class_bounds(
        arr, geo.nbr_list, geo.deg, trie.children, trie.node_word, trie.node_points, trie.kids, seen, stamp
    )
    best = int(exact.max())
    assert s >= best and m >= best
    assert (int(s), int(m)) == class_bounds_reference(masks, [geo.neighbours(c) for c in range(n)], trie)
    # the enumeration lists every board of the class in mixed-radix order, last cell fastest
    listed = np.empty((len(exact), n), np.int8)
    assert pipeline_class_boards(arr[None, :], listed) == len(exact)
    assert np.array_equal(listed, class_boards(masks))
    assert pipeline_class_boards(arr[None, :], listed[:-1]) == -1  # too short: nothing written


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_enumerating_sub_classes_scores_them_as_one_by_one(
    tiny, draw_class, class_boards, data: st.DataObject
) -> None:
    """A batch of sub-classes, cut into calls of the solver at any size, scores every board,
    counts them, keeps the boards >= T in order and, as best, the first board to reach the best
    score: what scoring the boards one at a time in the same order gives."""
    rows, cols, masks = draw_class(data)
    k = data.draw(st.integers(1, 5))
    # sub-classes: each cell keeps one of its faces or all of them
    subs = np.array([[m if data.draw(st.booleans()) else m & -m for m in masks] for _ in range(k)], np.uint64)
    boards = np.concatenate([class_boards([int(m) for m in sub]) for sub in subs])
    scores = solve_arrays(boards, rows, cols, tiny, collect=False).score
    threshold = int(np.median(scores))
    prover = ClassProver(geometry(rows, cols), tiny, build_prove_trie(tiny, rows * cols), threshold)
    out = ClassOutcome(root_bound=0)
    batch = data.draw(st.sampled_from([1, 2, 7, 1 << 14]))
    with patch.object(search, "SCORE_BATCH", batch):
        prover._enumerate_all(subs, out)
    assert out.boards_scored == len(boards)
    first = int(np.argmax(scores))
    assert (out.best_score, out.best_board.tolist()) == (int(scores[first]), boards[first].tolist())
    hits = np.flatnonzero(scores >= threshold)
    assert [(b.tolist(), s) for b, s in out.found] == [(boards[i].tolist(), int(scores[i])) for i in hits]


def test_bound_is_exact_for_a_single_board(tiny) -> None:
    trie = build_prove_trie(tiny, 4)
    geo = geometry(2, 2)
    faces = tiny.alphabet.encode(tuple("rate"))
    masks = np.array([1 << int(f) for f in faces], dtype=np.uint64)
    s, m = class_bounds(
        masks,
        geo.nbr_list,
        geo.deg,
        trie.children,
        trie.node_word,
        trie.node_points,
        trie.kids,
        np.zeros(tiny.n_words, np.int64),
        np.zeros(1, np.int64),
    )
    assert s == int(solve_arrays(faces[None, :], 2, 2, tiny, collect=False).score[0]) > 0
    assert m >= s


@pytest.mark.parametrize("max_cells", [3, 5, 9])
def test_prove_trie_holds_exactly_the_spellings_that_fit(tmp_path: Path, max_cells: int) -> None:
    # an alphabet with a two-letter face (qu): every spelling
    # of at most max_cells faces, each with its word and points, and no node that leads nowhere
    words = ["aqua", "hat", "quest", "quests", "squat", "tea", "teas", "that", "the", "thesauruses"]
    path = tmp_path / "words.txt"
    path.write_text("\n".join(words) + "\n")
    lex = compile_for_boards(str(path), get_rules("boggle"))
    trie = build_prove_trie(lex, max_cells)
    got: dict[tuple[int, ...], tuple[int, int]] = {}
    dead = 0
    stack: list[tuple[int, tuple[int, ...]]] = [(0, ())]
    while stack:
        node, spelled = stack.pop()
        kids = [(f, int(c)) for f, c in enumerate(trie.children[node].tolist()) if c >= 0]
        assert trie.kids[node] == sum(1 << f for f, _ in kids)
        if trie.node_word[node] >= 0:
            got[spelled] = (int(trie.node_word[node]), int(trie.node_points[node]))
        elif not kids:
            dead += 1
        stack.extend((c, (*spelled, f)) for f, c in kids)
    want = {
        sp: (wid, int(lex.word_points[wid]))
        for wid, w in enumerate(lex.words)
        for sp in lex.alphabet.tokenize(w)
        if len(sp) <= max_cells
    }
    assert got == want and dead == 0
    assert len(want) > 0


# ---------------------------------------------------------------- exactness against brute force


def _brute_force(lex, rows: int, cols: int, threshold: int) -> dict[str, int]:
    n = rows * cols
    boards = np.array(list(itertools.product(range(len(lex.alphabet)), repeat=n)), dtype=np.int8)
    scores = solve_arrays(boards, rows, cols, lex, collect=False).score
    out = {}
    for b, s in zip(boards[scores >= threshold], scores[scores >= threshold], strict=True):
        board = Board(rows, cols, tuple(lex.alphabet.faces[f] for f in b))
        out[format_compact(canonical(board))] = int(s)
    return out


@pytest.mark.parametrize("bound", ["tree", "sumax"])
@pytest.mark.parametrize(
    ("shape", "spec", "threshold"),
    [("2x2", "ae rst", 4), ("2x2", "a e r s t", 6), ("2x3", "ae rst", 20), ("2x3", "aerst", 26)],
)
def test_prove_equals_brute_force(
    tiny_dict: str, tiny, shape: str, spec: str, threshold: int, bound: str
) -> None:
    rows, cols = (int(x) for x in shape.split("x"))
    expected = _brute_force(tiny, rows, cols, threshold)
    assert 0 < len(expected) < 2000  # the threshold keeps the check meaningful
    cfg = ProveConfig(tiny_dict, shape=shape, threshold=threshold, classes=spec, n_jobs=1, bound=bound)
    res = run_prove(cfg)
    assert {b.board: b.score for b in res.boards} == expected
    assert res.best is not None and res.best.score == max(expected.values())
    assert res.classes_done == res.classes_total


@pytest.mark.integration
def test_prove_on_a_dask_cluster_writes_the_same_certificate(tiny_dict: str, tmp_path: Path) -> None:
    distributed = pytest.importorskip("dask.distributed")
    common = dict(shape="2x3", threshold=20, classes="ae rst", chunk_size=4)
    local = run_prove(ProveConfig(tiny_dict, **common, n_jobs=1, out=str(tmp_path / "local")))
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address="127.0.0.1:0"
    ) as cluster:
        cfg = ProveConfig(
            tiny_dict,
            **common,
            backend="dask",
            scheduler=cluster.scheduler_address,
            out=str(tmp_path / "dask"),
        )
        on_dask = run_prove(cfg)
    assert on_dask.boards == local.boards and on_dask.classes_done == on_dask.classes_total
    assert (tmp_path / "dask" / "_SUCCESS").exists()

    def certificate(out: Path) -> list[dict]:
        rows = pq.read_table(sorted(out.glob("part-*.parquet"))).drop_columns(["seconds"]).to_pylist()
        return sorted(rows, key=lambda r: r["class_id"])

    assert certificate(tmp_path / "dask") == certificate(tmp_path / "local")


# ---------------------------------------------------------------- job: output, resume, coverage


class _Stop(Exception):
    pass


def test_killed_proof_resumes_and_finished_one_is_a_no_op(tiny_dict: str, tmp_path: Path) -> None:
    out = tmp_path / "p"
    cfg = ProveConfig(
        tiny_dict, shape="2x3", threshold=20, classes="ae rst", chunk_size=4, n_jobs=1, out=str(out)
    )
    reports = []

    def die_after_three(p) -> None:
        reports.append(p)
        if len(reports) > 3:
            raise _Stop

    with pytest.raises(_Stop):
        run_prove(cfg, progress=die_after_three)
    parts_before = sorted(p.name for p in out.glob("part-*.parquet"))
    assert 0 < len(parts_before) < 6 and not (out / "_SUCCESS").exists()

    resumed = run_prove(cfg)
    assert resumed.status == "resumed"
    full = run_prove(ProveConfig(tiny_dict, shape="2x3", threshold=20, classes="ae rst", n_jobs=1))
    assert resumed.boards == full.boards
    assert (out / "_SUCCESS").exists()
    table = pq.read_table(out / "_boards.pq")
    assert table.column("board").to_pylist() == [b.board for b in full.boards]
    certs = pq.read_table(list(out.glob("part-*.parquet")))
    assert certs.num_rows == len(canonical_class_ids(2, 3, 2))
    # the directory read as a dataset is the certificate: the boards table is a side file
    import pandas as pd

    frame = pd.read_parquet(out)
    assert len(frame) == certs.num_rows and "class_id" in frame.columns and "score" not in frame.columns
    assert set(certs.column("status").to_pylist()) <= {"eliminated", "enumerated"}
    # each part records its worker's CPU; the manifest totals the parts of both sessions
    parts = sorted(out.glob("part-*.parquet"))
    part_cpu = [float(pq.read_schema(p).metadata[META_CPU.encode()]) for p in parts]
    assert all(c > 0 for c in part_cpu)
    manifest = json.loads((out / "_SUCCESS").read_text())
    assert manifest["cpu_s_parts"] == len(parts) == 6
    assert manifest["cpu_s"] == pytest.approx(sum(part_cpu), abs=1e-3)
    assert resumed.cpu_s_recorded == pytest.approx(sum(part_cpu)) and resumed.cpu_s_recorded > resumed.cpu_s
    assert (resumed.parts_reused, resumed.parts_recorded, resumed.parts_total) == (len(parts_before), 6, 6)
    # ... and its session and when it was committed: a session's wall time is its last part's
    metas = [pq.read_schema(p).metadata for p in parts]
    sessions: dict[bytes, float] = {}
    for meta in metas:
        at = float(meta[META_SESSION_S.encode()])
        sessions[meta[META_SESSION.encode()]] = max(sessions.get(meta[META_SESSION.encode()], 0.0), at)
    assert len(sessions) == 2  # the killed session's parts and the resumed one's
    assert 0 < sessions[max(sessions)] <= resumed.wall_s  # ISO times sort: the later session is ours
    assert manifest["wall_s_parts"] == 6 and manifest["wall_s"] == pytest.approx(
        sum(sessions.values()), abs=1e-3
    )
    assert resumed.wall_s_recorded == pytest.approx(sum(sessions.values())) and resumed.parts_wall == 6
    assert "CPU-h and" in render.prove_summary(
        resumed
    ) and "h wall over every session" in render.prove_summary(resumed)

    mtimes = {p.name: p.stat().st_mtime_ns for p in out.iterdir() if p.name != ".lock"}
    again = run_prove(cfg)
    assert again.status == "already complete" and again.boards == full.boards
    assert again.cpu_s_recorded == manifest["cpu_s"] and again.parts_recorded == 6
    assert again.wall_s_recorded == manifest["wall_s"] and again.parts_wall == 6
    assert {p.name: p.stat().st_mtime_ns for p in out.iterdir() if p.name != ".lock"} == mtimes


def test_chunks_are_proved_in_a_fixed_shuffle(tiny_dict: str, tmp_path: Path) -> None:
    # cost follows the class id, so in id order the ETA was hours short: a fixed shuffle makes
    # every stretch of the proof a fair sample; the parts are the same
    order = dispatch_order(list(range(100)))
    assert sorted(order) == list(range(100)) and order != list(range(100))
    assert order == dispatch_order(list(range(100)))
    assert sorted(dispatch_order([4, 9, 17])) == [4, 9, 17]

    seen: list[int] = []
    real = prove_job._indexed

    def recording(c: int, *args):  # in this process: one job runs in a thread of it
        seen.append(c)
        return real(c, *args)

    common = dict(shape="2x3", threshold=20, classes="ae rst", chunk_size=2)
    with patch.object(prove_job, "_indexed", recording):
        run_prove(ProveConfig(tiny_dict, **common, n_jobs=1, backend="threading", out=str(tmp_path / "s")))
    n = len(seen)
    assert n > 3 and seen == dispatch_order(list(range(n))) and seen != sorted(seen)
    run_prove(ProveConfig(tiny_dict, **common, n_jobs=2, out=str(tmp_path / "p")))
    for a, b in zip(
        sorted((tmp_path / "s").glob("part-*.parquet")),
        sorted((tmp_path / "p").glob("part-*.parquet")),
        strict=True,
    ):
        assert pq.read_table(a).drop(["seconds"]).equals(pq.read_table(b).drop(["seconds"]))


def test_coverage_check_rejects_a_missing_class(tiny_dict: str, tmp_path: Path) -> None:
    out = tmp_path / "p"
    run_prove(ProveConfig(tiny_dict, shape="2x2", threshold=4, classes="ae rst", n_jobs=1, out=str(out)))
    table = pq.read_table(out / "part-00000.parquet")
    ids = canonical_class_ids(2, 2, 2)
    check_coverage([table], ids)
    with pytest.raises(BoggleError, match="coverage check failed"):
        check_coverage([table.slice(1)], ids)


def test_certificate_rows_describe_their_class(tiny_dict: str, tmp_path: Path) -> None:
    out = tmp_path / "p"
    run_prove(ProveConfig(tiny_dict, shape="2x2", threshold=4, classes="ae rst", n_jobs=1, out=str(out)))
    t = pq.read_table(out / "part-00000.parquet").to_pylist()
    for row in t:
        digits = class_digits(np.array([row["class_id"]]), 2, 4)[0]
        assert row["letters"] == [["ae", "rst"][d] for d in digits]
        if row["status"] == "eliminated":
            assert row["boards_scored"] == 0 and row["best_board"] is None
        else:
            assert row["best_score"] is not None and row["boards_scored"] > 0
        assert all(s >= 4 for s in row["found_scores"])


# ---------------------------------------------------------------- CLI


runner = CliRunner()


def test_cli_prove_prints_best_last(tiny_dict: str, tmp_path: Path) -> None:
    r = runner.invoke(app, tiny_proof_args(tiny_dict, tmp_path / "o"))
    assert r.exit_code == 0, r.output
    last = r.output.strip().splitlines()[-1]
    assert last.startswith("BEST ") and last.endswith("classes)") and ">= 6" in last


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--dice", "new"], "dice-constrained classes are not supported"),
        (["--classes", "ae rs"], "in no bucket"),
        (["--shape", "9x9"], "at most 64"),
        (["--shape", "7x7", "--classes", "aerst"], "the tree bound holds at most 42 cells with 5 faces"),
        (["--rules", "nope"], "is not one of"),
    ],
)
def test_cli_prove_refuses_bad_input_in_one_line(
    tiny_dict: str, tmp_path: Path, args: list[str], message: str
) -> None:
    r = runner.invoke(app, ["prove", "-d", tiny_dict, "--shape", "2x2", "-o", str(tmp_path / "o"), *args])
    assert r.exit_code == 2
    assert message in r.output and "Traceback" not in r.output


# ---------------------------------------------------------------- the 3x3 proof (slow)


@pytest.mark.slow
def test_enable2k_3x3_threshold_500(enable2k_path: str, tmp_path: Path) -> None:
    res = run_prove(
        ProveConfig(
            enable2k_path,
            shape="3x3",
            threshold=500,
            classes="bdfgjqvwxz aeiou lnrsy chkmpt",
            n_jobs=2,
            out=str(tmp_path / "p"),
        )
    )
    best = format_compact(canonical(parse_compact("streaedlp", (3, 3))))
    assert res.best is not None and (res.best.board, res.best.score) == (best, 545)
    assert all(b.score >= 500 for b in res.boards)
    # 56 boards >= 500 found over the canonical classes (the field's published count of "breaking
    # failures" for this recipe); a symmetric class holds a board in several orientations, so
    # 42 distinct boards once each is put in canonical form
    parts = sorted((tmp_path / "p").glob("part-*.parquet"))
    assert sum(len(f) for p in parts for f in pq.read_table(p)["found_boards"].to_pylist()) == 56
    assert len(res.boards) == 42


def test_a_sample_certifies_nothing(tiny_dict: str, tmp_path: Path) -> None:
    out = tmp_path / "s"
    cfg = ProveConfig(
        tiny_dict,
        shape="2x3",
        threshold=20,
        classes="ae rst",
        limit_classes=5,
        sample_seed=1,
        n_jobs=1,
        out=str(out),
    )
    res = run_prove(cfg)
    assert res.status == "sample" and res.classes_done == 5
    assert res.classes_total == len(canonical_class_ids(2, 3, 2))
    assert not (out / "_SUCCESS").exists()


def test_the_estimate_scales_a_sample_to_every_canonical_class(tiny_dict: str, tmp_path: Path) -> None:
    from benchmarks.prove_estimate import app as estimate_app
    from benchmarks.prove_estimate import class_seconds, estimate

    flat = estimate(np.full(10, 36.0), 1000)  # 36 s a class: 10 h for 1,000 classes, no spread
    assert flat == {"cpu_h": 10.0, "low_cpu_h": 10.0, "high_cpu_h": 10.0}
    spread = estimate(np.array([1.0] * 19 + [81.0]), 3600)  # mean 5 s: 5 h, one heavy class
    assert spread["cpu_h"] == 5.0 and spread["low_cpu_h"] == 1.0 and 9.0 < spread["high_cpu_h"] < 14.0
    out = tmp_path / "s"
    cfg = ProveConfig(
        tiny_dict,
        shape="2x3",
        threshold=20,
        classes="ae rst",
        limit_classes=5,
        sample_seed=1,
        n_jobs=1,
        out=str(out),
    )
    run_prove(cfg)
    # the one part records its worker's CPU: the classes' wall seconds are scaled to add up to it
    wall = pq.read_table(out, columns=["seconds"]).column(0).to_numpy()
    cpu = float(pq.read_schema(next(out.glob("part-*.parquet"))).metadata[META_CPU.encode()])
    seconds, n_parts, scaled = class_seconds(out)
    assert (n_parts, scaled) == (1, 1) and seconds.sum() == pytest.approx(cpu)
    assert seconds == pytest.approx(wall * cpu / wall.sum())
    n = len(canonical_class_ids(2, 3, 2))
    result = CliRunner().invoke(estimate_app, [str(out), "--compare-cpu-h", "1"])
    assert result.exit_code == 0, result.output
    assert f"classes proved: 5 of {n:,} canonical" in result.output
    assert f"estimate for all {n:,} classes: {seconds.mean() * n / 3600:,.0f} CPU-h" in result.output


def test_a_proof_checked_against_a_published_list(tiny_dict: str, tmp_path: Path) -> None:
    from benchmarks.prove_published import app as published_app

    out = tmp_path / "p"
    res = run_prove(
        ProveConfig(tiny_dict, shape="2x3", threshold=20, classes="ae rst", n_jobs=1, out=str(out))
    )
    assert len(res.boards) >= 2
    # the list as another project would publish it: each board mirrored, one below the threshold
    mirrored = [b.board[2::-1] + b.board[:2:-1] for b in res.boards]
    weak = "tttttt: 0"
    listed = tmp_path / "best.txt"
    listed.write_text(
        "\n".join([*(f"{m}: {b.score}" for m, b in zip(mirrored, res.boards, strict=True)), weak])
    )
    result = CliRunner().invoke(published_app, [str(out), str(listed)])
    assert result.exit_code == 0, result.output
    n = len(res.boards)
    assert f"{n + 1} published boards; our solver gives {n + 1} of them their score" in result.output
    assert f"{n} of them at or above 20 fall in classes the certificate holds" in result.output
    assert f"finished proof: {n} boards >= 20, the published list's: True" in result.output
    # a board left out of the list, and a score the solver does not give: both named, exit 1
    listed.write_text(
        "\n".join(
            [
                f"{mirrored[0]}: {res.boards[0].score + 1}",
                *(f"{m}: {b.score}" for m, b in zip(mirrored[2:], res.boards[2:], strict=True)),
            ]
        )
    )
    result = CliRunner().invoke(published_app, [str(out), str(listed)])
    assert result.exit_code == 1
    assert (
        f"MISMATCH {mirrored[0]}: published {res.boards[0].score + 1}, our solver {res.boards[0].score}"
        in result.output
    )
    assert (
        f"MISMATCH {mirrored[0]} {res.boards[0].score + 1}: its class is certified without it"
        in result.output
    )
    assert "MISMATCH the certified boards differ from the published ones" in result.output


def test_a_one_worker_proof_leaves_joblib_its_own_executor(tiny_dict: str) -> None:
    """-j 1 proves in a thread of this process, joblib left alone (it once proved in a worker
    process of loky's shared reusable executor, and the next joblib loop in the process took
    that executor and failed: no _temp_folder_manager)."""
    import joblib

    from pipeline.parallel import parallel_backend

    one = run_prove(ProveConfig(tiny_dict, shape="2x2", threshold=4, classes="ae rst", n_jobs=1))
    with parallel_backend("loky", 2):
        assert joblib.Parallel()(joblib.delayed(abs)(-i) for i in range(4)) == [0, 1, 2, 3]
    again = run_prove(ProveConfig(tiny_dict, shape="2x2", threshold=4, classes="ae rst", n_jobs=1))
    assert [b.board for b in again.boards] == [b.board for b in one.boards] and one.boards


def test_qu_face_proof_equals_brute_force(tmp_path: Path) -> None:
    # "qu" is one face (one cell, two letters); "qat" cannot be spelled and is dropped
    path = tmp_path / "qu.txt"
    path.write_text("quit\nquits\nquai\nsuit\nsquat\nits\nsit\ntis\nait\nqat\nsquit\n", encoding="utf-8")
    lex = compile_for_boards(str(path), get_rules("boggle"))
    assert "qu" in lex.alphabet.faces and "qat" not in lex.words
    expected = _brute_force(lex, 2, 2, 2)
    assert expected and any("q" in b for b in expected)
    res = run_prove(ProveConfig(str(path), shape="2x2", threshold=2, classes="aiu qst", n_jobs=1))
    assert {b.board: b.score for b in res.boards} == expected


def test_chosen_class_ids_prove_exactly_those_rows_of_the_full_proof(tiny_dict: str, tmp_path: Path) -> None:
    """--class-ids proves the chosen canonical classes and nothing else: their certificate rows
    equal the full proof's rows for those ids (time aside); the proof is a sample (no _SUCCESS),
    its identity names the ids, and a proof made without them keeps its identity."""
    base = {"shape": "2x3", "threshold": 20, "classes": "ae rst", "chunk_size": 4, "n_jobs": 1}
    full = tmp_path / "full"
    run_prove(ProveConfig(tiny_dict, **base, out=str(full)))  # type: ignore[arg-type]
    rows = pq.read_table(sorted(full.glob("part-*.parquet"))).drop(["seconds"]).to_pylist()
    all_ids = [r["class_id"] for r in rows]
    chosen = [all_ids[-1], all_ids[0], all_ids[len(all_ids) // 2]]
    res = CLI.invoke(
        app,
        [
            "prove",
            "-d",
            tiny_dict,
            "--shape",
            "2x3",
            "-t",
            "20",
            "--classes",
            "ae rst",
            "--chunk-size",
            "4",
            "-j",
            "1",
            "--class-ids",
            ",".join(map(str, chosen)),
            "-o",
            str(tmp_path / "some"),
            "-q",
        ],
    )
    assert res.exit_code == 0, res.output
    some = pq.read_table(sorted((tmp_path / "some").glob("part-*.parquet"))).drop(["seconds"]).to_pylist()
    assert some == [r for r in rows if r["class_id"] in chosen]
    assert not (tmp_path / "some" / "_SUCCESS").exists()
    record = json.loads((tmp_path / "some" / "_run.json").read_text())
    assert record["identity"]["class_ids"] == sorted(chosen)
    assert "class_ids" not in json.loads((full / "_run.json").read_text())["identity"]
    status = CLI.invoke(app, ["prove", "--status", "-o", str(tmp_path / "some")])
    assert status.exit_code == 0 and "finished sample of 3 of the proof's" in status.output
    assert "(--class-ids; nothing certified)" in status.output
    ids_file = tmp_path / "ids.txt"
    ids_file.write_text(f"{chosen[0]}\n# a comment\n{max(all_ids) + 10**6}\n")
    bad = CLI.invoke(
        app,
        [
            "prove",
            "-d",
            tiny_dict,
            *["--shape", "2x3", "-t", "20", "--classes"],
            "ae rst",
            "--class-ids",
            f"@{ids_file}",
            "-o",
            str(tmp_path / "bad"),
            "-q",
        ],
    )
    assert bad.exit_code == 2 and "is not a canonical class of this recipe" in bad.output
    bad = CLI.invoke(app, ["prove", "-d", tiny_dict, "--class-ids", "3,x", "-o", str(tmp_path / "bad2")])
    assert bad.exit_code == 2 and "--class-ids:1: not a class id" in bad.output
