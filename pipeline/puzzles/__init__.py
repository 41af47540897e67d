"""The seeds' classic puzzles: spell-check a word on dice (``_check``: :func:`run_check`), the
robot search-tree walk (``_search_tree``) and N-queens driven by it (``_queens``:
:func:`queens_report`). Only the CLI imports them.
"""

from pipeline.puzzles._check import run_check
from pipeline.puzzles._queens import MAX_QUEENS, queens_report

__all__ = ["MAX_QUEENS", "queens_report", "run_check"]
