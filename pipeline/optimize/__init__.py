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

What callers use is exported here: :func:`optimize` and :func:`run_optimize` with an
:class:`OptimizeConfig` (or one read by :func:`load_optimize_config`, or by
:func:`load_command_config` from a command's TOML ``[optimize]`` section, ``SECTION``); they
return an :class:`OptimizeResult` (its :class:`BestBoard` boards, its :class:`RestartResult`
restarts) and report :class:`OptimizeProgress` to a :data:`ProgressCallback`;
:func:`read_results` reads a finished search. The rest is imported from its module.

Progress goes through a callback; nothing here prints.
"""

from pipeline.optimize.budget import RestartResult
from pipeline.optimize.config import SECTION, OptimizeConfig, load_command_config, load_optimize_config
from pipeline.optimize.driver import OptimizeProgress, ProgressCallback
from pipeline.optimize.output import BestBoard, OptimizeResult, read_results
from pipeline.optimize.run import optimize, run_optimize

__all__ = [
    "SECTION",
    "BestBoard",
    "OptimizeConfig",
    "OptimizeProgress",
    "OptimizeResult",
    "ProgressCallback",
    "RestartResult",
    "load_command_config",
    "load_optimize_config",
    "optimize",
    "read_results",
    "run_optimize",
]
