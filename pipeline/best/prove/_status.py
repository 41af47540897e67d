"""``boggle prove --status``: where a proof stands, read without proving or locking anything.

A proof of a big shape runs for hours over several sessions; this reads its directory (a local
folder or an object-store URL) while it runs or between sessions and says how far it is: the
parts that verify against their records (size, BLAKE2b, the proof's identity, the chunk's class
ids), what they hold, the CPU and wall time they record, and an estimate of the CPU left.

The estimate. Chunks are ranges of class ids and cost follows the id, so the parts done are a
fair sample of what is left only where they were proved in a shuffled order
(:func:`pipeline.best.prove._job.dispatch_order`); parts proved in id order are not. The estimate is
therefore stratified: the chunks are cut into ``strata`` equal ranges of chunk numbers, each
range's CPU a class is the mean of its parts that record their CPU, and the classes left in a
range are charged at its own rate (a range with fewer than two such parts, at the rate of all
of them). The 95% interval resamples the parts (each one's classes together, since neighbouring
classes cost alike) within each range.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.errors import ConfigError, DamagedRunError

#: the estimate's ranges of chunk numbers, and its resampling rounds
STRATA = 8
ROUNDS = 2000


@dataclass(frozen=True, kw_only=True)
class CpuLeft:
    """The CPU seconds the classes not yet proved will take: the estimate and a 95% interval."""

    cpu_s: float
    low_s: float
    high_s: float
    parts_sampled: int  # parts that record their CPU, the estimate's sample
    strata: int


@dataclass(kw_only=True)
class ProofStatus:
    out: str
    finished: bool
    config: dict[str, Any]
    spec: str
    parts_total: int
    parts_verified: int
    classes_total: int  # the proof's classes (a sample's: its limit)
    classes_done: int
    eliminated: int
    boards_scored: int
    boards: list[tuple[str, int]] = field(default_factory=list)  # >= threshold, canonical, best first
    best_scored: tuple[str, int] | None = None  # the best board any class scored, even below T
    distrusted: list[tuple[str, str]] = field(default_factory=list)  # (part, why): to be recomputed
    # of those, the ones that are damage (not a part whose record a running proof is yet to write)
    damaged: int = 0
    cpu_s: float = 0.0  # recorded by parts_cpu of the parts
    parts_cpu: int = 0
    wall_s: float = 0.0  # each session's start to its last part, summed, over parts_wall parts
    parts_wall: int = 0
    left: CpuLeft | None = None
    workers: int = 1  # the proof's --n-jobs, resolved here
    notes: list[str] = field(default_factory=list)
    sample: bool = False  # a --limit-classes timing sample (fewer classes): never certified or _SUCCESS
    classes_all: int = 0  # the classes of the whole proof (a sample's classes_total is fewer)

    @property
    def sample_done(self) -> bool:
        """A sample all of whose parts verify: finished, as far as a sample ever is."""
        return self.sample and self.parts_total > 0 and self.parts_verified == self.parts_total


def estimate_left(
    part_cpu: dict[int, float],
    part_rows: dict[int, int],
    chunk_rows: list[int],
    done: set[int],
    *,
    strata: int = STRATA,
    rounds: int = ROUNDS,
    seed: int = 0,
) -> CpuLeft | None:
    """The CPU the chunks not in ``done`` will take, from the parts that recorded theirs
    (``part_cpu`` seconds over ``part_rows`` classes, by chunk), stratified by chunk number (see
    the module docstring). ``chunk_rows``: every chunk's class count. None without a sample of
    at least two parts."""
    n = len(chunk_rows)
    sampled = sorted(c for c in part_cpu if part_rows.get(c, 0) > 0)
    if len(sampled) < 2:
        return None
    strata = max(1, min(strata, n))
    stratum = (np.arange(n) * strata) // n
    rows = np.asarray(chunk_rows, dtype=np.float64)
    left = np.array([0.0 if c in done else rows[c] for c in range(n)])
    cpu = np.array([part_cpu[c] for c in sampled])
    classes = np.array([part_rows[c] for c in sampled], dtype=np.float64)
    where = stratum[sampled]
    rng = np.random.default_rng(seed)

    def total(pick: np.ndarray | None) -> np.ndarray:
        """The CPU left for each resampling (``pick``: rounds x sample indices; None: the sample)."""
        idx = np.arange(len(sampled))[None, :] if pick is None else pick
        pooled = cpu[idx].sum(axis=1) / classes[idx].sum(axis=1)
        out = np.zeros(idx.shape[0])
        for s in range(strata):
            classes_left = left[stratum == s].sum()
            if classes_left == 0:
                continue
            own = np.flatnonzero(where == s)
            if len(own) < 2:
                out += pooled * classes_left
                continue
            sub = own[None, :] if pick is None else own[rng.integers(0, len(own), (idx.shape[0], len(own)))]
            out += cpu[sub].sum(axis=1) / classes[sub].sum(axis=1) * classes_left
        return out

    point = float(total(None)[0])
    boot = total(rng.integers(0, len(sampled), (rounds, len(sampled))))
    low, high = np.quantile(boot, [0.025, 0.975])
    return CpuLeft(
        cpu_s=point, low_s=float(low), high_s=float(high), parts_sampled=len(sampled), strata=strata
    )


def check_undamaged(status: ProofStatus) -> None:
    """Raise DamagedRunError (exit 4) when ``status`` found damaged files: parts that differ from
    their records, foreign or extra parts (a part a running proof has yet to record is not)."""
    if status.damaged:
        what = "the finished proof refuses it" if status.finished else "a resumed proof recomputes it"
        n = f"{status.damaged:,} part{'s' if status.damaged > 1 else ''}"
        raise DamagedRunError(f"{n} damaged or not this proof's ({what}; see above)", source=status.out)


def proof_status(out: str) -> ProofStatus:
    """Read the proof in ``out`` (a folder or an object-store URL) without writing to it. Raises
    ConfigError (exit 2) where it holds no proof, DamagedRunError (exit 4) where its record or
    manifest does not verify."""
    import joblib

    from pipeline import store
    from pipeline.best.prove._classes import ClassSpace
    from pipeline.best.prove._config import ProveConfig, selected_classes
    from pipeline.best.prove._job import FORMAT, proof_tag
    from pipeline.boards import parse_shape
    from pipeline.lexicon import compile_for_boards
    from pipeline.rules import get_rules

    view = store.inspect(out)  # the record and manifest, sealed: what a re-run reads
    run, name = (
        (view.record, store.RUN_RECORD) if view.record is not None else (view.manifest, store.MANIFEST)
    )
    if run is None:
        raise ConfigError(f"{out}: no proof here (no {store.RUN_RECORD}); give the --out of a boggle prove")
    where = view.loc.url(name)
    if run.get("format") != FORMAT or "config" not in run or "identity" not in run:
        raise ConfigError(f"{where}: not a boggle prove record (format {run.get('format')!r})")
    config, identity = run["config"], run["identity"]
    try:
        cfg = ProveConfig(**config).resolve()
    except TypeError:
        raise DamagedRunError(f"{where}: its config is not a prove config") from None
    assert cfg.rules is not None
    lexicon = compile_for_boards(cfg.dictionary, get_rules(cfg.rules, min_length=cfg.min_length))
    spec = str(identity["classes"])
    rows, cols = parse_shape(cfg.shape)
    every = ClassSpace.from_spec(spec, lexicon.alphabet, rows, cols).canonical_ids()
    ids = selected_classes(every, cfg)
    chunks = [ids[i : i + cfg.chunk_size] for i in range(0, len(ids), cfg.chunk_size)]
    n_jobs = cfg.n_jobs if cfg.n_jobs is not None else -1
    status = ProofStatus(
        out=str(out),
        finished=False,
        config=config,
        spec=spec,
        parts_total=len(chunks),
        parts_verified=0,
        classes_total=len(ids),
        classes_done=0,
        eliminated=0,
        boards_scored=0,
        workers=int(joblib.effective_n_jobs(n_jobs)),
        sample=len(ids) < len(every),
        classes_all=len(every),
    )
    if lexicon.content_hash != identity.get("lexicon"):
        status.notes.append(
            f"the word list {cfg.dictionary} has changed since this proof started: resuming it "
            "with this word list is refused"
        )
    if view.manifest is not None:
        _finished(status, view.loc, view.manifest, len(ids), len(chunks))
    else:
        _unfinished(status, view.loc, proof_tag(identity), chunks, (rows, cols))
    return status


def _finished(status: ProofStatus, loc: Any, manifest: dict[str, Any], n_ids: int, n_chunks: int) -> None:
    """What a finished proof's manifest says, and what its files' verification finds."""
    from pipeline import store
    from pipeline.store import PART_RE

    status.finished = True
    status.distrusted = store.job_problems(loc, manifest)
    status.distrusted += store.manifest_mismatches(manifest, n_chunks, {"classes_total": n_ids})
    bad = {n for n, why in status.distrusted if PART_RE.match(n) and why != "not part of the finished job"}
    status.parts_verified = n_chunks - len(bad)
    status.damaged = len(status.distrusted)
    status.classes_done = int(manifest.get("classes_total", n_ids))
    status.eliminated = int(manifest.get("eliminated", 0))
    status.boards_scored = int(manifest.get("boards_scored", 0))
    status.boards = [(str(b), int(s)) for b, s in manifest.get("boards", [])]
    status.cpu_s, status.parts_cpu = float(manifest.get("cpu_s", 0.0)), int(manifest.get("cpu_s_parts", 0))
    status.wall_s, status.parts_wall = (
        float(manifest.get("wall_s", 0.0)),
        int(manifest.get("wall_s_parts", 0)),
    )
    if status.boards:
        status.best_scored = status.boards[0]


def _unfinished(status: ProofStatus, loc: Any, tag: str, chunks: list[Any], shape: tuple[int, int]) -> None:
    """What the parts of an unfinished proof hold, each checked as a resume checks it."""
    from pipeline import store
    from pipeline.best.prove._certificate import best_of, canonical_compact, certificate_totals, sessions_wall
    from pipeline.best.prove._job import META_CPU, META_SESSION, META_SESSION_S
    from pipeline.store import read_part

    part_cpu: dict[int, float] = {}
    part_rows: dict[int, int] = {}
    part_wall: list[tuple[str, float]] = []
    tables: dict[int, Any] = {}
    for check in store.check_parts(loc, tag, len(chunks), noun="proof"):
        c, problem = check.chunk, check.problem
        if problem is None:
            table = read_part(loc, c)
            if not np.array_equal(table.column("class_id").to_numpy(), chunks[c]):
                problem = f"not the classes of chunk {c}"
        if problem is not None:
            status.distrusted.append((check.name, problem))
            # a part renamed into place is recorded by the proof's main process a moment later
            # (a stray beyond the chunks is damage whether recorded or not)
            status.damaged += check.record is not None or c >= len(chunks)
            continue
        tables[c] = table
        meta = {k.decode(): v.decode() for k, v in (table.schema.metadata or {}).items()}
        if META_CPU in meta:
            part_cpu[c], part_rows[c] = float(meta[META_CPU]), table.num_rows
        if META_SESSION in meta and META_SESSION_S in meta:
            part_wall.append((meta[META_SESSION], float(meta[META_SESSION_S])))
    rows, cols = shape
    status.parts_verified = len(tables)
    status.classes_done = sum(t.num_rows for t in tables.values())
    status.eliminated, status.boards_scored, boards = certificate_totals(list(tables.values()), rows, cols)
    status.boards = [(b.board, b.score) for b in boards]
    best = best_of(tables.values())
    status.best_scored = (canonical_compact(best[1], rows, cols), best[0]) if best else None
    status.cpu_s, status.parts_cpu = sum(part_cpu.values()), len(part_cpu)
    status.wall_s, status.parts_wall = sessions_wall(part_wall), len(part_wall)
    status.left = estimate_left(part_cpu, part_rows, [len(x) for x in chunks], set(tables))


def class_costs(
    out: Path, since: datetime | None = None, before: datetime | None = None
) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Each class's id and seconds from every certificate part in ``out`` (a local folder):
    (ids, seconds, parts, parts scaled). A part that records its worker's CPU
    (``boggle.cpu_s``) has its classes' wall seconds scaled to it, so that they add up to the
    CPU measured; older parts keep their wall seconds.

    ``since`` / ``before`` (aware): only the parts of the sessions that started in that window
    (``boggle.session``; a part without it is left out), e.g. those proved on one machine: a
    CPU-second is worth more on one day's shared machine than on another's. A window that
    holds no part gives empty arrays."""
    import pyarrow.parquet as pq

    from pipeline.best.prove._job import META_CPU, META_SESSION

    parts = sorted(out.glob("part-*.parquet"))
    if not parts:
        raise ConfigError(f"{out}: no certificate parts")
    windowed = since is not None or before is not None
    ids, chunks = [np.zeros(0, np.int64)], [np.zeros(0)]
    scaled = kept = 0
    for p in parts:
        if windowed:
            session = (pq.read_schema(p).metadata or {}).get(META_SESSION.encode())
            if session is None:
                continue
            started = datetime.fromisoformat(session.decode())
            if (since is not None and started < since) or (before is not None and started >= before):
                continue
        kept += 1
        table = pq.read_table(p, columns=["class_id", "seconds"])
        wall = table.column("seconds").to_numpy()
        cpu = (table.schema.metadata or {}).get(META_CPU.encode())
        if cpu is not None and wall.sum() > 0:
            wall = wall * (float(cpu) / wall.sum())
            scaled += 1
        ids.append(table.column("class_id").to_numpy().astype(np.int64))
        chunks.append(wall)
    return np.concatenate(ids), np.concatenate(chunks), kept, scaled


def bootstrap_total(
    seconds: np.ndarray, n_classes: int, seed: int = 0, rounds: int = 10_000
) -> dict[str, float]:
    """CPU-hours for ``n_classes`` classes from a sample's ``seconds``: the estimate and a 95%
    bootstrap interval."""
    rng = np.random.default_rng(seed)
    means = rng.choice(seconds, (rounds, len(seconds)), replace=True).mean(axis=1)
    to_h = n_classes / 3600
    return {
        "cpu_h": float(seconds.mean() * to_h),
        "low_cpu_h": float(np.quantile(means, 0.025) * to_h),
        "high_cpu_h": float(np.quantile(means, 0.975) * to_h),
    }
