"""The results of a search: the best distinct boards over all restarts (re-solved with the
batch solver), the Parquet table they are written as, and reading a finished run back."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pipeline import store
from pipeline.best.optimize._anneal import ANNEAL_CHUNK
from pipeline.best.optimize._budget import Found, RestartResult
from pipeline.best.optimize._config import OptimizeConfig
from pipeline.best.optimize._objectives import Objective
from pipeline.best.optimize._space import SearchSpace, key_faces
from pipeline.boards import Board, format_compact
from pipeline.errors import BoggleError, DamagedRunError
from pipeline.lexicon import CompiledLexicon
from pipeline.solve import WordCount
from pipeline.store import PartRef

INTERRUPTED = "_interrupted.json"  # an interrupted search's best boards so far

RESULT_COLUMNS: dict[str, str] = {
    "board": "string: the board in compact notation, canonical under the symmetries of its shape",
    "rows": "int16: board rows",
    "cols": "int16: board columns",
    "score": "int32: the objective's value (points, words, or points over the subset)",
    "points": "int32: points under the rule set, all lexicon words counted",
    "n_words": "int32: distinct lexicon words on the board",
    "words": "list<string>: the lexicon words on the board, sorted",
    "restart": "int32: the first restart (by number) that found the board",
    "iteration": "int64: the iteration of that restart at which it was found (hill: pool "
    f"generation; anneal: moves made, counted in blocks of {ANNEAL_CHUNK:,})",
    "iterations": "int64: iterations that restart ran in all",
    "strategy": "string: hill or anneal",
    "objective": "string: points, words or subset",
    "seed": "int64: the run's seed (restart i uses SeedSequence(seed).spawn(restarts)[i])",
}
# a search's job directory (2: the part recorded (size, BLAKE2b), the manifest sealed)
KIND = store.job_kind("boggle-optimize").documented(RESULT_COLUMNS)
FORMAT = KIND.format


@dataclass(frozen=True, kw_only=True)
class BestBoard(WordCount):
    board: Board
    score: int  # the objective
    points: int
    words: list[str]
    restart: int
    iteration: int
    iterations: int


@dataclass(kw_only=True)
class OptimizeResult:
    boards: list[BestBoard]  # distinct, best first
    restarts: list[RestartResult]
    manifest: dict[str, Any]
    out: PartRef | None

    @property
    def best(self) -> BestBoard:
        return self.boards[0]


def collect_boards(
    restarts: Sequence[RestartResult],
    space: SearchSpace,
    objective: Objective,
    lexicon: CompiledLexicon,
    keep: int,
) -> list[BestBoard]:
    """The best distinct boards over all restarts, re-solved with the batch solver: the
    objective's score is checked against the search kernel's, words and points come from the
    full lexicon."""
    from pipeline.solve import solve_arrays

    first: dict[bytes, tuple[Found, RestartResult]] = {}
    for r in restarts:  # in restart order, so the first restart to find a board owns it
        for found in r.found:
            first.setdefault(found.key, (found, r))
    ranked = sorted(first.values(), key=lambda fr: (-fr[0].score, fr[0].key))[:keep]
    if not ranked:
        return []
    boards = np.stack([key_faces(f.key) for f, _ in ranked])
    rows, cols = space.rows, space.cols
    check = solve_arrays(boards, rows, cols, objective.lexicon, collect=False).score
    full = solve_arrays(boards, rows, cols, lexicon, collect=True)
    ids = full.sorted_ids()
    out = []
    for k, (f, r) in enumerate(ranked):
        if int(check[k]) != f.score:
            raise BoggleError(f"internal: search kernel scored {f.score}, batch solver {int(check[k])}")
        words = [lexicon.words[i] for i in ids[full.offsets[k] : full.offsets[k + 1]]]
        board = space.board(boards[k], lexicon.alphabet)
        out.append(
            BestBoard(
                board=board,
                score=f.score,
                points=int(full.score[k]),
                words=words,
                restart=r.restart,
                iteration=f.iteration,
                iterations=r.iterations,
            )
        )
    return out


def results_table(boards: Sequence[BestBoard], cfg: OptimizeConfig) -> Any:
    import pyarrow as pa

    schema = pa.schema([pa.field(k, _arrow_type(doc), nullable=False) for k, doc in RESULT_COLUMNS.items()])
    n = len(boards)
    data = {
        "board": [format_compact(b.board) for b in boards],
        "rows": [b.board.rows for b in boards],
        "cols": [b.board.cols for b in boards],
        "score": [b.score for b in boards],
        "points": [b.points for b in boards],
        "n_words": [b.n_words for b in boards],
        "words": [b.words for b in boards],
        "restart": [b.restart for b in boards],
        "iteration": [b.iteration for b in boards],
        "iterations": [b.iterations for b in boards],
        "strategy": [cfg.strategy] * n,
        "objective": [cfg.objective] * n,
        "seed": [cfg.seed] * n,
    }
    return pa.Table.from_pydict(data, schema=schema)


def _arrow_type(doc: str) -> Any:
    """The Arrow type a column's description starts with (``int32: ...``; ``list<string>``: a
    list whose items are never null)."""
    import pyarrow as pa

    name = doc.split(":", 1)[0]
    if name.startswith("list<") and name.endswith(">"):
        return pa.list_(pa.field("item", _arrow_type(name[len("list<") : -1]), nullable=False))
    return pa.type_for_alias(name)


def read_results(out: Path | str) -> Any:
    """The boards table of a finished optimize run (a BoggleError if it is not one)."""
    import pyarrow.parquet as pq

    out = Path(out)
    manifest = store.read_manifest(out) if (out / store.MANIFEST).is_file() else {}
    if manifest.get("format") != FORMAT:
        raise BoggleError(f"{out}: not a finished optimize run (no {store.MANIFEST} of format {FORMAT})")
    problems = store.job_problems(out, manifest)
    if problems:
        raise DamagedRunError(
            f"{out}: damaged optimize result, refused ({store.describe_problems(problems)})"
        )
    return pq.read_table(out / store.part_name(0))
