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
:class:`pipeline.store.location.Location` packs and unpacks them, so what the store reads,
records and checks is what it always was: the manifest lists each side file's size and BLAKE2b
as it is on disk (the container), and the manifest's seal is over its own JSON.

The payload is kept as UTF-8 text under :data:`TEXT_KEY` when it is text (JSON, CSV: readable
with ``duckdb -c "select * from parquet_kv_metadata('RUN/_SUCCESS.parquet')"``), else as base64
under :data:`BASE64_KEY` (gzip, npz): polars refuses metadata that is not UTF-8.
"""

from __future__ import annotations

import base64
import io
from typing import TYPE_CHECKING

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
    import pyarrow.parquet as pq

    try:
        metadata = {TEXT_KEY: payload.decode("utf-8")}
    except UnicodeDecodeError:
        metadata = {BASE64_KEY: base64.b64encode(payload).decode("ascii")}
    table = schema.remove_metadata().empty_table().replace_schema_metadata(metadata)
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd")
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
