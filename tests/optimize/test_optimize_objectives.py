"""Objectives: distinct words, and the points of a subset of words."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.best.optimize import OptimizeConfig, optimize
from pipeline.errors import ConfigError


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
