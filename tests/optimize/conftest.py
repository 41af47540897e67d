"""Fixtures of the best-board search tests: a small lexicon that is quick to compile and search."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from pipeline.best.optimize import OptimizeConfig
from pipeline.best.optimize._run import prepare

LETTERS = set("aeilnprstgdo")


@pytest.fixture(scope="session")
def small_dict(tmp_path_factory: pytest.TempPathFactory, enable_words: list[str]) -> str:
    """ENABLE2K words of at most 6 letters drawn from 12 common letters (a few thousand words)."""
    words = [w for w in enable_words if len(w) <= 6 and set(w) <= LETTERS]
    path = tmp_path_factory.mktemp("lex") / "small.txt"
    path.write_text("\n".join(words) + "\n", encoding="utf-8")
    return str(path)


@pytest.fixture(scope="session")
def small(small_dict: str):  # type: ignore[no-untyped-def]
    """(config, lexicon, objective, space, tables) for free letters, 4x4, the small lexicon."""
    return prepare(OptimizeConfig(small_dict))


@pytest.fixture(scope="session")
def random_boards() -> Callable[..., np.ndarray]:
    """``random_boards(rng, n_faces, count, cells)``: encoded boards, about 5% blanks."""

    def make(
        rng: np.random.Generator, n_faces: int, count: int, cells: int, blanks: bool = True
    ) -> np.ndarray:
        boards = rng.integers(0, n_faces, size=(count, cells)).astype(np.int8)
        if blanks:
            boards[rng.random((count, cells)) < 0.05] = -1
        return boards

    return make
