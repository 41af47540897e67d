"""``--summary-json`` for schedulers: timestamps, version, the run's identity and chunk counts on
every exit path (real processes for the signals), ``-`` for stdout, and ``boggle analyze``."""

from __future__ import annotations

import datetime
import json
import os
import signal
import subprocess
import sys
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import pipeline
from pipeline import store
from pipeline.cli import app
from pipeline.errors import EXIT_INTERRUPTED, EXIT_TERMINATED
from pipeline.store._schema import HASH_CHARS, PARTS_DIR
from tests.conftest import read_side_json

REPO = Path(__file__).resolve().parents[1]
SMOKE = str(REPO / "configs" / "smoke.toml")
CLI = CliRunner()
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def utc(text: str) -> datetime.datetime:
    when = datetime.datetime.fromisoformat(text)
    assert when.utcoffset() == datetime.timedelta(0), text
    return when


def check_common(data: dict[str, Any]) -> None:
    assert data["version"] == version("boggle-pipeline")
    start, end = utc(data["started_at"]), utc(data["finished_at"])
    assert start <= end <= datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=1)
    assert isinstance(data["elapsed_s"], float)


def small(enable2k: str, out: Path) -> list[str]:
    return [
        "run",
        SMOKE,
        "--count",
        "60",
        "--chunk-size",
        "20",
        "-d",
        enable2k,
        "-j",
        "1",
        "-q",
        "--out",
        str(out),
    ]


def test_success_records_identity_chunks_and_times(tmp_path: Path, enable2k_path: str) -> None:
    path = tmp_path / "s.json"
    res = CLI.invoke(app, [*small(enable2k_path, tmp_path / "run"), "--summary-json", str(path)])
    assert res.exit_code == 0, res.output
    data = json.loads(path.read_text())
    check_common(data)
    manifest = read_side_json(tmp_path / "run")
    assert data["run_id"] == store.run_id_of(manifest["identity"])
    assert set(pipeline.read_run(tmp_path / "run", columns=["run_id"])["run_id"].to_pylist()) == {
        data["run_id"]
    }
    assert (data["chunks_total"], data["chunks_done"], data["chunks_reused"]) == (3, 3, 0)
    assert data["config"] == SMOKE and data["command"] == "run" and data["status"] == "complete"
    again = CLI.invoke(app, [*small(enable2k_path, tmp_path / "run"), "--summary-json", str(path)])
    assert again.exit_code == 0
    data = json.loads(path.read_text())
    assert data["status"] == "already complete" and (data["chunks_total"], data["chunks_done"]) == (3, 3)


def test_bad_input_names_the_option_and_keeps_chunk_fields(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    cfg = tmp_path / "job.toml"
    cfg.write_text("[boards]\ncount = 10\n")
    res = CLI.invoke(app, ["run", str(cfg), "--count", "0", "--summary-json", str(path)])
    assert res.exit_code == 2
    assert res.stderr.strip() == "error: --count: expected an integer >= 1, got 0"  # not blamed on job.toml
    data = json.loads(path.read_text())
    check_common(data)
    assert data["status"] == "failed" and data["message"] == res.stderr.strip()
    assert (data["chunks_total"], data["chunks_done"], data["chunks_reused"], data["run_id"]) == (
        None,
        0,
        0,
        None,
    )


def test_dash_means_stdout(tmp_path: Path, enable2k_path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    res = CLI.invoke(app, [*small(enable2k_path, tmp_path / "run"), "--summary-json", "-"])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert len(lines) == 1  # the record alone: the summary line went to stderr
    data = json.loads(lines[0])
    assert data["status"] == "complete" and data["boards"] == 60
    assert "60 boards in 3 parts" in res.stderr
    assert not (tmp_path / "-").exists()
    bad = CLI.invoke(app, ["run", SMOKE, "--count", "-5", "--summary-json", "-"])
    assert bad.exit_code == 2 and json.loads(bad.stdout)["exit_code"] == 2


def start_run(enable2k: str, out: Path, summary: Path) -> subprocess.Popen[str]:
    cmd = [
        sys.executable,
        "-m",
        "pipeline.cli",
        "run",
        SMOKE,
        "--count",
        "2000000",  # 1,000 chunks: a run long enough to stop on a fast machine
        "--chunk-size",
        "2000",
        "--n-jobs",
        "2",
        "--seed",
        "11",
        "--dictionary",
        enable2k,
        "--out",
        str(out),
        "--quiet",
        "--summary-json",
        str(summary),
    ]
    return subprocess.Popen(
        cmd,
        cwd=REPO,
        env=ENV,
        start_new_session=True,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def records(out: Path) -> int:
    return len(list((out / PARTS_DIR).glob("_part-*.json*")))


def stop_after(proc: subprocess.Popen[str], out: Path, n: int, sig: int) -> None:
    deadline = time.monotonic() + 180
    try:
        while records(out) < n:
            assert proc.poll() is None, f"the run ended early: {proc.communicate()}"
            assert time.monotonic() < deadline, "no part committed in time"
            time.sleep(0.01)
        if sig == signal.SIGINT:  # Ctrl-C reaches the whole process group
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
        proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


@pytest.mark.integration
def test_signals_report_the_chunks_done(tmp_path: Path, enable2k_path: str) -> None:
    """SIGTERM after parts were committed: the record counts them (it said ``chunks: null``);
    the resumed run, stopped by SIGINT, counts the reused ones too."""
    out, path = tmp_path / "run", tmp_path / "s.json"
    proc = start_run(enable2k_path, out, path)
    stop_after(proc, out, 3, signal.SIGTERM)
    assert proc.returncode == EXIT_TERMINATED
    data = json.loads(path.read_text())
    check_common(data)
    done = records(out)
    assert data["status"] == "terminated" and data["chunks_total"] == data["chunks"] == 1000
    # the main process records a part, then reports it: a signal in between counts one less
    assert done - 1 <= data["chunks_done"] <= done and data["chunks_done"] >= 2
    assert data["chunks_reused"] == 0
    manifest_free_id = data["run_id"]
    assert manifest_free_id and len(manifest_free_id) == HASH_CHARS

    proc = start_run(enable2k_path, out, path)
    stop_after(proc, out, done + 2, signal.SIGINT)
    assert proc.returncode == EXIT_INTERRUPTED
    again = json.loads(path.read_text())
    assert again["status"] == "interrupted" and again["run_id"] == manifest_free_id
    assert again["chunks_reused"] == done and again["chunks_done"] >= done + 1
    assert again["chunks_total"] == 1000 and utc(again["started_at"]) >= utc(data["finished_at"])


@pytest.mark.integration
def test_analyze_summary_json(tmp_path: Path, enable2k_path: str) -> None:
    run = tmp_path / "run"
    assert CLI.invoke(app, small(enable2k_path, run)).exit_code == 0
    path = tmp_path / "a.json"
    res = CLI.invoke(
        app, ["analyze", str(run), "--out", str(tmp_path / "rep"), "-q", "--summary-json", str(path)]
    )
    assert res.exit_code == 0, res.output
    data = json.loads(path.read_text())
    check_common(data)
    assert data["command"] == "analyze" and data["status"] == "complete" and data["exit_code"] == 0
    manifest = read_side_json(run)
    run_id = store.run_id_of(manifest["identity"])
    label = data["runs"][0]["label"]
    assert data["runs"] == [{"run_dir": str(run), "label": label, "run_id": run_id, "boards": 60}]
    assert data["boards"] == 60 and data["report"] == str((tmp_path / "rep" / "report.html").resolve())
    assert data["files"] and all(Path(f).is_file() for f in data["files"])
    assert any(f.endswith(".png") for f in data["files"]) and any(f.endswith(".csv") for f in data["files"])

    missing = CLI.invoke(app, ["analyze", str(tmp_path / "nope"), "--summary-json", str(path)])
    assert missing.exit_code == 2
    data = json.loads(path.read_text())
    assert data["status"] == "failed" and data["exit_code"] == 2 and data["message"].startswith("error:")
    check_common(data)
