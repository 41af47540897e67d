"""Our kernel against the field's C++ solver, side by side: ``python -m benchmarks.perf_vs_cpp``.

The C++ solver is danvk/hybrid-boggle's ``cpp_boggle`` module, built outside this repository
(docs/development.md) into ``$ANCHOR_DIR``, default ``/tmp/anchor``: a ``venv``, the
``hybrid-boggle`` checkout and ``boards44.txt``. Both solve the same compact 4x4 boards with
the same word list in separate processes, alternating (ours, theirs, ours, ...) so that noise
from other work on the machine hits both alike; each side's rate is one timed pass over the
boards (ours collects word ids, theirs only scores). Prints every pair's rates and ratio, then
the medians against the target (>= 2.5x, aiming for 3x). When the anchor is not built it prints
one line saying so and exits 0.

``--before DIR`` also times another checkout of this project in every round, before ours
(say ``git archive COMMIT | tar -x -C DIR``), with this environment's Python: the rounds then
give the kernel's before and after against the same C++ runs, side by side. A checkout from
before the benchmarks left the package keeps its timer at ``pipeline.benches.perf``.
"""

from __future__ import annotations

import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from benchmarks._cli import AnchorDirOpt, DictionaryOpt, bench_app
from pipeline import settings
from pipeline.lexicon import plain_file

app = bench_app()

TARGET = 2.5
AIM = 3.0
OURS_RATE = re.compile(r"(\d+) boards in [\d.]+ s = ([\d,]+) boards/s")
OURS_TOTAL = re.compile(r"total score (\d+)")
THEIRS_RATE = re.compile(r"([\d.]+) bds/sec")
THEIRS_TOTAL = re.compile(r"total_score=(\d+)")


def _run(cmd: list[str], cwd: Path | None = None) -> str:
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    return done.stdout


def _perf_module(checkout: Path) -> str:
    """The timer of another checkout: ``benchmarks.perf``, or ``pipeline.benches.perf`` in one from
    before the benchmarks left the package."""
    return "benchmarks.perf" if (checkout / "benchmarks" / "perf.py").is_file() else "pipeline.benches.perf"


def _find(pattern: re.Pattern[str], text: str, what: str) -> re.Match[str]:
    m = pattern.search(text)
    if m is None:
        raise RuntimeError(f"no {what} in the output:\n{text}")
    return m


def _uniform_boards(path: Path, count: int, seed: int) -> None:
    import numpy as np

    # 'q' is the Qu cell for both solvers
    letters = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz", dtype=np.uint8)
    rows = letters[np.random.default_rng(seed).integers(0, 26, size=(count, 16))]
    path.write_text("\n".join(r.tobytes().decode() for r in rows) + "\n", encoding="ascii")


@app.command()
def main(
    dictionary: DictionaryOpt = "enable2k",
    anchor_dir: AnchorDirOpt = None,
    boards: Annotated[
        Path | None, typer.Option(help="Compact 4x4 boards (default ANCHOR_DIR/boards44.txt).")
    ] = None,
    pairs: Annotated[int, typer.Option(help="Alternating pairs of runs (the medians are reported).")] = 3,
    before: Annotated[
        Path | None,
        typer.Option(help="Another checkout of this project to time in every round too (before ours)."),
    ] = None,
) -> None:
    anchor = anchor_dir or settings.get().anchor_dir
    cpp_python = anchor / "venv" / "bin" / "python"
    repo = anchor / "hybrid-boggle"
    if not cpp_python.is_file() or not any(repo.glob("cpp_boggle*.so")):
        typer.echo(f"bench-vs-cpp skipped: no C++ anchor built in {anchor} (see docs/development.md)")
        raise typer.Exit(0)
    word_list = plain_file(dictionary)
    with tempfile.TemporaryDirectory() as tmp:
        board_file = boards or anchor / "boards44.txt"
        if not board_file.is_file():
            board_file = Path(tmp) / "boards44.txt"
            _uniform_boards(board_file, 300_000, seed=0)
        board_file = board_file.resolve()
        files = ["--dictionary", word_list]
        perf_args = ["--file", str(board_file), *files, "--rules", "boggle", "--repeat", "1"]
        ours_cmd = [sys.executable, "-m", "benchmarks.perf", *perf_args]
        before_cmd = [sys.executable, "-m", _perf_module(before), *perf_args] if before else []
        theirs_cmd = [
            str(cpp_python),
            "-m",
            "boggle.perf",
            "--size",
            "44",
            "--input_file",
            str(board_file),
            *files,
        ]
        ours_rates: list[float] = []
        theirs_rates: list[float] = []
        ratios: list[float] = []
        before_ratios: list[float] = []
        for i in range(max(1, pairs)):
            try:
                earlier = _run(before_cmd, cwd=before.resolve()) if before is not None else None
                ours = _run(ours_cmd)
                theirs = _run(theirs_cmd, cwd=repo)
            except RuntimeError as exc:
                typer.echo(f"bench-vs-cpp: {exc}", err=True)
                raise typer.Exit(1) from None
            n_boards = int(_find(OURS_RATE, ours, "rate").group(1))
            rate = float(_find(OURS_RATE, ours, "rate").group(2).replace(",", ""))
            their_rate = float(_find(THEIRS_RATE, theirs, "rate").group(1))
            ours_total = int(_find(OURS_TOTAL, ours, "total score").group(1))
            theirs_total = int(_find(THEIRS_TOTAL, theirs, "total score").group(1))
            totals = {ours_total, theirs_total}
            if earlier is not None:
                totals.add(int(_find(OURS_TOTAL, earlier, "total score").group(1)))
            if len(totals) > 1:
                typer.echo(f"bench-vs-cpp: the solvers disagree: total scores {sorted(totals)}", err=True)
                raise typer.Exit(1)
            ours_rates.append(rate)
            theirs_rates.append(their_rate)
            ratios.append(rate / their_rate)
            line = (
                f"pair {i + 1}: ours {rate:,.0f} boards/s, C++ {their_rate:,.0f} boards/s, "
                f"ratio {rate / their_rate:.2f}x (total score {ours_total} both)"
            )
            if earlier is not None:
                earlier_rate = float(_find(OURS_RATE, earlier, "rate").group(2).replace(",", ""))
                before_ratios.append(earlier_rate / their_rate)
                line += f"; before {earlier_rate:,.0f} boards/s, {earlier_rate / their_rate:.2f}x"
            typer.echo(line)
    ratio = statistics.median(ratios)
    ours_median, theirs_median = statistics.median(ours_rates), statistics.median(theirs_rates)
    typer.echo(
        f"{n_boards} boards, median of {len(ratios)} pairs: ours {ours_median:,.0f} boards/s "
        f"(word ids collected), C++ {theirs_median:,.0f} boards/s (score only); "
        f"ratio {ratio:.2f}x, target >= {TARGET}x ({ratio / TARGET:.2f} of target; aim {AIM}x)"
    )
    if before_ratios:
        typer.echo(
            f"before ({before}): median ratio {statistics.median(before_ratios):.2f}x on the same C++ runs"
        )


if __name__ == "__main__":
    app()
