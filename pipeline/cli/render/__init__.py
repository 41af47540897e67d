"""What the commands show: text and JSON lines, progress bars and live tables (rich, on stderr).

One function (or context manager) per command's display, so the CLI stays a list of calls and a
new command adds its own here. Nothing here imports typer: lines are returned for the CLI to
print; live displays write to stderr themselves and are stopped on leaving their ``with`` block.

* ``_log``: the shared stderr console, the log style (text or JSON lines), the progress log;
* ``_solve``: ``solve``;
* ``_batch``: ``analyze``, ``select``, ``run``, ``dice show`` and ``what-if``;
* ``_search``: ``design-dice``, ``optimize`` and ``prove``;
* ``_catalog``: ``runs`` and its queries.
"""

from __future__ import annotations

from pipeline.cli.render._batch import (
    analyze_outcome,
    analyze_progress,
    dice_show,
    run_outcome,
    run_progress,
    run_progress_outcome,
    run_rejected,
    run_summary,
    select_lines,
    select_outcome,
    whatif_lines,
    whatif_outcome,
)
from pipeline.cli.render._catalog import (
    catalog_lines,
    catalog_show,
    catalog_verified,
    query_output,
    size_text,
)
from pipeline.cli.render._log import (
    LOG_FORMATS,
    LOG_WIDTH,
    PROGRESS_INTERVAL,
    LogStyle,
    ProgressLog,
    StageLog,
    log_progress,
    plural,
    stderr_console,
    utc_now,
)
from pipeline.cli.render._search import (
    design_lines,
    design_outcome,
    design_progress,
    optimize_best,
    optimize_boards,
    optimize_interrupted,
    optimize_progress,
    optimize_restarts,
    prove_best,
    prove_boards,
    prove_progress,
    prove_status,
    prove_summary,
)
from pipeline.cli.render._solve import solve_json, solve_text

__all__ = [
    "LOG_FORMATS",
    "LOG_WIDTH",
    "PROGRESS_INTERVAL",
    "LogStyle",
    "ProgressLog",
    "StageLog",
    "analyze_outcome",
    "analyze_progress",
    "catalog_lines",
    "catalog_show",
    "catalog_verified",
    "design_lines",
    "design_outcome",
    "design_progress",
    "dice_show",
    "log_progress",
    "optimize_best",
    "optimize_boards",
    "optimize_interrupted",
    "optimize_progress",
    "optimize_restarts",
    "plural",
    "prove_best",
    "prove_boards",
    "prove_progress",
    "prove_status",
    "prove_summary",
    "query_output",
    "run_outcome",
    "run_progress",
    "run_progress_outcome",
    "run_rejected",
    "run_summary",
    "select_lines",
    "select_outcome",
    "size_text",
    "solve_json",
    "solve_text",
    "stderr_console",
    "utc_now",
    "whatif_lines",
    "whatif_outcome",
]
