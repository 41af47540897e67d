"""What a board-game designer reads in the report, on real (small) runs of the batch pipeline:
runs labelled by what decided them, comparisons with intervals, the die on every cell rebuilt
from the seed exactly, each die's value, and runs that share their boards compared board by
board (new dice vs classic dice vs new dice under other rules, ENABLE2K)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import pipeline.analyze._cells as cells
import pipeline.analyze._compare as compare
import pipeline.analyze._paired as paired_runs
from pipeline.analyze import analyze_runs, load_runs
from pipeline.analyze._gather import chunk_layout, dice_recipe
from pipeline.cli import app
from tests.conftest import gathered

COUNT = 600


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """new dice, classic dice, and new dice with min length 4 (the same boards as the first)."""
    from pipeline.runner import run_from_file
    from tests.conftest import ENABLE2K, REPO

    base = tmp_path_factory.mktemp("designer")
    out = []
    for name, dice, extra in (
        ("new", "new", {}),
        ("classic", "classic", {}),
        ("new-min4", "new", {"rules.min_length": 4}),
    ):
        run_dir = base / name
        overrides: dict[str, Any] = {
            "run.out": str(run_dir),
            "run.n_jobs": 1,
            "lexicon.path": ENABLE2K,
            "boards.dice": dice,
            "boards.count": COUNT,
            "boards.chunk_size": 250,
            "boards.seed": 5,
            **extra,
        }
        run_from_file(REPO / "configs" / "smoke.toml", overrides)
        out.append(run_dir)
    return out


def test_runs_are_labelled_by_what_differs(three_runs: list[Path]) -> None:
    labels = [r.label for r in load_runs(three_runs)]
    assert labels == [
        "new dice · enable2k · boggle (min 3) rules",
        "classic dice · enable2k · boggle (min 3) rules",
        "new dice · enable2k · boggle (min 4) rules",
    ]
    own = load_runs(three_runs, {"classic": "the old dice", str(three_runs[0]): "the new dice"})
    assert [r.label for r in own][:2] == ["the new dice", "the old dice"]


def _parts(run_dir: Path) -> list[Any]:
    import pyarrow.parquet as pq

    return [pq.read_table(f) for f in sorted(Path(run_dir).glob("part-*.parquet"))]


def test_dice_are_rebuilt_from_the_seed_exactly(three_runs: list[Path]) -> None:
    """The die on every cell, re-rolled through the generator's own draws, gives back every
    stored board; so each board's faces are exactly its dice's faces, and the per-die counts
    the workers recorded are the re-rolled dice's."""
    from pipeline.boards import load_dice_set
    from pipeline.stats import die_sums

    for run, g in zip(load_runs(three_runs[:2]), gathered(three_runs[:2]), strict=True):
        recipe, name, why = dice_recipe(run)
        assert recipe is not None, why
        dice = load_dice_set(name)
        n_total = s_total = 0
        for chunk, table in enumerate(_parts(run.path)):
            layout = chunk_layout(recipe, chunk, table)
            assert layout is not None
            assert (np.sort(layout.die, axis=1) == np.arange(16)).all()  # each die once per board
            faces, codes = cells.decode_boards(table.column("board").to_pylist(), 4, 4)
            shown = [
                [dice.dice[d][s] or cells.BLANK_FACE for d, s in zip(drow, srow, strict=True)]
                for drow, srow in zip(layout.die, layout.side, strict=True)
            ]
            assert shown == [[faces[c] for c in row] for row in codes]
            n, s_ = die_sums(layout, table.column("score").to_numpy().astype(np.int64))
            n_total, s_total = n_total + n, s_total + s_
        assert g.stats.die is not None and g.parts_recorded == len(_parts(run.path))
        assert (g.stats.die[0] == n_total).all() and (g.stats.die[1] == s_total).all()


def test_reconstruction_refuses_a_run_it_cannot_reproduce(three_runs: list[Path]) -> None:
    run = load_runs(three_runs[:1])[0]
    table = _parts(run.path)[0]
    wrong_seed = dict(run.manifest, config={**run.config, "boards": {**run.config["boards"], "seed": 6}})
    recipe, _, why = dice_recipe(type(run)(run.label, run.path, wrong_seed, run.parts))
    assert recipe is not None, why
    assert chunk_layout(recipe, 0, table) is None  # another seed does not give the stored boards
    right, _, _ = dice_recipe(run)
    assert right is not None and chunk_layout(right, 0, table) is not None
    assert chunk_layout(right, 1, table) is None  # nor does another chunk's stream
    ingest = dict(run.manifest, config={**run.config, "boards": {**run.config["boards"], "source": "ingest"}})
    recipe, _, why = dice_recipe(type(run)(run.label, run.path, ingest, run.parts))
    assert recipe is None and why == "ingested boards have no dice"


@pytest.mark.integration
def test_report_answers_the_designers_questions(three_runs: list[Path], tmp_path: Path) -> None:
    res = analyze_runs(three_runs, tmp_path / "report", top=5, top_words=10)
    t = res.tables
    new, classic, min4 = (r.label for r in res.runs)
    # Comparisons against the first run, with intervals and verdicts.
    score = t.comparisons[(t.comparisons["metric"] == "mean score")].set_index("run")
    assert set(score.index) == {classic, min4}
    for rec in score.reset_index().to_dict("records"):
        assert rec["diff_low"] <= rec["diff"] <= rec["diff_high"]
        assert rec["verdict"].startswith(f"{rec['run']}: mean score ")
    assert score.loc[min4, "diff"] < 0  # a longer minimum can only lose words
    # Paired: the min-4 run holds the first run's boards; the classic run shares its draws (the
    # same seed, chunk size and 16 dice of 6 faces: each board rolled by the same draws, as a
    # what-if's arms), so it is paired board by board too, as draws.
    assert dict(zip(t.paired["run"], t.paired["pairing"], strict=True)) == {min4: "boards", classic: "draws"}
    p = t.paired.set_index("run").loc[min4]
    assert (
        p["boards"] == COUNT and p["share_higher"] == 0 and p["diff_low"] <= p["mean_diff"] <= p["diff_high"]
    )
    df_new = pd.concat([pd.read_parquet(f) for f in sorted(three_runs[0].glob("part-*.parquet"))])
    df_min4 = pd.concat([pd.read_parquet(f) for f in sorted(three_runs[2].glob("part-*.parquet"))])
    diff = df_min4["score"].to_numpy() - df_new["score"].to_numpy()
    assert p["mean_diff"] == pytest.approx(diff.mean())
    top = t.paired_boards[t.paired_boards["run"] == min4]
    assert list(top["diff"].abs())[:1] == [np.abs(diff).max()]
    assert all(set(w.split()) and all(len(x) == 3 for x in w.split()) for w in top["words_lost"] if w)
    # Face effects: raw and adjusted with intervals, one face order for every run.
    fe = t.face_effects
    assert {"effect_low", "effect_high", "adj_effect", "adj_low", "adj_high", "face_order"} <= set(fe.columns)
    orders = {run: list(g.sort_values("face_order")["face"]) for run, g in fe.groupby("run")}
    common = set.intersection(*(set(v) for v in orders.values()))
    firsts = [[f for f in v if f in common] for v in orders.values()]
    assert all(f == firsts[0] for f in firsts)
    # Face effects compared with the first run's: the difference of two effects, its interval
    # from the two effects' own intervals (independent runs).
    fc = t.face_comparisons
    assert set(fc["run"]) == {classic, min4} and set(fc["kind"]) == {"raw", "adjusted"}
    row = fc[(fc["run"] == classic) & (fc["kind"] == "adjusted")].iloc[0]
    a = fe[(fe["run"] == new) & (fe["face"] == row["face"])].iloc[0]
    b = fe[(fe["run"] == classic) & (fe["face"] == row["face"])].iloc[0]
    assert row["diff"] == pytest.approx(b["adj_effect"] - a["adj_effect"])
    half = np.hypot(a["adj_high"] - a["adj_low"], b["adj_high"] - b["adj_low"]) / 2
    assert (row["diff_high"] - row["diff_low"]) / 2 == pytest.approx(half)
    # Dice: 16 dice per dice run, ranked worst first, values averaging about zero.
    for run in (new, classic, min4):
        d = t.dice[t.dice["run"] == run]
        assert list(d["rank"]) == list(range(1, 17)) and sorted(d["die"]) == list(range(1, 17))
        assert (np.diff(d["value"].to_numpy()) >= 0).all()
        assert abs(d["value"].mean()) < 1.0
    page = res.report.read_text(encoding="utf-8")
    for text in (
        "new dice",
        "classic dice",
        "seed 5",
        "enable2k (sha256",
        "How the runs compare",
        "Same boards, board by board",
        "Dice and cell positions",
        "wordfreq",
        "normal approximation",
        'class="dt"',
        "dt-bundle",
        "Face effects against the first run",
        "plotly-score-cdf",
    ):
        assert text in page, text
    assert f"Board quality: {new} vs {classic} vs {min4}" in page


def test_word_changes_add_up_to_the_mean_difference(three_runs: list[Path]) -> None:
    g = gathered([three_runs[0], three_runs[2]])
    words = paired_runs._word_changes(g[0], g[1], COUNT, 10**6)
    pt = compare.paired(g)
    assert words["points_per_board"].sum() == pytest.approx(pt.summary.iloc[0]["mean_diff"])


def test_cli_label_option(three_runs: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--label RUN=TEXT`` reaches the analysis as a mapping (what labels do to the report is
    tested through load_runs above and in the browser test's full run)."""
    import pipeline.analyze as analyze

    seen: dict[str, Any] = {}

    def fake(run_dirs: list[str], out: Any, **kw: Any) -> Any:
        seen.update(kw, run_dirs=run_dirs)
        return type("R", (), {"report": tmp_path / "report.html"})()

    monkeypatch.setattr(analyze, "analyze_runs", fake)
    args = ["analyze", str(three_runs[0]), str(three_runs[1]), "--out", str(tmp_path / "o"), "--quiet"]
    res = CliRunner().invoke(
        app, [*args, "--label", "classic=Classic 1976", "--label", f"{three_runs[0]}=New"]
    )
    assert res.exit_code == 0, res.output
    assert seen["labels"] == {"classic": "Classic 1976", str(three_runs[0]): "New"}
    labels = [r.label for r in load_runs(seen["run_dirs"], seen["labels"])]
    assert labels == ["New", "Classic 1976"]
    monkeypatch.undo()
    bad = CliRunner().invoke(app, ["analyze", str(three_runs[0]), "--label", "nothing", "--quiet"])
    assert bad.exit_code == 2 and "RUN=TEXT" in bad.stderr
    unknown = CliRunner().invoke(app, ["analyze", str(three_runs[0]), "--label", "nope=x", "--quiet"])
    assert unknown.exit_code == 2 and "names none of the runs" in unknown.stderr


# The boggle table doubled: every board's score is exactly twice the "new" run's.
DOUBLED = {"3": 2, "4": 2, "5": 4, "6": 6, "7": 10, "8": 22}


@pytest.fixture(scope="module")
def doubled_run(three_runs: list[Path]) -> Path:
    """The first run's boards scored with every point doubled (a pure scaling)."""
    from pipeline.runner import run_from_file
    from tests.conftest import ENABLE2K, REPO

    run_dir = three_runs[0].parent / "new-doubled"
    overrides: dict[str, Any] = {
        "run.out": str(run_dir),
        "run.n_jobs": 1,
        "lexicon.path": ENABLE2K,
        "boards.dice": "new",
        "boards.count": COUNT,
        "boards.chunk_size": 250,
        "boards.seed": 5,
        "rules.scores": DOUBLED,
    }
    run_from_file(REPO / "configs" / "smoke.toml", overrides)
    return run_dir


def _scores(run_dir: Path) -> pd.DataFrame:
    return pd.concat([pd.read_parquet(f) for f in sorted(run_dir.glob("part-*.parquet"))], ignore_index=True)


def test_pure_scaling_reads_as_scaling(three_runs: list[Path], doubled_run: Path) -> None:
    """A run against itself with every score doubled: paired intervals, "pure scaling" wording,
    and face effects that keep their share of the mean (no change of face value)."""
    runs = load_runs([three_runs[0], doubled_run])
    a, b = _scores(three_runs[0]), _scores(doubled_run)
    assert (b["score"].to_numpy() == 2 * a["score"].to_numpy()).all()
    g = gathered(runs)
    pt = compare.paired(g)
    s = pt.summary.iloc[0]
    assert s["scale_factor"] == pytest.approx(2.0) and s["scale_explains"] == 1.0
    assert "A pure scaling: every board scores 100.0% higher (×2)" in s["verdict"]
    # shares of boards higher / lower / the same, never a rounded 0% or 100%
    zero = int((a["score"] == 0).sum())
    assert s["share_same"] == pytest.approx(zero / COUNT)
    from pipeline.analyze._inference import share_text

    assert f"{share_text(1 - zero / COUNT)} of boards score higher, 0% lower" in s["verdict"]
    # the mean comparison is the paired one: the per-board differences are the first run's scores
    from pipeline.analyze._stats import summary

    comp = compare.comparisons(summary(g), pt.moments)
    score = comp[comp["metric"] == "mean score"].iloc[0]
    d = a["score"].to_numpy(dtype=float)
    half = 1.959963984540054 * d.std(ddof=1) / np.sqrt(len(d))
    assert bool(score["paired"]) and score["diff"] == pytest.approx(d.mean())
    assert score["diff_high"] - score["diff"] == pytest.approx(half)
    words = comp[comp["metric"] == "mean word count"].iloc[0]
    assert words["verdict"].endswith("mean word count the same as " + runs[0].label + " (same boards)")
    eff = pt.face_effects[runs[1].label]
    # doubled scores: the paired difference of a face's effect is its effect in the first run
    adj = eff[eff["kind"] == "adjusted"].set_index("face")
    bf_effects, _, _ = cells.adjusted_effects(*_codes(runs[0]), a["score"].to_numpy(dtype=float))
    ref = bf_effects.set_index("face")["adj_effect"]
    assert np.allclose(adj.loc[ref.index, "diff"], ref, atol=1e-6)
    # ... and as a share of each run's mean nothing changes, interval included
    assert np.allclose(eff[["rel_diff", "rel_low", "rel_high"]].to_numpy(dtype=float), 0.0, atol=1e-9)


def _codes(run: Any) -> tuple[np.ndarray, list[str]]:
    boards = [b for t in _parts(run.path) for b in t.column("board").to_pylist()]
    faces, codes = cells.decode_boards(boards, 4, 4)
    return codes, faces


@pytest.mark.integration
def test_report_of_a_scaled_run_and_its_headline(
    three_runs: list[Path], doubled_run: Path, tmp_path: Path
) -> None:
    """The headline's numbers equal an independent pandas computation from the part files, and
    the report says "scaling" for a run whose every score is doubled."""
    res = analyze_runs([three_runs[0], doubled_run], tmp_path / "report", top=3, top_words=5)
    head = res.tables.headline.set_index("run")
    for run, run_dir in zip(res.runs, (three_runs[0], doubled_run), strict=True):
        df = _scores(run_dir)
        h = head.loc[run.label]
        n = len(df)
        half = 1.959963984540054 * df["score"].std(ddof=1) / np.sqrt(n)
        assert h["boards"] == n and h["score_mean"] == pytest.approx(df["score"].mean())
        assert h["score_high"] - h["score_mean"] == pytest.approx(half)
        assert h["words_mean"] == pytest.approx(df["n_words"].mean())
        assert h["bad"] == int((df["n_words"] < 50).sum())
        assert h["bad_share"] == pytest.approx((df["n_words"] < 50).mean())
        for col, (lo, hi) in (
            ("pool_easy", (32, 42)),
            ("pool_medium", (200, 250)),
            ("pool_hard", (425, 525)),
        ):
            assert h[col] == int(df["n_words"].between(lo, hi).sum()), col
        dice = res.tables.dice[res.tables.dice["run"] == run.label]
        worst = dice.loc[dice["value"].idxmin()]
        assert h["worst_die"] == worst["die"] and h["worst_die_value"] == worst["value"]
        assert 0 < h["model_r2"] < 1
    page = res.report.read_text(encoding="utf-8")
    first = page[: page.index('<section id="runs">')]
    assert 'id="headline"' in first and "points a board" in first and "model estimate" in first
    assert "boggle what-if" in first and "R²" in first and "A pure scaling" in first
    body = page[page.index("<nav>") : page.index('<section id="method">')]
    # the text a reader sees: embedded images (base64) may hold any 3 letters by chance
    body = re.sub(r"data:[a-z/+.-]+;base64,[A-Za-z0-9+/=]+", "", body)
    for jargon in (" pp", "HC1", "Welch", "delta method", "Zipf", "swing", "Wilson"):
        assert jargon not in body, jargon
    method = page[page.index('<section id="method">') :]
    for name in ("Welch", "HC1", "delta method", "Zipf", "Wilson"):
        assert name in method, name
