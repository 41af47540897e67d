"""The batch runner end to end: determinism across backends, resume after SIGKILL, ingest
counts, manifest and schema, the CLI's exit codes, and the run lock."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import joblib
import numpy as np
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from pipeline import store
from pipeline.boards import generate_compact, parse_compact
from pipeline.cli import app
from pipeline.config import load_config
from pipeline.errors import LexiconError, OutputConflictError
from pipeline.runner import Progress, execute, run_job
from pipeline.solve._reference import ReferenceSolver
from pipeline.store._parts import committed_chunks, part_path
from pipeline.store._schema import PARTS_DIR
from tests.conftest import (
    REPO,
    gen_config,
    make_inputs,
    part_bytes,
    read_side,
    read_side_json,
    side_path,
    write_toml,
)

CLI = CliRunner()


# ---------------------------------------------------------------- determinism


@pytest.mark.integration
def test_same_data_with_n_jobs_1_2_and_dask(tmp_path: Path, enable2k_path: str) -> None:
    distributed = pytest.importorskip("dask.distributed")
    one = execute(gen_config(enable2k_path, tmp_path / "one"), n_jobs=1)
    with joblib.parallel_config(backend="loky", n_jobs=2):
        two = execute(gen_config(enable2k_path, tmp_path / "two"))
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address="127.0.0.1:0"
    ) as cluster:
        cfg = gen_config(
            enable2k_path, tmp_path / "dask", run__backend="dask", run__scheduler=cluster.scheduler_address
        )
        on_dask = run_job(cfg)
    assert one.boards == two.boards == on_dask.boards == 3000
    reference = part_bytes(tmp_path / "one")
    assert len(reference) == 6
    # byte-identical parts: the data and the metadata do not depend on how the run ran
    assert part_bytes(tmp_path / "two") == reference
    assert part_bytes(tmp_path / "dask") == reference
    table = store.read_run_table(tmp_path / "one")
    assert table.column("board_id").to_pylist() == list(range(3000))
    # the boards are the ones `boggle generate` prints for the same dice, seed and chunk size
    printed = "".join(generate_compact("new", 3000, 5, chunk_size=500)).splitlines()
    assert table.column("board").to_pylist() == printed


def test_results_agree_with_the_reference_solver(
    tmp_path: Path, enable2k_path: str, enable_words: list[str]
) -> None:
    summary = execute(
        gen_config(enable2k_path, tmp_path / "r", boards__count=40, boards__chunk_size=16), n_jobs=1
    )
    assert summary.status == "complete" and summary.chunks == 3
    ref = ReferenceSolver(enable_words, load_config(None).rule_set())
    rows = store.read_run_table(tmp_path / "r").to_pylist()
    for row in rows:
        want = ref.solve(parse_compact(row["board"]))
        assert row["words"] == sorted(want.words) and row["score"] == want.score
        assert row["dead_cells"] == want.dead_cells
    assert summary.words_total == sum(r["n_words"] for r in rows)


# ---------------------------------------------------------------- resume after kill -9


@pytest.mark.integration
def test_resume_after_sigkill_equals_a_clean_run(tmp_path: Path, enable2k_path: str) -> None:
    out = tmp_path / "killed"
    config = write_toml(
        tmp_path / "job.toml",
        {
            "boards": {"dice": "new", "count": 60000, "seed": 11, "chunk_size": 2000},
            "lexicon": {"path": enable2k_path},
            "run": {"out": str(out), "n_jobs": 2},
        },
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "pipeline.cli", "run", str(config), "--quiet"],
        cwd=REPO,
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120
        while len(list((out / PARTS_DIR).glob("_part-*.json*"))) < 3:
            assert proc.poll() is None, f"the run ended early: {proc.stderr.read() if proc.stderr else ''}"
            assert time.monotonic() < deadline, "no part appeared in time"
            time.sleep(0.005)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the whole job, workers included, like a crash
        proc.wait()
    # a part is trusted once the main process has recorded it; a part a worker renamed into
    # place just before the kill has no record yet and is recomputed
    recorded = len(list((out / PARTS_DIR).glob("_part-*.json*")))
    committed = len(committed_chunks(out))
    assert not side_path(out).exists(), "the run finished before it could be killed"
    assert 3 <= recorded <= committed < 30
    with pytest.raises(Exception, match="unfinished"):
        store.open_run(out)

    seen: list[Progress] = []
    resumed = run_job(load_config(config), progress=seen.append)
    assert resumed.status == "resumed" and resumed.chunks_reused == recorded
    assert resumed.boards_solved == 60000 - 2000 * resumed.chunks_reused
    assert seen[0].boards_reused == seen[0].boards_done == 2000 * resumed.chunks_reused
    clean = execute(load_config(config, {"run.out": str(tmp_path / "clean")}), n_jobs=1)
    assert clean.status == "complete" and clean.boards == resumed.boards == 60000
    assert part_bytes(out) == part_bytes(tmp_path / "clean")
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]
    # the finished run re-run is a no-op
    again = run_job(load_config(config))
    assert again.status == "already complete" and again.boards_solved == 0


@pytest.mark.parametrize(
    ("signum", "raised"), [(signal.SIGTERM, "Terminated"), (signal.SIGINT, "KeyboardInterrupt")]
)
def test_a_signal_whose_exception_was_swallowed_stops_the_run_at_its_next_commit(
    tmp_path: Path, tiny_dict: str, monkeypatch: pytest.MonkeyPatch, signum: int, raised: str
) -> None:
    """pyarrow drops an exception raised while it imports pandas lazily (a -j 1 run's first
    part): the run went on and sealed itself after a SIGTERM. A signal taken stops it at its next
    commit instead, unsealed, and a re-run finishes it from the parts committed before."""
    from pipeline import errors

    taken: list[int] = []
    monkeypatch.setattr(errors, "SIGNALS_TAKEN", taken)
    out = tmp_path / "run"

    def progress(p: Progress) -> None:
        if p.boards_done >= 1000:
            taken.append(signum)  # taken by the handler, its exception lost on the way

    with pytest.raises(KeyboardInterrupt) as info:
        execute(gen_config(tiny_dict, out), n_jobs=1, progress=progress)
    assert type(info.value).__name__ == raised
    assert not side_path(out).exists()
    # the two parts recorded before the signal, no more (the third, written by the solve in
    # this process, has no record: a re-run recomputes it)
    assert len(list((out / PARTS_DIR).glob("_part-*.json*"))) == 2
    taken.clear()
    resumed = execute(gen_config(tiny_dict, out), n_jobs=1)
    assert resumed.status == "resumed" and resumed.chunks_reused == 2 and resumed.boards == 3000
    execute(gen_config(tiny_dict, tmp_path / "clean"), n_jobs=1)
    assert part_bytes(out) == part_bytes(tmp_path / "clean")


# ---------------------------------------------------------------- ingest


def test_ingest_resume_after_lost_chunks(tmp_path: Path, enable2k_path: str) -> None:
    lines = "".join(generate_compact("new", 400, seed=3, chunk_size=400)).splitlines()
    for i in range(0, 400, 37):
        lines[i] = lines[i][:-1] + "!"  # malformed every 37th row
    src = tmp_path / "in.txt"
    src.write_text("\n".join(lines) + "\n")
    cfg = load_config(
        None,
        {
            "boards.source": "ingest",
            "boards.files": [str(src)],
            "boards.chunk_size": 50,
            "lexicon.path": enable2k_path,
            "run.out": str(tmp_path / "run"),
        },
    )
    first = execute(cfg, n_jobs=1)
    assert first.boards == 400 - 11 and first.rejected == 11 and first.chunks == 8
    before = part_bytes(tmp_path / "run")
    rejects_before = read_side(tmp_path / "run", store.REJECTS)
    # the state a crash leaves: some chunks never written, no manifest
    for k in (2, 5, 7):
        part_path(tmp_path / "run", k).unlink()
    side_path(tmp_path / "run").unlink()
    side_path(tmp_path / "run", store.REJECTS).unlink()
    with joblib.parallel_config(backend="threading", n_jobs=2):
        second = execute(cfg)
    assert second.status == "resumed" and second.chunks_reused == 5 and second.boards_solved < 200
    assert part_bytes(tmp_path / "run") == before
    assert read_side(tmp_path / "run", store.REJECTS) == rejects_before
    # a part replaced since it was committed (here: an empty table) no longer matches its record:
    # it is named and recomputed, never reused
    side_path(tmp_path / "run").unlink()
    pq.write_table(store.board_schema().empty_table(), part_path(tmp_path / "run", 6))
    notes: list[str] = []
    with joblib.parallel_config(backend="loky", n_jobs=2):
        third = execute(cfg, note=notes.append)
    assert third.chunks_reused == 7 and third.boards == 400 - 11
    assert len(notes) == 1 and "part-00006.parquet" in notes[0] and "recomputing" in notes[0]
    assert part_bytes(tmp_path / "run") == before
    # an input that changed under a started run is refused
    src.write_text("\n".join(lines[:100]) + "\n")
    with pytest.raises(OutputConflictError, match="different config"):
        execute(
            load_config(
                None,
                {
                    **{
                        "boards.source": "ingest",
                        "boards.files": [str(src)],
                        "boards.chunk_size": 50,
                        "lexicon.path": enable2k_path,
                        "run.out": str(tmp_path / "run"),
                    }
                },
            ),
            n_jobs=1,
        )


# ---------------------------------------------------------------- manifest and schema


def test_manifest_and_part_metadata(tmp_path: Path, enable2k_path: str) -> None:
    seen: list[Progress] = []
    cfg = gen_config(enable2k_path, tmp_path / "m", boards__count=1100)
    summary = execute(cfg, n_jobs=1, progress=seen.append)
    manifest, parts = store.open_run(tmp_path / "m")
    assert [p.name for p in parts] == ["part-00000.parquet", "part-00001.parquet", "part-00002.parquet"]
    assert [p["rows"] for p in manifest["parts"]] == [500, 500, 100]
    assert all(p["bytes"] == (tmp_path / "m" / p["file"]).stat().st_size for p in manifest["parts"])
    assert manifest["config"] == cfg.to_dict() and manifest["config"]["run"]["out"] == str(tmp_path / "m")
    lex = manifest["lexicon"]
    assert lex["name"] == "enable2k" and lex["n_words"] > 170_000 and len(lex["content_hash"]) == 64
    assert "report" in lex and lex["report"]["n_input"] == 173528
    assert manifest["rules"]["name"] == "boggle" and manifest["rules"]["min_length"] == 3
    assert {"numpy", "numba", "pyarrow", "joblib"} <= set(manifest["packages"])
    counts = manifest["counts"]
    table = store.read_run_table(tmp_path / "m")
    assert counts["boards"] == 1100 == table.num_rows and counts["rejected"] == 0
    assert counts["words_total"] == sum(table.column("n_words").to_pylist()) == summary.words_total
    assert counts["score_total"] == sum(table.column("score").to_pylist())
    assert set(manifest["columns"]) >= {"board_id", "words", "words_len_9plus", "points_len_<L>"}
    assert manifest["started_at"] <= manifest["finished_at"]
    assert read_side_json(tmp_path / "m", "_run.json")["identity"] == manifest["identity"]
    for p in parts:
        meta = pq.ParquetFile(p).schema_arrow.metadata
        assert json.loads(meta[b"boggle.config"]) == cfg.data_dict()
        assert json.loads(meta[b"boggle.lexicon"])["content_hash"] == lex["content_hash"]
        assert pq.ParquetFile(p).schema_arrow.remove_metadata().equals(store.board_schema(3))
    # progress: from 0 to all boards, never backwards
    done = [p.boards_done for p in seen]
    assert done[0] == 0 and done[-1] == 1100 and done == sorted(done)
    assert seen[-1].chunks_done == seen[-1].chunks_total == 3
    # the by-length columns add up to the totals
    by_len = sum(np.asarray(table.column(f"points_len_{b}")) for b in store.length_bins(3))
    assert np.array_equal(by_len, np.asarray(table.column("score")))


def test_big_boards_and_dice_sources(tmp_path: Path, enable2k_path: str) -> None:
    summary = execute(
        gen_config(enable2k_path, tmp_path / "b", boards__dice="big1979", boards__count=50), n_jobs=1
    )
    table = store.read_run_table(tmp_path / "b")
    assert summary.boards == 50 and set(table.column("rows").to_pylist()) == {5}
    assert set(table.column("source").to_pylist()) == {"big1979"}
    assert all(min((len(w) for w in ws), default=4) >= 4 for ws in table.column("words").to_pylist())
    assert sum(table.column("words_len_3").to_pylist()) == 0  # big rules: min length 4


# ---------------------------------------------------------------- conflicts and the CLI


def test_config_typo_exit_code_2(tmp_path: Path) -> None:
    config = write_toml(tmp_path / "bad.toml", {"boards": {"cuont": 5}})
    result = CLI.invoke(app, ["run", str(config)])
    assert result.exit_code == 2
    assert "unknown key in [boards] 'cuont'; did you mean 'count'?" in result.output


def test_missing_lexicon_says_how_to_get_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TANGLET_DATA", str(tmp_path / "none"))
    cfg = load_config(None, {"lexicon.path": "tanglet:en", "run.out": str(tmp_path / "x")})
    with pytest.raises(LexiconError) as info:
        execute(cfg, n_jobs=1)
    msg = info.value.one_line()
    assert "apt-get install tanglet-data" in msg and "set [lexicon] path" in msg
    result = CLI.invoke(
        app, ["run", str(REPO / "configs/smoke.toml"), "-d", "tanglet:en", "--out", str(tmp_path / "y"), "-q"]
    )
    assert result.exit_code == 2 and "apt-get install tanglet-data" in result.output
    assert "--dictionary enable2k" in result.output  # and the list that needs no install


def test_different_config_refused_then_overwritten(tmp_path: Path, enable2k_path: str) -> None:
    out = tmp_path / "run"
    config = write_toml(
        tmp_path / "job.toml",
        {
            "boards": {"count": 600, "chunk_size": 300, "seed": 1},
            "lexicon": {"path": enable2k_path},
            "run": {"out": str(out), "n_jobs": 1},
        },
    )
    assert CLI.invoke(app, ["run", str(config), "-q"]).exit_code == 0
    same = CLI.invoke(app, ["run", str(config), "-q", "--n-jobs", "2"])  # how, not what: same run
    assert same.exit_code == 0 and "already complete (600 boards); nothing to do" in same.output
    other = CLI.invoke(app, ["run", str(config), "-q", "--seed", "2"])
    assert other.exit_code == 4
    assert "holds a finished run with a different config (data.boards.seed: 1 there, 2 now)" in other.output
    forced = CLI.invoke(app, ["run", str(config), "-q", "--seed", "2", "--overwrite"])
    assert forced.exit_code == 0
    assert read_side_json(out)["config"]["boards"]["seed"] == 2


@pytest.mark.integration
def test_concurrent_second_run_refused(tmp_path: Path, enable2k_path: str) -> None:
    out = tmp_path / "busy"
    config = write_toml(
        tmp_path / "job.toml",
        {
            "boards": {"count": 2_000_000, "chunk_size": 1000},
            "lexicon": {"path": enable2k_path},
            "run": {"out": str(out), "n_jobs": 1},
        },
    )
    first = subprocess.Popen(
        [sys.executable, "-m", "pipeline.cli", "run", str(config), "--quiet"],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while not committed_chunks(out):  # the first run is under way
            assert first.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
        second = CLI.invoke(app, ["run", str(config), "-q", "--count", "100", "--overwrite"])
        assert second.exit_code == 4
        assert f"is in use by another run (pid {first.pid})" in second.output
        assert first.poll() is None  # the first run carries on
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
    # the lock died with its holder: the same directory is usable at once
    assert CLI.invoke(app, ["run", str(config), "-q", "--count", "100", "--overwrite"]).exit_code == 0


def test_generate_command_prints_compact_boards() -> None:
    result = CLI.invoke(app, ["generate", "--dice", "new", "--count", "5", "--seed", "42"])
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert len(lines) == 5 and all(len(x) == 16 for x in lines)
    assert lines == "".join(generate_compact("new", 5, 42)).splitlines()
    bad = CLI.invoke(app, ["generate", "--dice", "nope"])
    assert bad.exit_code == 2 and "unknown dice set 'nope'" in bad.output


def test_cli_help_has_examples() -> None:
    for command in ("run", "generate"):
        result = CLI.invoke(app, [command, "--help"])
        assert result.exit_code == 0 and "Example: boggle" in result.output


MAIN_PROCESS_RUN = (
    "import sys, joblib\n"
    "from pipeline.config import load_config\n"
    "from pipeline.runner import execute\n"
    "cfg = load_config(None, {'boards.dice': 'new', 'boards.count': 400, 'boards.chunk_size': 200,\n"
    "                         'lexicon.path': sys.argv[1], 'run.out': sys.argv[2]})\n"
    "with joblib.parallel_config(backend='loky', n_jobs=2):\n"
    "    execute(cfg)\n"
    "print('numba' in sys.modules, 'pandas' in sys.modules)\n"
)


@pytest.mark.integration
def test_main_process_of_a_warm_run_loads_neither_numba_nor_pandas(
    tmp_path: Path, enable2k_path: str
) -> None:
    # the first run may compile the kernels in the main process; the second finds them cached,
    # and its main process only dispatches chunks and writes the manifest (~150 MB less memory)
    for name in ("cold", "warm"):
        out = subprocess.run(
            [sys.executable, "-c", MAIN_PROCESS_RUN, enable2k_path, str(tmp_path / name)],
            capture_output=True,
            text=True,
            check=True,
            cwd=REPO,
        )
    assert out.stdout.split() == ["False", "False"]
    assert store.read_run_table(tmp_path / "warm").num_rows == 400


WORKER_POOL_SCRIPT = """
import os, sys, joblib
os.environ.pop("ARROW_DEFAULT_MEMORY_POOL", None)
os.environ.update(dict(a.split("=", 1) for a in sys.argv[1:]))
from pipeline.parallel import parallel_backend

def pool():
    import pyarrow as pa
    return pa.default_memory_pool().backend_name

with parallel_backend("loky", 2):
    print(",".join(sorted(set(joblib.Parallel()(joblib.delayed(pool)() for _ in range(4))))))
"""


@pytest.mark.integration
@pytest.mark.parametrize(
    ("env", "want"), [((), "system"), (("ARROW_DEFAULT_MEMORY_POOL=mimalloc",), "mimalloc")]
)
def test_worker_processes_allocate_arrow_memory_with_the_c_allocator(env: tuple[str, ...], want: str) -> None:
    # mimalloc, Arrow's default, keeps ~55 MB a worker that the Parquet writer freed; a pool the
    # user chose is left alone
    out = subprocess.run(
        [sys.executable, "-c", WORKER_POOL_SCRIPT, *env], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == want


LEAKY_WORKERS_SCRIPT = """
import os, sys, time, joblib
from pipeline.parallel import parallel_backend

def leak(i):
    # loky measures a worker after its first task and replaces it once it has grown 300 MB
    if i % 2:
        time.sleep(1.1)
        sys.leaked = getattr(sys, "leaked", []) + [b"x" * 400_000_000]
    return os.getpid()

ours = sys.argv[1] == "ours"
with parallel_backend("loky", 2) if ours else joblib.parallel_config("loky", n_jobs=2):
    # one task a batch, and tasks left queued when a worker goes: then loky warns
    pids = joblib.Parallel(batch_size=1)(joblib.delayed(leak)(i) for i in range(12))
print(len(pids), len(set(pids)))
"""


@pytest.mark.integration
def test_workers_loky_replaces_for_memory_growth_print_no_warning() -> None:
    # the prover's workers grow by GBs on dense classes; loky replaces them and loses nothing,
    # but warned about it on stderr, below the progress bar
    runs = {
        how: subprocess.run(
            [sys.executable, "-c", LEAKY_WORKERS_SCRIPT, how],
            capture_output=True,
            text=True,
            check=True,
            cwd=REPO,
        )
        for how in ("plain", "ours")
    }
    for out in runs.values():
        tasks, workers = map(int, out.stdout.split())
        assert tasks == 12 and workers > 2  # every task ran, and workers were replaced
    assert "A worker stopped while some jobs were given" in runs["plain"].stderr
    assert "A worker stopped" not in runs["ours"].stderr


def test_plan_run_decides_everything_before_touching_the_run_directory(
    tmp_path: Path, enable2k_path: str
) -> None:
    from pipeline.runner._plan import plan_run

    files = make_inputs(tmp_path)
    cfg = load_config(
        None,
        {
            "boards.source": "ingest",
            "boards.files": [str(f) for f in files],
            "lexicon.path": enable2k_path,
            "run.out": str(tmp_path / "run"),
        },
    )
    plan = plan_run(cfg)
    assert not (tmp_path / "run").exists()
    assert [i["file"] for i in plan.inputs] == [str(f) for f in files]
    assert plan.identity["inputs"] == [{"file": i["file"], "sha256": i["sha256"]} for i in plan.inputs]
    assert plan.identity["lexicon_sha256"] == plan.lexicon.content_hash
    assert json.loads(plan.metadata[store.META_CONFIG]) == cfg.data_dict()
    assert plan.workers_write is None  # decided once the workers are known
    assert plan_run(cfg.resolve()).identity == plan.identity  # the same run, the same identity
