"""Gathering the statistics of finished runs: each part's recorded statistics (or, for a part
written before they were recorded, its statistics computed from the part file) merged into the
run's, then the second pass the regressions' intervals need.

**Pass 1.** The statistics a worker recorded beside each part (:mod:`pipeline.stats`) are read,
checked against the checksum the sealed manifest gives and against the run's identity, and
added into the run's :class:`~pipeline.stats.RunStats`. A part without them is read and its
statistics computed as the worker would have (the dice re-rolled from the seed).

**Pass 2.** The HC1 covariance of a least-squares fit needs the residual of every board under
the *final* coefficients, which no sum computed before the fit can give; so once the pass-1
sums are fitted, each part's ``board`` and ``score`` columns are read again (a few bytes a
board, never the word lists) for the fits' meat ``X' diag(e^2) X`` and residual sums of squares.
The same pass recounts what a non-default spec changes (another bad-board definition, more top
boards than were recorded).

Both passes run part by part under joblib (threads by default; loky or a dask cluster as the
caller chooses), and results are merged as they come back, so memory holds one part per worker
and the merged sums, whatever the number of boards.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pipeline import stats
from pipeline.analyze._models import RunModels, run_models
from pipeline.analyze._provenance import LETTER_GENERATORS
from pipeline.analyze._runs import RunError, RunInfo
from pipeline.errors import BoggleError, DamagedRunError

ProgressFn = Callable[[str], None]
ALL_SOURCES = "(all)"  # the row of a run of several sources that pools them
WINDOW = 64  # part tasks in flight at most (their results are a few hundred kB each)


# ---------------------------------------------------------------- what a part task needs


@dataclass(frozen=True)
class DiceRecipe:
    """How to re-roll the dice of a generated run's chunk (parts without recorded statistics)."""

    record: dict[str, Any] | None  # the manifest's dice record, else the built-in set's name
    name: str
    rows: int
    cols: int
    seed: int
    chunk_size: int
    placement: str | None = None  # the run's [boards] placement: the layout is re-rolled as placed


@dataclass(frozen=True)
class PartJob:
    """One part of one run, as a task (picklable) finds it: the run directory (a folder or an
    object store's URL, read through :func:`pipeline.store._location`) and names in it."""

    run: int
    chunk: int
    run_dir: str
    name: str  # the part file
    stats_name: str | None  # its statistics file, when recorded
    stats_digest: str | None
    tag: str
    bins: tuple[str, ...]
    dice: DiceRecipe | None
    required: tuple[str, ...] = ()  # the columns every part of the run must have

    @property
    def path(self) -> str:
        """The part as messages name it."""
        return f"{self.run_dir.rstrip('/')}/{self.name}"


def dice_set_of(recipe: DiceRecipe) -> Any:
    from pipeline.boards import dice_from_record, load_dice_set

    if recipe.record is not None:
        return dice_from_record(recipe.record)
    return load_dice_set(recipe.name, recipe.rows, recipe.cols)


def chunk_layout(recipe: DiceRecipe, chunk: int, table: Any) -> stats.DiceLayout | None:
    """The dice of a chunk re-rolled from the run's seed, or None unless they give back the
    part's boards exactly (board ids included)."""
    from pipeline.boards import chunk_dice_layout, compact_strings, generator_alphabet

    dice = dice_set_of(recipe)
    n = table.num_rows
    first = chunk * recipe.chunk_size
    ids = table.column("board_id").to_numpy()
    if not np.array_equal(ids, np.arange(first, first + n)):
        return None
    alphabet = generator_alphabet(dice)
    order, side = chunk_dice_layout(dice, recipe.seed, chunk, n, recipe.placement)
    rolled = compact_strings(dice.face_table(alphabet)[order, side], alphabet.faces)
    if not rolled.equals(table.column("board").combine_chunks().cast(rolled.type)):
        return None
    return stats.DiceLayout(tuple(tuple(d) for d in dice.dice), order, side)


def _layout(job: PartJob, table: Any) -> stats.DiceLayout | None:
    """:func:`chunk_layout` of a part's chunk, None where the run has no dice recipe or its
    dice cannot be rolled again (a damaged or changed dice file)."""
    if job.dice is None:
        return None
    try:
        return chunk_layout(job.dice, job.chunk, table)
    except (BoggleError, ValueError):
        return None


def dice_recipe(run: RunInfo) -> tuple[DiceRecipe | None, str, str]:
    """(how to re-roll the run's dice, its display name, why not): None and the reason for
    ingested or letter-generated boards, or a config the dice cannot be re-rolled from."""
    from pipeline.boards import dice_from_record, load_dice_set

    got = run.config.get("boards")
    boards_cfg: dict[str, Any] = got if isinstance(got, dict) else {}
    if boards_cfg.get("source", "generate") != "generate":
        return None, "", "ingested boards have no dice"
    name = str(boards_cfg.get("dice") or "")
    if not name or name in LETTER_GENERATORS:
        return None, "", f"boards from the {name or 'unknown'} generator are not rolled with dice"
    record = run.manifest.get("dice")
    try:
        # the faces the run recorded (a dice file's, which may be gone or edited since), else
        # the built-in set of that name (runs made before the record existed)
        if isinstance(record, dict):
            dice = dice_from_record(record)
        else:
            record = None
            dice = load_dice_set(name)
        label = f"{Path(dice.file).name} (sha256 {dice.sha256[:8]})" if dice.file is not None else name
        placement = boards_cfg.get("placement")
        recipe = DiceRecipe(
            record,
            name,
            dice.rows,
            dice.cols,
            int(boards_cfg["seed"]),
            int(boards_cfg["chunk_size"]),
            str(placement) if placement else None,
        )
        int(boards_cfg["count"])
    except (BoggleError, KeyError, TypeError, ValueError) as exc:
        return None, "", f"cannot re-roll the dice ({exc})"
    return recipe, label, ""


# ---------------------------------------------------------------- pass 1


def _read_stats(job: PartJob) -> stats.PartStats | None:
    if job.stats_name is None:
        return None
    from pipeline.store import bytes_blake2b, location

    where = f"{job.path} (its statistics)"
    loc = location(job.run_dir)
    stored = loc.stored_bytes(job.stats_name)
    if bytes_blake2b(stored) != job.stats_digest:
        raise DamagedRunError(f"{where}: differs from the checksum its manifest records")
    try:
        data = loc.payload(job.stats_name, stored)
    except ValueError as exc:
        raise DamagedRunError(f"{where}: {exc}") from None
    got = stats.from_bytes(data, where)
    if got.tag != job.tag or got.chunk != job.chunk:
        raise DamagedRunError(f"{where}: statistics of another run or part")
    return got


def read_part(job: PartJob, columns: Sequence[str] | None = None, required: Sequence[str] = ()) -> Any:
    """A part's table (``columns`` of it; in an object store only their bytes are fetched); a
    RunError naming the columns it lacks."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from pipeline.analyze._runs import printable
    from pipeline.store import location

    path = job.path
    try:
        with location(job.run_dir).open(job.name) as fh, pq.ParquetFile(fh) as pf:
            names = set(pf.schema_arrow.names)
            missing = [c for c in dict.fromkeys([*(columns or ()), *required]) if c not in names]
            if missing:
                raise RunError(
                    f"{path}: lacks column(s) {', '.join(missing)} (not a board run of this pipeline?)"
                )
            return pf.read(columns=list(columns) if columns is not None else None)
    except (OSError, pa.ArrowException) as exc:
        raise RunError(f"{path}: not a readable Parquet file ({printable(str(exc))[:200]})") from None


def part_pass1(job: PartJob, spec: stats.StatsSpec) -> tuple[int, stats.PartStats, bool]:
    """(run, the part's statistics, whether they were computed here rather than recorded)."""
    recorded = _read_stats(job)
    if recorded is not None:
        return job.run, recorded, False
    table = read_part(job, required=job.required)
    bins = stats.length_bins_of(table.column_names)
    layout = _layout(job, table)
    return (
        job.run,
        stats.part_stats(table, tag=job.tag, chunk=job.chunk, bins=bins, spec=spec, layout=layout),
        True,
    )


# ---------------------------------------------------------------- pass 2


@dataclass(frozen=True)
class Pass2Plan:
    """What the second pass computes for one run (picklable, sent with each of its parts)."""

    faces: tuple[str, ...] | None  # the run's faces (None: no cell-level models)
    sources: tuple[str, ...]
    coef_source: np.ndarray | None  # [S, K]
    coef_pooled: np.ndarray | None  # [1, K], None when one source (its fit is the pooled one)
    coef_position: np.ndarray | None  # [1, 3K]
    shape: tuple[int, int] | None
    recount_bad: stats.BadDefinition | None
    recount_top: int | None


@dataclass
class Pass2Result:
    run: int
    meat_source: np.ndarray | None = None
    rss_source: np.ndarray | None = None
    meat_pooled: np.ndarray | None = None
    rss_pooled: np.ndarray | None = None
    meat_position: np.ndarray | None = None
    bad: stats.BadCounts | None = None
    top: list[dict[str, Any]] | None = None
    sources: list[str] | None = None


def part_pass2(job: PartJob, plan: Pass2Plan) -> Pass2Result:
    """The second pass over one part: the meats of the run's fits, and the recounts."""
    out = Pass2Result(job.run)
    columns = ["board", "score", "source", "rows", "cols"]
    if plan.recount_bad is not None:
        columns += ["n_words", "dead_cells", "board_id"]
    table = read_part(job) if plan.recount_top is not None else read_part(job, columns)
    names, group = stats.source_codes(table)
    remap = np.array([plan.sources.index(s) for s in names], np.int64)
    group = remap[group] if len(group) else group
    score = table.column("score").to_numpy().astype(np.int64)
    codes = None
    if plan.shape is not None:
        part_faces, local = stats.decode_column(table.column("board"), *plan.shape)
        if plan.faces is not None:
            index = {f: i for i, f in enumerate(plan.faces)}
            lut = np.array([index[f] for f in part_faces], np.int64)
            codes = lut[local] if len(local) else local.astype(np.int64)
            k = len(plan.faces)
            y = score.astype(np.float64)
            if plan.coef_source is not None:
                out.meat_source, out.rss_source = stats.meat(
                    codes, y, group, plan.coef_source, k, len(plan.sources)
                )
            zeros = np.zeros(len(score), np.int64)
            if plan.coef_pooled is not None:
                out.meat_pooled, out.rss_pooled = stats.meat(codes, y, zeros, plan.coef_pooled, k, 1)
            if plan.coef_position is not None:
                classes = stats.position_classes(*plan.shape).astype(np.int64)
                out.meat_position, _ = stats.meat(
                    codes + classes[None, :] * k, y, zeros, plan.coef_position, 3 * k, 1
                )
        if plan.recount_bad is not None:
            codes_local = local
            layout = _layout(job, table)
            bad = plan.recount_bad.mask(table.column("n_words").to_numpy(), score)
            dead = table.column("dead_cells").to_numpy()
            out.bad = stats.bad_counts(bad, dead, part_faces, codes_local, plan.shape, layout)
    elif plan.recount_bad is not None:
        bad = plan.recount_bad.mask(table.column("n_words").to_numpy(), score)
        out.bad = stats.bad_counts(bad, table.column("dead_cells").to_numpy(), [], None, None, None)
    if plan.recount_top is not None:
        out.sources = names
        g_local = stats.source_codes(table)[1]
        out.top = stats.top_boards(table, g_local, max(1, len(names)), plan.recount_top)
    return out


# ---------------------------------------------------------------- the gathered runs


@dataclass
class Gathered:
    """A run's merged statistics, its fits (None: boards of several shapes) and notes."""

    run: RunInfo
    stats: stats.RunStats
    models: RunModels | None
    dice_name: str
    dice_note: str
    parts_recorded: int = 0
    parts_computed: int = 0


def read_vocabulary(run: RunInfo, cache: dict[str, list[str]] | None = None) -> list[str] | None:
    """The run's vocabulary (its words, then ``""``), None for a run made before it was kept;
    runs of one word list share one copy (``cache``, by the file's checksum)."""
    from pipeline.store import VOCABULARY, location

    files = run.manifest.get("files")
    if not isinstance(files, dict) or not isinstance(files.get(VOCABULARY), dict):
        return None
    digest = str(files[VOCABULARY].get("blake2b"))
    if cache is not None and digest in cache:
        return cache[digest]
    loc = location(str(run.path))
    try:
        text = gzip.decompress(loc.read_bytes(VOCABULARY)).decode("utf-8")
    except (OSError, EOFError, UnicodeDecodeError, gzip.BadGzipFile) as exc:
        raise DamagedRunError(f"{run.path}/{VOCABULARY}: unreadable ({exc})") from None
    words = text.split("\n")
    if words[-1] != "":
        raise DamagedRunError(f"{run.path}/{VOCABULARY}: unreadable (no final newline)")
    if cache is not None:
        cache[digest] = words
    return words  # the split leaves "" last: the vocabulary's index len(words)


def part_jobs(index: int, run: RunInfo, dice: DiceRecipe | None) -> list[PartJob]:
    from pipeline.store import REQUIRED_COLUMNS, length_bins, listed_parts, part_name, part_tag, stats_name

    tag = part_tag(str(run.manifest.get("format")), run.manifest.get("identity") or {})
    listed = listed_parts(run.manifest, str(run.path))
    min_length = int(run.rules.get("min_length", 3) or 3)
    bins = tuple(length_bins(min_length))
    required = (*REQUIRED_COLUMNS, *(["words"] if run.has_words else []))
    jobs = []
    for chunk in sorted(listed):
        entry = listed[chunk].stats
        name = stats_name(chunk) if entry is not None else None
        digest = entry["blake2b"] if entry is not None else None
        jobs.append(
            PartJob(index, chunk, str(run.path), part_name(chunk), name, digest, tag, bins, dice, required)
        )
    return jobs


def parallel(fn: Callable[..., Any], args: Iterable[tuple[Any, ...]], n_jobs: int | None) -> Iterable[Any]:
    """``fn(*a)`` for each ``a`` on joblib's workers, in the order of ``args`` (the second pass
    adds floating-point sums: in the order they came, their last bits hung on the timing), in
    windows of :data:`WINDOW` tasks, or results pile up where the merge is slower than the
    workers (joblib starts a task whenever a worker is free: 10,000 parts grew by 330 MB)."""
    from itertools import islice

    from joblib import Parallel, delayed

    it = iter(args)
    while window := list(islice(it, WINDOW)):
        # n_jobs None: joblib.parallel_config decides (boggle analyze sets the backend and
        # workers); one task a batch: a batch's results are held until all of it is done
        yield from Parallel(n_jobs=n_jobs, return_as="generator", prefer="threads", batch_size=1)(
            delayed(fn)(*a) for a in window
        )


def keep_memory_flat() -> None:
    """Arrow's C library allocator for this process: its default (mimalloc) keeps the pages a
    part's reading freed for later reuse by the same thread, which added about 30 MB to the
    peak of the analysis of 1,000 parts (measured: 490 against 458 MB, at 1% of the CPU);
    glibc's malloc gives them back."""
    import pyarrow as pa

    pa.set_memory_pool(pa.system_memory_pool())


def gather(
    runs: Sequence[RunInfo],
    spec: stats.StatsSpec,
    *,
    n_jobs: int | None = None,
    progress: ProgressFn | None = None,
) -> list[Gathered]:
    """Every run's merged statistics and fitted models (both passes)."""
    keep_memory_flat()
    note = progress or (lambda _msg: None)
    out: list[Gathered] = []
    jobs: list[PartJob] = []
    vocabularies: dict[str, list[str]] = {}
    for i, run in enumerate(runs):
        recipe, name, why = dice_recipe(run)
        rs = stats.RunStats(spec, read_vocabulary(run, vocabularies))
        out.append(Gathered(run, rs, None, name, why))
        jobs += part_jobs(i, run, recipe)
    note(f"merging the statistics of {len(jobs):,} part(s)")
    for i, ps, computed in parallel(part_pass1, ((j, spec) for j in jobs), n_jobs):
        g = out[i]
        if ps.tag != g.stats.tag and g.stats.tag is not None:
            raise DamagedRunError(f"{g.run.path}: parts of several runs")
        g.stats.add(ps)
        g.parts_computed += computed
        g.parts_recorded += not computed
    plans = []
    for g in out:
        g.models = run_models(g.stats)
        plans.append(_pass2_plan(g))
    todo = [(j, plans[j.run]) for j in jobs if plans[j.run] is not None]
    if todo:
        note(f"second pass over {len(todo):,} part(s): the fits' intervals")
        for res in parallel(part_pass2, todo, n_jobs):
            _add_pass2(out[res.run], res)
    for g in out:
        if g.stats.dice_mixed:
            g.dice_note = "re-rolling the dice does not give the stored boards"
    return out


def _pass2_plan(g: Gathered) -> Pass2Plan | None:
    rs, m = g.stats, g.models
    recount_bad = rs.spec.bad if rs.bad_stale else None
    recount_top = rs.spec.top if rs.top_stale else None
    if recount_bad is not None or recount_top is not None:
        # the recounts replace what pass 1 merged
        rs.reset_bad()
        if recount_top is not None:
            rs.top.clear()
    if m is None and recount_bad is None and recount_top is None:
        return None
    sources = tuple(rs.sources())
    if m is None:
        return Pass2Plan(None, sources, None, None, None, rs.shape, recount_bad, recount_top)
    coef_source = np.stack([m.by_source[s].coef for s in sources])
    coef_pooled = None if len(sources) == 1 else m.pooled.coef[None, :]
    return Pass2Plan(
        tuple(m.faces),
        sources,
        coef_source,
        coef_pooled,
        m.position.coef[None, :],
        rs.shape,
        recount_bad,
        recount_top,
    )


def _add_pass2(g: Gathered, res: Pass2Result) -> None:
    m, rs = g.models, g.stats
    if m is not None:
        sources = rs.sources()
        if res.meat_source is not None and res.rss_source is not None:
            for i, s in enumerate(sources):
                model = m.by_source[s]
                assert model.meat is not None
                model.meat += res.meat_source[i]
                model.rss += float(res.rss_source[i])
        if res.meat_pooled is not None and res.rss_pooled is not None and len(sources) > 1:
            assert m.pooled.meat is not None
            m.pooled.meat += res.meat_pooled[0]
            m.pooled.rss += float(res.rss_pooled[0])
        if res.meat_position is not None:
            assert m.position.meat is not None
            m.position.meat += res.meat_position[0]
    if res.bad is not None:
        rs.add_bad(res.bad)
    if res.top is not None and res.sources is not None:
        rs.add_top(res.top, res.sources)


def groups(
    gathered: Sequence[Gathered], *, total: bool = False
) -> Iterator[tuple[str, str, str | None, stats.RunStats]]:
    """(run, source label, source key, statistics) of every run and source in order; with
    ``total``, a run of several sources also gives ``(all)`` (key None) after them."""
    for g in gathered:
        names = g.stats.sources()
        for name in names:
            yield g.run.label, name, name, g.stats
        if total and len(names) > 1:
            yield g.run.label, ALL_SOURCES, None, g.stats


def check_runs(gathered: Sequence[Gathered]) -> None:
    """Refuse a run whose parts hold another number of boards than its manifest records."""
    from pipeline.store import MANIFEST

    for g in gathered:
        expected = g.run.counts.get("boards")
        if expected is not None and g.stats.boards != int(expected):
            raise RunError(
                f"{g.run.path}: the part files hold {g.stats.boards:,} boards but {MANIFEST} records "
                f"{int(expected):,}; the run was changed after it finished"
            )
