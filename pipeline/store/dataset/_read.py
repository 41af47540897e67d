"""The run readers: one finished run or several as an Arrow table, a pandas DataFrame, a DuckDB
relation or a polars LazyFrame, verified first; and where the default run is."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline import settings, store
from pipeline.errors import BoggleError
from pipeline.extras import require

if TYPE_CHECKING:
    import duckdb
    import pandas as pd
    import pyarrow as pa

RunPaths = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]


def _run_dir(run: str | os.PathLike[str]) -> Any:
    # a URL stays a string (Path would fold its "//")
    return store.job_path(run, "run")


def run_dirs(runs: RunPaths) -> list[Path]:
    """One path or a sequence of paths (or URLs: ``s3://bucket/run``) as a non-empty list."""
    paths = [_run_dir(runs)] if isinstance(runs, str | os.PathLike) else [_run_dir(r) for r in runs]
    if not paths:
        raise BoggleError("no run directories given")
    return paths


def run_parts(runs: RunPaths, *, verify: bool = True) -> list[Path]:
    """The part files of every run, in run then chunk order (each run must be finished)."""
    return [part for d in run_dirs(runs) for part in store.open_run(d, verify=verify).parts]


def read_run(runs: RunPaths, columns: Sequence[str] | None = None, *, verify: bool = True) -> pa.Table:
    """The boards of one finished run or several as one Arrow table.

    ``columns`` picks columns (all by default); a name no run has is a BoggleError, one that
    only some runs have is null in the others (as without ``columns``: a scores-only run's
    ``words``). The table is held in memory: for runs of millions of boards pick columns, or
    use :func:`run_relation`, which streams.
    """
    import pyarrow as pa

    dirs = run_dirs(runs)
    has = {d: _column_names(d) for d in dirs} if columns is not None else {}
    if columns is not None:
        _check_columns(dirs, has, columns)
    tables = []
    for d in dirs:
        # a run without parts has no schema to consult: ask it for every column
        names = has.get(d)
        cols = None if columns is None else [c for c in columns if names is None or c in names]
        tables.append(store.read_run_table(d, columns=cols, verify=verify))
    # Runs may differ in their length columns or words column: combine by name, nulls where
    # a run lacks a column. Each part carries its own dictionary for the provenance columns;
    # Arrow's group_by refuses differing ones, so give every chunk the same.
    table = tables[0] if len(tables) == 1 else pa.concat_tables(tables, promote_options="permissive")
    if columns is not None and len(tables) > 1:
        table = table.select(list(columns))  # in the order asked, whichever run had them first
    return table.unify_dictionaries()


def read_run_pandas(
    runs: RunPaths, columns: Sequence[str] | None = None, *, verify: bool = True
) -> pd.DataFrame:
    """:func:`read_run` as a pandas DataFrame (provenance columns become categoricals)."""
    return read_run(runs, columns, verify=verify).to_pandas()


def run_relation(
    runs: RunPaths, con: duckdb.DuckDBPyConnection | None = None, *, verify: bool = True
) -> duckdb.DuckDBPyRelation:
    """A lazy DuckDB relation over the parts of one finished run or several (combined by
    column name). Nothing is read until it is queried; ``con`` defaults to a new in-memory
    connection, which the relation keeps alive.

    >>> run_relation("runs/default").filter("score > 100").count("*").fetchall()  # doctest: +SKIP
    """
    require("analyze", "run_relation (DuckDB)", ("duckdb",))
    import duckdb

    parts = [str(p) for p in run_parts(runs, verify=verify)]
    if not parts:
        raise BoggleError(f"{', '.join(str(d) for d in run_dirs(runs))}: no part files (no boards)")
    if con is None:
        con = duckdb.connect()
    return con.read_parquet(parts, union_by_name=True)


def scan_run_polars(runs: RunPaths, *, verify: bool = True) -> Any:
    """A polars LazyFrame over the parts of one finished run or several (needs polars, the
    ``polars`` extra). ``polars.scan_parquet(RUN)`` on a run directory fails: polars reads every
    file below a directory, ``_SUCCESS`` included, unless given ``hidden_file_prefix``; this
    scans exactly the parts the manifests list instead. ``words`` comes as ``List(String)``
    (polars reads the dictionary-encoded items as ``Categorical``).

    >>> scan_run_polars("runs/default").group_by("lexicon").agg(pl.col("score").mean())  # doctest: +SKIP
    """
    require("polars", "scan_run_polars")
    import polars as pl
    import pyarrow.parquet as pq

    parts = [str(p) for p in run_parts(runs, verify=verify)]
    if not parts:
        raise BoggleError(f"{', '.join(str(d) for d in run_dirs(runs))}: no part files (no boards)")
    # one scan per kind of part (with or without word lists, its length columns): a scan takes
    # its columns from its first file
    kinds: dict[str, list[str]] = {}
    for part in parts:
        kinds.setdefault(pq.read_schema(part).remove_metadata().to_string(), []).append(part)
    scans = [
        pl.scan_parquet(group, missing_columns="insert", extra_columns="ignore") for group in kinds.values()
    ]
    lf = scans[0] if len(scans) == 1 else pl.concat(scans, how="diagonal_relaxed")
    if "words" in lf.collect_schema().names():
        lf = lf.with_columns(pl.col("words").cast(pl.List(pl.String)))
    return lf


DEFAULT_RUN = "runs/default"  # what `make analyze` writes (configs/default.toml's [run] out)


def repo_root() -> Path | None:
    """The source checkout this package runs from (the folder with its pyproject.toml), or
    None for an installed copy. Found from the package's own path, never from the cwd, so a
    notebook finds it whatever folder Jupyter starts in."""
    here = Path(__file__).resolve().parent
    for folder in here.parents:
        if (folder / "pyproject.toml").is_file() and (folder / "pipeline" / "__init__.py").is_file():
            return folder
    return None


def resolve_run_dir(run_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where a notebook or script should read a run from.

    ``None`` means ``$BOGGLE_RUN_DIR`` if set, else ``runs/default`` of the checkout. A relative
    path is taken from the cwd when it exists there, else from the checkout's root (so
    ``"runs/smoke"`` works from ``notebooks/`` too). Nothing is checked beyond that: reading a
    missing or unfinished run is what raises.
    """
    if run_dir is None:
        run_dir = settings.get().run_dir or DEFAULT_RUN
    if store.is_url(run_dir):
        return _run_dir(run_dir)  # type: ignore[no-any-return,unused-ignore]
    path = Path(run_dir).expanduser()
    if path.is_absolute() or path.exists():
        return path
    root = repo_root()
    return root / path if root is not None else path


def _column_names(run_dir: Path) -> list[str] | None:
    """The columns of a run's first part (None: it has no parts)."""
    import pyarrow.parquet as pq

    parts = store.open_run(run_dir, verify=False).parts  # the names only: read_run verifies
    return pq.read_schema(parts[0]).names if parts else None


def _check_columns(dirs: list[Path], has: dict[Path, list[str] | None], columns: Sequence[str]) -> None:
    """Refuse a column no run has (runs without parts aside: they have none to show)."""
    known = {d: names for d, names in has.items() if names is not None}
    missing = [c for c in columns if known and not any(c in names for names in known.values())]
    if not missing:
        return
    if len(known) == 1:
        ((run_dir, names),) = known.items()
        raise BoggleError(f"{run_dir}: no column(s) {', '.join(missing)}; it has {', '.join(names)}")
    every = sorted({c for names in known.values() for c in names})
    raise BoggleError(
        f"no run of {', '.join(str(d) for d in dirs)} has column(s) {', '.join(missing)}; "
        f"they have {', '.join(every)}"
    )
