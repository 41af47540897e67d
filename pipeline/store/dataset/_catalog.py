"""A catalog of the job directories under a folder or an object-store prefix: runs (``boggle
run``), proofs (``boggle prove``) and searches (``boggle optimize``).

Every kind of job directory is written through :class:`pipeline.store.JobDir`, so one reading
serves them all: a directory holding ``_SUCCESS`` (the sealed manifest) or ``_run.json`` (the
record written when the job started) is a job, its kind is the ``format`` either one names.

* :func:`find_jobs` lists them, each with a cheap check (the manifest's seal, the parts' sizes):
  ``finished``, ``unfinished`` (a record, no manifest yet) or ``damaged``;
* :func:`describe_job` gathers what one holds: provenance, config, counts, parts, state;
* :func:`verify_job` is the readers' full verification (every part's checksum) on demand;
* SQL over runs (``boggle runs query``) is :mod:`pipeline.store.dataset._query`'s.

Where a command takes runs, each may be a run folder, a folder holding runs (every job below
it: ``runs/nightly``) or a glob (``'runs/nightly/2026-12-*'``): :func:`expand` and
:func:`runs_below`.

>>> [(e.kind, e.state, e.count) for e in find_jobs("runs")]  # doctest: +SKIP
[('run', 'finished', 100000), ('proof', 'unfinished', 9856)]
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pipeline.errors import BoggleError, ConfigError, DamagedRunError
from pipeline.store import (
    MANIFEST,
    RUN_RECORD,
    Location,
    check_parts,
    committed_chunks,
    describe_problems,
    is_url,
    job_problems,
    listed_parts,
    location,
    part_tag,
    read_manifest,
    read_part_record,
)

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


def find_jobs(root: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> list[CatalogEntry]:
    """Every job directory at or below ``root`` (a folder or an object-store URL, a glob of
    them, or several), sorted by path; a job directory's own folders are not searched further.
    A ``root`` that does not exist is a :class:`~pipeline.errors.ConfigError` (exit 2)."""
    roots = [root] if isinstance(root, str | os.PathLike) else list(root)
    found: dict[str, int] = {}
    for spec in expand(roots, "ROOT"):
        found.update(_jobs_below(location(spec, "ROOT")))
    return [_entry(location(path), size) for path, size in sorted(found.items())]


GLOB_CHARS = "*?["


def expand(specs: Sequence[str | os.PathLike[str]], what: str = "RUN") -> list[str]:
    """Each of ``specs`` as it is, or the folders its glob matches (``runs/nightly/*``, sorted;
    a local path or an object-store URL); a glob that matches nothing is a ConfigError (exit 2)."""
    out: list[str] = []
    for spec in specs:
        text = str(spec)
        if not any(c in text for c in GLOB_CHARS):
            out.append(text)
            continue
        if is_url(text):
            from pipeline.urls import filesystem

            scheme = text.split("://", 1)[0].lower()
            found = [f"{scheme}://{m.strip('/')}" for m in filesystem(scheme).glob(text.split("://", 1)[1])]
        else:
            import glob

            found = [m for m in glob.glob(os.path.expanduser(text)) if os.path.isdir(m)]
        if not found:
            raise ConfigError(f"{what} {text!r}: the pattern matches no folder")
        out.extend(sorted(found))
    return list(dict.fromkeys(out))


def jobs_of(specs: Sequence[str | os.PathLike[str]], what: str = "RUN") -> list[str]:
    """The job directories ``specs`` name, in order: a job directory itself, or every job at or
    below a folder (its run, proof and search folders); globs expanded (:func:`expand`). A
    folder with no job at or below it is a ConfigError (exit 2)."""
    out: list[str] = []
    for spec in expand(specs, what):
        loc = location(spec, what)
        if _is_job(loc):
            out.append(spec)
            continue
        found = [path for path, _ in sorted(_jobs_below(loc))]
        if not found:
            raise ConfigError(f"{spec}: no run, proof or search at or below it")
        out.extend(found)
    return list(dict.fromkeys(out))


def runs_below(specs: Sequence[str | os.PathLike[str]]) -> tuple[list[str], list[str]]:
    """The finished runs ``specs`` name (:func:`jobs_of`), and notes on what was left out: an
    unfinished run, a proof or a search found below a folder (one named itself is an error:
    a BoggleError, exit 2). A damaged run is kept, for its reader to refuse it (exit 4)."""
    runs, notes = [], []
    named = {str(s) for s in expand(specs)}
    for path in jobs_of(specs):
        entry = _entry(location(path), 0)
        if entry.kind == "run" and entry.state != "unfinished":
            runs.append(path)
            continue
        why = f"an unfinished {entry.kind}" if entry.state == "unfinished" else f"a {entry.kind}, not a run"
        if path in named:
            if entry.kind == "run":
                raise BoggleError(f"{path}: unfinished (no _SUCCESS; re-run `boggle run` to finish it)")
            raise BoggleError(f"{path}: {why}")
        notes.append(f"{path}: {why}; left out")
    if not runs:
        raise BoggleError(f"no finished run in {', '.join(str(s) for s in specs)}")
    return runs, notes


def _is_job(loc: Location) -> bool:
    return loc.is_dir() and any(loc.is_file(m) for m in (MANIFEST, RUN_RECORD))


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
    for chunk in committed_chunks(loc):
        record = read_part_record(loc, chunk)
        rows += record.rows if record is not None else 0
    return rows


def design_key(identity: Any) -> str:
    """A run's design, from its identity (the manifest's ``identity``): the identity without
    what changes from night to night (the seed, the schedule's date), the schema version and
    the word list's path (its content hash names it), as canonical JSON. Nights of one
    scheduled job share it (the report's trend, the expectations' control limits)."""
    import json

    ident = json.loads(json.dumps(identity or {}, default=str))
    if not isinstance(ident, dict):
        return json.dumps(ident, sort_keys=True)
    ident.pop("schema_version", None)
    data = ident.get("data")
    boards = data.get("boards") if isinstance(data, dict) else None
    lexicon = data.get("lexicon") if isinstance(data, dict) else None
    for key in ("seed", "seed_date"):
        if isinstance(boards, dict):
            boards.pop(key, None)
    if isinstance(lexicon, dict):
        lexicon.pop("path", None)
    return json.dumps(ident, sort_keys=True)


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
        listed = listed_parts(doc, loc)
        rows = sum(i.rows for i in listed.values())
        parts = {"files": len(listed), "rows": rows, "bytes": sum(i.bytes for i in listed.values())}
    else:
        committed = committed_chunks(loc)
        records = [read_part_record(loc, c) for c in committed]
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
        n_parts = len(listed_parts(doc, loc))
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


def verify_jobs(specs: Sequence[str | os.PathLike[str]]) -> list[Verification]:
    """:func:`verify_job` of every job ``specs`` name (job folders, folders of jobs, globs:
    :func:`jobs_of`), in order."""
    return [verify_job(path) for path in jobs_of(specs)]
