"""Per-cell-type bucket specs (``--classes 'ab c, corner:a bc'``): parsing, class ids, canonical
classes, masks, and a proof through the job equal to brute force."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import pipeline.best.prove._worker as worker
from pipeline.best.prove import ProveConfig, run_prove
from pipeline.best.prove._classes import (
    ClassSpace,
    canonical_class_ids,
    canonical_count,
    cell_kind,
    class_digits,
    parse_sections,
    shape_perms,
)
from pipeline.boards import Board, canonical, format_compact
from pipeline.cli import app
from pipeline.errors import ConfigError
from pipeline.lexicon import compile_for_boards
from pipeline.lexicon.trie import Alphabet
from pipeline.rules import get_rules
from pipeline.solve import solve_arrays

ABC = Alphabet(("a", "b", "c"))
LETTERS = "aerst"  # the faces of the shared tiny_dict fixture (tests/conftest.py)
FIELD_3X4 = "aeijou bcdfgmpqvwxz hklnrsty, corner:aeiosuy bcdfghjklmnpqrtvwxz"


def _orbits(space: ClassSpace) -> set[tuple[int, ...]]:
    """Plain Python: the smallest tuple of each orbit of the bucket tuples under the symmetries."""
    perms = [p.tolist() for p in shape_perms(space.rows, space.cols)]
    tuples = itertools.product(*[range(k) for k in space.radices.tolist()])
    return {min(tuple(t[i] for i in p) for p in perms) for t in tuples}


# ---------------------------------------------------------------- parsing


def test_cell_kinds() -> None:
    kinds = [cell_kind(3, 4, c) for c in range(12)]
    assert "".join(k[0] for k in kinds) == "ceec" + "eiie" + "ceec"
    assert {cell_kind(2, 2, c) for c in range(4)} == {"corner"}
    assert [cell_kind(1, 3, c) for c in range(3)] == ["corner", "edge", "corner"]


def test_sections_parse_with_free_whitespace() -> None:
    assert parse_sections("ab c", ABC) == {"": [[0, 1], [2]]}
    assert parse_sections(" ab c ,corner:a bc,  EDGE : abc ", ABC) == {
        "": [[0, 1], [2]],
        "corner": [[0], [1, 2]],
        "edge": [[0, 1, 2]],
    }
    # no default: every kind of cell of the shape must be labelled
    space = ClassSpace.from_spec("corner:a bc", ABC, 2, 2)
    assert space.radices.tolist() == [2, 2, 2, 2]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            "ab c, cornr:a bc",
            "prove: class spec: unknown section label 'cornr:' (labels: corner:, edge:, inner:)",
        ),
        ("ab c, corner:a b", "prove: class spec section corner:: faces c are in no bucket"),
        ("ab c, corner:ab bc", "prove: class spec section corner:: face 'b' is in buckets 'ab' and 'bc'"),
        ("ab c, corner:a bcz", "prove: class spec section corner:: 'z' in bucket 'bcz' is not a face"),
        ("ab c, corner:", "prove: class spec section corner: is empty"),
        ("ab c, ", "prove: class spec: section 2 of 2 is empty (a stray comma?)"),
        ("ab c,, corner:a bc", "prove: class spec: section 2 of 3 is empty"),
        (", corner:a bc", "prove: class spec: section 1 of 2 is empty"),
        ("ab, corner:a bc", "prove: class spec default section: faces c are in no bucket"),
        ("ab c, a bc", "prove: class spec: section 2 'a bc' has no label"),
        ("ab c, corner:a bc, corner:abc", "prove: class spec: section corner: is given twice"),
        ("corner:a bc, edge:abc", "prove: class spec: no buckets for the inner cells of 3x3"),
        ("ab", "prove: class spec: faces c are in no bucket"),  # no commas: today's messages
        ("", "prove: the class spec is empty"),
    ],
)
def test_bad_specs_are_one_line_config_errors(spec: str, message: str) -> None:
    with pytest.raises(ConfigError) as e:
        ClassSpace.from_spec(spec, ABC, 3, 3)
    assert str(e.value).startswith(message) and "\n" not in str(e.value)


# ---------------------------------------------------------------- class ids and canonical classes


def test_a_spec_without_commas_keeps_the_base_k_ids() -> None:
    space = ClassSpace.from_spec("a b c", ABC, 2, 3)
    assert np.array_equal(space.canonical_ids(), canonical_class_ids(2, 3, 3))
    ids = np.arange(space.n_classes)
    assert np.array_equal(space.digits(ids), class_digits(ids, 3, 6))
    assert np.array_equal(space.ids(space.digits(ids)), ids)


@pytest.mark.parametrize(
    ("spec", "shape", "n_classes", "n_canonical"),
    [
        ("a b c, corner: ab c", (2, 2), 16, 6),  # every cell a corner: 2 buckets
        ("a b c, corner: ab c", (2, 3), 144, 51),  # Burnside: (144 + 12 + 36 + 12) / 4
        ("a b c, corner: ab c", (3, 3), 3888, 639),
        ("a b c, corner: ab c", (1, 4), 36, 21),
        ("ab c, corner: a b c", (3, 4), 20736, 5400),
        ("a b c, corner: ab c, edge: a bc", (3, 3), 768, 153),
        ("ab c, inner: a b c", (3, 4), 9216, 2496),
        ("a b c, edge: abc", (3, 3), 243, 63),  # one bucket on the edges
    ],
)
def test_canonical_class_counts_match_the_orbits(
    spec: str, shape: tuple[int, int], n_classes: int, n_canonical: int
) -> None:
    space = ClassSpace.from_spec(spec, ABC, *shape)
    ids = space.canonical_ids()
    orbits = _orbits(space)
    assert space.n_classes == n_classes
    assert len(ids) == len(orbits) == n_canonical == canonical_count(space.perms, space.radices)
    # the canonical class of an orbit is its smallest tuple, and ids sort like the tuples
    assert sorted(orbits) == [tuple(d) for d in space.digits(ids).tolist()]
    assert np.all(np.diff(ids) > 0)


def test_the_4x4_corner_recipe_lists_its_million_classes() -> None:
    """The 4x4 corner recipe's 1,068,363 canonical classes (of 8.5M): counted by Burnside's
    lemma and listed by the kernel. How long the listing takes is a benchmark's figure, not this
    test's: it is inside the prover's start-up that `prove_pairs run` measures on a trivial class
    (about 1 CPU-s; numpy's listing took 6 s)."""
    space = ClassSpace.from_spec(FIELD_3X4, Alphabet.english(), 4, 4)
    ids = space.canonical_ids()
    assert len(ids) == canonical_count(space.perms, space.radices) == 1_068_363
    assert ids[0] == 0 and np.all(np.diff(ids) > 0)
    # spot checks against the definition: no symmetric image of a listed class is smaller
    digits = space.digits(ids[:: len(ids) // 500])
    images = np.stack([space.ids(digits[:, perm]) for perm in space.perms])
    assert (images >= images[0]).all()  # perms[0] is the identity


def test_the_field_3x4_corner_split() -> None:
    space = ClassSpace.from_spec(FIELD_3X4, Alphabet.english(), 3, 4)
    ids = space.canonical_ids()
    assert space.n_classes == 3**8 * 2**4 == 104_976
    assert len(ids) == 27_135
    assert space.radices.tolist() == [2, 3, 3, 2, 3, 3, 3, 3, 2, 3, 3, 2]


def test_the_open_corner_4x4_recipe_of_make_prove_4x4_has_67257_classes() -> None:
    """`make prove-4x4`'s recipe: the corner recipe with one bucket on the corners (any letter),
    the cheaper recipe for ours on 4x4 (docs/performance.md). Burnside's lemma over the
    square's 8 symmetries, the 12 non-corner cells with 3 buckets each: identity 3**12, the
    quarter turns 3**3 each (the 4 inner cells one cycle, the 8 edge cells two), the half turn
    3**6, the two mirrors through the edges' middles 3**6 each, the two diagonal mirrors 3**7
    each: (531441 + 54 + 729 + 1458 + 4374) / 8 = 67,257."""
    recipe = "aeijou bcdfgmpqvwxz hklnrsty, corner:abcdefghijklmnopqrstuvwxyz"
    make = (Path(__file__).resolve().parents[1] / "scripts" / "experiments.mk").read_text(encoding="utf-8")
    assert f"--classes '{recipe}'" in make.split("prove-4x4:", 1)[1].split("\n\n", 1)[0]
    space = ClassSpace.from_spec(recipe, Alphabet.english(), 4, 4)
    assert space.radices.tolist() == [1, 3, 3, 1, 3, 3, 3, 3, 3, 3, 3, 3, 1, 3, 3, 1]
    assert len(space.canonical_ids()) == canonical_count(space.perms, space.radices) == 67_257


def test_every_board_lies_in_exactly_one_canonical_class_orbit() -> None:
    space = ClassSpace.from_spec("a bc, corner: ab c", ABC, 2, 3)
    canon = set(space.canonical_ids().tolist())
    perms = shape_perms(2, 3)
    bucket_of = [{f: b for b, fs in enumerate(bs) for f in fs} for bs in space.cell_buckets]
    for board in itertools.product(range(3), repeat=6):
        # the classes of the board's symmetric images: exactly one of them canonical
        classes = set()
        for p in perms:
            image = [board[i] for i in p]
            digits = np.array([[bucket_of[c][f] for c, f in enumerate(image)]])
            classes.add(int(space.ids(digits)[0]))
            assert np.all(space.masks(digits[0]) & (np.uint64(1) << np.array(image, np.uint64)))
        assert len(classes & canon) == 1, board


def test_masks_and_letters_per_cell() -> None:
    space = ClassSpace.from_spec("a bc, corner: ab c", ABC, 2, 3)
    assert space.radices.tolist() == [2, 2, 2, 2, 2, 2]
    corner, edge = {0: 0b011, 1: 0b100}, {0: 0b001, 1: 0b110}
    for cid in range(space.n_classes):
        d = space.digits(np.array([cid]))[0]
        want = [(corner if cell_kind(2, 3, c) == "corner" else edge)[int(b)] for c, b in enumerate(d)]
        assert space.masks(d).tolist() == want
    assert [space.bucket_text(c, 0) for c in range(6)] == ["ab", "a", "ab", "ab", "a", "ab"]
    assert [space.bucket_text(c, 1) for c in range(6)] == ["c", "bc", "c", "c", "bc", "c"]
    qu = Alphabet(("a", "qu", "s"))
    assert ClassSpace.from_spec("aq s, corner:a qs", qu, 2, 2).bucket_text(0, 1) == "qs"


# ---------------------------------------------------------------- through the job


def _brute_force(path: str, rows: int, cols: int, threshold: int) -> dict[str, int]:
    lex = compile_for_boards(path, get_rules("boggle"))
    boards = np.array(list(itertools.product(range(len(lex.alphabet)), repeat=rows * cols)), dtype=np.int8)
    scores = solve_arrays(boards, rows, cols, lex, collect=False).score
    out = {}
    for b, s in zip(boards[scores >= threshold], scores[scores >= threshold], strict=True):
        out[format_compact(canonical(Board(rows, cols, tuple(lex.alphabet.faces[f] for f in b))))] = int(s)
    return out


@pytest.mark.parametrize("bound", ["tree", "sumax"])
@pytest.mark.parametrize(
    ("spec", "threshold"), [("aer st, corner:ae rst", 20), ("ae rst, corner:a e rst, edge:aerst", 24)]
)
def test_corner_spec_proof_equals_brute_force(
    tiny_dict: str, tmp_path: Path, spec: str, threshold: int, bound: str
) -> None:
    expected = _brute_force(tiny_dict, 2, 3, threshold)
    assert 0 < len(expected) < 2000
    out = tmp_path / "p"
    res = run_prove(
        ProveConfig(
            tiny_dict, shape="2x3", threshold=threshold, classes=spec, n_jobs=1, bound=bound, out=str(out)
        )
    )
    assert {b.board: b.score for b in res.boards} == expected
    assert (out / "_SUCCESS").exists()  # the coverage check passed with the per-cell classes
    space = ClassSpace.from_spec(spec, Alphabet(tuple(LETTERS)), 2, 3)
    certs = pq.read_table(sorted(out.glob("part-*.parquet"))).to_pylist()
    assert [r["class_id"] for r in certs] == space.canonical_ids().tolist()
    for row in certs:
        d = space.digits(np.array([row["class_id"]]))[0]
        assert row["letters"] == [space.bucket_text(c, int(b)) for c, b in enumerate(d)]


def test_the_prover_is_built_once_per_worker(tiny_dict: str) -> None:
    args = (tiny_dict, "2x3", "boggle", None, "ae rst")
    p = worker._prover(args, 20, 16, "tree")
    assert worker._prover(args, 20, 16, "tree") is p
    assert worker._prover(args, 21, 16, "tree") is not p
    assert worker._prover(args, 20, 16, "sumax") is not p


def test_cli_refuses_a_bad_section_with_exit_2(tiny_dict: str, tmp_path: Path) -> None:
    r = CliRunner().invoke(
        app,
        [
            "prove",
            "-d",
            tiny_dict,
            "--shape",
            "2x3",
            "--classes",
            "ae rst, side:a erst",
            "-o",
            str(tmp_path / "o"),
        ],
    )
    assert r.exit_code == 2
    assert "unknown section label 'side:'" in r.output and "Traceback" not in r.output
