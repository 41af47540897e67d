"""The cost of a whole proof from a sampled one: ``make estimate-4x4``.

A ``boggle prove --limit-classes N --sample-seed S`` run proves N canonical classes drawn at
random; its certificate has the seconds each class took. The whole proof's cost is estimated as
the mean seconds a class times the number of canonical classes of the shape and recipe, with a
95% interval from resampling the classes (bootstrap of the mean: the cost is heavy-tailed, a
few classes take most of it, so the interval is wide and is printed). The certificate's
seconds are a worker's wall time on its class: its CPU time with no more workers than cores,
above it when other work shared the cores. Parts written since 2026-12-02 also record their
worker's CPU seconds, and their classes' wall seconds are scaled to it.

Example::

    python -m benchmarks.prove_estimate runs/sample-4x4 --compare-cpu-h 23000
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import numpy as np
import typer

from benchmarks._cli import bench_app
from pipeline.best.prove._status import bootstrap_total as estimate
from pipeline.best.prove._status import class_costs

app = bench_app()


def class_seconds(out: Path) -> tuple[np.ndarray, int, int]:
    """Each class's seconds (see :func:`class_costs`): (seconds, parts, parts scaled)."""
    _, seconds, n_parts, scaled = class_costs(out)
    return seconds, n_parts, scaled


@app.command()
def main(
    out: Annotated[Path, typer.Argument(help="The sampled proof's --out.")],
    compare_cpu_h: Annotated[
        float | None, typer.Option(help="A published CPU-hours figure to print the ratio against.")
    ] = None,
) -> None:
    from pipeline.best.prove._worker import proof_problem

    problem, config, identity = proof_problem(out)
    n_classes = len(problem.space.canonical_ids())
    seconds, n_parts, scaled = class_seconds(out)
    est = estimate(seconds, n_classes)
    typer.echo(f"sample: {out} ({config['shape']}, T={config['threshold']}, classes {identity['classes']!r})")
    typer.echo(
        f"seconds: {scaled} of {n_parts} parts record their worker's CPU (their classes' wall seconds "
        f"are scaled to it); the other parts' are wall seconds"
    )
    top = np.sort(seconds)[-max(1, len(seconds) // 20) :].sum() / seconds.sum()
    typer.echo(
        f"classes proved: {len(seconds):,} of {n_classes:,} canonical; seconds a class: mean "
        f"{seconds.mean():.1f}, median {np.median(seconds):.1f}, max {seconds.max():.0f}; the top 5% "
        f"of classes took {top:.0%} of the time"
    )
    line = (
        f"estimate for all {n_classes:,} classes: {est['cpu_h']:,.0f} CPU-h "
        f"(95% bootstrap interval {est['low_cpu_h']:,.0f}-{est['high_cpu_h']:,.0f})"
    )
    if compare_cpu_h:
        line += f"; against {compare_cpu_h:,.0f} CPU-h: {est['cpu_h'] / compare_cpu_h:.2f}"
    typer.echo(line)


if __name__ == "__main__":
    app()
