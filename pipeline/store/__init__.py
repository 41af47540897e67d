"""The run store: Parquet parts, the ``_SUCCESS`` manifest, resume, and the run lock.

Layout of a run directory (the contract every later stage reads)::

    RUN_DIR/_run.json            the run's record, written first: resolved config + identity
    RUN_DIR/.lock                fcntl lock, there only while a run writes (or after a kill)
    RUN_DIR/_lease/lease-NNNNNNNN.json  in an object store instead of .lock: the lease generation
    RUN_DIR/part-00000.parquet   one part per chunk, zstd, written to a temp name and renamed
    RUN_DIR/part-00001.parquet   ...
    RUN_DIR/_rejects.csv         rejected input rows: source, line, raw, reason (ingest runs)
    RUN_DIR/_parts/_part-00000.json  size and BLAKE2b checksum of each part, recorded when the main
                                 process has the worker's result (a part without one is not trusted)
    RUN_DIR/_SUCCESS             the manifest (JSON), written last: a run is finished iff it exists;
                                 sealed with a checksum of its own content (``seal``)

Every file that is not board data starts with ``_`` or ``.`` (temp files are
``.<name>.<pid>.tmp``), the names pyarrow, pandas and Spark skip when they read a directory, so
``pandas.read_parquet(RUN_DIR)`` and ``pyarrow.dataset.dataset(RUN_DIR)`` read exactly the
boards. Polars reads every file of a directory unless told ``hidden_file_prefix=["_", "."]``;
the glob ``RUN_DIR/*.parquet`` works for every reader, DuckDB included.

A chunk is committed iff its part file exists (the rename is atomic) and its record in
``_parts/`` matches it (size, checksum) and its embedded ``boggle.config`` equals the run's; a
re-run after a crash reuses those chunks and recomputes the rest, naming every part it
distrusts. ``open_run`` is how other stages read a finished run; it refuses a run without ``_SUCCESS``.

One row per board; see :data:`COLUMNS` for every column (and :func:`columns_doc`). Word counts
and points by word length are fixed columns ``words_len_<L>`` / ``points_len_<L>`` for
L = ``min(3, min_length)`` .. 8 plus ``words_len_9plus`` / ``points_len_9plus``.

What the layers above use is exported here: the job lifecycle (:class:`JobDir`, :class:`Location`,
the :class:`JobOutcome` every command reports a finished job by),
the readers (:func:`open_run`, :func:`read_run_table`, :func:`read_rejects`, :class:`FinishedRun`),
the schema (:func:`board_schema`, :func:`results_table`) and the part records. The modules
(``_job``, ``_rundir``, ``_parts``, ...) are the store's own: the rest (the lock, the resume
bookkeeping) is reached from them by the store and its tests, never by another package.
"""

from pipeline.store._job import JobDir, manifest_mismatches
from pipeline.store._kind import RUN, JobKind, JobOutcome, JobState, JobStatus, job_kind, part_tag
from pipeline.store._location import Location, PartRef, is_url, job_path, location
from pipeline.store._manifest import (
    check_digest,
    describe_problems,
    file_entry,
    job_digest,
    job_problems,
    listed_parts,
    parse_digest,
    read_manifest,
)
from pipeline.store._output import (
    check_output_file,
    output_file,
    output_folder,
    output_location,
    refuse_inside_job,
    split_output,
)
from pipeline.store._parts import (
    PartInfo,
    bytes_blake2b,
    committed_chunks,
    part_name,
    read_part,
    read_part_record,
    stats_name,
    write_json,
    write_part,
    write_part_info,
    write_stats,
)
from pipeline.store._rundir import FinishedRun, open_run, read_rejects, read_run_table
from pipeline.store._schema import (
    COLUMNS,
    FORMAT,
    MANIFEST,
    MAX_PART,
    META_CONFIG,
    PART_RE,
    REJECT_COLUMNS,
    REJECTS,
    REQUIRED_COLUMNS,
    RUN_RECORD,
    SCHEMA_VERSION,
    VOCABULARY,
    board_schema,
    columns_doc,
    length_bins,
    parquet_metadata,
    results_table,
    run_id_of,
)
from pipeline.store._view import JobView, PartCheck, check_parts, inspect

#: The store's public surface: the job protocol, where jobs live, the readers, the manifest's
#: integrity checks, the run schema, and the part files and records the workers write. The rest
#: (the lock, seals, the bookkeeping of a resume) is the store's own, reached from its module by
#: the store and its tests.
__all__ = [
    "COLUMNS",
    "FORMAT",
    "MANIFEST",
    "MAX_PART",
    "META_CONFIG",
    "PART_RE",
    "REJECTS",
    "REJECT_COLUMNS",
    "REQUIRED_COLUMNS",
    "RUN",
    "RUN_RECORD",
    "SCHEMA_VERSION",
    "VOCABULARY",
    "FinishedRun",
    "JobDir",
    "JobKind",
    "JobOutcome",
    "JobState",
    "JobStatus",
    "JobView",
    "Location",
    "PartCheck",
    "PartInfo",
    "PartRef",
    "board_schema",
    "bytes_blake2b",
    "check_digest",
    "check_output_file",
    "check_parts",
    "columns_doc",
    "committed_chunks",
    "describe_problems",
    "file_entry",
    "inspect",
    "is_url",
    "job_digest",
    "job_kind",
    "job_path",
    "job_problems",
    "length_bins",
    "listed_parts",
    "location",
    "manifest_mismatches",
    "open_run",
    "output_file",
    "output_folder",
    "output_location",
    "parquet_metadata",
    "parse_digest",
    "part_name",
    "part_tag",
    "read_manifest",
    "read_part",
    "read_part_record",
    "read_rejects",
    "read_run_table",
    "refuse_inside_job",
    "results_table",
    "run_id_of",
    "split_output",
    "stats_name",
    "write_json",
    "write_part",
    "write_part_info",
    "write_stats",
]
