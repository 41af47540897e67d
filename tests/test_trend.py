"""Runs over time: nights made by the real nightly script (configs/schedule/boggle-nightly.sh) in
its layout (a folder a night, named by its date), then `boggle analyze` of all of them: a trend
section with one point per night, control limits checked against pandas, a night of another
word list flagged, the layout read by DuckDB and polars with one date column (`run_date`), and a
glob of the folder analysed (the summaries are beside it)."""

from __future__ import annotations

import datetime
import importlib.util
import json
import math
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from tests.conftest import REPO
from tests.test_report_browser import CHROMIUM, DRIVER, browser  # noqa: F401 (a fixture)

SCRIPT = REPO / "configs" / "schedule" / "boggle-nightly.sh"
NIGHTS = [(datetime.date(2026, 12, 1) + datetime.timedelta(days=i)).isoformat() for i in range(7)]
OTHER_NIGHT = "2026-12-08"
BOARDS = 300
ARTIFACTS = REPO / "reports" / "ci-artifacts"


def _boggle(tmp: Path) -> Path:
    exe = tmp / "bin" / "boggle"
    exe.parent.mkdir(exist_ok=True)
    exe.write_text(f'#!/bin/sh\nPYTHONPATH="{REPO}" exec "{sys.executable}" -m pipeline.cli "$@"\n')
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return exe


def _night(tmp: Path, day: str, dictionary: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {
        **os.environ,
        "BOGGLE": str(tmp / "bin" / "boggle"),
        "BOGGLE_RUNS": str(tmp / "nightly"),
        "BOGGLE_CONFIG": str(REPO / "configs" / "schedule" / "nightly.toml"),
        "BOGGLE_RETRIES": "0",
        "BOGGLE_ALERT": "true",
        **env,
    }
    tiny = ["--count", str(BOARDS), "--chunk-size", "150", "-d", dictionary, "-j", "1"]
    return subprocess.run(
        ["sh", str(SCRIPT), day, *tiny], env=environment, cwd=tmp, capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def nights(tmp_path_factory: pytest.TempPathFactory, enable2k_path: str, enable_words: list[str]) -> Path:
    """Seven nights of the nightly design, the last with BOGGLE_TREND_REPORT, and an eighth made
    with another (smaller) word list; returns the folder the script wrote into."""
    tmp = tmp_path_factory.mktemp("trend")
    _boggle(tmp)
    for day in NIGHTS:
        extra = {"BOGGLE_TREND_REPORT": str(tmp / "trend-report")} if day == NIGHTS[-1] else {}
        res = _night(tmp, day, enable2k_path, **extra)
        assert res.returncode == 0, res.stderr
    small = tmp / "small.txt"
    small.write_text("\n".join(w for w in enable_words if len(w) <= 5) + "\n", encoding="utf-8")
    res = _night(tmp, OTHER_NIGHT, str(small))
    assert res.returncode == 0, res.stderr
    return tmp


def _analyze(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(tmp / "bin" / "boggle"), "analyze", *args], cwd=tmp, capture_output=True, text=True, timeout=300
    )


@pytest.mark.integration
def test_nightly_layout_trend_report_and_flags(nights: Path) -> None:
    runs = nights / "nightly"
    assert sorted(p.name for p in runs.iterdir() if not p.name.startswith(".")) == [*NIGHTS, OTHER_NIGHT]
    assert sorted(p.name for p in (runs.parent / "nightly.summaries").iterdir()) == [
        f"{d}.json" for d in [*NIGHTS, OTHER_NIGHT]
    ]

    # the wrapper's BOGGLE_TREND_REPORT: a report over the seven nights made then
    early = pd.read_parquet(nights / "trend-report" / "tables" / "trend.parquet")
    assert early["night"].tolist() == NIGHTS and early["same_design"].all()

    # one date column, run_date, a DATE in every engine (no Hive date= folder adds a second)
    import duckdb

    got = duckdb.sql(
        f"SELECT run_date::VARCHAR AS rd, typeof(run_date) AS t, count(*) AS n "
        f"FROM read_parquet('{runs}/*/*.parquet', hive_partitioning = true) GROUP BY ALL ORDER BY rd"
    ).fetchall()
    assert got == [(d, "DATE", BOARDS) for d in [*NIGHTS, OTHER_NIGHT]]
    if importlib.util.find_spec("polars") is not None:  # an optional extra (boggle-pipeline[polars])
        import polars as pl

        scan = pl.scan_parquet(runs)  # the folder as it is
        assert [c for c in scan.collect_schema() if "date" in c] == ["run_date"]
        dates = scan.select("run_date").unique().collect()["run_date"].to_list()
        assert sorted(d.isoformat() for d in dates) == [*NIGHTS, OTHER_NIGHT]

    # a glob of the folder (the shell's `nightly/*`: the summaries are beside it, not in it)
    res = subprocess.run(
        ["sh", "-c", "bin/boggle analyze nightly/* --out report -q"],
        cwd=nights,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr
    trend = pd.read_parquet(nights / "report" / "tables" / "trend.parquet")
    assert trend["night"].tolist() == [*NIGHTS, OTHER_NIGHT]  # one point per night, in date order
    assert trend["run"].tolist()[:7] == [f"new dice · enable2k · {d}" for d in NIGHTS]

    # per-night means and bad shares against pandas, read straight from the parts
    boards = pd.concat(
        pd.read_parquet(p, columns=["score", "n_words", "run_date"])
        for p in sorted(runs.glob("*/part-*.parquet"))
    )
    boards["night"] = boards["run_date"].astype(str)
    by = boards.groupby("night")
    want = pd.DataFrame(
        {
            "mean": by["score"].mean(),
            "var": by["score"].var(ddof=1),
            "bad": by["n_words"].apply(lambda s: int((s < 50).sum())),
            "n": by.size(),
        }
    )
    t = trend.set_index("night")
    for day in [*NIGHTS, OTHER_NIGHT]:
        assert t.at[day, "boards"] == want.at[day, "n"] == BOARDS
        assert t.at[day, "score_mean"] == pytest.approx(want.at[day, "mean"], rel=1e-12)
        assert t.at[day, "bad"] == want.at[day, "bad"]
        half = 1.959963984540054 * math.sqrt(want.at[day, "var"] / BOARDS)
        assert t.at[day, "score_high"] - t.at[day, "score_mean"] == pytest.approx(half, rel=1e-9)
    # control limits: the pooled mean of the seven nights' boards ± 3 pooled SE of a night
    ref = want.loc[NIGHTS]
    grand = float((ref["mean"] * ref["n"]).sum() / ref["n"].sum())
    s = math.sqrt(float(((ref["n"] - 1) * ref["var"]).sum() / (ref["n"] - 1).sum()))
    assert t.loc[NIGHTS, "score_ucl"].tolist() == pytest.approx([grand + 3 * s / math.sqrt(BOARDS)] * 7)
    assert t.loc[NIGHTS, "score_lcl"].tolist() == pytest.approx([grand - 3 * s / math.sqrt(BOARDS)] * 7)
    p = float(ref["bad"].sum() / ref["n"].sum())
    assert t.at[NIGHTS[0], "bad_ucl"] == pytest.approx(p + 3 * math.sqrt(p * (1 - p) / BOARDS))
    for day in NIGHTS:  # a flag exactly when a night is outside its limits
        outside = not (t.at[day, "score_lcl"] <= t.at[day, "score_mean"] <= t.at[day, "score_ucl"]) or not (
            t.at[day, "bad_lcl"] <= t.at[day, "bad_share"] <= t.at[day, "bad_ucl"]
        )
        assert bool(t.at[day, "flag"]) == outside

    # the night of another word list: flagged, named in a verdict, out of the limits
    assert not t.at[OTHER_NIGHT, "same_design"]
    assert "word list small.txt, not enable2k" in t.at[OTHER_NIGHT, "flag"]
    html = (nights / "report" / "report.html").read_text()
    assert 'id="trend"' in html and 'data-plot="trend.png"' in html
    assert f"{OTHER_NIGHT} was made with another design (word list small.txt, not enable2k)" in html
    assert "Shewhart" in html  # the method section states the limits
    assert f"<h1>Board quality: new dice · enable2k, 8 nights from {NIGHTS[0]} to {OTHER_NIGHT}</h1>" in html

    # a file is no run directory: one line, exit 2, nothing skipped
    res = _analyze(
        nights, str(runs / "2026-12-01"), str(runs.parent / "nightly.summaries" / "2026-12-01.json")
    )
    assert res.returncode == 2 and res.stderr.strip().splitlines() == [
        f"error: {runs.parent / 'nightly.summaries' / '2026-12-01.json'}: not a run directory (a file); "
        "give run folders, such as 'nightly/*/'"
    ]
    summary = json.loads((runs.parent / "nightly.summaries" / f"{OTHER_NIGHT}.json").read_text())
    assert summary["status"] == "complete"


@pytest.mark.integration
@pytest.mark.skipif(CHROMIUM is None or DRIVER is None, reason="no Chromium + chromedriver")
def test_trend_section_screenshot(nights: Path, browser) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    """The trend section in headless Chromium, saved to reports/ci-artifacts/ (gitignored)."""
    from selenium.webdriver.common.by import By

    report = nights / "report" / "report.html"
    if not report.exists():
        res = _analyze(
            nights,
            *sorted(str(p) for p in (nights / "nightly").glob("2026-*")),
            "--out",
            str(nights / "report"),
            "-q",
        )
        assert res.returncode == 0, res.stderr
    browser.get(report.resolve().as_uri())
    section = browser.find_element(By.ID, "trend")
    browser.execute_script("arguments[0].scrollIntoView()", section)
    rows = browser.execute_script("return document.querySelectorAll('#trend table tbody tr').length")
    assert rows == len(NIGHTS) + 1
    assert browser.execute_script("return document.querySelector('#plot-trend img').naturalWidth") > 0
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    section.screenshot(str(ARTIFACTS / "report-trend.png"))
    assert (ARTIFACTS / "report-trend.png").stat().st_size > 0


def _night_run(day: str | None, label: str, *, lexicon_hash: str = "aa" * 32, name: str = "enable2k") -> Any:
    from pipeline.analyze._runs import RunInfo

    boards = {"source": "generate", "dice": "new", "count": 200, "seed": hash(day) % 1000, "seed_date": day}
    manifest = {
        "identity": {
            "schema_version": 5,
            "lexicon_sha256": lexicon_hash,
            "data": {"boards": boards, "lexicon": {"path": name}, "rules": {"name": "boggle"}},
        },
        "config": {"boards": boards},
        "run_date": day,
        "lexicon": {"name": name, "content_hash": lexicon_hash},
        "counts": {"boards": 200},
    }
    return RunInfo(label, Path(label), manifest, ())


def test_trend_table_against_numpy() -> None:
    """Five nights (one shifted up, one of another word list) and an undated run: the table's
    means, intervals, pooled limits and flags against a direct numpy computation."""
    import numpy as np

    from pipeline.analyze._gather import Gathered
    from pipeline.analyze._provenance import describe, differing_labels
    from pipeline.analyze._trend import trend_table, verdict_lines
    from pipeline.stats import RunStats, StatsSpec

    rng = np.random.default_rng(3)
    days = ["2026-12-03", "2026-12-01", "2026-12-02", "2026-12-04", "2026-12-05"]
    runs = [_night_run(d, f"r{i}") for i, d in enumerate(days)]
    runs[4] = _night_run(days[4], "r4", lexicon_hash="bb" * 32, name="small.txt")
    runs.append(_night_run(None, "undated"))
    frames = []
    for r in runs:
        shift = 15 if r.label == "r3" else 0  # 2026-12-04: far above the others
        score = rng.normal(100 + shift, 30, 200).round().astype(int)
        frames.append(pd.DataFrame({"run": r.label, "score": score, "n_words": score // 2}))
    boards = pd.concat(frames)

    def night(r: Any) -> Gathered:
        rs = RunStats(StatsSpec())
        score = boards.loc[boards["run"] == r.label, "score"].to_numpy()
        rs.values = {"score": {"s": np.bincount(score)}}
        return Gathered(r, rs, None, "", "")

    nights = [night(r) for r in runs]
    bad = boards.assign(b=boards["n_words"] < 50).groupby("run", sort=False)["b"].sum()
    share = pd.DataFrame({"run": bad.index, "bad": bad.to_numpy().astype(int)})
    t = trend_table(nights, share).set_index("night")
    assert t.index.tolist() == sorted(days)  # date order; the undated run is no night
    same = [d for d in sorted(days) if d != days[4]]
    assert t.loc[same, "same_design"].all() and not t.at[days[4], "same_design"]
    by = {r.label: boards[boards["run"] == r.label] for r in runs}
    label = {d: f"r{i}" for i, d in enumerate(days)}
    for d in sorted(days):
        s = by[label[d]]["score"].to_numpy(float)
        assert t.at[d, "score_mean"] == pytest.approx(s.mean())
        assert t.at[d, "score_high"] - t.at[d, "score_mean"] == pytest.approx(
            1.959964 * s.std(ddof=1) / np.sqrt(200)
        )
    ref = [by[label[d]]["score"].to_numpy(float) for d in same]
    grand = np.concatenate(ref).mean()
    pooled = np.sqrt(sum(((x - x.mean()) ** 2).sum() for x in ref) / sum(len(x) - 1 for x in ref))
    assert t.at[same[0], "score_ucl"] == pytest.approx(grand + 3 * pooled / np.sqrt(200))
    assert np.isnan(t.at[days[4], "score_ucl"])  # no limits for another design
    p = sum(int((by[label[d]]["n_words"] < 50).sum()) for d in same) / (200 * len(same))
    for d in same:  # flagged exactly when outside the limits computed here
        x, k = by[label[d]]["score"].mean(), (by[label[d]]["n_words"] < 50).mean()
        outside = abs(x - grand) > 3 * pooled / np.sqrt(200) or abs(k - p) > 3 * np.sqrt(p * (1 - p) / 200)
        assert bool(t.at[d, "flag"]) == outside, d
    assert t.at["2026-12-04", "flag"].startswith("mean score above the upper limit")
    assert "word list small.txt, not enable2k" in t.at[days[4], "flag"]
    lines = verdict_lines(t.reset_index())
    assert any(x.startswith("2026-12-04 is outside the control limits") for x in lines)
    assert any(x.startswith("2026-12-05 was made with another design") for x in lines)
    # two dated runs of two designs are a comparison: no trend
    assert trend_table([nights[1], nights[4]], share).empty
    # nights of one design are labelled by date, not by seed
    labels = differing_labels([describe(r.manifest) for r in runs[:4]])
    assert labels == days[:4]


def test_the_trend_report_of_the_script_reads_finished_nights_only(tmp_path: Path) -> None:
    """BOGGLE_TREND_REPORT after a night that succeeded: `boggle analyze` of the finished nights
    (an unfinished one named on stderr, not passed: it would fail the whole report); a failed
    night or a failed report leaves the exit code of the night."""
    fake = tmp_path / "bin" / "boggle"
    fake.parent.mkdir()
    fake.write_text(
        f'#!/bin/sh\necho "$@" >> "{tmp_path}/calls.txt"\n'
        'case $1 in analyze) exit "${FAKE_ANALYZE:-0}" ;; esac\nexit "${FAKE_EXIT:-0}"\n'
    )
    fake.chmod(0o755)
    runs = tmp_path / "nightly"
    (runs / "2026-11-28").mkdir(parents=True)
    (runs / "2026-11-28" / "_SUCCESS").write_text("{}")  # a run of schema 5: a plain manifest
    (runs / "2026-11-29").mkdir(parents=True)
    (runs / "2026-11-29" / "_SUCCESS.parquet").write_text("{}")  # schema 6: packed
    (runs / "2026-11-30").mkdir()  # a night that never finished
    (runs / "notes").mkdir()  # not a night: not in the report
    env = {
        **os.environ,
        "BOGGLE": str(fake),
        "BOGGLE_RUNS": str(runs),
        "BOGGLE_CONFIG": "nightly.toml",
        "BOGGLE_RETRIES": "0",
        "BOGGLE_ALERT": "true",
        "BOGGLE_TREND_REPORT": str(tmp_path / "rep"),
    }

    def night(**more: str) -> subprocess.CompletedProcess[str]:
        (tmp_path / "calls.txt").unlink(missing_ok=True)
        return subprocess.run(
            ["sh", str(SCRIPT), "2026-12-01"], env={**env, **more}, capture_output=True, text=True, timeout=60
        )

    res = night()
    assert res.returncode == 0, res.stderr
    calls = (tmp_path / "calls.txt").read_text().splitlines()
    assert calls[0].startswith(
        "run nightly.toml --seed-from-date 2026-12-01 --out " + str(runs / "2026-12-01")
    )
    assert calls[1] == f"analyze {runs}/2026-11-28/ {runs}/2026-11-29/ --out {tmp_path / 'rep'} --quiet"
    assert res.stderr.splitlines() == [
        f"boggle-nightly: trend report: {runs}/2026-11-30/ is unfinished, left out"
    ]
    res = night(FAKE_ANALYZE="2")  # the report fails: said, and the night still succeeded
    assert res.returncode == 0 and "the trend report in" in res.stderr
    res = night(FAKE_EXIT="4")  # the night failed: no report
    assert res.returncode == 4 and len((tmp_path / "calls.txt").read_text().splitlines()) == 1
