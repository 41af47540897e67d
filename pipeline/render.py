"""What the commands show: text and JSON lines, progress bars and live tables (rich, on stderr).

One function (or context manager) per command's display, so the CLI stays a list of calls and a
new command adds its own here. Nothing here imports typer: lines are returned for the CLI to
print; live displays write to stderr themselves and are stopped on leaving their ``with`` block.

This module shows ``solve``; the shared console, log style and progress log live in
:mod:`pipeline.render_log`, and the other commands' displays in :mod:`pipeline.render_batch`
(analyze, select, run, dice, what-if), :mod:`pipeline.render_search` (design-dice, optimize, prove)
and :mod:`pipeline.render_catalog` (runs, query); their public names are importable from here.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from pipeline.render_batch import (
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
from pipeline.render_catalog import catalog_lines, catalog_show, catalog_verified, query_output, size_text
from pipeline.render_log import (
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
from pipeline.render_search import (
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

if TYPE_CHECKING:  # the results each display shows (imported by the commands that make them)
    from pipeline.solve import BoardResult

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

# ------------------------------------------------------------------ solve


def solve_json(res: BoardResult, rules_name: str) -> str:
    """One board's result as one JSON line (``boggle solve --json``)."""
    from pipeline.boards import format_compact

    return json.dumps(
        {
            "board": format_compact(res.board),
            "rows": res.board.rows,
            "cols": res.board.cols,
            "rules": rules_name,
            "score": res.score,
            "n_words": res.n_words,
            "longest_word": res.longest,
            "dead_cells": res.dead_cells,
            "words": res.words,
        },
        ensure_ascii=False,
    )


def solve_text(res: BoardResult) -> list[str]:
    """One board's result as text lines: header, grid, a blank line, ``word points`` lines, the
    totals and a closing blank line."""
    from pipeline.boards import format_compact, format_grid

    lines = [
        f"Board {format_compact(res.board)} ({res.board.rows}x{res.board.cols})",
        format_grid(res.board),
        "",
    ]
    lines += [f"{word} {pts}" for word, pts in zip(res.words, res.points, strict=True)]
    return [*lines, f"Found {res.n_words} words", f"Total score: {res.score}", ""]
