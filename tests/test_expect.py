"""Expectations on a run's data (``[expect] checks``, ``boggle run --expect``): parsed and spelled
one way, measured on the run's boards with their interval, control limits from the same design's
earlier nights, and a run that breaks one keeps its data, says why in one line, records it in the
manifest and ``--summary-json`` and exits 6."""

from __future__ import annotations

import datetime
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from pipeline import read_run
from pipeline.cli import app
from pipeline.config import ExpectConfig, load_config, parse_expectation
from pipeline.errors import EXIT_BAD_INPUT, EXIT_EXPECTATION, EXIT_OK, ConfigError
from pipeline.runner import run_job
from pipeline.runner._expect import Measures, check, control_limits, earlier_nights
from tests.conftest import read_side_json, write_toml

CLI = CliRunner()


# ---------------------------------------------------------------- what a check says


@pytest.mark.parametrize(
    ("text", "spelled"),
    [
        ("mean_score>=120", "mean_score >= 120"),
        ("  bad_share <  2.5% ", "bad_share < 0.025"),
        ("band_share[tanglet-medium] >= 5%", "band_share[tanglet-medium] >= 0.05"),
        ("band_share[ 200..250 ] > 0.1", "band_share[200..250] > 0.1"),
        ("band_share[..40] <= 1", "band_share[..40] <= 1"),
        ("mean_score within limits", "mean_score within limits"),
        ("bad_share   within   limits", "bad_share within limits"),
    ],
)
def test_a_check_has_one_spelling(text: str, spelled: str) -> None:
    assert parse_expectation(text).text == spelled
    assert parse_expectation(spelled).text == spelled  # the recorded spelling reads back as itself


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("mean_scor >= 1", "unknown metric 'mean_scor'"),
        ("mean_score = 1", "expected METRIC OP NUMBER"),
        ("mean_score >= 5%", "mean_score is in points"),
        ("bad_share <= 2", "a share is from 0 to 1"),
        ("band_share >= 0.1", "names its band"),
        ("bad_share[1..2] >= 0.1", "takes no [BAND]"),
        ("band_share[tanglet-middle] >= 0.1", "band 'tanglet-middle': expected one of tanglet-easy"),
        ("band_share[9..3] >= 0.1", "the lower end is above the upper one"),
        ("mean_score >= 1e999", "finite"),
        ("mean_score >= 1.2.3", "not a number"),
        ("mean_score within", "expected METRIC OP NUMBER"),
    ],
)
def test_a_bad_check_is_refused_naming_it(text: str, why: str) -> None:
    with pytest.raises(ConfigError, match="--expect") as exc:
        parse_expectation(text, "--expect")
    assert why in exc.value.message and exc.value.exit_code == EXIT_BAD_INPUT


def test_checks_live_in_the_config_but_not_in_the_runs_identity(tmp_path: Path) -> None:
    config = write_toml(tmp_path / "c.toml", {"expect": {"checks": ["bad_share<=20%", "mean_score >= 100"]}})
    cfg = load_config(config)
    assert cfg.expect == ExpectConfig(("bad_share <= 0.2", "mean_score >= 100"))
    assert cfg.to_dict()["expect"] == {"checks": ["bad_share <= 0.2", "mean_score >= 100"]}  # recorded
    assert "expect" not in cfg.data_dict()  # not the data: changing them never invalidates a run
    assert load_config(None).data_dict() == cfg.data_dict()
    both = cfg.with_expectations(["mean_score >= 100", "mean_score within limits"])
    assert both.expect.checks == ("bad_share <= 0.2", "mean_score >= 100", "mean_score within limits")
    bad = write_toml(tmp_path / "bad.toml", {"expect": {"checks": ["mean_score => 1"]}})
    with pytest.raises(ConfigError, match=r"\[expect\] checks: 'mean_score => 1'"):
        load_config(bad)
    with pytest.raises(ConfigError, match="unknown key in \\[expect\\] 'check'"):
        load_config(write_toml(tmp_path / "typo.toml", {"expect": {"check": ["mean_score >= 1"]}}))


# ---------------------------------------------------------------- measuring


def _measures(scores: np.ndarray, words: np.ndarray) -> Measures:
    import pyarrow as pa

    m = Measures()
    m.add(pa.table({"score": scores, "n_words": words}))
    return m


def test_values_and_intervals_match_numpy() -> None:
    rng = np.random.default_rng(1)
    scores, words = rng.integers(0, 400, 5000), rng.integers(0, 600, 5000)
    m = _measures(scores, words)
    mean = check(parse_expectation("mean_score >= 150"), m, None)
    se = scores.std(ddof=1) / math.sqrt(len(scores))
    assert mean["value"] == pytest.approx(scores.mean())
    assert (mean["low"], mean["high"]) == pytest.approx(
        (scores.mean() - 1.96 * se, scores.mean() + 1.96 * se), rel=1e-4
    )
    assert mean["met"] is bool(scores.mean() >= 150) and mean["boards"] == 5000
    bad = check(parse_expectation("bad_share <= 1%"), m, None)
    assert bad["value"] == pytest.approx((words < 50).mean()) and bad["met"] is False
    assert bad["low"] < bad["value"] < bad["high"]
    band = check(parse_expectation("band_share[tanglet-medium] > 0"), m, None)
    assert band["value"] == pytest.approx(((words >= 200) & (words <= 250)).mean()) and band["met"] is True
    assert bad["line"].startswith("expectation failed: bad_share <= 0.01: ")
    assert "(95% CI " in bad["line"] and "5,000 boards)" in bad["line"]


def test_control_limits_are_the_earlier_nights_shewhart_chart() -> None:
    """Limits from the earlier nights alone: their pooled mean ± 3 pooled within-night standard
    deviations over sqrt(tonight's boards); a p-chart for a share. A night outside them fails,
    one inside is met, and fewer than two earlier nights leave the check unchecked, not failed."""
    rng = np.random.default_rng(7)
    nights = [_measures(rng.integers(100, 200, 1000), rng.integers(0, 300, 1000)) for _ in range(4)]
    e = parse_expectation("mean_score within limits")
    n = 800
    grand = sum(x.score_sum for x in nights) / sum(x.boards for x in nights)
    pooled = math.sqrt(sum((x.boards - 1) * x.sd**2 for x in nights) / sum(x.boards - 1 for x in nights))
    assert control_limits(e, nights, n) == pytest.approx(
        (grand - 3 * pooled / math.sqrt(n), grand + 3 * pooled / math.sqrt(n))
    )
    inside = check(e, _measures(rng.integers(100, 200, n), rng.integers(0, 300, n)), nights)
    assert inside["met"] is True and inside["nights"] == 4 and "from 4 earlier nights" in inside["line"]
    outside = check(e, _measures(rng.integers(110, 210, n), rng.integers(0, 300, n)), nights)
    assert outside["met"] is False and outside["value"] > outside["limits"][1]
    assert outside["line"].startswith("expectation failed: mean_score within limits: ")
    share = parse_expectation("bad_share within limits")
    p = sum(x.bad for x in nights) / sum(x.boards for x in nights)
    se = math.sqrt(p * (1 - p) / n)
    assert control_limits(share, nights, n) == pytest.approx((p - 3 * se, p + 3 * se))
    alone = check(e, nights[0], nights[:1])
    assert alone["met"] is None and alone["limits"] is None
    assert alone["line"].startswith("expectation not checked: mean_score within limits: ")
    assert "1 earlier night(s)" in alone["line"]


# ---------------------------------------------------------------- a run that breaks one


def _run_args(out: Path, dictionary: str, *more: str) -> list[str]:
    return ["run", "--count", "600", "--chunk-size", "300", "--seed", "3", "-d", dictionary, "-j", "1", "-q",
            "--out", str(out), *more]  # fmt: skip


def test_a_run_that_breaks_an_expectation_keeps_its_data_and_exits_6(
    tmp_path: Path, enable2k_path: str
) -> None:
    out, summary = tmp_path / "run", tmp_path / "summary.json"
    res = CLI.invoke(
        app,
        _run_args(
            out,
            enable2k_path,
            "--expect",
            "mean_score >= 10000",
            "--expect",
            "bad_share <= 100%",
            "--summary-json",
            str(summary),
        ),
    )
    assert res.exit_code == EXIT_EXPECTATION, res.output
    boards = read_run(out, columns=["score", "n_words"]).to_pandas()  # written, certified, readable
    assert len(boards) == 600
    (broken,) = [ln for ln in res.stderr.splitlines() if ln.startswith("expectation")]
    mean = boards["score"].mean()
    assert broken.startswith(f"expectation failed: mean_score >= 10000: {mean:,.2f} (95% CI ")
    assert broken.endswith(", 600 boards)")
    assert "expectation met: bad_share <= 1: " in res.stdout
    manifest = read_side_json(out)
    recorded = {e["check"]: e for e in manifest["expectations"]}
    assert recorded["mean_score >= 10000"]["met"] is False
    assert recorded["mean_score >= 10000"]["value"] == pytest.approx(mean)
    assert recorded["bad_share <= 1"]["value"] == pytest.approx((boards["n_words"] < 50).mean())
    assert manifest["config"]["expect"]["checks"] == ["mean_score >= 10000", "bad_share <= 1"]
    record = json.loads(summary.read_text())
    assert record["exit_code"] == EXIT_EXPECTATION and record["status"] == "complete"
    assert record["message"] == broken and record["expectations"] == manifest["expectations"]
    # the same run asked again with a check it meets: nothing recomputed, exit 0
    again = CLI.invoke(app, _run_args(out, enable2k_path, "--expect", "mean_score >= 1"))
    assert again.exit_code == EXIT_OK, again.output
    assert "already complete" in again.stdout and "expectation met: mean_score >= 1: " in again.stdout
    # and with the broken one again: 6 again
    assert CLI.invoke(app, _run_args(out, enable2k_path, "--expect", "mean_score >= 10000")).exit_code == 6


def test_a_broken_expectation_outranks_rejected_rows(tmp_path: Path, enable2k_path: str) -> None:
    rows = tmp_path / "boards.txt"
    rows.write_text("perslatgsineters\nnot a board\n")
    res = CLI.invoke(
        app,
        [
            "run",
            "-i",
            str(rows),
            "-d",
            enable2k_path,
            "-j",
            "1",
            "-q",
            "--out",
            str(tmp_path / "run"),
            "--expect",
            "mean_score < 100",
        ],
    )
    assert res.exit_code == EXIT_EXPECTATION, res.output
    assert "1 of 2 input rows rejected" in res.stderr
    assert "expectation failed: mean_score < 100: 3,625.00 " in res.stderr


def test_a_bad_check_is_refused_before_anything_is_written(tmp_path: Path, enable2k_path: str) -> None:
    res = CLI.invoke(app, _run_args(tmp_path / "run", enable2k_path, "--expect", "mean >= 1"))
    assert res.exit_code == EXIT_BAD_INPUT and res.stderr.startswith(
        "error: --expect 'mean >= 1': unknown metric"
    )
    assert not (tmp_path / "run").exists()


def test_the_earlier_nights_are_those_of_the_same_design_beside_the_run(
    tmp_path: Path, enable2k_path: str
) -> None:
    """Control limits read the finished runs in the run's parent folder made for earlier dates
    with the same design; a later night, another design (another count) and a run without a
    date are left out."""
    nightly = tmp_path / "nightly"

    def night(day: str, count: int = 300, folder: str | None = None) -> Path:
        values = {
            "boards.count": count,
            "boards.chunk_size": 150,
            "boards.seed": "date",
            "lexicon.path": enable2k_path,
            "run.n_jobs": 1,
            "run.out": str(nightly / (folder or day)),
        }
        run_job(load_config(None, values, day=datetime.date.fromisoformat(day)))
        return nightly / (folder or day)

    for day in ("2026-12-01", "2026-12-02", "2026-12-04"):
        night(day)
    night("2026-12-02", count=450, folder="other-design")
    undated = {"boards.count": 300, "boards.chunk_size": 150, "lexicon.path": enable2k_path,
               "run.n_jobs": 1, "run.out": str(nightly / "undated")}  # fmt: skip
    run_job(load_config(None, undated))
    tonight = night("2026-12-03")
    manifest = read_side_json(tonight)
    found = earlier_nights(tonight, manifest["identity"], "2026-12-03")
    want = [pd.read_parquet(nightly / d, columns=["score"])["score"] for d in ("2026-12-01", "2026-12-02")]
    assert [m.boards for m in found] == [300, 300]
    assert [m.mean for m in found] == pytest.approx([w.mean() for w in want])
    assert earlier_nights(tonight, manifest["identity"], None) == []
    # the same through the command: two earlier nights, so the limits are drawn
    res = CLI.invoke(
        app,
        [
            "run",
            "--count",
            "300",
            "--chunk-size",
            "150",
            "--seed-from-date",
            "2026-12-03",
            "-d",
            enable2k_path,
            "-j",
            "1",
            "-q",
            "--out",
            str(tonight),
            "--expect",
            "mean_score within limits",
        ],
    )
    assert res.exit_code in (EXIT_OK, EXIT_EXPECTATION), res.output
    assert "from 2 earlier nights of this design" in res.output
