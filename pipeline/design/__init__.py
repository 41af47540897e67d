"""The designer's tools: ``boggle design-dice``, a local search over dice sets whose every move is
tested by a paired experiment with common random numbers, and ``boggle what-if``, the paired
experiment on one change of dice, run as two ordinary runs.

* ``_config``: what a design is asked (:class:`DesignConfig`), its objective and its moves;
* ``_eval``: two dice sets compared on the same rolls (:class:`Solver`, :func:`paired_batch`),
  and a candidate move decided (:func:`evaluate_candidate`);
* ``_report``: the validation of the proposed set on fresh boards, ``report.json``,
  ``moves.csv``;
* ``_search``: :func:`design_dice`, the search as a resumable job (its docstring describes the
  method);
* ``_whatif``: :func:`run_what_if`, measured and predicted.
"""

from __future__ import annotations

from pipeline.design._config import (
    MAX_BATCH,
    MAX_BATCHES,
    MAX_BUDGET,
    MAX_SAME,
    MAX_VALIDATE,
    DesignConfig,
    Move,
    Objective,
    parse_budget,
    parse_objective,
    propose,
)
from pipeline.design._eval import Decision, Paired, Solver, evaluate_candidate, paired_batch
from pipeline.design._report import validate
from pipeline.design._search import DesignProgress, DesignResult, design_dice, prepare
from pipeline.design._whatif import (
    MAX_WHATIF_BOARDS,
    WhatIfResult,
    apply_swaps,
    paired_gain,
    parse_swap,
    run_what_if,
)

__all__ = [
    "MAX_BATCH",
    "MAX_BATCHES",
    "MAX_BUDGET",
    "MAX_SAME",
    "MAX_VALIDATE",
    "MAX_WHATIF_BOARDS",
    "Decision",
    "DesignConfig",
    "DesignProgress",
    "DesignResult",
    "Move",
    "Objective",
    "Paired",
    "Solver",
    "WhatIfResult",
    "apply_swaps",
    "design_dice",
    "evaluate_candidate",
    "paired_batch",
    "paired_gain",
    "parse_budget",
    "parse_objective",
    "parse_swap",
    "prepare",
    "propose",
    "run_what_if",
    "validate",
]
