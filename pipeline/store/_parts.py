"""Part files: names, writing, the ``_parts/`` records (size, BLAKE2b) and verifying a part
before a job reuses it. The sealed manifest and the verdict on a finished job are
:mod:`pipeline.store._manifest`'s."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.store._location import Location, PartRef, file_blake2b, location
from pipeline.store._schema import (
    COMPRESSION,
    META_CONFIG,
    PART_RE,
    PARTS_DIR,
    STATISTICS_COLUMNS,
    dictionary_columns,
)

# ---------------------------------------------------------------- parts


def part_name(chunk: int) -> str:
    return f"part-{chunk:05d}.parquet"


def part_path(run_dir: Path | str | Location, chunk: int) -> PartRef:
    """The part file of ``chunk`` in the job directory ``run_dir``."""
    return location(run_dir).ref(part_name(chunk))


def committed_chunks(run_dir: Path | str | Location) -> dict[int, PartRef]:
    """The chunks whose part file exists (and is therefore complete), by chunk number."""
    loc = location(run_dir)
    out: dict[int, PartRef] = {}
    for name in loc.names():
        m = PART_RE.match(name)
        if m:
            out[int(m.group(1))] = loc.ref(name)
    return out


def stats_name(chunk: int) -> str:
    """The statistics file of a part (:mod:`pipeline.stats`), beside its record in ``_parts/``."""
    return f"{PARTS_DIR}/_{part_name(chunk).removesuffix('.parquet')}.stats.npz"


def bytes_blake2b(data: bytes) -> str:
    """The BLAKE2b-128 of ``data``, as the store records every file's."""
    import hashlib

    return hashlib.blake2b(data, digest_size=16).hexdigest()


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
    stats: bytes | None = None,
) -> PartInfo:
    """:func:`write_part`, returning the part's record: its rows, size and (``digest``) the
    BLAKE2b of exactly the bytes committed, hashed from the temp file before it is renamed or
    uploaded. A worker sends this back, so the main process never reads the part again.

    ``stats``: the part's statistics (:func:`pipeline.stats.to_bytes`), written after it
    (:func:`write_stats`): a part is reused only once its record is written, which names
    them."""
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
    if loc.side_schema is None:  # a packed folder packs the statistics with the part's schema
        loc.side_schema = table.schema
    stats_entry = write_stats(loc, chunk, stats) if stats is not None else None
    return PartInfo(chunk=chunk, rows=table.num_rows, bytes=size, blake2b=checksum, stats=stats_entry)


def write_stats(run_dir: Path | str | Location, chunk: int, data: bytes) -> dict[str, Any]:
    """Write a part's statistics file (atomically); its entry for the part's record: the size
    and checksum of the file as it is on disk (packed, in a packed folder)."""
    stored = location(run_dir).write_bytes(stats_name(chunk), data)
    return {"bytes": len(stored), "blake2b": bytes_blake2b(stored)}


@dataclass(frozen=True, kw_only=True)
class PartInfo:
    """One committed part as the manifest lists it."""

    chunk: int
    rows: int
    bytes: int
    blake2b: str | None = None
    # the part's statistics file (stats_name): {"bytes": size, "blake2b": checksum}; None for a
    # part written before statistics were recorded, or by a job of another kind
    stats: dict[str, Any] | None = None
    # a run's part: {"words": found, "score": points} over its boards (the manifest's counts
    # are their sums); None for a part recorded before they were
    totals: dict[str, int] | None = None

    @property
    def file(self) -> str:
        return part_name(self.chunk)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"file": self.file, "chunk": self.chunk, "rows": self.rows, "bytes": self.bytes}
        if self.blake2b is not None:
            out["blake2b"] = self.blake2b
        if self.stats is not None:
            out["stats"] = dict(self.stats)
        if self.totals is not None:
            out["totals"] = dict(self.totals)
        return out


def stats_entry(value: Any) -> dict[str, Any] | None:
    """A record's or manifest's ``stats`` entry, checked (a ValueError when malformed)."""
    if value is None:
        return None
    if (
        not isinstance(value, dict)
        or type(value.get("bytes")) is not int
        or not _is_digest(value.get("blake2b"))
    ):
        raise ValueError("malformed statistics entry")
    return {"bytes": value["bytes"], "blake2b": value["blake2b"]}


def totals_entry(value: Any) -> dict[str, int] | None:
    """A record's ``totals`` entry, checked (a ValueError when malformed)."""
    if value is None:
        return None
    if not isinstance(value, dict) or any(type(value.get(k)) is not int for k in ("words", "score")):
        raise ValueError("malformed totals entry")
    return {"words": value["words"], "score": value["score"]}


def stats_problem(loc: Location, info: PartInfo) -> str | None:
    """What is wrong with a part's statistics file against its record (None: nothing, or the
    part has none recorded)."""
    if info.stats is None:
        return None
    name = stats_name(info.chunk)
    if not loc.is_file(name):
        return "its statistics file is missing"
    if loc.size(name) != info.stats["bytes"]:
        return "its statistics file has another size than recorded"
    if loc.blake2b(name) != info.stats["blake2b"]:
        return "its statistics file differs from the one recorded (damaged or replaced)"
    return None


# ---------------------------------------------------------------- part verification


def part_record_name(chunk: int) -> str:
    # "_" again on the file: polars' hidden_file_prefix is matched against file names only
    return f"{PARTS_DIR}/_{part_name(chunk).removesuffix('.parquet')}.json"


def part_record_path(run_dir: Path | str | Location, chunk: int) -> PartRef:
    return location(run_dir).ref(part_record_name(chunk))


def json_bytes(data: Any) -> bytes:
    """JSON as :func:`pipeline.io.write_json_atomic` writes it."""
    return (json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False, default=str) + "\n").encode()


def write_json(loc: Location, name: str, data: Any) -> None:
    """A JSON file written whole (locally: temp, fsync, rename; remotely: one PUT)."""
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
    stats = written.stats if written is not None else None
    totals = written.totals if written is not None else None
    if written is not None and written.blake2b is not None and written.bytes == size and written.rows == rows:
        digest = written.blake2b
    else:
        digest = loc.blake2b(name)
    info = PartInfo(chunk=chunk, rows=rows, bytes=size, blake2b=digest, stats=stats, totals=totals)
    write_json(loc, part_record_name(chunk), info.to_dict())
    return info


def read_part_record(run_dir: Path | str | Location, chunk: int) -> PartInfo | None:
    loc = location(run_dir)
    try:
        d = json.loads(loc.read_bytes(part_record_name(chunk)).decode("utf-8"))
        info = PartInfo(
            chunk=int(d["chunk"]),
            rows=int(d["rows"]),
            bytes=int(d["bytes"]),
            blake2b=d["blake2b"],
            stats=stats_entry(d.get("stats")),
            totals=totals_entry(d.get("totals")),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
    # a record without a checksum (or of another chunk) vouches for nothing: the part is redone
    return info if info.chunk == chunk and _is_digest(info.blake2b) else None


def part_problem(loc: Location, record: PartInfo | None, config: str | None) -> str | None:
    """Why the part ``record`` describes, in the job directory ``loc``, cannot be reused (None:
    it can): no record of it, a size or checksum other than recorded, an unreadable footer, or
    a ``boggle.config`` other than ``config`` (the job's part tag; None: not checked)."""
    if record is None:
        return "no record of it being committed by this run"
    name = part_name(record.chunk)
    size = loc.size(name)
    if size != record.bytes:
        return f"{size:,} bytes, {record.bytes:,} recorded (truncated or replaced)"
    if not _is_digest(record.blake2b):
        return "no checksum recorded for it"
    if loc.blake2b(name) != record.blake2b:
        return "checksum differs from the one recorded (damaged or replaced)"
    with loc.open(name) as fh:
        return footer_problem(fh, record, config) or stats_problem(loc, record)


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
    # ParquetFile rather than read_table: that imports pandas (about 36 MB) on first use
    with loc.open(part_name(chunk)) as fh, pq.ParquetFile(fh) as pf:
        return pf.read()


def discard_part(run_dir: Path | str | Location, chunk: int) -> None:
    """Remove a part and its record (call with the lock held)."""
    loc = location(run_dir)
    loc.remove(part_name(chunk))
    loc.remove(part_record_name(chunk))
    loc.remove(stats_name(chunk))


def _is_digest(value: Any) -> bool:
    """A BLAKE2b-128 as the writers record it: 32 lowercase hex digits."""
    return isinstance(value, str) and len(value) == 32 and all(c in "0123456789abcdef" for c in value)


def is_digest(value: Any) -> bool:
    """Whether ``value`` is a checksum as the writers record one (manifest entries, records)."""
    return _is_digest(value)
