"""Progress a log can read: plain timestamped lines (or JSON lines) at a steady interval when
stderr is not a terminal; the progress bar on a terminal."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pipeline.cli import render
from pipeline.cli._options import LogFormatOpt, ProgressIntervalOpt
from tests.conftest import REPO, boggle_command, job_environment, tiny_proof_args

# 2026-12-03T17:58:30Z run: 9,000/20,000 boards (45.0%), 14,793 boards/s, ETA 1.0 s, elapsed 0.6 s
LINE = re.compile(
    r"^(?P<time>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ) run: (?P<event>finished: |stopped: )?"
    r"(?P<done>[\d,]+)/(?P<total>[\d,]+) boards \((?P<percent>[\d.]+)%\), (?P<rate>[\d,.]+|-) boards/s"
    r"(, ETA (?P<eta>[\d.]+ s|\d+ min \d+ s|\d+ h \d+ min|unknown))?, elapsed [^,]+$"
)


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@dataclass
class RunReport:  # the fields of pipeline.runner.Progress the display reads
    boards_done: int
    boards_total: int | None = 1000
    chunks_done: int = 0
    chunks_total: int | None = 10
    boards_reused: int = 0
    rejected: int = 0


def as_int(text: str) -> int:
    return int(text.replace(",", ""))


@pytest.mark.parametrize("log_format", ["text", "json"])
def test_a_run_logged_to_a_file_writes_plain_lines_at_the_interval(tmp_path: Path, log_format: str) -> None:
    log = tmp_path / "stderr.log"
    started = datetime.now(UTC).replace(microsecond=0)
    with log.open("w") as stderr:  # a file: not a terminal
        res = subprocess.run(
            boggle_command(
                "run",
                str(REPO / "configs" / "smoke.toml"),
                "--count",
                "12000",
                "--chunk-size",
                "500",
                "-j",
                "1",
                "-o",
                str(tmp_path / "run"),
                "--progress-interval",
                "0.2",
            ),
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            timeout=300,
            env={**job_environment(), "BOGGLE_LOG_FORMAT": log_format},
        )
    assert res.returncode == 0, log.read_text()
    text = log.read_text(encoding="utf-8")
    assert "\x1b" not in text and "\r" not in text and "━" not in text
    lines = [ln for ln in text.splitlines() if not ln.startswith("note: ")]
    if log_format == "json":
        records = [json.loads(ln) for ln in lines]  # every line is one JSON object
        assert records[0]["event"] == "start" and records[-1]["event"] == "finished"
        assert {r["event"] for r in records[1:-1]} <= {"progress"}
        assert {r["command"] for r in records} == {"run"} and {r["unit"] for r in records} == {"boards"}
        assert all(r["total"] == 12000 for r in records)
        done = [r["done"] for r in records]
        times = [datetime.fromisoformat(r["time"]) for r in records]
        assert records[-1]["percent"] == 100.0 and records[-1]["eta_s"] == 0.0
        # the rate is boards over the seconds they took: no more seconds than have passed
        last = records[-1]
        assert 0 < 12000 / last["rate"] <= last["elapsed_s"] + 0.05
    else:
        matches = [LINE.match(ln) for ln in lines]
        assert all(matches), lines
        parsed = [m.groupdict() for m in matches if m]
        assert parsed[-1]["event"] == "finished: " and all(p["event"] is None for p in parsed[:-1])
        assert all(as_int(p["total"]) == 12000 for p in parsed)
        done = [as_int(p["done"]) for p in parsed]
        times = [datetime.fromisoformat(p["time"].replace("Z", "+00:00")) for p in parsed]
        assert parsed[-1]["percent"] == "100.0"
    assert len(done) >= 3, text  # the first report, at least one tick, the last line
    assert done == sorted(done) and done[-1] == 12000
    assert all(started <= t <= datetime.now(UTC) for t in times)  # UTC
    assert res.stdout.startswith(f"{tmp_path / 'run'}: 12,000 boards in 24 parts")
    # the last line and the summary say the same rate (both: the runner's seconds of solving)
    said = re.search(
        r"12,000 solved in ([\d.]+) s \(([\d,]+) boards/s\), [\d.]+ s in all$", res.stdout.strip()
    )
    assert said, res.stdout
    last_rate = records[-1]["rate"] if log_format == "json" else as_int(parsed[-1]["rate"])
    assert f"{last_rate:,.0f}" == said.group(2)


def test_the_timer_writes_a_line_every_interval_while_nothing_reports() -> None:
    """A chunk that takes minutes still shows the job alive: lines come from the timer, not
    from the reports."""
    log = io.StringIO()
    style = render.LogStyle(interval=0.05, format="json")
    plog = render.ProgressLog("prove", "classes", style, stream=log)
    plog.update(10, 100, best_score=None, hits=0)
    time.sleep(0.4)
    plog.update(30, 100, best_score=90, best_board="rastet", hits=7)
    plog.close()
    records = [json.loads(ln) for ln in log.getvalue().splitlines()]
    assert records[0]["event"] == "start" and records[-1]["event"] == "finished"
    ticks = [r for r in records if r["event"] == "progress"]
    assert len(ticks) >= 3
    assert ticks[0]["done"] == 10 and ticks[0]["rate"] is None and ticks[0]["eta_s"] is None
    last = records[-1]
    assert (last["done"], last["total"], last["percent"]) == (30, 100, 30.0)
    assert (last["best_score"], last["best_board"], last["hits"]) == (90, "rastet", 7)
    # 20 classes done since the first report, over the seconds since: the rate and the ETA agree
    assert last["rate"] == pytest.approx(20 / last["elapsed_s"], rel=0.2)
    assert last["eta_s"] == pytest.approx(70 / last["rate"], rel=0.05)


def test_text_lines_name_the_best_board_and_a_stopped_job(monkeypatch: pytest.MonkeyPatch) -> None:
    log = io.StringIO()
    monkeypatch.setattr(sys, "stderr", log)
    with pytest.raises(KeyboardInterrupt), render.run_progress(render.LogStyle(interval=60)) as update:
        update(RunReport(boards_done=0))
        update(RunReport(boards_done=500, boards_reused=200))
        raise KeyboardInterrupt
    first, last = log.getvalue().splitlines()
    assert first.endswith("run: 0/1,000 boards (0.0%), - boards/s, ETA unknown, elapsed 0.0 s")
    assert re.search(r" run: stopped: 500/1,000 boards \(50\.0%\), [\d,]+ boards/s, elapsed", last)
    log.truncate(0)
    log.seek(0)
    with render.optimize_progress(4, render.LogStyle(interval=60)) as update_o:
        update_o(OptimizeReport())
    first, last = log.getvalue().splitlines()
    assert ", best 3625 perslatgsineters, 2,000 boards scored" in first
    assert " optimize: finished: 1/4 restarts (25.0%)" in last


@dataclass
class OptimizeReport:
    event: str = "done"
    restart: int = 0
    iteration: int = 10
    elapsed: float = 1.0
    evaluations: int = 2000
    restart_best: int = 3625
    best_score: int = 3625
    best_board: str = "perslatgsineters"
    restarts_done: int = 1
    restarts_total: int = 4


def test_a_terminal_still_gets_the_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.delenv("NO_COLOR", raising=False)
    style = render.LogStyle(interval=0.01)
    assert not style.plain()
    with render.run_progress(style) as update:
        update(RunReport(boards_done=400))
        time.sleep(0.05)
    text = term.getvalue()
    assert "solving" in text and "━" in text and "\x1b[" in text  # rich's bar, drawn in place
    assert not re.search(r"\d{4}-\d\d-\d\dT", text)  # no log lines
    # on a terminal, JSON is still JSON: what collectors ask for wherever stderr goes
    assert render.LogStyle(format="json").plain()


def test_analyze_stages_in_a_log_are_timestamped(monkeypatch: pytest.MonkeyPatch) -> None:
    log = io.StringIO()
    monkeypatch.setattr(sys, "stderr", log)
    with render.analyze_progress(False, render.LogStyle(interval=0.05)) as progress:
        progress("aggregating 1 run(s) with DuckDB")
        time.sleep(0.2)
        progress("writing tables")
    lines = log.getvalue().splitlines()
    stamp = r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ analyze: "
    assert all(re.match(stamp, ln) for ln in lines), lines
    assert lines[0].endswith("analyze: aggregating 1 run(s) with DuckDB")
    # each stage times itself: the ticks say how long the stage has lasted, the next stage's line
    # how long it took, the last line the last stage's time
    ticks = [ln for ln in lines[1:-2] if "still aggregating 1 run(s) with DuckDB, for " in ln]
    assert ticks and all(re.search(r", for [\d.]+ s \(elapsed [\d.]+ s\)$", ln) for ln in ticks), lines
    took = re.search(
        r"analyze: writing tables \(aggregating 1 run\(s\) with DuckDB took ([\d.]+) s\)$", lines[-2]
    )
    assert took and 0.2 <= float(took.group(1)) < 5, lines[-2]
    assert re.search(r" analyze: finished in [\d.]+ s \(writing tables took [\d.]+ s\)$", lines[-1])


def test_the_default_interval_is_the_documented_one() -> None:
    import typing

    from pipeline import settings

    option = typing.get_args(ProgressIntervalOpt)[1]
    assert option.envvar == "BOGGLE_PROGRESS_INTERVAL" and render.PROGRESS_INTERVAL == 10.0
    assert settings.env_name("progress_interval") == option.envvar
    assert settings.env_name("log_format") == typing.get_args(LogFormatOpt)[1].envvar
    # the environment page's row (generated from the settings) shows the default in force
    interval = next(f for f in settings.FIELDS if f.name == "progress_interval")
    assert settings.shown_default(interval) == f"{render.PROGRESS_INTERVAL:g}"


def test_prove_and_optimize_logged_to_a_file(tmp_path: Path, tiny_dict: str) -> None:
    """A proof's JSON lines count its classes to the total; a search's text lines count its
    restarts and name the best board; neither writes a control character."""
    log = tmp_path / "prove.log"
    with log.open("w") as stderr:
        res = subprocess.run(
            boggle_command(
                *tiny_proof_args(tiny_dict, tmp_path / "proof"),
                "--chunk-size",
                "1",
                "--log-format",
                "json",
                "--progress-interval",
                "0.2",
            ),
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            timeout=300,
            env=job_environment(),
        )
    assert res.returncode == 0, log.read_text()
    text = log.read_text(encoding="utf-8")
    assert "\x1b" not in text and "\r" not in text
    records = [json.loads(ln) for ln in text.splitlines() if ln.startswith("{")]
    assert records[0]["event"] == "start" and records[-1]["event"] == "finished"
    total = records[-1]["total"]
    assert records[-1]["done"] == total == int(res.stdout.split(", ")[-1].split()[0])  # "..., N classes)"
    assert {r["unit"] for r in records} == {"classes"} and "hits" in records[-1]
    log = tmp_path / "optimize.log"
    with log.open("w") as stderr:
        res = subprocess.run(
            boggle_command(
                "optimize",
                "-d",
                tiny_dict,
                "--shape",
                "3x3",
                "--strategy",
                "hill",
                "--restarts",
                "2",
                "--iterations",
                "3",
                "--pool-size",
                "8",
                "-j",
                "1",
                "-o",
                str(tmp_path / "opt"),
            ),
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            timeout=300,
            env=job_environment(),
        )
    assert res.returncode == 0, log.read_text()
    text = log.read_text(encoding="utf-8")
    assert "\x1b" not in text and "\r" not in text and "┃" not in text and "━" not in text
    best = res.stdout.splitlines()[-1].split()  # BEST <board> <score>
    lines = [ln for ln in text.splitlines() if " optimize: " in ln]
    assert re.match(
        rf"^\S+Z optimize: finished: 2/2 restarts \(100\.0%\), .*, best {best[2]} {best[1]}, ", lines[-1]
    )


def test_the_eta_follows_the_rate_of_the_last_minute(monkeypatch: pytest.MonkeyPatch) -> None:
    """A job that was slow for ten minutes and is fast now: the ETA is what is left over the
    last minute's rate, not over the average since the start; the rate shown is the
    reporter's own (work over its seconds of work, as its summary says)."""
    clock = [1000.0]
    monkeypatch.setattr(time, "perf_counter", lambda: clock[0])
    log = io.StringIO()
    plog = render.ProgressLog("run", "boards", render.LogStyle(interval=3600, format="json"), stream=log)
    plog.update(0, 100_000, work_s=0.0)
    for minute in range(1, 11):  # 100 boards a minute for ten minutes
        clock[0] += 60
        plog.update(100 * minute, 100_000, work_s=60.0 * minute)
    for step in range(1, 7):  # then 6,000 boards a minute (100 a second), reported every 10 s
        clock[0] += 10
        plog.update(1000 + 1000 * step, 100_000, work_s=600 + 10.0 * step)
    r = plog.record("progress")
    assert r["done"] == 7000 and r["rate_recent"] == pytest.approx(100.0)
    assert r["eta_s"] == pytest.approx((100_000 - 7000) / 100.0)  # 15.5 minutes, not 2.6 hours
    assert r["rate"] == pytest.approx(7000 / 660.0, rel=1e-3)  # the average, over the reporter's seconds
    plog.close()
