"""Batch commands: ``boggle run`` (generate or ingest, solve, write Parquet) and ``boggle
optimize`` (search for the best boards)."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from pipeline.cli._options import (
    SCHEDULER_FILE_HELP,
    SCHEDULER_HELP,
    Backend,
    BestOnlyOpt,
    DictionaryOpt,
    LogFormat,
    LogFormatOpt,
    MinLengthOpt,
    NJobsOpt,
    Objective,
    OverwriteOpt,
    ProgressIntervalOpt,
    RulesName,
    RulesOpt,
    Shape64Opt,
    Strategy,
    SummaryJsonOpt,
    backend_option,
    dice_option,
    log_style,
    n_jobs_option,
    options_for,
    out_option,
    placement_option,
    quiet_option,
    scheduler_file_option,
    scheduler_option,
    set_option,
    shape_option,
    summary_json_option,
    value,
)
from pipeline.cli._outcome import (
    OPTIMIZE_SUMMARY_FIELDS,
    announce_kernel_compile,
    err,
    handle_errors,
    note,
    report_to,
    run_summary_json,
)

if TYPE_CHECKING:
    import datetime

    from pipeline.errors import BoggleError

RUN_OUT_HELP = (
    "Run directory ([run] out); placeholders {date} {year} {month} {day} {config}, "
    "e.g. 'runs/nightly/{date}'."
)


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
    out: Annotated[str | None, out_option(RUN_OUT_HELP, metavar="DIR")] = None,
    n_jobs: Annotated[int | None, n_jobs_option("Worker processes; -1 = all cores ([run] n_jobs).")] = None,
    backend: Annotated[
        Backend | None,
        backend_option("Worker pool: loky (processes, the default), threading or dask ([run] backend)."),
    ] = None,
    scheduler: Annotated[str | None, scheduler_option(f"{SCHEDULER_HELP} ([run] scheduler).")] = None,
    scheduler_file: Annotated[
        str | None, scheduler_file_option(f"{SCHEDULER_FILE_HELP} ([run] scheduler_file)")
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
    shape: Annotated[str | None, shape_option("Board shape RxC ([boards] shape).")] = None,
    chunk_size: Annotated[
        int | None, typer.Option("--chunk-size", help="Boards per chunk / part file ([boards] chunk_size).")
    ] = None,
    placement: Annotated[
        str | None,
        placement_option(
            "Where the dice may lie, e.g. 'qu: corner, edge' (Qu never on an inner cell) or "
            "'qu: not inner' ([boards] placement; docs/guides/dice.md)."
        ),
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
    assignments: Annotated[list[str] | None, set_option()] = None,
    expect: Annotated[
        list[str] | None,
        typer.Option(
            "--expect",
            metavar="CHECK",
            help="An expectation on the data, e.g. 'mean_score >= 120', 'bad_share <= 2%', "
            "'band_share[tanglet-medium] >= 0.1', 'mean_score within limits' (added to [expect] "
            "checks; repeatable). A run that breaks one keeps its data and exits 6.",
        ),
    ] = None,
    overwrite: OverwriteOpt = False,
    quiet: Annotated[bool, quiet_option("No progress bar or progress lines.")] = False,
    progress_interval: ProgressIntervalOpt = 10.0,
    log_format: LogFormatOpt = LogFormat.text,
    summary_json: Annotated[
        Path | None,
        summary_json_option(
            "status, exit_code, message, chunks_total/done/reused, run_id, timestamps, version...",
            where="'-': stdout; placeholders as --out",
            after=", on failure too: for schedulers.",
        ),
    ] = None,
) -> None:
    """Run a batch job: generate or ingest boards, solve them in parallel, write Parquet.

    Re-running the same command resumes an interrupted run, or does nothing if it finished.
    Exit codes: 0 ok, 2 bad input or config, 3 finished with rejected rows (see the rejects
    file; a re-run of such a run returns 3 again), 4 output directory busy or holding a
    different or damaged run, 5 I/O failure or a worker died (re-run resumes), 6 finished but
    the data breaks an expectation ([expect], --expect; the data is kept), 130 Ctrl-C, 143
    SIGTERM (re-run resumes).

    Example: boggle run configs/smoke.toml --out runs/smoke --n-jobs 2

    Scheduled: boggle run configs/smoke.toml --seed-from-date today --out 'runs/nightly/{date}'

    Logged (a plain line a minute; --log-format json for collectors):
    boggle run configs/large.toml --progress-interval 60 2> run.log
    """
    from pipeline.cli import render
    from pipeline.config import DATE_SEED
    from pipeline.errors import EXIT_EXPECTATION, EXIT_REJECTED_ROWS
    from pipeline.runner import run_from_file

    when, out, summary_json, refused = fill_placeholders(
        config, out, summary_json, seed_from_date, day, seeded=seed is not None
    )
    say = report_to(summary_json)

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
        "boards.placement": placement,
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
                expect=expect or (),
            )
        outcome.update(render.run_outcome(summary))
        say(render.run_summary(summary))
        broken = [r for r in summary.expectations if r.get("met") is False]
        for r in summary.expectations:  # met and unchecked ones with the report, broken ones on stderr
            (err if r.get("met") is False else say)(str(r["line"]))
        if summary.rejected:
            err(render.run_rejected(summary))
        if broken:
            outcome["message"] = "; ".join(str(r["line"]) for r in broken)
            raise typer.Exit(EXIT_EXPECTATION)
        if summary.rejected:
            raise typer.Exit(EXIT_REJECTED_ROWS)


def fill_placeholders(
    config: Path | None,
    out: str | None,
    summary_json: Path | None,
    seed_from_date: str | None,
    day: str | None,
    *,
    seeded: bool,
) -> tuple[datetime.date | None, str | None, Path | None, BoggleError | None]:
    """The schedule's date, and ``--out`` and ``--summary-json`` with their placeholders filled
    in, before anything else. A refusal is returned, not raised: the command raises it inside
    its summary's block, so it is written to ``--summary-json`` too when that name needs no
    expanding (else the name is dropped)."""
    from pipeline.config import expand_pattern, has_placeholders, scheduled_day
    from pipeline.errors import BoggleError

    try:
        when = scheduled_day(seed_from_date, day, seeded)
        out = expand_pattern(out, when, config, "--out") if out is not None else None
        if summary_json is not None:
            summary_json = Path(expand_pattern(str(summary_json), when, config, "--summary-json"))
    except BoggleError as exc:
        if summary_json is not None and has_placeholders(str(summary_json)):
            summary_json = None
        return None, out, summary_json, exc
    return when, out, summary_json, None


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
    "boards.placement": "--placement",
    "boards.words": "--words",
    "lexicon.path": "--dictionary",
    "rules.name": "--rules",
    "boards.files": "--input",
}


@handle_errors
def optimize(
    ctx: typer.Context,
    config: Annotated[
        Path | None,
        typer.Argument(
            metavar="CONFIG.toml", help="Settings ([optimize] section), e.g. configs/optimize-4x4.toml."
        ),
    ] = None,
    dictionary: DictionaryOpt = None,
    shape: Shape64Opt = None,
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
    n_jobs: NJobsOpt = None,
    out: Annotated[str | None, out_option("Output directory (Parquet + _SUCCESS).")] = None,
    assignments: Annotated[list[str] | None, set_option("optimize")] = None,
    overwrite: OverwriteOpt = False,
    quiet: BestOnlyOpt = False,
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
    from pipeline.best.optimize import SECTION, OptimizeConfig, load_command_config, run_optimize
    from pipeline.cli import render

    options = options_for(ctx, OptimizeConfig, overwrite=overwrite or None)
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
        from pipeline.store import JobStatus

        best = res.boards[0] if res.boards else None
        outcome.update(
            status=JobStatus.COMPLETE,  # a search is never reused: each one is this session's
            boards=len(res.boards),
            best_score=best.score if best else None,
            best_board=format_compact(best.board) if best else None,
        )
    say = report_to(summary_json)
    if not quiet:
        for line in render.optimize_restarts(res):
            err(line)
        for line in render.optimize_boards(res):
            say(line)
    say(render.optimize_best(res))
