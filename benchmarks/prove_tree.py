"""Tree prover vs sum/max prover on the same classes: ``python -m benchmarks.prove_tree``.

Draws a random sample of the shape's canonical classes (fixed seed), then also the classes
with the highest cheap root bound among ``--top-pool`` random ones, and proves each class with
both provers alternately (so machine load hits both alike). Prints per-class seconds and
branch nodes of each, their ratio, and the full-shape time extrapolated from the random sample.
The sum/max prover can take minutes on a strong class, so ``--sumax-budget`` caps its total
time per group: classes beyond it are timed with the tree prover only.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Annotated

import numpy as np
import typer

from benchmarks._cli import ClassesOpt, DictionaryOpt, ShapeOpt, ThresholdOpt, bench_app
from pipeline.best.prove._search import ClassProver
from pipeline.best.prove._worker import load_problem
from pipeline.best.prove.tree import TreeProver
from pipeline.boards import geometry, parse_shape

app = bench_app()


def _time(prover: ClassProver | TreeProver, masks: np.ndarray) -> tuple[float, float, int, int]:
    """(wall s, CPU s, branch nodes, boards found) of proving one class."""
    t0, c0 = time.perf_counter(), time.process_time()
    res = prover.prove(masks)
    return time.perf_counter() - t0, time.process_time() - c0, res.nodes, len(res.found)


def _group(
    name: str,
    ids: np.ndarray,
    tree: TreeProver,
    sumax: ClassProver,
    masks_for: Callable[[int], np.ndarray],
    budget: float,
) -> tuple[float, float]:
    """Prove ``ids`` with both provers; returns the tree prover's and sum/max prover's mean
    CPU seconds per class (the latter over the classes it ran on, nan if none)."""
    t_tree, c_tree, n_tree, t_sum, c_sum, n_sum, both_tree, mismatch = [], [], [], [], [], [], [], 0
    spent = 0.0
    for cid in ids:
        masks = masks_for(int(cid))
        tt, ct, nt, ft = _time(tree, masks)
        t_tree.append(tt)
        c_tree.append(ct)
        n_tree.append(nt)
        if spent < budget:
            ts, cs, ns, fs = _time(sumax, masks)
            spent += ts
            t_sum.append(ts)
            c_sum.append(cs)
            n_sum.append(ns)
            both_tree.append(tt)
            mismatch += ft != fs
    typer.echo(f"== {name}: {len(ids)} classes")
    typer.echo(
        f"tree:  {np.mean(t_tree) * 1e3:9.2f} ms/class wall, {np.mean(c_tree) * 1e3:.2f} CPU "
        f"(max {np.max(t_tree) * 1e3:.1f} ms), "
        f"{np.mean(n_tree):8.1f} nodes/class, total {np.sum(t_tree):.2f} s"
    )
    if t_sum:
        st, bt = float(np.sum(t_sum)), float(np.sum(both_tree))
        typer.echo(
            f"sumax: {np.mean(t_sum) * 1e3:9.2f} ms/class wall, {np.mean(c_sum) * 1e3:.2f} CPU, "
            f"on {len(t_sum)} classes, "
            f"{np.mean(n_sum):8.1f} nodes/class, total {st:.2f} s; tree on the same: {bt:.2f} s, "
            f"{np.mean(n_tree[: len(n_sum)]):.1f} nodes/class; speed-up x{st / max(bt, 1e-9):.1f}; "
            f"boards-found mismatches: {mismatch}"
        )
    return float(np.mean(c_tree)), float(np.mean(c_sum)) if c_sum else float("nan")


@app.command()
def main(
    dictionary: DictionaryOpt,
    shape: ShapeOpt = "3x3",
    threshold: ThresholdOpt = 500,
    classes: ClassesOpt = None,
    sample: Annotated[int, typer.Option(help="Random classes to time.")] = 200,
    top: Annotated[int, typer.Option(help="Strongest classes to time (0 = none).")] = 50,
    top_pool: Annotated[int, typer.Option(help="Random classes ranked for --top (0 = all).")] = 0,
    sumax_budget: Annotated[float, typer.Option(help="Seconds per group for the sum/max prover.")] = 120.0,
    seed: Annotated[int, typer.Option(help="Sample seed.")] = 0,
) -> None:
    rows, cols = parse_shape(shape)
    problem = load_problem(dictionary, f"{rows}x{cols}", "boggle", None, classes)
    geo = geometry(rows, cols)
    tree = TreeProver(geo, problem.lexicon, problem.trie, threshold)
    sumax = ClassProver(geo, problem.lexicon, problem.trie, threshold)
    space = problem.space
    t0 = time.perf_counter()
    ids = space.canonical_ids()
    typer.echo(
        f"{len(ids):,} canonical classes of {space.n_classes:,} (buckets per cell: "
        f"{' '.join(map(str, space.radices.tolist()))}), listed in {time.perf_counter() - t0:.2f} s"
    )

    def masks_for(cid: int) -> np.ndarray:
        return space.masks(space.digits(np.array([cid]))[0])

    rng = np.random.default_rng(seed)
    # warm the numba kernels (cache load or compile) outside the timings
    tree.prove(masks_for(int(ids[-1])))
    sumax.prove(masks_for(int(ids[0])))
    picked = rng.choice(ids, size=min(sample, len(ids)), replace=False)
    mean_tree, mean_sum = _group(f"random sample (seed {seed})", picked, tree, sumax, masks_for, sumax_budget)
    typer.echo(
        f"extrapolated full {rows}x{cols} ({len(ids)} classes), CPU seconds: "
        f"tree {mean_tree * len(ids):.0f} s, "
        f"sumax {mean_sum * len(ids):.0f} s (sumax over the classes within its budget)"
    )
    if top <= 0:
        return
    pool = ids if top_pool <= 0 else rng.choice(ids, size=min(top_pool, len(ids)), replace=False)
    t0 = time.perf_counter()
    bounds = np.array([sumax.bound(masks_for(int(c))) for c in pool])
    strongest = pool[np.argsort(-bounds, kind="stable")[:top]]
    typer.echo(
        f"ranked {len(pool)} classes by the cheap root bound in {time.perf_counter() - t0:.1f} s; "
        f"top {top} bounds {int(bounds.max())}..{int(np.sort(bounds)[-min(top, len(bounds))])}"
    )
    _group(f"{top} highest root bounds", strongest, tree, sumax, masks_for, sumax_budget)


if __name__ == "__main__":
    app()
