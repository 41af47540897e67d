"""Job directories in an object store: runs, proofs and readers at ``s3://`` URLs (a local moto
S3 server), the commit protocol without rename and the lease that replaces flock.

One moto server (``python -m moto.server`` on 127.0.0.1, a free port) serves the session; each
test gets a bucket of its own. The secret key is a distinctive string, so a test can grep every
object a run writes, and its summary, for it.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("s3fs")
pytest.importorskip("moto")

from pipeline.errors import DamagedRunError, OutputConflictError
from pipeline.runner import run_job
from tests.conftest import REPO, one_error_line, part_bytes, run_boggle, run_config

pytestmark = pytest.mark.integration  # a moto S3 server and real `boggle` processes
SECRET = "boggle-objstore-s3cr3t-7d1f"
KEY_ID = "testing"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_moto(env: dict[str, str] | None = None) -> tuple[subprocess.Popen[bytes], str]:
    """A moto S3 server on 127.0.0.1 at a free port, once it answers: (process, endpoint)."""
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return proc, f"http://127.0.0.1:{port}"
        except OSError:
            assert proc.poll() is None, "moto server did not start"
            assert time.monotonic() < deadline, "moto server did not start in 30 s"
            time.sleep(0.1)


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="session")
def moto_endpoint() -> Any:
    proc, endpoint = start_moto()
    yield endpoint
    stop(proc)


def s3_env(endpoint: str) -> dict[str, str]:
    return {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": KEY_ID,
        "AWS_SECRET_ACCESS_KEY": SECRET,
        "AWS_DEFAULT_REGION": "us-east-1",
        "BOGGLE_FS_RETRIES": "1",
        "BOGGLE_FS_CONNECT_TIMEOUT": "2",
    }


@pytest.fixture
def bucket(moto_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """A new bucket, with this process's environment pointing at the moto server."""
    import s3fs
    from joblib.externals.loky import get_reusable_executor

    for k, v in s3_env(moto_endpoint).items():
        monkeypatch.setenv(k, v)
    # loky keeps its worker processes between runs, with the environment they started with:
    # start them again so they take their credentials from this one, as a new process would
    get_reusable_executor().shutdown(wait=True)
    name = f"b-{uuid.uuid4().hex[:12]}"
    s3fs.S3FileSystem(skip_instance_cache=True).mkdir(name)
    return name


def fs() -> Any:
    import s3fs

    return s3fs.S3FileSystem(skip_instance_cache=True, use_listings_cache=False)


def objects(prefix: str) -> dict[str, bytes]:
    f = fs()
    return {k: f.cat_file(k) for k in f.find(prefix)}


def remote_parts(prefix: str) -> dict[str, bytes]:
    return {
        k.rsplit("/", 1)[-1]: v
        for k, v in objects(prefix).items()
        if k.rsplit("/", 1)[-1].startswith("part-")
    }


# ---------------------------------------------------------------- runs and readers


def test_generate_run_to_s3_matches_local(
    bucket: str, tiny_dict: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Workers (loky) write their parts to S3; every reader gives what the local run gives."""
    import duckdb
    import pyarrow.dataset as ds

    import pipeline

    monkeypatch.chdir(tmp_path)
    local = tmp_path / "local"
    url = f"s3://{bucket}/run"
    assert run_job(run_config(tiny_dict, str(local))).status == "complete"
    summary = run_job(run_config(tiny_dict, url, n_jobs=2))
    assert summary.status == "complete" and str(summary.run_dir) == url
    assert sorted(os.listdir(tmp_path)) == ["local"]  # no folder named after the URL
    assert remote_parts(f"{bucket}/run") == part_bytes(local)

    expect = pipeline.read_run(local)
    got = pipeline.read_run(url)
    assert got.num_rows == 300 and got.equals(expect)
    assert pipeline.read_run_pandas(url).equals(pipeline.read_run_pandas(local))
    rel = pipeline.run_relation(url)
    want = duckdb.sql(f"SELECT count(*), sum(score) FROM read_parquet('{local}/part-*.parquet')")
    assert want is not None and rel.aggregate("count(*), sum(score)").fetchall() == want.fetchall()
    polars = pytest.importorskip("polars")
    assert pipeline.scan_run_polars(url).select(polars.col("score").sum()).collect().item() == sum(
        expect.column("score").to_pylist()
    )
    # the raw layout reads with pyarrow.dataset straight from the bucket (side files skipped)
    raw = ds.dataset(f"{bucket}/run", filesystem=fs(), format="parquet").to_table().sort_by("board_id")
    assert raw.num_rows == 300 and raw.column("score").equals(expect.column("score"))
    # a re-run finds it finished; a finished run keeps only the released lease generation
    assert run_job(run_config(tiny_dict, url)).status == "already complete"
    keys = objects(f"{bucket}/run")
    assert [k for k in keys if "/_lease/" in k] and all(SECRET.encode() not in v for v in keys.values())


def test_memory_url_run(tiny_dict: str, tmp_path: Path) -> None:
    """memory:// works in-process (the main process writes the parts: workers cannot see it)."""
    import pipeline

    url = f"memory://m-{uuid.uuid4().hex[:8]}/run"
    assert run_job(run_config(tiny_dict, url, n_jobs=2)).status == "complete"
    assert run_job(run_config(tiny_dict, str(tmp_path / "l"))).status == "complete"
    assert pipeline.read_run(url).equals(pipeline.read_run(tmp_path / "l"))


def test_ingest_with_input_on_s3(bucket: str, tiny_dict: str, tmp_path: Path) -> None:
    import pipeline

    boards = ["aerstaerstaerste", "tsretsretsretsre", "starstarstarstar", "not-a-board", "raterateratesets"]
    src = tmp_path / "boards.csv"
    src.write_text("board\n" + "\n".join(boards) + "\n")
    fs().put_file(str(src), f"{bucket}/in/boards.csv")
    inp = f"s3://{bucket}/in/boards.csv"
    url = f"s3://{bucket}/ingest"
    cfg: dict[str, Any] = {"source": "ingest", "files": [inp], "chunk_size": 2, "faces": []}
    local = tmp_path / "local"
    assert run_job(run_config(tiny_dict, str(local), **cfg)).rejected == 1
    remote = run_job(run_config(tiny_dict, url, **cfg))
    assert remote.rejected == 1 and remote.boards == 4
    assert remote_parts(f"{bucket}/ingest") == part_bytes(local)
    t = pipeline.read_run(url)
    assert t.equals(pipeline.read_run(local)) and set(t.column("source").to_pylist()) == {inp}
    assert pipeline.store.read_rejects(url) == pipeline.store.read_rejects(local)


def test_catalog_of_an_s3_prefix(bucket: str, tiny_dict: str, tmp_path: Path) -> None:
    """``boggle runs ls s3://bucket/prefix`` lists the runs there, with their sizes, and
    ``runs verify`` reads every part of one back (a truncated one is named, exit 4)."""
    from pipeline.store.dataset import find_jobs

    for name in ("a", "b"):
        assert run_job(run_config(tiny_dict, f"s3://{bucket}/nightly/{name}")).status == "complete"
    entries = find_jobs(f"s3://{bucket}/nightly")
    assert [(e.path, e.kind, e.state, e.count) for e in entries] == [
        (f"s3://{bucket}/nightly/{n}", "run", "finished", 300) for n in ("a", "b")
    ]
    sizes = {k: len(v) for k, v in objects(f"{bucket}/nightly/a").items()}
    assert entries[0].bytes == sum(sizes.values())
    env = {"PYTHONPATH": str(REPO)}
    res = run_boggle("runs", "ls", f"s3://{bucket}/nightly", "--json", env=env)
    assert res.returncode == 0, res.stderr
    assert [e["path"] for e in json.loads(res.stdout)] == [e.path for e in entries]
    res = run_boggle("runs", "verify", entries[1].path, env=env)
    assert res.returncode == 0 and "intact (finished run, 3 parts verified)" in res.stdout
    key = f"{bucket}/nightly/b/part-00001.parquet"
    fs().pipe_file(key, fs().cat_file(key)[:-5])
    res = run_boggle("runs", "verify", entries[1].path, env=env)
    assert res.returncode == 4 and "part-00001.parquet" in res.stderr


@pytest.mark.slow
def test_analyze_s3_same_tables(bucket: str, tiny_dict: str, tmp_path: Path, moto_endpoint: str) -> None:
    import pyarrow.parquet as pq

    local = tmp_path / "local"
    url = f"s3://{bucket}/run"
    run_job(run_config(tiny_dict, str(local)))
    run_job(run_config(tiny_dict, url))
    env = s3_env(moto_endpoint)
    for run, rep in ((str(local), tmp_path / "rep-local"), (url, tmp_path / "rep-s3")):
        res = run_boggle("analyze", run, "--out", str(rep), "--quiet", "--label", f"{run}=r", env=env)
        assert res.returncode == 0, res.stderr
    a = sorted(p.relative_to(tmp_path / "rep-local") for p in (tmp_path / "rep-local").rglob("*.parquet"))
    b = sorted(p.relative_to(tmp_path / "rep-s3") for p in (tmp_path / "rep-s3").rglob("*.parquet"))
    assert a == b and a
    for rel in a:
        assert pq.read_table(tmp_path / "rep-local" / rel).equals(pq.read_table(tmp_path / "rep-s3" / rel)), (
            rel
        )


def test_prove_to_s3(bucket: str, tiny_dict: str, tmp_path: Path) -> None:
    from pipeline.best.prove import ProveConfig, run_prove

    def cfg(out: str | None) -> ProveConfig:
        return ProveConfig(
            tiny_dict, shape="2x3", threshold=20, classes="ae rst", chunk_size=4, n_jobs=1, out=out
        )

    url = f"s3://{bucket}/proof"
    res = run_prove(cfg(url))
    assert res.status == "complete"
    assert res.boards == run_prove(cfg(str(tmp_path / "proof"))).boards
    keys = objects(f"{bucket}/proof")
    assert f"{bucket}/proof/_SUCCESS" in keys and f"{bucket}/proof/_boards.pq" in keys
    assert run_prove(cfg(url)).status == "already complete"
    # --status reads it in place, finished and (its manifest gone, a part damaged) unfinished
    import pyarrow.parquet as pq

    from pipeline.best.prove._status import proof_status

    st = proof_status(url)
    assert st.finished and st.distrusted == [] and st.boards == [(b.board, b.score) for b in res.boards]
    f = fs()
    f.rm_file(f"{bucket}/proof/_SUCCESS")
    part = f"{bucket}/proof/part-00001.parquet"
    f.pipe_file(part, f.cat_file(part)[:-20] + b"\0" * 20)
    st = proof_status(url)
    assert not st.finished and st.parts_verified == st.parts_total - 1
    assert st.distrusted == [
        ("part-00001.parquet", "checksum differs from the one recorded (damaged or replaced)")
    ]
    assert (
        st.classes_done
        == res.classes_total - pq.read_metadata(tmp_path / "proof" / "part-00001.parquet").num_rows
    )
    assert st.left is not None and {b for b, _ in st.boards} <= {b.board for b in res.boards}


# ---------------------------------------------------------------- faults


def test_analyze_s3_reads_statistics_not_whole_parts(
    bucket: str, tiny_dict: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run in a bucket is analysed where it is: its parts' statistics files (checked against
    the manifest) and the board and score columns of the second pass, never a download of a
    whole part; the tables are the local run's."""
    import pandas as pd

    from pipeline.analyze import analyze_runs
    from pipeline.store._location import RemoteLocation

    local, url = tmp_path / "local", f"s3://{bucket}/run"
    run_job(run_config(tiny_dict, str(local)))
    run_job(run_config(tiny_dict, url))

    def no_download(self: Any, name: str, *args: Any, **kw: Any) -> Any:
        raise AssertionError(f"{name} was downloaded")

    monkeypatch.setattr(RemoteLocation, "local_file", no_download)
    remote = analyze_runs([url], tmp_path / "rep-s3", labels={url: "r"})
    here = analyze_runs([str(local)], tmp_path / "rep-local", labels={str(local): "r"})
    assert list(remote.tables.items()) and [n for n, _ in remote.tables.items()] == [
        n for n, _ in here.tables.items()
    ]
    for name, frame in here.tables.items():
        pd.testing.assert_frame_equal(frame, getattr(remote.tables, name), check_dtype=False, obj=name)


def test_damaged_or_foreign_part(bucket: str, tiny_dict: str, tmp_path: Path) -> None:
    """Unfinished: a damaged part is named and recomputed. Finished: refused (exit 4)."""
    import pipeline

    local = tmp_path / "local"
    run_job(run_config(tiny_dict, str(local)))
    url = f"s3://{bucket}/run"
    run_job(run_config(tiny_dict, url))
    f = fs()
    part1 = f"{bucket}/run/part-00001.parquet"
    good = f.cat_file(part1)
    # finished run, damaged part: the run and every reader refuse it
    f.pipe_file(part1, good[:-20] + b"\0" * 20)
    with pytest.raises(DamagedRunError) as exc:
        run_job(run_config(tiny_dict, url))
    assert exc.value.exit_code == 4 and "part-00001" in exc.value.message
    with pytest.raises(DamagedRunError):
        pipeline.read_run(url)
    # unfinished (no _SUCCESS.parquet), with a foreign part (another chunk's bytes): recomputed
    f.rm_file(f"{bucket}/run/_SUCCESS.parquet")
    f.pipe_file(part1, f.cat_file(f"{bucket}/run/part-00000.parquet"))
    notes: list[str] = []
    assert run_job(run_config(tiny_dict, url), note=notes.append).status == "resumed"
    assert any("part-00001" in n and "recomputing" in n for n in notes), notes
    assert remote_parts(f"{bucket}/run") == part_bytes(local)


def test_lease_refuses_a_second_client_then_expires(bucket: str, tiny_dict: str) -> None:
    from pipeline.store._lease import Lease
    from pipeline.store._location import location

    loc: Any = location(f"s3://{bucket}/run")
    # a TTL long enough that a slow (shared, loaded) machine still renews well inside it
    first = Lease(loc, ttl_s=6.0, renew_s=0.4)
    first.acquire()
    deadline = time.monotonic() + 30.0
    while first.generation < 2 and time.monotonic() < deadline:  # renewed at least once
        time.sleep(0.05)
    assert first.generation >= 2 and first.lost is None
    with pytest.raises(OutputConflictError) as exc:
        Lease(loc, ttl_s=6.0, renew_s=0.4).acquire()
    assert exc.value.exit_code == 4
    with pytest.raises(OutputConflictError):
        run_job(run_config(tiny_dict, f"s3://{bucket}/run"))
    # the first holder stops renewing (paused or killed); once its lease expires, one client takes over
    first._stop.set()
    assert first._thread is not None
    first._thread.join()
    time.sleep(max(0.0, first.expires_at - time.time()) + 0.2)  # its last generation expired
    second = Lease(loc, ttl_s=30.0, renew_s=10.0)
    second.acquire()
    assert second.generation == first.generation + 1
    assert first.renew() is False and first.lost  # taken over: it must stop writing
    with pytest.raises(OutputConflictError):
        first.check()
    second.release()
    # released: the next client need not wait for the TTL
    assert run_job(run_config(tiny_dict, f"s3://{bucket}/run")).status == "complete"


def _kill_env(endpoint: str) -> dict[str, str]:
    return {**s3_env(endpoint), "BOGGLE_LEASE_TTL": "5", "BOGGLE_LEASE_RENEW": "1"}


@pytest.mark.slow
def test_sigkill_then_resume(bucket: str, tiny_dict: str, tmp_path: Path, moto_endpoint: str) -> None:
    """A client killed mid-run (SIGKILL, its whole process group): the re-run waits out the
    lease, takes over, reuses what verifies, and ends with the parts of a clean local run."""
    url = f"s3://{bucket}/run"
    args = [
        "run",
        str(REPO / "configs/smoke.toml"),
        "-d",
        tiny_dict,
        "--count",
        "3000",
        "--chunk-size",
        "100",
        "--seed",
        "5",
        "--n-jobs",
        "2",
        "-q",
    ]
    env = {**os.environ, "PYTHONPATH": str(REPO), **_kill_env(moto_endpoint)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "pipeline.cli", *args, "--out", url],
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    f = fs()
    try:
        deadline = time.monotonic() + 120
        # three parts recorded (a part's record, not its statistics file written before it)
        while len([k for k in f.find(f"{bucket}/run/_parts") if ".json" in k.rsplit("/", 1)[-1]]) < 3:
            assert proc.poll() is None, "the run ended before the kill"
            assert time.monotonic() < deadline
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert "_SUCCESS" not in [k.rsplit("/", 1)[-1] for k in f.find(f"{bucket}/run")]
    from pipeline.store._lease import Lease
    from pipeline.store._location import location

    newest = max(k for k in f.find(f"{bucket}/run/_lease"))
    expires = json.loads(f.cat_file(newest))["expires_at"]
    if time.time() < expires - 0.5:  # the dead client's lease is still live: refused
        with pytest.raises(OutputConflictError):
            Lease(location(url)).acquire()  # type: ignore[arg-type]
    time.sleep(max(0.0, expires - time.time()) + 0.2)
    res = run_boggle(*args, "--out", url, env=_kill_env(moto_endpoint))
    assert res.returncode == 0, res.stderr
    reused = re.search(r" (\d+) chunks reused", res.stdout)  # took over the dead lease and resumed
    assert reused is not None and int(reused.group(1)) >= 3, res.stdout
    local = tmp_path / "local"
    assert run_boggle(*args, "--out", str(local)).returncode == 0
    assert remote_parts(f"{bucket}/run") == part_bytes(local)


# ---------------------------------------------------------------- one-line errors


def test_cli_errors_are_one_line(bucket: str, tiny_dict: str, tmp_path: Path, moto_endpoint: str) -> None:
    env = s3_env(moto_endpoint)
    base = ["run", str(REPO / "configs/smoke.toml"), "-d", tiny_dict, "--count", "10", "-q"]
    summary = tmp_path / "summary.json"
    cases = [
        ("ftp://host/run", 2, "unsupported URL scheme", env),
        (f"s3://AKIAKEY:{SECRET}@{bucket}/run", 2, "credentials", env),
        (f"s3://no-such-bucket-{uuid.uuid4().hex[:6]}/run", 5, "bucket", env),
        (
            f"s3://{bucket}/run",
            5,
            "cannot reach",
            {**env, "AWS_ENDPOINT_URL": f"http://127.0.0.1:{_free_port()}"},
        ),
    ]
    for out, code, words, e in cases:
        work = tmp_path / f"cwd{code}{len(words)}"
        work.mkdir()
        t0 = time.monotonic()
        res = run_boggle(*base, "--out", out, "--summary-json", str(summary), env=e, cwd=work)
        assert res.returncode == code, (out, res.stderr)
        line = one_error_line(res)
        assert words in line and SECRET not in res.stderr + res.stdout, line
        assert time.monotonic() - t0 < 30
        assert list(work.iterdir()) == [], "nothing is written locally"
        assert SECRET not in summary.read_text()
    assert objects(bucket) == {}


def test_missing_extra_is_one_line(
    bucket: str, tiny_dict: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """s3fs not installed (its import fails): one line naming the extra, exit 2."""
    import fsspec

    from pipeline.cli._outcome import error_outcome

    def no_package(protocol: str) -> Any:
        raise ImportError(f"Install s3fs to access S3 ({protocol})")

    monkeypatch.setattr(fsspec, "get_filesystem_class", no_package)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(Exception) as exc:
        run_job(run_config(tiny_dict, f"s3://{bucket}/run"))
    code, line = error_outcome(exc.value, "run")
    assert code == 2 and "pip install 'boggle-pipeline[cloud]'" in line and "\n" not in line
    assert list(tmp_path.iterdir()) == [] and objects(bucket) == {}


def test_summary_and_objects_hold_no_credentials(
    bucket: str, tiny_dict: str, tmp_path: Path, moto_endpoint: str
) -> None:
    summary = tmp_path / "summary.json"
    res = run_boggle(
        "run",
        str(REPO / "configs/smoke.toml"),
        "-d",
        tiny_dict,
        "--count",
        "20",
        "--chunk-size",
        "10",
        "--out",
        f"s3://{bucket}/run",
        "--summary-json",
        str(summary),
        "-q",
        env=s3_env(moto_endpoint),
    )
    assert res.returncode == 0, res.stderr
    assert json.loads(summary.read_text())["run_dir"] == f"s3://{bucket}/run"
    for text in (summary.read_text(), res.stdout, res.stderr):
        assert SECRET not in text
    stored = objects(bucket)
    assert stored and all(SECRET.encode() not in v for v in stored.values())


def test_permission_denied_is_one_line(tiny_dict: str, tmp_path: Path) -> None:
    """A server that checks credentials (moto with access control on from the first request)
    refuses the run's requests: one line, exit 5, nothing written locally, no secret shown."""
    proc, endpoint = start_moto({**os.environ, "INITIAL_NO_AUTH_ACTION_COUNT": "0"})
    try:
        work = tmp_path / "cwd"
        work.mkdir()
        base = ["run", str(REPO / "configs/smoke.toml"), "-d", tiny_dict, "--count", "10", "-q"]
        res = run_boggle(*base, "--out", "s3://denied/run", env=s3_env(endpoint), cwd=work)
        assert res.returncode == 5, res.stderr
        line = one_error_line(res)
        assert "s3://denied/run" in line and "permission denied" in line, line
        assert SECRET not in res.stderr + res.stdout
        assert list(work.iterdir()) == [], "nothing is written locally"
    finally:
        stop(proc)


@pytest.mark.slow
def test_notebook_reads_a_run_in_the_bucket(
    bucket: str, enable2k_path: str, tmp_path: Path, moto_endpoint: str
) -> None:
    """What an analyst types: ``jupyter execute`` with ``BOGGLE_RUN_DIR=s3://...``."""
    pytest.importorskip("nbformat")
    import nbformat

    url = f"s3://{bucket}/nb-run"
    run_job(run_config(enable2k_path, url))
    notebook = REPO / "notebooks" / "board_quality.ipynb"
    out = tmp_path / "executed.ipynb"
    env = {**os.environ, **s3_env(moto_endpoint), "BOGGLE_RUN_DIR": url, "PYTHONPATH": str(REPO)}
    jupyter = Path(sys.executable).with_name("jupyter")
    res = subprocess.run(
        [str(jupyter), "execute", notebook.name, f"--output={out}"],
        cwd=notebook.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    text = "\n".join(
        o.get("text", "") + o.get("data", {}).get("text/plain", "")
        for c in nbformat.read(out, as_version=4).cells
        for o in c.get("outputs", [])
    )
    assert "enable2k" in text and "300" in text.replace(",", "")
    assert SECRET not in out.read_text()


# ---------------------------------------------------------------- every command, every output


def test_no_command_writes_a_credential_anywhere(
    bucket: str, tiny_dict: str, tmp_path: Path, moto_endpoint: str
) -> None:
    """Credentials in URLs (userinfo, a secret with a "/", presigned query parameters) and in
    the environment, given to every command that takes a URL: refused or done, the secret is in
    no stream, no file written locally and no object."""
    env = s3_env(moto_endpoint)
    good = f"s3://{bucket}/runs/ok"
    res = run_boggle(
        "run", "-d", tiny_dict, "--count", "20", "--chunk-size", "10", "--out", good, "-q", env=env
    )
    assert res.returncode == 0, res.stderr
    urls = [
        f"s3://{KEY_ID}:{SECRET}@{bucket}/runs/a",
        f"s3://{KEY_ID}:{SECRET[:6]}/{SECRET[6:]}@{bucket}/runs/a",  # AWS secret keys hold "/"
        f"s3://{bucket}/runs/a?X-Amz-Signature={SECRET}&X-Amz-Credential={SECRET}",
        f"s3://{bucket}/runs/a?sig={SECRET}&token={SECRET}&password={SECRET}&secret={SECRET}",
    ]
    work = tmp_path / "work"
    work.mkdir()
    streams: list[str] = []
    for i, url in enumerate(urls):
        commands = [
            ["run", "-d", tiny_dict, "--count", "20", "--out", url, "--summary-json", f"run{i}.json"],
            ["run", "-d", tiny_dict, "--set", f"run.out={url}", "--summary-json", f"set{i}.json"],
            [
                "run",
                "-d",
                tiny_dict,
                "--input",
                url + ".txt",
                "--out",
                f"in{i}",
                "--summary-json",
                f"in{i}.json",
            ],
            ["analyze", url, "--out", f"rep{i}", "--summary-json", f"an{i}.json"],
            ["analyze", good, url, "--out", f"rep2-{i}", "--summary-json", f"an2-{i}.json"],
            ["prove", "--status", "-o", url],
            [
                "prove",
                "-d",
                tiny_dict,
                "--shape",
                "2x2",
                "-t",
                "6",
                "-o",
                url,
                "--summary-json",
                f"pr{i}.json",
            ],
            ["optimize", "-d", tiny_dict, "--restarts", "1", "--out", url, "--summary-json", f"op{i}.json"],
            ["solve", "-f", url],
        ]
        for args in commands:
            res = run_boggle(*args, env=env, cwd=work)
            assert res.returncode in (2, 5), (args, res.returncode, res.stderr)
            one_error_line(res)
            streams += [res.stdout, res.stderr]
    # what succeeds with credentials from the environment: a report and its record
    res = run_boggle("analyze", good, "--out", "rep-ok", "--summary-json", "an-ok.json", env=env, cwd=work)
    assert res.returncode == 0, res.stderr
    streams += [res.stdout, res.stderr]
    assert json.loads((work / "an-ok.json").read_text())["runs"]
    for text in streams:
        assert SECRET not in text and SECRET[6:] not in text, text
    written = [p for p in work.rglob("*") if p.is_file()]
    assert any(p.name == "an0.json" for p in written) and any(p.suffix == ".html" for p in written)
    for path in written:
        data = path.read_bytes()
        assert SECRET.encode() not in data and SECRET[6:].encode() not in data, path
    stored = objects(bucket)
    assert all(SECRET.encode() not in v and SECRET[6:].encode() not in v for v in stored.values())


def test_a_credential_url_given_with_out_is_blamed_on_out(
    bucket: str, tiny_dict: str, tmp_path: Path
) -> None:
    url = f"s3://AKIAKEY:{SECRET}@{bucket}/run"
    res = run_boggle("run", "-d", tiny_dict, "--count", "10", "--out", url, cwd=tmp_path)
    assert res.returncode == 2
    line = one_error_line(res, "--out: ", "credentials")
    assert "[run] out" not in line and SECRET not in line


def test_a_missing_bucket_or_endpoint_is_exit_5_for_every_command(
    bucket: str, tiny_dict: str, tmp_path: Path, moto_endpoint: str
) -> None:
    """Where the storage is at fault (no such bucket, no endpoint answering) every command says
    so in one line and exits 5, the documented code; a missing object in a bucket that is there
    is the user's (exit 2)."""
    env = s3_env(moto_endpoint)
    gone = f"s3://no-such-bucket-{uuid.uuid4().hex[:6]}"
    away = {**env, "AWS_ENDPOINT_URL": f"http://127.0.0.1:{_free_port()}"}
    for e, root in ((env, gone), (away, f"s3://{bucket}")):
        for args in (
            ["analyze", f"{root}/x", "--out", str(tmp_path / "rep")],
            ["prove", "--status", "-o", f"{root}/x"],
            ["run", "-d", tiny_dict, "--input", f"{root}/x.txt", "--out", str(tmp_path / "in")],
            ["run", "-d", tiny_dict, "--count", "10", "--out", f"{root}/x"],
        ):
            res = run_boggle(*args, env=e, cwd=tmp_path)
            assert res.returncode == 5, (args, res.returncode, res.stderr)
            line = one_error_line(res, root)
            assert "cannot reach the bucket" in line or "cannot read it" in line, line
    res = run_boggle("analyze", f"s3://{bucket}/x", "--out", str(tmp_path / "rep"), env=env)
    assert res.returncode == 2
    one_error_line(res, "not a run directory")
