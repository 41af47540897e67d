"""Running the field's C++ prover on our classes, for the benchmarks that set ours beside it.

The C++ prover is danvk/hybrid-boggle's ``python -m boggle.break_all`` (its pybind11 module),
built outside this repository by a development script into ``$ANCHOR_DIR`` (docs/development.md);
nothing in the product needs it. Class ids: ours is the bucket numbers as a mixed-radix number
with cell 0 most significant (:mod:`pipeline.best.prove._classes`); the C++'s ``--board_ids`` read
cell 0 as the least significant digit (:func:`cpp_ids`), its cell i at x = i // h, y = i % h of
a board of width w = rows and height h = cols, which is our row-major cell i on the transposed
grid (a symmetry of the board graph), with the buckets of each cell in the spec's order in both.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class Usage:
    cpu_s: float
    rss_mb: float
    found: int
    runs: int = 1  # processes measured (each paid the start-up)
    kernels: str = ""  # ours: which compiled kernels ran (pipeline.jit's mode)


def measure(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[Usage, str]:
    """Run ``cmd`` as a child: CPU time (user + system) from ``os.wait4``, peak RSS from
    ``/usr/bin/time``; (usage, its stdout). A failed child raises RuntimeError.

    A child's own ``ru_maxrss`` starts at this process's RSS when it is forked (Linux keeps the
    largest RSS of the memory the process had before ``exec``), so a 30 MB prover started from
    a 450 MB bench reports 450 MB. ``/usr/bin/time`` forks the prover from its own small
    process and reports the prover's peak alone (``%M``)."""
    with (
        tempfile.TemporaryFile("w+") as out,
        tempfile.TemporaryFile("w+") as err,
        tempfile.NamedTemporaryFile("r") as peak,
    ):
        proc = subprocess.Popen(
            ["/usr/bin/time", "-f", "%M", "-o", peak.name, *cmd], cwd=cwd, stdout=out, stderr=err, env=env
        )
        _, status, ru = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text, errors = out.read(), err.read()
        kilobytes = int(peak.read().split()[-1]) if proc.returncode == 0 else 0
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:4])} ... failed ({proc.returncode}): {errors.strip()[-800:]}")
    return Usage(ru.ru_utime + ru.ru_stime, kilobytes / 1024, -1), text


def cpp_ids(digits: list[list[int]], radices: list[int]) -> list[int]:
    """Our class digit tuples -> the C++'s board ids (cell 0 the least significant digit)."""
    out = []
    for d in digits:
        idx, place = 0, 1
        for v, k in zip(d, radices, strict=True):
            idx += v * place
            place *= k
        out.append(idx)
    return out


def anchor_built(anchor: Path) -> bool:
    """Whether ``anchor`` holds a built C++ prover (its venv and its compiled module)."""
    python = anchor / "venv" / "bin" / "python"
    return python.is_file() and any((anchor / "hybrid-boggle").glob("cpp_boggle*.so"))


def cpp_prove(
    anchor: Path,
    spec: str,
    threshold: int,
    shape: str,
    dictionary: str,
    board_ids: list[int],
    tmp: Path,
    switchover: int | None = None,
) -> Usage:
    """One run of the C++ prover on ``board_ids`` (the C++'s ids, :func:`cpp_ids`) of the
    recipe ``spec`` on ``shape`` at ``threshold``, ``dictionary`` a plain word-list file: its
    usage, ``found`` the boards >= threshold it reported (its "Found N breaking failure(s)").
    ``switchover``: the bound above which it lifts (its ``--switchover_score``; its default is
    1.7 x the best score, 6162 at T = 3625; its author's 4x4 runs used 5000)."""
    rows, cols = (int(x) for x in shape.split("x"))
    cmd = [
        str(anchor / "venv" / "bin" / "python"),
        "-m",
        "boggle.break_all",
        spec.replace("inner:", "center:"),
        str(threshold),
        "--size",
        f"{rows}{cols}",
        "--dictionary",
        dictionary,
        "--board_ids",
        ",".join(map(str, board_ids)),
        "--output_base",
        str(tmp / "cpp"),
        "--omit_times",
        *(("--switchover_score", str(switchover)) if switchover else ()),
    ]
    usage, text = measure(cmd, anchor / "hybrid-boggle")
    found = [ln for ln in text.splitlines() if ln.startswith("Found ") and "breaking failure" in ln]
    if not found:
        raise RuntimeError(f"no 'Found N breaking failure(s)' line from the C++ prover:\n{text[-800:]}")
    usage.found = int(found[-1].split()[1])
    return usage


# ---------------------------------------------------------------- the C++'s costs file


def cpp_costs(path: Path) -> dict[int, dict[str, Any]]:
    """The C++'s classes done so far in a ``cpp`` costs file, by our class id (a line cut short
    by a kill is ignored: that class is proved again)."""
    done: dict[int, dict[str, Any]] = {}
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            done[int(row["class_id"])] = row
    return done


def append_cost_line(path: Path, line: str | None) -> None:
    """Append ``line`` to ``path`` under an exclusive lock (runs on other shards may write the
    same file), first dropping a last line a kill cut short, so that it is proved again and the
    next line starts afresh (``None``: only that)."""
    import fcntl

    with path.open("a+b") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)  # released when the file is closed, or the process dies
        size = fh.seek(0, 2)
        if size:
            fh.seek(size - 1)
            if fh.read(1) != b"\n":
                fh.seek(0)
                fh.truncate(fh.read().rfind(b"\n") + 1)
        if line is not None:
            fh.write(line.encode("utf-8") + b"\n")  # "a" mode: at the end, whatever the position
