"""Board-quality analysis of finished runs: summary tables, plots and an HTML report.

``analyze_runs(["runs/new", "runs/classic"], "reports/dice")`` writes::

    reports/dice/report.html        self-contained page (plots embedded)
    reports/dice/analysis.json      what was analysed (runs, manifests) and written
    reports/dice/tables/NAME.parquet and NAME.csv
    reports/dice/plots/NAME.png

Every number comes from the runs' statistics (:mod:`pipeline.stats`: what each worker recorded
beside its part), gathered and merged part by part, with a second pass over the parts' board
and score columns for the regressions' intervals (:mod:`pipeline.analyze._gather`, the fits in
:mod:`pipeline.analyze._models`); the summary tables are :mod:`pipeline.analyze._stats`', the
faces and their raw effects :mod:`pipeline.analyze._faces`', the board-level models (adjusted
face effects, cell positions, dice) :mod:`pipeline.analyze._cells`'; comparisons with 95%
intervals are in :mod:`pipeline.analyze._compare`, runs that share their boards or their draws
compared board by board in :mod:`pipeline.analyze._paired` (chunk by chunk:
:mod:`pipeline.analyze._matched`), the die diagnosis in :mod:`pipeline.analyze._diagnosis`, the
intervals in :mod:`pipeline.analyze._inference`, run labels in :mod:`pipeline.analyze._provenance`,
word frequencies in :mod:`pipeline.analyze._words`, bad boards and their drivers in
:mod:`pipeline.analyze._bad`, the boards to serve (``boggle select``) in
:mod:`pipeline.analyze._select` and its pool file in :mod:`pipeline.analyze._pool`. Plotting
(:mod:`pipeline.analyze._plots` on the canvas of :mod:`pipeline.analyze._figures`) and the page
(:mod:`pipeline.analyze._report`, its first screen in :mod:`pipeline.analyze._first_screen`, its
sections in the package :mod:`pipeline.analyze.sections`, interactive tables and plot in
:mod:`pipeline.analyze._interactive`) only see the small result tables.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.analyze._bad import BadDefinition
from pipeline.analyze._cells import adjusted_effects
from pipeline.analyze._display import compare_dirs_from_env, readable, summary_frame
from pipeline.analyze._plots import (
    Plot,
    board_plot,
    by_length_plot,
    dice_plot,
    distribution_plot,
    face_effects_plot,
    longest_word_plot,
    make_plots,
    paired_plot,
    png_bytes,
    score_cdf_plot,
)
from pipeline.analyze._pool import POOL_COLUMNS
from pipeline.analyze._provenance import describe
from pipeline.analyze._report import write_report
from pipeline.analyze._runs import MANIFEST, RunError, RunInfo, load_run, load_runs, printable
from pipeline.analyze._select import Band, Filters, SelectResult, parse_range, preset, select_boards
from pipeline.analyze._stats import Tables, compute_tables
from pipeline.analyze._tables import compute_all
from pipeline.errors import EXIT_INTERNAL, BoggleError
from pipeline.io import atomic_open, atomic_path, package_versions, write_json_atomic
from pipeline.store import Location, PartRef

__all__ = [
    "POOL_COLUMNS",
    "AnalysisResult",
    "BadDefinition",
    "Band",
    "Filters",
    "RunError",
    "RunInfo",
    "SelectResult",
    "Tables",
    "adjusted_effects",
    "analyze_runs",
    "board_plot",
    "by_length_plot",
    "compare_dirs_from_env",
    "compute_all",
    "compute_tables",
    "default_out_dir",
    "describe",
    "dice_plot",
    "distribution_plot",
    "face_effects_plot",
    "gather_runs",
    "load_run",
    "load_runs",
    "longest_word_plot",
    "paired_plot",
    "parse_labels",
    "parse_range",
    "png_bytes",
    "preset",
    "readable",
    "score_cdf_plot",
    "select_boards",
    "summary_frame",
]

TABLE_DIR = "tables"
PLOT_DIR = "plots"
ANALYSIS_RECORD = "analysis.json"
ProgressFn = Callable[[str], None]


@dataclass
class AnalysisResult:
    """What :func:`analyze_runs` wrote: the report folder and its files, as local paths or the
    URLs of objects in a store."""

    out_dir: PartRef
    report: PartRef
    runs: list[RunInfo]
    tables: Tables
    table_files: dict[str, list[PartRef]] = field(default_factory=dict)
    plots: list[Plot] = field(default_factory=list)


def default_out_dir(runs: Sequence[RunInfo], base: Path = Path("reports")) -> Path:
    """``reports/<run>`` for one run, ``reports/<run1>-vs-<run2>...`` for a comparison."""
    names = [re.sub(r"[^A-Za-z0-9._-]+", "-", r.path.resolve().name).strip("-") or "run" for r in runs]
    name = "-vs-".join(names)
    if len(name) > 80:
        digest = hashlib.sha256(name.encode()).hexdigest()[:8]
        name = f"{names[0][:40]}-and-{len(names) - 1}-more-{digest}"
    return base / name


def write_table(df: pd.DataFrame, out_dir: Path, name: str) -> list[Path]:
    """Write one table as Parquet and CSV (atomically)."""
    pq_path, csv_path = out_dir / f"{name}.parquet", out_dir / f"{name}.csv"
    with atomic_path(pq_path) as tmp:
        pq.write_table(pa.Table.from_pandas(df, preserve_index=False), tmp)
    with atomic_open(csv_path) as fh:
        df.to_csv(fh, index=False)
    return [pq_path, csv_path]


def _previous_files(target: Location) -> list[str]:
    """The files an earlier analysis in ``target`` wrote (its ``analysis.json``), or none."""
    try:
        if not target.is_file(ANALYSIS_RECORD):
            return []
        files = json.loads(target.read_bytes(ANALYSIS_RECORD).decode("utf-8")).get("files", [])
    except (OSError, ValueError, AttributeError, RecursionError):
        return []
    return [f for f in files if isinstance(f, str)]


def _remove_stale(target: Location, previous: list[str], keep: set[str]) -> None:
    """Delete the tables and plots an earlier analysis in ``target`` wrote that this one did not."""
    for name in previous:
        folder, _, file = name.rpartition("/")
        if name not in keep and folder in (TABLE_DIR, PLOT_DIR) and file and file not in ("..", "."):
            target.remove(name)


class ResourceError(BoggleError):
    """The analysis ran out of memory or disk (exit code 1)."""

    exit_code = EXIT_INTERNAL


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return printable(text.splitlines()[0]) if text else type(exc).__name__


def parse_labels(items: Sequence[str] | None) -> dict[str, str]:
    """``["runs/a=new dice", ...]`` (the CLI's ``--label RUN=TEXT``) as a mapping; a BoggleError
    (exit 2) for an item without ``=`` or with an empty side."""
    out: dict[str, str] = {}
    for item in items or []:
        run, sep, text = item.partition("=")
        if not sep or not run.strip() or not text.strip():
            raise RunError(f"--label {item!r}: expected RUN=TEXT, e.g. runs/classic='classic dice'")
        out[run.strip()] = text.strip()
    return out


def _manifest_digest(run: RunInfo) -> str:
    from pipeline.store import location

    return hashlib.sha256(location(run.path).stored_bytes(MANIFEST)).hexdigest()


def gather_runs(
    runs: Sequence[RunInfo],
    *,
    top: int = 20,
    top_words: int = 50,
    bad: BadDefinition | None = None,
    n_jobs: int | None = None,
    progress: ProgressFn | None = None,
) -> Tables:
    """Every table of an analysis of ``runs``: their statistics gathered part by part
    (:mod:`pipeline.analyze._gather`), then the tables (:func:`compute_all`)."""
    import pyarrow as pa
    from threadpoolctl import threadpool_limits

    from pipeline.analyze._gather import check_runs, gather
    from pipeline.stats import StatsSpec

    spec = StatsSpec(bad or BadDefinition(), top)
    try:
        gathered = gather(runs, spec, n_jobs=n_jobs, progress=progress)
        check_runs(gathered)
        # the models' matrices are small (a row a face): BLAS threads only contend for the
        # cores (200 small runs: 18.8 s of SVDs on a busy 2-core machine, 0.6 s on one thread)
        with threadpool_limits(limits=1, user_api="blas"):
            return compute_all(gathered, top=top, top_words=top_words, bad=bad, n_jobs=n_jobs)
    except MemoryError:
        raise ResourceError("the analysis ran out of memory; try fewer --threads") from None
    except (OSError, pa.ArrowException) as exc:
        # damaged part files surface here (I/O, decoding and conversion errors)
        where = ", ".join(str(r.path) for r in runs)
        raise RunError(f"reading {where} failed: {_first_line(exc)}") from None


def analyze_runs(
    run_dirs: Sequence[str | os.PathLike[str]],
    out_dir: str | os.PathLike[str] | None = None,
    *,
    top: int = 20,
    top_words: int = 50,
    threads: int | None = None,
    progress: ProgressFn | None = None,
    labels: Mapping[str, str] | None = None,
    bad: BadDefinition | None = None,
    backend: str = "threading",
    scheduler: str | None = None,
) -> AnalysisResult:
    """Analyse one or more finished runs into tables, plots and ``report.html``.

    Runs are labelled by what differs between them (dice, lexicon, rules...); ``labels`` maps
    a run (as given, or its directory name) to a label of one's own; ``bad`` defines a bad board
    (default: fewer than 50 words); ``threads``: parts read at once (default: every core), as
    threads of this process, or ``backend`` ``loky`` processes or ``dask`` workers (of the
    cluster at ``scheduler``, else a local one), as ``boggle run`` runs its chunks.
    Raises :class:`RunError` (exit code 2) for a missing or unfinished run.
    """
    from pipeline.config import MAX_TOP, check_count

    check_count("--top", top, 1, MAX_TOP, "analyze")
    check_count("--top-words", top_words, 1, MAX_TOP, "analyze")
    note = progress or (lambda _msg: None)
    # a run in an object store is read where it is: its parts' statistics and the few columns
    # the second pass needs, never whole parts
    runs = load_runs(run_dirs, labels, fetch=False)
    from pipeline.store import output_folder, output_location, refuse_inside_job

    spec = out_dir if out_dir is not None else default_out_dir(runs)
    target = output_location(spec)
    refuse_inside_job(target, writes=" (the report folder)")
    previous = _previous_files(target)
    from pipeline.parallel import parallel_backend

    with parallel_backend(backend, threads if threads is not None else -1, scheduler):
        tables = gather_runs(runs, top=top, top_words=top_words, bad=bad, progress=note)
    # written to the folder, or to a local stage uploaded to the store once complete
    # (analysis.json last: it lists the others)
    with output_folder(spec, last=(ANALYSIS_RECORD,)) as out:
        note("writing tables")
        table_files = {name: write_table(df, out / TABLE_DIR, name) for name, df in tables.items()}
        note("drawing plots")
        plots = make_plots(tables, out / PLOT_DIR)
        written = {p for files in table_files.values() for p in files}
        written |= {out / PLOT_DIR / p.file for p in plots}
        note("writing report.html")
        bad = bad or BadDefinition()
        report = write_report(runs, tables, plots, out, PLOT_DIR, top_words=top_words)
        names = sorted(p.relative_to(out).as_posix() for p in written)
        _write_record(out, runs, report, table_files, plots, names, top, top_words, bad)
    _remove_stale(target, previous, set(names))
    ref = target.ref()
    table_refs = {k: [ref / p.relative_to(out).as_posix() for p in v] for k, v in table_files.items()}
    return AnalysisResult(ref, ref / report.name, runs, tables, table_refs, plots)


def _write_record(
    out: Path,
    runs: Sequence[RunInfo],
    report: Path,
    table_files: Mapping[str, list[Path]],
    plots: Sequence[Plot],
    names: list[str],
    top: int,
    top_words: int,
    bad: BadDefinition,
) -> None:
    """``analysis.json``: what the analysis read (each run's manifest digest) and wrote."""
    versions = package_versions()
    for extra in ("duckdb", "matplotlib", "wordfreq", "itables"):
        try:
            from importlib import metadata

            versions[extra] = metadata.version(extra)
        except Exception:  # a missing distribution only blanks the provenance entry
            versions[extra] = "not installed"
    write_json_atomic(
        out / ANALYSIS_RECORD,
        {
            "runs": [
                {
                    "label": r.label,
                    "path": str(r.path.resolve()),
                    "manifest_sha256": _manifest_digest(r),
                    "parts": len(r.parts),
                }
                for r in runs
            ],
            "report": report.name,
            "tables": sorted(table_files),
            "plots": [p.file for p in plots],
            "files": names,
            "options": {"top": top, "top_words": top_words, "bad_words": bad.words, "bad_score": bad.score},
            "versions": versions,
        },
    )
