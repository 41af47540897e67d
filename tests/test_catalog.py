"""``boggle runs``: the catalog of runs, proofs and optimize searches under a folder (ls, show,
verify, query), read back from its JSON output and checked against the directories' own files."""

from __future__ import annotations

import csv
import io
import json
import shlex
import shutil
import uuid
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from pipeline import read_run, store
from pipeline.cli import app
from pipeline.dataset import find_jobs
from pipeline.optimize import OptimizeConfig, run_optimize
from pipeline.prove import run_prove
from pipeline.runner import run_job
from tests.conftest import REPO, read_side_json, run_boggle, run_config
from tests.test_lifecycle import _Stop, _stop_after, prove_config

CLI = CliRunner()


def boggle(*args: str) -> Any:
    return CLI.invoke(app, list(args), catch_exceptions=False)


def rows_in(folder: Path) -> int:
    return sum(pq.read_metadata(p).num_rows for p in folder.glob("part-*.parquet"))


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory, tiny_dict: str) -> Path:
    """A folder holding a finished run, a finished proof, a stopped proof, a finished search,
    a damaged run (a part cut short) and a folder that is no job."""
    base = tmp_path_factory.mktemp("catalog")
    assert run_job(run_config(tiny_dict, base / "runs" / "small")).status == "complete"
    run_prove(prove_config(tiny_dict, base / "proofs" / "done"))
    with pytest.raises(_Stop):
        run_prove(prove_config(tiny_dict, base / "proofs" / "stopped"), progress=_stop_after(2))
    run_optimize(
        OptimizeConfig(
            tiny_dict,
            shape="3x3",
            strategy="hill",
            restarts=2,
            iterations=3,
            pool_size=8,
            keep=3,
            out=str(base / "search"),
            n_jobs=1,
        )
    )
    damaged = shutil.copytree(base / "runs" / "small", base / "runs" / "damaged")
    part = damaged / "part-00001.parquet"
    part.write_bytes(part.read_bytes()[:-10])
    (base / "notes").mkdir()
    (base / "notes" / "readme.txt").write_text("not a job\n")
    return base


def test_ls_lists_each_kind_with_its_state_and_counts(root: Path) -> None:
    res = boggle("runs", "ls", str(root), "--json")
    assert res.exit_code == 0, res.output
    listed = {Path(e["path"]).relative_to(root).as_posix(): e for e in json.loads(res.stdout)}
    assert set(listed) == {"runs/small", "runs/damaged", "proofs/done", "proofs/stopped", "search"}
    kinds = {k: (e["kind"], e["state"], e["unit"]) for k, e in listed.items()}
    assert kinds == {
        "runs/small": ("run", "finished", "boards"),
        "runs/damaged": ("run", "damaged", "boards"),
        "proofs/done": ("proof", "finished", "classes"),
        "proofs/stopped": ("proof", "unfinished", "classes"),
        "search": ("search", "finished", "restarts"),
    }
    # the counts are what the directories hold: boards and classes are part rows
    assert listed["runs/small"]["count"] == rows_in(root / "runs" / "small") == 300
    assert listed["proofs/done"]["count"] == rows_in(root / "proofs" / "done")
    assert 0 < listed["proofs/stopped"]["count"] == rows_in(root / "proofs" / "stopped")
    assert listed["proofs/stopped"]["count"] < listed["proofs/done"]["count"]
    assert listed["search"]["count"] == 2
    assert "part-00001.parquet" in listed["runs/damaged"]["problem"]
    for rel, entry in listed.items():
        files = [p for p in (root / rel).rglob("*") if p.is_file()]
        assert entry["bytes"] == sum(p.stat().st_size for p in files)
        doc = read_side_json(root / rel, "_SUCCESS" if entry["state"] != "unfinished" else "_run.json")
        stamp = doc.get("finished_at") or doc["started_at"]
        assert entry["date"] == stamp
    assert listed["runs/small"]["config"] == "new 4x4 tiny.txt boggle"
    assert listed["proofs/done"]["config"] == "tiny.txt 2x3 T=20"
    # text: a header, one line a job, then what is wrong with the damaged one
    text = boggle("runs", "ls", str(root)).stdout.splitlines()
    assert text[0].split() == ["KIND", "STATE", "DATE", "COUNT", "CONFIG", "SIZE", "PATH"]
    assert len(text) == 1 + 5 + 1 and text[-1].startswith(f"{root / 'runs' / 'damaged'}: part-00001.parquet")


def test_show_gives_provenance_config_and_parts(root: Path) -> None:
    res = boggle("runs", "show", str(root / "proofs" / "done"), "--json")
    assert res.exit_code == 0, res.output
    shown = json.loads(res.stdout)
    manifest = read_side_json(root / "proofs" / "done")
    assert (shown["kind"], shown["state"], shown["format"]) == ("proof", "finished", "boggle-prove")
    assert shown["config_full"] == manifest["config"] and shown["packages"] == manifest["packages"]
    assert shown["started_at"] == manifest["started_at"] and shown["finished_at"] == manifest["finished_at"]
    parts = sorted((root / "proofs" / "done").glob("part-*.parquet"))
    assert shown["parts"] == {
        "files": len(parts),
        "rows": rows_in(root / "proofs" / "done"),
        "bytes": sum(p.stat().st_size for p in parts),
    }
    assert shown["figures"]["boards"] == len(manifest["boards"])
    assert shown["command"] is None
    stopped = json.loads(boggle("runs", "show", str(root / "proofs" / "stopped"), "--json").stdout)
    assert stopped["state"] == "unfinished" and stopped["finished_at"] is None
    assert stopped["parts"]["files"] == len(list((root / "proofs" / "stopped").glob("part-*.parquet")))
    text = boggle("runs", "show", str(root / "runs" / "small")).stdout.splitlines()
    assert text[0] == f"{root / 'runs' / 'small'}: finished run (boggle-run, schema {store.SCHEMA_VERSION})"
    assert "count: 300 boards" in text and "command: not recorded" in text


def test_verify_reads_every_byte(root: Path, tmp_path: Path) -> None:
    for rel in ("runs/small", "proofs/done", "proofs/stopped", "search"):
        res = boggle("runs", "verify", str(root / rel))
        assert res.exit_code == 0, res.output
        (line,) = res.stdout.splitlines()
        assert line.startswith(f"{root / rel}: intact (")
    # a flipped byte keeps the size: ls (sizes) misses it, verify (checksums) names the part
    flipped = shutil.copytree(root / "runs" / "small", tmp_path / "flipped")
    part = flipped / "part-00002.parquet"
    data = bytearray(part.read_bytes())
    data[len(data) // 2] ^= 0xFF
    part.write_bytes(bytes(data))
    assert json.loads(boggle("runs", "ls", str(tmp_path), "--json").stdout)[0]["state"] == "finished"
    res = boggle("runs", "verify", str(flipped))
    assert res.exit_code == 4 and res.stdout == ""
    assert (
        res.stderr.strip()
        == f"{flipped}: part-00002.parquet: checksum differs from the one recorded (damaged or replaced)"
    )
    found = json.loads(boggle("runs", "verify", str(flipped), "--json").stdout)
    assert found["intact"] is False and [p["file"] for p in found["problems"]] == ["part-00002.parquet"]
    assert boggle("runs", "verify", str(root / "runs" / "damaged")).exit_code == 4


def test_query_runs_sql_over_the_verified_boards(root: Path) -> None:
    pytest.importorskip("duckdb")
    run = root / "runs" / "small"
    table = read_run(run)
    sql = "select count(*) as n, sum(score) as total, max(n_words) as most from boards"
    res = boggle("runs", "query", str(run), sql, "--format", "json")
    assert res.exit_code == 0, res.output
    (row,) = [json.loads(line) for line in res.stdout.splitlines()]
    assert row == {
        "n": table.num_rows,
        "total": pc.sum(table["score"]).as_py(),
        "most": pc.max(table["n_words"]).as_py(),
    }
    # two runs, one view; csv with a header
    sql = "select board_id, score from boards order by board_id, score"
    both = boggle("runs", "query", str(run), str(run), sql, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(both.stdout)))
    assert len(rows) == 2 * table.num_rows and rows[0].keys() == {"board_id", "score"}
    text = boggle("runs", "query", str(run), "select 1 as one").stdout.splitlines()
    assert text == ["one", "  1", "(1 row)"]
    # bad SQL, a damaged run, too few arguments: one line, the documented exit codes
    bad = boggle("runs", "query", str(run), "select nope from boards")
    assert (
        bad.exit_code == 2 and bad.stderr.startswith("error: query: ") and len(bad.stderr.splitlines()) == 1
    )
    assert boggle("runs", "query", str(root / "runs" / "damaged"), "select 1").exit_code == 4
    assert boggle("runs", "query", "select 1").exit_code == 2


def test_not_a_job_or_no_folder_is_one_line(root: Path, tmp_path: Path) -> None:
    res = boggle("runs", "ls", str(tmp_path / "nowhere"))
    assert res.exit_code == 2 and res.stderr.strip() == f"error: {tmp_path / 'nowhere'}: no such folder"
    res = boggle("runs", "show", str(root / "notes"))
    assert res.exit_code == 2 and "not a job directory" in res.stderr and len(res.stderr.splitlines()) == 1
    empty = tmp_path / "empty"
    empty.mkdir()
    assert boggle("runs", "ls", str(empty)).stdout.strip() == "no run, proof or search here"


def test_ls_under_an_object_store_prefix(tiny_dict: str) -> None:
    """The same listing of a folder in an object store (fsspec's memory:// here; S3 in
    test_objstore)."""
    prefix = f"memory://cat-{uuid.uuid4().hex[:8]}"
    assert run_job(run_config(tiny_dict, f"{prefix}/nightly/a")).status == "complete"
    (entry,) = find_jobs(prefix)
    assert (entry.path, entry.kind, entry.state, entry.count) == (
        f"{prefix}/nightly/a",
        "run",
        "finished",
        300,
    )
    res = boggle("runs", "verify", entry.path)
    assert res.exit_code == 0 and "intact" in res.stdout


def test_show_names_the_command_that_made_a_job(tmp_path: Path) -> None:
    """A job started by the ``boggle`` command keeps its command line in its record and
    manifest; ``runs show`` prints it."""
    out = tmp_path / "made"
    args = (
        "run",
        str(REPO / "configs" / "smoke.toml"),
        "--count",
        "100",
        "--chunk-size",
        "50",
        "-j",
        "1",
        "-q",
        "-o",
        str(out),
    )
    res = run_boggle(*args)
    assert res.returncode == 0, res.stderr
    command = shlex.join(["boggle", *args])
    assert read_side_json(out, "_run.json")["command"] == command
    assert read_side_json(out)["command"] == command
    shown = json.loads(boggle("runs", "show", str(out), "--json").stdout)
    assert shown["command"] == command
    assert f"command: {command}" in boggle("runs", "show", str(out)).stdout.splitlines()
