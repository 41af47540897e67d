"""Part files: names, writing, the ``_parts/`` records (size, BLAKE2b) and verifying a part
before a run reuses it."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.errors import DamagedRunError
from pipeline.io import write_json_atomic
from pipeline.store.location import Location, location
from pipeline.store.schema import (
    COMPRESSION,
    FORMAT,
    MANIFEST,
    META_CONFIG,
    PART_RE,
    PARTS_DIR,
    STATISTICS_COLUMNS,
    dictionary_columns,
)

# ---------------------------------------------------------------- parts


def part_name(chunk: int) -> str:
    return f"part-{chunk:05d}.parquet"


def part_path(run_dir: Path | str | Location, chunk: int) -> Path:
    if isinstance(run_dir, Location):  # a local one (a URL makes no Path)
        return Path(run_dir.url(part_name(chunk)))
    return Path(run_dir) / part_name(chunk)


class ObjectPath(str):
    """The URL of a file or folder in an object store, with the few Path methods readers use
    (``name``, ``parent``, ``/``, ``resolve``, ``read_bytes``)."""

    @property
    def name(self) -> str:
        return self.rstrip("/").rsplit("/", 1)[-1]

    @property
    def parent(self) -> ObjectPath:
        return ObjectPath(self.rstrip("/").rsplit("/", 1)[0])

    def __truediv__(self, name: str) -> ObjectPath:
        return ObjectPath(f"{self.rstrip('/')}/{name}")

    def resolve(self) -> ObjectPath:
        return self

    def read_bytes(self) -> bytes:
        return location(str(self.parent)).read_bytes(self.name)


PartRef = Path | ObjectPath  # a part file: a local path, or an object's URL


def committed_chunks(run_dir: Path | str | Location) -> dict[int, PartRef]:
    """The chunks whose part file exists (and is therefore complete), by chunk number."""
    loc = location(run_dir)
    out: dict[int, PartRef] = {}
    if loc.local:
        folder = Path(loc.url())
        if not folder.is_dir():
            return out
        for p in folder.iterdir():
            m = PART_RE.match(p.name)
            if m:
                out[int(m.group(1))] = p
        return out
    for name in loc.names():
        m = PART_RE.match(name)
        if m:
            out[int(m.group(1))] = ObjectPath(loc.url(name))
    return out


def part_rows(path: Path | str) -> int:
    """Rows in a part file (from its footer; the data is not read)."""
    return int(pq.ParquetFile(path).metadata.num_rows)


def write_part(
    run_dir: Path | str | Location, chunk: int, table: pa.Table, metadata: Mapping[str, str] | None = None
) -> int:
    """Write ``table`` as the chunk's part (zstd), atomically (locally: temp file, fsync,
    rename; in an object store: a local temp file, then one upload); return its size in bytes."""
    return write_part_info(run_dir, chunk, table, metadata, digest=False).bytes


def write_part_info(
    run_dir: Path | str | Location,
    chunk: int,
    table: pa.Table,
    metadata: Mapping[str, str] | None = None,
    *,
    digest: bool = True,
) -> PartInfo:
    """:func:`write_part`, returning the part's record: its rows, size and (``digest``) the
    BLAKE2b of exactly the bytes committed, hashed from the temp file before it is renamed or
    uploaded. A worker sends this back, so the main process never reads the part again."""
    loc = location(run_dir)
    if metadata:
        merged = dict(table.schema.metadata or {})
        merged.update({k.encode(): v.encode() for k, v in metadata.items()})
        table = table.replace_schema_metadata(merged)
    with loc.writing(part_name(chunk)) as tmp:
        # Statistics only where a reader can prune on them: computing min/max over the words
        # list and board strings costs as much as compressing them.
        pq.write_table(
            table,
            tmp,
            compression=COMPRESSION,
            write_statistics=STATISTICS_COLUMNS,
            use_dictionary=dictionary_columns(table.schema),
        )
        size = tmp.stat().st_size
        checksum = file_blake2b(tmp) if digest else None
    return PartInfo(chunk, table.num_rows, size, checksum)


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass
class PartInfo:
    """One committed part as the manifest lists it."""

    chunk: int
    rows: int
    bytes: int
    blake2b: str | None = None

    @property
    def file(self) -> str:
        return part_name(self.chunk)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"file": self.file, "chunk": self.chunk, "rows": self.rows, "bytes": self.bytes}
        if self.blake2b is not None:
            out["blake2b"] = self.blake2b
        return out


# ---------------------------------------------------------------- part verification


def file_blake2b(path: Path | str) -> str:
    """BLAKE2b (128-bit) of a file's bytes, hex; streamed, so memory stays flat."""
    h = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def part_record_name(chunk: int) -> str:
    # "_" again on the file: polars' hidden_file_prefix is matched against file names only
    return f"{PARTS_DIR}/_{part_name(chunk).removesuffix('.parquet')}.json"


def part_record_path(run_dir: Path | str | Location, chunk: int) -> Path:
    if isinstance(run_dir, Location):
        return Path(run_dir.url(part_record_name(chunk)))
    return Path(run_dir) / part_record_name(chunk)


def json_bytes(data: Any) -> bytes:
    """JSON as :func:`pipeline.io.write_json_atomic` writes it."""
    return (json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False, default=str) + "\n").encode()


def write_json(loc: Location, name: str, data: Any) -> None:
    """A JSON file written whole (locally: temp, fsync, rename; remotely: one PUT)."""
    if loc.local:
        write_json_atomic(Path(loc.url(name)), data)
    else:
        loc.write_bytes(name, json_bytes(data))


def record_part(
    run_dir: Path | str | Location, chunk: int, rows: int, written: PartInfo | None = None
) -> PartInfo:
    """Record a committed part's size and checksum (atomically, fsynced) so a re-run can tell
    it from a part that was damaged, truncated or copied in since. ``written``: the record its
    writer sent back (:func:`write_part_info`), taken once its size matches the committed
    file's (a stat, or a HEAD in an object store); without it the part is read and hashed."""
    loc = location(run_dir)
    name = part_name(chunk)
    size = loc.size(name)
    if written is not None and written.blake2b is not None and written.bytes == size and written.rows == rows:
        info = PartInfo(chunk, rows, size, written.blake2b)
    else:
        info = PartInfo(chunk, rows, size, loc.blake2b(name))
    write_json(loc, part_record_name(chunk), info.to_dict())
    return info


def read_part_record(run_dir: Path | str | Location, chunk: int) -> PartInfo | None:
    loc = location(run_dir)
    try:
        d = json.loads(loc.read_bytes(part_record_name(chunk)).decode("utf-8"))
        info = PartInfo(int(d["chunk"]), int(d["rows"]), int(d["bytes"]), d["blake2b"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    # a record without a checksum (or of another chunk) vouches for nothing: the part is redone
    return info if info.chunk == chunk and _is_digest(info.blake2b) else None


def part_problem(
    path: Path | str, record: PartInfo | None, config: str | None, loc: Location | None = None
) -> str | None:
    """Why the part at ``path`` cannot be reused (None: it can): no record of it, a size or
    checksum other than recorded, an unreadable footer, or a ``boggle.config`` other than
    ``config`` (the job's, as :func:`parquet_metadata` writes it; None: not checked).
    ``loc``: the job directory ``path`` is in, when it is not a local one."""
    if record is None:
        return "no record of it being committed by this run"
    if loc is None or loc.local:
        loc = location(Path(path).parent)
    name = part_name(record.chunk) if not loc.local else Path(path).name
    size = loc.size(name)
    if size != record.bytes:
        return f"{size:,} bytes, {record.bytes:,} recorded (truncated or replaced)"
    if not _is_digest(record.blake2b):
        return "no checksum recorded for it"
    if loc.blake2b(name) != record.blake2b:
        return "checksum differs from the one recorded (damaged or replaced)"
    if loc.local:
        return footer_problem(path, record, config)
    with loc.open(name) as fh:
        return footer_problem(fh, record, config)


def footer_problem(source: Any, record: PartInfo, config: str | None) -> str | None:
    """What is wrong with a part's Parquet footer (``source``: a path or an open file): not
    readable, a ``boggle.config`` other than ``config`` (None: not checked), or another row
    count than recorded; None when nothing is."""
    try:
        meta = pq.read_metadata(source)
    except (OSError, pa.ArrowException) as exc:
        return f"unreadable Parquet ({str(exc).splitlines()[0][:80]})"
    kv = meta.metadata or {}
    if config is not None and kv.get(META_CONFIG.encode(), b"").decode(errors="replace") != config:
        return "written by a run with another config"
    if meta.num_rows != record.rows:
        return f"{meta.num_rows} rows, {record.rows} recorded"
    return None


def read_part(loc: Location, chunk: int) -> pa.Table:
    """The committed part of ``chunk`` in the job directory ``loc`` (verify it first)."""
    if loc.local:
        return pq.read_table(part_path(loc.url(), chunk))
    with loc.open(part_name(chunk)) as fh:
        return pq.read_table(fh)


def discard_part(run_dir: Path | str | Location, chunk: int) -> None:
    """Remove a part and its record (call with the lock held)."""
    loc = location(run_dir)
    loc.remove(part_name(chunk))
    loc.remove(part_record_name(chunk))


# ---------------------------------------------------------------- sealed manifests

SEAL = "seal"  # the manifest's checksum of its own content (every other key)


def seal_of(manifest: Mapping[str, Any]) -> str:
    """BLAKE2b of the manifest's content without its seal, in a canonical JSON form (so the
    seal does not depend on how the file was indented)."""
    body = {k: v for k, v in manifest.items() if k != SEAL}
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def read_manifest(path: Path | str, loc: Location | None = None) -> dict[str, Any]:
    """A manifest whose seal (when it has one) matches its content; a DamagedRunError naming
    the file otherwise (unreadable, not JSON, or changed since it was written). ``loc``: the
    job directory (``path`` then names the file in it) when it is not a local one."""
    try:
        raw = loc.read_bytes(str(path)) if loc is not None else Path(path).read_bytes()
        if loc is not None:
            path = loc.url(str(path))
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise DamagedRunError(f"{path}: unreadable manifest (not valid JSON)") from None
    except OSError as exc:
        raise DamagedRunError(f"{path}: cannot read the manifest: {exc.strerror or exc}") from None
    if not isinstance(data, dict):
        raise DamagedRunError(f"{path}: unreadable manifest (not a JSON object)")
    if not isinstance(data.get(SEAL), str):
        # every writer seals what it writes: a missing or null seal is damage, never an old format
        raise DamagedRunError(f"{path}: the manifest has no seal (its checksum); refused as damaged")
    if data[SEAL] != seal_of(data):
        raise DamagedRunError(f"{path}: the manifest was changed after it was written (its seal differs)")
    return data


def file_entry(path: Path | str, loc: Location | None = None) -> dict[str, Any]:
    if loc is not None:
        return {"bytes": loc.size(str(path)), "blake2b": loc.blake2b(str(path))}
    path = Path(path)
    return {"bytes": path.stat().st_size, "blake2b": file_blake2b(path)}


def listed_parts(manifest: Mapping[str, Any], where: Path | str | Location) -> dict[int, PartInfo]:
    """The manifest's parts by chunk, each name checked to be the chunk's own part file in the
    job directory itself (a manifest never points outside it)."""
    out: dict[int, PartInfo] = {}
    try:
        for p in manifest.get("parts", []):
            chunk = int(p["chunk"])
            if p.get("file") != part_name(chunk) or chunk < 0:
                raise DamagedRunError(
                    f"{where}: the manifest lists {str(p.get('file'))[:80]!r} for chunk {chunk}; "
                    "part files must be the job directory's own part-NNNNN.parquet"
                )
            digest = p.get("blake2b")
            if not _is_digest(digest):
                raise DamagedRunError(
                    f"{where}: the manifest's entry for {p.get('file')} has no checksum; refused as damaged"
                )
            if chunk in out:
                raise DamagedRunError(f"{where}: the manifest lists chunk {chunk} twice")
            out[chunk] = PartInfo(chunk, int(p["rows"]), int(p["bytes"]), digest)
    except (KeyError, TypeError, ValueError):
        raise DamagedRunError(f"{where}: the manifest's parts list is malformed") from None
    return out


def _is_digest(value: Any) -> bool:
    """A BLAKE2b-128 as the writers record it: 32 lowercase hex digits."""
    return isinstance(value, str) and len(value) == 32 and all(c in "0123456789abcdef" for c in value)


def side_file_problems(job_dir: Path | Location, manifest: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(file, problem) for each side file the manifest lists (rejects, boards table) that is
    missing or differs from its recorded size and checksum."""
    loc = location(job_dir)
    out: list[tuple[str, str]] = []
    files = manifest.get("files") or {}
    if not isinstance(files, dict):
        return [("files", "malformed entry in the manifest")]
    for name, entry in sorted(files.items()):
        if "/" in name or "\\" in name or name in ("", ".", "..") or not name.startswith("_"):
            out.append((name, "not a side file of this job directory"))
            continue
        if not loc.is_file(name):
            out.append((name, "missing"))
        elif loc.size(name) != entry.get("bytes"):
            out.append((name, f"{loc.size(name):,} bytes, {entry.get('bytes')} recorded"))
        elif loc.blake2b(name) != entry.get("blake2b"):
            out.append((name, "checksum differs from the one recorded (damaged or replaced)"))
    return out


def finished_problems(
    job_dir: Path | Location, manifest: Mapping[str, Any], tag: str | None, *, checksums: bool = True
) -> list[tuple[str, str]]:
    """(file, problem) for every part and side file of a finished job that is missing,
    damaged, foreign (``tag``: the config each part must embed; None skips that check), or
    present but not listed. ``checksums=False`` compares the parts' sizes only (nothing is
    read but the listings and the side files)."""
    from concurrent.futures import ThreadPoolExecutor

    loc = location(job_dir)
    listed = listed_parts(manifest, loc)
    present = committed_chunks(loc)

    def check(chunk: int) -> str | None:
        path, info = present.get(chunk), listed[chunk]
        if path is None:
            return "missing"
        if not checksums:
            size = loc.size(info.file)
            return None if size == info.bytes else f"{size:,} bytes, {info.bytes:,} recorded"
        return part_problem(path, info, tag, loc)

    # hashlib releases the GIL while it hashes a block, so the parts are checked on every core
    chunks = sorted(listed)
    with ThreadPoolExecutor(max_workers=min(len(chunks), os.cpu_count() or 1) or 1) as pool:
        found = list(pool.map(check, chunks))
    out = [(part_name(k), problem) for k, problem in zip(chunks, found, strict=True) if problem is not None]
    out += [(part_name(k), "not part of the finished job") for k in sorted(set(present) - set(listed))]
    return out + side_file_problems(job_dir, manifest)


def describe_problems(problems: list[tuple[str, str]]) -> str:
    shown = "; ".join(f"{name}: {why}" for name, why in problems[:3])
    return shown + (f"; and {len(problems) - 3} more" if len(problems) > 3 else "")


# ---------------------------------------------------------------- one verdict on a finished job

#: the formats of the three kinds of job (pipeline.store.schema.FORMAT is the run's)
PROVE_FORMAT = "boggle-prove"
OPTIMIZE_FORMAT = "boggle-optimize"


def part_tag(fmt: str, identity: Mapping[str, Any]) -> str:
    """What every part of a job embeds as its ``boggle.config`` (its identity): the data config
    of a run, the whole identity of a proof or a search. Writers and readers both take it from
    here, so a reader can check a part's identity against the manifest's."""
    if fmt == PROVE_FORMAT:
        return json.dumps(identity, sort_keys=True)
    body = identity["data"] if fmt == FORMAT else identity
    return json.dumps(body, sort_keys=True, ensure_ascii=False, default=str)


def count_problems(manifest: Mapping[str, Any], listed: Mapping[int, PartInfo]) -> list[tuple[str, str]]:
    """(file, problem) where the manifest's counts disagree with its parts: chunks not numbered
    0..n-1, rows that do not add up to the recorded count, fewer chunks than the config makes.
    Catches a part dropped together with its manifest entry, or counts edited, then resealed."""
    out: list[tuple[str, str]] = []
    chunks = sorted(listed)
    if chunks != list(range(len(chunks))):
        gaps = sorted(set(range(chunks[-1] + 1)) - set(chunks))[:5]
        out.append((MANIFEST, f"the parts list skips chunk(s) {', '.join(map(str, gaps))}"))
    rows = sum(info.rows for info in listed.values())
    fmt, identity = manifest.get("format"), manifest.get("identity")
    try:
        if fmt == FORMAT:
            counts = manifest["counts"]
            if counts["boards"] != rows:
                out.append((MANIFEST, f"records {counts['boards']} boards, its parts hold {rows:,}"))
            boards = identity["data"]["boards"]  # type: ignore[index]
            if boards["source"] == "generate":
                want, size = int(boards["count"]), int(boards["chunk_size"])
                if rows != want or len(chunks) != -(-want // size):
                    out.append(
                        (
                            MANIFEST,
                            f"the config makes {want:,} boards in {-(-want // size)} parts; "
                            f"listed: {rows:,} in {len(chunks)}",
                        )
                    )
            elif counts["input_rows"] != counts["boards"] + counts["rejected"]:
                out.append((MANIFEST, "its input rows are not its boards plus its rejected rows"))
        elif fmt == PROVE_FORMAT:
            total, size = int(manifest["classes_total"]), int(identity["chunk_size"])  # type: ignore[index]
            if rows != total or len(chunks) != -(-total // size):
                out.append(
                    (
                        MANIFEST,
                        f"records {total:,} classes in {-(-total // size)} parts; "
                        f"listed: {rows:,} in {len(chunks)}",
                    )
                )
    except (KeyError, TypeError, ValueError):
        out.append((MANIFEST, "its counts are missing or malformed"))
    return out


def job_problems(
    job_dir: Path | Location, manifest: Mapping[str, Any], *, checksums: bool = True
) -> list[tuple[str, str]]:
    """The one verdict on a finished job (run, proof or search), used by every reader, re-run
    and status: (file, problem) for every part or side file that is missing, damaged, foreign
    (its embedded identity is not the manifest's) or unlisted, and every count that does not
    add up. The manifest itself was checked (seal) by :func:`read_manifest`. Empty: intact."""
    fmt, identity = manifest.get("format"), manifest.get("identity")
    if not isinstance(fmt, str) or not isinstance(identity, Mapping):
        return [(MANIFEST, "no format or identity recorded")]
    try:
        tag = part_tag(fmt, identity)
    except (KeyError, TypeError):
        return [(MANIFEST, "its identity is malformed")]
    listed = listed_parts(manifest, job_dir)
    return finished_problems(job_dir, manifest, tag, checksums=checksums) + count_problems(manifest, listed)


def job_digest(manifest: Mapping[str, Any]) -> str:
    """The whole job's root hash, to publish beside it: BLAKE2b-256 of its sealed manifest in
    canonical JSON. The manifest lists every part's and side file's size and BLAKE2b, so a job
    that verifies against its manifest and whose manifest gives this digest is the job that was
    published, byte for byte (docs/methods/integrity.md)."""
    text = json.dumps(manifest, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return "blake2b-256:" + hashlib.blake2b(text.encode(), digest_size=32).hexdigest()


def check_digest(manifest: Mapping[str, Any], expected: str | Iterable[str] | None, where: object) -> None:
    """A DamagedRunError unless the job's digest is ``expected`` (or one of several); None: no
    pin. The prefix ``blake2b-256:`` may be left out of an expected digest."""
    if expected is None:
        return
    wanted = {expected} if isinstance(expected, str) else set(expected)
    wanted = {w if w.startswith("blake2b-256:") else f"blake2b-256:{w}" for w in wanted}
    got = job_digest(manifest)
    if got not in wanted:
        raise DamagedRunError(
            f"{where}: its digest is {got}, not the one expected; this is not the published job"
        )
