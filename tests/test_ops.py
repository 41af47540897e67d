"""The batch-job contract operators rely on: signals, orphaned and crashed workers, verified
reuse of parts, limits, I/O failures, corrupt inputs, long bad lines, --summary-json, CLI habits.

Subprocess tests run the real ``boggle run`` in its own session and check, with psutil, that no
process of that session is left."""

from __future__ import annotations

import errno
import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

import psutil
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import pipeline.store._parts as store_parts
from pipeline import store
from pipeline.cli import app
from pipeline.config import MAX_CHUNK_SIZE, MAX_COUNT, load_config
from pipeline.errors import (
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_IO,
    EXIT_OUTPUT_CONFLICT,
    EXIT_TERMINATED,
    ConfigError,
    Terminated,
)
from pipeline.runner import execute
from pipeline.runner._run import capped_n_jobs
from pipeline.store._parts import file_blake2b, part_path, part_record_path
from pipeline.store._schema import PARTS_DIR
from tests.conftest import REPO, gen_config, part_bytes, read_side, side_path

CLI = CliRunner()
#: 2,000 new-dice boards (seed 42) in chunks of 500
small_config = partial(gen_config, boards__count=2000, boards__seed=42)
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def without_compile_notes(output: str) -> str:
    """The output less the note a cold lexicon cache adds (the compile), stripped."""
    return "\n".join(ln for ln in output.strip().splitlines() if not ln.startswith("note: compiling"))


def session_processes(sid: int) -> list[int]:
    out = []
    for proc in psutil.process_iter():
        try:
            if os.getsid(proc.pid) == sid:
                out.append(proc.pid)
        except (ProcessLookupError, PermissionError):
            continue
    return out


def wait_gone(sid: int, limit: float = 10.0) -> list[int]:
    deadline = time.monotonic() + limit
    while (alive := session_processes(sid)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive


def start_cli(*args: str) -> subprocess.Popen[str]:
    """`boggle ARGS` as a real process in its own session, its output captured."""
    return subprocess.Popen(
        [sys.executable, "-m", "pipeline.cli", *args],
        cwd=REPO,
        env=ENV,
        start_new_session=True,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def start_run(enable2k: str, out: Path, *extra: str) -> subprocess.Popen[str]:
    """A real `boggle run` long enough to be interrupted (2,000,000 boards in 1,000 chunks, 2
    workers: about 20 s where 200,000 boards took 2 s, too short a window on a fast machine)."""
    return start_cli(
        "run",
        str(REPO / "configs" / "smoke.toml"),
        "--count",
        "2000000",
        "--chunk-size",
        "2000",
        "--n-jobs",
        "2",
        "--seed",
        "3",
        "--dictionary",
        enable2k,
        "--out",
        str(out),
        "--quiet",
        *extra,
    )


def wait_for_parts(proc: subprocess.Popen[str], out: Path, n: int) -> None:
    deadline = time.monotonic() + 120
    while len(list(out.glob("part-*.parquet"))) < n:
        assert proc.poll() is None, f"the run ended early: {proc.communicate()}"
        assert time.monotonic() < deadline, "no part appeared in time"
        time.sleep(0.01)


# ---------------------------------------------------------------- signals and workers


@pytest.mark.integration
def test_sigterm_stops_workers_exits_143_and_resumes(tmp_path: Path, enable2k_path: str) -> None:
    out = tmp_path / "run"
    summary = tmp_path / "summary.json"
    proc = start_run(enable2k_path, out, "--summary-json", str(summary))
    try:
        wait_for_parts(proc, out, 2)
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == EXIT_TERMINATED
    assert stderr.strip().splitlines() == [
        "terminated (SIGTERM): workers stopped; re-run the same command to resume"
    ]
    assert wait_gone(proc.pid) == []
    data = json.loads(summary.read_text())
    assert data["status"] == "terminated" and data["exit_code"] == EXIT_TERMINATED
    assert data["run_dir"] == str(out)
    assert not side_path(out).exists()


@pytest.mark.parametrize("signal_exc", [KeyboardInterrupt(), Terminated()])
def test_a_signal_raised_as_a_compiled_function_returns_is_not_an_internal_error(
    signal_exc: KeyboardInterrupt,
) -> None:
    """The handler's exception raised while numba functions return reaches us as a SystemError
    caused by it ("returned a result with an exception set"), one per nested compiled call (a
    `boggle run -j 1` killed in its kernel gave two): that is the signal, not a bug."""
    from pipeline.cli._outcome import error_outcome

    def raised(exc: BaseException, *wrappers: str) -> BaseException:
        """``exc`` wrapped in a SystemError per name, as the interpreter does."""
        for name in wrappers:
            wrapped = SystemError(f"CPUDispatcher({name}) returned a result with an exception set")
            wrapped.__cause__ = exc
            exc = wrapped
        return exc

    expected = (
        (EXIT_TERMINATED, "terminated (SIGTERM)")
        if isinstance(signal_exc, Terminated)
        else (EXIT_INTERRUPTED, "interrupted")
    )
    for wrappers in (("enumerate_class",), ("solve_batch", "_sort_ids")):
        code, line = error_outcome(raised(signal_exc, *wrappers), "prove")
        assert code == expected[0]
        assert line.startswith(expected[1]) and line.endswith("re-run the same command to resume")
    assert error_outcome(SystemError("a real bug"), "prove")[0] == EXIT_INTERNAL
    assert error_outcome(raised(ValueError("a bug in compiled code"), "f", "g"), "prove")[0] == EXIT_INTERNAL


@pytest.mark.integration
def test_sigterm_of_a_one_process_run_is_terminated_not_an_internal_error(
    tmp_path: Path, enable2k_path: str
) -> None:
    """`boggle run -j 1` solves in the main process, mostly inside numba: the signal's exception
    came back wrapped in SystemErrors and was reported as an internal error (exit 1)."""
    out = tmp_path / "run"
    proc = start_cli(
        "run",
        str(REPO / "configs" / "smoke.toml"),
        "--count",
        "400000",
        "--chunk-size",
        "20000",
        "--n-jobs",
        "1",
        "--seed",
        "3",
        "--dictionary",
        enable2k_path,
        "--out",
        str(out),
        "--quiet",
    )
    try:
        wait_for_parts(proc, out, 1)
        time.sleep(0.3)
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == EXIT_TERMINATED, stderr
    assert stderr.strip().splitlines() == [
        "terminated (SIGTERM): workers stopped; re-run the same command to resume"
    ]
    assert not side_path(out).exists()


@pytest.mark.integration
def test_sigterm_of_a_one_worker_prove_acts_at_once(tmp_path: Path, enable2k_path: str) -> None:
    """With -j 1 the classes are proved in a thread of the one process, never in its main
    thread, where a kernel call (up to minutes on one 4x4 class: one SIGTERM took over 6
    minutes to act) would hold the signal until it returns. The kernels release the GIL, so
    the main thread waits free while the process burns a core; SIGTERM ends the command within
    seconds, 143, no manifest, no process left (and none was started)."""
    out = tmp_path / "proof"
    proc = start_cli(
        "prove",
        "--dictionary",
        enable2k_path,
        "--shape",
        "4x4",
        "--threshold",
        "1000",
        "--limit-classes",
        "1",
        "--sample-seed",
        "1",
        "-j",
        "1",
        "--out",
        str(out),
    )
    try:
        deadline = time.monotonic() + 120
        while not side_path(out, "_run.json").exists():
            assert proc.poll() is None, f"the proof ended early: {proc.communicate()}"
            assert time.monotonic() < deadline, "the proof did not start in time"
            time.sleep(0.05)
        time.sleep(8.0)  # the worker loads the word list and is deep in the class
        assert proc.poll() is None
        main = psutil.Process(proc.pid)
        main.cpu_percent()
        time.sleep(1.0)
        assert main.children(recursive=True) == [], "-j 1 started a process"
        assert main.cpu_percent() > 50, "the class is not being proved"
        t0 = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=60)
        took = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == EXIT_TERMINATED, stderr
    assert took < 10, f"SIGTERM took {took:.1f} s to end the proof"
    assert (
        stderr.strip().splitlines()[-1]
        == "terminated (SIGTERM): workers stopped; re-run the same command to resume"
    )
    assert wait_gone(proc.pid) == []
    assert not side_path(out).exists()


@pytest.mark.integration
def test_a_prove_worker_killed_is_one_line_exit_5_and_no_process_left(
    tmp_path: Path, enable2k_path: str
) -> None:
    """The OOM killer took a prove worker (a 3x4 Hebrew class grew its paths to 13 GB): that
    was an internal error (exit 1, "please report it"). It is a lost worker, like `boggle run`'s:
    exit 5, one line naming SIGKILL, no process left, no manifest. (With -j 1 there is no
    worker process to lose: the proof runs in a thread of the command's own process.)"""
    n_jobs = "2"
    out = tmp_path / "proof"
    proc = start_cli(
        "prove",
        "--dictionary",
        enable2k_path,
        "--shape",
        "4x4",
        "--threshold",
        "1000",
        "--limit-classes",
        n_jobs,
        "--sample-seed",
        "1",
        "--chunk-size",
        "1",
        "-j",
        n_jobs,
        "--out",
        str(out),
    )
    try:
        deadline = time.monotonic() + 120
        busy: list[psutil.Process] = []
        while not busy:
            assert proc.poll() is None, f"the proof ended early: {proc.communicate()}"
            assert time.monotonic() < deadline, "no worker got busy in time"
            time.sleep(0.5)
            workers = [
                w for w in psutil.Process(proc.pid).children() if "popen_loky" in " ".join(w.cmdline())
            ]
            # past its start-up (under a second) and deep in its class: 2 s of CPU, however many
            # other processes share the cores (a share of them was never above 50% on a loaded machine)
            busy = [w for w in workers if sum(w.cpu_times()[:2]) >= 2.0]
        busy[0].kill()
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == EXIT_IO, stderr
    lines = stderr.strip().splitlines()
    assert "Traceback" not in stderr and lines[-1] == (
        f"error: {out}: a worker process died (exit SIGKILL(-9)), killed by the system, most often "
        "for lack of memory; committed parts are kept: re-run the same command to resume"
    ), stderr
    assert wait_gone(proc.pid) == []
    assert not side_path(out).exists()


@pytest.mark.integration
def test_sigkill_of_the_main_process_leaves_no_worker(tmp_path: Path, enable2k_path: str) -> None:
    out = tmp_path / "run"
    proc = start_run(enable2k_path, out)
    try:
        wait_for_parts(proc, out, 2)
        workers = psutil.Process(proc.pid).children(recursive=True)
        assert len(workers) >= 2
        proc.kill()  # the main process only, as the OOM killer would
        proc.communicate(timeout=30)
        left = wait_gone(proc.pid)
        assert left == [], f"processes of the run still alive 10 s after its death: {left}"
        parts = part_bytes(out)
        time.sleep(1.0)
        assert part_bytes(out) == parts, "parts were written after the main process died"
    finally:
        with_left = session_processes(proc.pid)
        for pid in with_left:
            os.kill(pid, signal.SIGKILL)


@pytest.mark.integration
def test_killed_worker_is_one_line_with_a_resume_hint(tmp_path: Path, enable2k_path: str) -> None:
    out = tmp_path / "run"
    proc = start_run(enable2k_path, out)
    try:
        wait_for_parts(proc, out, 2)
        workers = [
            c for c in psutil.Process(proc.pid).children() if "resource_tracker" not in " ".join(c.cmdline())
        ]
        workers[0].kill()
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == EXIT_IO
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr
    assert "a worker process died (exit SIGKILL(-9)), killed by the system" in lines[0]
    assert "re-run the same command to resume" in lines[0]
    assert wait_gone(proc.pid) == []


# ---------------------------------------------------------------- verified reuse of parts


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory: pytest.TempPathFactory, enable2k_path: str) -> Path:
    out = tmp_path_factory.mktemp("clean") / "run"
    execute(small_config(enable2k_path, out), n_jobs=1)
    return out


def truncate(p: Path) -> None:
    p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])


def zero(p: Path) -> None:
    p.write_bytes(bytes(p.stat().st_size))


def corrupt(p: Path) -> None:
    data = bytearray(p.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one byte inside a data page: the footer still reads
    p.write_bytes(bytes(data))


@pytest.mark.parametrize("damage", [truncate, zero, corrupt, "delete"])
def test_damaged_part_of_an_unfinished_run_is_named_and_recomputed(
    tmp_path: Path, enable2k_path: str, clean_run: Path, damage: Any
) -> None:
    out = tmp_path / "run"
    shutil.copytree(clean_run, out)
    side_path(out).unlink()  # an interrupted run
    victim = part_path(out, 2)
    if damage == "delete":
        victim.unlink()
    else:
        damage(victim)
    notes: list[str] = []
    res = execute(small_config(enable2k_path, out), n_jobs=1, note=notes.append)
    assert res.status == "resumed" and res.chunks_reused == 3 and res.boards_solved == 500
    if damage != "delete":
        assert len(notes) == 1 and str(victim) in notes[0] and "recomputing" in notes[0]
    assert part_bytes(out) == part_bytes(clean_run)


def test_foreign_part_from_another_seed_is_never_certified(
    tmp_path: Path, enable2k_path: str, clean_run: Path
) -> None:
    other = tmp_path / "seed7"
    execute(small_config(enable2k_path, other, boards__seed=7), n_jobs=1)
    out = tmp_path / "run"
    shutil.copytree(clean_run, out)
    side_path(out).unlink()
    # the part and its record both copied in: the record matches, the embedded config does not
    shutil.copy(part_path(other, 1), part_path(out, 1))
    shutil.copy(part_record_path(other, 1), part_record_path(out, 1))
    notes: list[str] = []
    res = execute(small_config(enable2k_path, out), n_jobs=1, note=notes.append)
    assert res.chunks_reused == 3
    assert len(notes) == 1 and "part-00001.parquet" in notes[0] and "another config" in notes[0]
    assert part_bytes(out) == part_bytes(clean_run)


def test_extra_part_beyond_the_run_is_refused_and_overwrite_removes_it(
    tmp_path: Path, enable2k_path: str, clean_run: Path
) -> None:
    out = tmp_path / "run"
    shutil.copytree(clean_run, out)
    side_path(out).unlink()
    shutil.copy(part_path(out, 0), part_path(out, 9))
    result = CLI.invoke(app, ["run", str(REPO / "configs" / "smoke.toml"), *cli_args(enable2k_path, out)])
    assert result.exit_code == EXIT_OUTPUT_CONFLICT
    assert "part-00009.parquet" in result.output and "Traceback" not in result.output
    assert not side_path(out).exists()
    fixed = CLI.invoke(
        app, ["run", str(REPO / "configs" / "smoke.toml"), *cli_args(enable2k_path, out), "--overwrite"]
    )
    assert fixed.exit_code == 0 and "part-00009.parquet" in fixed.output and "removed" in fixed.output
    assert part_bytes(out) == part_bytes(clean_run)


def cli_args(enable2k: str, out: Path) -> list[str]:
    return [
        "--count",
        "2000",
        "--seed",
        "42",
        "--chunk-size",
        "500",
        "--dictionary",
        enable2k,
        "--out",
        str(out),
        "--n-jobs",
        "1",
        "--quiet",
        "--set",
        'run.backend="threading"',
    ]


@pytest.mark.parametrize("damage", [truncate, zero, corrupt, "delete", "extra"])
def test_damaged_finished_run_is_refused_then_repaired_by_overwrite(
    tmp_path: Path, enable2k_path: str, clean_run: Path, damage: Any
) -> None:
    out = tmp_path / "run"
    shutil.copytree(clean_run, out)
    victim = part_path(out, 3)
    if damage == "delete":
        victim.unlink()
    elif damage == "extra":
        victim = part_path(out, 4)
        shutil.copy(part_path(out, 0), victim)
    else:
        damage(victim)
    args = ["run", str(REPO / "configs" / "smoke.toml"), *cli_args(enable2k_path, out)]
    refused = CLI.invoke(app, args)
    assert refused.exit_code == EXIT_OUTPUT_CONFLICT, refused.output
    assert victim.name in refused.output and "--overwrite" in refused.output
    assert len(refused.output.strip().splitlines()) == 1
    repaired = CLI.invoke(app, [*args, "--overwrite"])
    assert repaired.exit_code == 0, repaired.output
    assert "3 chunks reused" in repaired.output or damage == "extra"
    assert part_bytes(out) == part_bytes(clean_run)
    assert store.open_run(out).manifest["counts"]["boards"] == 2000
    again = CLI.invoke(app, args)
    assert again.exit_code == 0 and "already complete" in again.output


def test_manifest_records_checksums(clean_run: Path) -> None:
    manifest, parts = store.open_run(clean_run)
    for entry, path in zip(manifest["parts"], parts, strict=True):
        assert entry["blake2b"] == file_blake2b(path) and entry["bytes"] == path.stat().st_size


# ---------------------------------------------------------------- limits


def test_huge_count_is_one_line_under_a_memory_limit(tmp_path: Path) -> None:
    out = tmp_path / "never"
    code = (
        "import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30));"
        "from pipeline.cli import main; sys.argv = ['boggle'] + sys.argv[1:]; main()"
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            "run",
            str(REPO / "configs" / "smoke.toml"),
            "--count",
            "99999999999999999999",
            "--out",
            str(out),
            "--quiet",
        ],
        cwd=REPO,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert (
        len(lines) == 1 and f"error: --count: at most {MAX_COUNT:,}" in lines[0]
    )  # the option, not the file
    assert not out.exists()


def test_count_that_needs_too_many_parts_leaves_no_directory(tmp_path: Path) -> None:
    out = tmp_path / "never"
    result = CLI.invoke(
        app,
        [
            "run",
            str(REPO / "configs" / "smoke.toml"),
            "--count",
            str(MAX_COUNT),
            "--chunk-size",
            "10",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 2 and "raise [boards] chunk_size" in result.output
    assert not out.exists()
    with pytest.raises(ConfigError, match=f"at most {MAX_CHUNK_SIZE:,}"):
        load_config(None, {"boards.chunk_size": 10**12})


def test_n_jobs_capped_at_chunks_and_cores(enable2k_path: str, tmp_path: Path) -> None:
    notes: list[str] = []
    cfg = small_config(enable2k_path, tmp_path / "x", run__n_jobs=64).resolve()
    assert capped_n_jobs(cfg, notes.append) == min(4, 2 * len(os.sched_getaffinity(0)))
    assert len(notes) == 1 and "n_jobs 64 capped to" in notes[0]
    assert capped_n_jobs(small_config(enable2k_path, tmp_path / "x", run__n_jobs=1).resolve()) == 1
    # the default, every core, is capped by the chunk count too (one chunk: one worker)
    one_chunk = small_config(enable2k_path, tmp_path / "x", run__n_jobs=-1, boards__count=10).resolve()
    assert capped_n_jobs(one_chunk) == 1


# ---------------------------------------------------------------- I/O failures


def test_output_under_a_file_is_an_io_failure(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory\n")
    for out in (blocker, blocker / "run"):
        result = CLI.invoke(app, ["run", str(REPO / "configs" / "smoke.toml"), "--out", str(out), "-q"])
        assert result.exit_code == EXIT_IO, result.output
        line = without_compile_notes(result.output)
        assert len(line.splitlines()) == 1 and str(blocker) in line and "resume" in line


@pytest.mark.parametrize(
    ("code", "text"), [(errno.ENOSPC, "No space left on device"), (errno.EROFS, "Read-only file system")]
)
def test_disk_full_or_read_only_is_exit_5_naming_the_path(
    tmp_path: Path, enable2k_path: str, monkeypatch: pytest.MonkeyPatch, code: int, text: str
) -> None:
    def failing_record(run_dir: Any, chunk: int, rows: int, written: Any = None) -> Any:
        raise OSError(code, os.strerror(code), str(part_record_path(run_dir, chunk)))

    monkeypatch.setattr(store_parts, "record_part", failing_record)
    out = tmp_path / "run"
    result = CLI.invoke(app, ["run", str(REPO / "configs" / "smoke.toml"), *cli_args(enable2k_path, out)])
    assert result.exit_code == EXIT_IO
    line = without_compile_notes(result.output)
    assert len(line.splitlines()) == 1 and text in line
    assert str(out / PARTS_DIR) in line and "re-run the same command to resume" in line


# ---------------------------------------------------------------- inputs


@pytest.mark.parametrize("how", ["truncated", "corrupted", "bad header"])
def test_corrupt_gzip_ingest_is_one_line_naming_the_file(
    tmp_path: Path, enable2k_path: str, how: str
) -> None:
    data = gzip.compress(b"perslatgsineters\n" * 5000)
    if how == "truncated":
        data = data[: len(data) // 2]
    elif how == "corrupted":
        data = data[:100] + bytes(40) + data[140:]
    else:
        data = b"\x1f\x8b\x08garbage"
    src = tmp_path / "boards.txt.gz"
    src.write_bytes(data)
    result = CLI.invoke(
        app,
        [
            "run",
            str(REPO / "configs" / "smoke.toml"),
            "--input",
            str(src),
            "--dictionary",
            enable2k_path,
            "--out",
            str(tmp_path / "run"),
            "-q",
            "--set",
            'run.backend="threading"',
        ],
    )
    assert result.exit_code == 2, result.output
    # a cold lexicon cache adds "note: compiling..." lines: the error itself is one line
    lines = [ln for ln in result.output.strip().splitlines() if not ln.startswith("note: ")]
    assert len(lines) == 1 and str(src) in lines[0] and "gzip" in lines[0]


def test_long_bad_lines_are_quoted_short(tmp_path: Path, enable2k_path: str) -> None:
    long_board = "x" * 1_000_001  # not a square number of faces
    result = CLI.invoke(app, ["solve", long_board, "--dictionary", enable2k_path])
    assert result.exit_code == 2 and len(result.output) < 300
    assert "(1,000,001 characters)" in result.output
    src = tmp_path / "in.txt"
    src.write_text("perslatgsineters\n" + long_board + "\n")
    out = tmp_path / "run"
    result = CLI.invoke(
        app,
        [
            "run",
            str(REPO / "configs" / "smoke.toml"),
            "--input",
            str(src),
            "--dictionary",
            enable2k_path,
            "--out",
            str(out),
            "-q",
            "--set",
            'run.backend="threading"',
        ],
    )
    assert result.exit_code == 3
    [reject] = store.read_rejects(out)
    assert reject["line"] == "2" and len(reject["raw"]) < 120 and len(reject["reason"]) < 200
    assert len(read_side(out, store.REJECTS)) < 600


# ---------------------------------------------------------------- --summary-json and CLI habits


def test_summary_json_on_success_rejects_and_failure(tmp_path: Path, enable2k_path: str) -> None:
    path = tmp_path / "summary.json"
    out = tmp_path / "run"
    smoke = str(REPO / "configs" / "smoke.toml")
    ok = CLI.invoke(app, ["run", smoke, *cli_args(enable2k_path, out), "--summary-json", str(path)])
    assert ok.exit_code == 0
    data = json.loads(path.read_text())
    assert data["status"] == "complete" and data["exit_code"] == 0 and data["boards"] == 2000
    assert data["rejected"] == 0 and data["run_dir"] == str(out) and data["elapsed_s"] > 0
    again = CLI.invoke(app, ["run", smoke, *cli_args(enable2k_path, out), "--summary-json", str(path)])
    assert again.exit_code == 0 and json.loads(path.read_text())["status"] == "already complete"

    src = tmp_path / "in.txt"
    src.write_text("perslatgsineters\nnot-a-board!\n")
    args = [
        "run",
        smoke,
        "--input",
        str(src),
        "--dictionary",
        enable2k_path,
        "--out",
        str(tmp_path / "ingest"),
        "-q",
        "--set",
        'run.backend="threading"',
        "--summary-json",
        str(path),
    ]
    for _ in range(2):  # a re-run of a finished run with rejects returns 3 again
        rejected = CLI.invoke(app, args)
        assert rejected.exit_code == 3
        data = json.loads(path.read_text())
        assert data["exit_code"] == 3 and data["rejected"] == 1 and data["boards"] == 1

    bad = CLI.invoke(app, ["run", smoke, "--set", "boards.count=0", "--summary-json", str(path)])
    assert bad.exit_code == 2
    data = json.loads(path.read_text())
    assert data["status"] == "failed" and data["exit_code"] == 2 and "[boards] count" in data["message"]
    assert data["boards"] is None


def test_version_and_short_help() -> None:
    from importlib.metadata import version

    result = CLI.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output.strip() == f"boggle-pipeline {version('boggle-pipeline')}"
    for args in (["-h"], ["run", "-h"], ["check", "-h"]):
        result = CLI.invoke(app, args)
        assert result.exit_code == 0 and "Usage:" in result.output
    assert "--install-completion" in CLI.invoke(app, ["--help"]).output


def test_part_files_stay_readable_as_a_dataset(clean_run: Path) -> None:
    # the _parts/ records and statistics never get in a Parquet reader's way: hidden names (the
    # readers that skip them), Parquet files of no rows (the ones that read every file)
    assert all(
        p.name.endswith((".json.parquet", ".stats.npz.parquet")) for p in (clean_run / PARTS_DIR).iterdir()
    )
    assert all(p.name.startswith("_") for p in (clean_run / PARTS_DIR).iterdir())
    assert all(pq.read_metadata(p).num_rows == 0 for p in (clean_run / PARTS_DIR).iterdir())
    rows = sum(pq.read_metadata(p).num_rows for p in clean_run.glob("part-*.parquet"))
    assert rows == 2000 == pq.read_table(clean_run).num_rows


def test_choices_match_the_library_and_are_listed_in_help() -> None:
    import pipeline.cli._options as cli
    from pipeline.best.optimize._config import OBJECTIVES, STRATEGIES
    from pipeline.config import BACKENDS
    from pipeline.rules import PRESETS

    assert [m.value for m in cli.RulesName] == list(PRESETS)
    assert sorted(m.value for m in cli.Backend) == sorted(BACKENDS)
    assert sorted(m.value for m in cli.Strategy) == sorted(STRATEGIES)
    assert sorted(m.value for m in cli.Objective) == sorted(OBJECTIVES)
    from pipeline.boards import GENERATORS, dice_set_names

    assert list(cli.DICE_CHOICES) == [*dice_set_names(), *GENERATORS]
    assert cli.complete_dice("big") == ["big1979", "big2011"]
    from pipeline.lexicon import tanglet_languages  # where TANGLET_DATA points, not a fixed path

    assert cli.complete_dice("tanglet:") == [f"tanglet:{lang}" for lang in tanglet_languages()]
    out = CLI.invoke(app, ["run", "--help"], terminal_width=200).output
    assert "<boggle|big|superbig>" in out and "<loky|threading|dask>" in out
    bad = CLI.invoke(app, ["optimize", "--strategy", "greedy"])
    assert bad.exit_code == 2 and "greedy" in bad.output


def test_each_short_flag_means_one_thing_across_commands() -> None:
    import typer.main

    meaning: dict[str, set[str]] = {}
    group = typer.main.get_group(app)
    for command in group.commands.values():
        for param in command.params:
            for opt in param.opts + param.secondary_opts:
                if len(opt) == 2 and opt not in ("-h",):
                    meaning.setdefault(opt, set()).add(param.name or "")
    clashes = {flag: names for flag, names in meaning.items() if len(names) > 1}
    assert not clashes, f"short flags with several meanings: {clashes}"


def test_part_write_failure_without_a_file_name_names_the_run(
    tmp_path: Path, enable2k_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pipeline.runner._workers as workers

    def full_disk(*args: Any, **kwargs: Any) -> Any:
        # what pyarrow raises when the disk fills: an OSError with no filename
        raise OSError("Error writing bytes to file. Detail: [errno 28] No space left on device")

    monkeypatch.setattr(workers, "write_part_info", full_disk)
    out = tmp_path / "run"
    result = CLI.invoke(app, ["run", str(REPO / "configs" / "smoke.toml"), *cli_args(enable2k_path, out)])
    assert result.exit_code == EXIT_IO
    line = without_compile_notes(result.output)
    assert len(line.splitlines()) == 1 and line.startswith(f"error: {out}: I/O failure writing parts")
    assert "No space left on device" in line and "resume" in line
