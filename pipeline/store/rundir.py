"""The run directory: the lock, the run record, preparing (or refusing) a directory, reading a
finished run, and the manifest written last."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, NamedTuple

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.errors import BoggleError, DamagedRunError, OutputConflictError, RunIOError
from pipeline.store.location import Location, RemoteLocation, location
from pipeline.store.parts import (
    PartInfo,
    check_digest,
    committed_chunks,
    count_problems,
    describe_problems,
    footer_problem,
    job_problems,
    listed_parts,
    part_name,
    part_tag,
    read_manifest,
    side_file_problems,
)
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


def is_job_file(p: Path) -> bool:
    name = p.name
    return (
        bool(PART_RE.match(name))
        or name in (MANIFEST, RUN_RECORD, LOCK_FILE, REJECTS, *JOB_SIDE_FILES)
        or (name.startswith(".") and name.endswith(".tmp"))
    )


def remove_temp_files(run_dir: Path) -> None:
    """Delete temp files a killed writer left behind (call with the lock held)."""
    for folder in (run_dir, run_dir / PARTS_DIR):
        for p in folder.iterdir() if folder.is_dir() else ():
            if p.name.startswith(".") and p.name.endswith(".tmp") and p.is_file():
                p.unlink(missing_ok=True)


def clear_run(run_dir: Path | Location) -> None:
    """Remove every file a run writes (parts, manifest, record, rejects, temp files); other
    files are left alone. Call with the lock held."""
    loc = location(run_dir)
    if not loc.local:
        for name in loc.names():
            if is_job_file(Path(name)):
                loc.remove(name)
        for name in loc.names(PARTS_DIR):
            loc.remove(f"{PARTS_DIR}/{name}")
        return
    run_dir = Path(loc.url())
    for p in run_dir.iterdir():
        if p.is_file() and is_job_file(p) and p.name != LOCK_FILE:
            p.unlink()
    shutil.rmtree(run_dir / PARTS_DIR, ignore_errors=True)


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
    manifest = read_manifest(manifest_path)
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
    manifest = read_manifest(MANIFEST, loc)
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

    from pipeline.store.parts import file_blake2b

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


def read_run(
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

    loc = location(run_dir, "run")
    if not loc.local:
        if not loc.is_file(MANIFEST):
            return []
        problems = side_file_problems(loc, read_manifest(MANIFEST, loc))
        if problems:
            raise DamagedRunError(f"{run_dir}: damaged run, refused ({describe_problems(problems)})")
        if not loc.is_file(REJECTS):
            return []
        text = loc.read_bytes(REJECTS).decode("utf-8")
        import io

        return list(csv.DictReader(io.StringIO(text, newline="")))
    manifest_path = Path(run_dir) / MANIFEST
    if manifest_path.is_file():
        problems = side_file_problems(Path(run_dir), read_manifest(manifest_path))
        if problems:
            raise DamagedRunError(f"{run_dir}: damaged run, refused ({describe_problems(problems)})")
    path = Path(run_dir) / REJECTS
    if not path.is_file():
        return []
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))
