"""One job-directory lifecycle for ``boggle run``, ``boggle prove`` and ``boggle optimize``.

Every job that writes a directory goes through the same steps, in this order::

    lock -> read what is there (manifest, else record) -> same identity?
         -> finished: verify every part and side file against the sealed manifest, and the
                      manifest against what the command's config makes (its parts, counts)
                      (damaged: refused, exit 4; --overwrite repairs just the damaged files)
         -> unfinished: verify every part it would reuse against its record
                        (size, BLAKE2b, the config embedded in the part), else recompute it
         -> new: write the record (identity, config, started_at, packages)
    commit parts (written atomically, then recorded) -> coverage (every chunk, no strays)
         -> manifest written last, sealed with a checksum of its own content
    outcome: complete, resumed or already complete (:class:`~pipeline.store._kind.JobOutcome`)

The manifest's common keys are the same for every kind of job: ``format``,
``schema_version``, ``identity``, ``config``, ``packages``, ``started_at``, ``finished_at``,
``chunks_reused``, ``parts`` (file, chunk, rows, bytes, blake2b), ``files`` (side files with
their bytes and blake2b) and ``seal``. Readers (:func:`pipeline.store.open_run`) check the seal,
every part and every side file, so a damaged or foreign file is never read silently.

The directory is a :class:`~pipeline.store._location.Location`: a local folder (the lock is an
flock, files are renamed into place and fsynced) or a folder of an object store at an fsspec
URL (the lock is a lease, :mod:`pipeline.store._lease`; every file is one PUT, the manifest
last); the steps above are the same for both.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping, Sized
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypedDict, TypeVar, Unpack

import pyarrow as pa

import pipeline.store._parts as P
from pipeline.errors import DamagedRunError, InternalError, OutputConflictError, stop_if_signalled
from pipeline.io import now_iso, package_versions, recorded_command
from pipeline.store._kind import JobKind, JobOutcome, JobState, JobStatus
from pipeline.store._location import Location, PartRef, location
from pipeline.store._manifest import (
    SEAL,
    describe_problems,
    file_entry,
    job_problems,
    read_manifest,
    seal_of,
)
from pipeline.store._parts import write_json
from pipeline.store._rundir import clear_run, describe_diff, is_job_file
from pipeline.store._schema import MANIFEST, RUN_RECORD
from pipeline.store._view import check_part

Note = Callable[[str], None]
T = TypeVar("T")


class JobOptions(TypedDict, total=False):
    """The keywords of :class:`JobDir` (and :meth:`JobDir.open`, which passes them on)."""

    overwrite: bool
    note: Note | None
    parts: int | None
    records: Mapping[str, Any] | None
    side_schema: pa.Schema | None


def manifest_mismatches(
    manifest: Mapping[str, Any], parts: int | None, records: Mapping[str, Any]
) -> list[tuple[str, str]]:
    """(manifest, problem) where a verified manifest records other than what a command's config
    makes: ``parts`` part files (None: not known) and the manifest keys of ``records`` with
    their values (a manifest edited and resealed, or a job the config does not make). A re-run
    refuses such a job (exit 4) and ``prove --status`` distrusts it."""
    out = []
    listed = len(manifest.get("parts") or ())
    if parts is not None and listed != parts:
        out.append((MANIFEST, f"{listed:,} part files listed, the config makes {parts:,}"))
    for key, want in records.items():
        if manifest.get(key) != want:
            out.append((MANIFEST, f"{key} {manifest.get(key)!r} recorded, the config gives {want!r}"))
    return out


class JobDir:
    """A job directory held under its lock (make one with :meth:`open`).

    ``state`` is a :class:`~pipeline.store._kind.JobState`: new, resume (an unfinished job of
    the same identity: committed parts are reused once verified, :meth:`pending`) or done (a
    finished job whose every file verified; its manifest is :attr:`manifest`). ``parts`` and
    ``records``: what the command's config makes, which a finished job's manifest must record
    (:meth:`open`). A finished job is reported by :meth:`outcome`, the same for every command.
    """

    def __init__(
        self,
        path: Path | Location,
        kind: JobKind,
        identity: Mapping[str, Any],
        config: Mapping[str, Any],
        *,
        overwrite: bool = False,
        note: Note | None = None,
        parts: int | None = None,
        records: Mapping[str, Any] | None = None,
        side_schema: pa.Schema | None = None,
    ):
        self.loc = location(path)
        self.side_schema = side_schema  # a run's, packed with (pipeline.store._pack); else plain
        # a local Path, or the URL (for messages) of a folder in an object store
        self.path: PartRef = self.loc.ref()
        self.lease: Any = None
        self.kind = kind
        self.format = kind.format
        self.identity = dict(identity)
        self.config = dict(config)
        # what each part embeds; readers check it against the manifest's identity (part_tag)
        self.tag = kind.tag(self.identity)
        self.overwrite = overwrite
        self.note = note
        self.state = JobState.NEW
        self.started_at = now_iso()
        self.manifest: dict[str, Any] | None = None
        self.chunks_reused = 0
        self.took_up_state = False  # went on from a state an earlier session saved (saved_state)
        self.noun = kind.noun
        self.expected_parts = parts
        self.expected_records = dict(records or {})

    @classmethod
    @contextmanager
    def open(
        cls,
        path: Path | str | Location,
        kind: JobKind,
        identity: Mapping[str, Any],
        config: Mapping[str, Any],
        **options: Unpack[JobOptions],
    ) -> Iterator[JobDir]:
        """Lock ``path`` (a local folder: flock; an object store: a lease) and decide what to
        do with it (see the class docstring). ``parts``: the part files the command's config
        makes (None: not known before the input is read); ``records``: manifest keys and the
        values the config gives them. A finished job whose manifest records others is damaged
        (refused, exit 4, naming the manifest; --overwrite recomputes what is missing).
        ``side_schema``: a run's board schema, its side files are packed with (a run of the
        plain layout there is refused unless --overwrite, which writes it anew)."""
        loc = location(path)
        with loc.lock() as lease:
            job = cls(loc, kind, identity, config, **options)
            job.lease = lease
            job._prepare()
            yield job

    def check_lease(self) -> None:
        """Before anything is committed in an object store: refuse (exit 4) unless this job
        still holds its lease (a holder that was paused past it stops writing)."""
        if self.lease is not None:
            self.lease.check()

    # ------------------------------------------------------------ opening

    def _say(self, message: str) -> None:
        if self.note is not None:
            self.note(message)

    def _read_state(self, name: str) -> dict[str, Any] | None:
        """The manifest or record ``name`` (None: absent); an unreadable or tampered one is
        refused, or with --overwrite set aside (removed) so the job starts again from what
        verifies."""
        if not self.loc.is_file(name):
            return None
        path = self.loc.url(name)
        try:
            data = read_manifest(self.loc, name)
        except DamagedRunError as exc:
            if not self.overwrite:
                raise DamagedRunError(exc.message + "; re-run with --overwrite to repair it") from None
            self._say(f"{path}: {exc.message.split(': ', 1)[-1]}; removed (--overwrite)")
            self.loc.remove(name)
            return None
        if data.get("format", self.format) != self.format:
            raise OutputConflictError(
                f"output directory {self.path} holds a {data.get('format')} directory, not a "
                f"{self.format} one; choose another --out"
            )
        return data

    def _prepare(self) -> None:
        self.loc.remove_temp_files()
        plain = self.side_schema is not None and not self.loc.packed()
        if plain and not any(self.loc.is_file(n) for n in (MANIFEST, RUN_RECORD)):
            self.loc.use_packing(self.side_schema)  # a new job: packed
            plain = False
        manifest = self._read_state(MANIFEST)
        record = self._read_state(RUN_RECORD)
        previous = manifest if manifest is not None else record
        if previous is None:
            self._refuse_foreign()
            self._write_record()
            return
        old = previous.get("identity", {})
        if old != self.identity or plain:
            if not self.overwrite:
                what = "a finished" if manifest is not None else "an unfinished"
                raise OutputConflictError(self._conflict(what, old))
            clear_run(self.loc)
            self.loc.use_packing(self.side_schema)
            self._write_record()
            return
        self.started_at = str(previous.get("started_at", self.started_at))
        if record is None:
            self._write_record()  # a finished job whose record was lost: resumable again
        if manifest is None:
            self.state = JobState.RESUME
            return
        problems = job_problems(self.loc, manifest) or manifest_mismatches(
            manifest, self.expected_parts, self.expected_records
        )
        if not problems:
            self.state = JobState.DONE
            self.manifest = manifest
            return
        if not self.overwrite:
            raise DamagedRunError(
                f"{self.path} is a finished {self.noun} with damaged files ({describe_problems(problems)}); "
                "re-run with --overwrite to recompute them"
            )
        self._say(f"repairing {self.path}: {describe_problems(problems)}; recomputing")
        for name, _ in problems:
            m = P.PART_RE.match(name)
            if m:
                P.discard_part(self.loc, int(m.group(1)))
        self.loc.remove(MANIFEST)
        self.state = JobState.RESUME

    def _conflict(self, what: str, old: Mapping[str, Any]) -> str:
        """Why the folder's job cannot be taken up: another config, or (same config) a run of
        an earlier schema, whose layout this release reads but does not write."""
        version, now = old.get("schema_version"), self.identity.get("schema_version")
        if version != now and {**old, "schema_version": now} == self.identity:
            return (
                f"output directory {self.path} holds {what} {self.noun} of schema {version} (an earlier "
                f"release's layout: a finished one reads as it is, but is not resumed or extended); use "
                f"--overwrite to write it anew in schema {now}, or choose another --out"
            )
        return (
            f"output directory {self.path} holds {what} {self.noun} with a different config "
            f"({describe_diff(old, self.identity)}); use --overwrite to replace it or "
            "choose another --out"
        )

    def _refuse_foreign(self) -> None:
        """A directory without manifest or record must be empty (or hold only run files, which
        --overwrite removes)."""

        foreign = self.loc.entries()
        if not foreign:
            return
        ours = [n for n in foreign if is_job_file(Path(n))]
        if ours and self.overwrite:
            clear_run(self.loc)
            self.loc.use_packing(self.side_schema)
            foreign = self.loc.entries()
        if foreign:
            raise OutputConflictError(
                f"output directory {self.path} is not empty and holds no {self.noun} record "
                f"(found {', '.join(foreign[:3])}{'...' if len(foreign) > 3 else ''}); "
                "choose an empty or new directory"
                + ("" if ours else f" (--overwrite only replaces {self.noun} files)")
            )

    def _write_record(self) -> None:
        self.state = JobState.NEW
        record: dict[str, Any] = {
            "format": self.format,
            "identity": self.identity,
            "config": self.config,
            "started_at": self.started_at,
            "packages": package_versions(),
        }
        command = recorded_command()
        if command is not None:
            record["command"] = command
        self.check_lease()
        write_json(self.loc, RUN_RECORD, {**record, SEAL: seal_of(record)})

    # ------------------------------------------------------------ parts

    def committed(self) -> dict[int, PartRef]:
        """The part files present, by chunk (verify each with :meth:`reusable` before use)."""
        return P.committed_chunks(self.loc)

    def pending(
        self,
        chunks: Iterable[T],
        *,
        number: Callable[[T], int] = int,  # type: ignore[assignment]
        reuse: Callable[[T, int], str | None] | None = None,
    ) -> Iterator[T]:
        """The chunks that must be computed, in the order given: a chunk whose committed part
        verifies against its record (size, checksum, the job's tag) is reused instead, once
        ``reuse(chunk, number)`` (when given: the command's own check, which may also take
        what the part holds) returns no reason against it; a part that does not verify is
        named in a note and removed, to be recomputed. Parts beyond the chunks are strays
        (refused, or removed with --overwrite): checked first when ``chunks`` has a length,
        else once it is consumed. ``number`` gives a chunk's part number."""
        committed = self.committed()
        sized = isinstance(chunks, Sized)
        if isinstance(chunks, Sized):
            self.strays(committed, len(chunks))
        count = 0
        for item in chunks:
            count += 1
            k = number(item)
            if k in committed and self._reused(k, item, reuse):
                continue
            yield item
        if not sized:
            self.strays(committed, count)

    def _reused(self, chunk: int, item: T, reuse: Callable[[T, int], str | None] | None) -> bool:
        check = check_part(self.loc, chunk, self.tag)
        problem = check.problem
        if problem is None and reuse is not None:
            problem = reuse(item, chunk)
        if problem is None:
            self.chunks_reused += 1
            return True
        self._say(f"{check.ref}: {problem}; recomputing it")
        P.discard_part(self.loc, chunk)
        return False

    def recorded_rows(self, chunk: int) -> int:
        """The rows the record of a verified part of ``chunk`` gives (its footer agrees)."""
        record = P.read_part_record(self.loc, chunk)
        assert record is not None, "call only for a part pending() verified"
        return record.rows

    def record(self, chunk: int) -> P.PartInfo | None:
        """The record of the part of ``chunk`` (None: none readable)."""
        return P.read_part_record(self.loc, chunk)

    def read_part(self, chunk: int) -> pa.Table:
        """The committed part of ``chunk`` (verify it with :meth:`reusable` first)."""
        return P.read_part(self.loc, chunk)

    def discard(self, chunk: int) -> None:
        P.discard_part(self.loc, chunk)

    @contextmanager
    def side_file(self, name: str) -> Iterator[Path]:
        """A local path to write the side file ``name`` to; it appears whole when the block
        ends (locally renamed into place, in an object store uploaded in one PUT)."""
        with self.loc.writing(name) as tmp:
            yield tmp
            self.check_lease()

    def strays(self, committed: Mapping[int, PartRef], n_chunks: int) -> None:
        """Parts beyond the job's ``n_chunks``: refused (exit 4), or removed with --overwrite."""
        stray = sorted(k for k in committed if k >= n_chunks)
        if not stray:
            return
        if not self.overwrite:
            raise OutputConflictError(
                f"{self.path} holds part files beyond this {self.noun}'s {n_chunks} chunks "
                f"({committed[stray[0]].name}...); use --overwrite"
            )
        for k in stray:
            self._say(f"{committed[k]}: beyond this {self.noun}'s {n_chunks} chunks; removed (--overwrite)")
            P.discard_part(self.loc, k)

    def commit(
        self,
        chunk: int,
        rows: int,
        table: pa.Table | None = None,
        metadata: Mapping[str, str] | None = None,
        written: P.PartInfo | None = None,
        stats: bytes | None = None,
        totals: dict[str, int] | None = None,
    ) -> P.PartInfo:
        """Record the part of ``chunk``: write ``table`` first (with ``metadata`` and the job's
        tag, and its statistics ``stats``) when the worker returned it instead of writing it;
        ``written`` is the record a worker that wrote the part sent back (size and checksum of
        what it committed, its statistics' too); ``totals``: what a run's part holds (words,
        points), recorded with it."""
        stop_if_signalled()
        self.check_lease()
        if table is not None:
            meta = {**(metadata or {}), P.META_CONFIG: self.tag}
            written = P.write_part_info(self.loc, chunk, table, meta, stats=stats)
        if written is not None and totals is not None:
            written = dataclasses.replace(written, totals=totals)
        return P.record_part(self.loc, chunk, rows, written)

    # ------------------------------------------------------------ finishing

    def check_covered(self, n_chunks: int) -> dict[int, PartRef]:
        """The coverage check: chunks ``0..n_chunks-1`` all committed and no other part there
        (an InternalError, or a stray refused as :meth:`strays` does). Returns the parts."""
        committed = self.committed()
        missing = [k for k in range(n_chunks) if k not in committed]
        if missing:
            raise InternalError(f"{self.path}: chunks {missing[:5]} were not written; re-run to finish")
        self.strays(committed, n_chunks)
        return committed

    def finish(
        self,
        n_chunks: int,
        fields: Mapping[str, Any],
        side_files: tuple[str, ...] = (),
    ) -> dict[str, Any]:
        """Check that chunks ``0..n_chunks-1`` are all committed and recorded and that no other
        part is there (the coverage check), then write the manifest last. Returns it."""
        committed = self.check_covered(n_chunks)
        parts = []
        for k in range(n_chunks):
            info = P.read_part_record(self.loc, k)
            if info is None or info.bytes != self.loc.size(P.part_name(k)):
                raise InternalError(f"{committed[k]}: no matching record at the end of the job")
            parts.append(info.to_dict())
        files = {name: file_entry(self.loc, name) for name in side_files}
        manifest: dict[str, Any] = {
            "format": self.format,
            "schema_version": self.kind.schema_version,
            "identity": self.identity,
            "config": self.config,
            "packages": package_versions(),
            "started_at": self.started_at,
            "finished_at": now_iso(),
            "chunks_reused": self.chunks_reused,
            # the kind's part columns, unless the job describes its own (a run without words)
            **({"columns": dict(self.kind.columns)} if self.kind.columns else {}),
            **fields,
            "parts": parts,
            "files": files,
        }
        command = recorded_command()
        if command is not None:
            manifest["command"] = command  # the session that finished it
        manifest[SEAL] = seal_of(manifest)
        stop_if_signalled()
        self.check_lease()
        write_json(self.loc, MANIFEST, manifest)
        self.manifest = manifest
        return manifest

    def outcome(self) -> JobOutcome:
        """The finished job as this session reports it (after :meth:`finish`, or for a job
        found done): already complete (every part counts as reused), resumed (it went on from
        parts or a state an earlier session left) or complete; the command reads its own
        figures from the outcome's manifest."""
        if self.manifest is None:
            raise InternalError(f"{self.path}: the {self.noun} has no outcome before it is finished")
        total = len(self.manifest["parts"])
        if self.state is JobState.DONE:
            status, reused = JobStatus.ALREADY_COMPLETE, total
        else:
            went_on = self.chunks_reused > 0 or self.took_up_state
            status, reused = (JobStatus.RESUMED if went_on else JobStatus.COMPLETE), self.chunks_reused
        return JobOutcome(
            where=self.path, status=status, parts_total=total, parts_reused=reused, manifest=self.manifest
        )

    # ------------------------------------------------------------ saved state

    def saved_state(self, name: str) -> dict[str, Any] | None:
        """The sealed state ``name`` an earlier session of this unfinished job saved
        (:meth:`save_state`; None: none, or a new job); one of another identity is refused
        as damaged. A job that goes on from it ends resumed (:meth:`outcome`)."""
        if self.state is not JobState.RESUME or not self.loc.is_file(name):
            return None
        state = read_manifest(self.loc, name)
        if state.get("identity") != self.identity:
            raise DamagedRunError(f"{self.loc.url(name)}: not this {self.noun}'s state (another identity)")
        self.took_up_state = True
        return state

    def save_state(self, name: str, state: Mapping[str, Any]) -> None:
        """Save ``state`` (with the job's identity) as the sealed file ``name``, written whole,
        for a later session to go on from (:meth:`saved_state`)."""
        body = {k: v for k, v in state.items() if k != SEAL}
        body["identity"] = self.identity
        self.check_lease()
        write_json(self.loc, name, {**body, SEAL: seal_of(body)})

    def unfinish(self) -> None:
        """Make a finished job unfinished again (its manifest removed, its parts kept), before
        replacing its result: ``boggle optimize`` keeps the old result until the new is ready."""
        self.loc.remove(MANIFEST)
        self.manifest = None
        self.state = JobState.RESUME
