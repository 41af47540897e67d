"""Side files packed for the engines that read a run folder: a run's manifest, record, rejects,
vocabulary and part records are each kept in a Parquet file of **no rows** with the run's own
board schema, the file's bytes in its key-value metadata.

Why: polars (``scan_parquet(RUN)``, ``read_parquet(RUN)``) reads every non-empty file below a
folder, hidden ones included, and refuses a folder whose files differ in extension; DuckDB's
``RUN/**/*.parquet`` reads every Parquet file below it. A side file that is itself an empty
table of the run's schema adds no rows and no columns to any of them, and pandas and
``pyarrow.dataset`` skip it by its ``_`` name as they always have. So a run folder (and a folder
of nightly runs) reads as it is, with no option, in every engine (docs/reference/formats.md).

The store names side files as before (``_SUCCESS``, ``_parts/_part-00000.json``); a packed
folder keeps each as that name plus :data:`SUFFIX` (``_SUCCESS.parquet``), and
:class:`pipeline.store._location.Location` packs and unpacks them, so what the store reads,
records and checks is what it always was: the manifest lists each side file's size and BLAKE2b
as it is on disk (the container), and the manifest's seal is over its own JSON.

The payload is kept as UTF-8 text under :data:`TEXT_KEY` when it is text (JSON, CSV: readable
with ``duckdb -c "select * from parquet_kv_metadata('RUN/_SUCCESS.parquet')"``), else as base64
under :data:`BASE64_KEY` (gzip, npz): polars refuses metadata that is not UTF-8.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.errors import InternalError
from pipeline.store._schema import MANIFEST, RUN_RECORD

if TYPE_CHECKING:
    import pyarrow as pa

SUFFIX = ".parquet"
TEXT_KEY = b"boggle.side_file"
BASE64_KEY = b"boggle.side_file.base64"
# folders whose files are never packed: an object store's lease (only there while a job runs)
UNPACKED_FOLDERS = ("_lease",)
# a manifest or record is a few kB; a vocabulary a few MB: Arrow's default limit on one footer
# string (100 MB) is raised so a large rejects list still reads
_FOOTER_LIMIT = (1 << 31) - 1


def packable(name: str) -> bool:
    """Whether the store packs the file ``name`` (relative to the job directory) in a packed
    folder: every side file (its name starts with ``_``), never a part or a lease."""
    folder, _, base = name.rpartition("/")
    return base.startswith("_") and folder.split("/", 1)[0] not in UNPACKED_FOLDERS


def pack(payload: bytes, schema: pa.Schema) -> bytes:
    """``payload`` as a Parquet file of no rows with ``schema`` (the run's board schema)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        metadata = {TEXT_KEY: payload.decode("utf-8")}
    except UnicodeDecodeError:
        metadata = {BASE64_KEY: base64.b64encode(payload).decode("ascii")}
    # the columns as zero-length null arrays: Schema.empty_table imports pandas (150 MB in a
    # run's main process, which otherwise never needs it)
    bare = schema.remove_metadata()
    table = pa.Table.from_arrays([pa.nulls(0, f.type) for f in bare], schema=bare)
    sink = io.BytesIO()
    # the payload in the file's footer only: as the table's schema metadata it was kept twice,
    # again inside the serialized Arrow schema (base64 of base64: a 1M-board run's _parts/ took
    # 48.8 MB of its 278.9, 19.7 MB now), and parsed twice by every reader
    with pq.ParquetWriter(sink, bare, compression="zstd") as writer:
        writer.write_table(table)
        writer.add_key_value_metadata(metadata)
    return sink.getvalue()


def unpack(data: bytes) -> bytes:
    """The payload of a packed side file; a ValueError when ``data`` is not one (not Parquet,
    rows in it, or no payload)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        meta = pq.ParquetFile(
            pa.BufferReader(data),
            thrift_string_size_limit=_FOOTER_LIMIT,
            thrift_container_size_limit=_FOOTER_LIMIT,
        ).metadata
    except (OSError, pa.ArrowException) as exc:
        raise ValueError(f"not a packed side file ({str(exc).splitlines()[0][:80]})") from None
    kv = meta.metadata or {}
    if meta.num_rows != 0:
        raise ValueError(f"not a packed side file ({meta.num_rows} rows)")
    if TEXT_KEY in kv:
        return kv[TEXT_KEY]
    if BASE64_KEY in kv:
        try:
            return base64.b64decode(kv[BASE64_KEY], validate=True)
        except ValueError:
            raise ValueError("not a packed side file (its payload is not base64)") from None
    raise ValueError("not a packed side file (no payload)")


def packed_schema(data: bytes) -> pa.Schema:
    """The board schema a packed side file carries (to pack another file like it)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    return pq.read_schema(pa.BufferReader(data)).remove_metadata()


class UnpackError(ValueError):
    """A packed side file that does not unpack (damaged, or not one): its path and why."""

    def __init__(self, path: str, why: str):
        super().__init__(f"{path}: {why}")
        self.path, self.why = path, why


class PackedFolder:
    """The packing half of a job directory (:class:`pipeline.store._location.Location`, whose
    subclasses give the four primitives): in a packed folder (a run of schema 6 or later) every
    side file is kept as its name plus ``.parquet``; the methods here take the store's names as
    before and pack and unpack (sizes and checksums are of the files as they are on disk).
    Whether a folder is packed is found from it (its record or manifest) on first use, or set
    by the job that writes it (:meth:`use_packing`)."""

    packing: bool | None = None  # None: not known yet (found from the folder on first use)
    side_schema: pa.Schema | None = None  # the schema side files are packed with

    def _exists(self, name: str) -> bool:
        """Whether the file ``name`` (a name on disk, never mapped) is there."""
        raise NotImplementedError

    def _get(self, name: str) -> bytes:
        """The bytes of the file ``name`` as it is on disk."""
        raise NotImplementedError

    def _put(self, name: str, data: bytes) -> None:
        """Write the file ``name`` whole, as it is on disk."""
        raise NotImplementedError

    def url(self, name: str = "") -> str:
        raise NotImplementedError

    def packed(self) -> bool:
        """Whether this folder keeps its side files packed (found once: its record or
        manifest is there packed)."""
        if self.packing is None:
            self.packing = any(self._exists(m + SUFFIX) for m in (RUN_RECORD, MANIFEST))
        return self.packing

    def use_packing(self, schema: pa.Schema | None) -> None:
        """Keep this folder's side files packed with ``schema`` (None: the plain layout)."""
        self.packing = schema is not None
        self.side_schema = schema

    def physical(self, name: str) -> str:
        """The file the store's ``name`` is on disk (``_SUCCESS`` -> ``_SUCCESS.parquet`` in a
        packed folder)."""
        return name + SUFFIX if packable(name) and self.packed() else name

    def logical(self, name: str) -> str:
        """The store's name of the file ``name`` on disk (``physical`` undone)."""
        base = name.rpartition("/")[2]
        if base.startswith("_") and name.endswith(SUFFIX) and self.packed() and packable(name):
            return name[: -len(SUFFIX)]
        return name

    def _pack(self, name: str, data: bytes) -> bytes:
        if self.side_schema is None:  # a worker: the record, written first, carries the schema
            record = RUN_RECORD + SUFFIX
            if not self._exists(record):
                raise InternalError(f"{self.url(name)}: a packed side file without the run's schema")
            self.side_schema = packed_schema(self._get(record))
        return pack(data, self.side_schema)

    def _unpack(self, name: str, data: bytes) -> bytes:
        try:
            return unpack(data)
        except ValueError as exc:
            raise UnpackError(self.url(name), str(exc)) from None

    def is_file(self, name: str) -> bool:
        return self._exists(self.physical(name))

    def read_bytes(self, name: str) -> bytes:
        """The file's bytes (a packed side file's: unpacked)."""
        return self.payload(name, self.stored_bytes(name))

    def stored_bytes(self, name: str) -> bytes:
        """The file's bytes as they are on disk (a packed side file: packed), as its size and
        checksum are recorded."""
        return self._get(self.physical(name))

    def payload(self, name: str, stored: bytes) -> bytes:
        """What the file ``name`` holds, from its bytes on disk (:meth:`stored_bytes`)."""
        return self._unpack(name, stored) if self.physical(name) != name else stored

    def write_bytes(self, name: str, data: bytes) -> bytes:
        """Write a whole file so that a reader sees the old one or the new one, never a part;
        returns the bytes written (a packed side file's: packed)."""
        physical = self.physical(name)
        stored = self._pack(name, data) if physical != name else data
        self._put(physical, stored)
        return stored

    @contextmanager
    def packing_through(self, name: str, tmp: Path) -> Iterator[Path]:
        """A temp file ``tmp`` to write the side file ``name`` to; packed into place whole when
        the block ends, and removed."""
        try:
            yield tmp
            self.write_bytes(name, tmp.read_bytes())
        finally:
            tmp.unlink(missing_ok=True)
