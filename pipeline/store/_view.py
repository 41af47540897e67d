"""The read-only look at a job directory that ``--status``, catalogs, readers and re-runs
share: :func:`inspect` reads its sealed manifest and record; :func:`check_parts` says which
committed parts verify (size, BLAKE2b, the job's tag): the verdict
:meth:`pipeline.store.JobDir.pending` acts on when a job resumes."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.store._location import Location, PartRef, location
from pipeline.store._manifest import read_manifest
from pipeline.store._parts import PartInfo, committed_chunks, part_name, part_problem, read_part_record
from pipeline.store._schema import MANIFEST, RUN_RECORD


@dataclass(frozen=True, kw_only=True)
class JobView:
    """A job directory as it is, read without a lock: its sealed manifest (finished) and its
    record (None where absent)."""

    loc: Location
    manifest: dict[str, Any] | None
    record: dict[str, Any] | None

    @property
    def finished(self) -> bool:
        return self.manifest is not None

    @property
    def latest(self) -> dict[str, Any] | None:
        """The manifest of a finished job, else its record."""
        return self.manifest if self.manifest is not None else self.record


def inspect(where: str | os.PathLike[str] | Location) -> JobView:
    """Read the job directory ``where`` (a folder or an object-store URL): its manifest and
    record, each through the sealed reader (a DamagedRunError where one does not verify)."""
    loc = location(where)
    record = read_manifest(loc, RUN_RECORD) if loc.is_file(RUN_RECORD) else None
    return JobView(loc=loc, manifest=read_manifest(loc) if loc.is_file(MANIFEST) else None, record=record)


@dataclass(frozen=True, kw_only=True)
class PartCheck:
    """One committed part of an unfinished job, checked against its record."""

    chunk: int
    ref: PartRef
    record: PartInfo | None  # None: no record (a part a running job has yet to record, or damage)
    problem: str | None  # None: it verifies and can be reused

    @property
    def name(self) -> str:
        return part_name(self.chunk)


def check_part(loc: Location, chunk: int, tag: str | None) -> PartCheck:
    """The verdict on the committed part of ``chunk``: size and BLAKE2b against its record, its
    embedded ``tag`` (None: not checked) and its row count."""
    record = read_part_record(loc, chunk)
    return PartCheck(
        chunk=chunk, ref=loc.ref(part_name(chunk)), record=record, problem=part_problem(loc, record, tag)
    )


def check_parts(
    where: Path | str | Location, tag: str | None, n_chunks: int | None = None, noun: str = "job"
) -> list[PartCheck]:
    """Every committed part, in chunk order, checked (:func:`check_part`); with ``n_chunks``, a
    part beyond them is a stray (its problem says so, calling the job ``noun``)."""
    loc = location(where)
    out = []
    for chunk, ref in sorted(committed_chunks(loc).items()):
        if n_chunks is not None and chunk >= n_chunks:
            stray = f"beyond this {noun}'s {n_chunks} chunks"
            out.append(PartCheck(chunk=chunk, ref=ref, record=None, problem=stray))
        else:
            out.append(check_part(loc, chunk, tag))
    return out
