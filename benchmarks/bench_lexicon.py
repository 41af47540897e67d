"""Big-lexicon benchmark: ``python -m benchmarks.bench_lexicon [--dictionary tanglet:pl]``.

Each figure comes from a fresh process with an empty lexicon cache (a temporary
``BOGGLE_CACHE_DIR``) and is printed beside its target and ratio (figure / target; below 1 is
within target):

* cold compile: ``boggle words`` style compile of the list for its compact alphabet, wall time
  and peak RSS of the process;
* the CLI says it is compiling before it starts: the first line ``boggle solve`` writes with a
  cold cache, and how long after the start it came;
* a ``boggle run`` of ``--count`` boards rolled from the language's own dice, solved with the
  list (2 processes): the largest resident set of any one process (sampled every 0.1 s).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Annotated

import typer

from benchmarks._cli import DictionaryOpt, bench_app

app = bench_app()

COMPILE_S = 10.0
COMPILE_MB = 800.0
NOTE_S = 2.0
RUN_MB = 1000.0


def _peak_rss_mb(cmd: list[str], env: dict[str, str]) -> tuple[float, float, str, str, float | None]:
    """Run cmd; return (wall s, largest RSS of any process in its tree in MB, stdout, stderr,
    seconds until the first stderr line or None)."""
    import psutil

    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = 0
    first_err: list[float] = []
    err_lines: list[str] = []

    def read_err() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            if not first_err:
                first_err.append(time.perf_counter() - t0)
            err_lines.append(line)

    reader = threading.Thread(target=read_err, daemon=True)
    reader.start()
    root = psutil.Process(proc.pid)
    while proc.poll() is None:
        try:
            procs = [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            break
        for p in procs:
            with contextlib.suppress(psutil.NoSuchProcess):
                peak = max(peak, p.memory_info().rss)
        time.sleep(0.1)
    assert proc.stdout is not None
    out = proc.stdout.read()
    proc.wait()
    reader.join()
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        typer.echo(
            f"bench-lexicon: {' '.join(cmd)} failed ({proc.returncode}): {''.join(err_lines)[-500:]}",
            err=True,
        )
        raise typer.Exit(1)
    return wall, peak / 1e6, out, "".join(err_lines), first_err[0] if first_err else None


def _line(figure: str, value: float, unit: str, target: float) -> None:
    typer.echo(f"{figure}: {value:,.1f} {unit}, target < {target:,.0f} {unit}, ratio {value / target:.2f}")


@app.command()
def main(
    dictionary: DictionaryOpt = "tanglet:pl",
    count: Annotated[int, typer.Option(help="Boards for the batch run.")] = 10_000,
    jobs: Annotated[int, typer.Option(help="Worker processes for the batch run.")] = 2,
) -> None:
    boggle = str(Path(sys.executable).with_name("boggle"))
    dice = dictionary if dictionary.startswith("tanglet:") else "new"
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "BOGGLE_CACHE_DIR": str(Path(tmp) / "cache-compile")}  # child-env: a fresh cache
        compile_code = (
            "import sys; from pipeline.lexicon import compile_for_boards; "
            "from pipeline.rules import get_rules; "
            "lex = compile_for_boards(sys.argv[1], get_rules('boggle')); print(lex.n_words, lex.trie.n_nodes)"
        )
        wall, peak, out, _, _ = _peak_rss_mb([sys.executable, "-c", compile_code, dictionary], env)
        # the process's own start-up (imports) is in the wall time too: a fair upper bound
        n_words, n_nodes = out.split()
        typer.echo(f"lexicon {dictionary}: {int(n_words):,} words, {int(n_nodes):,} nodes")
        _line("cold compile, wall time", wall, "s", COMPILE_S)
        _line("cold compile, peak RSS", peak, "MB", COMPILE_MB)

        env = {**os.environ, "BOGGLE_CACHE_DIR": str(Path(tmp) / "cache-note")}  # child-env: a fresh cache
        _, _, _, err, first = _peak_rss_mb(
            [boggle, "solve", "abcdefghijklmnop", "--dictionary", dictionary], env
        )
        said = err.splitlines()[0] if err else ""
        ok = "compiling the word list" in said
        typer.echo(f"CLI says it is compiling first: {'yes' if ok else 'no'} ({said.strip()!r})")
        if first is not None:
            _line("  ... and said it after", first, "s", NOTE_S)

        env = {**os.environ, "BOGGLE_CACHE_DIR": str(Path(tmp) / "cache-run")}  # child-env: a fresh cache
        run_cmd = [
            boggle,
            "run",
            "configs/smoke.toml",
            "--count",
            str(count),
            "--chunk-size",
            "2500",
            "--dice",
            dice,
            "--dictionary",
            dictionary,
            "--n-jobs",
            str(jobs),
            "--out",
            str(Path(tmp) / "run"),
            "--quiet",
        ]
        wall, peak, _, _, _ = _peak_rss_mb(run_cmd, env)
        typer.echo(f"boggle run, {count:,} {dice} boards, {jobs} processes: {wall:.1f} s (compile included)")
        _line("  largest process, peak RSS", peak, "MB", RUN_MB)


if __name__ == "__main__":
    app()
