"""Ours and the field's C++ prover on the same 4x4 classes, one after the other: ``python -m
benchmarks.prove_pairs``.

The stratified estimate of a whole 4x4 proof (:mod:`benchmarks.prove_strata`) was first
measured with each prover running its own list of classes at the same time as the other, and
with the C++ at its default switchover only. Here each class is proved by ours (``boggle
prove --class-ids ID -j 1``, one process), then by the C++ at its default switchover (1.7 x T,
6162), then by the C++ at 5000 (what its author's 4x4 runs used), each a process of its own
measured by the kernel (CPU by ``os.wait4``, peak RSS by ``/usr/bin/time``), and the three go
on one line of a JSON-lines file as they finish: every pair is measured on one machine within
minutes, and a killed run resumes with the classes it has no line for.

``design`` adds a stratum to a stratified design: classes known to be heavy (the field's
heaviest 4x4 classes, 705707, 156513 and 5590939) taken whole, each out of the stratum the
model put it in, so that the estimate no longer depends on a sample drawing them. ``run``
measures the design's classes, the heavy stratum first, the rest in a fixed shuffle taken
stratum by stratum in turn (so that the classes done so far are a random part of each stratum,
and every stratum has the two measured that the estimate needs early on: a run stopped at any
point leaves an estimate of the whole proof); ``estimate`` gives each prover's CPU-hours for
the whole proof and ours / the C++ from the classes measured so far.

Example::

    python -m benchmarks.prove_pairs design certificates/4x4-strata.json \\
        --heavy 705707,156513,5590939 --out certificates/4x4-pairs.json
    python -m benchmarks.prove_pairs run certificates/4x4-pairs.json --out certificates/4x4-pairs.jsonl
    python -m benchmarks.prove_pairs estimate certificates/4x4-pairs.json certificates/4x4-pairs.jsonl
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer

from benchmarks._cli import AnchorDirOpt, bench_app
from pipeline.best.prove._anchor import append_cost_line, cpp_costs, cpp_ids, cpp_prove, measure
from pipeline.best.prove._strata import cut_strata, features, fit, stratified_ratio, stratified_total
from pipeline.io import now_iso

app = bench_app()

#: The seed of the order in which ``run`` takes the design's classes (after the heavy stratum).
ORDER_SEED = 53
#: The provers ``run`` measures, in the order it runs them on a class: ours, the C++ at its
#: default switchover, the C++ at 5000.
PROVERS = ("ours", "cpp", "cpp5000")
CPP_SWITCHOVER = {"cpp": None, "cpp5000": 5000}


def _problem(pilot: str) -> Any:
    from pipeline.best.prove._worker import proof_problem

    return proof_problem(Path(pilot))


@app.command("design")
def design_cmd(
    design_file: Annotated[Path, typer.Argument(help="A design written by prove_strata's `design`.")],
    heavy: Annotated[str, typer.Option(help="Canonical class ids taken whole in a stratum of their own.")],
    out: Annotated[Path, typer.Option(help="The new design (JSON; the ids go beside it as .ids).")],
) -> None:
    """The design with a stratum of known heavy classes taken whole: each is taken out of the
    stratum the design's model put it in (that stratum's size one less; a drawn one is moved),
    and the new stratum's size is their number, so its classes are measured, not estimated."""
    from pipeline.best.prove._status import class_costs

    record = json.loads(design_file.read_text())
    space = _problem(record["pilot"])[0].space
    every = space.canonical_ids()
    ids, seconds, _, _ = class_costs(Path(record["pilot"]))
    # the design's strata again, from its pilot (deterministic): the heavy classes' strata
    labels = cut_strata(
        np.exp(features(space, every) @ fit(features(space, ids), seconds)), len(record["strata_sizes"])
    )
    drawn = dict(zip(record["class_ids"], record["strata"], strict=True))
    at = np.searchsorted(every, np.array(record["class_ids"]))
    if not np.array_equal(labels[at], np.array(record["strata"])):
        raise typer.BadParameter(f"{design_file}: its pilot no longer gives its strata")
    chosen = [int(x) for x in heavy.replace(",", " ").split()]
    sizes = list(record["strata_sizes"])
    census = len(sizes)
    for cid in chosen:
        k = int(np.searchsorted(every, cid))
        if k == len(every) or every[k] != cid:
            raise typer.BadParameter(f"class {cid} is not a canonical class of the design's recipe")
        sizes[int(labels[k])] -= 1
        drawn[cid] = census
    sizes.append(len(chosen))
    new = {
        **record,
        "strata_sizes": sizes,
        "class_ids": list(drawn),
        "strata": list(drawn.values()),
        "census": chosen,
        "from": str(design_file),
    }
    out.write_text(json.dumps(new))
    out.with_suffix(".ids").write_text("\n".join(map(str, new["class_ids"])) + "\n")
    typer.echo(
        f"{len(drawn):,} classes in {len(sizes)} strata; the heavy {chosen} in stratum {census}, "
        f"taken from strata {[int(labels[int(np.searchsorted(every, c))]) for c in chosen]} -> {out}"
    )


def _ours(cid: int, config: dict[str, Any], classes: str, tmp: Path) -> dict[str, Any]:
    """``boggle prove --class-ids CID -j 1`` in a process of its own: its CPU, peak RSS and row."""
    import pyarrow.parquet as pq

    out = tmp / f"ours-{cid}"
    cmd = [
        *(sys.executable, "-m", "pipeline.cli", "prove", "-d", config["dictionary"]),
        *("--shape", config["shape"], "--threshold", str(config["threshold"]), "--classes", classes),
        *("--class-ids", str(cid), "-j", "1", "-q", "-o", str(out)),
    ]
    usage, text = measure(cmd, Path.cwd())
    row = pq.read_table(next(out.glob("part-*.parquet"))).to_pylist()[0]
    return {
        "cpu_s": usage.cpu_s,
        "rss_mb": usage.rss_mb,
        "found": len(row["found_boards"]),
        "root_bound": row["root_bound"],
        "nodes": row["nodes"],
        "boards_scored": row["boards_scored"],
        "best": text.strip().splitlines()[-1],
    }


def balanced_order(rest: list[int], strata_of: dict[int, int], done: Iterable[int]) -> list[int]:
    """The classes still to prove in a random order (:data:`ORDER_SEED`), taken stratum by
    stratum in turn, the strata with the fewest measured first: every stratum has the 2
    measured classes the estimate needs as early as possible, so a run stopped at any point
    leaves an estimate over the whole recipe, its intervals narrowing as it goes on."""
    shuffled = [rest[k] for k in np.random.default_rng(ORDER_SEED).permutation(len(rest))]
    measured = Counter(strata_of[c] for c in done if c in strata_of)
    keyed = []
    for pos, cid in enumerate(shuffled):
        stratum = strata_of[cid]
        keyed.append((measured[stratum], pos, cid))
        measured[stratum] += 1
    return [cid for _, _, cid in sorted(keyed)]


@app.command("run")
def run_cmd(
    design_file: Annotated[Path, typer.Argument(help="The design (from `design`).")],
    out: Annotated[Path, typer.Option(help="The measurements (JSON lines; appended, resumable).")],
    limit: Annotated[int | None, typer.Option(help="At most this many classes this run.")] = None,
    who: Annotated[str, typer.Option(help=f"Which provers, of {','.join(PROVERS)}.")] = ",".join(PROVERS),
    anchor_dir: AnchorDirOpt = None,
) -> None:
    """Prove the design's classes with each prover in turn, a line per class with their CPU
    seconds, each one's start-up (a trivial class, measured once a run), peak RSS and boards."""
    from pipeline import settings
    from pipeline.best.prove._anchor import anchor_built
    from pipeline.lexicon import plain_file

    provers = [p for p in who.split(",") if p]
    if unknown := [p for p in provers if p not in PROVERS]:
        raise typer.BadParameter(f"--who: unknown {unknown[0]!r}; choose from {', '.join(PROVERS)}")
    anchor = anchor_dir or settings.get().anchor_dir
    if any(p != "ours" for p in provers) and not anchor_built(anchor):
        raise typer.BadParameter(f"no C++ anchor built in {anchor} (see docs/development.md)")
    record = json.loads(design_file.read_text())
    problem, config, identity = _problem(record["pilot"])
    classes = identity["classes"]
    if out.is_file():
        append_cost_line(out, None)
    done = cpp_costs(out)
    census = [c for c in record.get("census", []) if c not in done]
    strata_of = dict(zip(record["class_ids"], record["strata"], strict=True))
    rest = [c for c in record["class_ids"] if c not in done and c not in census]
    rest = balanced_order(rest, strata_of, done)
    todo = (census + rest)[:limit]
    space = problem.space
    word_list = plain_file(config["dictionary"])
    cpp_args = (classes, int(identity["threshold"]), config["shape"], word_list)
    commit = _commit()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        start: dict[str, float] = {}
        for p in provers:  # every cell in bucket 0: start-up alone
            if p == "ours":
                start[p] = _ours(0, config, classes, tmp)["cpu_s"]
            else:
                start[p] = cpp_prove(anchor, *cpp_args, [0], tmp, CPP_SWITCHOVER[p]).cpu_s
        typer.echo(f"start-up CPU s: {start}; {len(todo)} of {len(record['class_ids'])} classes to prove")
        theirs = cpp_ids(space.digits(np.array(todo, np.int64)).tolist(), space.radices.tolist())
        for cid, their in zip(todo, theirs, strict=True):
            row: dict[str, Any] = {"class_id": cid, "cpp_id": their, "at": now_iso(), "commit": commit}
            for p in provers:
                if p == "ours":
                    got = _ours(cid, config, classes, tmp)
                else:
                    u = cpp_prove(anchor, *cpp_args, [their], tmp, CPP_SWITCHOVER[p])
                    got = {"cpu_s": u.cpu_s, "rss_mb": u.rss_mb, "found": u.found}
                row[p] = {**got, "startup_s": start[p]}
            append_cost_line(out, json.dumps(row))
            typer.echo(
                f"class {cid}: "
                + ", ".join(f"{p} {row[p]['cpu_s']:.2f} s {row[p]['rss_mb']:.0f} MB" for p in provers)
            )


def _commit() -> str:
    """The commit ours runs (with ``+`` when the working tree differs from it): a line measures
    the prover of its commit."""
    import subprocess

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], capture_output=True, text=True, check=False).stdout.strip()

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    return head + ("+" if git("status", "--porcelain", "--untracked-files=no", "pipeline") else "")


def net_costs(rows: dict[int, dict[str, Any]], prover: str) -> dict[int, float]:
    """Each class's CPU seconds for ``prover``, less its start-up (never below 0), where measured."""
    return {
        cid: max(r[prover]["cpu_s"] - r[prover]["startup_s"], 0.0) for cid, r in rows.items() if prover in r
    }


def usable_strata(sizes: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Whether each stratum has enough classes measured to estimate its total (2, or all it has)."""
    return np.bincount(labels, minlength=len(sizes)) >= np.minimum(2, sizes)


@app.command("estimate")
def estimate_cmd(
    design_file: Annotated[Path, typer.Argument(help="The design (from `design`).")],
    pairs: Annotated[Path, typer.Argument(help="The measurements (from `run`).")],
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap.")] = 0,
    by_stratum: Annotated[
        bool, typer.Option("--by-stratum", help="Also a line per stratum: where the hours are.")
    ] = False,
) -> None:
    """Each prover's CPU-hours for every class of the recipe (stratified, from the classes it
    has measured so far; strata with fewer than 2 measured are left out of the totals, and
    said), and ours / each C++ on the classes both measured."""
    record = json.loads(design_file.read_text())
    stratum = dict(zip(record["class_ids"], record["strata"], strict=True))
    rows = {c: r for c, r in cpp_costs(pairs).items() if c in stratum}
    sizes = np.array(record["strata_sizes"])
    typer.echo(f"{len(rows):,} of the design's {len(stratum):,} classes measured")
    costs = {p: net_costs(rows, p) for p in PROVERS}
    for p in PROVERS:
        if not costs[p]:
            continue
        ids = np.array(list(costs[p]), np.int64)
        labels = np.array([stratum[int(c)] for c in ids], np.int64)
        y = np.array(list(costs[p].values()))
        ok = usable_strata(sizes, labels)
        keep = ok[labels]
        remap = np.cumsum(ok) - 1
        est = stratified_total(sizes[ok], remap[labels[keep]], y[keep])
        over = "all classes" if ok.all() else f"{int(sizes[ok].sum()):,} of {int(sizes.sum()):,} classes"
        found = sum(int(rows[int(c)][p]["found"]) for c in ids)
        typer.echo(
            f"  {p:8}: {est.total_s / 3600:,.1f} CPU-h over {over} (95% interval "
            f"{est.low_s / 3600:,.1f}-{est.high_s / 3600:,.1f}), from {len(ids)} classes "
            f"({y.sum():,.1f} CPU s, {found} boards >= T)"
        )
    rng = np.random.default_rng(seed)
    for p in ("cpp", "cpp5000"):
        both = [c for c in costs["ours"] if c in costs[p]]
        if not both:
            continue
        labels = np.array([stratum[c] for c in both], np.int64)
        ours = np.array([costs["ours"][c] for c in both])
        theirs = np.array([costs[p][c] for c in both])
        ok = usable_strata(sizes, labels)
        keep = ok[labels]
        est, a, b = stratified_ratio(np.where(ok, sizes, 0), labels[keep], ours[keep], theirs[keep], rng)
        typer.echo(
            f"  ours / {p}: {est.total_s:.3f} (95% interval {est.low_s:.3f}-{est.high_s:.3f}) over "
            f"{int(sizes[ok].sum()):,} classes ({a / 3600:,.1f} against {b / 3600:,.1f} CPU-h), "
            f"{len(both)} pairs; their plain sums {ours.sum():,.1f} / {theirs.sum():,.1f} CPU s = "
            f"{ours.sum() / max(theirs.sum(), 1e-9):.3f}"
        )
    if by_stratum:
        for line in stratum_lines(sizes, stratum, costs["ours"], costs["cpp"]):
            typer.echo(line)


def stratum_lines(
    sizes: np.ndarray, stratum: dict[int, int], ours: dict[int, float], cpp: dict[int, float]
) -> list[str]:
    """A line per stratum with classes measured by both: its size, how many were measured, the
    mean CPU seconds a class of each, ours' CPU-hours over the stratum (size x mean) and their
    share of ours' hours over these strata, and ours / the C++ (the means' ratio)."""
    both = [c for c in ours if c in cpp]
    rows = []
    for h, size in enumerate(sizes):
        ids = [c for c in both if stratum[c] == h]
        if ids:
            mean_o = float(np.mean([ours[c] for c in ids]))
            mean_c = float(np.mean([cpp[c] for c in ids]))
            rows.append((h, int(size), len(ids), mean_o, mean_c, size * mean_o / 3600))
    hours = sum(r[5] for r in rows) or 1.0
    return ["  stratum  classes  measured  ours s  cpp s  ours CPU-h (share)  ours / cpp"] + [
        f"  {h:7}  {n:7,}  {m:8}  {mo:6.2f}  {mc:5.2f}  {ho:10,.1f} ({100 * ho / hours:4.1f}%)  "
        f"{mo / max(mc, 1e-9):10.2f}"
        for h, n, m, mo, mc, ho in rows
    ]


if __name__ == "__main__":
    app()
