"""A proof's certificate against a published list of best boards: ``python -m
benchmarks.prove_published OUT LIST``.

``LIST`` has one ``board: score`` a line (compact, row-major), as the field's
``results/best-boards-3x4.enable2k.txt`` in hybrid-boggle. For each board it checks that the
project's solver gives the published score and finds the canonical class of the proof's recipe
that holds the board; where the certificate has that class, its row must have found the board
with that score. Once the proof is finished, the published boards at or above its threshold
must be exactly its ``_boards.pq``. Exit 0 when everything checked agrees, 1 otherwise.

Example::

    python -m benchmarks.prove_published runs/prove-3x4 \
        "$ANCHOR_DIR"/hybrid-boggle/results/best-boards-3x4.enable2k.txt
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import numpy as np
import pyarrow.parquet as pq
import typer

from benchmarks._cli import bench_app
from pipeline.best.prove._classes import ClassSpace

app = bench_app()


def class_of(space: ClassSpace, faces: np.ndarray) -> int:
    """The canonical class id (the smallest over the shape's symmetries) holding a board; each
    symmetry maps a cell to one with the same buckets, so an image's digits are a permutation."""
    digits = np.array(
        [next(k for k, b in enumerate(space.cell_buckets[c]) if f in b) for c, f in enumerate(faces)]
    )
    return min(int(space.ids(digits[perm])) for perm in space.perms)


@app.command()
def main(
    out: Annotated[Path, typer.Argument(help="The proof's --out.")],
    published: Annotated[Path, typer.Argument(help="Lines 'board: score' (compact, row-major).")],
) -> None:
    from pipeline.best.prove._certificate import canonical_compact
    from pipeline.best.prove._job import BOARDS_FILE
    from pipeline.best.prove._worker import proof_problem
    from pipeline.boards import parse_compact
    from pipeline.solve import encode_boards, solve_arrays

    problem, config, _ = proof_problem(out)
    rows, cols, threshold = problem.rows, problem.cols, int(config["threshold"])
    listed: list[tuple[str, int]] = []
    for line in published.read_text(encoding="utf-8").splitlines():
        if line.strip():
            text, pts = line.rsplit(":", 1)
            listed.append((text.strip(), int(pts)))
    coded = encode_boards([parse_compact(b, (rows, cols)) for b, _ in listed], problem.lexicon)
    ours = solve_arrays(coded, rows, cols, problem.lexicon, collect=False).score
    bad = [
        f"{b}: published {s}, our solver {int(o)}" for (b, s), o in zip(listed, ours, strict=True) if o != s
    ]
    typer.echo(
        f"{len(listed)} published boards; our solver gives {len(listed) - len(bad)} of them their score"
    )
    rows_by_class: dict[int, dict[str, int]] = {}
    for part in sorted(out.glob("part-*.parquet")):
        t = pq.read_table(part, columns=["class_id", "found_boards", "found_scores"])
        for cid, fb, fs in zip(*(t.column(i).to_pylist() for i in range(3)), strict=True):
            rows_by_class[cid] = {canonical_compact(b, rows, cols): s for b, s in zip(fb, fs, strict=True)}
    done = 0
    for (board, score), f in zip(listed, coded, strict=True):
        found = rows_by_class.get(class_of(problem.space, f))
        if found is None or score < threshold:
            continue
        done += 1
        if found.get(canonical_compact(board, rows, cols)) != score:
            bad.append(f"{board} {score}: its class is certified without it")
    typer.echo(f"{done} of them at or above {threshold} fall in classes the certificate holds")
    if (out / BOARDS_FILE).exists() and (out / "_SUCCESS").exists():
        table = pq.read_table(out / BOARDS_FILE).to_pydict()
        certified = dict(zip(table["board"], table["score"], strict=True))
        want = {canonical_compact(b, rows, cols): s for b, s in listed if s >= threshold}
        same = certified == want
        typer.echo(f"finished proof: {len(certified)} boards >= {threshold}, the published list's: {same}")
        if not same:
            bad.append("the certified boards differ from the published ones")
    for line in bad:
        typer.echo(f"MISMATCH {line}")
    raise typer.Exit(1 if bad else 0)


if __name__ == "__main__":
    app()
