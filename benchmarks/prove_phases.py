"""Where the tree prover's CPU goes: ``python -m benchmarks.prove_phases``.

Proves the classes ``boggle prove`` would choose with the same options (a shape, a threshold,
a bucket spec, and ``--limit-classes``/``--sample-seed`` or ``--class-ids``, parsed alike; the same sample
as ``make bench-prove``'s recipes with their seed) in this process, round after round over the
same classes, and prints each round's CPU time (``time.process_time``) split into the prover's
phases: building a class's tree (the path walk, the radix sort, the pass from the sorted paths
into the tree), branching on it (lifting and forcing,
:func:`pipeline.best.prove.tree._eval.tree_branch`) and scoring the leaves exactly. The first round
pays numba's start-up (loading the cached kernels); the later ones are the steady state a
worker runs in. The phases are timed around each kernel call, a few calls a class. No C++ is
needed; only figures of one run compare on a shared machine.

Example (10 of the ``4x4`` recipe's classes)::

    python -m benchmarks.prove_phases --shape 4x4 --threshold 3625 \\
        --classes "aeijou bcdfgmpqvwxz hklnrsty, corner:aeiosuy bcdfghjklmnpqrtvwxz" \\
        --limit-classes 10 --sample-seed 21 --per-class
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import typer

from benchmarks._cli import ClassesOpt, DictionaryOpt, ShapeOpt, ThresholdOpt, bench_app
from pipeline.best.prove._config import ProveConfig, parse_class_ids
from pipeline.best.prove.tree import DEDUP_RATIO, LIFT_RATIO
from pipeline.errors import BoggleError

app = bench_app()

#: The phases, in the order printed; ``build`` holds ``walk``, ``sort``, ``derive``, ``dedup``,
#: ``value`` and ``tree`` (and the build's own bookkeeping): a class's paths walked and sorted, a
#: sub-class's read off its parent's (the deduping force: derived, the redundant ones dropped),
#: a tree's value without the tree, the tree; ``branch`` the lifting and the forcing.
PHASES = ("build", "walk", "sort", "derive", "dedup", "value", "tree", "branch", "score")


@contextmanager
def timed_phases(prover: Any, clock: dict[str, float]) -> Iterator[None]:
    """Add each phase's CPU seconds to ``clock`` while the block runs: the builder's and the
    tree module's kernels and the prover's build and scoring calls are wrapped, and put back on
    exit."""
    import pipeline.best.prove.tree._builder as builder  # the kernels are wrapped where called
    import pipeline.best.prove.tree._prover as tree

    def wrap(fn: Callable[..., Any], phase: str) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            t = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                clock[phase] += time.process_time() - t

        return timed

    kernels = {
        (builder, "collect_paths"): "walk",
        (builder, "radix_sort"): "sort",
        (builder, "derive_paths"): "derive",
        (builder, "drop_redundant"): "dedup",
        (builder, "tree_value"): "value",
        (builder, "tree_from_paths"): "tree",
        (tree, "tree_branch"): "branch",
    }
    saved = {key: getattr(*key) for key in kernels}
    methods = ("collect", "derive", "value", "build")
    try:
        for (module, name), phase in kernels.items():
            setattr(module, name, wrap(saved[module, name], phase))
        for name in methods:
            setattr(prover.builder, name, wrap(getattr(prover.builder, name), "build"))
        prover._enumerate_all = wrap(prover._enumerate_all, "score")
        yield
    finally:
        for (module, name), fn in saved.items():
            setattr(module, name, fn)
        for name in methods:
            vars(prover.builder).pop(name, None)  # the classes' own methods again
        vars(prover).pop("_enumerate_all", None)


def phase_rounds(
    cfg: ProveConfig,
    rounds: int,
    per_class: Callable[..., None] | None = None,
    lift_ratio: float = LIFT_RATIO,
    dedup_ratio: float = DEDUP_RATIO,
) -> list[dict[str, float]]:
    """Each round's CPU seconds over the classes ``cfg`` chooses: ``total`` and per phase
    (:data:`PHASES`), with ``classes``, ``nodes`` (branch nodes) and ``scored`` (boards scored
    exactly).
    ``per_class(round, class id, seconds, phases)`` is called after each class when given."""
    from pipeline.best.prove._job import plan_proof
    from pipeline.best.prove.tree import TreeProver
    from pipeline.boards import geometry

    run = plan_proof(cfg)
    problem = run.problem
    prover = TreeProver(
        geometry(problem.rows, problem.cols),
        problem.lexicon,
        problem.packed,
        cfg.threshold,
        cfg.enumerate_max,
        lift_ratio=lift_ratio,
        dedup_ratio=dedup_ratio,
    )
    digits = problem.space.digits(run.ids)
    out = []
    for r in range(rounds):
        clock = dict.fromkeys(PHASES, 0.0)
        nodes = scored = 0
        t0 = time.process_time()
        with timed_phases(prover, clock):
            for cid, d in zip(run.ids.tolist(), digits, strict=True):
                before, t = dict(clock), time.process_time()
                got = prover.prove(problem.space.masks(d))
                nodes, scored = nodes + got.nodes, scored + got.boards_scored
                if per_class is not None:
                    per_class(r, cid, time.process_time() - t, {k: clock[k] - before[k] for k in PHASES})
        out.append(
            {
                "total": time.process_time() - t0,
                **clock,
                "classes": len(run.ids),
                "nodes": nodes,
                "scored": scored,
            }
        )
    return out


def _phases_line(seconds: float, phases: dict[str, float]) -> str:
    return f"{seconds:8.2f} s = " + ", ".join(f"{k} {phases[k]:.2f}" for k in PHASES)


@app.command()
def main(
    dictionary: DictionaryOpt = "enable2k",
    shape: ShapeOpt = "3x4",
    threshold: ThresholdOpt = 1500,
    classes: ClassesOpt = None,
    limit_classes: Annotated[int | None, typer.Option(help="Prove this many classes (a sample).")] = None,
    sample_seed: Annotated[int | None, typer.Option(help="With --limit-classes: a random sample.")] = None,
    class_ids: Annotated[
        str | None,
        typer.Option(help="Canonical class ids (as boggle prove --class-ids: ID,ID,... or @FILE)."),
    ] = None,
    rounds: Annotated[int, typer.Option(min=1, help="Rounds over the same classes.")] = 2,
    per_class: Annotated[bool, typer.Option(help="A line per class as well.")] = False,
    lift_ratio: Annotated[
        float, typer.Option(help="Lift while a sub-class's bound is above this times T.")
    ] = LIFT_RATIO,
    dedup_ratio: Annotated[
        float,
        typer.Option(
            help="The deduping force while a heavy sub-class's bound is above this times T (-1: never)."
        ),
    ] = DEDUP_RATIO,
) -> None:

    def each(r: int, cid: int, seconds: float, phases: dict[str, float]) -> None:
        typer.echo(f"  round {r + 1} class {cid:>9} {_phases_line(seconds, phases)}")

    try:
        cfg = ProveConfig(
            dictionary,
            shape=shape,
            threshold=threshold,
            classes=classes,
            limit_classes=limit_classes,
            sample_seed=sample_seed,
            class_ids=parse_class_ids(class_ids),
        )
        got = phase_rounds(cfg, rounds, each if per_class else None, lift_ratio, dedup_ratio)
    except BoggleError as exc:
        typer.echo(f"prove_phases: {exc}", err=True)
        raise typer.Exit(2) from None
    for r, split in enumerate(got):
        typer.echo(
            f"round {r + 1}, {int(split['classes']):,} classes, lift ratio {lift_ratio:g}, "
            f"dedup ratio {dedup_ratio:g}: "
            f"{_phases_line(split['total'], split)}; {int(split['nodes']):,} branch nodes, "
            f"{int(split['scored']):,} boards scored"
        )


if __name__ == "__main__":
    app()
