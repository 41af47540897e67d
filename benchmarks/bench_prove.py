"""``boggle prove`` against the field's C++ prover on the same classes: ``make bench-prove``.

The C++ prover is danvk/hybrid-boggle's ``python -m boggle.break_all`` (its pybind11 module,
built outside this repository into ``$ANCHOR_DIR``, see docs/development.md, default ``/tmp/anchor``).
For each recipe (shape, threshold, bucket spec) the same canonical classes are drawn (all of
them, a seeded random sample, or a fixed list: ``3x4-heavy``'s 27 heavy classes, see
:data:`BOARD_CLASSES_3X4` and :data:`HEAVY_SAMPLE_3X4`), and each prover proves them in its own
process, one core, alternating ours / theirs ``--pairs`` times so that other load on the
machine hits both alike.
Each run is measured from the kernel's accounting of that child process: CPU seconds (user +
system, ``os.wait4``) and peak RSS (``/usr/bin/time``, see
:func:`pipeline.best.prove._anchor.measure`); wall time is not used (the machine is shared).

A run's CPU includes start-up (imports, the word list, for ours the cached numba kernels), so
each prover also proves one trivial class (every cell in bucket 0) and the per-class figure is
``(run - start-up) / classes``; the ratio is ours / C++ on those. That start-up run's peak RSS
is printed too: each prover's floor before any real class; and first, the floor under ours
(:func:`runtime_floor`: an interpreter with numpy and numba, after numba's first compiled
call). The C++ gets its class ids on the command line, so more than :data:`CPP_BATCH` are
proved in several runs, each paying the start-up once. Ours runs once unmeasured first, so
that numba's cache is filled. Both provers report the boards >= threshold they found (a class
that holds a board in several orientations reports each): the counts are printed side by side
as a check that both did the same work.

Class ids: ours and the C++'s are mapped by :func:`pipeline.best.prove._anchor.cpp_ids` (the module
doc says how). Without the anchor only ours runs.

Worker mode (``--worker``) proves the ids of a file in this process and prints one JSON line;
the bench runs it as the child whose usage is measured.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from benchmarks._cli import AnchorDirOpt, DictionaryOpt, bench_app
from pipeline import jit, settings
from pipeline.best.prove._anchor import Usage, anchor_built, cpp_ids, cpp_prove, measure
from pipeline.best.prove._search import ENUMERATE_MAX
from pipeline.best.prove.tree import LIFT_KEEP, LIFT_RATIO
from pipeline.lexicon import plain_file

if TYPE_CHECKING:
    from pipeline.best.prove._classes import ClassSpace
    from pipeline.lexicon.trie import Alphabet

app = bench_app()

TWO = "aeiosuy bcdfghjklmnpqrtvwxz"
FOUR = "bdfgjqvwxz aeiou lnrsy chkmpt"
CORNER = "aeijou bcdfgmpqvwxz hklnrsty, corner:aeiosuy bcdfghjklmnpqrtvwxz"


@dataclass(frozen=True)
class Recipe:
    shape: str
    threshold: int
    spec: str
    sample: int  # classes drawn by default (0: every canonical class, or every one of ``ids``)
    quick: int  # classes drawn with --quick
    ids: tuple[int, ...] = ()  # a fixed list of canonical class ids (ours) instead of a sample
    warm: int = 8  # classes of the unmeasured run that fills numba's cache (heavy ones: fewer)


#: The 7 canonical classes of the corner recipe on 3x4 that hold the 33 ENABLE2K boards >= 1500
#: (the published list, hybrid-boggle's results/best-boards-3x4.enable2k.txt; 36 finds, as a
#: class holds a symmetric board once per orientation; a board's class by :func:`board_classes`),
#: cheapest first by our prover's CPU on 2026-12-04 (5-29 s each then, on the loaded machine).
#: tests/test_bench_prove.py re-derives them: every board >= 1500 the certificate in
#: certificates/3x4-enable2k found lies in one of them, in the class its row names, and, with the
#: anchor built, the published 33 lie in exactly these 7.
BOARD_CLASSES_3X4 = (15790, 12875, 29195, 16762, 13847, 38659, 102095)

#: The 20 heaviest of the 300 classes the ``3x4-corner`` recipe draws (seed 21), heaviest
#: last, none of which holds a board >= 1500: each of the 300 proved alone in one process by
#: this prover (TreeProver with the defaults, then the boards found re-scored, as the bench's
#: worker does) on 2026-12-04, its CPU seconds by ``time.process_time``, the 40 heaviest a
#: second time, ranked by the smaller of the two (1.7-9.6 s each, the 21st 1.67 s; the machine
#: was loaded, so the edge of the list is within noise). The certificate's recorded seconds
#: are from older, slower versions of the prover (class 13343 took 219 s then, 1.2 s now) and
#: rank them differently.
HEAVY_SAMPLE_3X4 = (
    17215,
    16979,
    7673,
    22987,
    9481,
    29896,
    21165,
    52259,
    13522,
    14512,
    40553,
    8731,
    29189,
    22450,
    29267,
    4621,
    34053,
    63851,
    69683,
    32755,
)

#: The issue's table rows. Quick sizes: a smoke run of a few CPU minutes for all, both provers
#: (a fixed list's quick run proves its first ``quick`` ids: for 3x4-heavy the two cheapest
#: classes that hold boards, 5 finds).
RECIPES: dict[str, Recipe] = {
    "3x3-2": Recipe("3x3", 500, TWO, 0, 4),
    "3x3-4": Recipe("3x3", 500, FOUR, 0, 300),
    "3x4-corner": Recipe("3x4", 1500, CORNER, 300, 3),
    "3x4-4": Recipe("3x4", 1500, FOUR, 300, 40),
    "3x4-heavy": Recipe("3x4", 1500, CORNER, 0, 2, BOARD_CLASSES_3X4 + HEAVY_SAMPLE_3X4, warm=1),
    "4x4": Recipe("4x4", 3625, CORNER, 30, 2, warm=1),
}


CPP_BATCH = 10_000  # class ids per C++ run


#: The runtime under our prover, step by step: each is a fresh interpreter, measured like a run.
FLOOR_STEPS: tuple[tuple[str, str], ...] = (
    ("python", "pass"),
    ("+ numpy", "import numpy"),
    ("+ numba", "import numba"),
    ("+ numba's first compiled call", "import numba; numba.njit(lambda: 0)()"),
)


def runtime_floor() -> list[tuple[str, float]]:
    """Peak RSS (MB) of a bare interpreter, then with numpy, numba, and numba's target set up by
    a first call: what every process of ours holds before its kernels and word list."""
    return [
        (label, measure([sys.executable, "-c", code], Path.cwd())[0].rss_mb) for label, code in FLOOR_STEPS
    ]


def recipe_space(recipe: Recipe, dictionary: str) -> tuple[ClassSpace, Alphabet]:
    """The class space of a recipe's spec on its shape, and the word list's alphabet (the
    compact one, as the prover compiles it)."""
    from pipeline.best.prove._classes import ClassSpace
    from pipeline.lexicon import lexicon_alphabet

    rows, cols = (int(x) for x in recipe.shape.split("x"))
    alphabet = lexicon_alphabet(dictionary)
    return ClassSpace.from_spec(recipe.spec, alphabet, rows, cols), alphabet


def board_classes(space: ClassSpace, alphabet: Alphabet, boards: list[str]) -> list[int]:
    """The canonical class id holding each compact board (row-major, the space's shape): with
    the ``3x4-heavy`` recipe's space, ``perslatesind`` (the best 3x4 board) and its half turn
    ``dnisetalsrep`` both give 16762."""
    import numpy as np

    from pipeline.boards import parse_compact

    out = []
    for board in boards:
        faces = alphabet.encode(parse_compact(board, (space.rows, space.cols)).faces)
        digits = np.array(
            [next(k for k, b in enumerate(space.cell_buckets[c]) if f in b) for c, f in enumerate(faces)]
        )
        # a symmetry maps each cell to one with the same buckets: an image's digits are a permutation
        out.append(min(int(space.ids(digits[perm])) for perm in space.perms))
    return out


def draw_classes(recipe: Recipe, dictionary: str, n: int, seed: int) -> tuple[list[int], list[int]]:
    """(our ids, the C++'s ids) of ``n`` canonical classes (all when n == 0), seeded; for a
    recipe with fixed ``ids``, the first ``n`` of them (all when n == 0)."""
    import numpy as np

    space, _ = recipe_space(recipe, dictionary)
    if recipe.ids:
        ids = np.array(recipe.ids[:n] if n > 0 else recipe.ids, np.int64)
        digits = space.digits(ids)
        least = np.min([space.ids(digits[:, perm]) for perm in space.perms], axis=0)
        if (ids >= space.n_classes).any() or (least != ids).any():
            bad = next(int(i) for i, lo in zip(ids, least, strict=True) if i >= space.n_classes or lo != i)
            raise ValueError(
                f"class id {bad} is not a canonical class of the recipe's spec on {recipe.shape}"
            )
    else:
        ids = space.canonical_ids()
        if 0 < n < len(ids):
            ids = np.sort(np.random.default_rng(seed).choice(ids, n, replace=False))
    return ids.tolist(), cpp_ids(space.digits(ids).tolist(), space.radices.tolist())


def _ours(
    recipe: Recipe, dictionary: str, ids: list[int], enumerate_max: int, ratio: float, keep: int, tmp: Path
) -> Usage:
    ids_file = tmp / "ours-ids.txt"
    ids_file.write_text(",".join(map(str, ids)))
    cmd = [
        sys.executable,
        "-m",
        "benchmarks.bench_prove",
        "--worker",
        "--dictionary",
        dictionary,
        "--shape",
        recipe.shape,
        "--threshold",
        str(recipe.threshold),
        "--spec",
        recipe.spec,
        "--ids-file",
        str(ids_file),
        "--enumerate-max",
        str(enumerate_max),
        "--lift-ratio",
        str(ratio),
        "--lift-keep",
        str(keep),
    ]
    # the kernels `boggle prove` takes (built ahead of time where they are), unless the
    # environment says which (pipeline.jit)
    env = {jit.ENV: "aot", **os.environ}  # child-env: the worker runs as `boggle prove` does
    usage, text = measure(cmd, Path.cwd(), env)
    record = json.loads(text.strip().splitlines()[-1])
    usage.found, usage.kernels = int(record["found"]), record["kernels"]
    return usage


def _ours_threads(recipe: Recipe, dictionary: str, ids: list[int], n_jobs: int, tmp: Path) -> Usage:
    """``boggle prove`` itself on ``ids``, its workers ``n_jobs`` threads of one process: the
    whole command's CPU and peak RSS (for the RSS a core, against the C++'s a process)."""
    import shutil

    ids_file, out = tmp / "threads-ids.txt", tmp / "threads-out"
    ids_file.write_text("\n".join(map(str, ids)) + "\n")
    shutil.rmtree(out, ignore_errors=True)
    cmd = [
        *(sys.executable, "-m", "pipeline.cli", "prove", "-d", dictionary, "--shape", recipe.shape),
        *("--threshold", str(recipe.threshold), "--classes", recipe.spec, "--class-ids", f"@{ids_file}"),
        *("-j", str(n_jobs), "--backend", "threading", "-q", "-o", str(out)),
    ]
    usage, text = measure(cmd, Path.cwd())
    best = next(ln for ln in text.splitlines() if ln.startswith("BEST "))
    usage.found = int(best.split("(", 1)[1].split()[0])
    return usage


def _theirs(recipe: Recipe, dictionary: str, ids: list[int], anchor: Path, tmp: Path) -> Usage:
    """The C++ prover on ``ids``, in batches of :data:`CPP_BATCH` (a command-line argument is
    at most 128 kB): CPU and boards found summed, peak RSS the largest, ``runs`` the batches."""
    total = Usage(0.0, 0.0, 0, 0)
    for lo in range(0, len(ids), CPP_BATCH):
        usage = cpp_prove(
            anchor, recipe.spec, recipe.threshold, recipe.shape, dictionary, ids[lo : lo + CPP_BATCH], tmp
        )
        total.cpu_s += usage.cpu_s
        total.rss_mb = max(total.rss_mb, usage.rss_mb)
        total.found += usage.found
        total.runs += 1
    return total


def _worker(
    dictionary: str,
    shape: str,
    threshold: int,
    spec: str,
    ids_file: Path,
    enumerate_max: int,
    ratio: float,
    keep: int,
) -> None:
    """Prove the classes of ``ids_file`` as a job's worker does (the prover, then the solver's
    re-scoring of the boards found), with the knobs given; one JSON line."""
    import time

    import numpy as np

    from pipeline.best.prove._config import CHUNK_SIZE
    from pipeline.best.prove._worker import confirm_found, load_problem
    from pipeline.best.prove.tree import TreeProver
    from pipeline.boards import geometry
    from pipeline.rules import default_rules_for_shape

    ids = np.array([int(x) for x in ids_file.read_text().split(",") if x], np.int64)
    t0 = time.process_time()
    rows, cols = (int(x) for x in shape.split("x"))
    problem = load_problem(dictionary, shape, default_rules_for_shape(rows, cols), None, spec)
    prover = TreeProver(
        geometry(rows, cols),
        problem.lexicon,
        problem.packed,  # as a job's worker: the dense trie is not built
        threshold,
        enumerate_max,
        lift_ratio=ratio,
        lift_keep=keep,
    )
    found = scored = 0
    for i, d in enumerate(problem.space.digits(ids)):
        res = prover.prove(problem.space.masks(d))
        confirm_found(problem, res.found)
        found += len(res.found)
        scored += res.boards_scored
        if (i + 1) % CHUNK_SIZE == 0:  # as a job's worker does after each chunk
            prover.release()
    cpu = time.process_time() - t0
    record = {"classes": len(ids), "found": found, "scored": scored, "cpu_s": cpu, "kernels": jit.mode()}
    typer.echo(json.dumps(record))


@app.command()
def main(
    dictionary: DictionaryOpt = "enable2k",
    recipe: Annotated[
        list[str] | None, typer.Option(help=f"Recipes to run (default: all): {', '.join(RECIPES)}.")
    ] = None,
    classes: Annotated[
        int | None,
        typer.Option(
            help="Classes drawn per recipe (0: all; default: the recipe's own; a fixed list: its first N)."
        ),
    ] = None,
    quick: Annotated[bool, typer.Option(help="Small samples: a smoke run of a few CPU minutes.")] = False,
    pairs: Annotated[int, typer.Option(min=1, help="Alternating ours/C++ runs (medians reported).")] = 1,
    seed: Annotated[int, typer.Option(help="Seed of the class sample.")] = 21,
    enumerate_max: Annotated[
        int, typer.Option(min=1, help="Ours: score sub-classes of at most this many boards exactly.")
    ] = ENUMERATE_MAX,
    lift_ratio: Annotated[
        float, typer.Option(help="Ours: lift the next cell while a bound is above this x T (0: never).")
    ] = LIFT_RATIO,
    lift_keep: Annotated[
        int, typer.Option(min=0, help="Ours: cells always left to force on the tree (0: lift to the last).")
    ] = LIFT_KEEP,
    anchor_dir: AnchorDirOpt = None,
    ours_only: Annotated[bool, typer.Option(help="Run ours alone even when the anchor is built.")] = False,
    threads: Annotated[
        int,
        typer.Option(
            min=0,
            help="Also run `boggle prove -j N --backend threading` on each sample: its peak RSS a "
            "core beside the C++'s a process (0: not).",
        ),
    ] = 0,
    worker: Annotated[bool, typer.Option(hidden=True)] = False,
    shape: Annotated[str, typer.Option(hidden=True)] = "3x3",
    threshold: Annotated[int, typer.Option(hidden=True)] = 500,
    spec: Annotated[str, typer.Option(hidden=True)] = FOUR,
    ids_file: Annotated[Path | None, typer.Option(hidden=True)] = None,
) -> None:
    word_list = plain_file(dictionary)
    if worker:
        assert ids_file is not None
        _worker(word_list, shape, threshold, spec, ids_file, enumerate_max, lift_ratio, lift_keep)
        return
    anchor = anchor_dir or settings.get().anchor_dir
    built = anchor_built(anchor)
    with_cpp = built and not ours_only
    if not built and not ours_only:
        typer.echo(f"bench-prove: no C++ anchor built in {anchor} (see docs/development.md); ours alone")
    typer.echo(
        "runtime floor, peak RSS: " + ", ".join(f"{label} {mb:.0f} MB" for label, mb in runtime_floor())
    )
    names = recipe or list(RECIPES)
    unknown = [n for n in names if n not in RECIPES]
    if unknown:
        raise typer.BadParameter(f"unknown recipe {unknown[0]!r}; choose from {', '.join(RECIPES)}")
    rows_out = []
    for name in names:
        r = RECIPES[name]
        n = classes if classes is not None else (r.quick if quick else r.sample)
        ours_ids, their_ids = draw_classes(r, word_list, n, seed)
        trivial_ours, trivial_theirs = [0], [0]  # every cell in bucket 0
        with tempfile.TemporaryDirectory() as tmp_name:
            tmp = Path(tmp_name)
            ours_runs, their_runs = [], []
            # numba compiles a kernel on its first call after a source change (then caches it):
            # one unmeasured run on the sample fills the cache, so no measured run pays for that
            _ours(r, word_list, ours_ids[: r.warm], enumerate_max, lift_ratio, lift_keep, tmp)
            ours_start = _ours(r, word_list, trivial_ours, enumerate_max, lift_ratio, lift_keep, tmp)
            their_start = _theirs(r, word_list, trivial_theirs, anchor, tmp) if with_cpp else None
            thread_runs = []
            for _ in range(pairs):
                ours_runs.append(_ours(r, word_list, ours_ids, enumerate_max, lift_ratio, lift_keep, tmp))
                if threads:
                    thread_runs.append(_ours_threads(r, word_list, ours_ids, threads, tmp))
                if with_cpp:
                    their_runs.append(_theirs(r, word_list, their_ids, anchor, tmp))
        k = len(ours_ids)
        ours_cpu = statistics.median(u.cpu_s for u in ours_runs)
        ours_net = max(ours_cpu - ours_start.cpu_s, 0.0)
        line = (
            f"{name:11} {r.shape} T={r.threshold} {k:>6} classes  "
            f"ours ({ours_runs[0].kernels}) {ours_cpu:8.2f} CPU s "
            f"(start-up {ours_start.cpu_s:.2f} s, {ours_start.rss_mb:.0f} MB; "
            f"{1000 * ours_net / k:9.2f} ms a class) "
            f"{max(u.rss_mb for u in ours_runs):6.0f} MB, {ours_runs[0].found} boards >= T"
        )
        row = {
            "recipe": name,
            "kernels": ours_runs[0].kernels,
            "classes": k,
            "ours_cpu_s": ours_cpu,
            "ours_net_ms": 1000 * ours_net / k,
            "ours_rss_mb": max(u.rss_mb for u in ours_runs),
            "ours_startup_rss_mb": ours_start.rss_mb,
            "ours_found": ours_runs[0].found,
        }
        if with_cpp and their_start is not None:
            their_cpu = statistics.median(u.cpu_s for u in their_runs)
            their_net = max(their_cpu - their_runs[0].runs * their_start.cpu_s, 0.0)
            ratio = ours_net / their_net if their_net > 0 else float("inf")
            line += (
                f" | C++ {their_cpu:8.2f} CPU s "
                f"(start-up {their_start.cpu_s:.2f} s, {their_start.rss_mb:.0f} MB; "
                f"{1000 * their_net / k:9.2f} ms a class) {max(u.rss_mb for u in their_runs):6.0f} MB, "
                f"{their_runs[0].found} boards >= T | ratio ours/C++ {ratio:.2f}"
            )
            cpp_rss = max(u.rss_mb for u in their_runs)
            row.update(
                cpp_cpu_s=their_cpu,
                cpp_net_ms=1000 * their_net / k,
                ratio=ratio,
                cpp_rss_mb=cpp_rss,
                cpp_startup_rss_mb=their_start.rss_mb,
                cpp_found=their_runs[0].found,
            )
        if thread_runs:
            rss = max(u.rss_mb for u in thread_runs)
            cpp_mb = f"{row['cpp_rss_mb']:.0f} MB" if "cpp_rss_mb" in row else "not run"
            line += (
                f"\n{'':11} boggle prove -j {threads} --backend threading: {rss:.0f} MB peak RSS, "
                f"{rss / threads:.0f} MB a core (the C++: {cpp_mb} a process), "
                f"{statistics.median(u.cpu_s for u in thread_runs):.2f} CPU s, "
                f"{thread_runs[0].found} distinct boards >= T (above: finds over the classes)"
            )
            row.update(threads=threads, threads_rss_mb=rss, threads_found=thread_runs[0].found)
        typer.echo(line)
        rows_out.append(row)
    typer.echo("JSON " + json.dumps(rows_out))


if __name__ == "__main__":
    app()
