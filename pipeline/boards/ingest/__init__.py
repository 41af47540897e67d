"""Ingest: stream boards from files, in chunks, with every bad row kept as a reject.

Inputs, chosen by file name:

* ``*.csv``: a header row and a column of compact boards (``[boards] column``, default
  ``board``); the line is the line the record starts on.
* ``*.parquet`` / ``*.pq``: a string column of compact boards; the "line" is the row number.
* anything else is text (gzip is read transparently), its notation detected from the first
  board line: ``ROWS COLS`` starts algs4 boards (several may follow each other), a line of
  several faces starts grid boards (separated by blank lines), otherwise one compact board a
  line. Blank lines and lines starting with ``#`` are not records.

Each record becomes a board or a :class:`Reject` (source file, line, raw text, reason): a row
that does not parse, has the wrong shape, or shows a face outside the run's alphabet. Valid and
rejected records add up to the records read. Files are read line by line and handed on a chunk
at a time, so memory does not grow with the input.

* ``_files``: the input files: their kind, a local copy of a remote one, read safely and hashed;
* ``_records``: the records of a file (CSV, Parquet, or text in any notation) before parsing;
* ``_chunks``: records grouped into chunks and parsed into boards or rejects.
"""

from __future__ import annotations

from pipeline.boards.ingest._chunks import (
    MAX_CHUNK_TEXT,
    REJECT_FIELDS,
    BoardGroup,
    BoardParser,
    IngestChunk,
    Reject,
    escape_controls,
    iter_chunks,
    iter_ingest_chunks,
    iter_records,
    write_rejects_header,
)
from pipeline.boards.ingest._files import InputDigest, check_unchanged, file_kind, fingerprint, local_input
from pipeline.boards.ingest._records import MAX_GRID_LINES, Record, check_input, read_records

__all__ = [
    "MAX_CHUNK_TEXT",
    "MAX_GRID_LINES",
    "REJECT_FIELDS",
    "BoardGroup",
    "BoardParser",
    "IngestChunk",
    "InputDigest",
    "Record",
    "Reject",
    "check_input",
    "check_unchanged",
    "escape_controls",
    "file_kind",
    "fingerprint",
    "iter_chunks",
    "iter_ingest_chunks",
    "iter_records",
    "local_input",
    "read_records",
    "write_rejects_header",
]
