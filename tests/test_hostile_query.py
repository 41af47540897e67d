"""Issue 54, ``boggle runs query``: the SQL runs in a sandbox. One read-only statement (a SELECT)
over the runs' own parts, through the view the command makes; DuckDB's external access off, so
no other file, URL, database or extension is read or written (``COPY ... TO``, ``ATTACH``,
``read_csv('/etc/passwd')``, ``read_text``, ``glob``, ``/dev/stdin`` are one line, exit 2); its
configuration locked (a query cannot lift the sandbox); its memory capped by ``--memory-limit``
and its threads by ``--threads``; and SIGTERM stops it within a second.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from pipeline.errors import ConfigError
from pipeline.store.dataset import query_runs
from pipeline.store.dataset._query import parse_memory_limit
from tests.conftest import ALPHA, boggle_command, job_environment, one_error_line, run_boggle, write_run
from tests.test_limits_input import boggle as limited_boggle

pytest.importorskip("duckdb")

SECRET = "root:x:0:0"  # what /etc/passwd starts with: never on stdout


@pytest.fixture
def finished_run(tmp_path: Path) -> Path:
    return write_run(tmp_path / "run", ALPHA)


def hostile(tmp_path: Path) -> list[tuple[str, str]]:
    """(SQL, what its one error line says) for every way out of the sandbox the issue found."""
    return [
        (f"COPY (SELECT 42) TO '{tmp_path / 'x.csv'}'", "only a SELECT is run"),
        (f"select * from (select 42) t; COPY t TO '{tmp_path / 'y.csv'}'", "give one SQL statement"),
        ("select * from read_csv('/etc/passwd')", "file system operations are disabled"),
        ("select * from read_text('/etc/passwd')", "file system operations are disabled"),
        ("select * from glob('/root/*')", "file system operations are disabled"),
        ("select * from read_csv('/dev/stdin')", "file system operations are disabled"),
        ("select * from 'https://example.com/x.csv'", "disabled"),
        (f"ATTACH '{tmp_path / 'db.duckdb'}' AS d", "only a SELECT is run"),
        (f"select * from query('ATTACH ''{tmp_path / 'q.duckdb'}''')", "query: "),
        ("create table t as select 42", "only a SELECT is run"),
        ("SET enable_external_access = true", "only a SELECT is run"),
        ("INSTALL httpfs", "only a SELECT is run"),
        ("select * from read_parquet('/nonexistent/*.parquet')", "file system operations are disabled"),
    ]


def test_the_sql_reads_the_runs_and_nothing_else(tmp_path: Path, finished_run: Path) -> None:
    work = tmp_path / "cwd"
    work.mkdir()
    ok = run_boggle("runs", "query", str(finished_run), "select count(*) as n from boards", cwd=work)
    assert ok.returncode == 0 and ok.stdout.split()[:2] == ["n", str(len(ALPHA))], ok.stderr[-2000:]
    before = sorted(p.name for p in tmp_path.iterdir())
    for sql, needle in hostile(tmp_path):
        res = run_boggle("runs", "query", str(finished_run), sql, cwd=work, timeout=120)
        assert res.returncode == 2, (sql, res.returncode, res.stderr[-2000:])
        one_error_line(res, "error: query: ", needle)
        assert res.stdout == "" and SECRET not in res.stderr, sql
    # nothing written: no CSV, no database, no spill folder left where it ran
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert list(work.iterdir()) == []


def test_a_query_cannot_lift_the_sandbox_from_python_either(finished_run: Path) -> None:
    with pytest.raises(ConfigError, match="file system operations are disabled"):
        query_runs([finished_run], "select * from read_csv('/etc/passwd')")
    with pytest.raises(ConfigError, match="Expected a single SELECT statement"):
        query_runs([finished_run], "select * from query('SET enable_external_access = true')")
    assert query_runs([finished_run], "select count(*) from boards").rows == [(len(ALPHA),)]


def test_memory_limit_and_threads_hold(finished_run: Path) -> None:
    """A query past --memory-limit is one line, exit 2, in bounded memory (the issue's
    ``list(range)`` reached 14.8 GB); the settings are DuckDB's for the query."""
    res = limited_boggle(
        "runs",
        "query",
        finished_run,
        "select list(range) from range(300000000)",
        "--memory-limit",
        "128MiB",
        "--threads",
        "1",
    )
    assert res.returncode == 2 and "MemoryError" not in res.stderr, res.stderr[-2000:]
    one_error_line(res, "error: query: Out of Memory Error")
    shown = run_boggle(
        "runs",
        "query",
        str(finished_run),
        "select current_setting('threads') as t, current_setting('memory_limit') as m",
        "--memory-limit",
        "256MiB",
        "--threads",
        "1",
        "--format",
        "csv",
    )
    assert shown.returncode == 0, shown.stderr[-2000:]
    assert shown.stdout.splitlines()[1] == "1,256.0 MiB"


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        ("-1GB", "expected a size such as 2GB"),  # DuckDB reads it as no limit at all
        ("lots", "expected a size such as 2GB"),
        ("1KB", "at least 16MiB"),
        ("1000000TB", "at most this machine's"),
        ("9" * 400 + "GB", "expected a size"),
    ],
)
def test_a_bad_memory_limit_is_exit_2_before_a_run_is_read(tmp_path: Path, value: str, needle: str) -> None:
    res = run_boggle("runs", "query", str(tmp_path / "nowhere"), "select 1", "--memory-limit", value)
    assert res.returncode == 2, res.stderr[-2000:]
    one_error_line(res, "--memory-limit", needle)


def test_memory_limit_parses() -> None:
    assert parse_memory_limit("2GB") == 2 * 10**9
    assert parse_memory_limit("512MiB") == 512 << 20
    assert parse_memory_limit(" 1.5 gb ") == 1_500_000_000


def test_sigterm_stops_a_query_at_once(finished_run: Path) -> None:
    """The query would count for hours; SIGTERM interrupts it (exit 143, one line). The bound
    leaves room for a loaded machine: alone it takes a fraction of a second, and 1.1 s was seen
    once with the rest of the suite on both cores."""
    proc = subprocess.Popen(
        boggle_command(
            "runs",
            "query",
            str(finished_run),
            "select count(*) from range(1000000000000) a where a.range % 7 = 3",
            "--threads",
            "1",
            "--memory-limit",
            "256MiB",
        ),
        env=job_environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(3)  # past the imports, in the query
        assert proc.poll() is None, proc.communicate()
        t0 = time.monotonic()
        os.kill(proc.pid, signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
        took = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143, err[-2000:]
    assert took < 10.0, took
    assert out == "" and err.count("\n") == 1 and "SIGTERM" in err
