"""The entry points: :func:`optimize` searches and returns the results, :func:`run_optimize`
also writes ``OUT/part-00000.parquet`` (columns in :data:`~pipeline.best.optimize._output.RESULT_COLUMNS`)
and ``OUT/_SUCCESS``, a JSON manifest with the resolved config, lexicon provenance, rules,
package versions, per-restart figures and counts."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from pipeline import store
from pipeline.best.optimize._config import OptimizeConfig
from pipeline.best.optimize._driver import ProgressCallback, search
from pipeline.best.optimize._objectives import Objective, make_objective
from pipeline.best.optimize._output import (
    INTERRUPTED,
    KIND,
    OptimizeResult,
    collect_boards,
    results_table,
)
from pipeline.best.optimize._scorer import Tables
from pipeline.best.optimize._space import SearchSpace, dice_space, free_space
from pipeline.boards import format_compact
from pipeline.io import now_iso, package_versions
from pipeline.lexicon import CompiledLexicon
from pipeline.parallel import parallel_backend


def prepare(cfg: OptimizeConfig) -> tuple[OptimizeConfig, CompiledLexicon, Objective, SearchSpace, Tables]:
    """Resolve the config and build the lexicon, objective, search space and kernel tables."""
    from pipeline.boards import load_dice_set
    from pipeline.lexicon import compile_for_boards, load_lexicon
    from pipeline.rules import resolve_rules

    cfg = cfg.resolve()
    assert cfg.dictionary is not None  # resolve() fills it in
    rows, cols = cfg.rows_cols
    rules = resolve_rules(cfg.rules, (rows, cols), min_length=cfg.min_length)
    dice = load_dice_set(cfg.dice, rows, cols) if cfg.dice else None
    lexicon = compile_for_boards(cfg.dictionary, rules, dice.faces if dice else None)
    subset = load_lexicon(cfg.subset).words if cfg.subset else None
    objective = make_objective(lexicon, cfg.objective, subset)
    if dice is not None:
        space = dice_space(rows, cols, dice, lexicon.alphabet)
    else:
        space = free_space(rows, cols, len(lexicon.alphabet))
    return cfg, lexicon, objective, space, Tables.of(objective, rows, cols)


def optimize(
    cfg: OptimizeConfig, progress: ProgressCallback | None = None, n_jobs: int | None = None
) -> OptimizeResult:
    """Search without writing anything (``n_jobs=None``: the caller's joblib config decides).

    >>> res = optimize(OptimizeConfig("enable2k.txt", restarts=2, iterations=20))  # doctest: +SKIP
    >>> res.best.score, format_compact(res.best.board)  # doctest: +SKIP
    """
    started = now_iso()
    cfg, lexicon, objective, space, tables = prepare(cfg)
    res = search_and_collect(cfg, lexicon, objective, space, tables, progress, n_jobs, started, time.time())
    res.manifest = standalone_manifest(cfg, res.manifest, started)
    return res


def search_and_collect(
    cfg: OptimizeConfig,
    lexicon: CompiledLexicon,
    objective: Objective,
    space: SearchSpace,
    tables: Tables,
    progress: ProgressCallback | None,
    n_jobs: int | None,
    started: str,
    t0: float,
    found: dict[str, int] | None = None,
) -> OptimizeResult:
    """Run the restarts and build the results (a prepared config) with the search's own
    manifest fields (the job protocol adds the common ones when it writes them, or
    :func:`standalone_manifest` when nothing is written); ``found`` collects the boards found so
    far as the search goes (see :func:`search`)."""
    restarts = search(cfg, space, tables, lexicon.alphabet, progress, n_jobs, found)
    boards = collect_boards(restarts, space, objective, lexicon, cfg.keep)
    reached = [r for r in restarts if r.target_s is not None]
    fields: dict[str, Any] = {
        "lexicon": lexicon.provenance(),
        "rules": lexicon.rules.to_dict(),
        "objective": objective.info,
        "dice": None if space.free else {"name": space.dice_name},
        "packages": package_versions(),
        "counts": {
            "restarts": len(restarts),
            "boards": len(boards),
            "evaluations": sum(r.evaluations for r in restarts),
            "iterations": sum(r.iterations for r in restarts),
            "restarts_reached_target": len(reached) if cfg.target is not None else None,
        },
        "best": {"board": format_compact(boards[0].board), "score": boards[0].score} if boards else None,
        "restarts": [r.summary() for r in restarts],
        "seconds": round(time.time() - t0, 3),
    }
    return OptimizeResult(boards=boards, restarts=restarts, manifest=fields, out=None)


def standalone_manifest(cfg: OptimizeConfig, fields: dict[str, Any], started: str) -> dict[str, Any]:
    """The manifest of a search that writes nothing: its fields with the keys every job's
    manifest has (as :meth:`pipeline.store.JobDir.finish` would write them, less the parts)."""
    return {
        "format": KIND.format,
        "schema_version": KIND.schema_version,
        "identity": cfg.identity(),
        "config": cfg.to_dict(),
        "packages": package_versions(),
        "columns": dict(KIND.columns),
        **fields,
        "started_at": started,
        "finished_at": now_iso(),
    }


def parallel(cfg: OptimizeConfig) -> AbstractContextManager[None]:
    """The joblib configuration the restarts run under: ``cfg.backend`` with ``cfg.n_jobs``
    workers (every core by default). Loky's workers arm their lifeline as they start, not at
    their first restart: a worker spawned just before a ``kill -9`` of this process may never
    get one, and would otherwise wait on loky's queue for minutes (:mod:`pipeline.parallel.lifeline`)."""
    return parallel_backend(cfg.backend, cfg.n_jobs if cfg.n_jobs is not None else -1)


def run_optimize(
    cfg: OptimizeConfig, progress: ProgressCallback | None = None, note: Callable[[str], None] | None = None
) -> OptimizeResult:
    """Search and write ``OUT/part-00000.parquet`` and ``OUT/_SUCCESS`` through the job
    lifecycle of :class:`pipeline.store.JobDir`, under :func:`parallel`.
    Without ``cfg.out`` nothing is written.

    A finished result of the same config stays in place until the new search has finished and
    replaces it (a search with a time limit is not reproducible, so nothing of it is reused);
    an interrupted search (Ctrl-C, SIGTERM, an error) leaves the previous result as it was and
    writes its best boards so far to ``OUT/_interrupted.json``, marked unfinished. A directory
    holding a different job is refused unless ``cfg.overwrite``.
    """
    started = now_iso()
    t0 = time.time()
    cfg, lexicon, objective, space, tables = prepare(cfg)
    found: dict[str, int] = {}

    def go() -> OptimizeResult:
        with parallel(cfg):
            return search_and_collect(
                cfg, lexicon, objective, space, tables, progress, None, started, t0, found
            )

    if cfg.out is None:
        res = go()
        res.manifest = standalone_manifest(cfg, res.manifest, started)
        return res
    out: Any = store.job_path(cfg.out)
    # the part embeds what decides the result (not n_jobs, out or --overwrite): its identity
    meta = store.parquet_metadata(cfg.identity(), lexicon.provenance(), lexicon.rules.to_dict())
    with store.JobDir.open(
        out,
        KIND,
        cfg.identity(),
        cfg.to_dict(),
        overwrite=cfg.overwrite,
        note=note,
    ) as job:
        job.loc.remove(INTERRUPTED)
        try:
            res = go()
        except BaseException:
            write_interrupted(job.loc, found, cfg, started)
            raise
        table = results_table(res.boards, cfg)
        job.unfinish()  # from here to the manifest: one part's rename and two small files
        job.commit(0, table.num_rows, table, metadata=meta)
        res.manifest = job.finish(1, res.manifest)
    res.out = out
    return res


def write_interrupted(
    out: Path | store.Location, found: dict[str, int], cfg: OptimizeConfig, started: str
) -> None:
    """The best boards an interrupted search had found (``OUT/_interrupted.json``): scores are
    the search kernel's, not re-solved; the previous finished result, if any, is untouched."""
    best = sorted(found.items(), key=lambda kv: (-kv[1], kv[0]))[: cfg.keep]
    data = {
        "status": "unfinished",
        "note": "an interrupted search: its best boards so far, scored by the search kernel; "
        "the finished result (if any) is part-00000.parquet with _SUCCESS",
        "identity": cfg.identity(),
        "started_at": started,
        "interrupted_at": now_iso(),
        "boards": [{"board": b, "score": s} for b, s in best],
    }
    store.write_json(store.location(out), INTERRUPTED, data)
