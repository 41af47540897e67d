"""The solver's numba kernels: array in, array out, no Python objects, no I/O.

Private modules: ``_walk`` (the trie walks of one board on the standard rule and their
helpers), ``_revisit`` (the walk where cells may be revisited), ``_drive`` (the batch driver:
one loop over the boards for every rule and size), ``_score`` (scoring without word lists,
for the optimizer) and ``_move`` (the optimizer's moves: neighbourhoods, annealing). See
docs/methods/solver.md.
"""

from pipeline.solve.kernels._drive import HIT_ROOM, LARGE, REVISIT, SMALL, solve_batch
from pipeline.solve.kernels._move import REROLL, anneal, neighbourhood
from pipeline.solve.kernels._score import Scratch, cell_scores, score_batch, score_one
from pipeline.solve.kernels._walk import (
    LOW32,
    ctz,
    enter,
    grow,
    new_outputs,
    next_neighbour,
    popcount,
    tally_board,
)

__all__ = [
    "HIT_ROOM",
    "LARGE",
    "LOW32",
    "REROLL",
    "REVISIT",
    "SMALL",
    "Scratch",
    "anneal",
    "cell_scores",
    "ctz",
    "enter",
    "grow",
    "neighbourhood",
    "new_outputs",
    "next_neighbour",
    "popcount",
    "score_batch",
    "score_one",
    "solve_batch",
    "tally_board",
]
