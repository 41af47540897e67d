"""Finished runs for analysis: reading their manifests, checking their columns, and one DuckDB
connection that reads every run's Parquet parts as a ``boards`` view."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from pipeline.errors import BoggleError
from pipeline.store import MANIFEST, REQUIRED_COLUMNS, location

if TYPE_CHECKING:
    import duckdb


class RunError(BoggleError):
    """A run directory that is missing, unfinished or not in the pipeline's layout."""


@dataclass(frozen=True)
class RunInfo:
    """A finished run: its directory, ``_SUCCESS`` manifest and part files."""

    label: str
    path: Path
    manifest: dict[str, Any] = field(repr=False)
    parts: tuple[Path, ...]

    @property
    def config(self) -> dict[str, Any]:
        return _as_dict(self.manifest.get("config"))

    @property
    def lexicon(self) -> dict[str, Any]:
        return _as_dict(self.manifest.get("lexicon"))

    @property
    def rules(self) -> dict[str, Any]:
        return _as_dict(self.manifest.get("rules"))

    @property
    def counts(self) -> dict[str, Any]:
        return _as_dict(self.manifest.get("counts"))

    @property
    def has_words(self) -> bool:
        """False for a scores-only run (``[boards] words = false``: no ``words`` column)."""
        return _as_dict(self.config.get("boards")).get("words", True) is not False

    def manifest_mtime(self) -> float:
        if not isinstance(self.path, Path):  # an object store: the time it recorded
            from datetime import datetime

            return datetime.fromisoformat(str(self.manifest.get("finished_at"))).timestamp()
        return Path(location(self.path).ref(MANIFEST)).stat().st_mtime


def _as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def load_run(run_dir: str | os.PathLike[str], label: str | None = None, *, fetch: bool = True) -> RunInfo:
    """Open a finished run directory; raise a BoggleError (exit 2) unless ``_SUCCESS`` is there.
    ``fetch=False``: a run in an object store is not downloaded (see
    :func:`pipeline.store.open_run`); its ``parts`` are URLs."""
    from pipeline.store import job_path, open_run

    path: Any = job_path(run_dir, "run")
    if isinstance(path, Path) and path.is_file():  # e.g. a summary a glob such as nightly/* picked up
        raise RunError(f"{path}: not a run directory (a file); give run folders, such as nightly/date=*/")
    manifest, parts = open_run(path, fetch=fetch)
    if not parts:
        raise RunError(f"{path}: the run has no part files (no boards to analyse)")
    return RunInfo(label or path.resolve().name, path, manifest, tuple(parts))


def load_runs(
    run_dirs: Sequence[str | os.PathLike[str]], labels: Mapping[str, str] | None = None, *, fetch: bool = True
) -> list[RunInfo]:
    """Open several runs, each labelled by what differs between them ("new dice · tanglet:en"),
    else by its directory name (made unique). ``labels`` maps a run (the directory as given,
    its resolved path or its name) to a label of one's own choosing.
    """
    from pipeline.analyze.provenance import describe, differing_labels

    if not run_dirs:
        raise RunError("no run directories given")
    runs = [load_run(d, fetch=fetch) for d in run_dirs]
    given = dict(labels or {})
    unknown = [k for k in given if not any(k in _keys(d, r) for d, r in zip(run_dirs, runs, strict=True))]
    if unknown:
        raise RunError(f"--label {unknown[0]!r}: names none of the runs given")
    described = differing_labels([describe(r.manifest) for r in runs])
    seen: dict[str, int] = {}
    out = []
    for i, (arg, run) in enumerate(zip(run_dirs, runs, strict=True)):
        own = next((v for k, v in given.items() if k in _keys(arg, run)), None)
        label = own or (described[i] if described else run.label)
        if label in seen and own is None and not described:
            parent = run.path.resolve().parent.name
            label = f"{parent}/{label}" if parent else label
        base = label
        while label in seen:
            seen[base] = seen.get(base, 1) + 1
            label = f"{base}-{seen[base]}"
        seen.setdefault(label, 1)
        out.append(RunInfo(label, run.path, run.manifest, run.parts))
    return out


def _keys(arg: str | os.PathLike[str], run: RunInfo) -> set[str]:
    return {str(arg), str(Path(arg)), str(run.path.resolve()), run.path.resolve().name}


# ---------------------------------------------------------------- DuckDB


def sql_str(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def printable(text: str) -> str:
    """``text`` on one line with control characters (from damaged files) replaced by '?'."""
    return "".join(ch if ch.isprintable() else "?" for ch in " ".join(text.split()))


def check_columns(run: RunInfo) -> None:
    """Refuse a run any of whose parts lacks a column the analysis reads (footers only)."""
    import pyarrow.parquet as pq

    for part in run.parts:
        try:
            names = set(pq.read_schema(part).names)
        except (OSError, ValueError) as exc:
            raise RunError(f"{part}: not a readable Parquet file ({printable(str(exc))})") from None
        missing = [c for c in (*REQUIRED_COLUMNS, *(["words"] if run.has_words else [])) if c not in names]
        if missing:
            raise RunError(
                f"{part}: lacks column(s) {', '.join(missing)} (not a board run of this pipeline?)"
            )


@contextmanager
def connect(
    runs: Sequence[RunInfo], *, threads: int | None = None, memory_limit: str | None = None
) -> Iterator[duckdb.DuckDBPyConnection]:
    """A DuckDB connection with a ``boards`` view over every run's parts (column ``run`` added;
    ``words`` is NULL in the rows of a run without word lists).

    Spills go to a private temporary directory that is removed afterwards.
    """
    import duckdb

    spill = tempfile.mkdtemp(prefix="boggle-duckdb-")
    con = duckdb.connect()
    try:
        con.execute(f"SET temp_directory = {sql_str(spill)}")
        # Row order never matters to an aggregate; dropping it lets DuckDB stream with less memory.
        con.execute("SET preserve_insertion_order = false")
        if threads:
            con.execute(f"SET threads = {int(threads)}")
        if memory_limit:
            try:
                con.execute(f"SET memory_limit = {sql_str(memory_limit)}")
            except duckdb.Error:
                raise BoggleError(
                    f"memory limit {memory_limit!r}: expected a size such as 2GB or 512MB"
                ) from None
        selects = []
        for run in runs:
            files = ", ".join(sql_str(str(p)) for p in run.parts)
            scan = f"read_parquet([{files}], union_by_name = true)"
            check_columns(run)
            no_words = "" if run.has_words else ", CAST(NULL AS VARCHAR[]) AS words"
            selects.append(f"SELECT {sql_str(run.label)} AS run, *{no_words} FROM {scan}")
        con.execute("CREATE TABLE run_order (run VARCHAR, idx INTEGER)")
        if runs:
            con.executemany("INSERT INTO run_order VALUES (?, ?)", [(r.label, i) for i, r in enumerate(runs)])
        if selects:
            con.execute("CREATE VIEW boards AS " + " UNION ALL BY NAME ".join(selects))
        yield con
    finally:
        con.close()
        shutil.rmtree(spill, ignore_errors=True)


def query(con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any] | None = None) -> pd.DataFrame:
    """Run SQL and return a pandas frame (only for small result tables), runs in given order."""
    df = con.execute(sql, params or []).df()
    if "run" in df.columns and len(df):
        order = dict(con.execute("SELECT run, idx FROM run_order").fetchall())
        keys = df["run"].map(order).to_numpy()
        df = df.iloc[np.argsort(keys, kind="stable")].reset_index(drop=True)
    return df
