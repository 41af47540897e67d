"""A proof's certificate: its columns, the records a proof reports (:class:`ProveProgress`,
:class:`ProveSummary`), and the totals read from certificate tables (the boards >= threshold in
canonical form, classes eliminated, the coverage check)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from pipeline.boards import canonical, format_compact
from pipeline.errors import InternalError
from pipeline.store import JobStatus, PartRef

CERTIFICATE_SCHEMA = pa.schema(
    [
        ("class_id", pa.int64()),
        ("letters", pa.list_(pa.string())),
        ("root_bound", pa.int64()),
        ("status", pa.string()),
        ("boards_scored", pa.int64()),
        ("nodes", pa.int64()),
        ("best_board", pa.string()),
        ("best_score", pa.int32()),
        ("found_boards", pa.list_(pa.string())),
        ("found_scores", pa.list_(pa.int32())),
        ("seconds", pa.float64()),
    ]
)

CERTIFICATE_COLUMNS: dict[str, str] = {
    "class_id": "int64: the class (each cell's bucket number, as a mixed-radix number, cell 0 first)",
    "letters": "list<string>: the faces allowed on each cell (its bucket), row-major (Qu shown as q)",
    "root_bound": "int64: the class's upper bound: min(tree, sum) (--bound tree), min(sum, max) (sumax)",
    "status": "string: eliminated (no board had to be scored) or enumerated",
    "boards_scored": "int64: boards of the class scored exactly by the solver",
    "nodes": "int64: sub-classes branched on",
    "best_board": "string: the best board scored (compact, as found), null when none was",
    "best_score": "int32: its score, null when no board was scored",
    "found_boards": "list<string>: boards of the class scoring >= threshold (compact, as found)",
    "found_scores": "list<int32>: their scores",
    "seconds": "float64: wall seconds spent on the class",
}


def columns_table(schema: pa.Schema, cols: dict[str, list[Any]]) -> pa.Table:
    """A table of ``schema`` from Python lists, one per column (int, float and string columns,
    null where None, and lists of them). Built from numpy buffers: ``pa.table`` and
    ``pa.array`` import pandas on first use, about 36 MB in every prover process for nothing."""
    return pa.Table.from_arrays([_column(cols[f.name], f.type) for f in schema], schema=schema)


def int64_values(column: pa.ChunkedArray) -> np.ndarray:
    """The values of an int64 column without nulls, read off its buffers (``to_numpy`` imports
    pandas, see :func:`columns_table`)."""
    if column.null_count:
        raise InternalError("int64_values: a column with nulls")
    chunks = [
        np.frombuffer(a.buffers()[1], np.int64)[a.offset : a.offset + len(a)] for a in column.chunks if len(a)
    ]
    return np.concatenate(chunks) if chunks else np.empty(0, np.int64)


def _validity(values: list[Any]) -> tuple[pa.Buffer | None, int]:
    nulls = [v is None for v in values]
    if not any(nulls):
        return None, 0
    return pa.py_buffer(np.packbits(~np.array(nulls), bitorder="little")), sum(nulls)


def _column(values: list[Any], type_: pa.DataType) -> pa.Array:
    n = len(values)
    valid, null_count = _validity(values)
    if pa.types.is_list(type_):
        sizes = np.array([0 if v is None else len(v) for v in values], np.int64)
        offsets = np.zeros(n + 1, np.int32)
        np.cumsum(sizes, out=offsets[1:])
        child = _column([x for v in values if v is not None for x in v], type_.value_type)
        return pa.Array.from_buffers(
            type_, n, [valid, pa.py_buffer(offsets)], null_count=null_count, children=[child]
        )
    if pa.types.is_string(type_):
        raw = [b"" if v is None else v.encode("utf-8") for v in values]
        offsets = np.zeros(n + 1, np.int64)
        np.cumsum([len(r) for r in raw], out=offsets[1:])
        if offsets[-1] > np.iinfo(np.int32).max:
            raise InternalError("a string column of more than 2 GB")
        buffers = [valid, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(b"".join(raw))]
        return pa.Array.from_buffers(type_, n, buffers, null_count=null_count)
    dtype = type_.to_pandas_dtype()  # numpy's dtype for a numeric type (pandas not imported)
    data = np.array([0 if v is None else v for v in values], dtype=dtype)
    return pa.Array.from_buffers(type_, n, [valid, pa.py_buffer(data)], null_count=null_count)


# _boards.pq: every board >= threshold once, best first
BOARDS_FILE_COLUMNS: dict[str, str] = {
    "board": "string: a board scoring >= threshold, compact, in canonical form under the shape's symmetries",
    "score": "int32: its score",
}


@dataclass(frozen=True, kw_only=True)
class ProveProgress:
    classes_done: int
    classes_total: int
    boards_found: int  # boards >= threshold so far (not yet de-duplicated by symmetry)
    best_score: int | None
    best_board: str | None
    elapsed: float


ProgressCallback = Callable[[ProveProgress], None]


@dataclass(frozen=True, kw_only=True)
class FoundBoard:
    board: str
    score: int


@dataclass(kw_only=True)
class ProveSummary:
    """A proof's outcome (``status``: complete, resumed or already complete, as for every
    command, :class:`pipeline.store.JobOutcome`; or sample: never certified)."""

    out: PartRef | None
    status: JobStatus
    threshold: int
    classes_total: int
    classes_done: int
    boards: list[FoundBoard] = field(default_factory=list)  # canonical, score descending
    wall_s: float = 0.0
    cpu_s: float = 0.0
    eliminated: int = 0
    boards_scored: int = 0
    # over every session: the workers' CPU on the parts that record it (META_CPU), and how many
    # of the proof's parts do (older parts do not)
    cpu_s_recorded: float = 0.0
    parts_recorded: int = 0
    parts_total: int = 0
    parts_reused: int = 0  # parts an earlier session wrote
    # over every session: the wall time from each session's start to its last part (META_SESSION),
    # summed, and how many of the proof's parts record it
    wall_s_recorded: float = 0.0
    parts_wall: int = 0

    @property
    def best(self) -> FoundBoard | None:
        return self.boards[0] if self.boards else None


def sessions_wall(parts: Any) -> float:
    """The wall time of the sessions that wrote ``parts`` ((session, seconds from its start to
    the part's commit) pairs): each session's last part, summed."""
    last: dict[str, float] = {}
    for session, seconds in parts:
        last[session] = max(last.get(session, 0.0), seconds)
    return sum(last.values())


def best_of(tables: Any) -> tuple[int, str] | None:
    """(score, board) of the best board the certificate ``tables`` scored, None if none was."""
    best: tuple[int, str] | None = None
    for t in tables:
        for b, s in zip(t.column("best_board").to_pylist(), t.column("best_score").to_pylist(), strict=True):
            if s is not None and (best is None or s > best[0]):
                best = (s, b)
    return best


def check_coverage(tables: list[pa.Table], canonical_ids: np.ndarray) -> None:
    """The certificate rows name every canonical class exactly once (else a BoggleError)."""
    got = np.concatenate([int64_values(t.column("class_id")) for t in tables] or [np.empty(0, np.int64)])
    if len(got) != len(canonical_ids) or not np.array_equal(np.sort(got), canonical_ids):
        missing = np.setdiff1d(canonical_ids, got)
        raise InternalError(
            f"coverage check failed: {len(got)} certificate rows for {len(canonical_ids)} canonical "
            f"classes ({len(missing)} missing, e.g. {missing[:3].tolist()})"
        )


def certificate_totals(tables: list[pa.Table], rows: int, cols: int) -> tuple[int, int, list[FoundBoard]]:
    """Of the certificate ``tables``: classes eliminated, boards scored, and the boards >= the
    threshold in canonical form, best first."""
    best: dict[str, int] = {}
    eliminated = 0
    scored = 0
    for t in tables:
        eliminated += sum(1 for s in t.column("status").to_pylist() if s == "eliminated")
        scored += int(int64_values(t.column("boards_scored")).sum())  # no pyarrow.compute: 9 MB
        for bs, ss in zip(
            t.column("found_boards").to_pylist(), t.column("found_scores").to_pylist(), strict=True
        ):
            for b, s in zip(bs, ss, strict=True):
                best[canonical_compact(b, rows, cols)] = s
    boards = sorted(
        (FoundBoard(board=b, score=s) for b, s in best.items()), key=lambda x: (-x.score, x.board)
    )
    return eliminated, scored, boards


def canonical_compact(board: str, rows: int, cols: int) -> str:
    from pipeline.boards import parse_compact

    return format_compact(canonical(parse_compact(board, (rows, cols))))
