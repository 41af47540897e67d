"""Job directories: which files are a job's, clearing them, and reading a finished run (its
manifest, parts and rejects)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.errors import BoggleError, DamagedRunError
from pipeline.store.location import Location, RemoteLocation, location
from pipeline.store.manifest import (
    check_digest,
    count_problems,
    describe_problems,
    job_problems,
    listed_parts,
    part_tag,
    read_manifest,
    side_file_problems,
)
from pipeline.store.parts import PartInfo, committed_chunks, file_blake2b, footer_problem, part_name
from pipeline.store.schema import (
    FORMAT,
    JOB_SIDE_FILES,
    LOCK_FILE,
    MANIFEST,
    PART_RE,
    PARTS_DIR,
    REJECTS,
    RUN_RECORD,
    board_schema,
    conform_part,
)

# ---------------------------------------------------------------- run state


def is_job_file(p: Path) -> bool:
    name = p.name
    return (
        bool(PART_RE.match(name))
        or name in (MANIFEST, RUN_RECORD, LOCK_FILE, REJECTS, *JOB_SIDE_FILES)
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


def open_run(run_dir: Path | str, *, verify: bool = True, expect_digest: str | None = None) -> FinishedRun:
    """The manifest and part paths of a finished run, checked: a BoggleError if it is not
    finished, a DamagedRunError (exit 4) naming the file if the manifest's seal, a part or a
    side file differs from what was recorded, or a part is missing or not listed.

    ``verify=False`` skips reading every part to compare its checksum (sizes, names and the
    manifest's seal are still checked): about 0.3 s saved on a 1M-board run (221 MB of parts,
    hashed on 2 cores), at the price of reading a flipped bit silently.

    A run in an object store (an fsspec URL) is read through a local cache: each part listed
    is downloaded once, and what is verified is exactly what is then read.

    ``expect_digest``: the run's published digest (``boggle digest``); a run whose manifest
    gives another is refused (DamagedRunError), whatever its checksums say.

    >>> manifest, parts = open_run("runs/default")  # doctest: +SKIP
    """
    loc = location(run_dir, "run")
    if isinstance(loc, RemoteLocation):
        return _open_remote(loc, verify, expect_digest)
    run_dir = Path(loc.url())
    if not run_dir.is_dir():
        raise BoggleError(f"run directory not found: {run_dir}")
    manifest_path = run_dir / MANIFEST
    if not manifest_path.is_file():
        raise _not_finished(run_dir, (run_dir / RUN_RECORD).is_file())
    manifest = read_manifest(loc)
    if manifest.get("format") != FORMAT:
        raise BoggleError(f"{manifest_path}: not a boggle run manifest")
    check_digest(manifest, expect_digest, run_dir)
    listed = listed_parts(manifest, run_dir)
    parts = [run_dir / info.file for _, info in sorted(listed.items())]
    problems = job_problems(run_dir, manifest, checksums=verify)
    if problems:
        raise DamagedRunError(
            f"{run_dir}: damaged run, refused ({describe_problems(problems)}); re-run `boggle run` with "
            "--overwrite to recompute the damaged parts"
        )
    return FinishedRun(manifest, parts)


def _not_finished(where: object, has_record: bool) -> BoggleError:
    state = (
        "unfinished (no _SUCCESS; re-run `boggle run` to finish it)"
        if has_record
        else "not a run directory (no _SUCCESS manifest)"
    )
    return BoggleError(f"{where}: {state}")


def _open_remote(loc: RemoteLocation, verify: bool, expect_digest: str | None) -> FinishedRun:
    if not loc.is_file(MANIFEST):
        raise _not_finished(loc, loc.is_file(RUN_RECORD))
    manifest = read_manifest(loc)
    if manifest.get("format") != FORMAT:
        raise BoggleError(f"{loc.url(MANIFEST)}: not a boggle run manifest")
    check_digest(manifest, expect_digest, loc)
    listed = listed_parts(manifest, loc)
    present = committed_chunks(loc)
    problems = [(info.file, "missing") for k, info in listed.items() if k not in present]
    problems += [(part_name(k), "not part of the finished run") for k in sorted(set(present) - set(listed))]
    parts: list[Path] = []
    tag: str | None = None
    try:
        tag = part_tag(FORMAT, manifest["identity"]) if verify else None
    except (KeyError, TypeError):
        problems.append((MANIFEST, "its identity is missing or malformed"))
    if not problems:
        for _, info in sorted(listed.items()):
            path, problem = _cached_part(loc, info, verify)
            if problem is None and tag is not None:  # the checked copy: its footer's identity and rows
                problem = footer_problem(path, info, tag)
            if problem is not None:
                problems.append((info.file, problem))
            parts.append(path)
        problems += side_file_problems(loc, manifest) + count_problems(manifest, listed)
    if problems:
        raise DamagedRunError(
            f"{loc}: damaged run, refused ({describe_problems(problems)}); re-run `boggle run` with "
            "--overwrite to recompute the damaged parts"
        )
    return FinishedRun(manifest, parts)


_CACHE: dict[str, Path] = {}


def _cache_dir() -> Path:
    """Where parts read from an object store are kept: a temporary folder (``$TMPDIR``)
    removed when the process ends."""
    if "dir" not in _CACHE:
        import atexit
        import tempfile

        folder = Path(tempfile.mkdtemp(prefix="boggle-parts-"))
        atexit.register(shutil.rmtree, folder, True)
        _CACHE["dir"] = folder
    return _CACHE["dir"]


def _cached_part(loc: RemoteLocation, info: PartInfo, verify: bool) -> tuple[Path, str | None]:
    """A local copy of a listed part (downloaded unless a copy of the same checksum is there),
    and what is wrong with it (None: it matches the manifest)."""
    import hashlib

    key = hashlib.blake2b(loc.url(info.file).encode(), digest_size=8).hexdigest()
    path = _cache_dir() / f"{key}-{info.blake2b or info.bytes}-{info.file}"
    fresh = not path.is_file()
    if fresh:
        from pipeline.io import atomic_path

        with atomic_path(path) as tmp:
            loc.download(info.file, tmp)
    size = path.stat().st_size
    if size != info.bytes:
        path.unlink(missing_ok=True)
        return path, f"{size:,} bytes, {info.bytes:,} recorded"
    if (verify or fresh) and info.blake2b is not None and file_blake2b(path) != info.blake2b:
        path.unlink(missing_ok=True)
        return path, "checksum differs from the one recorded (damaged or replaced)"
    return path, None


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
    tables = [conform_part(pq.read_table(p, columns=cols)) for p in parts]
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
