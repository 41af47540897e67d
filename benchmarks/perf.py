"""I/O-free solver benchmark: ``python -m benchmarks.perf [options]``.

Solves N random boards (uniform letters a-z, q = Qu, fixed seed) or the compact boards of a
file (one a line, so other solvers can be timed on identical boards) in one process, with word
ids collected. The last line is ``<N> boards in <T> s = <R> boards/s``.

Reference figures (2-core CI-class machine shared with other work, ENABLE2K, ``make bench``):
about 280,000 4x4 boards/s and 150,000 5x5 boards/s in one process; a 100x100 board in about
0.02 s. ``--target-rate``, ``--target-seconds`` and ``--target-trie-mb`` print a
figure beside its target and ratio; ``make bench-vs-cpp`` compares with the field's C++ solver.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import numpy as np
import typer

from benchmarks._cli import RepeatOpt, ShapeOpt, bench_app
from pipeline.boards import parse_compact, parse_shape, roll_letters
from pipeline.lexicon import compile_for_boards, compile_lexicon, default_dictionary
from pipeline.lexicon.trie import Alphabet
from pipeline.rules import resolve_rules
from pipeline.solve import encode_boards, solve_arrays
from pipeline.solve._reference import ReferenceSolver

app = bench_app()


@app.command()
def main(
    file: Annotated[Path | None, typer.Option(help="Compact boards, one a line.")] = None,
    count: Annotated[int, typer.Option(help="Random boards to solve (without --file).")] = 200_000,
    shape: ShapeOpt = "4x4",
    dictionary: Annotated[str | None, typer.Option(help="Word list file or tanglet:<lang>.")] = None,
    rules: Annotated[str | None, typer.Option(help="Rule preset (default: by shape).")] = None,
    reference: Annotated[int, typer.Option(help="Also time the reference solver on K boards.")] = 0,
    seed: Annotated[int, typer.Option(help="Seed for random boards.")] = 0,
    repeat: RepeatOpt = 3,
    target_rate: Annotated[float, typer.Option(help="Print the rate against this target (boards/s).")] = 0.0,
    target_seconds: Annotated[float, typer.Option(help="Print seconds per board against this target.")] = 0.0,
    target_trie_mb: Annotated[
        float, typer.Option(help="Print the trie's size against this target (MB).")
    ] = 0.0,
) -> None:
    rows, cols = parse_shape(shape)
    rule_set = resolve_rules(rules, (rows, cols))
    spec = dictionary or default_dictionary()

    t0 = time.perf_counter()
    compile_lexicon(spec, Alphabet.english(), rule_set, use_cache=False)
    cold = time.perf_counter() - t0
    compile_for_boards(spec, rule_set)  # make sure the cache holds it
    t0 = time.perf_counter()
    lexicon = compile_for_boards(spec, rule_set)
    warm = time.perf_counter() - t0
    typer.echo(
        f"lexicon {lexicon.name}: {lexicon.n_words} words, {lexicon.trie.n_nodes} nodes, "
        f"{lexicon.trie.nbytes / 1e6:.2f} MB; compile {cold:.3f} s cold, {warm:.3f} s cached"
    )
    if target_trie_mb:
        mb = lexicon.trie.nbytes / 1e6
        typer.echo(f"trie size: {mb:.2f} MB, target < {target_trie_mb:g} MB, ratio {mb / target_trie_mb:.2f}")

    if file is not None:
        lines = [ln for ln in file.read_text(encoding="utf-8").splitlines() if ln.strip()]
        parsed = [parse_compact(ln, (rows, cols)) for ln in lines]
        boards = encode_boards(parsed, lexicon)
    else:
        rng = np.random.default_rng(seed)
        boards = roll_letters(lexicon.alphabet, rng, count, rows * cols)
    n = len(boards)

    solve_arrays(boards[: min(n, 100)], rows, cols, lexicon)  # compile / load the kernel
    best = float("inf")
    result = None
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        result = solve_arrays(boards, rows, cols, lexicon, collect=True)
        best = min(best, time.perf_counter() - t0)
    assert result is not None
    typer.echo(
        f"mean score {result.score.mean():.2f}, mean words {result.n_words.mean():.2f}, "
        f"total score {int(result.score.sum(dtype=np.int64))}, "
        f"{result.offsets[-1]} word ids collected"
    )
    rate = n / best
    if reference > 0:
        k = min(reference, n)
        solver = ReferenceSolver(lexicon.words, rule_set)
        from pipeline.boards import Board

        faces = lexicon.alphabet.faces
        ref_boards = [Board(rows, cols, tuple(faces[i] if i >= 0 else "" for i in row)) for row in boards[:k]]
        t0 = time.perf_counter()
        ref_scores = [solver.solve(b).score for b in ref_boards]
        t_ref = time.perf_counter() - t0
        agree = all(int(s) == r for s, r in zip(result.score[:k], ref_scores, strict=True))
        ref_rate = k / t_ref
        typer.echo(
            f"reference: {k} boards in {t_ref:.3f} s = {ref_rate:,.1f} boards/s; "
            f"kernel/reference = {rate / ref_rate:,.0f}x; scores agree: {agree}"
        )
    if target_seconds:
        per = best / n
        typer.echo(
            f"{shape}: {per:.4f} s a board, target < {target_seconds:g} s, ratio {per / target_seconds:.2f}"
        )
    if target_rate:
        typer.echo(
            f"{shape}: {rate:,.0f} boards/s, target >= {target_rate:,.0f}, ratio {rate / target_rate:.2f}"
        )
    typer.echo(f"{n} boards in {best:.3f} s = {rate:,.0f} boards/s")


if __name__ == "__main__":
    app()
