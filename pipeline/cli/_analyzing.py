"""Commands that read finished runs: ``boggle analyze`` (tables, plots, a report) and
``boggle select`` (the boards to serve, as one file)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from pipeline.cli._options import (
    SCHEDULER_HELP,
    Backend,
    LogFormat,
    LogFormatOpt,
    ProgressIntervalOpt,
    ServePreset,
    digests_option,
    log_style,
    out_option,
    published_digests,
    quiet_option,
    scheduler_option,
    summary_json_option,
)
from pipeline.cli._outcome import (
    ANALYZE_SUMMARY_FIELDS,
    SELECT_SUMMARY_FIELDS,
    handle_errors,
    note,
    report_to,
    run_summary_json,
    shown_output,
)
from pipeline.extras import require

RunDirsArg = Annotated[
    list[str],
    typer.Argument(metavar="RUN_DIR", help="Finished run directories (with _SUCCESS), or their URLs."),
]


@handle_errors
def analyze(
    run_dirs: RunDirsArg,
    out: Annotated[
        str | None,
        out_option(
            "Report folder, or its URL in an object store (s3://, gs://, az://). Default: "
            "reports/<run> (or <run1>-vs-<run2>).",
            metavar="DIR|URL",
        ),
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
        int | None,
        typer.Option("--threads", min=1, help="Parts read at once (default: all cores)."),
    ] = None,
    backend: Annotated[
        Backend,
        typer.Option(
            "--backend",
            help="Who reads the parts: threads of this process (default), loky processes, or the "
            "workers of a dask cluster (--scheduler; they must see the runs: a shared disk or a bucket).",
        ),
    ] = Backend.threading,
    scheduler: Annotated[str | None, scheduler_option(SCHEDULER_HELP)] = None,
    memory_limit: Annotated[
        str | None,
        typer.Option(
            "--memory-limit",
            help="Ignored, kept for old scripts: the analysis merges each part's statistics and holds "
            "one part a thread, so its memory does not grow with the run.",
        ),
    ] = None,
    quiet: Annotated[bool, quiet_option("No progress messages.")] = False,
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
    expect_digest: Annotated[list[str] | None, digests_option("--expect-digest", "run")] = None,
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
        summary_json_option(
            "status, exit_code, message, runs, boards, report and table/plot files, timestamps, version",
            after="; on failure too.",
        ),
    ] = None,
) -> None:
    """Analyse one or more finished runs: summary tables (Parquet + CSV), plots, report.html.

    Several runs are compared side by side (e.g. two dice sets). Prints the report's path.

    Example: boggle analyze runs/new runs/classic --out reports/dice
    """
    from pipeline import jit

    # before any kernel module is imported: the statistics' kernels compiled ahead of time where
    # they are built (no numba to load: about 0.8 CPU-s less; the same numbers), else numba's JIT
    jit.prefer_ahead_of_time()
    say = report_to(summary_json)
    with run_summary_json(summary_json, None, "analyze", ANALYZE_SUMMARY_FIELDS) as outcome:
        outcome.update(runs=[{"run_dir": d} for d in run_dirs], out_dir=shown_output(out))
        require("analyze", "boggle analyze")
        check_report_folder(run_dirs, out)  # before the analysis modules' seconds of imports
        if expect_digest is not None:
            check_digests(run_dirs, expect_digest)
        if backend != Backend.dask:  # a cluster's workers are not this machine's cores
            threads = capped_threads(threads)
        if memory_limit is not None:
            note(
                "--memory-limit is no longer needed and is ignored: analyze merges each part's "
                "statistics and holds one part a thread, whatever the run's size"
            )
        from pipeline.analyze import BadDefinition, analyze_runs, parse_labels
        from pipeline.cli import render

        with render.analyze_progress(quiet, log_style(progress_interval, log_format)) as progress:
            result = analyze_runs(
                [str(d) for d in run_dirs],
                out,
                top=top,
                top_words=top_words,
                threads=threads,
                progress=progress,
                backend=backend.value,
                scheduler=scheduler,
                labels=parse_labels(label),
                bad=BadDefinition.from_options(bad_words, bad_score),
            )
        if summary_json is not None:
            outcome.update(render.analyze_outcome(result, run_dirs))
        say(f"report: {result.report.resolve()}")


@handle_errors
def select(
    run_dirs: RunDirsArg,
    out: Annotated[
        str,
        out_option(
            "The pool file: .parquet (or .pq) or .csv, written atomically; or its URL in an object "
            "store (s3://, gs://, az://).",
            metavar="FILE|URL",
        ),
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
        summary_json_option(
            "status, exit_code, message, runs (boards, selected, share and its 95% CI, per band), "
            "boards written, out, filters",
            after="; on failure too.",
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
    say = report_to(summary_json, typer.echo)
    with run_summary_json(summary_json, None, "select", SELECT_SUMMARY_FIELDS) as outcome:
        outcome.update(runs=[{"run_dir": d} for d in run_dirs], out=shown_output(out))
        require("analyze", "boggle select")  # the analysis package: plots, word frequencies
        from pipeline.analyze import Band, Filters, parse_range, preset, select_boards
        from pipeline.cli import render

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


def check_report_folder(run_dirs: list[str], out: str | None) -> None:
    """Refuse (exit 2, before anything is written) a report folder that is, or is inside, one of
    the runs: the report's files would become part of the run and break every reader of it. The
    default, reports/<run>, is inside a run when the command runs from within one. (Any other
    job directory is refused by the analysis, once the store is imported.)"""
    from pipeline.errors import BoggleError
    from pipeline.urls import is_url  # not pipeline.store: that imports pyarrow

    if out is not None and is_url(out):
        return
    target = Path(out if out is not None else "reports").resolve()
    for run_dir in run_dirs:
        if is_url(run_dir):  # a local report folder is never inside a run in a store
            continue
        run = Path(run_dir).resolve()
        if target == run or run in target.parents:
            shown = f"--out {out}" if out is not None else f"the default report folder ({target})"
            raise BoggleError(
                f"{shown} is inside the run directory {run_dir}; the report would be written into "
                "the run: choose another --out"
            )


def capped_threads(threads: int | None) -> int | None:
    """``--threads`` capped at the cores this process may use, with a note (more threads than
    cores only add memory: each holds a part)."""
    import os

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if threads is not None and threads > cores:
        note(f"--threads {threads:,} capped to {cores} (the cores this process may use)")
        return cores
    return threads


def check_digests(run_dirs: list[str], digests: list[str]) -> None:
    """Each run's manifest gives its published digest (its files are verified against that
    manifest by the analysis itself)."""
    from pipeline import store

    wanted = published_digests(digests, run_dirs, "--expect-digest", "run")
    for run_dir, digest in zip(run_dirs, wanted, strict=True):
        store.open_run(run_dir, verify=False, expect_digest=digest)
