"""Compile the kernels of ``boggle prove`` and ``boggle analyze`` ahead of time:
``python -m pipeline.aot`` (``make aot``, run by ``make setup``).

Why: numba's runtime and LLVM cost a process about 110 MB before it holds any data, more than
half of what the field's C++ prover needs for a whole proof (docs/performance.md, "Memory per
core"). The same kernels compiled into an extension module need neither, and their exports
release the GIL, so ``boggle prove --backend threading`` runs its workers as threads of one
small process (:mod:`pipeline.jit` decides which a process uses). An analysis calls a few
statistics kernels: loading numba for them (its import and cached kernels, about 0.8 CPU-s)
costs more than the rest of a 100-part analysis's second pass.

How: a few small proofs run with numba's JIT in this process (:data:`RUNS`: both bounds, the
default recipes from 3x3 to 4x4, ENABLE2K), then three small runs analysed together
(:func:`exercise_analysis`), and every kernel the proofs called from Python, and the
statistics' kernels the analysis called, is exported with the argument types it was called
with, by numba's ``pycc`` (pending deprecation in numba; the JIT stays the fallback), into
``pipeline/_kernels_aot*.so``, its exported functions' wrappers built to release the GIL. The
record ``pipeline/_kernels_aot.json`` goes last (exports, the SHA-256 of every kernel module and
the module's own size and SHA-256): a process takes the module only while the sources still
match it and the module is the one built. Needs a C compiler; without one the build fails and
``boggle`` keeps the JIT."""

from __future__ import annotations

import json
import os
import platform
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Annotated, Any

import typer

from pipeline import jit, settings

FOUR = "bdfgjqvwxz aeiou lnrsy chkmpt"
#: The proofs whose kernel calls are exported: (shape, threshold, classes, bound, how many classes
#: of a random sample, or which: two cheap 4x4 classes of certificates/4x4-strata).
RUNS: tuple[tuple[str, int, str | None, str, int | tuple[int, ...]], ...] = (
    ("3x3", 500, FOUR, "tree", 40),
    ("3x3", 500, FOUR, "sumax", 8),
    ("3x4", 1500, None, "tree", 4),
    ("3x4", 1500, FOUR, "tree", 20),
    (
        "4x4",
        3625,
        "aeijou bcdfgmpqvwxz hklnrsty, corner:aeiosuy bcdfghjklmnpqrtvwxz",
        "tree",
        (42317, 2348782),
    ),
)


def exercise(dictionary: str) -> set[str]:
    """Run :data:`RUNS` in this process (their kernels compile for the types they are called
    with), on an empty cache: the word list is compiled here too (its trie's kernels), as on a
    new machine; then :func:`exercise_analysis`. Returns the kernels the proofs called."""
    from pipeline.best.prove import ProveConfig, run_prove

    with tempfile.TemporaryDirectory(prefix="boggle-aot-cache-") as cache:
        settings.export(settings.env_name("cache_dir"), cache)
        for shape, threshold, classes, bound, which in RUNS:
            pick: dict[str, Any] = (
                {"class_ids": which}
                if isinstance(which, tuple)
                else {"limit_classes": which, "sample_seed": 1}
            )
            cfg = ProveConfig(
                dictionary, shape=shape, threshold=threshold, classes=classes, bound=bound,
                n_jobs=1, backend="threading", **pick,
            )  # fmt: skip
            run_prove(cfg)
        exercise_deduping_force(dictionary)
        proving = {key for key, _, _ in called_kernels()}
        exercise_analysis(dictionary, Path(cache))
    return proving


#: The kernels exported from :func:`exercise_analysis` (the run it makes calls the solver's too:
#: those stay the JIT's, ``boggle run`` does not ask for this module).
ANALYSIS_KERNELS = "pipeline.stats."


def exercise_analysis(dictionary: str, folder: Path) -> None:
    """The statistics' kernels, which ``boggle analyze`` calls (:mod:`pipeline.stats`): three
    small runs (new dice; classic dice sharing their draws; the same boards at minimum length
    4) written here, then analysed together (each run's second pass and both kinds of paired
    comparison), as the analysis's threads call them."""
    from pipeline.analyze import analyze_runs
    from pipeline.config import load_config
    from pipeline.runner import run_job

    runs = []
    for name, dice, extra in (
        ("new", "new", {}),
        ("classic", "classic", {}),
        ("min4", "new", {"rules.min_length": 4}),
    ):
        out = folder / "runs" / name
        values: dict[str, Any] = {
            "boards.dice": dice, "boards.count": 600, "boards.seed": 1, "boards.chunk_size": 300,
            "lexicon.path": dictionary, "run.out": str(out), "run.n_jobs": 1, **extra,
        }  # fmt: skip
        run_job(load_config(None, values))
        runs.append(out)
    analyze_runs(runs, folder / "report", threads=1)


def exercise_deduping_force(dictionary: str) -> None:
    """The deduping force's kernels (:mod:`pipeline.best.prove.tree._dedup`), which only heavy classes
    call (none of :data:`RUNS`): a few 3x3 classes proved with it on every split, the classes'
    values taken from their paths too (what a class of 2**23 paths or more does, so that
    ``tree_value`` is called: the first build missed it, and every heavy 4x4 class failed)."""
    import numpy as np

    import pipeline.best.prove.tree._prover as tree  # its VALUE_PATHS is patched
    from pipeline.best.prove._worker import load_problem
    from pipeline.boards import geometry

    problem = load_problem(dictionary, "3x3", "boggle", None, FOUR)
    prover = tree.TreeProver(
        geometry(3, 3), problem.lexicon, problem.packed, 500, dedup_ratio=0, dedup_paths=0
    )
    ids = problem.space.canonical_ids()
    saved = tree.VALUE_PATHS
    try:
        for value_paths in (saved, 0):
            tree.VALUE_PATHS = value_paths
            for d in problem.space.digits(ids[:: max(len(ids) // 8, 1)]):
                prover.prove(np.ascontiguousarray(problem.space.masks(d), dtype=np.uint64))
    finally:
        tree.VALUE_PATHS = saved


def called_kernels() -> list[tuple[str, Any, list[Any]]]:
    """(module.name, dispatcher, signatures) of every kernel of the package compiled so far."""
    from numba.core.registry import CPUDispatcher

    found = []
    for name, module in sorted(sys.modules.items()):
        if not name.startswith("pipeline.") or module is None:
            continue
        for attr, obj in sorted(vars(module).items()):
            if isinstance(obj, CPUDispatcher) and obj.__module__ == name and obj.nopython_signatures:
                found.append((f"{name}.{attr}", obj, list(obj.nopython_signatures)))
    return found


def _gil_releasing_pycc() -> Any:
    """numba's ``CC``, its exports' Python wrappers releasing the GIL (as ``nogil`` does for the
    JIT's; numba issue #6382: pycc's do not)."""
    import numba.pycc.compiler as pycc_compiler
    from numba.core.compiler import Flags
    from numba.pycc import CC

    class GilReleasingFlags(Flags):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.release_gil = True  # type: ignore[assignment]

    pycc_compiler.Flags = GilReleasingFlags  # type: ignore[misc]
    return CC


def default_cpu() -> str:
    """The CPU the module is compiled for: on x86-64, ``x86-64-v2`` (every x86-64 CPU since
    about 2009; it has POPCNT, which the kernels use on every step), so that a module built on
    one machine runs on another sharing the folder; elsewhere the building machine's own."""
    return "x86-64-v2" if platform.machine().lower() in ("x86_64", "amd64") else "host"


def build(dictionary: str = "enable2k", cpu: str | None = None) -> dict[str, Any]:
    """Build the module and its record in the package folder; returns the record."""
    if jit.mode() != "jit":  # the kernels must be numba's here, to compile them
        raise RuntimeError(f"the ahead-of-time build runs with {jit.ENV}=jit")
    sources = jit.kernel_sources()
    t0 = time.perf_counter()
    proving = exercise(dictionary)
    kernels = [k for k in called_kernels() if k[0] in proving or k[0].startswith(ANALYSIS_KERNELS)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pycc's pending deprecation
        cc_class = _gil_releasing_pycc()
        exports: dict[str, list[str]] = {}
        with tempfile.TemporaryDirectory(dir=jit.PACKAGE_ROOT, prefix=".aot-") as tmp:
            cc = cc_class(jit.AOT_MODULE)
            cc.output_dir = tmp
            cc.verbose = False
            cc.target_cpu = cpu or default_cpu()
            for key, dispatcher, signatures in kernels:
                for k, signature in enumerate(signatures):
                    symbol = f"{key.replace('.', '_')}__{k}"
                    cc.export(symbol, signature)(dispatcher.py_func)
                    exports.setdefault(key, []).append(symbol)
            cc.compile()
            (built,) = Path(tmp).glob(f"{jit.AOT_MODULE}*.so")
            module = jit.module_fingerprint(built)  # checked before every load (jit.built_state)
            os.replace(built, jit.PACKAGE_ROOT / built.name)
    import numba

    record = {
        "exports": exports,
        "sources": jit.fingerprint(sources),
        "module": module,
        "numba": numba.__version__,
        "cpu": cpu or default_cpu(),
        "python": sys.version.split()[0],
        "seconds": round(time.perf_counter() - t0, 1),
    }
    tmp_record = jit.AOT_RECORD.with_suffix(".json.tmp")
    tmp_record.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp_record, jit.AOT_RECORD)  # last: the module is complete when its record is there
    return record


def main(
    if_stale: Annotated[
        bool, typer.Option(help="Only when the sources changed since the last build.")
    ] = False,
    cpu: Annotated[
        str | None, typer.Option(help="LLVM CPU name (default: x86-64-v2 on x86-64, else host).")
    ] = None,
) -> None:
    """Compile the prove and analyze commands' kernels ahead of time into pipeline/_kernels_aot*.so."""
    if if_stale and jit.built_state()[0]:
        typer.echo(f"aot: pipeline/{jit.AOT_MODULE}*.so is up to date", err=True)
        return
    settings.export(jit.ENV, "jit")
    try:
        record = build(cpu=cpu)
    except Exception as exc:  # a build tool: one line, and the JIT stays in use
        typer.echo(f"aot: not built ({type(exc).__name__}: {exc}); boggle keeps numba's JIT", err=True)
        raise typer.Exit(1) from None
    n = sum(len(v) for v in record["exports"].values())
    typer.echo(
        f"aot: {n} kernel entry points of {len(record['sources'])} modules compiled ahead of time "
        f"for {record['cpu']} in {record['seconds']} s -> pipeline/{jit.AOT_MODULE}*.so",
        err=True,
    )


if __name__ == "__main__":
    typer.run(main)
