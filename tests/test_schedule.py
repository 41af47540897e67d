"""Scheduled jobs that make new data: seeds from the schedule's date, --out patterns, and the
cron/systemd script and the Airflow DAG of configs/schedule/."""

from __future__ import annotations

import ast
import datetime
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import pipeline
from pipeline import store
from pipeline.cli import app
from pipeline.config import (
    config_from_dict,
    date_seed,
    expand_pattern,
    load_config,
    parse_day,
    placeholder_values,
)
from pipeline.errors import ConfigError
from tests.conftest import read_side_json

REPO = Path(__file__).resolve().parents[1]
SCHEDULE = REPO / "configs" / "schedule"
CLI = CliRunner()
DEC1 = datetime.date(2026, 12, 1)


def write_config(path: Path, boards: str = 'seed = "date"', run: str = "") -> Path:
    path.write_text(
        f'[boards]\ncount = 40\nchunk_size = 20\n{boards}\n[lexicon]\npath = "tanglet:en"\n[run]\n{run}\n'
    )
    return path


# ---------------------------------------------------------------- the seed and the date


def test_date_seed_is_the_documented_stable_hash() -> None:
    want = int.from_bytes(hashlib.sha256(b"2026-12-01").digest()[:8], "big")
    assert date_seed(DEC1) == want == 5775908522102935850  # a literal: the formula is the contract
    seeds = {date_seed(DEC1 + datetime.timedelta(days=k)) for k in range(366)}
    assert len(seeds) == 366  # a year of nights, a year of seeds


def test_parse_day() -> None:
    assert parse_day("2026-12-01") == DEC1
    assert parse_day("today") == parse_day("TODAY") == datetime.date.today()
    for bad in ("2026-13-01", "20261201", "2026-12-1", "yesterday", ""):
        with pytest.raises(ConfigError, match="expected a date YYYY-MM-DD or 'today'"):
            parse_day(bad, "--date")


def test_expand_pattern_placeholders() -> None:
    values = placeholder_values(DEC1, "configs/schedule/nightly.toml")
    assert expand_pattern("runs/{config}/{date}", values) == "runs/nightly/2026-12-01"
    assert expand_pattern("runs/{year}/{month}/{day}", values) == "runs/2026/12/01"
    assert expand_pattern("runs/{date:%Y%m%d}", values) == "runs/20261201"
    assert expand_pattern("runs/{{literal}}/x", values) == "runs/{literal}/x"
    for bad, why in (
        ("runs/{nope}", "unknown placeholder {nope}"),
        ("runs/{date!r}", "unknown placeholder {date}"),
        ("runs/{year:>5}", "unknown placeholder {year}"),
        ("runs/{date", "expected '}'"),
        ("runs/date}", "Single '}'"),
    ):
        with pytest.raises(ConfigError, match=why.replace("{", r"\{").replace("}", r"\}")):
            expand_pattern(bad, values, what="--out")
    with pytest.raises(ConfigError, match="no value here"):
        expand_pattern("runs/{config}", placeholder_values(DEC1))


def test_seed_date_in_the_config_and_the_identity(tmp_path: Path) -> None:
    cfg_path = write_config(tmp_path / "job.toml")
    a = load_config(cfg_path, {"run.out": str(tmp_path / "a")}, day=DEC1)
    assert a.boards.seed == date_seed(DEC1) and a.boards.seed_date == "2026-12-01"
    assert a.data_dict()["boards"]["seed_date"] == "2026-12-01"
    b = load_config(cfg_path, {"run.out": str(tmp_path / "a")}, day=DEC1 + datetime.timedelta(days=1))
    assert b.boards.seed != a.boards.seed and b.data_dict() != a.data_dict()
    # the recorded config loads back to the same run (seed and seed_date agree)
    again = config_from_dict(a.to_dict()).resolve()
    assert again.data_dict() == a.data_dict()
    # a seed_date alone gives its seed; one with a seed it does not derive is refused
    alone = load_config(write_config(tmp_path / "alone.toml", 'seed_date = "2026-12-01"'), day=None)
    assert alone.boards.seed == date_seed(DEC1)
    with pytest.raises(ConfigError, match="does not derive from seed_date"):
        load_config(write_config(tmp_path / "both.toml", 'seed = 5\nseed_date = "2026-12-01"'))
    with pytest.raises(ConfigError, match=r"\[boards\] seed_date: expected a date YYYY-MM-DD"):
        load_config(write_config(tmp_path / "bad.toml", 'seed_date = "1 Dec"'))
    with pytest.raises(ConfigError, match='or "date"'):
        load_config(write_config(tmp_path / "word.toml", 'seed = "daily"'))
    # an explicit seed on the command line wins over seed = "date": no seed_date then
    fixed = load_config(cfg_path, {"boards.seed": 7, "run.out": str(tmp_path / "a")}, day=DEC1)
    assert fixed.boards.seed == 7 and fixed.boards.seed_date is None
    assert "seed_date" not in fixed.data_dict()["boards"]  # an undated run keeps its old identity


def test_run_out_pattern_in_the_config_file(tmp_path: Path) -> None:
    cfg_path = write_config(tmp_path / "nightly.toml", run=f'out = "{tmp_path}/{{config}}/{{date}}"')
    cfg = load_config(cfg_path, day=DEC1)
    assert cfg.run.out == str(tmp_path / "nightly" / "2026-12-01")
    bad = write_config(tmp_path / "bad.toml", run='out = "runs/{when}"')
    with pytest.raises(ConfigError, match=r"\[run\] out 'runs/\{when\}': unknown placeholder") as info:
        load_config(bad)
    assert info.value.source == str(bad)


def test_cli_seed_from_date_and_out_pattern(tmp_path: Path, enable2k_path: str) -> None:
    smoke = str(REPO / "configs" / "smoke.toml")
    args = ["run", smoke, "--count", "40", "--chunk-size", "20", "-d", enable2k_path, "-j", "1", "-q"]
    res = CLI.invoke(
        app, [*args, "--seed-from-date", "2026-12-01", "--out", f"{tmp_path}/{{config}}-{{date}}"]
    )
    assert res.exit_code == 0, res.output
    run = tmp_path / "smoke-2026-12-01"
    manifest = read_side_json(run)
    assert manifest["config"]["boards"]["seed"] == date_seed(DEC1)
    assert manifest["identity"]["data"]["boards"]["seed_date"] == "2026-12-01"
    rows = pipeline.read_run(run, columns=["seed", "run_id"])
    assert set(rows["seed"].to_pylist()) == {str(date_seed(DEC1))}
    assert set(rows["run_id"].to_pylist()) == {store.run_id_of(manifest["identity"])}

    # one-line refusals, exit 2, nothing created
    for extra, why in (
        (
            ["--out", f"{tmp_path}/{{when}}"],
            "error: --out '" + str(tmp_path) + "/{when}': unknown placeholder {when}",
        ),
        (
            ["--seed", "3", "--seed-from-date", "today"],
            "error: --seed and --seed-from-date both set the seed",
        ),
        (["--seed-from-date", "2026-02-30"], "error: --seed-from-date '2026-02-30': expected a date"),
        (["--date", "2026-12-01", "--seed-from-date", "2026-12-02"], "error: --date 2026-12-01 differs"),
    ):
        bad = CLI.invoke(app, [*args, *extra])
        assert bad.exit_code == 2 and bad.stderr.startswith(why) and len(bad.stderr.splitlines()) == 1, (
            bad.stderr
        )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["smoke-2026-12-01"]


# ---------------------------------------------------------------- configs/schedule


def boggle_wrapper(tmp_path: Path) -> Path:
    """A `boggle` executable for the script: this interpreter and this checkout."""
    wrapper = tmp_path / "bin" / "boggle"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH="{REPO}" exec "{sys.executable}" -m pipeline.cli "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return wrapper


def nightly(tmp_path: Path, enable2k: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    boggle = tmp_path / "bin" / "boggle" if (tmp_path / "bin").exists() else boggle_wrapper(tmp_path)
    environment = {
        **os.environ,
        "BOGGLE": str(boggle),
        "BOGGLE_CONFIG": str(SCHEDULE / "nightly.toml"),
        "BOGGLE_RUNS": str(tmp_path / "runs"),
        "BOGGLE_RETRY_DELAY": "0",
        "BOGGLE_ALERT": str(tmp_path / "alert.sh"),
        **env,
    }
    alert = tmp_path / "alert.sh"
    if not alert.exists():
        alert.write_text(f'#!/bin/sh\necho "$1 $2 $3" >> "{tmp_path}/alerts.txt"\n')
        alert.chmod(0o755)
    tiny = ["--count", "60", "--chunk-size", "20", "-d", enable2k, "-j", "1"]
    return subprocess.run(
        ["sh", str(SCHEDULE / "boggle-nightly.sh"), *args, *tiny],
        env=environment,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.integration
def test_the_nightly_script_makes_a_new_run_each_day(tmp_path: Path, enable2k_path: str) -> None:
    """What cron and the systemd service run, on two nights: two runs in two directories with
    two seeds and other boards; a retry of a night is a no-op; a night needing a person alerts."""
    runs = tmp_path / "runs"
    for day in ("2026-12-01", "2026-12-02"):
        res = nightly(tmp_path, enable2k_path, day)
        assert res.returncode == 0, res.stderr
    assert sorted(p.name for p in runs.iterdir()) == ["2026-12-01", "2026-12-02"]
    assert sorted(p.name for p in (tmp_path / "runs.summaries").iterdir()) == [
        "2026-12-01.json",
        "2026-12-02.json",
    ]
    first, second = (
        json.loads((tmp_path / "runs.summaries" / f"2026-12-0{d}.json").read_text()) for d in (1, 2)
    )
    assert first["status"] == second["status"] == "complete" and first["run_id"] != second["run_id"]
    seeds, boards = [], []
    for day in ("2026-12-01", "2026-12-02"):
        manifest = read_side_json(runs / day)
        assert manifest["config"]["boards"]["seed_date"] == manifest["run_date"] == day
        seeds.append(manifest["config"]["boards"]["seed"])
        table = pipeline.read_run(runs / day, columns=["board", "run_date"])
        assert {d.isoformat() for d in table["run_date"].to_pylist()} == {day}
        boards.append(table["board"].to_pylist())
    assert seeds == [date_seed(DEC1), date_seed(DEC1 + datetime.timedelta(days=1))]
    assert len(boards[0]) == len(boards[1]) == 60 and not set(boards[0]) & set(boards[1])

    again = nightly(tmp_path, enable2k_path, "2026-12-01")  # a retry of a finished night
    assert again.returncode == 0
    assert (
        json.loads((tmp_path / "runs.summaries" / "2026-12-01.json").read_text())["status"]
        == "already complete"
    )
    assert not (tmp_path / "alerts.txt").exists()

    # bad input needs a person: alerted at once, not retried, the script exits 2
    bad = nightly(tmp_path, enable2k_path, "2026-12-03", BOGGLE_RETRIES="3", BOGGLE_CONFIG=str(tmp_path))
    assert bad.returncode == 2 and "retry" not in bad.stderr
    assert (tmp_path / "alerts.txt").read_text().split() == [
        "2",
        str(tmp_path / "runs.summaries" / "2026-12-03.json"),
        "2026-12-03",
    ]
    assert json.loads((tmp_path / "runs.summaries" / "2026-12-03.json").read_text())["exit_code"] == 2


def test_the_nightly_script_retries_only_transient_codes(tmp_path: Path) -> None:
    """Exit 5 is retried BOGGLE_RETRIES times, then alerted; exit 4 and 6 (a broken expectation)
    at once, passed on; 3 is success."""
    fake = tmp_path / "bin" / "boggle"
    fake.parent.mkdir()
    fake.write_text(f'#!/bin/sh\necho run >> "{tmp_path}/calls.txt"\nexit "$FAKE_EXIT"\n')
    fake.chmod(0o755)
    for code, calls, script_exit in (
        (5, 3, 5),
        (143, 3, 143),
        (130, 3, 130),
        (4, 1, 4),
        (2, 1, 2),
        (1, 1, 1),
        (3, 1, 0),
        (6, 1, 6),
        (137, 1, 137),
    ):
        (tmp_path / "calls.txt").unlink(missing_ok=True)
        (tmp_path / "alerts.txt").unlink(missing_ok=True)
        res = nightly(tmp_path, "unused", "2026-12-01", BOGGLE_RETRIES="2", FAKE_EXIT=str(code))
        assert res.returncode == script_exit, (code, res.stderr)
        assert len((tmp_path / "calls.txt").read_text().split()) == calls, code
        assert (tmp_path / "alerts.txt").read_text().split()[0] == str(code)  # 3: a look, not a page


def _fake_boggle(tmp_path: Path) -> None:
    fake = tmp_path / "bin" / "boggle"
    fake.parent.mkdir(exist_ok=True)
    fake.write_text(f'#!/bin/sh\necho run >> "{tmp_path}/calls.txt"\nexit "${{FAKE_EXIT:-0}}"\n')
    fake.chmod(0o755)


def test_the_nightly_script_refuses_bad_settings_before_running(tmp_path: Path) -> None:
    """A numeric setting that is not a whole number in range (``[ 0 -lt abc ]`` fails, and the
    old loop retried exit 5 forever) or a DATE that is not a real date (``../../escape`` named a
    folder outside RUNS): one line, exit 2, nothing run, nothing written, no alert."""
    _fake_boggle(tmp_path)
    outside = tmp_path / "escape"
    cases = [
        ({"BOGGLE_RETRIES": bad}, "2026-12-01", "BOGGLE_RETRIES")
        for bad in ("abc", "-1", "1e3", " 2", "2.5", "101", "9" * 30)
    ] + [({"BOGGLE_RETRY_DELAY": bad}, "2026-12-01", "BOGGLE_RETRY_DELAY") for bad in ("x", "86401", "-5")]
    cases += [
        ({}, day, "real date")
        for day in (
            "../../escape",
            "2026-12-01/../../escape",
            "2026-02-29",
            "2026-04-31",
            "2026-13-01",
            "1900-02-29",
            "2026-1-01",
            "20261201",
            "yesterday",
        )
    ]
    for env, day, words in cases:
        (tmp_path / "calls.txt").unlink(missing_ok=True)
        res = nightly(tmp_path, "unused", day, FAKE_EXIT="5", **env)
        assert res.returncode == 2, (env, day, res.stderr)
        lines = res.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("boggle-nightly: error: ") and words in lines[0], lines
        assert not (tmp_path / "calls.txt").exists() and not (tmp_path / "alerts.txt").exists()
        assert not (tmp_path / "runs").exists() and not outside.exists()
    for day in ("2024-02-29", "2000-02-29", "2026-12-31"):  # real dates, leap days included
        res = nightly(tmp_path, "unused", day, FAKE_EXIT="0", BOGGLE_RETRIES="0")
        assert res.returncode == 0, (day, res.stderr)


def test_systemd_units_retry_only_transient_codes() -> None:
    service = (SCHEDULE / "boggle-nightly.service").read_text()
    lines = dict(
        line.split("=", 1) for line in service.splitlines() if "=" in line and not line.startswith("#")
    )
    assert lines["Restart"] == "on-failure" and lines["RestartPreventExitStatus"].split() == [
        "1",
        "2",
        "4",
        "6",
        "137",
        "SIGKILL",
    ]
    assert lines["ExecStart"].endswith("configs/schedule/boggle-nightly.sh today")
    assert lines["Environment"] in ("BOGGLE_RETRIES=0", "BOGGLE_RUNS=/data/runs/nightly")
    assert "OnCalendar=*-*-* 02:15" in (SCHEDULE / "boggle-nightly.timer").read_text()
    cron = (SCHEDULE / "boggle-nightly.cron").read_text()
    assert "configs/schedule/boggle-nightly.sh today" in cron


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze")
def test_systemd_units_verify(tmp_path: Path) -> None:
    """systemd itself finds nothing wrong with the units (the script at this checkout's path)."""
    service = (SCHEDULE / "boggle-nightly.service").read_text()
    (tmp_path / "boggle-nightly.service").write_text(
        service.replace("/opt/boggle-pipeline/configs/schedule/", f"{SCHEDULE}/")
    )
    shutil.copy(SCHEDULE / "boggle-nightly.timer", tmp_path)
    res = subprocess.run(
        ["systemd-analyze", "verify", "--man=no", "boggle-nightly.service", "boggle-nightly.timer"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 0 and res.stdout + res.stderr == "", res.stdout + res.stderr


DAG_FILE = SCHEDULE / "airflow_boggle_nightly.py"


def test_airflow_dag_structure() -> None:
    """Airflow 3 import paths, one task, retries only for the transient codes (checked without
    Airflow: its module is parsed, not imported)."""
    tree = ast.parse(DAG_FILE.read_text())
    imports = {
        (node.module, alias.name)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert ("airflow.sdk", "dag") in imports and ("airflow.sdk", "task") in imports
    assert ("airflow.sdk.exceptions", "AirflowFailException") in imports
    assert not any(m and (m.startswith("airflow.operators") or m == "airflow.decorators") for m, _ in imports)
    sets = {
        node.targets[0].id: {elt.value for elt in node.value.args[0].elts}  # type: ignore[attr-defined]
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Call)
        and getattr(node.value.func, "id", "") == "frozenset"
    }
    assert sets == {"DONE": {0, 3}, "RETRYABLE": {5, 130, 143}, "NEEDS_A_PERSON": {1, 2, 4, 6}}
    codes = (REPO / "docs" / "reference" / "exit-codes.md").read_text()
    assert "**5, 130 and 143** are worth retrying as they are" in codes
    assert "**1, 2, 4 and 6** need a person" in codes


def airflow_python() -> str | None:
    """An interpreter with Airflow 3 (a throwaway venv: Airflow is no dependency of ours)."""
    candidate = os.environ.get("BOGGLE_AIRFLOW_PYTHON", "/tmp/airflow-venv/bin/python")
    return candidate if shutil.which(candidate) else None


AIRFLOW_CHECK = """
import sys
from airflow.dag_processing.dagbag import DagBag
from airflow.sdk.exceptions import AirflowException, AirflowFailException
bag = DagBag(dag_folder=sys.argv[1], safe_mode=False)
assert not bag.import_errors, bag.import_errors
dag = bag.dags["boggle_nightly"]
(run,) = dag.tasks
assert run.task_id == "boggle_run" and run.retries == 3, (run.task_id, run.retries)
assert dag.max_active_runs == 1
sys.path.insert(0, sys.argv[2])
import airflow_boggle_nightly as m
for code in (0, 3):
    m.check_exit(code, "s.json")
for code, kind in ((5, AirflowException), (130, AirflowException), (143, AirflowException),
                   (1, AirflowFailException), (2, AirflowFailException), (4, AirflowFailException),
                   (6, AirflowFailException), (9, AirflowFailException)):
    try:
        m.check_exit(code, "s.json")
    except Exception as exc:
        assert type(exc) is kind, (code, type(exc))
    else:
        raise AssertionError(code)
print("ok")
"""


@pytest.mark.integration
@pytest.mark.skipif(airflow_python() is None, reason="no Airflow 3 venv (BOGGLE_AIRFLOW_PYTHON)")
def test_airflow_dagbag_imports_the_dag(tmp_path: Path) -> None:
    python = airflow_python()
    assert python is not None
    env = {**os.environ, "AIRFLOW_HOME": str(tmp_path / "airflow")}
    env.pop("PYTHONPATH", None)
    res = subprocess.run(
        [python, "-c", AIRFLOW_CHECK, str(DAG_FILE), str(SCHEDULE)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0 and res.stdout.strip().endswith("ok"), res.stdout[-2000:] + res.stderr[-2000:]
