"""A whole proof's cost from a stratified sample of its classes: ``python -m benchmarks.prove_strata``.

A class's cost is heavy-tailed (in the Greek 3x4 certificate the top 5% of classes took 44% of
the CPU), so the mean of a simple random sample lands far from the truth whenever it holds
one heavy class too many or too few, and its bootstrap interval is too narrow. Stratifying on
something cheap that predicts the cost fixes most of that. The design has two phases:

1. **pilot**: a small simple random sample of the recipe's canonical classes, proved as usual
   (``boggle prove --limit-classes 200 --sample-seed S --out PILOT``);
2. **model**: least squares of log seconds on what a class is made of, the number of cells of
   each kind (corner, edge, inner) holding each bucket and their pairwise products, fitted on
   the pilot. It costs nothing
   to evaluate on every canonical class (no walk, no bound), so every class gets a predicted
   cost;
3. **strata**: the canonical classes ordered by predicted cost and cut into ``strata`` groups
   of equal predicted total, so the few heavy classes make small strata of their own; the
   sample is spread equally over the strata (Neyman's allocation when the spread within a
   stratum grows with its mean), a stratum smaller than its share is taken whole;
4. **estimate**: the drawn classes are proved (``boggle prove --class-ids @FILE``) and the
   total is ``sum N_h * mean_h`` with variance ``sum N_h^2 (1 - n_h / N_h) s_h^2 / n_h`` and a
   normal 95% interval.

``validate`` checks the estimator and its interval on a finished proof's real per-class costs:
it repeats the whole design (pilot, model, strata, sample) many times on the certificate's
classes and reports how far the estimates land from the certificate's true total and how often
the interval covers it, next to simple random samples of the same size with the bootstrap
interval of ``make estimate-4x4`` (:func:`pipeline.best.prove._status.bootstrap_total`).

``cpp`` proves a proof's classes (or a design's) with the field's C++ prover, one process a
class, appending each class's CPU to a JSON-lines file, so that it resumes where it stopped
(:mod:`pipeline.best.prove._anchor`; a development tool, nothing needs it); ``compare`` sets ours
beside it on the classes both have done: the ratio of the totals, a simple random sample's
with a paired bootstrap interval, a design's stratified (each prover's total estimated over
every class, the interval from resampling within the strata).

Example::

    python -m benchmarks.prove_strata validate certificates/3x4-tanglet-el
    python -m benchmarks.prove_strata design runs/pilot-4x4 --n 1000 --out runs/strata-4x4.json
    boggle prove ... --class-ids @runs/strata-4x4.ids --out runs/strata-4x4
    python -m benchmarks.prove_strata estimate runs/strata-4x4 --design runs/strata-4x4.json
    python -m benchmarks.prove_strata cpp runs/strata-4x4 --out runs/strata-4x4-cpp.jsonl
    python -m benchmarks.prove_strata compare runs/strata-4x4 --cpp runs/strata-4x4-cpp.jsonl \
        --design runs/strata-4x4.json
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer

from benchmarks._cli import AnchorDirOpt, bench_app
from pipeline.best.prove._anchor import append_cost_line, cpp_costs
from pipeline.best.prove._status import class_costs
from pipeline.best.prove._strata import (
    design,
    features,
    paired_ratio,
    stratified_ratio,
    stratified_total,
    validate_costs,
)
from pipeline.io import now_iso

app = bench_app()


def _space_of(out: Path) -> Any:
    from pipeline.best.prove._worker import proof_problem

    return proof_problem(out)[0].space


@app.command()
def validate(
    certificate: Annotated[Path, typer.Argument(help="A finished proof (every class's seconds).")],
    pilot: Annotated[int, typer.Option(help="Pilot classes (a simple random sample).")] = 200,
    n: Annotated[int, typer.Option(help="Classes in the stratified sample.")] = 1000,
    strata: Annotated[int, typer.Option(help="Strata.")] = 20,
    rounds: Annotated[int, typer.Option(help="Repetitions of the whole design.")] = 500,
    seed: Annotated[int, typer.Option(help="Seed.")] = 0,
) -> None:
    """Repeat the design on a finished proof's real per-class costs: how far from the truth, and
    how often the 95% interval covers it, against simple random samples of the same size."""
    ids, seconds, _, _ = class_costs(certificate)
    x = features(_space_of(certificate), ids)
    res = validate_costs(x, seconds, pilot=pilot, n=n, n_strata=strata, rounds=rounds, seed=seed)
    typer.echo(
        f"{certificate}: {len(ids):,} classes, {res['truth_s'] / 3600:.2f} CPU-h in all; {rounds} rounds "
        f"of a {pilot}-class pilot + {n} classes in {strata} strata, against {pilot + n} drawn at random"
    )
    for name in ("stratified", "simple"):
        r = res[name]
        typer.echo(
            f"  {name:10}: estimate / truth {r['ratio_median']:.3f} (5-95%: {r['ratio_p05']:.3f}-"
            f"{r['ratio_p95']:.3f}), within 10% in {r['within_10pct']:.0%} of rounds; the 95% interval "
            f"covered the truth in {r['coverage']:.0%}"
        )


@app.command("design")
def design_cmd(
    pilot: Annotated[Path, typer.Argument(help="The pilot proof's --out (a --limit-classes sample).")],
    out: Annotated[Path, typer.Option(help="The design (JSON); the class ids go beside it as .ids.")],
    n: Annotated[int, typer.Option(help="Classes in the stratified sample.")] = 1000,
    strata: Annotated[int, typer.Option(help="Strata.")] = 20,
    seed: Annotated[int, typer.Option(help="Seed of the draw.")] = 0,
) -> None:
    """Fit the cost model on a pilot, stratify every canonical class, draw the sample."""
    space = _space_of(pilot)
    ids, seconds, _, _ = class_costs(pilot)
    every = space.canonical_ids()
    labels, sizes, drawn = design(
        features(space, every), features(space, ids), seconds, n, strata, np.random.default_rng(seed)
    )
    record = {
        "pilot": str(pilot),
        "classes_all": len(every),
        "strata_sizes": sizes.tolist(),
        "class_ids": every[drawn].tolist(),
        "strata": labels[drawn].tolist(),
    }
    out.write_text(json.dumps(record))
    out.with_suffix(".ids").write_text("\n".join(map(str, record["class_ids"])) + "\n")
    typer.echo(f"{len(drawn):,} classes in {len(sizes)} strata (sizes {sizes.tolist()}) -> {out}")


def _instant(text: str | None, flag: str) -> datetime | None:
    """An ISO date-time option, in UTC when it names no zone."""
    if text is None:
        return None
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise typer.BadParameter(
            f"{flag} {text!r}: expected an ISO date-time, e.g. 2026-12-05T12:40"
        ) from None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def measured(
    proofs: list[Path], since: datetime | None = None, before: datetime | None = None
) -> dict[int, float]:
    """Each class's CPU seconds by its id over ``proofs`` (see :func:`class_costs` for the
    session window), a later folder's measurement of a class replacing an earlier one's: a class
    proved again where the other prover ran, so that a pair is measured on one machine."""
    costs: dict[int, float] = {}
    for proof in proofs:
        ids, seconds, _, _ = class_costs(proof, since, before)
        costs.update(zip(ids.tolist(), seconds.tolist(), strict=True))
    if not costs:
        names = ", ".join(map(str, proofs))
        raise typer.BadParameter(f"{names}: no part of a session in the window --since / --before")
    return costs


SINCE_HELP = "Only the parts of sessions started at or after this UTC date-time (one machine's)."
BEFORE_HELP = "Only the parts of sessions started before this UTC date-time."


@app.command("estimate")
def estimate_cmd(
    proofs: Annotated[
        list[Path],
        typer.Argument(
            help="The proof of the design's classes (--class-ids); more folders: a later one's "
            "measurement of a class replaces an earlier one's."
        ),
    ],
    design_file: Annotated[Path, typer.Option("--design", help="The design written by `design`.")],
    partial: Annotated[
        bool,
        typer.Option(help="Estimate from the design's classes proved so far (at least 2 a stratum)."),
    ] = False,
    since: Annotated[str | None, typer.Option(help=SINCE_HELP)] = None,
    before: Annotated[str | None, typer.Option(help=BEFORE_HELP)] = None,
) -> None:
    """The whole proof's CPU-hours from the stratified sample, with its 95% interval.

    With ``--partial``, from the classes proved so far: the prover takes the design's chunks in a
    fixed shuffle (:func:`pipeline.best.prove._job.dispatch_order`), so those are a random part of
    each stratum's draw, and the interval is wider for the classes still missing. The same holds
    for the classes of a session window (``--since`` / ``--before``) when the sessions' share
    of the classes did not depend on their cost."""
    record = json.loads(design_file.read_text())
    costs = measured(proofs, _instant(since, "--since"), _instant(before, "--before"))
    ids, seconds = np.array(list(costs), np.int64), np.array(list(costs.values()), np.float64)
    proof = ", ".join(map(str, proofs))
    stratum = dict(zip(record["class_ids"], record["strata"], strict=True))
    done = set(ids.tolist())
    missing = [i for i in record["class_ids"] if i not in done]
    if missing and not partial:
        raise typer.BadParameter(
            f"{proof}: {len(missing)} of the design's classes not proved yet "
            "(--partial estimates from the rest)"
        )
    labels = np.array([stratum[int(i)] for i in ids])
    sizes = np.array(record["strata_sizes"])
    short = np.flatnonzero(np.bincount(labels, minlength=len(sizes)) < np.minimum(2, sizes)).tolist()
    if short:
        which = f"stratum {short[0]} has" if len(short) == 1 else f"strata {', '.join(map(str, short))} have"
        raise typer.BadParameter(f"{proof}: {which} fewer than 2 classes proved; prove more first")
    est = stratified_total(sizes, labels, seconds)
    of = f" (from {len(ids):,} of the design's {len(record['class_ids']):,} classes)" if missing else ""
    typer.echo(
        f"estimate for all {record['classes_all']:,} classes{of}: {est.total_s / 3600:,.1f} CPU-h "
        f"(95% interval {est.low_s / 3600:,.1f}-{est.high_s / 3600:,.1f}; {est.total_s:.5g} CPU s)"
    )


def _shard(text: str | None) -> tuple[int, int]:
    """``K/N`` as (K, N) with 0 <= K < N; no shard is (0, 1)."""
    if text is None:
        return 0, 1
    k, sep, n = text.partition("/")
    if not (sep and k.isdigit() and n.isdigit() and 0 <= int(k) < int(n)):
        raise typer.BadParameter(f"--shard {text!r}: expected K/N with 0 <= K < N, e.g. 0/2")
    return int(k), int(n)


#: The seed of the order in which ``cpp`` takes the classes it has not proved yet.
CPP_ORDER_SEED = 37


@app.command("cpp")
def cpp_cmd(
    proof: Annotated[Path, typer.Argument(help="A proof's --out: its recipe, and its classes done.")],
    out: Annotated[Path, typer.Option(help="The C++'s costs (JSON lines; appended, resumable).")],
    design_file: Annotated[
        Path | None, typer.Option("--design", help="Prove the design's classes, not the proof's done ones.")
    ] = None,
    limit: Annotated[int | None, typer.Option(help="At most this many classes this run.")] = None,
    anchor_dir: AnchorDirOpt = None,
    shard: Annotated[
        str | None,
        typer.Option(help="K/N: only the classes whose id is K modulo N, so that N runs share one --out."),
    ] = None,
) -> None:
    """The field's C++ prover on the same classes, one process a class: a line per class with its
    CPU seconds, the start-up's (a trivial class, measured once a run) and the boards it found.
    Runs on disjoint ``--shard``s may append to the same ``--out`` at once (a line under a lock)."""
    import tempfile

    from pipeline import settings
    from pipeline.best.prove._anchor import anchor_built, cpp_ids, cpp_prove
    from pipeline.best.prove._worker import proof_problem
    from pipeline.lexicon import plain_file

    anchor = anchor_dir or settings.get().anchor_dir
    if not anchor_built(anchor):
        raise typer.BadParameter(f"no C++ anchor built in {anchor} (see docs/development.md)")
    part, parts = _shard(shard)
    problem, config, identity = proof_problem(proof)
    if design_file is not None:
        ids = [int(i) for i in json.loads(design_file.read_text())["class_ids"]]
    else:
        ids = class_costs(proof)[0].tolist()
    if out.is_file():
        append_cost_line(out, None)
    done = cpp_costs(out)
    todo = [i for i in ids if i not in done and i % parts == part]
    # in a fixed shuffle, not by id: a cost follows the id, so the classes both provers have
    # proved so far are a random part of ours, not its cheapest ids
    todo = [todo[k] for k in np.random.default_rng(CPP_ORDER_SEED).permutation(len(todo))][:limit]
    space = problem.space
    theirs = cpp_ids(space.digits(np.array(todo, np.int64)).tolist(), space.radices.tolist())
    args = (
        identity["classes"],
        int(identity["threshold"]),
        config["shape"],
        plain_file(config["dictionary"]),
    )
    with tempfile.TemporaryDirectory() as tmp:
        start = cpp_prove(anchor, *args, [0], Path(tmp))  # every cell in bucket 0: the start-up
        typer.echo(f"C++ start-up {start.cpu_s:.2f} CPU s; {len(todo)} of {len(ids)} classes to prove")
        for cid, their in zip(todo, theirs, strict=True):
            u = cpp_prove(anchor, *args, [their], Path(tmp))
            row = {
                "class_id": cid,
                "cpp_id": their,
                "cpu_s": u.cpu_s,
                "startup_s": start.cpu_s,
                "found": u.found,
                "rss_mb": u.rss_mb,
                # when: a CPU-second is worth more on one day's machine than another's, so a
                # pair is like for like only when both provers measured it in one session
                "at": now_iso(),
            }
            append_cost_line(out, json.dumps(row))
            typer.echo(f"class {cid}: {u.cpu_s:.2f} CPU s, {u.found} found, {u.rss_mb:.0f} MB")


@app.command("compare")
def compare_cmd(
    proofs: Annotated[
        list[Path],
        typer.Argument(
            help="Our proof of the classes (its certificate's seconds); more folders: a later "
            "one's measurement of a class replaces an earlier one's."
        ),
    ],
    cpp: Annotated[
        list[Path],
        typer.Option(help="The C++'s costs, from `cpp` (again: a later file's line for a class replaces)."),
    ],
    design_file: Annotated[
        Path | None,
        typer.Option("--design", help="The design the classes were drawn by (else: a random sample)."),
    ] = None,
    net: Annotated[bool, typer.Option(help="Take the C++'s start-up off each class's CPU.")] = True,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap.")] = 0,
    since: Annotated[
        str | None, typer.Option(help=SINCE_HELP + " Ours; the C++'s lines are taken as given.")
    ] = None,
    before: Annotated[str | None, typer.Option(help=BEFORE_HELP + " Ours.")] = None,
) -> None:
    """Ours / C++ CPU on the classes both have proved.

    A pair is like for like only when both provers measured it on one machine (a CPU-second is
    worth more on one day's shared machine than another's): give the classes proved again where
    the other prover ran as later folders / files, and they replace the first measurements."""
    mine = measured(proofs, _instant(since, "--since"), _instant(before, "--before"))
    done: dict[int, dict[str, Any]] = {}
    for path in cpp:
        done.update(cpp_costs(path))
    both = [i for i in mine if i in done]
    proof = ", ".join(map(str, proofs))
    costs = ", ".join(map(str, cpp))
    if not both:
        raise typer.BadParameter(f"{proof} and {costs} have no class in common")
    ours = np.array([mine[i] for i in both])
    theirs = np.array([done[i]["cpu_s"] - (done[i]["startup_s"] if net else 0.0) for i in both])
    theirs = np.maximum(theirs, 0.0)
    if theirs.sum() <= 0:
        raise typer.BadParameter(f"{costs}: the C++'s classes proved by both add up to 0 CPU s: no ratio")
    rng = np.random.default_rng(seed)
    found = sum(int(done[i]["found"]) for i in both)
    typer.echo(
        f"{len(both):,} classes proved by both: ours {ours.sum():,.1f} CPU s, the C++ {theirs.sum():,.1f} "
        f"({'less' if net else 'with'} its start-up); the C++ found {found} boards >= T in them"
    )
    if design_file is None:
        est = paired_ratio(ours, theirs, rng)
        typer.echo(
            f"ours / C++ (as a random sample): {est.total_s:.3f} "
            f"(95% interval {est.low_s:.3f}-{est.high_s:.3f})"
        )
        return
    record = json.loads(design_file.read_text())
    stratum = dict(zip(record["class_ids"], record["strata"], strict=True))
    labels = np.array([stratum[i] for i in both])
    sizes = np.array(record["strata_sizes"])
    est, a, b = stratified_ratio(sizes, labels, ours, theirs, rng)
    empty = np.flatnonzero(np.bincount(labels, minlength=len(sizes)) == 0)
    over = f"all {record['classes_all']:,} classes"
    if len(empty):  # a stratum with no pair is left out of both totals
        kept = int(sizes.sum() - sizes[empty].sum())
        over = (
            f"the {kept:,} classes in the strata with pairs ({len(empty)} of {len(sizes)} strata have none)"
        )
    typer.echo(
        f"over {over}: ours {a / 3600:,.1f} CPU-h, the C++ {b / 3600:,.1f}; "
        f"ours / C++ {est.total_s:.3f} (95% interval {est.low_s:.3f}-{est.high_s:.3f})"
    )


if __name__ == "__main__":
    app()
