"""End to end, the way a user runs it: each stage once, on small inputs.

The default test run (``make test``) keeps these few: a real ``boggle run`` process (2 worker
processes), ``boggle analyze`` of its output, a real ``boggle prove`` of a tiny shape, and an
ingest with rejected rows. The heavier end-to-end checks (interrupted and killed jobs, big runs,
dask clusters, object stores, the notebook, a browser) are marked ``integration`` and run with
``make test-integration`` and ``make test-all``.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from pipeline import read_run, store
from pipeline.cli import app
from pipeline.errors import EXIT_OK, EXIT_REJECTED_ROWS
from tests.conftest import ingest_config, read_side_json, run_boggle, side_path, tiny_proof_args

CLI = CliRunner()


def test_run_writes_a_finished_run_every_reader_reads(smoke_run: Path) -> None:
    summary = json.loads((smoke_run.parent / "summary.json").read_text(encoding="utf-8"))
    assert (summary["status"], summary["boards"], summary["chunks"]) == ("complete", 2000, 4)
    table = read_run(smoke_run, columns=["board_id", "score"])
    assert table.column("board_id").to_pylist() == list(range(2000))
    assert len(pd.read_parquet(smoke_run)) == 2000  # the plain Parquet reader sees exactly the boards
    assert table.column("score").to_pandas().mean() > 50 and not (smoke_run / ".lock").exists()


def test_analyze_reports_on_the_run(smoke_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "smoke-report"
    res = CLI.invoke(app, ["analyze", str(smoke_run), "--out", str(out)])
    assert res.exit_code == EXIT_OK, res.output
    assert res.stdout.strip().splitlines()[-1].endswith(str(out / "report.html"))
    manifest = read_side_json(smoke_run)
    counts = manifest["counts"]
    summ = pd.read_parquet(out / "tables" / "summary.parquet")
    (row,) = summ[summ["run"] == "smoke"].to_dict("records")
    # The runner's own totals and a plain pandas read of the parts agree with the analysis.
    assert row["boards"] == counts["boards"] == 2000
    assert row["score_mean"] == pytest.approx(counts["score_total"] / counts["boards"])
    assert row["words_mean"] == pytest.approx(counts["words_total"] / counts["boards"])
    df = pd.concat([pd.read_parquet(smoke_run / p["file"]) for p in manifest["parts"]])
    assert row["score_median"] == pytest.approx(df["score"].median())
    assert row["dead_cells_mean"] == pytest.approx(df["dead_cells"].mean())
    bl = pd.read_parquet(out / "tables" / "by_length.parquet")
    assert bl["points_total"].sum() == counts["score_total"]
    page = (out / "report.html").read_text(encoding="utf-8")
    assert manifest["lexicon"]["content_hash"] in page


def test_prove_certifies_a_tiny_shape(tiny_dict: str, tmp_path: Path) -> None:
    out = tmp_path / "proof"
    res = run_boggle(*tiny_proof_args(tiny_dict, out))
    assert res.returncode == EXIT_OK, res.stderr
    last = res.stdout.strip().splitlines()[-1]
    assert last.startswith("BEST ") and ">= 6" in last, res.stdout
    assert side_path(out).is_file() and f"wrote {out}" in res.stdout


def test_ingest_with_rejects_exits_3_and_keeps_the_good_rows(tmp_path: Path, enable2k_path: str) -> None:
    config = ingest_config(tmp_path, enable2k_path)
    result = CLI.invoke(app, ["run", str(config), "--quiet"])
    assert result.exit_code == EXIT_REJECTED_ROWS, result.output
    assert "4 of 8 input rows rejected" in result.output
    manifest, _ = store.open_run(tmp_path / "run")
    assert manifest["counts"]["input_rows"] == 8
    assert manifest["counts"]["boards"] == 4 and manifest["counts"]["rejected"] == 4
    # chunks of 3 records run across files: [a1 a2 a3] [a4 a5 b1] [b2 b3]; the last has no board
    assert [p["rows"] for p in manifest["parts"]] == [2, 2, 0]
    rejects = store.read_rejects(tmp_path / "run")
    a, b = tomllib.loads(config.read_text(encoding="utf-8"))["boards"]["files"]  # as the run read them
    assert [(r["source"], r["line"], r["raw"]) for r in rejects] == [
        (a, "2", "perslatgsinete1s"),
        (a, "4", "abcde"),
        (b, "3", "[th]aaaaaaaaaaaaaaa"),
        (b, "4", ""),
    ]
    assert rejects[0]["reason"] == "position 15: unknown face '1' (faces are letters; '.' is a blank)"
    assert "not a square number" in rejects[1]["reason"]
    assert "face 'th' (cell 1) is not in the run's alphabet" in rejects[2]["reason"]
    assert rejects[3]["reason"] == "empty board"
    table = store.read_run_table(tmp_path / "run")
    assert table.column("board_id").to_pylist() == [0, 1, 2, 3]
    assert table.column("board").to_pylist() == [
        "perslatgsineters",
        "[qu]iet",  # one notation: a face of several letters in brackets, Qu too (schema 6)
        "perslatgsineters",
        "[qu]" * 16,
    ]
    assert table.column("source").to_pylist() == [a, a, a, b]
    assert table.column("score").to_pylist()[0] == 3625
    # a second run is a no-op and still reports the rejects
    again = CLI.invoke(app, ["run", str(config), "--quiet"])
    assert again.exit_code == 3 and "already complete" in again.output

    # with the multi-letter face allowed, that row is a board
    redo = CLI.invoke(app, ["run", str(config), "--quiet", "--set", 'boards.faces=["th"]', "--overwrite"])
    assert redo.exit_code == 3 and "3 of 8 input rows rejected" in redo.output
    assert store.read_run_table(tmp_path / "run").column("board").to_pylist()[-1] == "[th]aaaaaaaaaaaaaaa"
