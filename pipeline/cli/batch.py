"""Batch commands: run (generate or ingest, solve, write Parquet), analyze, select, optimize.

Each parses its options, calls one library function and shows its progress and outcome through
:mod:`pipeline.render`. Heavy modules are imported inside the commands so ``--help`` stays light.
"""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path
from typing import Annotated, Any

import typer

from pipeline.cli.options import (
    Backend,
    DictionaryOpt,
    LogFormat,
    LogFormatOpt,
    MinLengthOpt,
    Objective,
    OverwriteOpt,
    ProgressIntervalOpt,
    RulesName,
    RulesOpt,
    ServePreset,
    Strategy,
    SummaryJsonOpt,
    dice_option,
    log_style,
    value,
)
from pipeline.cli.outcome import (
    ANALYZE_SUMMARY_FIELDS,
    OPTIMIZE_SUMMARY_FIELDS,
    SELECT_SUMMARY_FIELDS,
    announce_kernel_compile,
    err,
    handle_errors,
    note,
    run_summary_json,
    summary_to_stdout,
)
from pipeline.cli.outcome import (
    say as say_out,
)
from pipeline.extras import require


@handle_errors
def analyze(
    run_dirs: Annotated[
        list[str],
        typer.Argument(metavar="RUN_DIR", help="Finished run directories (with _SUCCESS), or their URLs."),
    ],
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Report folder. Default: reports/<run> (or <run1>-vs-<run2>)."),
    ] = None,
    top: Annotated[
        int, typer.Option("--top", min=1, help="Top boards listed per run/source (at most 1,000,000).")
    ] = 20,
    top_words: Annotated[
        int,
        typer.Option(
            "--top-words", min=1, help="Most frequent words listed per run/source (at most 1,000,000)."
        ),
    ] = 50,
    threads: Annotated[
        int | None, typer.Option("--threads", min=1, help="DuckDB threads (default: all cores).")
    ] = None,
    memory_limit: Annotated[
        str | None,
        typer.Option("--memory-limit", help="DuckDB memory cap, e.g. 2GB (spills to disk beyond)."),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress messages.")] = False,
    progress_interval: ProgressIntervalOpt = 10.0,
    log_format: LogFormatOpt = LogFormat.text,
    label: Annotated[
        list[str] | None,
        typer.Option(
            "--label",
            metavar="RUN=TEXT",
            help="Label a run in the report and plots (RUN: the directory as given or its name); "
            "repeatable. Default: what differs between the runs, e.g. 'new dice · tanglet:en'.",
        ),
    ] = None,
    expect_digest: Annotated[
        list[str] | None,
        typer.Option(
            "--expect-digest",
            metavar="DIGEST",
            help="Each run's published digest (boggle digest), one per run in order: exit 4 unless "
            "every run is the published one.",
        ),
    ] = None,
    bad_words: Annotated[
        int | None,
        typer.Option(
            "--bad-words",
            min=1,
            metavar="N",
            help="A bad board has fewer than N words (the report's bad-board section). Default 50, "
            "unless --bad-score is given alone.",
        ),
    ] = None,
    bad_score: Annotated[
        int | None,
        typer.Option(
            "--bad-score",
            min=1,
            metavar="N",
            help="A bad board scores fewer than N points (with --bad-words: either makes it bad).",
        ),
    ] = None,
    summary_json: Annotated[
        Path | None,
        typer.Option(
            "--summary-json",
            metavar="PATH|-",
            help="Also write the outcome as JSON here ('-': stdout): status, exit_code, message, runs, "
            "boards, report and table/plot files, timestamps, version; on failure too.",
        ),
    ] = None,
) -> None:
    """Analyse one or more finished runs: summary tables (Parquet + CSV), plots, report.html.

    Several runs are compared side by side (e.g. two dice sets). Prints the report's path.

    Example: boggle analyze runs/new runs/classic --out reports/dice
    """
    say = err if summary_to_stdout(summary_json) else say_out  # `-`: stdout holds the record alone
    with run_summary_json(summary_json, None, "analyze", ANALYZE_SUMMARY_FIELDS) as outcome:
        outcome.update(runs=[{"run_dir": d} for d in run_dirs], out_dir=str(out.resolve()) if out else None)
        require("analyze", "boggle analyze")
        check_report_folder(run_dirs, out)  # before the analysis modules' seconds of imports
        if expect_digest is not None:
            check_digests(run_dirs, expect_digest)
        threads = capped_threads(threads)
        from pipeline import render
        from pipeline.analyze import BadDefinition, analyze_runs, parse_labels

        with render.analyze_progress(quiet, log_style(progress_interval, log_format)) as progress:
            result = analyze_runs(
                [str(d) for d in run_dirs],
                out,
                top=top,
                top_words=top_words,
                threads=threads,
                memory_limit=memory_limit,
                progress=progress,
                labels=parse_labels(label),
                bad=BadDefinition.from_options(bad_words, bad_score),
            )
        if summary_json is not None:
            outcome.update(render.analyze_outcome(result, run_dirs))
        say(f"report: {result.report.resolve()}")


@handle_errors
def select(
    run_dirs: Annotated[
        list[str],
        typer.Argument(metavar="RUN_DIR", help="Finished run directories (with _SUCCESS), or their URLs."),
    ],
    out: Annotated[
        Path,
        typer.Option("--out", "-o", help="The pool file: .parquet (or .pq) or .csv, written atomically."),
    ],
    words: Annotated[
        str | None,
        typer.Option("--words", metavar="A..B", help="Word-count band, inclusive (A.. or ..B: open)."),
    ] = None,
    score: Annotated[
        str | None, typer.Option("--score", metavar="A..B", help="Score range, inclusive (A.. or ..B: open).")
    ] = None,
    no_dead_cells: Annotated[
        bool, typer.Option("--no-dead-cells", help="Only boards on which every cell is used by a word.")
    ] = False,
    min_common_words: Annotated[
        int | None,
        typer.Option(
            "--min-common-words",
            min=0,
            metavar="N",
            help="At least N common words (wordfreq Zipf >= 3.6, the report's definition); needs word lists.",
        ),
    ] = None,
    max_obscure: Annotated[
        float | None,
        typer.Option(
            "--max-obscure",
            metavar="F",
            help="At most this share (0-1) of a board's words obscure (not common); needs word lists.",
        ),
    ] = None,
    presets: Annotated[
        list[ServePreset] | None,
        typer.Option(
            "--preset",
            metavar="tanglet-easy|tanglet-medium|tanglet-hard",
            help="Tanglet's word-count bands: easy 32..42, medium 200..250, hard 425..525 words; "
            "repeatable (a board in any band given passes; with --words too).",
        ),
    ] = None,
    limit: Annotated[
        int | None,
        typer.Option("--limit", min=0, metavar="N", help="Write at most N boards (the first, in order)."),
    ] = None,
    summary_json: Annotated[
        Path | None,
        typer.Option(
            "--summary-json",
            metavar="PATH|-",
            help="Also write the outcome as JSON here ('-': stdout): status, exit_code, message, runs "
            "(boards, selected, share and its 95% CI, per band), boards written, out, filters; "
            "on failure too.",
        ),
    ] = None,
) -> None:
    """Choose the boards to serve: write the boards of finished runs that pass the filters to
    one Parquet or CSV file (columns: board, grid, score, n_words, words, band, run_id, seed,
    source, board_id, lexicon_hash...), in run order then board order, so the same runs and
    filters give the same file byte for byte.

    Prints, per run and per band, how many boards qualify with a 95% (Wilson) interval on the
    share, and what a run of 100,000 boards yields. Exit codes: 0 ok, 2 bad input (a band,
    a file name, word filters on a run without word lists), 4 a damaged run.

    Example: boggle select runs/default --preset tanglet-medium --no-dead-cells --out pool.parquet
    """
    say = err if summary_to_stdout(summary_json) else typer.echo  # `-`: stdout holds the record alone
    with run_summary_json(summary_json, None, "select", SELECT_SUMMARY_FIELDS) as outcome:
        outcome.update(runs=[{"run_dir": d} for d in run_dirs], out=str(out.absolute()))
        require("analyze", "boggle select")  # the analysis package: plots, word frequencies
        from pipeline import render
        from pipeline.analyze.select import Band, Filters, parse_range, preset, select_boards

        bands = [preset(p.value) for p in presets or []]
        if words is not None:
            bands.append(Band(f"words {words.strip()}", *parse_range(words, "--words")))
        filters = Filters(
            bands=tuple(bands),
            score=None if score is None else parse_range(score, "--score"),
            no_dead_cells=no_dead_cells,
            min_common_words=min_common_words,
            max_obscure=max_obscure,
            limit=limit,
        )
        outcome.update(filters=filters.describe())
        result = select_boards(run_dirs, out, filters)
        if summary_json is not None:
            outcome.update(render.select_outcome(result, run_dirs))
        for line in render.select_lines(result):
            say(line)


def check_report_folder(run_dirs: list[str], out: Path | None) -> None:
    """Refuse (exit 2, before anything is written) a report folder that is, or is inside, one of
    the runs: the report's files would become part of the run and break every reader of it. The
    default, reports/<run>, is inside a run when the command runs from within one."""
    from pipeline.errors import BoggleError
    from pipeline.urls import is_url  # not pipeline.store: that imports pyarrow

    target = (out if out is not None else Path("reports")).resolve()
    for run_dir in run_dirs:
        if is_url(run_dir):  # a report is written locally, never into an object store
            continue
        run = Path(run_dir).resolve()
        if target == run or run in target.parents:
            shown = f"--out {out}" if out is not None else f"the default report folder ({target})"
            raise BoggleError(
                f"{shown} is inside the run directory {run_dir}; the report would be written into "
                "the run: choose another --out"
            )


def capped_threads(threads: int | None) -> int | None:
    """``--threads`` capped at the cores this process may use, with a note (DuckDB aborts the
    process when it cannot start that many threads)."""
    import os

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if threads is not None and threads > cores:
        note(f"--threads {threads:,} capped to {cores} (the cores this process may use)")
        return cores
    return threads


@handle_errors
def run(
    config: Annotated[
        Path | None,
        typer.Argument(
            metavar="[CONFIG.toml]",
            help="Run config (TOML), e.g. configs/default.toml; without one, the built-in defaults "
            "(100,000 boards of the new dice, enable2k, into runs/default).",
            show_default=False,
        ),
    ] = None,
    out: Annotated[
        str | None,
        typer.Option(
            "--out",
            "-o",
            metavar="DIR",
            help="Run directory ([run] out); placeholders {date} {year} {month} {day} {config}, "
            "e.g. 'runs/nightly/{date}'.",
        ),
    ] = None,
    n_jobs: Annotated[
        int | None, typer.Option("--n-jobs", "-j", help="Worker processes; -1 = all cores ([run] n_jobs).")
    ] = None,
    backend: Annotated[
        Backend | None, typer.Option("--backend", help="Worker pool, default loky ([run] backend).")
    ] = None,
    scheduler: Annotated[
        str | None,
        typer.Option("--scheduler", help="Dask scheduler address, e.g. tcp://host:8786 ([run] scheduler)."),
    ] = None,
    scheduler_file: Annotated[
        str | None,
        typer.Option(
            "--scheduler-file", help="Dask scheduler file, as HPC job scripts write it ([run] scheduler_file)"
        ),
    ] = None,
    count: Annotated[int | None, typer.Option("--count", help="Boards to generate ([boards] count).")] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Generator seed ([boards] seed).")] = None,
    seed_from_date: Annotated[
        str | None,
        typer.Option(
            "--seed-from-date",
            metavar="YYYY-MM-DD|today",
            help='Derive the seed from this date (as [boards] seed = "date"; sets --date): '
            "a scheduled job rolls new boards each day, the same ones on a retry.",
        ),
    ] = None,
    day: Annotated[
        str | None,
        typer.Option(
            "--date",
            metavar="YYYY-MM-DD|today",
            help='The schedule\'s date for seed = "date" and the {date} placeholders. Default: today.',
        ),
    ] = None,
    dice: Annotated[str | None, dice_option("Dice set ([boards] dice).")] = None,
    shape: Annotated[str | None, typer.Option("--shape", help="Board shape RxC ([boards] shape).")] = None,
    chunk_size: Annotated[
        int | None, typer.Option("--chunk-size", help="Boards per chunk / part file ([boards] chunk_size).")
    ] = None,
    words: Annotated[
        bool | None,
        typer.Option(
            "--words/--no-words",
            help="Write each board's word list, or scores only: no words column ([boards] words).",
            show_default=False,
        ),
    ] = None,
    input_files: Annotated[
        list[str] | None,
        typer.Option(
            "--input", "-i", metavar="FILE", help="Ingest these files ([boards] files; sets source = ingest)."
        ),
    ] = None,
    dictionary: Annotated[
        str | None, typer.Option("--dictionary", "-d", help="Word list or tanglet:<lang> ([lexicon] path).")
    ] = None,
    rules: Annotated[
        RulesName | None, typer.Option("--rules", "-r", help="Rule preset ([rules] name).")
    ] = None,
    assignments: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            metavar="SECTION.KEY=VALUE",
            help="Any config value as section.key=value (TOML value), repeatable.",
        ),
    ] = None,
    overwrite: OverwriteOpt = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar or progress lines.")] = False,
    progress_interval: ProgressIntervalOpt = 10.0,
    log_format: LogFormatOpt = LogFormat.text,
    summary_json: Annotated[
        Path | None,
        typer.Option(
            "--summary-json",
            metavar="PATH|-",
            help="Also write the outcome as JSON here ('-': stdout; placeholders as --out): status, "
            "exit_code, message, chunks_total/done/reused, run_id, timestamps, version..., on failure "
            "too: for schedulers.",
        ),
    ] = None,
) -> None:
    """Run a batch job: generate or ingest boards, solve them in parallel, write Parquet.

    Re-running the same command resumes an interrupted run, or does nothing if it finished.
    Exit codes: 0 ok, 2 bad input or config, 3 finished with rejected rows (see the rejects
    file; a re-run of such a run returns 3 again), 4 output directory busy or holding a
    different or damaged run, 5 I/O failure or a worker died (re-run resumes), 130 Ctrl-C,
    143 SIGTERM (re-run resumes).

    Example: boggle run configs/smoke.toml --out runs/smoke --n-jobs 2

    Scheduled: boggle run configs/smoke.toml --seed-from-date today --out 'runs/nightly/{date}'

    Logged (a plain line a minute; --log-format json for collectors):
    boggle run configs/large.toml --progress-interval 60 2> run.log
    """
    from pipeline import render
    from pipeline.errors import EXIT_REJECTED_ROWS, BoggleError
    from pipeline.runner import run_from_file
    from pipeline.schedule import DATE_SEED, expand_pattern, has_placeholders, scheduled_day

    refused: BoggleError | None = None
    try:  # placeholders are filled in before anything else
        when = scheduled_day(seed_from_date, day, seed is not None)
        out = expand_pattern(out, when, config, "--out") if out is not None else None
        if summary_json is not None:
            summary_json = Path(expand_pattern(str(summary_json), when, config, "--summary-json"))
    except BoggleError as exc:  # written to --summary-json too, if its name needs no expanding
        refused, when = exc, None
        if summary_json is not None and has_placeholders(str(summary_json)):
            summary_json = None
    say = err if summary_to_stdout(summary_json) else say_out  # `-`: stdout holds the record alone

    overrides = {
        "run.out": out,
        "run.n_jobs": n_jobs,
        "run.backend": value(backend),
        "run.scheduler": scheduler,
        "run.scheduler_file": scheduler_file,
        "boards.count": count,
        "boards.seed": seed,
        "boards.dice": dice,
        "boards.shape": shape,
        "boards.chunk_size": chunk_size,
        "boards.words": words,
        "lexicon.path": dictionary,
        "rules.name": value(rules),
        "boards.files": input_files or None,
        "boards.source": "ingest" if input_files else None,
    }
    if seed_from_date is not None:
        overrides["boards.seed"] = DATE_SEED
    with run_summary_json(summary_json, out) as outcome:
        outcome.update(config=None if config is None else str(config), chunks_done=0, chunks_reused=0)
        if refused is not None:
            raise refused
        if not quiet:
            announce_kernel_compile()
        style = log_style(progress_interval, log_format)
        with nullcontext(None) if quiet else render.run_progress(style) as bar:

            def update(p: Any) -> None:
                outcome.update(render.run_progress_outcome(p))  # what a stopped run had done
                if bar is not None:
                    bar(p)

            summary = run_from_file(
                config,
                overrides,
                assignments or [],
                overwrite=overwrite,
                progress=update,
                note=note,
                day=when,
                option_names=RUN_OPTION_NAMES,
            )
        outcome.update(render.run_outcome(summary))
        say(render.run_summary(summary))
        if summary.rejected:
            err(render.run_rejected(summary))
            raise typer.Exit(EXIT_REJECTED_ROWS)


def check_digests(run_dirs: list[str], digests: list[str]) -> None:
    """Each run's manifest gives its published digest (its files are verified against that
    manifest by the analysis itself)."""
    from pipeline import store
    from pipeline.errors import BoggleError

    if len(digests) != len(run_dirs):
        raise BoggleError(
            f"--expect-digest: {len(digests)} digests for {len(run_dirs)} runs; one per run, in order"
        )
    for run_dir, digest in zip(run_dirs, digests, strict=True):
        store.open_run(run_dir, verify=False, expect_digest=digest)


# the option behind each override of `boggle run`, so a bad value names it (not the config file)
RUN_OPTION_NAMES = {
    "run.out": "--out",
    "run.n_jobs": "--n-jobs",
    "run.backend": "--backend",
    "run.scheduler": "--scheduler",
    "run.scheduler_file": "--scheduler-file",
    "boards.count": "--count",
    "boards.seed": "--seed",
    "boards.dice": "--dice",
    "boards.shape": "--shape",
    "boards.chunk_size": "--chunk-size",
    "boards.words": "--words",
    "lexicon.path": "--dictionary",
    "rules.name": "--rules",
    "boards.files": "--input",
}


@handle_errors
def optimize(
    config: Annotated[
        Path | None,
        typer.Argument(
            metavar="CONFIG.toml", help="Settings ([optimize] section), e.g. configs/optimize-4x4.toml."
        ),
    ] = None,
    dictionary: DictionaryOpt = None,
    shape: Annotated[str | None, typer.Option("--shape", help="Board shape RxC (at most 64 cells).")] = None,
    dice: Annotated[
        str | None, dice_option("Only rollable boards of this dice set; default free letters.")
    ] = None,
    rules: RulesOpt = None,
    min_length: MinLengthOpt = None,
    # no -n: `generate -n` is the board count, and a short flag means one thing in every command
    restarts: Annotated[
        int | None, typer.Option("--restarts", min=1, help="Independent searches (at most 100,000).")
    ] = None,
    seed: Annotated[
        int | None, typer.Option("--seed", min=0, help="Seed (restart i: SeedSequence(seed).spawn(n)[i]).")
    ] = None,
    strategy: Annotated[
        Strategy | None,
        typer.Option("--strategy", help="anneal (simulated annealing) or hill (pool hill climbing)."),
    ] = None,
    objective: Annotated[
        Objective | None,
        typer.Option(
            "--objective",
            help="points, words (distinct words) or subset (points of --subset words).",
        ),
    ] = None,
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
        int | None, typer.Option("--pool-size", min=1, help="Boards in the hill-climbing pool.")
    ] = None,
    keep: Annotated[
        int | None, typer.Option("--keep", min=1, help="Best distinct boards to report and write.")
    ] = None,
    t_start: Annotated[
        float | None, typer.Option("--t-start", help="Annealing: starting temperature.")
    ] = None,
    t_end: Annotated[
        float | None, typer.Option("--t-end", help="Annealing: final temperature of a cycle.")
    ] = None,
    cycle: Annotated[
        int | None, typer.Option("--cycle", min=1, help="Annealing: moves per cooling cycle.")
    ] = None,
    n_jobs: Annotated[
        int | None, typer.Option("--n-jobs", "-j", help="Worker processes; -1 = all cores.")
    ] = None,
    out: Annotated[
        str | None,
        typer.Option("--out", "-o", help="Output directory (Parquet + _SUCCESS)."),
    ] = None,
    assignments: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            metavar="OPTIMIZE.KEY=VALUE",
            help="Any [optimize] value as optimize.key=value (TOML value), repeatable.",
        ),
    ] = None,
    overwrite: OverwriteOpt = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only the BEST line.")] = False,
    progress_interval: ProgressIntervalOpt = 10.0,
    log_format: LogFormatOpt = LogFormat.text,
    summary_json: SummaryJsonOpt = None,
) -> None:
    """Search for the highest-scoring boards (hill climbing or simulated annealing).

    Settings come from the [optimize] section of CONFIG.toml (keys and defaults: docs/reference/config.md),
    then --set, then the options. Without --iterations or --time-limit each restart is one
    climb (hill) or one cooling cycle (anneal). Writes OUT/part-00000.parquet and OUT/_SUCCESS.
    The last line printed is `BEST <board> <score>`. Exit codes: 0 ok, 2 bad input or config,
    4 output directory busy or holding a different run.

    Example: boggle optimize configs/optimize-4x4.toml -d enable2k --restarts 4
    """
    from pipeline import render
    from pipeline.optimize import SECTION, load_command_config, run_optimize

    options = {
        "dictionary": dictionary,
        "shape": shape,
        "dice": dice,
        "rules": value(rules),
        "min_length": min_length,
        "strategy": value(strategy),
        "objective": value(objective),
        "subset": subset,
        "restarts": restarts,
        "seed": seed,
        "iterations": iterations,
        "time_limit": time_limit,
        "target": target,
        "pool_size": pool_size,
        "keep": keep,
        "t_start": t_start,
        "t_end": t_end,
        "cycle": cycle,
        "n_jobs": n_jobs,
        "out": out,
        "overwrite": overwrite or None,
    }
    cfg = load_command_config(config, {f"{SECTION}.{k}": v for k, v in options.items()}, assignments or [])
    if not quiet:
        announce_kernel_compile()
    with run_summary_json(summary_json, cfg.out, "optimize", OPTIMIZE_SUMMARY_FIELDS) as outcome:
        try:
            with (
                nullcontext(None)
                if quiet
                else render.optimize_progress(
                    cfg.restarts, log_style(progress_interval, log_format)
                ) as update
            ):
                res = run_optimize(cfg, progress=update, note=note)
        except KeyboardInterrupt:
            for line in render.optimize_interrupted(cfg.out):
                err(line)
            raise
        from pipeline.boards import format_compact

        best = res.boards[0] if res.boards else None
        outcome.update(
            status="complete",
            boards=len(res.boards),
            best_score=best.score if best else None,
            best_board=format_compact(best.board) if best else None,
        )
    say = err if summary_to_stdout(summary_json) else say_out  # `-`: stdout holds the record alone
    if not quiet:
        for line in render.optimize_restarts(res):
            err(line)
        for line in render.optimize_boards(res):
            say(line)
    say(render.optimize_best(res))
