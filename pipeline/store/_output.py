"""Where a command writes what is not a job of its own: one file (``boggle select``'s pool), a
folder of files (``boggle analyze``'s report) or a folder of jobs (``boggle what-if``'s two
runs), on disk or in an object store, named as every ``--out`` is (:func:`location`).

Every command that writes goes through here, so an ``s3://``/``gs://``/``az://`` output goes to
the store (one PUT a file: a reader sees the whole object or none), a local one is written to a
temporary name and renamed; and no output lands where it must not:

* a path that is a URL with one slash lost (``s3:/bkt/pool.parquet``, what ``pathlib`` makes of
  ``s3://bkt/pool.parquet``) is refused, never a local folder named ``s3:``;
* an output inside a job directory (a folder holding ``_SUCCESS`` or ``_run.json``) is refused:
  its files would become part of the job and break every reader of it.

>>> with output_file("s3://bkt/pool.parquet") as tmp:  # doctest: +SKIP
...     pq.write_table(pool, tmp)
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from pipeline.errors import BoggleError
from pipeline.store._location import LocalLocation, Location, RemoteLocation, location
from pipeline.store._schema import MANIFEST, RUN_RECORD
from pipeline.urls import SCHEMES, is_url

__all__ = [
    "check_not_mangled",
    "check_output_file",
    "job_holding",
    "output_file",
    "output_folder",
    "output_location",
    "refuse_inside_job",
    "split_output",
]

#: What marks a job directory (a finished job, or one being written).
JOB_MARKERS = (MANIFEST, RUN_RECORD)
# a path component that is a URL scheme and its colon: "s3:" of s3:/bkt (a URL with a slash lost)
_SCHEME_COMPONENT = re.compile(
    r"^(?:" + "|".join(re.escape(s) for s in (*SCHEMES, "file", "http", "https")) + r"):$", re.IGNORECASE
)


def check_not_mangled(spec: str | os.PathLike[str], what: str = "--out") -> None:
    """A BoggleError (exit 2) for a local path with a component such as ``s3:``: a URL that
    lost a slash (``s3:/bkt/x``, what ``pathlib.Path("s3://bkt/x")`` gives), written as a local
    folder named ``s3:`` it would be lost to the store and found nowhere."""
    if is_url(spec):
        return
    for part in PurePosixPath(os.fspath(spec)).parts:
        if _SCHEME_COMPONENT.match(part):
            raise BoggleError(
                f"{what} {os.fspath(spec)}: looks like a URL with a slash missing ({part}//...); "
                f"write {part}//bucket/... for the store, refused rather than make a local folder {part!r}"
            )


def output_location(spec: str | os.PathLike[str], what: str = "--out") -> Location:
    """The folder ``spec`` names, to write into (checked: :func:`check_not_mangled`)."""
    check_not_mangled(spec, what)
    return location(os.fspath(spec), what)


def split_output(spec: str | os.PathLike[str], what: str = "--out") -> tuple[Location, str]:
    """(the folder, the file name) of an output file ``spec``."""
    text = os.fspath(spec)
    check_not_mangled(text, what)
    if is_url(text):
        folder, _, name = text.rstrip("/").rpartition("/")
        if not name or folder.endswith(":/") or folder.endswith(":"):
            raise BoggleError(f"{what} {text}: names no file in a bucket (s3://bucket/file)")
        return location(folder, what), name
    path = Path(text)
    return LocalLocation(path.parent), path.name


def check_output_file(spec: str | os.PathLike[str], what: str = "--out") -> None:
    """Refuse (exit 2) an output file before any work is done for it: a URL that lost a slash,
    or a local path that is there and is no regular file (a FIFO, a device: the write would
    replace it; a directory). What fails only when written (no permission) is an I/O failure
    then (exit 5)."""
    from pipeline.io import check_output_target

    loc, name = split_output(spec, what)
    if isinstance(loc, LocalLocation):
        check_output_target(loc.path / name, what)


@contextmanager
def output_file(spec: str | os.PathLike[str], what: str = "--out") -> Iterator[Path]:
    """A local path to write the output file ``spec`` to; once the block succeeds it is renamed
    into place (a local file) or uploaded by one PUT (an object store), and removed."""
    loc, name = split_output(spec, what)
    with loc.writing(name) as tmp:
        yield tmp


@contextmanager
def output_folder(
    spec: str | os.PathLike[str], what: str = "--out", last: Sequence[str] = ()
) -> Iterator[Path]:
    """A local folder to write the folder of outputs ``spec`` into: the folder itself, or for an
    object store a temporary one whose files are uploaded once the block succeeds (each by one
    PUT; those named in ``last`` after the others, so a reader of them finds the rest) and
    which is then removed."""
    loc = output_location(spec, what)
    if isinstance(loc, LocalLocation):
        yield loc.path
        return
    stage = Path(tempfile.mkdtemp(prefix="boggle-out-"))
    try:
        yield stage
        files = sorted(p.relative_to(stage).as_posix() for p in stage.rglob("*") if p.is_file())
        for name in sorted(files, key=lambda f: f in last):
            with loc.writing(name) as tmp:
                shutil.copyfile(stage / name, tmp)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def job_holding(spec: str | os.PathLike[str] | Location, *, itself: bool = True) -> tuple[str, bool] | None:
    """The job directory ``spec`` is (``itself``) or lies inside, and whether it is ``spec``
    itself: the nearest folder at or above it that holds a job's record or manifest; None when
    there is none."""
    loc = spec if isinstance(spec, Location) else location(os.fspath(spec))
    for k, folder in enumerate(_folder_and_parents(loc)):
        if k == 0 and not itself:
            continue
        if any(folder.is_file(m) for m in JOB_MARKERS):
            return folder.display, k == 0
    return None


def refuse_inside_job(
    spec: str | os.PathLike[str] | Location,
    what: str = "--out",
    *,
    itself: bool = True,
    writes: str = "",
    file: str | None = None,
) -> None:
    """A BoggleError (exit 2) when the output folder ``spec`` is (``itself``) or lies inside a
    job directory: what it writes (``writes``, said after the folder; or the output ``file`` in
    it, named instead of the folder) would become part of that job (:func:`job_holding`)."""
    found = job_holding(spec, itself=itself)
    if found is None:
        return
    job, same = found
    shown = file or (spec.display if isinstance(spec, Location) else os.fspath(spec))
    where = "is a job directory" if same and file is None else f"is inside the job directory {job}"
    raise BoggleError(
        f"{what} {shown} {where}{writes}; what it writes would become part of that job: choose another {what}"
    )


def _folder_and_parents(loc: Location) -> Iterator[Location]:
    if isinstance(loc, LocalLocation):
        path = loc.path.absolute()
        for folder in (path, *path.parents):
            yield LocalLocation(folder)
        return
    assert isinstance(loc, RemoteLocation)
    parts = loc.root.split("/")
    for n in range(len(parts), 1, -1):  # the bucket itself holds no job
        yield RemoteLocation(loc.scheme, "/".join(parts[:n]))
