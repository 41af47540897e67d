"""``boggle select``: the boards to serve. Every filter is checked against an independent
computation: each board re-solved by the plain-Python reference solver (words, score, dead
cells) and its common words counted with wordfreq directly."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from pipeline.analyze._inference import Z95, wilson
from pipeline.analyze._select import (
    POOL_COLUMNS,
    PRESETS,
    Band,
    Filters,
    grid_strings,
    parse_range,
    select_boards,
)
from pipeline.cli import app
from pipeline.errors import BoggleError
from tests.conftest import REPO, one_error_line, run_boggle, run_config

COMMON = 3.6  # the report's threshold, restated: a change to it must be a deliberate one


@pytest.fixture(scope="module")
def solved_run(tmp_path_factory: pytest.TempPathFactory, enable2k_path: str) -> Path:
    """150 new-dice boards with ENABLE2K, in 3 parts."""
    from pipeline.runner import execute

    out = tmp_path_factory.mktemp("select") / "new"
    execute(run_config(enable2k_path, out, count=150, chunk_size=50, dice="new"))
    return out


@pytest.fixture(scope="module")
def truth(solved_run: Path, enable_lexicon: Any) -> pd.DataFrame:
    """Every board of the run re-solved by the reference solver, with its common words counted
    by wordfreq's own zipf_frequency."""
    import wordfreq

    from pipeline.boards import parse_compact
    from pipeline.solve._reference import ReferenceSolver

    stored = pd.concat([pd.read_parquet(p) for p in sorted(solved_run.glob("part-*.parquet"))])
    stored = stored.sort_values("board_id").reset_index(drop=True)
    ref = ReferenceSolver(enable_lexicon.words, enable_lexicon.rules)
    rows = []
    for rec in stored.to_dict("records"):
        res = ref.solve(parse_compact(rec["board"], (4, 4)))
        assert sorted(res.words) == list(rec["words"])  # the run stores what the reference finds
        common = sum(wordfreq.zipf_frequency(w, "en") >= COMMON for w in res.words)
        rows.append(
            {
                "board_id": rec["board_id"],
                "board": rec["board"],
                "n_words": res.n_words,
                "score": res.score,
                "dead": res.dead_cells,
                "common": common,
                "words": sorted(res.words),
                "seed": rec["seed"],
                "run_id": rec["run_id"],
            }
        )
    return pd.DataFrame(rows)


def passes(
    t: pd.DataFrame,
    *,
    words: tuple[int, int] | None = None,
    score: tuple[int, int] | None = None,
    no_dead: bool = False,
    min_common: int | None = None,
    max_obscure: float | None = None,
) -> pd.Series:
    ok = pd.Series(True, index=t.index)
    if words is not None:
        ok &= t["n_words"].between(*words)
    if score is not None:
        ok &= t["score"].between(*score)
    if no_dead:
        ok &= t["dead"] == 0
    if min_common is not None:
        ok &= t["common"] >= min_common
    if max_obscure is not None:
        ok &= (t["n_words"] > 0) & ((t["n_words"] - t["common"]) / t["n_words"].clip(lower=1) <= max_obscure)
    return ok


FILTERS = {"words": (40, 140), "score": (30, 220), "no_dead": True, "min_common": 20, "max_obscure": 0.68}


def test_every_pooled_board_passes_every_filter_and_no_other_board_is_there(
    solved_run: Path, truth: pd.DataFrame, tmp_path: Path
) -> None:
    out = tmp_path / "pool.parquet"
    f = Filters(
        bands=(Band("mid", 40, 140),),
        score=(30, 220),
        no_dead_cells=True,
        min_common_words=20,
        max_obscure=0.68,
    )
    res = select_boards([solved_run], out, f)
    want = truth[passes(truth, **FILTERS)]  # type: ignore[arg-type]
    # each filter rejects some board the others let through, so each one is exercised
    for name in FILTERS:
        others = {k: v for k, v in FILTERS.items() if k != name}
        assert len(truth[passes(truth, **others)]) > len(want), name  # type: ignore[arg-type]
    assert 0 < len(want) < len(truth)
    pool = pd.read_parquet(out)
    assert list(pool.columns) == list(POOL_COLUMNS)
    assert pool["board_id"].tolist() == want["board_id"].tolist()  # run order, then board order
    assert pool["board"].tolist() == want["board"].tolist()
    assert pool["n_words"].tolist() == want["n_words"].tolist()
    assert pool["score"].tolist() == want["score"].tolist()
    assert (pool["dead_cells"] == 0).all()
    assert [list(w) for w in pool["words"]] == want["words"].tolist()
    assert pool["grid"].tolist() == grid_strings(pool["board"], pool["rows"], pool["cols"])
    assert set(pool["band"]) == {"mid"}
    assert pool["seed"].tolist() == want["seed"].astype(str).tolist()
    assert pool["run_id"].tolist() == want["run_id"].astype(str).tolist()
    assert pool["source"].eq("new").all() and pool["lexicon_hash"].str.len().eq(12).all()
    assert res.written == res.selected == len(want)
    (run,) = res.runs
    assert (run.boards, run.selected) == (len(truth), len(want))
    assert run.share.estimate == pytest.approx(len(want) / len(truth))


def test_the_pool_reads_back_in_duckdb_and_as_csv(
    solved_run: Path, truth: pd.DataFrame, tmp_path: Path
) -> None:
    import duckdb

    f = Filters(bands=(Band("b", 40, None),), no_dead_cells=True)
    select_boards([solved_run], tmp_path / "pool.parquet", f)
    select_boards([solved_run], tmp_path / "pool.csv", f)
    want = truth[passes(truth, words=(40, 10**9), no_dead=True)]
    n, total, words = (
        duckdb.connect()
        .execute(
            "SELECT count(*), sum(score), sum(len(words)) FROM read_parquet(?)",
            [str(tmp_path / "pool.parquet")],
        )
        .fetchone()
    )  # type: ignore[misc]
    assert (n, total, words) == (len(want), want["score"].sum(), want["n_words"].sum())
    csv = pd.read_csv(tmp_path / "pool.csv", dtype={"seed": str})
    assert list(csv.columns) == list(POOL_COLUMNS)
    assert csv["board_id"].tolist() == want["board_id"].tolist()
    assert [w.split() for w in csv["words"]] == want["words"].tolist()
    assert csv["grid"].str.count("/").eq(3).all()


def test_the_same_inputs_give_byte_identical_files(solved_run: Path, tmp_path: Path) -> None:
    f = Filters(bands=(PRESETS["tanglet-easy"], Band("words 60..", 60, None)), limit=40)
    for ext in ("parquet", "csv"):
        a, b = tmp_path / f"a.{ext}", tmp_path / f"b.{ext}"
        select_boards([solved_run, solved_run], a, f)
        select_boards([solved_run, solved_run], b, f)
        assert a.read_bytes() == b.read_bytes()
    assert not list(tmp_path.glob(".*tmp"))  # written atomically: no temporary left


def test_limit_keeps_the_first_boards_in_run_order(
    solved_run: Path, truth: pd.DataFrame, tmp_path: Path
) -> None:
    f = Filters(bands=(Band("b", 30, None),))
    full = select_boards([solved_run, solved_run], tmp_path / "all.parquet", f)
    want = truth[passes(truth, words=(30, 10**9))]
    assert full.written == 2 * len(want)  # the second run follows the first
    cut = select_boards(
        [solved_run, solved_run], tmp_path / "cut.parquet", Filters(f.bands, limit=len(want) + 3)
    )
    pool = pd.read_parquet(tmp_path / "cut.parquet")
    assert pool["board_id"].tolist() == [*want["board_id"], *want["board_id"][:3]]
    assert cut.selected == full.selected and cut.written == len(want) + 3
    assert [r.selected for r in cut.runs] == [len(want), len(want)]  # counted before the limit


def test_bands_count_boards_with_wilson_intervals(
    solved_run: Path, truth: pd.DataFrame, tmp_path: Path
) -> None:
    bands = (Band("low", None, 60), Band("high", 61, 200), Band("overlap", 50, 70))
    res = select_boards([solved_run], tmp_path / "p.parquet", Filters(bands=bands, no_dead_cells=True))
    alive = truth["dead"] == 0
    low = alive & truth["n_words"].le(60)
    high = alive & truth["n_words"].between(61, 200)
    # a board in two bands counts in the first given
    overlap = alive & truth["n_words"].between(50, 70) & ~low & ~high
    got = {b.band: b.selected for b in res.runs[0].bands}
    assert got == {"low": low.sum(), "high": high.sum(), "overlap": overlap.sum()}
    for b in res.runs[0].bands:
        iv, k, n = b.share, b.selected, len(truth)
        assert iv.estimate == pytest.approx(k / n)
        # the Wilson bounds are the shares p0 for which the estimate lies exactly z standard errors away
        for p0 in (iv.low, iv.high):
            if 0 < p0 < 1:
                assert (k / n - p0) ** 2 == pytest.approx(Z95**2 * p0 * (1 - p0) / n)
    pool = pd.read_parquet(tmp_path / "p.parquet")
    assert pool["band"].value_counts().to_dict() == {k: v for k, v in got.items() if v}


def test_wilson_covers_a_rare_share_about_95_percent_of_the_time() -> None:
    rng = np.random.default_rng(3)
    n, p = 400, 0.02
    ks = rng.binomial(n, p, size=2000)
    covered = np.mean([wilson(int(k), n).low <= p <= wilson(int(k), n).high for k in ks])
    assert 0.93 <= covered <= 0.975
    assert wilson(0, 50).low == 0.0 and wilson(50, 50).high == 1.0
    assert math.isnan(wilson(0, 0).estimate)


def test_presets_are_tanglets_bands_and_the_cli_knows_them() -> None:
    from pipeline.cli._options import ServePreset

    assert {k: (b.lo, b.hi) for k, b in PRESETS.items()} == {
        "tanglet-easy": (32, 42),
        "tanglet-medium": (200, 250),
        "tanglet-hard": (425, 525),
    }
    assert [p.value for p in ServePreset] == list(PRESETS)


@pytest.mark.parametrize(
    ("text", "want"),
    [("200..250", (200, 250)), (" 3 .. 5 ", (3, 5)), ("10..", (10, None)), ("..9", (None, 9))],
)
def test_band_syntax(text: str, want: tuple[int | None, int | None]) -> None:
    assert parse_range(text, "--words") == want


@pytest.mark.parametrize("text", ["3-5", "abc", "..", "9..1", "1.5..3", ""])
def test_bad_band_syntax_is_refused(text: str) -> None:
    with pytest.raises(BoggleError, match="--words"):
        parse_range(text, "--words")


def test_grid_strings_keep_multi_letter_faces() -> None:
    assert grid_strings(["[qu][th]ab", "abcdef"], [2, 2], [2, 3]) == ["[qu][th]/ab", "abc/def"]
    # a board of schema 5 (Qu written q) reads the same
    assert grid_strings(["q[th]ab"], [2], [2]) == ["[qu][th]/ab"]


def test_pools_of_runs_of_both_schemas_write_one_notation(tmp_path: Path) -> None:
    """A run of schema 5 wrote the Qu cell ``q``; the pool writes it as every output does,
    ``[qu]``, so pools of old and new runs share one board notation."""
    old = REPO / "tests" / "data" / "schema5" / "nightly" / "date=2026-12-01"
    out = tmp_path / "pool.parquet"
    select_boards([str(old)], out, Filters())
    pool = pd.read_parquet(out)
    raw = pd.read_parquet(old, columns=["board"])["board"]
    assert raw.str.contains("q").any() and not raw.str.contains(r"\[qu\]").any()
    assert pool["board"].str.contains(r"\[qu\]").any() and not pool["board"].str.contains(r"q(?!u\])").any()
    assert len(pool) == len(raw)


# ---------------------------------------------------------------- the command


def test_cli_prints_shares_per_run_and_band(solved_run: Path, truth: pd.DataFrame, tmp_path: Path) -> None:
    out = tmp_path / "pool.csv"
    summary = tmp_path / "s.json"
    res = CliRunner().invoke(
        app,
        [
            "select",
            str(solved_run),
            "--words",
            "40..80",
            "--score",
            "..90",
            "--out",
            str(out),
            "--summary-json",
            str(summary),
        ],
    )
    assert res.exit_code == 0, res.output
    k = int(passes(truth, words=(40, 80), score=(0, 90)).sum())
    in_band = int(passes(truth, words=(40, 80)).sum())
    n = len(truth)
    assert k < in_band  # the score filter costs boards, so the two counts must not be confused
    iv = wilson(k, n)
    lines = res.output.splitlines()
    # the count after each filter, in the order applied, then every filter on the last line
    assert lines[:4] == [
        f"new: {n:,} boards",
        f"  words 40..80: {in_band:,} ({in_band / n:.2%})",
        f"  score ..90: {k:,} ({k / n:.2%})",
        f"  all filters: {k:,} of {n:,} boards ({k / n:.2%}, 95% CI {iv.low:.2%}-{iv.high:.2%}); "
        f"a run of 100,000 boards yields about {k / n * 100_000:,.0f} "
        f"({iv.low * 100_000:,.0f}-{iv.high * 100_000:,.0f})",
    ]
    assert f"pool: {k:,} boards written to {out}" in res.output
    rec = json.loads(summary.read_text())
    assert rec["status"] == "complete" and rec["exit_code"] == 0 and rec["boards"] == k
    assert rec["runs"][0]["selected"] == k and rec["runs"][0]["share_low"] == pytest.approx(iv.low)
    assert rec["runs"][0]["bands"][0]["band"] == "words 40..80"
    steps = rec["runs"][0]["steps"]
    assert [(s["filter"], s["label"], s["selected"]) for s in steps] == [
        ("words", "words 40..80", in_band),
        ("score", "score ..90", k),
    ]
    assert steps[0]["share"] == pytest.approx(in_band / n)
    assert rec["filters"]["score"] == "..90"


def test_each_filter_counts_what_is_left_after_it_in_the_order_applied(
    solved_run: Path, truth: pd.DataFrame, tmp_path: Path
) -> None:
    """The attrition: every filter given, the count after each against the truth, cumulative."""
    f = Filters(
        bands=(Band("mid", 40, 140),),
        score=(30, 220),
        no_dead_cells=True,
        min_common_words=20,
        max_obscure=0.68,
    )
    res = select_boards([solved_run], tmp_path / "p.parquet", f)
    (run,) = res.runs
    order = ["words", "score", "no_dead", "min_common", "max_obscure"]
    want = [int(passes(truth, **{k: FILTERS[k] for k in order[: i + 1]}).sum()) for i in range(len(order))]  # type: ignore[arg-type]
    assert [s.kept for s in run.steps] == want
    assert len(set(want)) == len(want)  # each step removes boards: a wrong order would show
    assert [s.key for s in run.steps] == ["words", "score", "dead_cells", "common_words", "obscure_share"]
    assert [s.label for s in run.steps] == [
        "mid (40..140 words)",
        "score 30..220",
        "no dead cells",
        "at least 20 common words",
        "at most 68% obscure words",
    ]
    assert run.steps[-1].kept == run.selected
    assert all(s.share.estimate == pytest.approx(s.kept / len(truth)) for s in run.steps)


def test_several_bands_are_one_step_and_each_band_is_counted_after_every_filter(
    solved_run: Path, truth: pd.DataFrame, tmp_path: Path
) -> None:
    out = tmp_path / "pool.parquet"
    args = ["--preset", "tanglet-easy", "--words", "60..90", "--no-dead-cells", "--out", str(out)]
    res = CliRunner().invoke(app, ["select", str(solved_run), *args])
    assert res.exit_code == 0, res.output
    easy, mid = truth["n_words"].between(32, 42), truth["n_words"].between(60, 90)
    alive = truth["dead"] == 0
    n = len(truth)
    lines = res.output.splitlines()
    banded, kept = int((easy | mid).sum()), int(((easy | mid) & alive).sum())
    assert banded > kept > 0
    assert lines[1] == f"  words in a band (tanglet-easy 32..42, words 60..90): {banded:,} ({banded / n:.2%})"
    assert lines[2] == f"  no dead cells: {kept:,} ({kept / n:.2%})"
    assert lines[3].startswith(f"  all filters: {kept:,} of {n:,} boards")
    assert lines[4].startswith(f"    tanglet-easy (32..42 words): {(easy & alive).sum():,} of {n:,} boards")
    assert lines[5].startswith(f"    words 60..90: {(mid & ~easy & alive).sum():,} of {n:,} boards")


def test_no_filter_is_labelled_as_such(solved_run: Path, truth: pd.DataFrame, tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["select", str(solved_run), "--out", str(tmp_path / "all.csv")])
    assert res.exit_code == 0, res.output
    n = len(truth)
    assert res.output.splitlines()[:2] == [
        f"new: {n:,} boards",
        f"  no filters: {n:,} of {n:,} boards (100.00%, 95% CI {wilson(n, n).low:.2%}-100.00%); "
        f"a run of 100,000 boards yields about 100,000 ({wilson(n, n).low * 100_000:,.0f}-100,000)",
    ]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--words", "3-5"], "--words '3-5': expected A..B"),
        (["--score", "9..1"], "--score '9..1': the lower end is above the upper one"),
        (["--max-obscure", "1.5"], "--max-obscure 1.5: a share of the words, from 0 to 1"),
    ],
)
def test_cli_refuses_a_bad_band_in_one_line(
    solved_run: Path, tmp_path: Path, args: list[str], needle: str
) -> None:
    res = run_boggle("select", str(solved_run), *args, "--out", str(tmp_path / "p.parquet"))
    assert res.returncode == 2
    one_error_line(res, needle)
    assert not (tmp_path / "p.parquet").exists()


def test_cli_refuses_an_unknown_preset(solved_run: Path, tmp_path: Path) -> None:
    res = CliRunner().invoke(
        app, ["select", str(solved_run), "--preset", "tanglet-x", "-o", str(tmp_path / "p.pq")]
    )
    assert res.exit_code == 2 and "'tanglet-x' is not one of 'tanglet-easy'" in res.output


def test_cli_refuses_other_file_names_and_a_pool_inside_the_run(solved_run: Path, tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["select", str(solved_run), "--out", str(tmp_path / "p.json")])
    assert res.exit_code == 2 and "must end in .parquet, .pq or .csv" in res.output
    res = CliRunner().invoke(app, ["select", str(solved_run), "--out", str(solved_run / "pool.parquet")])
    assert res.exit_code == 2 and "inside the run directory" in res.output
    assert not (solved_run / "pool.parquet").exists()


def test_a_damaged_run_is_refused_with_exit_4(solved_run: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(solved_run, copy)
    part = sorted(copy.glob("part-*.parquet"))[1]
    data = bytearray(part.read_bytes())
    data[len(data) // 2] ^= 0xFF  # same size, other content
    part.write_bytes(bytes(data))
    res = run_boggle("select", str(copy), "--out", str(tmp_path / "p.parquet"))
    assert res.returncode == 4
    one_error_line(res, "damaged run", part.name)
    assert not (tmp_path / "p.parquet").exists()


def test_a_run_without_word_lists_is_refused_for_word_filters_only(
    enable2k_path: str, tmp_path: Path
) -> None:
    from pipeline.runner import execute

    run = tmp_path / "nowords"
    execute(run_config(enable2k_path, run, count=40, chunk_size=20, dice="new", words=False))
    for opt in (["--min-common-words", "5"], ["--max-obscure", "0.5"]):
        res = run_boggle("select", str(run), *opt, "--out", str(tmp_path / "p.parquet"))
        assert res.returncode == 2
        one_error_line(res, "without word lists", opt[0], "need them")
    res = CliRunner().invoke(
        app, ["select", str(run), "--no-dead-cells", "--out", str(tmp_path / "p.parquet")]
    )
    assert res.exit_code == 0, res.output
    pool = pd.read_parquet(tmp_path / "p.parquet")
    stored = pd.concat([pd.read_parquet(p) for p in sorted(run.glob("part-*.parquet"))])
    assert pool["board_id"].tolist() == sorted(stored.loc[stored["dead_cells"] == 0, "board_id"])
    assert pool["words"].isna().all()


def test_ingested_boards_carry_their_input_file_and_no_seed(enable2k_path: str, tmp_path: Path) -> None:
    from pipeline.config import load_config
    from pipeline.runner import execute

    boards = tmp_path / "boards.txt"
    boards.write_text("perslatgsineters\nnot a board!\nqaaaeeeeiiiioooo\n", encoding="utf-8")
    cfg = load_config(
        None,
        {
            "boards.source": "ingest",
            "boards.files": [str(boards)],
            "lexicon.path": enable2k_path,
            "run.out": str(tmp_path / "run"),
            "run.n_jobs": 1,
            "run.backend": "threading",
        },
    )
    execute(cfg)
    select_boards([tmp_path / "run"], tmp_path / "p.csv", Filters())
    pool = pd.read_csv(tmp_path / "p.csv", keep_default_na=False)
    assert pool["board"].tolist() == ["perslatgsineters", "[qu]aaaeeeeiiiioooo"]
    assert pool["grid"].tolist() == ["pers/latg/sine/ters", "[qu]aaa/eeee/iiii/oooo"]
    assert pool.loc[0, "score"] == 3625 and pool.loc[0, "n_words"] == 1045  # the known board
    assert pool["seed"].tolist() == ["", ""] and pool["board_id"].tolist() == [0, 1]
    assert set(pool["source"]) == {str(boards)}
