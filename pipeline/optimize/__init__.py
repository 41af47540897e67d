"""Best-board search: parallel hill climbing and simulated annealing for high-scoring boards.

The package, one concern a module:

* :mod:`~pipeline.optimize.config`: :class:`OptimizeConfig` and the ``[optimize]`` TOML section;
* :mod:`~pipeline.optimize.space`: the search space (dice and faces), moves, canonical forms;
* :mod:`~pipeline.optimize.objectives`: points, words, or the points of a subset of words;
* :mod:`~pipeline.optimize.scorer`: scoring boards and neighbourhoods with the search kernels;
* :mod:`~pipeline.optimize.budget`: one restart's clock, stop reason, events and results;
* :mod:`~pipeline.optimize.hill` and :mod:`~pipeline.optimize.anneal`: the two strategies;
* :mod:`~pipeline.optimize.driver`: restarts in parallel (joblib), progress relayed;
* :mod:`~pipeline.optimize.output`: the best distinct boards, the Parquet table;
* :mod:`~pipeline.optimize.run`: :func:`optimize` and :func:`run_optimize`.

Progress goes through a callback; nothing here prints.
"""

from pipeline.optimize.anneal import ANNEAL_CHUNK, AnnealState, simulated_annealing
from pipeline.optimize.budget import Clock, Found, RestartEvent, RestartResult
from pipeline.optimize.config import (
    BACKENDS,
    DEFAULT_OUT,
    OBJECTIVES,
    SECTION,
    STRATEGIES,
    OptimizeConfig,
    load_command_config,
    load_optimize_config,
)
from pipeline.optimize.driver import OptimizeProgress, ProgressCallback, run_restart, search
from pipeline.optimize.hill import hill_climb
from pipeline.optimize.objectives import Objective, make_objective
from pipeline.optimize.output import (
    COLUMNS,
    FORMAT,
    SCHEMA_VERSION,
    BestBoard,
    OptimizeResult,
    collect_boards,
    read_results,
    results_table,
)
from pipeline.optimize.run import optimize, prepare, run_optimize
from pipeline.optimize.scorer import MAX_CELLS, Scorer, Tables
from pipeline.optimize.space import (
    SearchSpace,
    apply_move,
    canonical_key,
    dice_space,
    free_space,
    key_faces,
    shape_symmetries,
)

__all__ = [
    "ANNEAL_CHUNK", "BACKENDS", "COLUMNS", "DEFAULT_OUT", "FORMAT", "MAX_CELLS", "OBJECTIVES",
    "SCHEMA_VERSION", "SECTION", "STRATEGIES", "AnnealState", "BestBoard", "Clock", "Found",
    "Objective", "OptimizeConfig", "OptimizeProgress", "OptimizeResult", "ProgressCallback",
    "RestartEvent", "RestartResult", "Scorer", "SearchSpace", "Tables", "apply_move",
    "canonical_key", "collect_boards", "dice_space", "free_space", "hill_climb", "key_faces",
    "load_command_config", "load_optimize_config", "make_objective", "optimize", "prepare", "read_results",
    "results_table", "run_optimize", "run_restart", "search", "shape_symmetries",
    "simulated_annealing",
]  # fmt: skip
