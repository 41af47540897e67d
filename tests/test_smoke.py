"""End to end, the way a user runs it: a real ``boggle`` process for each stage, on small inputs.

These few stay in the default run (``make test``); the heavier end-to-end checks (interrupted
and killed jobs, big runs, dask clusters, object stores, the notebook, a browser) are marked
``integration`` and run with ``make test-integration`` / ``make test-all``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from pipeline import read_run
from pipeline.errors import EXIT_OK, EXIT_REJECTED_ROWS
from tests.conftest import REPO, make_inputs, run_boggle, write_toml


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory: pytest.TempPathFactory, enable2k_path: str) -> tuple[Path, dict]:
    """``boggle run configs/smoke.toml`` (2,000 boards, 2 worker processes): its run directory and
    its ``--summary-json``."""
    out = tmp_path_factory.mktemp("smoke") / "run"
    summary = out.parent / "summary.json"
    res = run_boggle(
        "run", str(REPO / "configs" / "smoke.toml"), "-d", enable2k_path, "-o", str(out), "-q",
        "--summary-json", str(summary),
    )  # fmt: skip
    assert res.returncode == EXIT_OK, res.stderr
    assert res.stdout.startswith(f"{out}: 2,000 boards in 4 parts"), res.stdout
    return out, json.loads(summary.read_text(encoding="utf-8"))


def test_run_writes_a_finished_run_every_reader_reads(smoke_run: tuple[Path, dict]) -> None:
    out, summary = smoke_run
    assert (summary["status"], summary["boards"], summary["chunks"]) == ("complete", 2000, 4)
    table = read_run(out, columns=["board_id", "score"])
    assert table.column("board_id").to_pylist() == list(range(2000))
    assert len(pd.read_parquet(out)) == 2000  # the plain Parquet reader sees exactly the boards
    assert table.column("score").to_pandas().mean() > 50 and not (out / ".lock").exists()


def test_analyze_reports_on_the_run(smoke_run: tuple[Path, dict], tmp_path: Path) -> None:
    out, summary = smoke_run
    report = tmp_path / "report"
    res = run_boggle("analyze", str(out), "-o", str(report), "-q")
    assert res.returncode == EXIT_OK, res.stderr
    assert (report / "report.html").is_file()
    summ = pd.read_parquet(report / "tables" / "summary.parquet")
    assert int(summ["boards"].sum()) == summary["boards"]
    mean = read_run(out, columns=["score"]).column("score").to_pandas().mean()
    assert float(summ["score_mean"].iloc[0]) == pytest.approx(mean)


def test_prove_certifies_a_tiny_shape(tiny_dict: str, tmp_path: Path) -> None:
    out = tmp_path / "proof"
    args = ["prove", "-d", tiny_dict, "--shape", "2x2", "-t", "6", "--classes", "ae rst", "-j", "1"]
    res = run_boggle(*args, "-o", str(out), "-q")
    assert res.returncode == EXIT_OK, res.stderr
    last = res.stdout.strip().splitlines()[-1]
    assert last.startswith("BEST ") and ">= 6" in last, res.stdout
    assert (out / "_SUCCESS").is_file()
    again = run_boggle(*args, "-o", str(out), "-q")  # a finished proof is not redone
    assert again.returncode == EXIT_OK and again.stdout.strip().splitlines()[-1] == last


def test_ingest_with_rejects_exits_3_and_keeps_the_good_rows(tmp_path: Path, enable2k_path: str) -> None:
    files = make_inputs(tmp_path)
    config = write_toml(tmp_path / "ingest.toml", {
        "boards": {"source": "ingest", "files": [str(f) for f in files], "chunk_size": 3},
        "lexicon": {"path": enable2k_path},
        "run": {"out": str(tmp_path / "run"), "n_jobs": 1},
    })  # fmt: skip
    res = run_boggle("run", str(config), "-q")
    assert res.returncode == EXIT_REJECTED_ROWS, res.stderr
    assert "4 of 8 input rows rejected" in res.stderr
    assert read_run(tmp_path / "run", columns=["board"]).num_rows == 4
    rejects = (tmp_path / "run" / "_rejects.csv").read_text(encoding="utf-8").splitlines()
    assert len(rejects) == 1 + 4  # the header, then one line a rejected row
