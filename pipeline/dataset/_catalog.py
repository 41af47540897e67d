"""A catalog of the job directories under a folder or an object-store prefix: runs (``boggle
run``), proofs (``boggle prove``) and searches (``boggle optimize``).

Every kind of job directory is written through :class:`pipeline.store.JobDir`, so one reading
serves them all: a directory holding ``_SUCCESS`` (the sealed manifest) or ``_run.json`` (the
record written when the job started) is a job, its kind is the ``format`` either one names.

* :func:`find_jobs` lists them, each with a cheap check (the manifest's seal, the parts' sizes):
  ``finished``, ``unfinished`` (a record, no manifest yet) or ``damaged``;
* :func:`describe_job` gathers what one holds: provenance, config, counts, parts, state;
* :func:`verify_job` is the readers' full verification (every part's checksum) on demand;
* :func:`query_runs` runs SQL (DuckDB) over the verified boards of finished runs (a view
  named ``boards``).

>>> [(e.kind, e.state, e.count) for e in find_jobs("runs")]  # doctest: +SKIP
[('run', 'finished', 100000), ('proof', 'unfinished', 9856)]
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.errors import BoggleError, ConfigError, DamagedRunError
from pipeline.extras import require
from pipeline.store import (
    MANIFEST,
    Location,
    check_parts,
    describe_problems,
    job_problems,
    location,
    part_tag,
    read_manifest,
)
from pipeline.store import manifest as M
from pipeline.store import parts as P
from pipeline.store.schema import RUN_RECORD

if TYPE_CHECKING:
    import duckdb

#: What each job format is called, and what its count counts.
KINDS = {
    "boggle-run": ("run", "boards"),
    "boggle-prove": ("proof", "classes"),
    "boggle-optimize": ("search", "restarts"),
}
STATES = ("finished", "unfinished", "damaged")


@dataclass(kw_only=True)
class CatalogEntry:
    """One job directory as ``boggle runs ls`` lists it."""

    path: str  # as found: a local path, or the URL of a folder in an object store
    kind: str  # run, proof, search, or "unknown" (a damaged record names none)
    state: str  # finished, unfinished or damaged
    date: str | None  # finished_at, else started_at (ISO 8601)
    count: int | None  # boards (run), classes (proof), restarts (search); unfinished: so far
    unit: str
    config: str  # a short description: dice shape word list rules, or word list shape threshold
    bytes: int  # every file of the directory
    problem: str | None = None  # why it is damaged

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(kw_only=True)
class Verification:
    """What :func:`verify_job` found: ``problems`` (file, why) empty when intact."""

    path: str
    kind: str
    state: str
    parts: int  # parts checked
    problems: list[tuple[str, str]] = field(default_factory=list)

    @property
    def intact(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        problems = [{"file": f, "problem": w} for f, w in self.problems]
        return {
            "path": self.path,
            "kind": self.kind,
            "state": self.state,
            "parts": self.parts,
            "intact": self.intact,
            "problems": problems,
        }


# ---------------------------------------------------------------- finding job directories


def find_jobs(root: str | os.PathLike[str]) -> list[CatalogEntry]:
    """Every job directory at or below ``root`` (a folder or an object-store URL), sorted by
    path; a job directory's own folders are not searched further. A ``root`` that does not
    exist is a :class:`~pipeline.errors.ConfigError` (exit 2)."""
    loc = location(root, "ROOT")
    found = sorted(_jobs_below(loc))
    return [_entry(location(path), size) for path, size in found]


def _jobs_below(loc: Location) -> list[tuple[str, int]]:
    """Every job directory at or below ``loc`` with its bytes (a ConfigError: nothing there)."""
    return loc.folders_holding((MANIFEST, RUN_RECORD))


# ---------------------------------------------------------------- one job directory


def _read_job(loc: Location) -> tuple[dict[str, Any], bool]:
    """The job's manifest (finished: True) or its record (False); a DamagedRunError when the
    one there does not read or verify, a ConfigError when neither is there."""
    for name, finished in ((MANIFEST, True), (RUN_RECORD, False)):
        if loc.is_file(name):
            return read_manifest(loc, name), finished
    raise ConfigError(f"{loc}: not a job directory (no {MANIFEST} or {RUN_RECORD})")


def _kind(doc: dict[str, Any], where: str) -> tuple[str, str]:
    fmt = doc.get("format")
    if fmt not in KINDS:
        raise DamagedRunError(f"{where}: not a boggle job (format {str(fmt)[:40]!r})")
    return KINDS[fmt]


def _entry(loc: Location, size: int) -> CatalogEntry:
    where = str(loc)
    try:
        doc, finished = _read_job(loc)
        kind, unit = _kind(doc, where)
    except BoggleError as exc:
        return CatalogEntry(
            path=where,
            kind="unknown",
            state="damaged",
            date=None,
            count=None,
            unit="",
            config="",
            bytes=size,
            problem=exc.one_line(),
        )
    date = doc.get("finished_at") or doc.get("started_at")
    entry = CatalogEntry(
        path=where,
        kind=kind,
        state="finished" if finished else "unfinished",
        date=date,
        count=None,
        unit=unit,
        config=config_summary(kind, doc.get("config") or {}),
        bytes=size,
    )
    if finished:
        entry.count = _finished_count(kind, doc)
        try:
            problems = job_problems(loc, doc, checksums=False)
        except BoggleError as exc:
            problems = [(MANIFEST, exc.one_line())]
        if problems:
            entry.state, entry.problem = "damaged", describe_problems(problems)
    else:
        entry.count = _committed_count(kind, loc)
        if _sample_done(doc, entry.count):
            entry.state = "finished"
    return entry


def _sample_done(record: dict[str, Any], rows: int | None) -> bool:
    """A proof's ``--limit-classes`` sample with every class proved: finished as a sample ever
    is (it certifies nothing, so it never gets a manifest)."""
    limit = (record.get("config") or {}).get("limit_classes")
    return (
        record.get("format") == "boggle-prove"
        and isinstance(limit, int)
        and rows is not None
        and rows >= limit
    )


def _finished_count(kind: str, manifest: dict[str, Any]) -> int | None:
    counts = manifest.get("counts") or {}
    value = {
        "run": counts.get("boards"),
        "proof": manifest.get("classes_total"),
        "search": counts.get("restarts"),
    }[kind]
    return int(value) if isinstance(value, int) else None


def _committed_count(kind: str, loc: Location) -> int | None:
    """Boards or classes in the parts committed so far (from their records); a search writes
    its one part at the end, so it has done nothing countable before."""
    if kind == "search":
        return 0
    rows = 0
    for chunk in P.committed_chunks(loc):
        record = P.read_part_record(loc, chunk)
        rows += record.rows if record is not None else 0
    return rows


def config_summary(kind: str, config: dict[str, Any]) -> str:
    """A job's config in a few words: ``new 4x4 enable2k boggle`` (a run), ``enable2k 3x4
    T=1300`` (a proof), ``enable2k 4x4 anneal points`` (a search)."""

    def name(path: Any) -> str:
        text = str(path or "")
        return text if ":" in text and "/" not in text else Path(text).name

    if kind == "run":
        b, lex, rules = config.get("boards", {}), config.get("lexicon", {}), config.get("rules", {})
        source = b.get("dice") if b.get("source", "generate") == "generate" else "ingest"
        return " ".join(
            str(x) for x in (source, b.get("shape"), name(lex.get("path")), rules.get("name")) if x
        )
    if kind == "proof":
        sample = f" sample of {config['limit_classes']}" if config.get("limit_classes") else ""
        return f"{name(config.get('dictionary'))} {config.get('shape')} T={config.get('threshold')}{sample}"
    parts = (
        name(config.get("dictionary")),
        config.get("shape"),
        config.get("strategy"),
        config.get("objective"),
    )
    return " ".join(str(x) for x in parts if x)


def describe_job(path: str | os.PathLike[str]) -> dict[str, Any]:
    """What ``boggle runs show`` prints: the catalog entry's fields, the provenance (started,
    finished, packages), the config and identity, the counts the manifest records, the parts
    (listed or committed: files, rows, bytes), the problems a cheap check finds, and the
    command that made it when the record holds one."""
    loc = location(path, "RUN")
    doc, finished = _read_job(loc)  # a damaged manifest is the error (exit 4), as for readers
    size = sum(s for _, s in _jobs_below(loc))
    entry = _entry(loc, size)
    if finished:
        listed = M.listed_parts(doc, loc)
        rows = sum(i.rows for i in listed.values())
        parts = {"files": len(listed), "rows": rows, "bytes": sum(i.bytes for i in listed.values())}
    else:
        committed = P.committed_chunks(loc)
        records = [P.read_part_record(loc, c) for c in committed]
        parts = {
            "files": len(committed),
            "rows": sum(r.rows for r in records if r is not None),
            "bytes": sum(r.bytes for r in records if r is not None),
            "without_record": sum(r is None for r in records),
        }
    skip = {
        "parts",
        "seal",
        "config",
        "identity",
        "packages",
        "format",
        "started_at",
        "finished_at",
        "columns",
        "schema_version",
        "command",
    }
    figures = {k: v for k, v in doc.items() if k not in skip and not (k == "boards" and isinstance(v, list))}
    if isinstance(doc.get("boards"), list):  # a proof's boards >= T: the count and the best few
        figures["boards"] = len(doc["boards"])
        figures["best_boards"] = doc["boards"][:5]
    return {
        **entry.to_dict(),
        "format": doc.get("format"),
        "schema_version": doc.get("schema_version"),
        "started_at": doc.get("started_at"),
        "finished_at": doc.get("finished_at"),
        "packages": doc.get("packages"),
        "command": doc.get("command"),
        "config_full": doc.get("config"),
        "identity": doc.get("identity"),
        "figures": figures,
        "parts": parts,
    }


def verify_job(path: str | os.PathLike[str]) -> Verification:
    """The readers' full verification of one job directory: the manifest's seal, then every
    listed part's size and BLAKE2b, every side file, no stray part (finished); every committed
    part against its record (unfinished). A manifest or record that does not read or verify is
    a DamagedRunError (exit 4)."""
    loc = location(path, "RUN")
    doc, finished = _read_job(loc)
    kind, _ = _kind(doc, str(loc))
    if finished:
        problems = job_problems(loc, doc)
        n_parts = len(M.listed_parts(doc, loc))
        return Verification(path=str(loc), kind=kind, state="finished", parts=n_parts, problems=problems)
    try:  # each committed part must carry the job's identity, as a resume checks
        tag: str | None = part_tag(doc["format"], doc["identity"])
    except (KeyError, TypeError):
        tag = None
    checks = check_parts(loc, tag)  # the verdict a resume acts on
    problems = [(c.name, c.problem) for c in checks if c.problem is not None]
    rows = sum(c.record.rows for c in checks if c.problem is None and c.record is not None)
    state = "finished" if not problems and _sample_done(doc, rows) else "unfinished"
    return Verification(path=str(loc), kind=kind, state=state, parts=len(checks), problems=problems)


# ---------------------------------------------------------------- SQL over runs

QUERY_VIEW = "boards"  # the name a query gives the runs' boards


@dataclass
class QueryResult:
    """A query's column names and rows."""

    columns: list[str]
    rows: list[tuple[Any, ...]]


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
    """``sql`` over the verified boards of finished runs (:func:`pipeline.dataset.run_relation`,
    combined by column name), which it names ``boards``; SQL that DuckDB refuses is a
    ConfigError (exit 2) with DuckDB's first line.

    The query is sandboxed (docs/guides/batch-runs.md, "The catalog"): one read-only
    statement (a SELECT), DuckDB's external access off, so it reads the runs' own parts and no
    other file, URL, database or extension, and writes nothing (``COPY``, ``ATTACH`` and
    ``read_csv('/etc/passwd')`` are refused); its configuration locked; its memory capped at
    ``memory_limit`` (spilling to a private temporary folder, removed afterwards) on
    ``threads`` threads (default: all cores). It runs in a thread of its own, so a signal
    (Ctrl-C, SIGTERM) interrupts it at once. ``con``, a connection of the caller's, is used as
    it is: no sandbox, no limits.

    >>> query_runs(["runs/default"], "select max(score) from boards").rows  # doctest: +SKIP
    [(412,)]
    """
    require("analyze", "boggle runs query", ("duckdb",))
    import shutil
    import tempfile

    import duckdb

    from pipeline.dataset._read import run_dirs, run_parts, run_relation

    if con is not None:
        run_relation([str(r) for r in runs], con).create_view(QUERY_VIEW)
        return _fetch(con, sql)
    limit = parse_memory_limit(memory_limit)  # bad input first, before a run is read
    parts = [str(p) for p in run_parts([str(r) for r in runs])]  # verified (a damaged run: exit 4)
    if not parts:
        raise BoggleError(
            f"{', '.join(str(d) for d in run_dirs([str(r) for r in runs]))}: no part files (no boards)"
        )
    spill = tempfile.mkdtemp(prefix="boggle-query-")
    try:
        con = _sandbox(parts, spill, limit, threads)
        try:
            _check_read_only(con, sql)
            con.read_parquet(parts, union_by_name=True).create_view(QUERY_VIEW)
            return _interruptible(con, sql)
        finally:
            con.close()
    except duckdb.Error as exc:
        raise ConfigError(f"query: {str(exc).splitlines()[0]}") from None
    finally:
        shutil.rmtree(spill, ignore_errors=True)


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
