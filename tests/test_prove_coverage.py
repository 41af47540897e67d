"""An independent check of the prover's coverage: how many classes a proof must certify.

The prover lists its canonical classes with :mod:`pipeline.best.prove._classes` and its coverage check
compares the certificate against that same list, so a mistake there (a symmetry too many, a
wrong cell kind) would pass unnoticed. Here the number of classes up to symmetry is derived
from first principles and compared with what the prover reports and certifies:

* Burnside's lemma: the number of orbits of the class tuples under the shape's symmetry group
  is the average over the group of the tuples each symmetry fixes; a symmetry fixes a tuple iff
  the tuple is constant on each of its cycles, so it fixes the product over its cycles of the
  number of buckets of the cycle's cells (a symmetry keeps cell kinds, so a cycle has one kind).
* a brute-force enumeration of the orbits on small shapes (every tuple, every image).

Nothing below imports :mod:`pipeline.best.prove._classes` or :mod:`pipeline.boards`: the group, the
cell kinds and the bucket counts are written out here.
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import pytest

from pipeline.best.prove import ProveConfig, run_prove

Cell = tuple[int, int]

FIELD_3X4 = "aeijou bcdfgmpqvwxz hklnrsty, corner:aeiosuy bcdfghjklmnpqrtvwxz"
TWO = "aeiosuy bcdfghjklmnpqrtvwxz"
FOUR = "bdfgjqvwxz aeiou lnrsy chkmpt"


def symmetries(rows: int, cols: int) -> list[list[int]]:
    """The shape's symmetries as cell permutations (row-major cells): the identity, the two
    mirrors and the half turn; with a square also the two diagonal mirrors and quarter turns.
    Built from the maps of (row, col); on a single row or column some coincide, and the group
    is the set of distinct ones. Each is checked to be a bijection that keeps adjacency."""
    maps = [
        lambda r, c: (r, c),
        lambda r, c: (r, cols - 1 - c),
        lambda r, c: (rows - 1 - r, c),
        lambda r, c: (rows - 1 - r, cols - 1 - c),
    ]
    if rows == cols:
        n = rows - 1
        maps += [
            lambda r, c: (c, r),
            lambda r, c: (n - c, n - r),
            lambda r, c: (c, n - r),
            lambda r, c: (n - c, r),
        ]
    perms = []
    for m in maps:
        perm = [0] * (rows * cols)
        for r in range(rows):
            for c in range(cols):
                r2, c2 = m(r, c)
                perm[r * cols + c] = r2 * cols + c2
        perms.append(perm)

    def adjacent(a: int, b: int) -> bool:
        return a != b and abs(a // cols - b // cols) <= 1 and abs(a % cols - b % cols) <= 1

    perms = [list(p) for p in dict.fromkeys(tuple(p) for p in perms)]
    for p in perms:
        assert sorted(p) == list(range(rows * cols))
        for a, b in itertools.combinations(range(rows * cols), 2):
            assert adjacent(a, b) == adjacent(p[a], p[b])
    return perms


def kind(rows: int, cols: int, cell: int) -> str:
    r, c = divmod(cell, cols)
    border_r, border_c = r in (0, rows - 1), c in (0, cols - 1)
    if border_r and border_c:
        return "corner"
    return "edge" if border_r or border_c else "inner"


def buckets_per_cell(spec: str, rows: int, cols: int) -> list[int]:
    """The number of buckets of each cell under a spec: its first unlabelled section for every
    cell, a ``corner:``/``edge:``/``inner:`` section for those cells."""
    counts: dict[str, int] = {}
    for section in spec.split(","):
        label, _, rest = section.strip().rpartition(":")
        counts[label.strip().lower()] = len(rest.split())
    return [counts.get(kind(rows, cols, c), counts.get("", 0)) for c in range(rows * cols)]


def cycles(perm: list[int]) -> list[list[int]]:
    seen: set[int] = set()
    out = []
    for start in range(len(perm)):
        if start in seen:
            continue
        cyc = []
        c = start
        while c not in seen:
            seen.add(c)
            cyc.append(c)
            c = perm[c]
        out.append(cyc)
    return out


def burnside(spec: str, rows: int, cols: int) -> int:
    """Orbits of the class tuples: the mean over the group of the tuples each symmetry fixes."""
    k = buckets_per_cell(spec, rows, cols)
    group = symmetries(rows, cols)
    fixed = 0
    for perm in group:
        prod = 1
        for cyc in cycles(perm):
            assert len({k[c] for c in cyc}) == 1, "a symmetry mixes cells with different buckets"
            prod *= k[cyc[0]]
        fixed += prod
    assert fixed % len(group) == 0
    return fixed // len(group)


def brute_force_orbits(spec: str, rows: int, cols: int) -> int:
    """Orbits found by walking every tuple: each unseen tuple starts an orbit and marks its images."""
    k = buckets_per_cell(spec, rows, cols)
    group = symmetries(rows, cols)
    seen: set[tuple[int, ...]] = set()
    orbits = 0
    for t in itertools.product(*[range(x) for x in k]):
        if t in seen:
            continue
        orbits += 1
        for perm in group:
            image = [0] * len(t)
            for c, v in enumerate(t):
                image[perm[c]] = v
            seen.add(tuple(image))
    assert len(seen) == math.prod(k)
    return orbits


# ---------------------------------------------------------------- the counts themselves


@pytest.mark.parametrize(
    ("spec", "shape", "count"),
    [
        (TWO, (3, 3), 102),
        (FOUR, (3, 3), 34_960),
        (FIELD_3X4, (3, 4), 27_135),
        (FOUR, (3, 4), 4_212_736),
        (TWO, (4, 4), 8_548),
    ],
)
def test_burnside_gives_the_published_counts(spec: str, shape: tuple[int, int], count: int) -> None:
    # the class counts the field publishes for these recipes (the table)
    assert burnside(spec, *shape) == count


@pytest.mark.parametrize(
    ("spec", "shape"),
    [
        ("ab c", (2, 2)),
        ("a b c", (2, 2)),
        ("ab c", (2, 3)),
        ("a b c", (2, 3)),
        ("ab c, corner: a b c", (2, 3)),
        (TWO, (3, 3)),
        ("ab c, corner: a b c", (3, 3)),
        ("ab c, edge: a b c, inner: abc", (3, 3)),
        ("a b, corner: ab", (3, 4)),
        ("ab c, corner: a b c", (1, 5)),
    ],
)
def test_burnside_equals_brute_force_orbits(spec: str, shape: tuple[int, int]) -> None:
    assert burnside(spec, *shape) == brute_force_orbits(spec, *shape)


def test_the_group_has_the_expected_order() -> None:
    assert len(symmetries(3, 3)) == 8 and len(symmetries(3, 4)) == 4 and len(symmetries(1, 4)) == 2


# ---------------------------------------------------------------- against the prover


@pytest.mark.slow  # ENABLE2K class lists of 3x3 and 3x4 (the Burnside counts themselves stay)
@pytest.mark.parametrize(
    ("spec", "shape"),
    [(TWO, "3x3"), (FOUR, "3x3"), (FIELD_3X4, "3x4"), (FOUR, "3x4")],
)
def test_the_prover_reports_the_burnside_count(
    enable2k_path: str, tmp_path: Path, spec: str, shape: str
) -> None:
    rows, cols = (int(x) for x in shape.split("x"))
    # a one-class sample lists every canonical class (its classes_total) and proves only one
    res = run_prove(
        ProveConfig(
            enable2k_path,
            shape=shape,
            threshold=10**6,
            classes=spec,
            n_jobs=1,
            limit_classes=1,
            out=str(tmp_path / "p"),
        )
    )
    assert res.status == "sample"
    assert res.classes_total == burnside(spec, rows, cols)


@pytest.mark.parametrize(
    ("spec", "shape"),
    [
        ("ae rst", "2x2"),
        ("ae rst", "2x3"),
        ("a e rst", "2x3"),
        pytest.param("ae rst, corner: a e r st", "3x3", marks=pytest.mark.slow),  # a 70 s proof
    ],
)
def test_a_finished_certificate_has_one_row_per_orbit(
    tiny_dict: str, tmp_path: Path, spec: str, shape: str
) -> None:
    import duckdb

    rows, cols = (int(x) for x in shape.split("x"))
    out = tmp_path / "p"
    res = run_prove(
        ProveConfig(tiny_dict, shape=shape, threshold=10, classes=spec, n_jobs=1, chunk_size=16, out=str(out))
    )
    expected = burnside(spec, rows, cols)
    assert expected == brute_force_orbits(spec, rows, cols)
    assert res.classes_total == res.classes_done == expected
    assert (out / "_SUCCESS").exists()
    manifest = json.loads((out / "_SUCCESS").read_text())
    assert manifest["classes_total"] == expected
    # the certificate read the way its users read it: every Parquet file at the top of OUT
    rel = duckdb.sql(f"SELECT count(*), count(DISTINCT class_id) FROM '{out}/*.parquet'")
    assert rel is not None
    [(n_rows, n_ids)] = rel.fetchall()
    assert n_rows == n_ids == expected
