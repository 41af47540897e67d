"""Bad boards, explained: the share of bad boards, the risk ratios of their drivers and the
Tanglet band shares, each checked against an independent pandas computation on a real run."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from pipeline.analyze import analyze_runs, load_runs
from pipeline.analyze._bad import BadDefinition, bad_tables, rare_face, vowel_face
from pipeline.analyze._gather import chunk_layout, dice_recipe
from pipeline.analyze._inference import risk_ratio
from pipeline.analyze._select import PRESETS, band_shares
from pipeline.boards import parse_compact
from pipeline.cli import app
from pipeline.errors import BoggleError
from pipeline.stats import DiceLayout, StatsSpec
from tests.conftest import gathered, run_config

Z = 1.959963984540054


@pytest.fixture(scope="module")
def dice_run(tmp_path_factory: pytest.TempPathFactory, enable2k_path: str) -> Path:
    """300 new-dice boards with ENABLE2K, in 3 parts (the dice are rebuilt from the seed)."""
    from pipeline.runner import execute

    out = tmp_path_factory.mktemp("bad") / "new"
    execute(run_config(enable2k_path, out, dice="new"))
    return out


@pytest.fixture(scope="module")
def boards(dice_run: Path) -> pd.DataFrame:
    df = pd.concat([pd.read_parquet(p) for p in sorted(dice_run.glob("part-*.parquet"))])
    df = df.sort_values("board_id").reset_index(drop=True)
    faces = [parse_compact(b, (4, 4)).faces for b in df["board"]]
    # restated here on purpose: a cell is a vowel when its face holds a e i o u, Qu is not
    df["vowels"] = [sum(f != "qu" and any(ch in "aeiou" for ch in f) for f in fs) for fs in faces]
    df["qu"] = ["qu" in fs for fs in faces]
    df["rare"] = [any(set(f) & set("jkqxz") for f in fs) for fs in faces]
    df["faces"] = faces
    return df


def tables_of(run: Path, definition: BadDefinition) -> tuple[pd.DataFrame, pd.DataFrame, Any]:
    """The bad-board tables (the workers counted the default definition; another one is
    recounted from the parts) and the dice of every board, re-rolled from the seed."""
    import pyarrow.parquet as pq

    bt = bad_tables(gathered([run], StatsSpec(definition)), definition)
    (info,) = load_runs([run])
    recipe, _, why = dice_recipe(info)
    assert recipe is not None, why
    layouts = []
    for chunk, path in enumerate(sorted(run.glob("part-*.parquet"))):
        got = chunk_layout(recipe, chunk, pq.read_table(path))
        assert got is not None
        layouts.append(got)
    layout = DiceLayout(
        layouts[0].dice, np.concatenate([x.die for x in layouts]), np.concatenate([x.side for x in layouts])
    )
    return bt.share, bt.drivers, layout


def expected(has: pd.Series, bad: pd.Series) -> dict[str, float]:
    """The risk ratio and its log interval, from a pandas crosstab."""
    t = pd.crosstab(has, bad).reindex(index=[True, False], columns=[True, False], fill_value=0)
    a, b, c, d = t.loc[True, True], t.loc[True, False], t.loc[False, True], t.loc[False, False]
    rr = (a / (a + b)) / (c / (c + d))
    se = math.sqrt(1 / a - 1 / (a + b) + 1 / c - 1 / (c + d))
    return {
        "boards_with": a + b,
        "bad_with": a,
        "risk_ratio": rr,
        "rr_low": rr * math.exp(-Z * se),
        "rr_high": rr * math.exp(Z * se),
        "share_of_boards": (a + b) / len(has),
        "share_of_bad": a / (a + c),
        "p_bad_with": a / (a + b),
        "p_bad_without": c / (c + d),
    }


def check(row: pd.Series, want: dict[str, float]) -> None:
    for k, v in want.items():
        assert row[k] == pytest.approx(v, rel=1e-9), k


@pytest.mark.parametrize("definition", [BadDefinition(), BadDefinition(words=80, score=90)])
def test_shares_and_board_drivers_match_pandas(
    dice_run: Path, boards: pd.DataFrame, definition: BadDefinition
) -> None:
    share, drivers, _ = tables_of(dice_run, definition)
    bad = boards["n_words"] < (definition.words or 0)
    if definition.score is not None:
        bad |= boards["score"] < definition.score
    assert 0 < bad.sum() < len(boards)
    (s,) = share.to_dict("records")
    assert (s["boards"], s["bad"], s["share"]) == (len(boards), bad.sum(), pytest.approx(bad.mean()))
    assert s["definition"] == definition.describe()
    p, n = bad.mean(), len(bad)
    for bound in (s["share_low"], s["share_high"]):  # Wilson: the estimate is z standard errors away
        assert (p - bound) ** 2 == pytest.approx(Z**2 * bound * (1 - bound) / n)
    by = drivers.set_index("factor")
    check(by.loc["a dead cell"], expected(boards["dead_cells"] >= 1, bad))
    check(by.loc["at most 3 vowels"], expected(boards["vowels"] <= 3, bad))
    check(by.loc["a Qu face"], expected(boards["qu"], bad))
    check(by.loc["a rare letter (j k q x z)"], expected(boards["rare"], bad))
    # by position class: corners are cells 0, 3, 12, 15 of a 4x4 board, inner cells 5, 6, 9, 10
    corner, inner = {0, 3, 12, 15}, {5, 6, 9, 10}
    edge = set(range(16)) - corner - inner
    for where, cells in (("on a corner", corner), ("on an edge", edge), ("on an inner cell", inner)):
        rare = pd.Series([any(rare_face(fs[c]) for c in cells) for fs in boards["faces"]])
        qu = pd.Series([any(fs[c] == "qu" for c in cells) for fs in boards["faces"]])
        check(by.loc[f"a rare letter {where}"], expected(rare, bad))
        check(by.loc[f"Qu {where}"], expected(qu, bad))

    # interactions, restated: two Qu faces, two rare letters, a Qu with no vowel around it
    def vowel(f: str) -> bool:
        return f != "qu" and any(ch in "aeiou" for ch in f)

    def around(c: int) -> list[int]:
        r, k = divmod(c, 4)
        return [rr * 4 + kk for rr in range(r - 1, r + 2) for kk in range(k - 1, k + 2)
                if (rr, kk) != (r, k) and 0 <= rr < 4 and 0 <= kk < 4]  # fmt: skip

    faces = boards["faces"]
    two_qu = pd.Series([sum(f == "qu" for f in fs) >= 2 for fs in faces])
    two_rare = pd.Series([sum(rare_face(f) for f in fs) >= 2 for fs in faces])
    lonely = pd.Series(
        [
            any(f == "qu" and not any(vowel(fs[n]) for n in around(c)) for c, f in enumerate(fs))
            for fs in faces
        ]
    )
    assert lonely.sum() > 0 and two_rare.sum() > 0
    interactions = drivers[drivers["kind"] == "interaction"].set_index("factor")
    assert list(interactions.index) == ["two Qu faces", "two rare letters", "a Qu with no vowel next to it"]
    check(interactions.loc["two rare letters"], expected(two_rare, bad))
    check(interactions.loc["a Qu with no vowel next to it"], expected(lonely, bad))
    assert interactions.loc["two Qu faces", "boards_with"] == two_qu.sum()


def test_die_face_drivers_agree_with_the_boards(dice_run: Path, boards: pd.DataFrame) -> None:
    _, drivers, layout = tables_of(dice_run, BadDefinition())
    bad = boards["n_words"] < 50
    dice = drivers[drivers["kind"] == "die"]
    assert len(dice) == sum(len(set(sides)) for sides in layout.dice)
    # every board shows exactly one face of each of the 16 dice
    per_die = dice.assign(die=dice["factor"].str.extract(r"^die (\d+) ")[0].astype(int))
    assert (per_die.groupby("die")["boards_with"].sum() == len(boards)).all()
    # the rebuilt layout puts, on each cell, a die whose face there is the board's face
    faces = np.array([list(fs) for fs in boards["faces"]], dtype=object)
    shown = np.array(
        [
            [layout.dice[d][s] for d, s in zip(dr, sr, strict=True)]
            for dr, sr in zip(layout.die, layout.side, strict=True)
        ],
        dtype=object,
    )
    assert (shown == faces).all()
    for rec in dice.head(12).to_dict("records"):
        d = int(rec["factor"].split()[1]) - 1
        face = rec["factor"].rsplit(" shows ", 1)[1]
        has = pd.Series([(faces[b][layout.die[b] == d] == face).any() for b in range(len(boards))])
        check(pd.Series(rec), expected(has, bad))


def test_the_vowel_and_rare_letter_rules() -> None:
    assert [vowel_face(f) for f in ("a", "u", "qu", "in", "th", "y")] == [
        True,
        True,
        False,
        True,
        False,
        False,
    ]
    assert [rare_face(f) for f in ("qu", "j", "k", "x", "z", "s")] == [True, True, True, True, True, False]


def test_risk_ratio_interval_covers_the_true_ratio() -> None:
    rng = np.random.default_rng(7)
    n1, n0, p1, p0 = 600, 2400, 0.15, 0.05
    hits = 0
    for _ in range(1000):
        iv = risk_ratio(rng.binomial(n1, p1), n1, rng.binomial(n0, p0), n0)
        hits += iv.low <= p1 / p0 <= iv.high
    assert 930 <= hits <= 975
    assert math.isnan(risk_ratio(0, 10, 3, 10).estimate)


def test_band_shares_match_pandas(dice_run: Path, boards: pd.DataFrame) -> None:
    df = band_shares(gathered([dice_run]))
    assert df["band"].tolist() == list(PRESETS)
    for rec in df.to_dict("records"):
        b = PRESETS[rec["band"]]
        k = int(boards["n_words"].between(b.lo, b.hi).sum())
        assert (rec["in_band"], rec["boards"]) == (k, len(boards))
        assert rec["per_100k"] == pytest.approx(k / len(boards) * 100_000)
        assert rec["share_low"] <= k / len(boards) <= rec["share_high"]


def test_a_definition_is_stated_and_checked() -> None:
    assert BadDefinition.from_options(None, None) == BadDefinition(50, None)
    assert BadDefinition.from_options(None, 40).describe() == "fewer than 40 points"
    assert BadDefinition.from_options(30, 40).describe() == "fewer than 30 words or fewer than 40 points"
    with pytest.raises(BoggleError, match="--bad-words 0"):
        BadDefinition(0)


def test_the_report_explains_bad_boards_and_the_bands(dice_run: Path, tmp_path: Path) -> None:
    res = CliRunner().invoke(
        app,
        ["analyze", str(dice_run), "--out", str(tmp_path / "r"), "-q", "--bad-words", "60", "--threads", "2"],
    )
    assert res.exit_code == 0, res.output
    page = (tmp_path / "r" / "report.html").read_text(encoding="utf-8")
    markers = [
        '<section id="bad">',
        "fewer than 60 words",
        'id="bad-drivers"',
        'id="bad-positions"',
        "Every die face",
        '<section id="serve">',
        'id="serve-bands"',
        "tanglet-medium",
    ]
    for marker in markers:
        assert marker in page, marker
    assert (
        page.index('<section id="dice">')
        < page.index('<section id="bad">')
        < page.index('<section id="top">')
    )
    options = json.loads((tmp_path / "r" / "analysis.json").read_text())["options"]
    assert (options["bad_words"], options["bad_score"]) == (60, None)
    share = pd.read_csv(tmp_path / "r" / "tables" / "bad_share.csv")
    assert share["definition"].tolist() == ["fewer than 60 words"]


def test_analyze_runs_defaults_to_fewer_than_50_words(
    dice_run: Path, boards: pd.DataFrame, tmp_path: Path
) -> None:
    res = analyze_runs([dice_run], tmp_path / "r", threads=2)
    assert res.tables.bad_share["bad"].tolist() == [int((boards["n_words"] < 50).sum())]
