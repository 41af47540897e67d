"""The pool file of ``boggle select``: its columns, its rows, and writing it.

The columns are documented on the formats page from :data:`POOL_COLUMNS`; the rows are built
from the selected boards of a run part; the file is written as Parquet (the filters and runs in
its metadata) or CSV.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from pipeline.errors import BoggleError

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

    from pipeline.store import PartRef

# The pool file's formats by file extension
FORMATS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv"}

# The pool file's columns (documented in docs/reference/formats.md from here)
POOL_COLUMNS: dict[str, str] = {
    "board": "string: the board in compact notation (q = Qu, '.' blank, [xy] a multi-letter face)",
    "grid": "string: the board's rows, each in compact notation, joined by '/' (pers/latg/sine/ters)",
    "rows": "int16: board rows",
    "cols": "int16: board columns",
    "score": "int32: total points of the distinct words found",
    "n_words": "int32: distinct words found",
    "dead_cells": "int16: non-blank cells that no found word uses",
    "words": "list<string>: the words found, sorted (CSV: separated by spaces); null for a run "
    "without word lists",
    "band": "string: the word-count band the board falls in (a --preset name, or words A..B); "
    "null when no band was asked for",
    "run_id": "string: the run's identity (its run_id column)",
    "seed": "string: the generator seed of the run (decimal); null for ingested boards",
    "source": "string: the dice set or generator, or for ingested boards the input file",
    "board_id": "int64: the board's number in its run (generation order; for ingested boards "
    "the order of the valid rows of the input)",
    "lexicon_hash": "string: first 12 hex digits of the word list's SHA-256",
}


def check_out(run_dirs: Sequence[str | os.PathLike[str]], out: str | os.PathLike[str]) -> None:
    """Refuse (exit 2) a pool file inside one of the runs, or inside any other job directory
    (readers of the job would take it for part of it), or one that is there and is no regular
    file (a FIFO, a device, a directory), before any run is read."""
    from pathlib import Path

    from pipeline.store import check_output_file, refuse_inside_job, split_output
    from pipeline.urls import is_url

    if not is_url(out):
        target = Path(out).resolve()
        for run_dir in run_dirs:
            if is_url(run_dir):
                continue
            if Path(run_dir).resolve() in target.parents:
                raise BoggleError(f"--out {out} is inside the run directory {run_dir}: choose another --out")
    check_output_file(out)
    folder, _ = split_output(out)
    refuse_inside_job(folder, file=os.fspath(out))


def pool_ref(out: str | os.PathLike[str]) -> PartRef:
    """The pool file as results name it: a local path, or the object's URL."""
    from pipeline.store import job_path

    return job_path(os.fspath(out))


def out_format(out: str | os.PathLike[str]) -> str:
    """``parquet`` or ``csv`` from the pool file's extension (a BoggleError for another)."""
    fmt = FORMATS.get(PurePosixPath(os.fspath(out)).suffix.lower())
    if fmt is None:
        raise BoggleError(f"--out {out}: the pool file must end in .parquet, .pq or .csv")
    return fmt


def in_notation(boards: Sequence[str], rows: Sequence[int], cols: Sequence[int]) -> list[str]:
    """Compact boards as this release writes them (``pipeline.boards``): a run of schema 5
    wrote the Qu cell ``q``, now ``[qu]``; any other board is kept as it is.

    >>> in_notation(["qaaa", "[qu]aaa", "abcd"], [2, 2, 2], [2, 2, 2])
    ['[qu]aaa', '[qu]aaa', 'abcd']
    """
    from pipeline.boards import format_compact, parse_compact

    return [
        format_compact(parse_compact(b, (int(r), int(c)))) if "q" in b else b
        for b, r, c in zip(boards, rows, cols, strict=True)
    ]


def grid_strings(boards: Sequence[str], rows: Sequence[int], cols: Sequence[int]) -> list[str]:
    """Each compact board's rows joined by '/' (each row in compact notation).

    >>> grid_strings(["perslatgsineters", "[qu][th]ab"], [4, 2], [4, 2])
    ['pers/latg/sine/ters', '[qu][th]/ab']
    """
    from pipeline.boards import Board, format_compact, parse_compact

    out = []
    for board, r, c in zip(boards, rows, cols, strict=True):
        r, c = int(r), int(c)
        if "[" not in board and len(board) == r * c:  # one character a cell: slice
            out.append("/".join(board[i : i + c] for i in range(0, r * c, c)))
            continue
        faces = parse_compact(board, (r, c)).faces
        out.append("/".join(format_compact(Board(1, c, faces[i : i + c])) for i in range(0, r * c, c)))
    return out


def pool_schema() -> pa.Schema:
    import pyarrow as pa

    types = {
        "rows": pa.int16(),
        "cols": pa.int16(),
        "score": pa.int32(),
        "n_words": pa.int32(),
        "dead_cells": pa.int16(),
        "words": pa.list_(pa.string()),
        "board_id": pa.int64(),
    }
    return pa.schema([pa.field(name, types.get(name, pa.string())) for name in POOL_COLUMNS])


def _column(table: pa.Table, name: str, rows: np.ndarray, kind: pa.DataType) -> pa.Array:
    import pyarrow as pa

    if name not in table.column_names:
        return pa.nulls(len(rows), kind)
    col = table.column(name).take(pa.array(rows, pa.int64())).combine_chunks()
    if pa.types.is_dictionary(col.type):
        col = col.dictionary_decode()
    if name == "words" and pa.types.is_dictionary(col.type.value_type):
        col = col.cast(pa.list_(pa.string()))
    return col.cast(kind)


def pool_rows(table: pa.Table, rows: np.ndarray, bands: Sequence[str] | None) -> pa.Table:
    """The pool rows of ``rows`` of a part's ``table``, in the pool's schema; ``bands``: each
    row's band name (None: no band asked for)."""
    import pyarrow as pa

    schema = pool_schema()
    cols: dict[str, pa.Array] = {}
    for f in schema:
        if f.name == "grid":
            continue
        if f.name == "band":
            cols["band"] = pa.array(bands, pa.string()) if bands else pa.nulls(len(rows), pa.string())
            continue
        cols[f.name] = _column(table, f.name, rows, f.type)
    shape = (cols["rows"].to_pylist(), cols["cols"].to_pylist())
    cols["board"] = pa.array(in_notation(cols["board"].to_pylist(), *shape), pa.string())
    cols["grid"] = pa.array(
        grid_strings(cols["board"].to_pylist(), cols["rows"].to_pylist(), cols["cols"].to_pylist()),
        pa.string(),
    )
    return pa.table([cols[f.name] for f in schema], schema=schema)


def write_pool(pool: pa.Table, out: str | os.PathLike[str], fmt: str, meta: dict[str, Any]) -> None:
    """The pool as Parquet (with the filters and runs in its metadata under
    ``boggle.select``) or CSV (words separated by spaces), written atomically: renamed into
    place on disk, one PUT in an object store (:func:`pipeline.store.output_file`)."""
    import pyarrow.parquet as pq

    from pipeline.store import output_file

    if fmt == "parquet":
        pool = pool.replace_schema_metadata({"boggle.select": json.dumps(meta, sort_keys=True)})
        with output_file(out) as tmp:
            pq.write_table(pool, tmp, compression="zstd")
        return
    df = pool.to_pandas()
    df["words"] = [None if w is None else " ".join(w) for w in df["words"]]
    with output_file(out) as tmp, open(tmp, "w", encoding="utf-8", newline="") as fh:
        df.to_csv(fh, index=False, lineterminator="\n")
