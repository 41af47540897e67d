"""The run store: Parquet parts, the ``_SUCCESS`` manifest, resume, and the run lock.

Layout of a run directory (the contract every later stage reads)::

    RUN_DIR/_run.json            the run's record, written first: resolved config + identity
    RUN_DIR/.lock                fcntl lock, there only while a run writes (or after a kill)
    RUN_DIR/part-00000.parquet   one part per chunk, zstd, written to a temp name and renamed
    RUN_DIR/part-00001.parquet   ...
    RUN_DIR/_rejects.csv         rejected input rows: source, line, raw, reason (ingest runs)
    RUN_DIR/_parts/_part-00000.json  size and BLAKE2b checksum of each part, recorded when the main
                                 process has the worker's result (a part without one is not trusted)
    RUN_DIR/_SUCCESS             the manifest (JSON), written last: a run is finished iff it exists

Every file that is not board data starts with ``_`` or ``.`` (temp files are
``.<name>.<pid>.tmp``), the names pyarrow, pandas and Spark skip when they read a directory, so
``pandas.read_parquet(RUN_DIR)`` and ``pyarrow.dataset.dataset(RUN_DIR)`` read exactly the
boards. Polars reads every file of a directory unless told ``hidden_file_prefix=["_", "."]``;
the glob ``RUN_DIR/*.parquet`` works for every reader, DuckDB included.

A chunk is committed iff its part file exists (the rename is atomic) and its record in
``_parts/`` matches it (size, checksum) and its embedded ``boggle.config`` equals the run's; a
re-run after a crash reuses those chunks and recomputes the rest, naming every part it
distrusts. ``open_run`` is how other stages read a finished run; it refuses a run without ``_SUCCESS``.

One row per board; see :data:`COLUMNS` for every column. Word counts and points by word length
are fixed columns ``words_len_<L>`` / ``points_len_<L>`` for L = ``min(3, min_length)`` .. 8 plus
``words_len_9plus`` / ``points_len_9plus``.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.boards import compact_strings
from pipeline.errors import BoggleError, OutputConflictError, RunIOError
from pipeline.io import atomic_path, write_json_atomic

FORMAT = "boggle-run"
# 2: provenance columns lexicon, lexicon_hash, rules; rejects file renamed _rejects.csv
SCHEMA_VERSION = 2
MANIFEST = "_SUCCESS"
RUN_RECORD = "_run.json"
LOCK_FILE = ".lock"
REJECTS = "_rejects.csv"
LEGACY_REJECTS = "rejects.csv"  # schema 1 runs; read, and removed by --overwrite
HASH_CHARS = 12  # hex digits of a SHA-256 kept in the provenance columns
MAX_PART = 99_999  # part numbers are written with five digits
PART_RE = re.compile(r"^part-(\d{5,})\.parquet$")
META_CONFIG = "boggle.config"
META_LEXICON = "boggle.lexicon"
META_RULES = "boggle.rules"
META_SCHEMA = "boggle.schema_version"
PARTS_DIR = "_parts"  # "_": dataset readers (pyarrow, pandas, DuckDB globs of *.parquet) skip it
COMPRESSION = "zstd"
STATISTICS_COLUMNS = ["board_id", "chunk", "score", "n_words", "max_word_len", "dead_cells"]
TOP_LENGTH = 8  # lengths above this share the "9plus" column

COLUMNS: dict[str, str] = {
    "board_id": "int64: the board's number, 0..N-1 in generation order (or input order of the "
    "valid rows for ingest); stable across re-runs, backends and worker counts",
    "board": "string: the board in compact notation (pipeline.boards.format_compact; q = Qu, "
    "'.' blank, [xy] multi-letter face); parse_compact(board, (rows, cols)) gives it back",
    "rows": "int16: board rows",
    "cols": "int16: board columns",
    "source": "string: the dice set or generator (generate) or the input file (ingest)",
    "lexicon": "dictionary<string>: the word list's name as the manifest's lexicon.name gives it "
    "(file name such as enable2k.txt, or tanglet:<lang>)",
    "lexicon_hash": "dictionary<string>: first 12 hex digits of the word list's SHA-256 "
    "(the manifest's lexicon.content_hash); two lists of one name tell apart by it",
    "rules": "dictionary<string>: the rule preset (boggle, big, superbig); when fields were "
    "overridden, '<preset>+<first 8 hex of the SHA-256 of Rules.key()>'",
    "chunk": "int32: the chunk (part file number) the board belongs to",
    "score": "int32: total points of the distinct words found",
    "n_words": "int32: distinct words found",
    "words": "list<string>: the words found, sorted",
    "longest_word": "string: the longest word found (ties: alphabetically first); '' if none",
    "max_word_len": "int16: letters in the longest word (0 if none)",
    "dead_cells": "int16: non-blank cells that no found word uses",
    "words_len_<L>": "int32: words of exactly L letters (L = min(3, min_length)..8)",
    "words_len_9plus": "int32: words of 9 or more letters",
    "points_len_<L>": "int32: points from words of exactly L letters",
    "points_len_9plus": "int32: points from words of 9 or more letters",
}


# ---------------------------------------------------------------- schema

# One value per run in each provenance column: dictionary-encoded, a few bytes per part.
LABEL_TYPE = pa.dictionary(pa.int32(), pa.string())


def length_bins(min_length: int) -> list[str]:
    """Labels of the by-length columns: ``["3", ..., "8", "9plus"]`` (starting lower when the
    minimum length is below 3)."""
    lo = min(3, max(1, min_length))
    return [str(n) for n in range(lo, TOP_LENGTH + 1)] + [f"{TOP_LENGTH + 1}plus"]


def board_schema(min_length: int = 3) -> pa.Schema:
    """The Arrow schema of a part file for a rule set with this minimum word length."""
    fields = [
        pa.field("board_id", pa.int64(), nullable=False),
        pa.field("board", pa.string(), nullable=False),
        pa.field("rows", pa.int16(), nullable=False),
        pa.field("cols", pa.int16(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
        pa.field("lexicon", LABEL_TYPE, nullable=False),
        pa.field("lexicon_hash", LABEL_TYPE, nullable=False),
        pa.field("rules", LABEL_TYPE, nullable=False),
        pa.field("chunk", pa.int32(), nullable=False),
        pa.field("score", pa.int32(), nullable=False),
        pa.field("n_words", pa.int32(), nullable=False),
        pa.field("words", pa.list_(pa.field("item", pa.string(), nullable=False)), nullable=False),
        pa.field("longest_word", pa.string(), nullable=False),
        pa.field("max_word_len", pa.int16(), nullable=False),
        pa.field("dead_cells", pa.int16(), nullable=False),
    ]
    bins = length_bins(min_length)
    fields += [pa.field(f"words_len_{b}", pa.int32(), nullable=False) for b in bins]
    fields += [pa.field(f"points_len_{b}", pa.int32(), nullable=False) for b in bins]
    return pa.schema(fields)


def parquet_metadata(
    config: Mapping[str, Any], lexicon: Mapping[str, Any], rules: Mapping[str, Any]
) -> dict[str, str]:
    """Key-value metadata every part carries: the data config, lexicon provenance, rules."""
    dump = lambda d: json.dumps(d, sort_keys=True, ensure_ascii=False, default=str)  # noqa: E731
    return {
        META_CONFIG: dump(config),
        META_LEXICON: dump(lexicon),
        META_RULES: dump(rules),
        META_SCHEMA: str(SCHEMA_VERSION),
    }


def rules_label(rules: Any) -> str:
    """The ``rules`` column value: the preset name, plus a short hash when fields differ from
    the preset (``boggle`` vs ``boggle+1a2b3c4d``)."""
    import hashlib

    from pipeline.rules import PRESETS

    if PRESETS.get(rules.name) == rules:
        return str(rules.name)
    return f"{rules.name}+{hashlib.sha256(rules.key().encode()).hexdigest()[:8]}"


def provenance_labels(lexicon: Any) -> dict[str, str]:
    """The provenance column values for a CompiledLexicon (one value per run)."""
    return {
        "lexicon": str(lexicon.name),
        "lexicon_hash": str(lexicon.content_hash)[:HASH_CHARS],
        "rules": rules_label(lexicon.rules),
    }


def label_column(value: str, n: int) -> pa.DictionaryArray:
    """``n`` copies of ``value`` as a dictionary array (one dictionary entry, int32 indices)."""
    return pa.DictionaryArray.from_arrays(_numeric(np.zeros(n), np.int32), _repeat_string(value, 1))


# ---------------------------------------------------------------- building tables


_WORDS_CACHE: dict[int, tuple[Any, pa.Array]] = {}

# Arrays are built from numpy buffers (zero copy) rather than with pa.array / pa.scalar: those
# import pandas on first use, about 50 MB in every worker process for nothing.


def _numeric(values: np.ndarray, dtype: Any) -> pa.Array:
    """A numpy array as an Arrow array of the same values (``dtype``: a numpy dtype)."""
    arr = np.ascontiguousarray(values, dtype=dtype)
    return pa.Array.from_buffers(pa.from_numpy_dtype(arr.dtype), len(arr), [None, pa.py_buffer(arr)])


def _strings(offsets: np.ndarray, data: bytes | np.ndarray) -> pa.Array:
    """Arrow strings from int32 offsets [n+1] into UTF-8 ``data``."""
    offs = np.ascontiguousarray(offsets, dtype=np.int32)
    return pa.Array.from_buffers(pa.string(), len(offs) - 1, [None, pa.py_buffer(offs), pa.py_buffer(data)])


def _repeat_string(value: str, n: int) -> pa.Array:
    raw = value.encode("utf-8")
    return _strings(np.arange(n + 1, dtype=np.int64) * len(raw), raw * n)


def _words_array(words: list[str]) -> pa.Array:
    """The lexicon's word table as an Arrow array with one extra entry, ``""`` at index
    ``len(words)`` (the longest word of a board without words), built once per word list per
    process."""
    hit = _WORDS_CACHE.get(id(words))
    if hit is not None and hit[0] is words:
        return hit[1]
    encoded = [w.encode("utf-8") for w in words]
    offsets = np.zeros(len(encoded) + 2, np.int64)
    np.cumsum(np.fromiter(map(len, encoded), np.int64, len(encoded)), out=offsets[1:-1])
    offsets[-1] = offsets[-2]
    if offsets[-1] > np.iinfo(np.int32).max:
        raise BoggleError("the word list holds more than 2 GB of text")
    arr = _strings(offsets, b"".join(encoded))
    _WORDS_CACHE.clear()
    _WORDS_CACHE[id(words)] = (words, arr)
    return arr


def results_table(
    boards: np.ndarray,
    rows: int,
    cols: int,
    board_ids: np.ndarray,
    result: Any,
    lexicon: Any,
    *,
    source: str | pa.Array,
    chunk: int,
    schema: pa.Schema | None = None,
    summary: Any = None,
) -> pa.Table:
    """One Arrow table (schema :func:`board_schema`) for a batch of solved boards.

    ``result`` is a :class:`pipeline.solve.BatchResult` solved with ``collect=True`` for
    ``boards`` (int8 [n, rows*cols]) and ``lexicon`` (a CompiledLexicon); ``source`` is one
    string for all rows or an Arrow string array. ``summary`` is the result's
    :class:`pipeline.solve.summary.WordSummary` for :func:`length_bins`; when None it is
    computed here (which imports numba: workers pass it in).
    """
    n = len(boards)
    min_length = lexicon.rules.min_length
    schema = schema or board_schema(min_length)
    bins = length_bins(min_length)
    lo = int(bins[0])
    offsets = np.ascontiguousarray(result.offsets, dtype=np.int64)
    if summary is None:
        from pipeline.solve.summary import summarise_words

        summary = summarise_words(offsets, result.word_ids, lexicon, lo, len(bins))
    ids, longest_id, counts, points = summary.word_ids, summary.longest_id, summary.counts, summary.points
    words = _words_array(lexicon.words)
    if offsets[-1] > np.iinfo(np.int32).max:
        raise BoggleError("a chunk found more than 2**31 words; lower [boards] chunk_size")
    word_lists = pa.ListArray.from_arrays(_numeric(offsets, np.int32), words.take(_numeric(ids, np.int32)))
    no_word = len(words) - 1  # the "" entry
    longest_words = words.take(_numeric(np.where(longest_id >= 0, longest_id, no_word), np.int32))
    source_arr = _repeat_string(source, n) if isinstance(source, str) else source
    data: dict[str, Any] = {
        "board_id": _numeric(board_ids, np.int64),
        "board": compact_strings(boards, lexicon.alphabet.faces),
        "rows": _numeric(np.full(n, rows), np.int16),
        "cols": _numeric(np.full(n, cols), np.int16),
        "source": source_arr,
        **{k: label_column(v, n) for k, v in provenance_labels(lexicon).items()},
        "chunk": _numeric(np.full(n, chunk), np.int32),
        "score": _numeric(result.score, np.int32),
        "n_words": _numeric(result.n_words, np.int32),
        "words": word_lists,
        "longest_word": longest_words,
        "max_word_len": _numeric(result.longest, np.int16),
        "dead_cells": _numeric(result.dead_cells, np.int16),
    }
    for j, b in enumerate(bins):
        data[f"words_len_{b}"] = _numeric(counts[:, j], np.int32)
    for j, b in enumerate(bins):
        data[f"points_len_{b}"] = _numeric(points[:, j], np.int32)
    return pa.Table.from_arrays([data[f.name] for f in schema], schema=schema)


# ---------------------------------------------------------------- parts


def part_name(chunk: int) -> str:
    return f"part-{chunk:05d}.parquet"


def part_path(run_dir: Path | str, chunk: int) -> Path:
    return Path(run_dir) / part_name(chunk)


def committed_chunks(run_dir: Path | str) -> dict[int, Path]:
    """The chunks whose part file exists (and is therefore complete), by chunk number."""
    run_dir = Path(run_dir)
    out: dict[int, Path] = {}
    if not run_dir.is_dir():
        return out
    for p in run_dir.iterdir():
        m = PART_RE.match(p.name)
        if m:
            out[int(m.group(1))] = p
    return out


def part_rows(path: Path | str) -> int:
    """Rows in a part file (from its footer; the data is not read)."""
    return int(pq.ParquetFile(path).metadata.num_rows)


def write_part(
    run_dir: Path | str, chunk: int, table: pa.Table, metadata: Mapping[str, str] | None = None
) -> int:
    """Write ``table`` as the chunk's part (zstd), atomically; return the file size in bytes."""
    path = part_path(run_dir, chunk)
    if metadata:
        merged = dict(table.schema.metadata or {})
        merged.update({k.encode(): v.encode() for k, v in metadata.items()})
        table = table.replace_schema_metadata(merged)
    with atomic_path(path) as tmp:
        # Statistics only where a reader can prune on them: computing min/max over the words
        # list and board strings costs as much as compressing them.
        pq.write_table(table, tmp, compression=COMPRESSION, write_statistics=STATISTICS_COLUMNS)
    return path.stat().st_size


# ---------------------------------------------------------------- lock and run state


def _lock_fd(run_dir: Path, path: Path) -> int:
    """A descriptor holding the exclusive flock on ``path``, which names that very file."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = ""
            with suppress(OSError):
                holder = os.pread(fd, 64, 0).decode(errors="replace").strip()
            os.close(fd)
            who = f" (pid {holder})" if holder else ""
            raise OutputConflictError(
                f"output directory {run_dir} is in use by another run{who}; wait for it or "
                "choose another --out"
            ) from None
        except BaseException:
            os.close(fd)
            raise
        # The holder before us unlinks the file before it lets go, so the inode we opened may
        # no longer be at ``path``; a lock on it would exclude nobody. Try again on the new file.
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(path))
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)


@contextmanager
def run_lock(run_dir: Path | str) -> Iterator[Path]:
    """Hold an exclusive ``fcntl.flock`` on RUN_DIR/.lock for the block, and remove the file
    when the block ends, so a finished run leaves no lock file among its parts.

    The OS drops the lock when the holder dies, so a killed run never blocks its re-run (the
    file stays until the next run on the directory ends). A second run on the same directory
    gets an :class:`OutputConflictError` at once. Unlinking a held lock file is safe because
    every taker checks, once it holds the lock, that the path still names the file it locked.
    """
    run_dir = Path(run_dir)
    if run_dir.exists() and not run_dir.is_dir():
        raise RunIOError(f"output {run_dir} exists and is not a directory; a re-run resumes once it is fixed")
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / LOCK_FILE
    fd = _lock_fd(run_dir, path)
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield path
    finally:
        # Unlink while still holding the lock: a waiter that opened the old file sees it is
        # gone (samestat fails) and retries on a fresh one.
        with suppress(OSError):
            path.unlink()
        os.close(fd)  # closing the descriptor releases the lock


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BoggleError(f"cannot read {path}: {exc}") from None
    if not isinstance(data, dict):
        raise BoggleError(f"{path}: expected a JSON object")
    return data


def _owned(p: Path) -> bool:
    name = p.name
    return (
        bool(PART_RE.match(name))
        or name in (MANIFEST, RUN_RECORD, LOCK_FILE, REJECTS, LEGACY_REJECTS)
        or (name.startswith(".") and name.endswith(".tmp"))
    )


def remove_temp_files(run_dir: Path) -> None:
    """Delete temp files a killed writer left behind (call with the lock held)."""
    for folder in (run_dir, run_dir / PARTS_DIR):
        for p in folder.iterdir() if folder.is_dir() else ():
            if p.name.startswith(".") and p.name.endswith(".tmp") and p.is_file():
                p.unlink(missing_ok=True)


def clear_run(run_dir: Path) -> None:
    """Remove every file a run writes (parts, manifest, record, rejects, temp files); other
    files are left alone. Call with the lock held."""
    for p in run_dir.iterdir():
        if p.is_file() and _owned(p) and p.name != LOCK_FILE:
            p.unlink()
    shutil.rmtree(run_dir / PARTS_DIR, ignore_errors=True)


def _describe_diff(old: Mapping[str, Any], new: Mapping[str, Any], prefix: str = "") -> str:
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            return _describe_diff(a, b, f"{prefix}{key}.")
        return f"{prefix}{key}: {json.dumps(a, default=str)} there, {json.dumps(b, default=str)} now"
    return "no difference"


def prepare_run_dir(run_dir: Path, identity: Mapping[str, Any], *, overwrite: bool) -> str:
    """Decide what to do with ``run_dir`` (call with the lock held): ``"new"``, ``"resume"``
    (a started run of the same identity) or ``"done"`` (a finished run of the same identity).

    A directory holding a different run, or files this store did not write, is an
    :class:`OutputConflictError` unless ``overwrite`` (which removes only run files).
    """
    remove_temp_files(run_dir)
    manifest_path = run_dir / MANIFEST
    record_path = run_dir / RUN_RECORD
    previous: dict[str, Any] | None = None
    if manifest_path.is_file():
        previous = read_json(manifest_path)
    elif record_path.is_file():
        previous = read_json(record_path)
    if previous is not None:
        old_identity = previous.get("identity", {})
        if old_identity == dict(identity):
            return "done" if manifest_path.is_file() else "resume"
        if not overwrite:
            what = "a finished" if manifest_path.is_file() else "an unfinished"
            raise OutputConflictError(
                f"output directory {run_dir} holds {what} run with a different config "
                f"({_describe_diff(old_identity, identity)}); use --overwrite to replace it or "
                "choose another --out"
            )
        clear_run(run_dir)
        return "new"
    foreign = sorted(p.name for p in run_dir.iterdir() if p.name not in (LOCK_FILE, PARTS_DIR))
    if foreign:
        runs = [n for n in foreign if _owned(run_dir / n)]
        if runs and overwrite:
            clear_run(run_dir)
            foreign = sorted(p.name for p in run_dir.iterdir() if p.name not in (LOCK_FILE, PARTS_DIR))
        if foreign:
            raise OutputConflictError(
                f"output directory {run_dir} is not empty and holds no run record "
                f"(found {', '.join(foreign[:3])}{'...' if len(foreign) > 3 else ''}); "
                "choose an empty or new directory"
                + ("" if runs else " (--overwrite only replaces run files)")
            )
    return "new"


def write_run_record(run_dir: Path, record: Mapping[str, Any]) -> None:
    write_json_atomic(run_dir / RUN_RECORD, dict(record))


# ---------------------------------------------------------------- finished runs


class FinishedRun(NamedTuple):
    """A finished run: its manifest and its part files in chunk order."""

    manifest: dict[str, Any]
    parts: list[Path]


def open_run(run_dir: Path | str) -> FinishedRun:
    """The manifest and part paths of a finished run; a BoggleError if it is not finished.

    >>> manifest, parts = open_run("runs/default")  # doctest: +SKIP
    """
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise BoggleError(f"run directory not found: {run_dir}")
    manifest_path = run_dir / MANIFEST
    if not manifest_path.is_file():
        state = (
            "unfinished (no _SUCCESS; re-run `boggle run` to finish it)"
            if (run_dir / RUN_RECORD).is_file()
            else "not a run directory (no _SUCCESS manifest)"
        )
        raise BoggleError(f"{run_dir}: {state}")
    manifest = read_json(manifest_path)
    if manifest.get("format") != FORMAT:
        raise BoggleError(f"{manifest_path}: not a boggle run manifest")
    parts = [run_dir / p["file"] for p in manifest.get("parts", [])]
    missing = [p.name for p in parts if not p.is_file()]
    if missing:
        raise BoggleError(f"{run_dir}: part files listed in _SUCCESS are missing: {', '.join(missing[:3])}")
    return FinishedRun(manifest, parts)


def read_run(run_dir: Path | str, columns: Sequence[str] | None = None) -> pa.Table:
    """A finished run's boards as one Arrow table, in board_id order (for small runs and tests;
    for large runs read the parts with DuckDB or ``pyarrow.dataset``)."""
    _, parts = open_run(run_dir)
    cols = list(columns) if columns is not None else None
    tables = [pq.read_table(p, columns=cols) for p in parts]
    if not tables:
        return board_schema().empty_table()
    table = pa.concat_tables(tables)
    if "board_id" in table.column_names:
        table = table.sort_by("board_id")
    return table


def read_rejects(run_dir: Path | str) -> list[dict[str, str]]:
    """The rejected rows of a run (empty when it has none)."""
    import csv

    path = Path(run_dir) / REJECTS
    if not path.is_file():
        path = Path(run_dir) / LEGACY_REJECTS
    if not path.is_file():
        return []
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


@dataclass
class PartInfo:
    """One committed part as the manifest lists it."""

    chunk: int
    rows: int
    bytes: int
    blake2b: str | None = None

    @property
    def file(self) -> str:
        return part_name(self.chunk)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"file": self.file, "chunk": self.chunk, "rows": self.rows, "bytes": self.bytes}
        if self.blake2b is not None:
            out["blake2b"] = self.blake2b
        return out


def write_manifest(run_dir: Path, manifest: Mapping[str, Any]) -> None:
    """Write ``_SUCCESS`` last: from this moment the run counts as finished."""
    data = {"format": FORMAT, "schema_version": SCHEMA_VERSION, **manifest}
    write_json_atomic(run_dir / MANIFEST, data)


# ---------------------------------------------------------------- part verification


def file_blake2b(path: Path | str) -> str:
    """BLAKE2b (128-bit) of a file's bytes, hex; streamed, so memory stays flat."""
    h = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def part_record_path(run_dir: Path | str, chunk: int) -> Path:
    # "_" again on the file: polars' hidden_file_prefix is matched against file names only
    return Path(run_dir) / PARTS_DIR / f"_{part_name(chunk).removesuffix('.parquet')}.json"


def record_part(run_dir: Path | str, chunk: int, rows: int) -> PartInfo:
    """Record a committed part's size and checksum (atomically, fsynced) so a re-run can tell
    it from a part that was damaged, truncated or copied in since."""
    path = part_path(run_dir, chunk)
    info = PartInfo(chunk, rows, path.stat().st_size, file_blake2b(path))
    write_json_atomic(part_record_path(run_dir, chunk), info.to_dict())
    return info


def read_part_record(run_dir: Path | str, chunk: int) -> PartInfo | None:
    try:
        d = json.loads(part_record_path(run_dir, chunk).read_text(encoding="utf-8"))
        return PartInfo(int(d["chunk"]), int(d["rows"]), int(d["bytes"]), d.get("blake2b"))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def part_problem(path: Path, record: PartInfo | None, config: str) -> str | None:
    """Why the part at ``path`` cannot be reused (None: it can): no record of it, a size or
    checksum other than recorded, an unreadable footer, or a ``boggle.config`` other than
    ``config`` (the run's, as :func:`parquet_metadata` writes it)."""
    if record is None:
        return "no record of it being committed by this run"
    size = path.stat().st_size
    if size != record.bytes:
        return f"{size:,} bytes, {record.bytes:,} recorded (truncated or replaced)"
    if record.blake2b is not None and file_blake2b(path) != record.blake2b:
        return "checksum differs from the one recorded (damaged or replaced)"
    try:
        meta = pq.read_metadata(path)
    except (OSError, pa.ArrowException) as exc:
        return f"unreadable Parquet ({str(exc).splitlines()[0][:80]})"
    kv = meta.metadata or {}
    if kv.get(META_CONFIG.encode(), b"").decode() != config:
        return "written by a run with another config"
    if meta.num_rows != record.rows:
        return f"{meta.num_rows} rows, {record.rows} recorded"
    return None


def discard_part(run_dir: Path | str, chunk: int) -> None:
    """Remove a part and its record (call with the lock held)."""
    part_path(run_dir, chunk).unlink(missing_ok=True)
    part_record_path(run_dir, chunk).unlink(missing_ok=True)


def finished_run_problems(run_dir: Path, config: str) -> list[tuple[int, str]]:
    """(chunk, problem) for every part of a finished run that is missing, damaged or foreign
    (checked against the manifest's sizes and checksums), and for parts it does not list."""
    manifest = read_json(run_dir / MANIFEST)
    listed: dict[int, PartInfo] = {}
    for p in manifest.get("parts", []):
        listed[int(p["chunk"])] = PartInfo(int(p["chunk"]), int(p["rows"]), int(p["bytes"]), p.get("blake2b"))
    out: list[tuple[int, str]] = []
    present = committed_chunks(run_dir)
    for chunk, info in sorted(listed.items()):
        path = present.get(chunk)
        problem = "missing" if path is None else part_problem(path, info, config)
        if problem is not None:
            out.append((chunk, problem))
    out += [(k, "not part of the finished run") for k in sorted(set(present) - set(listed))]
    return out
