"""Best-board search: parallel hill climbing and simulated annealing for high-scoring boards.

The package, one concern a module:

* :mod:`~pipeline.best.optimize._config`: :class:`OptimizeConfig` and the ``[optimize]`` TOML section;
* :mod:`~pipeline.best.optimize._space`: the search space (dice and faces), moves, canonical forms;
* :mod:`~pipeline.best.optimize._objectives`: points, words, or the points of a subset of words;
* :mod:`~pipeline.best.optimize._scorer`: scoring boards and neighbourhoods with the search kernels;
* :mod:`~pipeline.best.optimize._budget`: one restart's clock, stop reason, events and results;
* :mod:`~pipeline.best.optimize._hill` and :mod:`~pipeline.best.optimize._anneal`: the two strategies;
* :mod:`~pipeline.best.optimize._driver`: restarts in parallel (joblib), progress relayed;
* :mod:`~pipeline.best.optimize._output`: the best distinct boards, the Parquet table;
* :mod:`~pipeline.best.optimize._run`: :func:`optimize` and :func:`run_optimize`.

What callers use is exported here: :func:`optimize` and :func:`run_optimize` with an
:class:`OptimizeConfig` (or one read by :func:`load_optimize_config`, or by
:func:`load_command_config` from a command's TOML ``[optimize]`` section, ``SECTION``); they
return an :class:`OptimizeResult` (its :class:`BestBoard` boards, its :class:`RestartResult`
restarts) and report :class:`OptimizeProgress` to a :data:`ProgressCallback`;
:func:`read_results` reads a finished search; ``INTERRUPTED`` names the file an interrupted
search leaves. The rest is the package's own (its tests import it from its module).

Progress goes through a callback; nothing here prints.
"""

from pipeline.best.optimize._budget import RestartResult
from pipeline.best.optimize._config import SECTION, OptimizeConfig, load_command_config, load_optimize_config
from pipeline.best.optimize._driver import OptimizeProgress, ProgressCallback
from pipeline.best.optimize._output import (
    INTERRUPTED,
    RESULT_COLUMNS,
    BestBoard,
    OptimizeResult,
    read_results,
)
from pipeline.best.optimize._run import optimize, run_optimize

__all__ = [
    "INTERRUPTED",
    "RESULT_COLUMNS",
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
