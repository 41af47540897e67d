"""The ``boggle`` command line: one small function per command, nothing else.

Each command parses its options, calls one library function, and turns the library's errors
into a one-line message and an exit code (see ``pipeline.errors``). Heavy modules (numpy,
numba, pyarrow) are imported inside the commands so ``boggle --help`` answers at once.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from pipeline.errors import EXIT_BAD_INPUT, EXIT_INTERNAL, BoggleError

app = typer.Typer(
    help="Generate, solve and analyse Boggle boards at scale.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

F = TypeVar("F", bound=Callable[..., Any])


def err(message: str) -> None:
    typer.echo(message, err=True)


def handle_errors(fn: F) -> F:
    """Map domain errors to a one-line message on stderr and their exit code."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except BoggleError as exc:
            err(f"error: {exc.one_line()}")
            raise typer.Exit(exc.exit_code) from None
        except FileNotFoundError as exc:
            err(f"error: {exc.filename}: file not found")
            raise typer.Exit(EXIT_BAD_INPUT) from None
        except (typer.Exit, typer.Abort):
            raise
        except BrokenPipeError:
            # the reader went away (`boggle words | head`): stop quietly, as Unix tools do
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
            raise typer.Exit(0) from None
        except KeyboardInterrupt:
            err("interrupted")
            raise typer.Exit(130) from None
        except OSError as exc:
            err(f"error: {exc}")
            raise typer.Exit(EXIT_INTERNAL) from None

    return wrapper  # type: ignore[return-value]


def announce_kernel_compile(module: str = "kernel") -> None:
    from pipeline.solve import kernel_needs_compile

    if kernel_needs_compile(module=module):
        err("note: compiling the solver kernel (first run on this machine, about 10-20 s)...")


# ------------------------------------------------------------------ options


class Algorithm(StrEnum):
    """The solvers of pipeline.solve.algorithms (kept here so --help needs no numpy)."""

    trie = "trie"
    dp = "dp"
    binary = "binary"


DictionaryOpt = Annotated[
    str | None,
    typer.Option(
        "--dictionary",
        "-d",
        help="Word list: a file (one word a line, optionally gzip) or tanglet:<lang>. "
        "Default: $BOGGLE_DICTIONARY, else tanglet:en.",
    ),
]
RulesOpt = Annotated[
    str | None,
    typer.Option(
        "--rules",
        "-r",
        help="Rule preset: boggle, big or superbig. Default: big for 5x5, superbig for 6x6, else boggle.",
    ),
]
MinLengthOpt = Annotated[
    int | None, typer.Option("--min-length", min=1, help="Override the minimum word length (letters).")
]
RevisitOpt = Annotated[
    bool | None,
    typer.Option("--revisit/--no-revisit", help="Let a word revisit cells (each step still moves)."),
]
ShapeOpt = Annotated[
    str | None, typer.Option("--shape", help="Board shape RxC for non-square compact boards.")
]


def _read_boards(boards: list[str], file: Path | None, shape: str | None) -> list[Any]:
    from pipeline.boards import parse_board_text, parse_compact, parse_shape
    from pipeline.io import read_text_input

    shp = parse_shape(shape) if shape else None
    out = []
    for i, text in enumerate(boards, start=1):
        try:
            out.append(parse_compact(text, shp))
        except BoggleError as exc:
            raise type(exc)(f"board argument {i}: {exc.message}") from None
    if file is not None:
        text, source = read_text_input(file, "board")
        out.extend(parse_board_text(text, source=source, shape=shp))
    if not out:
        raise BoggleError("no boards given: pass BOARD arguments or --file PATH")
    return out


def _resolve_rules(name: str | None, min_length: int | None, revisit: bool | None, boards: list[Any]) -> Any:
    from pipeline.rules import default_rules_for_shape, get_rules

    if name is None:
        name = default_rules_for_shape(boards[0].rows, boards[0].cols) if boards else "boggle"
    return get_rules(name, min_length=min_length, revisit=revisit)


def get_rules_for(name: str, min_length: int | None) -> Any:
    from pipeline.rules import get_rules

    return get_rules(name, min_length=min_length)


# ------------------------------------------------------------------ commands


@app.command()
@handle_errors
def solve(
    boards: Annotated[list[str] | None, typer.Argument(help="Compact boards, e.g. perslatgsineters.")] = None,
    file: Annotated[
        Path | None,
        typer.Option(
            "--file", "-f", help="Boards from a file (compact lines, grid text or algs4); - for stdin."
        ),
    ] = None,
    dictionary: DictionaryOpt = None,
    rules: RulesOpt = None,
    min_length: MinLengthOpt = None,
    revisit: RevisitOpt = None,
    shape: ShapeOpt = None,
    algorithm: Annotated[
        Algorithm,
        typer.Option("--algorithm", "-a", help="trie (default), dp (word-driven) or binary (binary search)."),
    ] = Algorithm.trie,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per board per line.")] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Report what the lexicon dropped.")
    ] = False,
) -> None:
    """Find every word on each board and score it.

    Example: boggle solve perslatgsineters --dictionary ../shared/data/enable2k.txt
    """
    from pipeline.boards import faces_of, format_compact, format_grid
    from pipeline.lexicon import compile_for_boards, default_dictionary
    from pipeline.solve.algorithms import solve_with

    parsed = _read_boards(boards or [], file, shape)
    rule_set = _resolve_rules(rules, min_length, revisit, parsed)
    lexicon = compile_for_boards(dictionary or default_dictionary(), rule_set, faces_of(parsed))
    if verbose:
        err(f"lexicon {lexicon.name}: {lexicon.report.summary()}")
    announce_kernel_compile({"trie": "kernel"}.get(algorithm.value, algorithm.value))
    for res in solve_with(algorithm.value, parsed, lexicon):
        if as_json:
            typer.echo(
                json.dumps(
                    {
                        "board": format_compact(res.board),
                        "rows": res.board.rows,
                        "cols": res.board.cols,
                        "rules": rule_set.name,
                        "score": res.score,
                        "n_words": res.n_words,
                        "longest_word": res.longest,
                        "dead_cells": res.dead_cells,
                        "words": res.words,
                    },
                    ensure_ascii=False,
                )
            )
            continue
        typer.echo(f"Board {format_compact(res.board)} ({res.board.rows}x{res.board.cols})")
        typer.echo(format_grid(res.board))
        typer.echo("")
        for word, pts in zip(res.words, res.points, strict=True):
            typer.echo(f"{word} {pts}")
        typer.echo(f"Found {res.n_words} words")
        typer.echo(f"Total score: {res.score}")
        typer.echo("")


@app.command()
@handle_errors
def lookup(
    words: Annotated[list[str], typer.Argument(help="Words to look up.")],
    dictionary: DictionaryOpt = None,
    rules: Annotated[
        str, typer.Option("--rules", "-r", help="Rule preset (sets the minimum length).")
    ] = "boggle",
    min_length: MinLengthOpt = None,
) -> None:
    """Say whether each WORD is a word, a prefix of a word, or neither in the lexicon.

    Example: boggle lookup quit qu qat --dictionary ../shared/data/enable2k.txt
    """
    from pipeline.lexicon import compile_for_boards, default_dictionary

    lexicon = compile_for_boards(dictionary or default_dictionary(), get_rules_for(rules, min_length))
    for w in words:
        typer.echo(f"{w} {lexicon.trie.lookup(w)}")


@app.command()
@handle_errors
def words(
    dictionary: DictionaryOpt = None,
    rules: Annotated[
        str, typer.Option("--rules", "-r", help="Rule preset (sets the minimum length).")
    ] = "boggle",
    min_length: MinLengthOpt = None,
    max_length: Annotated[int | None, typer.Option("--max-length", min=1, help="Longest word kept.")] = None,
    dice: Annotated[
        str | None, typer.Option("--dice", help="Keep only words this dice set's faces can spell.")
    ] = None,
) -> None:
    """Print the lexicon's playable words in order, after pruning the trie.

    Example: boggle words --dice new --max-length 4 --dictionary ../shared/data/enable2k.txt
    """
    from pipeline.lexicon import default_dictionary, playable_words

    rule_set = get_rules_for(rules, min_length)
    for word in playable_words(
        dictionary or default_dictionary(), rule_set, max_length=max_length, dice=dice
    ):
        typer.echo(word)


@app.command()
@handle_errors
def analyze(
    run_dirs: Annotated[
        list[Path], typer.Argument(metavar="RUN_DIR", help="Finished run directories (with _SUCCESS).")
    ],
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Report folder. Default: reports/<run> (or <run1>-vs-<run2>)."),
    ] = None,
    top: Annotated[int, typer.Option("--top", min=1, help="Top boards listed per run/source.")] = 20,
    top_words: Annotated[
        int, typer.Option("--top-words", min=1, help="Most frequent words listed per run/source.")
    ] = 50,
    threads: Annotated[
        int | None, typer.Option("--threads", min=1, help="DuckDB threads (default: all cores).")
    ] = None,
    memory_limit: Annotated[
        str | None,
        typer.Option("--memory-limit", help="DuckDB memory cap, e.g. 2GB (spills to disk beyond)."),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress messages.")] = False,
) -> None:
    """Analyse one or more finished runs: summary tables (Parquet + CSV), plots, report.html.

    Several runs are compared side by side (e.g. two dice sets). Prints the report's path.

    Example: boggle analyze runs/new runs/classic --out reports/dice
    """
    from rich.console import Console

    from pipeline.analyze import analyze_runs

    console = Console(stderr=True)

    def progress(message: str) -> None:
        if not quiet:
            console.print(f"[dim]analyze:[/dim] {message}")

    result = analyze_runs(
        [str(d) for d in run_dirs], out, top=top, top_words=top_words, threads=threads,
        memory_limit=memory_limit, progress=progress,
    )  # fmt: skip
    typer.echo(f"report: {result.report.resolve()}")


@app.command()
@handle_errors
def check(
    board_and_words: Annotated[
        list[str] | None,
        typer.Argument(metavar="BOARD WORD...", help="A compact board (q = Qu, . blank), then the words."),
    ] = None,
    contest: Annotated[
        str | None,
        typer.Option(
            "--contest",
            help="Contest input (case count, then per case board lines, word count, words); - for stdin.",
        ),
    ] = None,
    revisit: Annotated[
        bool, typer.Option("--revisit", help="Cells may be revisited (each step still moves to a neighbour).")
    ] = False,
    shape: ShapeOpt = None,
) -> None:
    """Say whether each word can be spelled on the board: WORD YES or WORD NO, one a line.

    In contest input letters are plain (Q is just Q); on a compact BOARD, q is the Qu cell.

    Example: boggle check perslatgsineters pertinent tsar --revisit
    """
    from pipeline.check import run_check

    for line in run_check(board_and_words or [], contest=contest, shape=shape, revisit=revisit):
        typer.echo(line)


@app.command()
@handle_errors
def queens(
    n: Annotated[int, typer.Argument(min=1, help="Board size: N queens on an N x N board.")],
    show: Annotated[
        bool, typer.Option("--show", help="Print every placement with its column/diagonal occupancy tables.")
    ] = False,
) -> None:
    """Count the N-queens solutions with the iterative search-tree (robot) traversal.

    Example: boggle queens 8 --show
    """
    from pipeline.queens import queens_report

    for line in queens_report(n, show=show):
        typer.echo(line)


def _run_progress_bar() -> tuple[Any, Callable[[Any], None]]:
    """A rich progress bar (boards done, boards/s, ETA) on stderr and the callback that feeds it;
    the bar appears with the first report (not for a run that has nothing to do)."""
    import time

    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(
        TextColumn("[bold]solving[/bold]"), BarColumn(),
        TextColumn("{task.fields[done]} boards"), TextColumn("{task.fields[rate]}"),
        TextColumn("{task.fields[eta]}"), TimeElapsedColumn(),
        console=Console(stderr=True), transient=False,
    )  # fmt: skip
    task = bar.add_task("run", total=None, done="0", rate="", eta="")
    t0 = time.perf_counter()
    reused_at_start: list[int] = []

    def update(p: Any) -> None:
        if not reused_at_start:
            reused_at_start.append(p.boards_reused)
            bar.start()
        elapsed = time.perf_counter() - t0
        fresh = p.boards_done - max(p.boards_reused, reused_at_start[0])
        rate = fresh / elapsed if elapsed > 0 and fresh > 0 else 0.0
        total = f"/{p.boards_total:,}" if p.boards_total is not None else ""
        eta = ""
        if p.boards_total is not None and rate > 0:
            eta = f"ETA {max(0.0, (p.boards_total - p.boards_done) / rate):.0f} s"
        bar.update(
            task, completed=p.boards_done, total=p.boards_total, done=f"{p.boards_done:,}{total}",
            rate=f"{rate:,.0f} boards/s" if rate else "", eta=eta,
        )  # fmt: skip

    return bar, update


@app.command()
@handle_errors
def run(
    config: Annotated[
        Path, typer.Argument(metavar="CONFIG.toml", help="Run config (TOML), e.g. configs/default.toml.")
    ],
    out: Annotated[str | None, typer.Option("--out", "-o", help="Run directory ([run] out).")] = None,
    n_jobs: Annotated[
        int | None, typer.Option("--n-jobs", "-j", help="Worker processes; -1 = all cores ([run] n_jobs).")
    ] = None,
    backend: Annotated[
        str | None, typer.Option("--backend", help="loky (default), threading or dask ([run] backend).")
    ] = None,
    scheduler: Annotated[
        str | None,
        typer.Option("--scheduler", help="Dask scheduler address, e.g. tcp://host:8786 ([run] scheduler)."),
    ] = None,
    count: Annotated[int | None, typer.Option("--count", help="Boards to generate ([boards] count).")] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Generator seed ([boards] seed).")] = None,
    dice: Annotated[
        str | None, typer.Option("--dice", help="Dice set, uniform, english, tanglet:<lang> ([boards] dice).")
    ] = None,
    shape: Annotated[str | None, typer.Option("--shape", help="Board shape RxC ([boards] shape).")] = None,
    chunk_size: Annotated[
        int | None, typer.Option("--chunk-size", help="Boards per chunk / part file ([boards] chunk_size).")
    ] = None,
    input_files: Annotated[
        list[str] | None,
        typer.Option("--input", "-i", help="Ingest these files ([boards] files; sets source = ingest)."),
    ] = None,
    dictionary: Annotated[
        str | None, typer.Option("--dictionary", "-d", help="Word list or tanglet:<lang> ([lexicon] path).")
    ] = None,
    rules: Annotated[str | None, typer.Option("--rules", "-r", help="Rule preset ([rules] name).")] = None,
    assignments: Annotated[
        list[str] | None,
        typer.Option("--set", help="Any config value as section.key=value (TOML value), repeatable."),
    ] = None,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace a different run already in the output directory.")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Run a batch job: generate or ingest boards, solve them in parallel, write Parquet.

    Re-running the same command resumes an interrupted run, or does nothing if it finished.
    Exit codes: 0 ok, 2 bad input or config, 3 finished with rejected rows (see rejects.csv),
    4 output directory busy or holding a different run.

    Example: boggle run configs/smoke.toml --out runs/smoke --n-jobs 2
    """
    from pipeline.errors import EXIT_REJECTED_ROWS
    from pipeline.runner import run_from_file

    overrides = {
        "run.out": out, "run.n_jobs": n_jobs, "run.backend": backend, "run.scheduler": scheduler,
        "boards.count": count, "boards.seed": seed, "boards.dice": dice, "boards.shape": shape,
        "boards.chunk_size": chunk_size, "lexicon.path": dictionary, "rules.name": rules,
        "boards.files": input_files or None, "boards.source": "ingest" if input_files else None,
    }  # fmt: skip
    sets = assignments or []
    if not quiet:
        announce_kernel_compile()
        bar, update = _run_progress_bar()
        try:
            summary = run_from_file(config, overrides, sets, overwrite=overwrite, progress=update)
        finally:
            if bar.live.is_started:
                bar.stop()
    else:
        summary = run_from_file(config, overrides, sets, overwrite=overwrite)
    if summary.status == "already complete":
        typer.echo(f"{summary.run_dir}: already complete ({summary.boards:,} boards); nothing to do")
    else:
        reused = f", {summary.chunks_reused} chunks reused" if summary.chunks_reused else ""
        typer.echo(
            f"{summary.run_dir}: {summary.boards:,} boards in {summary.chunks} parts{reused}; "
            f"{summary.boards_solved:,} solved in {summary.elapsed_s:.1f} s "
            f"({summary.boards_per_s:,.0f} boards/s)"
        )
    if summary.rejected:
        err(f"{summary.rejected:,} of {summary.input_rows:,} input rows rejected: see {summary.rejects_file}")
        raise typer.Exit(EXIT_REJECTED_ROWS)


@app.command()
@handle_errors
def generate(
    dice: Annotated[str, typer.Option("--dice", help="Dice set, uniform, english, tanglet:<lang>.")] = "new",
    count: Annotated[int, typer.Option("--count", "-n", min=0, help="Boards to generate.")] = 10,
    seed: Annotated[int, typer.Option("--seed", min=0, help="Seed (same seed, same boards).")] = 0,
    shape: ShapeOpt = None,
    chunk_size: Annotated[
        int | None,
        typer.Option("--chunk-size", min=1, help="Chunk size of the run to match (default as boggle run)."),
    ] = None,
) -> None:
    """Print random boards in compact notation, one a line (the boards `boggle run` would roll).

    Example: boggle generate --dice new --count 1000 --seed 42 > boards.txt
    """
    import os

    from pipeline.boards import parse_shape
    from pipeline.generate import generate_compact

    try:
        for block in generate_compact(dice, count, seed, parse_shape(shape) if shape else None, chunk_size):
            sys.stdout.write(block)
        sys.stdout.flush()
    except BrokenPipeError:  # e.g. `| head`: the reader left, which is fine
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _optimize_display(restarts: int) -> tuple[Any, Callable[[Any], None]]:
    """A live rich table on stderr (best score so far, one line per restart) and the callback
    that feeds it."""
    from rich.console import Console
    from rich.live import Live
    from rich.table import Table

    state: dict[int, Any] = {}
    best: list[Any] = [None]

    def render() -> Table:
        b = best[0]
        title = f"best so far: {b.best_score} {b.best_board}" if b is not None else "starting..."
        done = b.restarts_done if b is not None else 0
        table = Table(title=f"{title}   ({done}/{restarts} restarts done)", title_justify="left")
        for col in ("restart", "iteration", "best", "seconds", "boards/s", ""):
            table.add_column(col, justify="right")
        for r in sorted(state):
            p = state[r]
            rate = p.evaluations / p.elapsed if p.elapsed > 0 else 0.0
            table.add_row(
                str(r),
                f"{p.iteration:,}",
                str(p.restart_best),
                f"{p.elapsed:.1f}",
                f"{rate:,.0f}",
                "done" if p.event == "done" else "",
            )
        return table

    live = Live(render(), console=Console(stderr=True), refresh_per_second=4, transient=False)

    def update(p: Any) -> None:
        if not live.is_started:
            live.start()
        if state.get(p.restart) is None or state[p.restart].event != "done":
            state[p.restart] = p
        best[0] = p
        live.update(render())

    return live, update


@app.command()
@handle_errors
def optimize(
    dictionary: DictionaryOpt = None,
    shape: Annotated[str, typer.Option("--shape", help="Board shape RxC (at most 64 cells).")] = "4x4",
    dice: Annotated[
        str | None,
        typer.Option(
            "--dice", help="Only rollable boards of this dice set (new, classic, ...); default free letters."
        ),
    ] = None,
    rules: RulesOpt = None,
    min_length: MinLengthOpt = None,
    restarts: Annotated[int, typer.Option("--restarts", "-n", min=1, help="Independent searches.")] = 4,
    seed: Annotated[
        int, typer.Option("--seed", min=0, help="Seed (restart i: SeedSequence(seed).spawn(n)[i]).")
    ] = 0,
    strategy: Annotated[
        str, typer.Option("--strategy", help="anneal (simulated annealing) or hill (pool hill climbing).")
    ] = "anneal",
    objective: Annotated[
        str,
        typer.Option(
            "--objective", help="points, words (distinct words) or subset (points of --subset words)."
        ),
    ] = "points",
    subset: Annotated[
        str | None, typer.Option("--subset", help="Word list whose words alone score (--objective subset).")
    ] = None,
    iterations: Annotated[
        int | None,
        typer.Option("--iterations", min=1, help="Per restart: pool generations (hill) or moves (anneal)."),
    ] = None,
    time_limit: Annotated[
        float | None, typer.Option("--time-limit", help="Per restart, seconds (then not reproducible).")
    ] = None,
    target: Annotated[
        int | None, typer.Option("--target", help="Stop a restart once it reaches this score.")
    ] = None,
    pool_size: Annotated[
        int, typer.Option("--pool-size", min=1, help="Boards in the hill-climbing pool.")
    ] = 50,
    keep: Annotated[
        int, typer.Option("--keep", min=1, help="Best distinct boards to report and write.")
    ] = 10,
    t_start: Annotated[float, typer.Option("--t-start", help="Annealing: starting temperature.")] = 100.0,
    t_end: Annotated[float, typer.Option("--t-end", help="Annealing: final temperature of a cycle.")] = 20.0,
    cycle: Annotated[
        int, typer.Option("--cycle", min=1, help="Annealing: moves per cooling cycle.")
    ] = 80_000,
    n_jobs: Annotated[int, typer.Option("--n-jobs", "-j", help="Worker processes; -1 = all cores.")] = -1,
    out: Annotated[
        str, typer.Option("--out", "-o", help="Output directory (Parquet + _SUCCESS).")
    ] = "runs/optimize",
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace a different run already in the output directory.")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only the BEST line.")] = False,
) -> None:
    """Search for the highest-scoring boards (hill climbing or simulated annealing).

    Without --iterations or --time-limit each restart is one climb (hill) or one cooling
    cycle (anneal). Writes OUT/part-00000.parquet and OUT/_SUCCESS. The last line printed is
    `BEST <board> <score>`. Exit codes: 0 ok, 2 bad input, 4 output directory busy or
    holding a different run.

    Example: boggle optimize -d ../shared/data/enable2k.txt --restarts 4 --time-limit 120 --target 3625
    """
    from pipeline.boards import format_compact
    from pipeline.lexicon import default_dictionary
    from pipeline.optimize import OptimizeConfig, run_optimize

    cfg = OptimizeConfig(
        dictionary or default_dictionary(), shape=shape, dice=dice, rules=rules, min_length=min_length,
        strategy=strategy, objective=objective, subset=subset, restarts=restarts, seed=seed,
        iterations=iterations, time_limit=time_limit, target=target, pool_size=pool_size, keep=keep,
        t_start=t_start, t_end=t_end, cycle=cycle, n_jobs=n_jobs, out=out, overwrite=overwrite,
    )  # fmt: skip
    if quiet:
        res = run_optimize(cfg)
    else:
        announce_kernel_compile()
        live, update = _optimize_display(restarts)
        try:
            res = run_optimize(cfg, progress=update)
        finally:
            if live.is_started:
                live.stop()
                if not live.console.is_terminal:
                    live.console.line()  # a redirected Live leaves its last line open
        for r in res.restarts:
            reached = f", target after {r.target_s:.1f} s" if r.target_s is not None else ""
            err(
                f"restart {r.restart}: best {r.best_score} in {r.iterations:,} iterations, "
                f"{r.seconds:.1f} s ({r.stopped_by}{reached})"
            )
        for b in res.boards:
            typer.echo(f"{b.score}\t{format_compact(b.board)}\t{b.n_words} words\trestart {b.restart}")
        typer.echo(f"wrote {res.out}")
    best = res.best
    typer.echo(f"BEST {format_compact(best.board)} {best.score}")


# ------------------------------------------------------------------ prove


def _prove_progress_bar() -> tuple[Any, Callable[[Any], None]]:
    """A rich progress bar on stderr (classes done, boards found, best so far, ETA) and the
    callback that feeds it."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    bar = Progress(
        TextColumn("[bold]proving[/bold]"), BarColumn(), TextColumn("{task.fields[classes]}"),
        TextColumn("{task.fields[found]}"), TextColumn("{task.fields[best]}"),
        TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
        console=Console(stderr=True), transient=False,
    )  # fmt: skip
    task = bar.add_task("prove", total=None, classes="", found="", best="")

    def update(p: Any) -> None:
        best = f"best {p.best_score} {p.best_board}" if p.best_score is not None else ""
        bar.update(
            task, completed=p.classes_done, total=p.classes_total, best=best,
            classes=f"{p.classes_done:,}/{p.classes_total:,} classes", found=f"{p.boards_found:,} found",
        )  # fmt: skip
        if not bar.live.is_started:
            bar.start()

    return bar, update


@app.command()
@handle_errors
def prove(
    dictionary: DictionaryOpt = None,
    shape: Annotated[str, typer.Option("--shape", help="Board shape RxC (at most 64 cells).")] = "3x3",
    threshold: Annotated[
        int, typer.Option("--threshold", "-t", min=1, help="Report every board scoring at least this.")
    ] = 500,
    classes: Annotated[
        str | None,
        typer.Option(
            "--classes",
            help="Letter buckets separated by spaces, e.g. 'bdfgjqvwxz aeiou lnrsy chkmpt' "
            "(default: that for English, else vowels + 3 consonant buckets by frequency).",
        ),
    ] = None,
    rules: RulesOpt = None,
    min_length: MinLengthOpt = None,
    dice: Annotated[
        str | None, typer.Option("--dice", help="Not supported (refused): free letters only.")
    ] = None,
    n_jobs: Annotated[int, typer.Option("--n-jobs", "-j", help="Worker processes; -1 = all cores.")] = -1,
    backend: Annotated[str, typer.Option("--backend", help="loky (processes) or threading.")] = "loky",
    chunk_size: Annotated[
        int, typer.Option("--chunk-size", min=1, help="Classes per task and part file.")
    ] = 64,
    limit_classes: Annotated[
        int | None,
        typer.Option("--limit-classes", min=1, help="Prove only N classes (a timing sample; no _SUCCESS)."),
    ] = None,
    sample_seed: Annotated[
        int | None, typer.Option("--sample-seed", min=0, help="With --limit-classes: a random sample.")
    ] = None,
    out: Annotated[str, typer.Option("--out", "-o", help="Output directory.")] = "runs/prove",
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace a different run already in the output directory.")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only the BEST line.")] = False,
) -> None:
    """Certify every board scoring >= THRESHOLD by branch and bound over board classes.

    Writes OUT/part-*.parquet (one certificate row per canonical class), OUT/boards.parquet
    (every board >= threshold, canonical) and OUT/_SUCCESS (after the coverage check). A killed
    proof resumes; a finished one is a no-op. The last line printed is
    `BEST <board> <score> (<n> boards >= T, <k> classes)`. Exit codes: 0 ok, 2 bad input or
    unsupported option, 4 output directory busy or holding a different run.

    Example: boggle prove -d ../shared/data/enable2k.txt --shape 3x3 --threshold 500 -j 2 -o runs/p3
    """
    from pipeline.lexicon import default_dictionary
    from pipeline.prove import ProveConfig, run_prove

    cfg = ProveConfig(
        dictionary or default_dictionary(), shape=shape, threshold=threshold, classes=classes, rules=rules,
        min_length=min_length, dice=dice, chunk_size=chunk_size, limit_classes=limit_classes,
        sample_seed=sample_seed, n_jobs=n_jobs, backend=backend, out=out, overwrite=overwrite,
    )  # fmt: skip
    if quiet:
        res = run_prove(cfg)
    else:
        bar, update = _prove_progress_bar()
        try:
            res = run_prove(cfg, progress=update)
        finally:
            bar.stop()
        err(
            f"{res.status}: {res.classes_done:,} classes ({res.eliminated:,} eliminated by the bound), "
            f"{res.boards_scored:,} boards scored, {res.wall_s:.1f} s wall, {res.cpu_s:.1f} s CPU in workers"
        )
        for b in res.boards[:20]:
            typer.echo(f"{b.score}\t{b.board}")
        if res.status == "sample":
            typer.echo(f"sample of {res.classes_done:,} of {res.classes_total:,} classes: nothing certified")
        typer.echo(f"wrote {res.out}")
    best = res.best
    shown = f"{best.board} {best.score}" if best is not None else "- -"
    typer.echo(f"BEST {shown} ({len(res.boards)} boards >= {res.threshold}, {res.classes_done} classes)")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
