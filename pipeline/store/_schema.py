"""The run schema: file names and metadata keys, the board table's columns, and building a part's
Arrow table from the kernel's arrays."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import numpy as np
import pyarrow as pa

from pipeline.boards import compact_strings
from pipeline.errors import BoggleError

FORMAT = "boggle-run"
# 2: provenance columns lexicon, lexicon_hash, rules; rejects file renamed _rejects.csv
# 3: ``words`` items are dictionary-encoded in Arrow (list<dictionary<int32, string>>); the
#    Parquet column is the same list of strings as in 2
# 4: provenance columns run_id, seed, dice; ``source`` dictionary-encoded like the others
# 5: provenance column run_date (date32: the schedule's date of a run made for one, else null)
# 6: side files packed (pipeline.store._pack: every engine reads the run folder as it is), and
#    one board notation: every face of several letters in brackets, [qu] too (pipeline.boards)
# A finished run of a version in READABLE_VERSIONS reads; another is refused in one line naming
# both (pipeline.store.open_run): re-running its config writes it anew.
SCHEMA_VERSION = 6
READABLE_VERSIONS = (5, 6)
MANIFEST = "_SUCCESS"
RUN_RECORD = "_run.json"
LOCK_FILE = ".lock"
REJECTS = "_rejects.csv"
# The run's vocabulary: the compiled word list, one word a line (gzip), which the word ids of
# the parts' statistics index; index len(words) is "" (a board without words)
VOCABULARY = "_vocabulary.txt.gz"
HASH_CHARS = 12  # hex digits of a SHA-256 kept in the provenance columns
# Part numbers are written with five digits or more (part-00000 .. part-999999): a billion
# boards in chunks of 10,000 (the default config's) are 100,000 parts
MAX_PART = 999_999
PART_RE = re.compile(r"^part-(\d{5,})\.parquet$")
META_CONFIG = "boggle.config"
META_LEXICON = "boggle.lexicon"
META_RULES = "boggle.rules"
META_SCHEMA = "boggle.schema_version"
# side files of the other jobs in the same lifecycle: prove's boards table, optimize's interrupted
# search, design's state (removed with the job's other files by --overwrite)
JOB_SIDE_FILES = ("_boards.pq", "_interrupted.json", "_design.json")
PARTS_DIR = "_parts"  # "_": dataset readers (pyarrow, pandas, DuckDB globs of *.parquet) skip it
COMPRESSION = "zstd"
STATISTICS_COLUMNS = ["board_id", "chunk", "score", "n_words", "max_word_len", "dead_cells"]
TOP_LENGTH = 8  # lengths above this share the "9plus" column

COLUMNS: dict[str, str] = {
    "board_id": "int64: the board's number, 0..N-1 in generation order (or input order of the "
    "valid rows for ingest); stable across re-runs, backends and worker counts",
    "board": "string: the board in compact notation, row-major (pipeline.boards.format_compact): a "
    "face of one letter inline, a face of several in brackets ([qu], [in]), '.' a blank, [q] a plain "
    "Q; runs of schema 5 wrote Qu as q. parse_compact(board, (rows, cols)) gives it back",
    "rows": "int16: board rows",
    "cols": "int16: board columns",
    "source": "dictionary<string>: the dice set or generator (generate) or the input file (ingest)",
    "lexicon": "dictionary<string>: the word list's name as the manifest's lexicon.name gives it "
    "(file name such as enable2k.txt, or tanglet:<lang>)",
    "lexicon_hash": "dictionary<string>: first 12 hex digits of the word list's SHA-256 "
    "(the manifest's lexicon.content_hash); two lists of one name tell apart by it",
    "rules": "dictionary<string>: the rule preset (boggle, big, superbig); when fields were "
    "overridden, '<preset>+<first 8 hex of the SHA-256 of Rules.key()>'",
    "run_id": "dictionary<string>: the run's identity, the first 12 hex digits of the SHA-256 of the "
    "manifest's identity (config that decides the data, lexicon hash, inputs, schema version); two "
    "runs differ in it whenever their data may differ",
    "seed": "dictionary<string>: the generator seed ([boards] seed, or the one derived from the "
    "schedule's date) in decimal (seeds go up to 2**128 - 1); null for ingest",
    "run_date": "date32: the schedule's date the run was made for ([boards] seed_date, from "
    '--seed-from-date/--date or seed = "date"; the manifest\'s run_date); null when the run has none',
    "dice": "dictionary<string>: the dice set or generator the boards were rolled with (a dice file: its "
    "path as given; its faces are in the manifest's dice record); null for ingest",
    "chunk": "int32: the chunk (part file number) the board belongs to",
    "score": "int32: total points of the distinct words found",
    "n_words": "int32: distinct words found",
    "words": "list<string>: the words found, sorted (absent when [boards] words = false); "
    "in Arrow the items are dictionary<int32, string> (one dictionary per part), which pandas "
    "reads as arrays of str and DuckDB as VARCHAR[]",
    "longest_word": "string: the longest word found (ties: alphabetically first); '' if none",
    "max_word_len": "int16: letters in the longest word (0 if none)",
    "dead_cells": "int16: non-blank cells that no found word uses",
    "words_len_<L>": "int32: words of exactly L letters (L = min(3, min_length)..8)",
    "words_len_9plus": "int32: words of 9 or more letters",
    "points_len_<L>": "int32: points from words of exactly L letters",
    "points_len_9plus": "int32: points from words of 9 or more letters",
}


# The rejects file (_rejects.csv): one row per input record that is not a valid board.
REJECT_COLUMNS: dict[str, str] = {
    "source": "string: the input file (or URL) the record came from",
    "line": "int: the record's line in that file (Parquet inputs: its row number)",
    "raw": "string: the record as read, at most 80 characters then its length; control "
    "characters escaped (\\x1b, \\t; a backslash doubled)",
    "reason": "string: why it was rejected (does not parse, wrong shape, a face outside the "
    "run's alphabet, a line over 64 KiB)",
}


def columns_doc(words: bool = True) -> dict[str, str]:
    """:data:`COLUMNS` as a run's manifest records it: the columns :func:`board_schema` writes
    (without ``words`` when the run has no word lists)."""
    present = set(board_schema(words=words).names)
    return {k: v for k, v in COLUMNS.items() if k in present or "_len_" in k}


# ---------------------------------------------------------------- schema

# One value per run in each provenance column: dictionary-encoded, a few bytes per part.
LABEL_TYPE = pa.dictionary(pa.int32(), pa.string())
# The word lists' items: the part's distinct words once, each list item an index into them.
# Parquet then writes the dictionary page and the indices as they are, instead of hashing
# each of the ~1M strings of a 10,000-board part (about half the cost of writing the words).
WORD_TYPE = pa.dictionary(pa.int32(), pa.string())
# Columns whose values are (nearly) all distinct: a Parquet dictionary only costs time and bytes.
PLAIN_COLUMNS = frozenset({"board_id", "board", "longest_word"})


#: The columns every run's parts have, whatever its schema version or rule set (the per-length
#: columns of lengths below 3 are optional): what analysis needs of a run.
REQUIRED_COLUMNS: tuple[str, ...] = (
    "board_id",
    "board",
    "rows",
    "cols",
    "source",
    "score",
    "n_words",
    "longest_word",
    "max_word_len",
    "dead_cells",
    *(f"words_len_{s}" for s in [*map(str, range(3, TOP_LENGTH + 1)), f"{TOP_LENGTH + 1}plus"]),
    *(f"points_len_{s}" for s in [*map(str, range(3, TOP_LENGTH + 1)), f"{TOP_LENGTH + 1}plus"]),
)


def length_bins(min_length: int) -> list[str]:
    """Labels of the by-length columns: ``["3", ..., "8", "9plus"]`` (starting lower when the
    minimum length is below 3)."""
    lo = min(3, max(1, min_length))
    return [str(n) for n in range(lo, TOP_LENGTH + 1)] + [f"{TOP_LENGTH + 1}plus"]


def board_schema(min_length: int = 3, *, words: bool = True) -> pa.Schema:
    """The Arrow schema of a part file for a rule set with this minimum word length; without
    the ``words`` column when ``words`` is false (``[boards] words = false``)."""
    fields = [
        pa.field("board_id", pa.int64(), nullable=False),
        pa.field("board", pa.string(), nullable=False),
        pa.field("rows", pa.int16(), nullable=False),
        pa.field("cols", pa.int16(), nullable=False),
        pa.field("source", LABEL_TYPE, nullable=False),
        pa.field("lexicon", LABEL_TYPE, nullable=False),
        pa.field("lexicon_hash", LABEL_TYPE, nullable=False),
        pa.field("rules", LABEL_TYPE, nullable=False),
        pa.field("run_id", LABEL_TYPE, nullable=False),
        pa.field("seed", LABEL_TYPE, nullable=True),
        pa.field("run_date", pa.date32(), nullable=True),
        pa.field("dice", LABEL_TYPE, nullable=True),
        pa.field("chunk", pa.int32(), nullable=False),
        pa.field("score", pa.int32(), nullable=False),
        pa.field("n_words", pa.int32(), nullable=False),
        pa.field("words", pa.list_(pa.field("item", WORD_TYPE, nullable=False)), nullable=False),
        pa.field("longest_word", pa.string(), nullable=False),
        pa.field("max_word_len", pa.int16(), nullable=False),
        pa.field("dead_cells", pa.int16(), nullable=False),
    ]
    if not words:
        fields = [f for f in fields if f.name != "words"]
    bins = length_bins(min_length)
    fields += [pa.field(f"words_len_{b}", pa.int32(), nullable=False) for b in bins]
    fields += [pa.field(f"points_len_{b}", pa.int32(), nullable=False) for b in bins]
    return pa.schema(fields)


def dictionary_columns(schema: pa.Schema) -> list[str]:
    """The Parquet columns of a board table to dictionary-encode: all but
    :data:`PLAIN_COLUMNS` (a list column by its leaf path)."""
    return [
        f"{f.name}.list.element" if pa.types.is_list(f.type) else f.name
        for f in schema
        if f.name not in PLAIN_COLUMNS
    ]


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


def label_column(value: str | None, n: int) -> pa.DictionaryArray:
    """``n`` copies of ``value`` as a dictionary array (one dictionary entry, int32 indices);
    ``None``: ``n`` nulls (an empty dictionary)."""
    if value is None:
        return pa.DictionaryArray.from_arrays(pa.nulls(n, pa.int32()), _repeat_string("", 0))
    return pa.DictionaryArray.from_arrays(_numeric(np.zeros(n), np.int32), _repeat_string(value, 1))


def date_column(value: str | None, n: int) -> pa.Array:
    """``n`` copies of the ISO date ``value`` as a date32 array; ``None``: ``n`` nulls."""
    if value is None:
        return pa.nulls(n, pa.date32())
    import datetime

    days = (datetime.date.fromisoformat(value) - datetime.date(1970, 1, 1)).days
    return _numeric(np.full(n, days), np.int32).view(pa.date32())


def run_id_of(identity: Mapping[str, Any]) -> str:
    """The ``run_id`` column value: the first :data:`HASH_CHARS` hex digits of the SHA-256 of the
    run's identity (as the manifest records it) in canonical JSON."""
    import hashlib

    text = json.dumps(identity, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:HASH_CHARS]


def source_column(source: str | pa.Array, n: int) -> pa.Array:
    """The ``source`` column: one string for every row, or per-row strings, dictionary-encoded."""
    if isinstance(source, str):
        return label_column(source, n)
    if pa.types.is_dictionary(source.type):
        return source
    return source.dictionary_encode()


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
    # One UTF-8 blob with a newline after each word (words hold none), not a bytes object per
    # word: 3.2M small objects (tanglet:pl) raised a worker's peak RSS by about 280 MB.
    blob = np.frombuffer(("\n".join(words) + "\n").encode("utf-8") if words else b"", np.uint8)
    ends = np.flatnonzero(blob == ord("\n"))  # each word's newline
    offsets = np.zeros(len(words) + 2, np.int64)
    offsets[1:-1] = ends - np.arange(len(words))  # bytes of the words up to each newline
    offsets[-1] = offsets[-2]
    if offsets[-1] > np.iinfo(np.int32).max:
        raise BoggleError("the word list holds more than 2 GB of text")
    arr = _strings(offsets, blob[blob != ord("\n")])
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
    labels: Mapping[str, str | None] | None = None,
) -> pa.Table:
    """One Arrow table (schema :func:`board_schema`) for a batch of solved boards.

    Without a ``words`` field in ``schema`` the word lists are not built (scores only).
    ``result`` is a :class:`pipeline.solve.BatchResult` for ``boards`` (int8 [n, rows*cols])
    and ``lexicon`` (a CompiledLexicon), solved with ``collect=True`` or, without a ``words``
    field, with ``collect=False`` and a tally for :func:`length_bins`; ``source`` is one
    string for all rows or an Arrow string array. ``summary`` is the result's
    :class:`pipeline.solve._summary.WordSummary` for :func:`length_bins`; when None it is
    computed here (which imports numba: workers pass it in). ``labels`` gives the run's
    ``run_id``, ``seed`` and ``dice`` column values (each one value per run, None for null;
    a missing ``run_id`` is ""), and ``run_date`` (an ISO date, or None).
    """
    n = len(boards)
    min_length = lexicon.rules.min_length
    schema = schema or board_schema(min_length)
    bins = length_bins(min_length)
    lo = int(bins[0])
    offsets = np.ascontiguousarray(result.offsets, dtype=np.int64)
    if summary is None:
        from pipeline.solve import summarise_result

        summary = summarise_result(result, lexicon, lo, len(bins), sort="words" in schema.names)
    longest_id, counts, points = summary.longest_id, summary.counts, summary.points
    words = _words_array(lexicon.words)
    if offsets[-1] > np.iinfo(np.int32).max:
        raise BoggleError("a chunk found more than 2**31 words; lower [boards] chunk_size")
    word_lists = None
    if "words" in schema.names:
        distinct, index = summary.dict_ids, summary.dict_index
        if distinct is None or index is None:
            raise ValueError("the word lists need a sorted summary (sort=True)")
        items = pa.DictionaryArray.from_arrays(
            _numeric(index, np.int32), words.take(_numeric(distinct, np.int32))
        )
        word_lists = pa.ListArray.from_arrays(_numeric(offsets, np.int32), items)
    no_word = len(words) - 1  # the "" entry
    longest_words = words.take(_numeric(np.where(longest_id >= 0, longest_id, no_word), np.int32))
    labels = labels or {}
    data: dict[str, Any] = {
        "board_id": _numeric(board_ids, np.int64),
        "board": compact_strings(boards, lexicon.alphabet.faces),
        "rows": _numeric(np.full(n, rows), np.int16),
        "cols": _numeric(np.full(n, cols), np.int16),
        "source": source_column(source, n),
        **{k: label_column(v, n) for k, v in provenance_labels(lexicon).items()},
        "run_id": label_column(labels.get("run_id") or "", n),
        "seed": label_column(labels.get("seed"), n),
        "run_date": date_column(labels.get("run_date"), n),
        "dice": label_column(labels.get("dice"), n),
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
