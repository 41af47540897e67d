"""Times the three solving algorithms on the same boards: ``python -m benchmarks.perf_algorithms``.

Scenarios (each algorithm gets identical boards and lexicon; the best of ``--repeat`` runs is
reported, after a warm-up run that compiles or loads the numba code and builds the word table):

* 4x4 boards rolled with the ``new`` dice, ENABLE2K, standard rules;
* 6x6 boards rolled with the ``superbig`` dice (qu/th/in/er/an/he faces and blanks), ENABLE2K,
  Super Big Boggle rules;
* one 100x100 board of uniform letters against 50 words drawn from ENABLE2K;
* with ``--big SPEC`` (repeatable; the lists are merged): 6x6 superbig boards against the merged
  list, for the classic claim that word-driven DP solves a 6x6 board against a 600,000-word
  list in milliseconds.

Algorithms: ``trie`` (numba trie-pruned DFS), ``dp`` (word-driven DP sharing rows across words
with a common prefix), ``dp/word`` (the textbook DP: every word from row 1), ``binary``
(binary-search backtracking). Each row prints total and per-board time, the ratio to ``trie``,
and whether the results (words, score, dead cells) equal trie's.

Reference figures (2-core shared machine, ``make bench-algorithms``; noisy): see docs/performance.md.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import numpy as np
import typer

from benchmarks._cli import RepeatOpt, bench_app
from pipeline.boards import BLANK, Board, generate_boards, generator_alphabet
from pipeline.lexicon import (
    CompiledLexicon,
    DropReport,
    Lexicon,
    compile_words,
    default_dictionary,
    load_lexicon,
)
from pipeline.lexicon.trie import Alphabet
from pipeline.rules import get_rules
from pipeline.solve import BoardResult
from pipeline.solve._algorithms import solve_with
from pipeline.solve._dp import solve_dp
from pipeline.solve._letters import word_table

app = bench_app()

VARIANTS = ("trie", "dp", "dp/word", "binary")


def _lexicon(words: list[str], name: str, rules_name: str, faces: set[str], revisit: bool) -> CompiledLexicon:
    lex = Lexicon(name, name, "", sorted(set(words)), DropReport(len(words)))
    return compile_words(lex, Alphabet.english().union(faces), get_rules(rules_name, revisit=revisit))


def _roll(dice: str, size: int, count: int, seed: int) -> list[Board]:
    alphabet = generator_alphabet(dice, size, size)
    codes = generate_boards(dice, alphabet, np.random.default_rng(seed), count, size, size)
    return [Board(size, size, tuple(alphabet.faces[i] if i >= 0 else BLANK for i in row)) for row in codes]


def _run(variant: str, boards: Sequence[Board], lexicon: CompiledLexicon) -> list[BoardResult]:
    if variant == "dp/word":
        return solve_dp(boards, lexicon, share_prefixes=False)
    return solve_with(variant, boards, lexicon)


def _key(results: list[BoardResult]) -> list[tuple[list[str], int, int]]:
    return [(r.words, r.score, r.dead_cells) for r in results]


def _scenario(title: str, boards: list[Board], lexicon: CompiledLexicon, repeat: int) -> None:
    t0 = time.perf_counter()
    word_table(lexicon)
    t_table = time.perf_counter() - t0
    times: dict[str, float] = {}
    keys = {}
    for variant in VARIANTS:
        _run(variant, boards[:1], lexicon)  # compile / load the numba code
        best = float("inf")
        for _ in range(max(1, repeat)):
            t0 = time.perf_counter()
            res = _run(variant, boards, lexicon)
            best = min(best, time.perf_counter() - t0)
        times[variant] = best
        keys[variant] = _key(res)
    n = len(boards)
    mean_words = sum(len(k[0]) for k in keys["trie"]) / n
    typer.echo(
        f"\n{title}: {n} board(s), lexicon {lexicon.n_words:,} words, "
        f"{mean_words:.1f} words found per board (word table built once in {t_table:.3f} s)"
    )
    typer.echo(f"  {'algorithm':<9} {'total s':>10} {'ms/board':>11} {'vs trie':>10}  same as trie")
    for variant in VARIANTS:
        t = times[variant]
        ratio = t / times["trie"] if times["trie"] > 0 else float("nan")
        same = "yes" if keys[variant] == keys["trie"] else "NO"
        typer.echo(f"  {variant:<9} {t:>10.4f} {1000 * t / n:>11.3f} {ratio:>9.1f}x  {same}")
    fastest = min(VARIANTS, key=lambda v: times[v])
    typer.echo(f"  fastest: {fastest}")


@app.command()
def main(
    dictionary: Annotated[
        str | None, typer.Option(help="Word list for the 4x4/6x6/100x100 scenarios (make: ENABLE2K).")
    ] = None,
    count4: Annotated[int, typer.Option(help="4x4 boards (new dice).")] = 100,
    count6: Annotated[int, typer.Option(help="6x6 boards (superbig dice).")] = 10,
    big: Annotated[
        list[str] | None, typer.Option(help="Word lists merged into a big lexicon for 6x6 (repeatable).")
    ] = None,
    big_count: Annotated[int, typer.Option(help="6x6 boards against the big lexicon.")] = 5,
    seed: Annotated[int, typer.Option(help="Seed for boards and the 50-word sample.")] = 0,
    repeat: RepeatOpt = 3,
    revisit: Annotated[bool, typer.Option(help="Every scenario under the revisit rule.")] = False,
) -> None:
    if revisit:
        typer.echo("rules: revisit (cells may repeat, each step moves)")
    spec = dictionary or default_dictionary()
    words = load_lexicon(spec).words
    name = Path(spec).name

    boards4 = _roll("new", 4, count4, seed)
    lex4 = _lexicon(words, name, "boggle", {f for b in boards4 for f in b.faces}, revisit)
    _scenario(f"4x4 new dice, {name}", boards4, lex4, repeat)

    boards6 = _roll("superbig", 6, count6, seed)
    superbig_faces = generator_alphabet("superbig", 6, 6).faces
    lex6 = _lexicon(words, name, "superbig", set(superbig_faces), revisit)
    _scenario(f"6x6 superbig dice, {name}", boards6, lex6, repeat)

    rng = random.Random(seed)
    sample = rng.sample([w for w in words if len(w) >= 3 and w.isascii() and w.isalpha()], 50)
    letters = list(Alphabet.english().faces)
    big_board = Board(100, 100, tuple(rng.choice(letters) for _ in range(10_000)))
    lex100 = _lexicon(sample, f"50 words of {name}", "boggle", set(letters), revisit)
    _scenario("100x100 uniform letters, 50 words", [big_board], lex100, repeat)

    if big:
        t0 = time.perf_counter()
        merged: set[str] = set()
        for spec in big:
            merged.update(load_lexicon(spec).words)
        lex_big = _lexicon(sorted(merged), " + ".join(big), "superbig", set(superbig_faces), revisit)
        typer.echo(
            f"\nbig lexicon {' + '.join(big)}: {len(merged):,} distinct entries, "
            f"{lex_big.n_words:,} spellable with the English letters and superbig faces "
            f"(compiled in {time.perf_counter() - t0:.1f} s)"
        )
        _scenario("6x6 superbig dice, big lexicon", boards6[:big_count], lex_big, repeat)


if __name__ == "__main__":
    app()
