"""Issue 54, outputs: every command that writes (``select``, ``what-if``, ``design-dice``, the
reports of ``analyze``) writes through one abstraction (:mod:`pipeline.store._output`), so an
``s3://`` output goes to the store, never to a local folder named ``s3:``; an output in a job
directory, or one that is no regular file, is refused before anything is written; and an output
that cannot be written is an I/O failure (exit 5) naming the user's path.

The store side runs against a local moto S3 server (as tests/test_objstore.py does): each
command's objects land in the bucket, and the folder it ran from stays empty.
"""

from __future__ import annotations

import io
import os
import stat
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.conftest import ALPHA, one_error_line, run_boggle, write_run

WHAT_IF = [
    "what-if",
    "new",
    "--swap",
    "die 15 = die 5",
    "--count",
    "200",
    "--chunk-size",
    "100",
    "-j",
    "1",
    "-q",
]
DESIGN = ["design-dice", "--budget", "2k", "--batch", "200", "--max-batches", "2", "--validate", "200", "-q"]


def listing(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative name -> bytes)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def finished_run(tmp_path: Path) -> Path:
    return write_run(tmp_path / "run", ALPHA)


# ---------------------------------------------------------------- a URL that lost a slash


@pytest.mark.parametrize(
    "args",
    [
        ["select", "{run}", "--out", "s3:/bkt/pool.parquet"],
        ["analyze", "{run}", "--out", "s3:/bkt/report"],
        [*WHAT_IF, "--out", "s3:/bkt/wi"],
        [*DESIGN, "--out", "gs:/bkt/design"],
    ],
    ids=["select", "analyze", "what-if", "design-dice"],
)
def test_a_url_missing_a_slash_is_refused_never_a_local_folder(
    tmp_path: Path, finished_run: Path, args: list[str]
) -> None:
    """``pathlib`` turns s3://bkt/x into s3:/bkt/x: such a path is refused, whoever made it."""
    work = tmp_path / "cwd"
    work.mkdir()
    res = run_boggle(*(a.replace("{run}", str(finished_run)) for a in args), cwd=work)
    assert res.returncode == 2, res.stderr[-2000:]
    one_error_line(res, "looks like a URL with a slash missing")
    assert list(work.iterdir()) == []


# ---------------------------------------------------------------- outputs in a job directory


def test_what_if_into_a_finished_run_is_refused_like_select(tmp_path: Path, finished_run: Path) -> None:
    before = listing(finished_run)
    for out in (finished_run, finished_run / "sub"):
        res = run_boggle(*WHAT_IF, "--out", str(out))
        assert res.returncode == 2, res.stderr[-2000:]
        one_error_line(res, f"--out {out} is", "choose another --out")
        res = run_boggle("select", str(finished_run), "--out", str(out / "pool.parquet"))
        assert res.returncode == 2, res.stderr[-2000:]
        one_error_line(res, "is inside the run directory")
    res = run_boggle(*DESIGN, "--out", str(finished_run / "design"))
    assert res.returncode == 2
    one_error_line(res, "is inside the job directory")
    res = run_boggle("analyze", str(tmp_path / "nowhere"), "--out", str(finished_run / "rep"))
    assert res.returncode == 2
    assert listing(finished_run) == before  # nothing written into the run, nothing changed


def test_select_into_another_job_is_refused(tmp_path: Path, finished_run: Path) -> None:
    other = write_run(tmp_path / "other", ALPHA)
    before = listing(other)
    res = run_boggle("select", str(finished_run), "--out", str(other / "pool.parquet"))
    assert res.returncode == 2
    one_error_line(res, f"is inside the job directory {other}")
    assert listing(other) == before


# ---------------------------------------------------------------- outputs that are no files


def test_an_output_that_is_a_fifo_or_a_device_is_refused_and_left_alone(
    tmp_path: Path, finished_run: Path
) -> None:
    fifo = tmp_path / "pool.parquet"
    os.mkfifo(fifo)
    null = tmp_path / "null.csv"
    null.symlink_to(os.devnull)
    for out, kind in ((fifo, "a FIFO"), (null, "a device"), (tmp_path / "dir.csv", "a directory")):
        if kind == "a directory":
            out.mkdir()
        res = run_boggle("select", str(finished_run), "--out", str(out), timeout=60)
        assert res.returncode == 2, res.stderr[-2000:]
        one_error_line(res, f"{out}: --out is {kind}, not a regular file")
    assert stat.S_ISFIFO(fifo.stat().st_mode) and stat.S_ISCHR(os.stat(os.devnull).st_mode)
    summary = tmp_path / "summary.fifo"
    os.mkfifo(summary)
    res = run_boggle(
        "select",
        str(finished_run),
        "--out",
        str(tmp_path / "p.parquet"),
        "--summary-json",
        str(summary),
        timeout=60,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    assert f"warning: --summary-json {summary}: output is a FIFO" in res.stderr
    assert stat.S_ISFIFO(summary.stat().st_mode)


def test_an_output_that_cannot_be_written_is_exit_5_naming_the_users_path(finished_run: Path) -> None:
    res = run_boggle("select", str(finished_run), "--out", "/proc/x.parquet")
    assert res.returncode == 5, res.stderr[-2000:]
    line = one_error_line(res, "error: I/O failure: /proc/x.parquet: ")
    assert ".tmp" not in line


def test_the_atomic_writer_names_the_output_not_its_temporary_file(tmp_path: Path) -> None:
    from pipeline.io import OutputError, atomic_path

    with pytest.raises(OutputError) as caught, atomic_path(Path("/proc/nothing/x.parquet")) as tmp:
        tmp.write_bytes(b"never")
    assert caught.value.filename == "/proc/nothing/x.parquet"
    folder = tmp_path / "ro"
    folder.mkdir()
    with pytest.raises(OSError) as failed, atomic_path(folder / "x.txt") as tmp:
        raise OSError(28, "No space left on device", str(tmp))
    assert failed.value.filename == str(folder / "x.txt") and list(folder.iterdir()) == []


# ---------------------------------------------------------------- outputs in an object store

try:  # the moto server and a bucket a test, where the cloud extra and moto are installed
    from tests.test_objstore import bucket, moto_endpoint, objects, s3_env  # noqa: F401
except pytest.skip.Exception:  # pragma: no cover - without them the store's tests skip

    @pytest.fixture
    def bucket() -> str:
        pytest.skip("needs s3fs and moto (the cloud and dev extras)")


@pytest.fixture
def s3(bucket: str, moto_endpoint: str) -> tuple[str, dict[str, str]]:
    """A new bucket, and the environment a ``boggle`` process reaches the moto server with."""
    return bucket, s3_env(moto_endpoint)


@pytest.mark.integration
def test_select_writes_its_pool_to_the_bucket(
    tmp_path: Path, smoke_run: Path, s3: tuple[str, dict[str, str]]
) -> None:
    name, env = s3
    local = tmp_path / "pool.parquet"
    assert run_boggle("select", str(smoke_run), "--score", "100..", "-o", str(local)).returncode == 0
    work = tmp_path / "cwd"
    work.mkdir()
    url = f"s3://{name}/pools/pool.parquet"
    res = run_boggle("select", str(smoke_run), "--score", "100..", "-o", url, env=env, cwd=work)
    assert res.returncode == 0, res.stderr[-2000:]
    assert f"written to {url}" in res.stdout
    assert objects(f"{name}/pools") == {f"{name}/pools/pool.parquet": local.read_bytes()}  # byte for byte
    assert list(work.iterdir()) == []


@pytest.mark.integration
def test_what_if_writes_both_runs_to_the_bucket_and_resumes(
    tmp_path: Path, s3: tuple[str, dict[str, str]]
) -> None:
    name, env = s3
    work = tmp_path / "cwd"
    work.mkdir()
    url = f"s3://{name}/runs/wi"
    res = run_boggle(*WHAT_IF, "-o", url, env=env, cwd=work)
    assert res.returncode == 0, res.stderr[-2000:]
    assert f"({url}/base)" in res.stdout and f"dice {url}/variant-dice.txt" in res.stdout
    found = objects(f"{name}/runs/wi")
    for side in ("base", "variant"):
        assert f"{name}/runs/wi/{side}/_SUCCESS.parquet" in found
    assert found[f"{name}/runs/wi/variant-dice.txt"].startswith(b"# what-if variant of")
    assert list(work.iterdir()) == []
    again = run_boggle(*WHAT_IF, "-o", url, env=env, cwd=work)  # a finished pair: the same figures
    assert again.returncode == 0 and again.stdout == res.stdout, again.stderr[-2000:]
    # the finished base run as --out: refused like a local one
    refused = run_boggle(*WHAT_IF, "-o", f"{url}/base", env=env, cwd=work)
    assert refused.returncode == 2
    one_error_line(refused, f"--out {url}/base is a job directory")
    assert list(work.iterdir()) == []


@pytest.mark.integration
def test_design_dice_writes_its_job_to_the_bucket(tmp_path: Path, s3: tuple[str, dict[str, str]]) -> None:
    name, env = s3
    work = tmp_path / "cwd"
    work.mkdir()
    url = f"s3://{name}/runs/design"
    res = run_boggle(*DESIGN, "-o", url, env=env, cwd=work)
    assert res.returncode == 0, res.stderr[-2000:]
    assert f"proposed dice: {url}/dice.txt" in res.stdout
    found = {k.rsplit("/", 1)[-1] for k in objects(f"{name}/runs/design")}
    assert {"_SUCCESS", "dice.txt", "moves.csv", "report.json"} <= found
    again = run_boggle(*DESIGN, "-o", url, env=env, cwd=work)  # already complete: read back, checked
    assert again.returncode == 0 and again.stdout == res.stdout, again.stderr[-2000:]
    assert list(work.iterdir()) == []


@pytest.mark.integration
def test_analyze_writes_its_report_to_the_bucket(
    tmp_path: Path, smoke_run: Path, s3: tuple[str, dict[str, str]]
) -> None:
    name, env = s3
    work = tmp_path / "cwd"
    work.mkdir()
    url = f"s3://{name}/reports/smoke"
    res = run_boggle("analyze", str(smoke_run), "-o", url, "-q", env=env, cwd=work)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.strip() == f"report: {url}/report.html"
    found = objects(f"{name}/reports/smoke")
    assert {f"{name}/reports/smoke/report.html", f"{name}/reports/smoke/analysis.json"} <= set(found)
    assert any(k.endswith(".parquet") and "/tables/" in k for k in found)
    table = next(k for k in found if k.endswith(".parquet"))
    assert pq.read_table(io.BytesIO(found[table])).num_rows >= 1
    assert list(work.iterdir()) == []
