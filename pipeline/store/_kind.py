"""What a job is to the store: a :class:`JobKind` says what a command's job directory holds:
its ``format``, schema version, what its messages call it, its part columns, and what
identifies a part (the part's *tag*, the ``boggle.config`` every part embeds: the data config
of a run, the whole identity of a proof, a search or a design). The store knows every kind
(:data:`KINDS`), so a reader checks any job's parts against its manifest without importing the
command that wrote it. :class:`JobState` is where a job directory stands once held;
:class:`JobOutcome` (its :class:`JobStatus`) is what a session made of it, the same for every
command.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Literal

from pipeline.store._location import PartRef
from pipeline.store._schema import COLUMNS, FORMAT, SCHEMA_VERSION


class JobState(StrEnum):
    """Where a job directory stands once its job holds it."""

    NEW = "new"  # nothing of this job there yet: its record was just written
    RESUME = "resume"  # an unfinished job of the same identity: verified parts are reused
    DONE = "done"  # a finished job whose every file verified: nothing to do


class JobStatus(StrEnum):
    """How a command's job ended, in every command's own words (its summary, ``--summary-json``)."""

    COMPLETE = "complete"  # finished by this session, nothing of an earlier one reused
    RESUMED = "resumed"  # finished by this session, going on from what an earlier one left
    ALREADY_COMPLETE = "already complete"  # found finished and verified: nothing to do
    SAMPLE = "sample"  # a proof of some of its classes: computed, never certified (no manifest)


@dataclass(frozen=True, kw_only=True)
class JobOutcome:
    """A finished job as the session that finished it, or found it finished, reports it
    (:meth:`pipeline.store.JobDir.outcome`): the command reads its own figures from
    :attr:`manifest`."""

    where: PartRef
    status: JobStatus
    parts_total: int
    parts_reused: int  # parts an earlier session committed (already complete: every one)
    manifest: dict[str, Any] = field(repr=False)

    @property
    def parts_computed(self) -> int:
        """Parts this session computed."""
        return self.parts_total - self.parts_reused


@dataclass(frozen=True, kw_only=True)
class JobKind:
    """One command's kind of job directory (see the module docstring)."""

    format: str
    schema_version: int
    noun: str  # what messages call one: run, proof, search, design
    columns: Mapping[str, str] = field(default_factory=dict)  # a part's columns, documented
    identifies: Literal["data", "identity"] = "identity"  # what of the identity a part embeds
    # proofs tag their parts with JSON escaped to ASCII (as they always have: their parts verify)
    ascii_tag: bool = False

    def tag(self, identity: Mapping[str, Any]) -> str:
        """What every part of the job with ``identity`` embeds as its ``boggle.config``."""
        body = identity["data"] if self.identifies == "data" else identity
        if self.ascii_tag:
            return json.dumps(body, sort_keys=True)
        return json.dumps(body, sort_keys=True, ensure_ascii=False, default=str)

    def documented(self, columns: Mapping[str, str]) -> JobKind:
        """This kind with its part columns described (the command that writes it knows them)."""
        return replace(self, columns=dict(columns))


RUN = JobKind(format=FORMAT, schema_version=SCHEMA_VERSION, noun="run", columns=COLUMNS, identifies="data")
# 2: parts recorded (size, BLAKE2b) and tagged with the identity; sealed manifest
PROOF = JobKind(format="boggle-prove", schema_version=2, noun="proof", ascii_tag=True)
SEARCH = JobKind(format="boggle-optimize", schema_version=2, noun="search")
DESIGN = JobKind(format="boggle-design", schema_version=1, noun="design")
KINDS: dict[str, JobKind] = {k.format: k for k in (RUN, PROOF, SEARCH, DESIGN)}


def job_kind(fmt: str) -> JobKind:
    """The kind of job the format ``fmt`` names (one the store does not know: a plain "job")."""
    return KINDS.get(fmt) or JobKind(format=fmt, schema_version=0, noun="job")


def part_tag(fmt: str, identity: Mapping[str, Any]) -> str:
    """What every part of a job of format ``fmt`` and ``identity`` embeds (:meth:`JobKind.tag`)."""
    return job_kind(fmt).tag(identity)
