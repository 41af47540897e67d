"""SQL over finished runs (``boggle runs query``): a DuckDB view ``boards`` over the verified
boards of the runs a command names (run folders, folders of runs, globs), with the run's folder
as a column, sandboxed so that SQL from anyone reads those boards and nothing else, writes
nothing, and stays under a memory limit.

The sandbox (docs/guides/batch-runs.md, "The catalog"): one read-only statement (a SELECT);
DuckDB's external access off with only the runs' own parts allowed, so no other file, URL,
database or extension is read or written (``COPY``, ``ATTACH`` and ``read_csv('/etc/passwd')``
are refused); its configuration locked; its memory capped (spilling to a private temporary
folder, removed afterwards) on a number of threads; the query runs in a thread of its own, so a
signal (Ctrl-C, SIGTERM) interrupts it at once.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pipeline.errors import BoggleError, ConfigError
from pipeline.extras import require
from pipeline.store.dataset._catalog import runs_below

if TYPE_CHECKING:
    import duckdb

QUERY_VIEW = "boards"  # the name a query gives the runs' boards


@dataclass
class QueryResult:
    """A query's column names and rows, and notes on what was left out (unfinished runs, jobs
    that are not runs, found below a folder)."""

    columns: list[str]
    rows: list[tuple[Any, ...]]
    notes: list[str] = field(default_factory=list)


#: ``boggle runs query``'s default cap on DuckDB's memory (``--memory-limit``): beyond it a
#: query spills to a private temporary folder (removed afterwards), or fails in one line.
QUERY_MEMORY_LIMIT = "2GB"
MIN_QUERY_MEMORY = 16 << 20  # below this DuckDB cannot scan a part
#: The statement types a query may be: it reads, it never changes anything.
READ_ONLY_STATEMENTS = ("SELECT", "EXPLAIN")
_SIZE = re.compile(r"^\s*(\d{1,15}(?:\.\d{1,6})?)\s*([KMGT]i?B)\s*$", re.IGNORECASE)
_UNITS = {"kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30}
_UNITS["tib"] = 1 << 40


def parse_memory_limit(text: str) -> int:
    """``--memory-limit`` in bytes (``2GB``, ``512MiB``): a ConfigError (exit 2) for another
    form, for less than 16 MiB, or for more than this machine's memory.

    >>> parse_memory_limit("1.5GB")
    1500000000
    """
    m = _SIZE.match(text)
    if not m:
        raise ConfigError(f"--memory-limit {text[:40]!r}: expected a size such as 2GB or 512MiB")
    n = int(float(m.group(1)) * _UNITS[m.group(2).lower()])
    total = _physical_memory()
    if n < MIN_QUERY_MEMORY or (total is not None and n > total):
        most = f" and at most this machine's {total:,} bytes" if total is not None else ""
        raise ConfigError(f"--memory-limit {text}: at least 16MiB{most}, got {n:,} bytes")
    return n


def _physical_memory() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def query_runs(
    runs: Sequence[str | os.PathLike[str]],
    sql: str,
    con: duckdb.DuckDBPyConnection | None = None,
    *,
    memory_limit: str = QUERY_MEMORY_LIMIT,
    threads: int | None = None,
) -> QueryResult:
    """``sql`` over the verified boards of the finished runs ``runs`` name (run folders, folders
    of runs, globs: :func:`pipeline.store.dataset.runs_below`; an unfinished run or a proof found below
    a folder is left out, with a note), combined by column name into a view named ``boards``
    with the column ``run`` (the run's folder, as found) added; SQL that DuckDB refuses is a
    ConfigError (exit 2) with DuckDB's first line.

    The query is sandboxed (see the module's description): ``memory_limit`` caps DuckDB's
    memory and ``threads`` its threads (default: all cores). ``con``, a connection of the
    caller's, is used as it is: no sandbox, no limits.

    >>> query_runs(["runs/default"], "select max(score) from boards").rows  # doctest: +SKIP
    [(412,)]
    """
    require("analyze", "boggle runs query", ("duckdb",))
    import shutil
    import tempfile

    import duckdb

    from pipeline.store import open_run

    limit = parse_memory_limit(memory_limit) if con is None else 0  # bad input first
    found, notes = runs_below(runs)
    parts = {run: [str(p) for p in open_run(run).parts] for run in found}  # verified: damaged, exit 4
    if not any(parts.values()):
        raise BoggleError(f"{', '.join(parts)}: no part files (no boards)")
    if con is not None:
        _create_view(con, parts)
        return _with_notes(_fetch(con, sql), notes)
    allowed = [f for files in parts.values() for f in files]
    spill = tempfile.mkdtemp(prefix="boggle-query-")
    try:
        con = _sandbox(allowed, spill, limit, threads)
        try:
            _check_read_only(con, sql)
            _create_view(con, parts)
            return _with_notes(_interruptible(con, sql), notes)
        finally:
            con.close()
    except duckdb.Error as exc:
        raise ConfigError(f"query: {str(exc).splitlines()[0]}") from None
    finally:
        shutil.rmtree(spill, ignore_errors=True)


def _with_notes(result: QueryResult, notes: list[str]) -> QueryResult:
    result.notes = list(notes)
    return result


def _create_view(con: duckdb.DuckDBPyConnection, parts: dict[str, list[str]]) -> None:
    """The view ``boards``: each run's parts (combined by column name) with its folder as the
    column ``run``."""

    def quote(text: str) -> str:
        return "'" + text.replace("'", "''") + "'"

    selects = []
    for run, files in parts.items():
        if files:
            scan = f"read_parquet([{', '.join(map(quote, files))}], union_by_name = true)"
            selects.append(f"SELECT {quote(run)} AS run, * FROM {scan}")
    con.execute(f"CREATE VIEW {QUERY_VIEW} AS " + " UNION ALL BY NAME ".join(selects))


def _sandbox(parts: list[str], spill: str, limit: int, threads: int | None) -> duckdb.DuckDBPyConnection:
    """A connection that reads ``parts`` and no other file, with its memory and threads capped
    and its configuration locked (a query cannot lift any of it)."""
    import duckdb

    config: dict[str, Any] = {"temp_directory": spill, "autoinstall_known_extensions": False}
    if threads is not None:
        config["threads"] = threads
    con = duckdb.connect(config=config)
    try:
        con.execute("SET memory_limit = ?", [f"{max(1, limit >> 20)}MiB"])
        con.execute("SET allowed_paths = ?", [parts])
        con.execute("SET enable_external_access = false")  # after allowed_paths: DuckDB's order
        con.execute("SET autoload_known_extensions = false")
        con.execute("SET lock_configuration = true")
    except BaseException:
        con.close()
        raise
    return con


def _check_read_only(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    """A ConfigError (exit 2) unless ``sql`` is one statement that only reads."""
    statements = con.extract_statements(sql)
    if len(statements) != 1:
        raise ConfigError(f"query: give one SQL statement (a SELECT), got {len(statements)}")
    kind = statements[0].type.name
    if kind not in READ_ONLY_STATEMENTS:
        raise ConfigError(
            f"query: only a SELECT is run (a query reads the runs, never changes anything), got {kind}"
        )


def _fetch(con: duckdb.DuckDBPyConnection, sql: str) -> QueryResult:
    import duckdb

    try:
        result = con.sql(sql)
        if result is None:
            raise ConfigError("query: the SQL returns no rows (give a SELECT)")
        return QueryResult(list(result.columns), result.fetchall())
    except duckdb.Error as exc:
        raise ConfigError(f"query: {str(exc).splitlines()[0]}") from None


def _interruptible(con: duckdb.DuckDBPyConnection, sql: str) -> QueryResult:
    """:func:`_fetch` in a thread of its own: this thread waits in short steps, so a signal's
    handler runs at once (DuckDB would hold it until the query ends), interrupts the query and
    raises what the handler raised. The query is interrupted until its thread has ended (an
    interrupt that comes before the query starts is lost), never left running as the process
    exits: a thread inside DuckDB then aborts the process."""
    import threading

    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["result"] = _fetch(con, sql)
        except BaseException as exc:  # handed to the waiting thread
            box["error"] = exc

    worker = threading.Thread(target=work, name="boggle-query")
    worker.start()
    try:
        while worker.is_alive():
            worker.join(0.05)
    except BaseException:
        while worker.is_alive():
            con.interrupt()
            worker.join(0.01)
        raise
    if "error" in box:
        raise box["error"]
    result: QueryResult = box["result"]
    return result
