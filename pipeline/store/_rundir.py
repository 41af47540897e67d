"""Job directories: which files are a job's, clearing them, and reading a finished run (its
manifest, parts and rejects)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.errors import BoggleError, DamagedRunError
from pipeline.store._location import Location, location
from pipeline.store._manifest import (
    check_digest,
    describe_problems,
    job_problems,
    listed_parts,
    read_manifest,
    side_file_problems,
)
from pipeline.store._parts import PartInfo, footer_problem
from pipeline.store._schema import (
    FORMAT,
    JOB_SIDE_FILES,
    LOCK_FILE,
    MANIFEST,
    PART_RE,
    PARTS_DIR,
    READABLE_VERSIONS,
    REJECTS,
    RUN_RECORD,
    SCHEMA_VERSION,
    VOCABULARY,
    board_schema,
)

# ---------------------------------------------------------------- run state


def is_job_file(p: Path) -> bool:
    name = p.name
    return (
        bool(PART_RE.match(name))
        or name in (MANIFEST, RUN_RECORD, LOCK_FILE, REJECTS, VOCABULARY, *JOB_SIDE_FILES)
        or (name.startswith(".") and name.endswith(".tmp"))
    )


def clear_run(run_dir: Path | Location) -> None:
    """Remove every file a run writes (parts, manifest, record, rejects, temp files, part
    records); other files are left alone. Call with the lock held."""
    loc = location(run_dir)
    for name in loc.names():
        if is_job_file(Path(name)) and name != LOCK_FILE:
            loc.remove(name)
    loc.remove_folder(PARTS_DIR)


# Identity keys recorded only when they differ from their default (RunConfig.data_dict)
_UNRECORDED_DEFAULTS = {"data.boards.words": True}


def describe_diff(old: Mapping[str, Any], new: Mapping[str, Any], prefix: str = "") -> str:
    for key in sorted(set(old) | set(new)):
        missing = _UNRECORDED_DEFAULTS.get(f"{prefix}{key}")
        a, b = old.get(key, missing), new.get(key, missing)
        if a == b:
            continue
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            return describe_diff(a, b, f"{prefix}{key}.")
        return f"{prefix}{key}: {json.dumps(a, default=str)} there, {json.dumps(b, default=str)} now"
    return "no difference"


# ---------------------------------------------------------------- finished runs


class FinishedRun(NamedTuple):
    """A finished run: its manifest and its part files in chunk order."""

    manifest: dict[str, Any]
    parts: list[Path]


def open_run(
    run_dir: Path | str, *, verify: bool = True, expect_digest: str | None = None, fetch: bool = True
) -> FinishedRun:
    """The manifest and part paths of a finished run, checked: a BoggleError if it is not
    finished or of another schema version (:func:`check_schema`), a DamagedRunError (exit 4)
    naming the file if the manifest's seal, a part or a side file differs from what was
    recorded, or a part is missing or not listed.

    ``verify=False`` skips reading every part to compare its checksum (sizes, names and the
    manifest's seal are still checked): about 0.3 s saved on a 1M-board run (221 MB of parts,
    hashed on 2 cores), at the price of reading a flipped bit silently.

    A run in an object store (an fsspec URL) is read through a local cache: each part listed
    is downloaded once, and what is verified is exactly what is then read.

    ``expect_digest``: the run's published digest (``boggle digest``); a run whose manifest
    gives another is refused (DamagedRunError), whatever its checksums say.

    ``fetch=False`` (a run in an object store): the parts are not downloaded; their sizes are
    checked against the manifest and ``parts`` are their URLs, for a reader that fetches only
    the columns it needs (``boggle analyze``, which checks each part's statistics file
    against its checksum as it reads it). A local run is verified as always.

    >>> manifest, parts = open_run("runs/default")  # doctest: +SKIP
    """
    loc = location(run_dir, "run")
    where = loc.ref()
    if not loc.is_dir():
        raise BoggleError(f"run directory not found: {where}")
    if not loc.is_file(MANIFEST):
        raise _not_finished(where, loc.is_file(RUN_RECORD))
    manifest = read_manifest(loc)
    if manifest.get("format") != FORMAT:
        raise BoggleError(f"{loc.ref(MANIFEST)}: not a boggle run manifest")
    check_schema(manifest, where)
    check_digest(manifest, expect_digest, where)
    listed = listed_parts(manifest, where)
    files: dict[int, Path] = {}

    def read(info: PartInfo, tag: str | None) -> str | None:
        """The part's local file (in an object store: its download), checked: it is what is read."""
        assert info.blake2b is not None  # listed_parts refuses an entry without one
        if not fetch and not isinstance(where, Path):
            files[info.chunk] = loc.ref(info.file)  # type: ignore[assignment]
            size = loc.size(info.file)
            return None if size == info.bytes else f"{size:,} bytes, {info.bytes:,} recorded"
        path, problem = loc.local_file(info.file, info.bytes, info.blake2b, verify=verify)
        files[info.chunk] = path
        if problem is None and verify:  # its footer: the run's identity and the rows recorded
            problem = footer_problem(path, info, tag)
        return problem

    problems = job_problems(loc, manifest, read=read)
    if problems:
        raise DamagedRunError(
            f"{where}: damaged run, refused ({describe_problems(problems)}); re-run `boggle run` with "
            "--overwrite to recompute the damaged parts"
        )
    return FinishedRun(manifest, [files[k] for k in sorted(listed)])


def check_schema(manifest: Mapping[str, Any], where: object) -> None:
    """A BoggleError (exit 2) for a finished run of a schema version this release does not
    read (:data:`~pipeline.store._schema.READABLE_VERSIONS`): one line naming both, and how to
    migrate it (a run older than version 2 records none)."""
    version = manifest.get("schema_version", 1)
    if version in READABLE_VERSIONS:
        return
    reads = f"schema {READABLE_VERSIONS[0]} to {SCHEMA_VERSION}"
    if isinstance(version, int) and version < SCHEMA_VERSION:
        raise BoggleError(
            f"{where}: a run of schema {version}, which this release no longer reads (it reads "
            f"{reads}): re-run its config with `boggle run --overwrite` to write it anew"
        )
    raise BoggleError(
        f"{where}: a run of schema {version!r}, newer than this release reads ({reads}): "
        "read it with the release that wrote it"
    )


def _not_finished(where: object, has_record: bool) -> BoggleError:
    state = (
        "unfinished (no _SUCCESS; re-run `boggle run` to finish it)"
        if has_record
        else "not a run directory (no _SUCCESS manifest)"
    )
    return BoggleError(f"{where}: {state}")


def read_run_table(
    run_dir: Path | str,
    columns: Sequence[str] | None = None,
    *,
    verify: bool = True,
    expect_digest: str | None = None,
) -> pa.Table:
    """A finished run's boards as one Arrow table, in board_id order (for small runs and tests;
    for large runs read the parts with DuckDB or ``pyarrow.dataset``); ``verify`` and
    ``expect_digest``: as :func:`open_run`."""
    manifest, parts = open_run(run_dir, verify=verify, expect_digest=expect_digest)
    cols = list(columns) if columns is not None else None
    tables = [pq.read_table(p, columns=cols) for p in parts]
    if not tables:
        words = manifest.get("config", {}).get("boards", {}).get("words", True) is not False
        return board_schema(words=words).empty_table()
    table = pa.concat_tables(tables)
    if "board_id" in table.column_names:
        table = table.sort_by("board_id")
    return table


def read_rejects(run_dir: Path | str) -> list[dict[str, str]]:
    """The rejected rows of a run (empty when it has none); in a finished run the file is
    checked against the manifest first (a DamagedRunError when it differs)."""
    import csv
    import io

    loc = location(run_dir, "run")
    if loc.is_file(MANIFEST):
        problems = side_file_problems(loc, read_manifest(loc))
        if problems:
            raise DamagedRunError(f"{run_dir}: damaged run, refused ({describe_problems(problems)})")
    if not loc.is_file(REJECTS):
        return []
    text = loc.read_bytes(REJECTS).decode("utf-8")
    return list(csv.DictReader(io.StringIO(text, newline="")))
