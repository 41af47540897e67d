"""What ``boggle solve`` shows: one board's words and totals, as text lines or one JSON line."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the result it shows (made by the command)
    from pipeline.solve import BoardResult


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
