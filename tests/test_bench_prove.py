"""``make bench-prove``'s recipes: the fixed class lists and how they are drawn, checked against
the 3x4 certificate in the repository and (with the C++ anchor built) the published list."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from benchmarks.bench_prove import (
    BOARD_CLASSES_3X4,
    HEAVY_SAMPLE_3X4,
    RECIPES,
    board_classes,
    draw_classes,
    recipe_space,
)
from pipeline import settings
from tests.conftest import REPO

CERTIFICATE = REPO / "certificates" / "3x4-enable2k"


def _certificate_rows() -> list[tuple[int, list[str], list[int]]]:
    """(class id, boards found, their scores) of every row of the 3x4 certificate's parts."""
    rows = []
    for part in sorted(CERTIFICATE.glob("part-*.parquet")):
        t = pq.read_table(part, columns=["class_id", "found_boards", "found_scores"]).to_pydict()
        rows += zip(t["class_id"], t["found_boards"], t["found_scores"], strict=True)
    return rows


def _reference_class(space, alphabet, board: str) -> int:  # type: ignore[no-untyped-def]
    """The canonical class of a compact board, written out: per cell the bucket holding its face,
    the mixed-radix number (cell 0 most significant) of each symmetric image, the smallest."""
    faces = [alphabet.index[f] for f in ("qu" if ch == "q" else ch for ch in board)]
    digits = [next(k for k, b in enumerate(space.cell_buckets[c]) if f in b) for c, f in enumerate(faces)]
    best = None
    for perm in space.perms:
        idx = 0
        for c in perm:
            idx = idx * int(space.radices[c]) + digits[int(c)]
        best = idx if best is None else min(best, idx)
    assert best is not None
    return best


def test_board_classes_hold_the_certificates_boards(enable2k_path: str) -> None:
    """Every board >= 1500 the 3x4 certificate found lies, by :func:`board_classes` and by a
    written-out reference, in the class its row names, and that class is one of the 7 pinned in
    ``BOARD_CLASSES_3X4``; a finished certificate holds boards in all 7."""
    space, alphabet = recipe_space(RECIPES["3x4-heavy"], enable2k_path)
    rows = _certificate_rows()
    assert rows, "the certificate has no parts"
    holding = set()
    for cid, boards, scores in rows:
        if not boards:
            continue
        assert min(scores) >= 1500
        assert board_classes(space, alphabet, boards) == [cid] * len(boards)
        assert [_reference_class(space, alphabet, b) for b in boards] == [cid] * len(boards)
        holding.add(cid)
    assert holding, "no class of the certificate holds a board yet"
    assert holding <= set(BOARD_CLASSES_3X4)
    if (CERTIFICATE / "_SUCCESS").exists():
        assert holding == set(BOARD_CLASSES_3X4)


def test_board_classes_hold_the_published_boards(enable2k_path: str) -> None:
    """With the anchor built: the field's 33 ENABLE2K 3x4 boards >= 1500 lie in exactly the 7
    classes of ``BOARD_CLASSES_3X4``."""
    listed = settings.get().anchor_dir / "hybrid-boggle" / "results" / "best-boards-3x4.enable2k.txt"
    if not listed.is_file():
        pytest.skip(f"no published list at {listed} (the C++ anchor is not built)")
    boards = [ln.split(":")[0].strip() for ln in listed.read_text().splitlines() if ln.strip()]
    scores = [int(ln.split(":")[1]) for ln in listed.read_text().splitlines() if ln.strip()]
    top = [b for b, s in zip(boards, scores, strict=True) if s >= 1500]
    assert len(top) == 33
    space, alphabet = recipe_space(RECIPES["3x4-heavy"], enable2k_path)
    assert set(board_classes(space, alphabet, top)) == set(BOARD_CLASSES_3X4)


def test_heavy_recipe_draws_its_fixed_ids(enable2k_path: str) -> None:
    """A recipe with ``ids`` draws them (the first n with n > 0) instead of a sample, each with
    the C++'s id: cell 0 the least significant digit."""
    recipe = RECIPES["3x4-heavy"]
    assert len(recipe.ids) == 27 == len(set(recipe.ids))
    ours, theirs = draw_classes(recipe, enable2k_path, 0, 21)
    assert ours == list(recipe.ids)
    assert draw_classes(recipe, enable2k_path, 2, 99)[0] == list(recipe.ids[:2])
    space, _ = recipe_space(recipe, enable2k_path)
    for our_id, their_id in zip(ours, theirs, strict=True):
        digits, rest = [], our_id
        for k in reversed(space.radices.tolist()):
            rest, d = divmod(rest, k)
            digits.insert(0, d)
        assert their_id == sum(d * int(np.prod(space.radices[:c])) for c, d in enumerate(digits))


def test_heavy_sample_is_the_corner_recipes_sample(enable2k_path: str) -> None:
    """The 20 heavy classes of (b) are among the 300 the ``3x4-corner`` recipe draws (seed 21),
    disjoint from the board-holding 7 of (a)."""
    sample, _ = draw_classes(RECIPES["3x4-corner"], enable2k_path, 300, 21)
    assert len(HEAVY_SAMPLE_3X4) == 20
    assert set(HEAVY_SAMPLE_3X4) <= set(sample)
    assert not set(HEAVY_SAMPLE_3X4) & set(BOARD_CLASSES_3X4)


def test_fixed_ids_must_be_canonical(enable2k_path: str) -> None:
    """A fixed id that is not its class's smallest symmetric image is refused."""
    recipe = RECIPES["3x4-heavy"]
    space, _ = recipe_space(recipe, enable2k_path)
    cid = BOARD_CLASSES_3X4[0]
    digits = space.digits(np.array([cid]))[0]
    images = sorted({int(space.ids(digits[perm])) for perm in space.perms})
    assert images[0] == cid and len(images) > 1
    with pytest.raises(ValueError, match="not a canonical class"):
        draw_classes(replace(recipe, ids=(images[-1],)), enable2k_path, 0, 21)
    with pytest.raises(ValueError, match="not a canonical class"):
        draw_classes(replace(recipe, ids=(space.n_classes,)), enable2k_path, 0, 21)


@pytest.mark.slow
def test_heavy_recipe_quick_run_finds_the_certificates_boards(tmp_path: Path) -> None:
    """``--recipe 3x4-heavy --quick --ours-only``: ours proves the first two fixed classes and
    finds as many boards >= 1500 as the certificate's rows of those classes hold."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.bench_prove",
            "--recipe",
            "3x4-heavy",
            "--quick",
            "--ours-only",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
        check=True,
    )
    row = json.loads(proc.stdout.splitlines()[-1].removeprefix("JSON "))[0]
    want = {cid: len(boards) for cid, boards, _ in _certificate_rows()}
    assert row["recipe"] == "3x4-heavy" and row["classes"] == 2
    assert row["ours_found"] == sum(want[c] for c in BOARD_CLASSES_3X4[:2])
