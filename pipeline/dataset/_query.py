"""SQL over finished runs (``boggle runs query``): a DuckDB connection whose view ``boards``
holds the verified boards of the runs a command names (run folders, folders of runs, globs),
sandboxed so that SQL from anyone reads those boards and nothing else, writes nothing and stays
under a memory limit."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pipeline.dataset._catalog import runs_below
from pipeline.errors import BoggleError, ConfigError, InternalError
from pipeline.extras import require

if TYPE_CHECKING:
    import duckdb

QUERY_VIEW = "boards"  # the name a query gives the runs' boards


@dataclass
class QueryResult:
    """A query's column names and rows, and notes on runs left out (unfinished, not runs)."""

    columns: list[str]
    rows: list[tuple[Any, ...]]
    notes: list[str] = field(default_factory=list)


def query_connection(
    runs: Sequence[str | os.PathLike[str]], *, threads: int | None = None, memory_limit: str | None = None
) -> tuple[duckdb.DuckDBPyConnection, list[str]]:
    """A DuckDB connection with the view ``boards`` over the verified boards of the finished
    runs ``runs`` name (run folders, folders of runs, globs: :func:`runs_below`), combined by
    column name, with the column ``run`` (the run's folder, as found) added; and notes on what
    was left out.

    The connection is a sandbox for SQL from anyone: no file but the runs' own parts can be
    read (DuckDB's external access is off, only the parts are allowed), nothing is written
    (no ``COPY``, ``ATTACH``, ``EXPORT``, no extension installed or loaded, no spill to disk),
    it stays under ``memory_limit`` (DuckDB's size, ``2GB``; default DuckDB's, 80% of the
    memory) on ``threads`` threads (default: every core), and none of this can be changed from
    SQL (the configuration is locked)."""
    require("analyze", "boggle runs query", ("duckdb",))
    import duckdb

    from pipeline.store import open_run

    found, notes = runs_below(runs)
    parts = {run: [str(p) for p in open_run(run).parts] for run in found}
    config: dict[str, Any] = {"temp_directory": "", "autoinstall_known_extensions": False}
    config["autoload_known_extensions"] = False
    if threads is not None:
        config["threads"] = int(threads)
    if memory_limit is not None:
        config["memory_limit"] = memory_limit
    try:
        con = duckdb.connect(":memory:", config=config)
    except duckdb.Error as exc:
        if memory_limit is not None and "memory" in str(exc).lower():
            expected = "expected a size such as 2GB or 512MB"
            raise ConfigError(f"--memory-limit {memory_limit!r}: {expected}") from None
        raise ConfigError(f"query: {str(exc).splitlines()[0]}") from None
    try:
        _sandbox(con, parts)
    except BaseException:  # a signal too: DuckDB's threads must not outlive the process's end
        con.close()
        raise
    return con, notes


def _sandbox(con: duckdb.DuckDBPyConnection, parts: dict[str, list[str]]) -> None:
    """The view ``boards`` over ``parts`` (by run), then the connection locked to them."""
    quote = lambda text: "'" + text.replace("'", "''") + "'"  # noqa: E731
    selects = []
    for run, files in parts.items():
        if files:
            scan = f"read_parquet([{', '.join(map(quote, files))}], union_by_name = true)"
            selects.append(f"SELECT {quote(run)} AS run, * FROM {scan}")
    if not selects:
        raise BoggleError(f"{', '.join(parts)}: no part files (no boards)")
    con.execute(f"CREATE VIEW {QUERY_VIEW} AS " + " UNION ALL BY NAME ".join(selects))
    allowed = [f for files in parts.values() for f in files]
    con.execute(f"SET allowed_paths = [{', '.join(map(quote, allowed))}]")
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")


def query_runs(
    runs: Sequence[str | os.PathLike[str]],
    sql: str,
    con: duckdb.DuckDBPyConnection | None = None,
    *,
    threads: int | None = None,
    memory_limit: str | None = None,
) -> QueryResult:
    """``sql`` over the verified boards of finished runs (:func:`query_connection`: run folders,
    folders of runs or globs; a sandbox), which it names ``boards``; SQL that DuckDB refuses
    (a syntax error, a file other than the runs' parts, a write, the memory limit) is a
    ConfigError (exit 2) with DuckDB's first line. ``con``: a connection of
    :func:`query_connection` (to interrupt it from another thread), else one is made.

    >>> query_runs(["runs/default"], "select max(score) from boards").rows  # doctest: +SKIP
    [(412,)]
    """
    import duckdb

    notes: list[str] = []
    if con is None:
        con, notes = query_connection(runs, threads=threads, memory_limit=memory_limit)
    try:
        result = con.sql(sql)
        if result is None:
            raise ConfigError("query: the SQL returns no rows (give a SELECT)")
        return QueryResult(list(result.columns), result.fetchall(), notes)
    except duckdb.PermissionException as exc:
        raise ConfigError(
            f"query: only the runs' boards can be read, and nothing written ({str(exc).splitlines()[0]})"
        ) from None
    except duckdb.OutOfMemoryException:
        raise ConfigError(
            f"query: needs more memory than its limit ({memory_limit or 'DuckDB default'}); "
            "raise --memory-limit or aggregate more"
        ) from None
    except duckdb.InterruptException:
        raise InternalError("query: interrupted") from None
    except duckdb.Error as exc:
        raise ConfigError(f"query: {str(exc).splitlines()[0]}") from None
