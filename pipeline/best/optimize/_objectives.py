"""What a search maximises: ``points`` (the rule set's scores), ``words`` (distinct words) or
``subset`` (the points of the words of a second word list only)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pipeline.best.optimize._config import OBJECTIVES
from pipeline.errors import ConfigError
from pipeline.lexicon import CompiledLexicon


@dataclass(frozen=True)
class Objective:
    """A lexicon whose ``word_points`` are the objective's weights (so ``solve_arrays`` scores
    the objective), plus what the manifest records about it."""

    name: str
    lexicon: CompiledLexicon
    info: dict[str, Any]


def make_objective(
    lexicon: CompiledLexicon, name: str, subset_words: Sequence[str] | None = None
) -> Objective:
    """``points``: the lexicon as it is. ``words``: every word weighs 1. ``subset``: only the
    words of ``subset_words`` score (their usual points); the trie is pruned to them, which also
    makes the search faster. Word ids are unchanged, so results stay comparable."""
    if name == "points":
        return Objective(name, lexicon, {"name": name})
    if name == "words":
        ones = np.ones(lexicon.n_words, dtype=np.int32)
        return Objective(name, dataclasses.replace(lexicon, word_points=ones), {"name": name})
    if name != "subset":
        raise ConfigError(f"unknown objective {name!r}; choose one of {', '.join(OBJECTIVES)}")
    wanted = set(subset_words or ())
    in_lexicon = np.array([w in wanted for w in lexicon.words], dtype=bool)
    n_in = int(in_lexicon.sum())
    if n_in == 0:
        raise ConfigError("the subset word list shares no word with the lexicon (after its rules)")
    points = np.where(in_lexicon, lexicon.word_points, 0).astype(np.int32)
    trie = lexicon.trie.prune(keep_word=wanted.__contains__)
    info = {"name": name, "subset_words": len(wanted), "subset_in_lexicon": n_in}
    return Objective(name, dataclasses.replace(lexicon, trie=trie, word_points=points), info)
