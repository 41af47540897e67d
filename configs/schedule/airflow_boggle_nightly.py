"""Airflow 3 DAG: one boggle run a day, with new boards each day, retried only when a re-run can
fix the failure (loaded by Airflow 3.3.2's DagBag in tests/test_schedule.py). Copy it into the
DAG folder; set BOGGLE, BOGGLE_CONFIG and BOGGLE_RUNS below (or in the workers' environment).

Each DAG run passes its logical date (``ds``) to ``boggle run --seed-from-date``: the seed and
the run directory (``RUNS/<ds>``) both derive from it, so a retry or a backfill of a day rolls
that day's boards again and resumes that day's run; a new day is a new run.

Exit codes (docs/reference/exit-codes.md): 0 done; 3 done with rejected rows (success, logged); 5 (I/O
failure, a dead worker), 130 (interrupted) and 143 (SIGTERM) are transient: the task fails and
Airflow retries it (the re-run resumes); 1 (a bug), 2 (bad input or config), 4 (a busy, foreign
or damaged output directory) and 6 (the data is written but breaks an expectation, ``[expect]``:
a retry would measure the same boards) need a person: the task fails with AirflowFailException,
which Airflow never retries. (BashOperator cannot tell them apart: it retries every non-zero exit.)
"""

from __future__ import annotations

import datetime
import json
import os
import subprocess

from airflow.sdk import dag, get_current_context, task

try:  # where Airflow 3.3 wants them (airflow.exceptions' names are deprecated there)
    from airflow.sdk.exceptions import AirflowException, AirflowFailException
except ImportError:  # earlier 3.x releases
    from airflow.exceptions import AirflowException, AirflowFailException  # type: ignore[no-redef]

BOGGLE = os.environ.get("BOGGLE", "/opt/boggle-pipeline/.venv/bin/boggle")
BOGGLE_CONFIG = os.environ.get("BOGGLE_CONFIG", "/opt/boggle-pipeline/configs/schedule/nightly.toml")
BOGGLE_RUNS = os.environ.get("BOGGLE_RUNS", "/data/runs/nightly")

DONE = frozenset({0, 3})
RETRYABLE = frozenset({5, 130, 143})  # a re-run resumes where the run stopped
NEEDS_A_PERSON = frozenset({1, 2, 4, 6})  # and any code not listed


def check_exit(code: int, summary: str) -> None:
    """Return for a finished run; raise what makes Airflow retry (transient) or not (a person)."""
    if code in DONE:
        return
    text = f"boggle run exited {code}; see {summary}"
    if code in RETRYABLE:
        raise AirflowException(text + " (transient: retried, the retry resumes)")
    raise AirflowFailException(text + " (needs a person: not retried)")


@dag(
    dag_id="boggle_nightly",
    schedule="15 2 * * *",
    start_date=datetime.datetime(2026, 12, 1, tzinfo=datetime.UTC),
    catchup=False,
    max_active_runs=1,  # two days never write at once (a second run on one directory exits 4)
    default_args={"retries": 3, "retry_delay": datetime.timedelta(minutes=10)},
    tags=["boggle"],
)
def boggle_nightly() -> None:
    @task
    def boggle_run() -> dict[str, object]:
        context = get_current_context()
        day = str(context.get("ds") or datetime.date.today().isoformat())  # a manual run has no ds
        # --summary-json writes only into a folder that exists; RUNS.summaries/ is beside RUNS,
        # which stays a folder of nothing but runs (every engine reads it as Parquet)
        os.makedirs(BOGGLE_RUNS.rstrip("/") + ".summaries", exist_ok=True)
        summary = os.path.join(BOGGLE_RUNS.rstrip("/") + ".summaries", f"{day}.json")
        command = [
            BOGGLE, "run", BOGGLE_CONFIG, "--seed-from-date", day, "--out", os.path.join(BOGGLE_RUNS, day),
            "--quiet", "--summary-json", summary,
        ]  # fmt: skip
        code = subprocess.run(command, check=False).returncode
        check_exit(code, summary)
        with open(summary, encoding="utf-8") as fh:
            return dict(json.load(fh))  # the record, as the task's XCom

    boggle_run()


boggle_nightly()
