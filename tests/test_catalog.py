"""``boggle runs``: the catalog of runs, proofs and optimize searches under a folder (ls, show,
verify, query), read back from its JSON output and checked against the directories' own files."""

from __future__ import annotations

import csv
import io
import json
import shlex
import shutil
import signal
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from pipeline import read_run, store
from pipeline.best.optimize import OptimizeConfig, run_optimize
from pipeline.best.prove import run_prove
from pipeline.cli import app
from pipeline.runner import run_job
from pipeline.store.dataset import find_jobs
from tests.conftest import (
    REPO,
    boggle_command,
    job_environment,
    read_side_json,
    run_boggle,
    run_config,
    side_path,
)
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
    # csv with a header; a run named twice is read once
    sql = "select board_id, score from boards order by board_id, score"
    both = boggle("runs", "query", str(run), str(run), sql, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(both.stdout)))
    assert len(rows) == table.num_rows and rows[0].keys() == {"board_id", "score"}
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


# ---------------------------------------------------------------- folders of runs, globs


@pytest.fixture(scope="module")
def nights(tmp_path_factory: pytest.TempPathFactory, tiny_dict: str) -> Path:
    """A folder of nightly runs (two finished, one unfinished) beside a proof, and a run of
    the layout before packed side files (tests/data/schema5)."""
    import datetime

    from pipeline.config import load_config

    base = tmp_path_factory.mktemp("nights")
    for day in ("2026-12-01", "2026-12-02", "2026-12-03"):
        values = {"boards.count": 60, "boards.chunk_size": 30, "boards.seed": "date"}
        values |= {"lexicon.path": tiny_dict, "run.out": str(base / "nightly" / day), "run.n_jobs": 1}
        run_job(load_config(None, values, day=datetime.date.fromisoformat(day)))
    side_path(base / "nightly" / "2026-12-03").unlink()  # as a night still running leaves it
    shutil.copytree(REPO / "tests" / "data" / "schema5" / "nightly" / "date=2026-12-02", base / "old")
    run_prove(prove_config(tiny_dict, base / "proof"))
    return base


def test_query_ls_and_verify_take_a_folder_of_runs_or_a_glob(nights: Path) -> None:
    """Every finished run below a folder is one table, with its folder and date as columns;
    an unfinished one (and a proof) is left out with a note; a glob names runs too."""
    pytest.importorskip("duckdb")
    sql = "select run, run_date, count(*) as n from boards group by all order by run"
    res = boggle("runs", "query", str(nights), sql, "--format", "json")
    assert res.exit_code == 0, res.output
    got = [json.loads(line) for line in res.stdout.splitlines()]
    assert got == [
        {"run": str(nights / "nightly" / "2026-12-01"), "run_date": "2026-12-01", "n": 60},
        {"run": str(nights / "nightly" / "2026-12-02"), "run_date": "2026-12-02", "n": 60},
        {"run": str(nights / "old"), "run_date": "2026-12-02", "n": 40},
    ]
    assert res.stderr.splitlines() == [
        f"note: {nights / 'nightly' / '2026-12-03'}: an unfinished run; left out",
        f"note: {nights / 'proof'}: a proof, not a run; left out",
    ]
    glob = boggle("runs", "query", f"{nights}/nightly/2026-12-0[12]", "select count(*) from boards")
    assert glob.exit_code == 0 and glob.stdout.splitlines()[1].strip() == "120"
    listed = json.loads(boggle("runs", "ls", f"{nights}/nightly/*", "--json").stdout)
    assert [(Path(e["path"]).name, e["state"]) for e in listed] == [
        ("2026-12-01", "finished"),
        ("2026-12-02", "finished"),
        ("2026-12-03", "unfinished"),
    ]
    verified = boggle("runs", "verify", str(nights / "nightly"))
    assert verified.exit_code == 0 and len(verified.stdout.splitlines()) == 3
    # a run named itself must be finished; a glob that matches nothing is one line
    res = boggle("runs", "query", str(nights / "nightly" / "2026-12-03"), "select 1")
    assert res.exit_code == 2 and "unfinished" in res.stderr
    res = boggle("runs", "ls", f"{nights}/nope-*")
    assert res.exit_code == 2 and "matches no folder" in res.stderr


def snapshot(*folders: Path) -> dict[str, float]:
    """Every file below ``folders`` with its modification time."""
    return {str(p): p.stat().st_mtime for f in folders for p in f.rglob("*") if p.is_file()}


SANDBOX = {
    "copy to a file": "copy (select * from boards) to '{tmp}/out.csv'",
    "copy to a parquet file": "copy boards to '{tmp}/out.parquet' (format parquet)",
    "read_csv of /etc/passwd": "select * from read_csv('/etc/passwd')",
    "read_text": "select * from read_text('/etc/passwd')",
    "read_blob": "select * from read_blob('/etc/hostname')",
    "another parquet file": "select * from read_parquet('{tmp}/other/part-00000.parquet')",
    "glob": "select * from glob('/etc/*')",
    "/dev/stdin": "select * from read_csv('/dev/stdin')",
    "attach a database": "attach '{tmp}/x.duckdb' as x",
    "export the database": "export database '{tmp}/exported'",
    "install an extension": "install httpfs",
    "load an extension": "load httpfs",
    "lift the sandbox": "set enable_external_access = true",
    "raise the memory limit": "set memory_limit = '100GB'",
    "spill to disk": "set temp_directory = '{tmp}/spill'",
    "a huge query": "select count(*) from (select a.board from boards a, boards b, boards c order by 1)",
}


@pytest.mark.parametrize("case", SANDBOX, ids=list(SANDBOX))
def test_query_is_a_sandbox(case: str, root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SQL from anyone reads the runs' boards and nothing else, writes nothing, and stays
    under its memory limit: each escape is refused in one line, exit 2, and no file appears
    or changes (in the work folder, the runs, the folder the SQL names)."""
    pytest.importorskip("duckdb")
    run = root / "runs" / "small"
    shutil.copytree(run, tmp_path / "other")  # a Parquet file that is not one of the runs'
    monkeypatch.chdir(tmp_path)
    before = snapshot(tmp_path, run)
    sql = SANDBOX[case].format(tmp=tmp_path)
    res = boggle("runs", "query", "--memory-limit", "64MB", "--threads", "1", str(run), sql)
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith("error: query: ") and len(res.stderr.splitlines()) == 1, res.stderr
    assert snapshot(tmp_path, run) == before


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="Linux: /proc shows when DuckDB is loaded")
def test_query_stops_on_sigterm_at_once(root: Path) -> None:
    pytest.importorskip("duckdb")
    run = root / "runs" / "small"
    endless = (
        "select count(*) from boards a, boards b, boards c, boards d "
        "where a.score + b.score = c.score + d.score + 1"
    )
    proc = subprocess.Popen(
        [*boggle_command(), "runs", "query", str(run), endless],
        env=job_environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # once DuckDB is loaded the run is verified and the query starts; then it runs for hours
    deadline = time.monotonic() + 60
    while "_duckdb" not in Path(f"/proc/{proc.pid}/maps").read_text():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.1)
    time.sleep(1.0)
    assert proc.poll() is None, proc.communicate()
    sent = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    # the command's last line says it stopped: the query was cancelled and its connection closed
    # (what is left is the interpreter's own teardown, slower on a loaded machine)
    assert proc.stderr is not None
    line = proc.stderr.readline()
    stopped = time.monotonic() - sent
    proc.communicate(timeout=30)
    exited = time.monotonic() - sent
    assert proc.returncode == 143 and line.startswith("terminated"), line
    # a fraction of a second alone; the bound leaves room for a loaded machine, and is still
    # nothing beside the hours the query would run
    assert stopped < 10.0, f"{stopped:.2f} s from SIGTERM to its line ({exited:.2f} s to the exit)"
