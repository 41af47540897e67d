"""Commands on boards and words: solve, lookup, words, check, queens, generate."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from pipeline.cli._options import (
    Algorithm,
    DictionaryOpt,
    MinLengthOpt,
    PresetOpt,
    RevisitOpt,
    RulesName,
    RulesOpt,
    ShapeOpt,
    dice_option,
    placement_option,
    value,
)
from pipeline.cli._outcome import announce_kernel_compile, err, handle_errors


@handle_errors
def solve(
    boards: Annotated[
        list[str] | None, typer.Argument(metavar="BOARD", help="Compact boards, e.g. perslatgsineters.")
    ] = None,
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

    Example: boggle solve perslatgsineters --dictionary enable2k
    """
    from pipeline.cli import render
    from pipeline.solve import prepare_solve

    job = prepare_solve(
        boards or [],
        file,
        shape=shape,
        dictionary=dictionary,
        rules=value(rules),
        min_length=min_length,
        revisit=revisit,
        algorithm=algorithm.value,
    )
    if verbose:
        err(f"lexicon {job.lexicon.name}: {job.lexicon.report.summary()}")
    announce_kernel_compile(job.kernel_module)
    for res in job.results():
        for line in [render.solve_json(res, job.rules.name)] if as_json else render.solve_text(res):
            typer.echo(line)


@handle_errors
def lookup(
    words: Annotated[list[str], typer.Argument(metavar="WORD", help="Words to look up.")],
    dictionary: DictionaryOpt = None,
    rules: PresetOpt = RulesName.boggle,
    min_length: MinLengthOpt = None,
) -> None:
    """Say whether each WORD is a word, a prefix of a word, or neither in the lexicon.

    Example: boggle lookup quit qu qat --dictionary enable2k
    """
    from pipeline.lexicon import compile_for_boards, default_dictionary
    from pipeline.rules import resolve_rules

    rule_set = resolve_rules(rules.value, min_length=min_length)
    lexicon = compile_for_boards(dictionary or default_dictionary(), rule_set)
    for w in words:
        typer.echo(f"{w} {lexicon.trie.lookup(w)}")


@handle_errors
def words(
    dictionary: DictionaryOpt = None,
    rules: PresetOpt = RulesName.boggle,
    min_length: MinLengthOpt = None,
    max_length: Annotated[int | None, typer.Option("--max-length", min=1, help="Longest word kept.")] = None,
    dice: Annotated[
        str | None,
        dice_option("Keep only words this dice set can spell, each die on one cell (one Z die: no zzz)."),
    ] = None,
) -> None:
    """Print the lexicon's playable words in order, after pruning the trie.

    Example: boggle words --dice new --max-length 4 --dictionary enable2k
    """
    from pipeline.boards import load_dice_set
    from pipeline.lexicon import default_dictionary, playable_words
    from pipeline.rules import resolve_rules

    rule_set = resolve_rules(rules.value, min_length=min_length)
    dice_set = load_dice_set(dice) if dice else None
    for word in playable_words(
        dictionary or default_dictionary(), rule_set, max_length=max_length, dice=dice_set
    ):
        typer.echo(word)


@handle_errors
def check(
    board_and_words: Annotated[
        list[str] | None,
        typer.Argument(metavar="BOARD WORD", help="A compact board (q = Qu, . blank), then the words."),
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
    from pipeline.solve import run_check

    for line in run_check(board_and_words or [], contest=contest, shape=shape, revisit=revisit):
        typer.echo(line)


@handle_errors
def queens(
    n: Annotated[int, typer.Argument(min=1, metavar="N", help="Board size: N queens on an N x N board.")],
    show: Annotated[
        bool, typer.Option("--show", help="Print every placement with its column/diagonal occupancy tables.")
    ] = False,
) -> None:
    """Count the N-queens solutions with the iterative search-tree (robot) traversal.

    Example: boggle queens 8 --show
    """
    from pipeline.solve import queens_report

    for line in queens_report(n, show=show):
        typer.echo(line)


@handle_errors
def generate(
    dice: Annotated[str, dice_option("Dice set.")] = "new",
    count: Annotated[int, typer.Option("--count", "-n", min=0, help="Boards to generate.")] = 10,
    seed: Annotated[int, typer.Option("--seed", min=0, help="Seed (same seed, same boards).")] = 0,
    shape: ShapeOpt = None,
    chunk_size: Annotated[
        int | None,
        typer.Option("--chunk-size", min=1, help="Chunk size of the run to match (default as boggle run)."),
    ] = None,
    placement: Annotated[
        str | None,
        placement_option("Where the dice may lie, as boggle run --placement (e.g. 'qu: corner, edge')."),
    ] = None,
) -> None:
    """Print random boards in compact notation, one a line (the boards `boggle run` would roll).

    Example: boggle generate --dice new --count 1000 --seed 42 > boards.txt
    """
    from pipeline.boards import generate_compact, parse_shape

    blocks = generate_compact(dice, count, seed, parse_shape(shape) if shape else None, chunk_size, placement)
    for block in blocks:
        sys.stdout.write(block)
    sys.stdout.flush()
