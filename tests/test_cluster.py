"""A real multi-process dask cluster: `dask scheduler` and two `dask worker` processes, started
by the test, whose workers run in another working directory and cannot read the client's files
(a private mount namespace hides the client's folder behind an empty tmpfs). `boggle run`
(generate and ingest) and `boggle prove` on it give the same output as with loky.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.conftest import REPO, read_side, read_side_json

BIN = Path(sys.executable).parent

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        not sys.platform.startswith("linux") or os.geteuid() != 0 or shutil.which("unshare") is None,
        reason="hiding the client's files from the workers needs Linux mount namespaces (root, unshare)",
    ),
]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "DASK_DISTRIBUTED__WORKER__DAEMON": "False"}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """(scheduler file, the client's folder the workers cannot see); the scheduler file's
    folder is shared (workers see it: a shared file system)."""
    shared = tmp_path_factory.mktemp("shared")
    client_dir = tmp_path_factory.mktemp("client")
    worker_cwd = tmp_path_factory.mktemp("worker-cwd")
    sched_file = shared / "scheduler.json"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "start_new_session": True}
    scheduler = [str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard"]
    procs = [
        subprocess.Popen([*scheduler, "--scheduler-file", str(sched_file)], cwd=shared, env=_env(), **quiet)
    ]
    deadline = time.monotonic() + 60
    while not sched_file.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert sched_file.exists(), "the dask scheduler did not start"
    hide = (
        f"mount -t tmpfs none {client_dir} && cd {worker_cwd} && exec {BIN / 'dask'} worker "
        f"--scheduler-file {sched_file} --nthreads 1 --no-dashboard --name w$0"
    )
    for i in range(2):
        procs.append(
            subprocess.Popen(
                ["unshare", "--mount", "--propagation", "private", "sh", "-c", hide, str(i)],
                env=_env(),
                **quiet,
            )
        )
    from dask.distributed import Client

    with Client(scheduler_file=str(sched_file), timeout="30s") as client:
        client.wait_for_workers(2, timeout=60)
    try:
        yield sched_file, client_dir
    finally:
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)


def boggle(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    res = subprocess.run(
        [sys.executable, "-m", "pipeline.cli", *args],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode in (0, 3), res.stderr  # 3: finished, some input rows rejected
    return res


def parts(run: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(run.glob("part-*.parquet"))}


@pytest.mark.slow
def test_workers_cannot_see_the_client_folder(cluster: tuple[Path, Path]) -> None:
    sched_file, client_dir = cluster
    (client_dir / "secret.txt").write_text("only the client reads this\n")
    from dask.distributed import Client

    with Client(scheduler_file=str(sched_file), timeout="30s") as client:
        seen = client.run(lambda: (os.getcwd(), os.path.exists(str(client_dir / "secret.txt"))))
    assert len(seen) == 2
    assert all(not visible and cwd != str(client_dir) for cwd, visible in seen.values())


@pytest.mark.slow
def test_run_generate_and_ingest_on_a_cluster_equal_loky(
    cluster: tuple[Path, Path], enable2k_path: str
) -> None:
    sched_file, client_dir = cluster
    from pipeline.lexicon import embedded_bytes

    (client_dir / "words.txt").write_bytes(embedded_bytes(enable2k_path))
    boards = client_dir / "boards.txt"
    boards.write_text("catsdogsbirdfish\nperslatgsineters\nnot a board\nqatsdogsbirdfish\n" * 50)
    (client_dir / "gen.toml").write_text(
        '[boards]\ncount = 3000\nchunk_size = 500\nseed = 9\n[lexicon]\npath = "words.txt"\n'
    )
    (client_dir / "ing.toml").write_text(
        '[boards]\nsource = "ingest"\nfiles = ["boards.txt"]\nchunk_size = 60\n'
        '[lexicon]\npath = "words.txt"\n'
    )
    shared = sched_file.parent
    for name in ("gen", "ing"):
        boggle("run", f"{name}.toml", "--out", f"{name}-loky", "-j", "2", "-q", cwd=client_dir)
        dask = ["--backend", "dask", "--scheduler-file", str(sched_file), "-q"]
        # an output folder the workers see: they write their own parts (no note)
        res = boggle("run", f"{name}.toml", "--out", str(shared / f"{name}-dask"), *dask, cwd=client_dir)
        assert "cannot see" not in res.stderr
        # one they cannot see: the client writes every part, and says so before starting
        hidden = boggle("run", f"{name}.toml", "--out", f"{name}-hidden", *dask, cwd=client_dir)
        assert "cannot see" in hidden.stderr and "the client writes every part" in hidden.stderr
        for out in (shared / f"{name}-dask", client_dir / f"{name}-hidden"):
            assert parts(out) == parts(client_dir / f"{name}-loky")
            assert read_side(out, "_rejects.csv") == read_side(client_dir / f"{name}-loky", "_rejects.csv")
            assert read_side_json(out)["config"]["run"]["backend"] == "dask"


@pytest.mark.slow
def test_prove_on_a_cluster_equals_loky(cluster: tuple[Path, Path], tiny_dict: str) -> None:
    sched_file, client_dir = cluster
    shutil.copy(tiny_dict, client_dir / "tiny.txt")
    common = [
        "prove",
        "-d",
        "tiny.txt",
        "--shape",
        "2x3",
        "-t",
        "20",
        "--classes",
        "ae rst",
        "--chunk-size",
        "4",
    ]
    loky = boggle(*common, "-o", "p-loky", "-j", "2", cwd=client_dir)
    dask = boggle(
        *common, "-o", "p-dask", "--backend", "dask", "--scheduler-file", str(sched_file), cwd=client_dir
    )
    assert dask.stdout.splitlines()[-1] == loky.stdout.splitlines()[-1]
    for name in ("_boards.pq",):
        assert pq.read_table(client_dir / "p-dask" / name).equals(pq.read_table(client_dir / "p-loky" / name))
    got = pq.read_table(sorted((client_dir / "p-dask").glob("part-*.parquet"))).drop(["seconds"])
    want = pq.read_table(sorted((client_dir / "p-loky").glob("part-*.parquet"))).drop(["seconds"])
    assert got.equals(want)


def test_a_single_threaded_worker_does_the_work(tmp_path: Path) -> None:
    """joblib runs a pool of one slot in the calling process; on a cluster of one
    single-threaded worker the tasks must still run on the worker."""
    import joblib
    from dask.distributed import Client, LocalCluster

    from pipeline.parallel import dask_backend

    with (
        LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address="127.0.0.1:0") as c,
        Client(c) as client,
        joblib.parallel_config(backend=dask_backend(client)),
    ):
        pids = set(joblib.Parallel()(joblib.delayed(os.getpid)() for _ in range(4)))
    assert os.getpid() not in pids and len(pids) == 1
