"""``boggle prove``: certify every board scoring at least a threshold (see :mod:`pipeline.best.prove`)."""

from __future__ import annotations

from contextlib import nullcontext
from typing import Annotated, Any

import typer

import pipeline.cli._options as opt
from pipeline.cli._outcome import PROVE_SUMMARY_FIELDS, err, handle_errors, note, report_to, run_summary_json
from pipeline.cli._outcome import say as say_stdout


@handle_errors
def prove(
    ctx: typer.Context,
    dictionary: opt.DictionaryOpt = None,
    shape: opt.Shape64Opt = "3x3",
    threshold: Annotated[
        int, typer.Option("--threshold", "-t", min=1, help="Report every board scoring at least this.")
    ] = 500,
    classes: Annotated[
        str | None,
        typer.Option(
            "--classes",
            help="Letter buckets separated by spaces, e.g. 'bdfgjqvwxz aeiou lnrsy chkmpt' "
            "(default: that for English, the corner recipe below from 12 cells; else vowels + 3 "
            "consonant buckets by frequency). "
            "Comma-separated sections 'corner:', 'edge:' (other border cells) and 'inner:' give "
            "those cells their own buckets, e.g. 'aeijou bcdfgmpqvwxz hklnrsty, corner:aeiosuy "
            "bcdfghjklmnpqrtvwxz'; each section partitions the alphabet.",
        ),
    ] = None,
    bound: Annotated[
        opt.ProveBound,
        typer.Option("--bound", help="tree (orderly-tree bound, fast) or sumax (min of sum and max bounds)."),
    ] = opt.ProveBound.tree,
    rules: opt.RulesOpt = None,
    min_length: opt.MinLengthOpt = None,
    dice: Annotated[
        str | None, typer.Option("--dice", help="Not supported (refused): free letters only.")
    ] = None,
    n_jobs: opt.NJobsOpt = -1,
    backend: opt.BackendOpt = opt.Backend.loky,
    scheduler: Annotated[
        str | None, opt.scheduler_option(f"{opt.SCHEDULER_HELP} (default: a local cluster).")
    ] = None,
    scheduler_file: Annotated[str | None, opt.scheduler_file_option(f"{opt.SCHEDULER_FILE_HELP}.")] = None,
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
    class_ids: Annotated[
        str | None,
        typer.Option(
            "--class-ids",
            metavar="ID,ID,...|@FILE",
            help="Prove only these canonical classes of the recipe (the certificate's class_id; a "
            "file: one id a line): re-checks, shards, benchmarks. No _SUCCESS.",
        ),
    ] = None,
    out: Annotated[str, opt.out_option("Output directory.")] = "runs/prove",
    overwrite: opt.OverwriteOpt = False,
    quiet: opt.BestOnlyOpt = False,
    progress_interval: opt.ProgressIntervalOpt = 10.0,
    log_format: opt.LogFormatOpt = opt.LogFormat.text,
    summary_json: opt.SummaryJsonOpt = None,
    status: Annotated[
        bool,
        typer.Option(
            "--status",
            help="Report the proof in --out and exit: parts verified, classes done, boards found, "
            "CPU and wall time spent, and an estimate of the CPU left. Proves nothing, writes "
            "nothing and takes no lock, so it works while the proof runs; the other options are "
            "ignored.",
        ),
    ] = False,
) -> None:
    """Certify every board scoring >= THRESHOLD by branch and bound over board classes.

    Writes OUT/part-*.parquet (one certificate row per canonical class), OUT/_boards.pq
    (Parquet, every board >= threshold, canonical; named so that OUT/*.parquet is the
    certificate alone) and OUT/_SUCCESS (after the coverage check). A killed proof resumes; a
    finished one is a no-op. The last line printed is
    `BEST <board> <score> (<n> boards >= T, <k> classes)`. Exit codes: 0 ok, 1 internal error,
    2 bad input or unsupported option, 4 output directory busy, holding a different job, or a
    finished proof with damaged files (--overwrite recomputes them). `--status` reports a
    proof without touching it (exit 2: no proof in --out, 4: its record or a part is damaged).

    Example: boggle prove -d enable2k --shape 3x3 --threshold 500 -j 2 -o runs/p3
    """
    from pipeline import jit

    # before any kernel module is imported: the kernels compiled ahead of time where they are
    # built (less memory a worker; the same results), else numba's JIT (pipeline.jit)
    jit.prefer_ahead_of_time()
    from pipeline.best.prove import ProveConfig, parse_class_ids, run_prove
    from pipeline.cli import render
    from pipeline.lexicon import default_dictionary

    if status:
        from pipeline.best.prove import check_undamaged, proof_status

        st = proof_status(out)
        for line in render.prove_status(st):
            say_stdout(line)
        check_undamaged(st)
        return
    note_kernel_fallback()

    cfg = ProveConfig(
        **opt.options_for(
            ctx,
            ProveConfig,
            dictionary=dictionary or default_dictionary(),
            class_ids=parse_class_ids(class_ids),
        )
    )
    say = report_to(summary_json)
    hits: list[int] = []
    with run_summary_json(summary_json, out, "prove", PROVE_SUMMARY_FIELDS) as outcome:
        with (
            nullcontext(None)
            if quiet
            else render.prove_progress(opt.log_style(progress_interval, log_format)) as bar
        ):

            def update(p: Any) -> None:
                hits[:] = [p.boards_found]
                if bar is not None:
                    bar(p)

            res = run_prove(cfg, progress=update, note=note)
        best = res.best
        outcome.update(
            status=res.status,
            classes_total=res.classes_total,
            classes_done=res.classes_done,
            boards=len(res.boards),
            best_board=best.board if best else None,
            best_score=best.score if best else None,
        )
    if not quiet:
        err(render.prove_summary(res, hits[0] if hits else None))
        for line in render.prove_boards(res):
            say(line)
    say(render.prove_best(res))


def note_kernel_fallback() -> None:
    """One note when the kernels built ahead of time are there but not taken (a truncated or
    replaced module, a stale build, one that does not load): the proof runs on numba's JIT,
    the same results with more memory a process. None where nothing was built."""
    from pipeline import jit

    why = jit.why_not_ahead_of_time() if jit.mode() == "jit" else ""
    if why and not why.startswith("not built"):
        note(f"the prove kernels built ahead of time are not used: {why}; proving with numba's JIT")
