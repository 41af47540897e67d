"""What verifying a part costs: BLAKE2b (what the run store records) and CRC32 of a part file,
next to writing that part, measured alternately in one run so the ratios hold on a busy machine.

    python -m pipeline.benches.bench_checksum runs/default/part-00000.parquet
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import zlib
from pathlib import Path


def _crc32(path: Path) -> int:
    crc = 0
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            crc = zlib.crc32(block, crc)
    return crc


def main(argv: list[str] | None = None) -> int:
    import pyarrow.parquet as pq

    from pipeline import store
    from pipeline.store.parts import file_blake2b

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", type=Path, help="a part file of a run")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    table = pq.read_table(args.part)
    times: dict[str, list[float]] = {"write_part": [], "blake2b": [], "crc32": []}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            store.write_part(tmp, 0, table)
            times["write_part"].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            file_blake2b(args.part)
            times["blake2b"].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            _crc32(args.part)
            times["crc32"].append(time.perf_counter() - t0)
    size = args.part.stat().st_size
    write = min(times["write_part"])
    sys.stdout.write(f"{args.part}: {size:,} bytes, {table.num_rows:,} rows (best of {args.repeat})\n")
    for name, values in times.items():
        best = min(values)
        sys.stdout.write(
            f"{name:10s} {best * 1000:8.1f} ms  {size / best / 1e6:7.0f} MB/s  "
            f"{best / write:6.3f} x write_part\n"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
