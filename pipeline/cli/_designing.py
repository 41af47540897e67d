"""Commands for a dice designer: ``boggle dice show``, ``boggle what-if`` and ``boggle design-dice``."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import Annotated, Any

import typer

from pipeline.cli._options import (
    DICE_CHOICES,
    Backend,
    BackendOpt,
    DictionaryOpt,
    NJobsOpt,
    OverwriteOpt,
    RulesOpt,
    command_group,
    complete_dice,
    options_for,
    out_option,
    placement_option,
    quiet_option,
    shape_option,
    summary_json_option,
)
from pipeline.cli._outcome import (
    announce_kernel_compile,
    err,
    handle_errors,
    note,
    report_to,
    run_summary_json,
    summary_fields,
)

dice_app = command_group(
    "Dice sets: show a built-in set or a dice file (format: docs/guides/dice.md).\n\n"
    "Example: boggle dice show new"
)

_SETS = "|".join([*(d for d in DICE_CHOICES if d not in ("uniform", "english")), "tanglet:<lang>"])
DICE_ARG_HELP = f"A dice set ({_SETS}) or a dice file."


@handle_errors
def show(
    dice: Annotated[
        str, typer.Argument(metavar="NAME|FILE", help=DICE_ARG_HELP, autocompletion=complete_dice)
    ],
    shape: Annotated[
        str | None, shape_option("Board shape RxC (a dice file: default the square its dice fill).")
    ] = None,
) -> None:
    """Print a dice set: one die a line (as a dice file reads it), then the count of each face.

    Example: boggle dice show new
    """
    from pipeline.boards import GENERATORS, load_dice_set, parse_shape
    from pipeline.cli import render
    from pipeline.errors import ConfigError

    if dice in GENERATORS:
        raise ConfigError(f"{dice!r} is a letter generator, not a set of dice")
    rows, cols = parse_shape(shape) if shape else (None, None)
    for line in render.dice_show(load_dice_set(dice, rows, cols)):
        typer.echo(line)


WHATIF_SUMMARY_FIELDS = summary_fields(
    "base",
    "variant",
    "swaps",
    "changed_dice",
    "placement",
    "boards",
    "mean_base",
    "mean_variant",
    "gain",
    "gain_low",
    "gain_high",
    "sd",
    "higher",
    "lower",
    "unchanged",
    "boards_differ",
    "prediction",
    "run_dir",
)


@handle_errors
def what_if(
    ctx: typer.Context,
    base: Annotated[
        str,
        typer.Argument(
            metavar="BASE", help="The base dice: a set name or a dice file.", autocompletion=complete_dice
        ),
    ],
    swaps: Annotated[
        list[str] | None,
        typer.Option(
            "--swap",
            metavar="EDIT",
            help="Change the variant: 'die I = die J' (die I becomes a copy of die J) or 'die I: X -> Y' "
            "(a face X of die I becomes Y; _ a blank). Dice numbered from 1, as in the report. Repeatable, "
            "applied in order.",
        ),
    ] = None,
    dice_b: Annotated[
        str | None,
        typer.Option(
            "--dice-b",
            metavar="NAME|FILE",
            help="Start the variant from this set instead of BASE (same number of dice and faces).",
        ),
    ] = None,
    count: Annotated[int, typer.Option("--count", min=1, help="Boards in each run.")] = 10_000,
    seed: Annotated[
        int, typer.Option("--seed", min=0, help="Seed of both runs (the same boards' draws).")
    ] = 0,
    dictionary: DictionaryOpt = None,
    rules: RulesOpt = None,
    shape: Annotated[str | None, shape_option("Board shape RxC (default: the dice's).")] = None,
    chunk_size: Annotated[
        int | None, typer.Option("--chunk-size", min=1, help="Boards per chunk (as boggle run).")
    ] = None,
    out: Annotated[
        str,
        out_option(
            "Folder for the two runs (OUT/base, OUT/variant) and OUT/variant-dice.txt, or its URL in "
            "an object store (s3://, gs://, az://).",
            metavar="DIR|URL",
        ),
    ] = "runs/whatif",
    n_jobs: NJobsOpt = -1,
    placement: Annotated[
        str | None,
        placement_option(
            "Place the variant's dice by this policy, e.g. 'qu: corner, edge' (Qu never on an inner "
            "cell): without --swap, the what-if measures the placement alone."
        ),
    ] = None,
    base_placement: Annotated[
        str | None, placement_option("Place the base's dice by this policy.", "--base-placement")
    ] = None,
    overwrite: OverwriteOpt = False,
    quiet: Annotated[bool, quiet_option("No progress bars.")] = False,
    summary_json: Annotated[
        Path | None,
        summary_json_option(
            "the measured gain and interval, the shares higher/lower/unchanged, the model's prediction, "
            "both runs",
            after="; on failure too.",
        ),
    ] = None,
) -> None:
    """Measure what a change of dice, or of where they lie, is worth: a paired experiment of the
    base and a variant.

    Both sets roll the same boards' draws (same seed: the same die on every cell, the same face
    index of it), so a variant board differs from its base board only where a changed die lies.
    Prints the mean gain per board with its 95% paired interval, the shares of boards higher,
    lower and unchanged, and what the analysis's additive model predicts. The runs are normal
    runs: boggle analyze OUT/base OUT/variant compares them.

    Example: boggle what-if new --swap 'die 15 = die 5' --count 20000 --seed 1 -d enable2k --out runs/whatif

    A placement: boggle what-if new --placement 'qu: corner, edge' --count 20000 --out runs/qu-border
    """
    from pipeline.cli import render
    from pipeline.design import run_what_if

    say = report_to(summary_json, typer.echo)
    with run_summary_json(summary_json, out, "what-if", WHATIF_SUMMARY_FIELDS) as outcome:
        if not quiet:
            announce_kernel_compile()

        bars = ExitStack()  # one progress bar a run, opened as it starts
        bar: list[Any] = []

        def stage(name: str) -> None:
            if quiet:
                return
            bars.close()
            err(f"{name} run: {out.rstrip('/')}/{name}")
            bar[:] = [bars.enter_context(render.run_progress())]

        def progress(p: Any) -> None:
            if bar:
                bar[0](p)

        with bars:
            given = options_for(ctx, run_what_if, base_spec=base, swaps=swaps or [], stage=stage)
            res = run_what_if(**given, progress=progress, note=note)
        outcome.update(render.whatif_outcome(res))
    for line in render.whatif_lines(res):
        say(line)


DESIGN_SUMMARY_FIELDS = summary_fields(
    "out",
    "objective",
    "start",
    "proposed",
    "moves_accepted",
    "candidates",
    "boards_solved",
    "cpu_s",
    "validation",
    "constraints",
    "repair",
    "dice_changes",
    "warnings",
)


@handle_errors
def design_dice(
    ctx: typer.Context,
    start: Annotated[
        str,
        typer.Option(
            "--start",
            metavar="NAME|FILE",
            help="The dice to start from: a set name or a dice file.",
            autocompletion=complete_dice,
        ),
    ] = "new",
    objective: Annotated[
        str,
        typer.Option(
            "--objective",
            metavar="OBJ",
            help="band:A..B (maximise the share of boards with A..B words), bad:N (minimise the share with "
            "fewer than N words) or mean (maximise the mean score).",
        ),
    ] = "band:200..250",
    budget: Annotated[
        str, typer.Option("--budget", metavar="BOARDS", help="Boards the search may solve (k, M suffixes).")
    ] = "1M",
    faces: Annotated[
        str,
        typer.Option(
            "--faces",
            metavar="fixed|free",
            help="fixed: only swap faces between dice (letter counts kept); free: also replace a face by "
            "another letter.",
        ),
    ] = "fixed",
    keep_qu: Annotated[
        bool,
        typer.Option(
            "--keep-qu/--no-keep-qu",
            help="With --faces free: keep the number of Qu faces (no replacement takes or brings one).",
        ),
    ] = True,
    max_same: Annotated[
        int | None,
        typer.Option(
            "--max-same",
            metavar="N",
            help="No die shows one letter more than N times (a start over it is first brought within; "
            "default: no limit).",
        ),
    ] = None,
    min_vowels: Annotated[
        int | None,
        typer.Option(
            "--min-vowels",
            metavar="N",
            help="Every die has at least N vowel faces (a e i o u; Qu is no vowel). A start with "
            "fewer is first brought within by swaps (and replacements with --faces free).",
        ),
    ] = None,
    max_rare: Annotated[
        int | None,
        typer.Option(
            "--max-rare",
            metavar="N",
            help="No die has more than N rare faces (j k q x z; Qu is one): --max-rare 1 keeps j and "
            "x apart.",
        ),
    ] = None,
    keep_qu_die: Annotated[
        bool,
        typer.Option(
            "--keep-qu-die",
            help="Every Qu face stays on its die: no move swaps or replaces it (the Qu die stays the "
            "Qu die).",
        ),
    ] = False,
    max_sd: Annotated[
        float | None,
        typer.Option(
            "--max-sd",
            help="With --objective mean: reject a move that makes the score's sd exceed "
            "this (or the incumbent's, if higher).",
        ),
    ] = None,
    batch: Annotated[
        int, typer.Option("--batch", help="Boards per batch of a candidate's sequential test.")
    ] = 2000,
    max_batches: Annotated[
        int,
        typer.Option(
            "--max-batches",
            help="Batches one candidate is tested on before it is settled (--undecided); "
            "not a bound on the run (--budget is).",
        ),
    ] = 5,
    undecided: Annotated[
        str,
        typer.Option(
            "--undecided",
            metavar="estimate|reject",
            help="A candidate still undecided after --max-batches: estimate (accept when its estimate "
            "is above 0) or reject (accept only clear gains).",
        ),
    ] = "estimate",
    z: Annotated[
        float, typer.Option("--z", help="Interval half-width in standard errors for early decisions.")
    ] = 2.0,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the search's and validation's draws.")] = 0,
    validate: Annotated[
        int, typer.Option("--validate", help="Fresh boards of the final paired validation.")
    ] = 40_000,
    dictionary: DictionaryOpt = None,
    rules: RulesOpt = None,
    shape: Annotated[
        str | None, shape_option("Board shape RxC (a dice file: default the square it fills).")
    ] = None,
    out: Annotated[
        str,
        out_option(
            "Job folder: dice.txt, report.json, moves.csv (resumable); or its URL in an object store "
            "(s3://, gs://, az://).",
            metavar="DIR|URL",
        ),
    ] = "runs/design",
    n_jobs: NJobsOpt = 1,
    backend: BackendOpt = Backend.loky,
    overwrite: OverwriteOpt = False,
    quiet: Annotated[bool, quiet_option("No progress bar.")] = False,
    summary_json: Annotated[
        Path | None,
        summary_json_option(
            "moves, cost, the validation, the constraints, the changed dice, the warnings",
            after="; on failure too.",
        ),
    ] = None,
) -> None:
    """Search for better dice: a local search of face swaps (and, with --faces free, replacements),
    each tested against the current set by a paired experiment on common random numbers, and
    never leaving the per-die constraints (--min-vowels, --max-rare, --max-same, --keep-qu-die).

    Every candidate rolls the same draws as the current set (the same die on each cell, the same
    face index), so only boards showing a changed face are solved again; it is tested in batches
    and accepted when its interval lies above 0, rejected when below, else decided by its
    estimate after --max-batches. The proposed set is then checked against the start on fresh
    boards, paired, with 95% intervals; each changed die and each printability warning (a die
    without a vowel, rare letters together, a letter piled up) is listed. Killed, it resumes
    from the last decided move when re-run with the same arguments (docs/guides/dice.md,
    "Designing dice").

    Example: boggle design-dice --objective band:200..250 --budget 2M --min-vowels 1 --out runs/design
    """
    from pipeline.cli import render
    from pipeline.design import DesignConfig, parse_budget
    from pipeline.design import design_dice as run_design
    from pipeline.lexicon import default_dictionary

    say = report_to(summary_json, typer.echo)
    with run_summary_json(summary_json, out, "design-dice", DESIGN_SUMMARY_FIELDS) as outcome:
        cfg = DesignConfig(
            **options_for(
                ctx,
                DesignConfig,
                dictionary=dictionary or default_dictionary(),
                out=out,
                budget=parse_budget(budget),
            )
        )
        if not quiet:
            announce_kernel_compile()
        with ExitStack() as stack:
            bar = None if quiet else stack.enter_context(render.design_progress())
            res = run_design(cfg, progress=bar, note=note)
        outcome.update(render.design_outcome(res))
    for line in render.design_lines(res):
        say(line)
