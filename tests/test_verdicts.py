"""The designer's verdicts (issue 52's report side): a what-if's two arms analysed together are
paired by their shared draws, with what-if's own interval; the headline gives each change in
points, paired; the die diagnosis names several dice with a what-if line each, marks the changed
dice and warns when the model and the measurement disagree; two Qu dice show as an interaction."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from pipeline.analyze._inference import Z95
from pipeline.analyze._select import PRESETS
from pipeline.analyze._tables import compute_all
from pipeline.design import run_what_if
from tests.conftest import gathered

COUNT, CHUNK, SEED = 900, 300, 7


@pytest.fixture(scope="module")
def arms(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return run_what_if(
        "new",
        ["die 15 = die 5"],
        tmp_path_factory.mktemp("verdicts") / "w",
        count=COUNT,
        seed=SEED,
        dictionary="enable2k",
        chunk_size=CHUNK,
        n_jobs=1,
    )


def _boards(run: Path) -> pd.DataFrame:
    df = pd.concat([pd.read_parquet(p) for p in sorted(run.glob("part-*.parquet"))], ignore_index=True)
    return df.sort_values("board_id").reset_index(drop=True)


def _paired(x: np.ndarray) -> tuple[float, float, float]:
    mean, half = float(x.mean()), Z95 * float(x.std(ddof=1)) / math.sqrt(len(x))
    return mean, mean - half, mean + half


@pytest.fixture(scope="module")
def tables(arms: Any) -> Any:
    return compute_all(gathered([arms.base_dir, arms.variant_dir]))


def test_a_what_ifs_arms_are_paired_by_their_draws_with_its_interval(arms: Any, tables: Any) -> None:
    p = tables.paired.iloc[0]
    assert p["pairing"] == "draws" and "on the same draws" in p["verdict"]
    assert p["mean_diff"] == pytest.approx(arms.gain, abs=1e-9)
    # what-if's interval (1.96 sd / sqrt(n)) to the printed two decimals
    assert round(p["diff_low"], 2) == round(arms.gain_low, 2) and round(p["diff_high"], 2) == round(
        arms.gain_high, 2
    )
    head = tables.headline.set_index("pairing").loc["draws"]
    assert head["score_change"] == pytest.approx(arms.gain)
    assert (head["score_change_low"], head["score_change_high"]) == pytest.approx(
        (p["diff_low"], p["diff_high"])
    )
    # the boards differ (die 15 changed), the draws do not: the paired face effects need the same boards
    assert tables.face_comparisons.empty or not tables.face_comparisons["paired"].any()


def test_the_changes_of_the_bad_share_and_the_pools_are_paired(arms: Any, tables: Any) -> None:
    a, b = _boards(arms.base_dir), _boards(arms.variant_dir)
    head = tables.headline.set_index("pairing").loc["draws"]
    bad = (b["n_words"] < 50).astype(int).to_numpy() - (a["n_words"] < 50).astype(int).to_numpy()
    assert (head["bad_change"], head["bad_change_low"], head["bad_change_high"]) == pytest.approx(
        _paired(bad)
    )
    for col, name in (("pool_easy", "tanglet-easy"), ("pool_medium", "tanglet-medium")):
        band = PRESETS[name]
        d = b["n_words"].between(band.lo, band.hi).astype(int).to_numpy()
        d = d - a["n_words"].between(band.lo, band.hi).astype(int).to_numpy()
        if d.std() > 0:
            got = (head[f"{col}_change"], head[f"{col}_change_low"], head[f"{col}_change_high"])
            assert got == pytest.approx(_paired(d)), col
        assert head[f"{col}_share"] == pytest.approx(b["n_words"].between(band.lo, band.hi).mean())
    c = tables.comparisons
    assert set(c[c["key"] == "bad_share"]["pairing"]) == {"draws"}


def test_the_die_diagnosis(arms: Any, tables: Any) -> None:
    changes = tables.dice_changes
    assert changes["die"].tolist() == [15]
    assert tables.dice[tables.dice["changed"]]["die"].tolist() == [15]  # in the variant only
    check = tables.model_check.iloc[0]
    # the model's prediction is what-if's own
    assert (check["predicted"], check["predicted_low"], check["predicted_high"]) == pytest.approx(
        (arms.prediction.estimate, arms.prediction.low, arms.prediction.high)
    )
    assert check["measured"] == pytest.approx(arms.gain)
    s = tables.suspects
    base = s[s["run"] == s["run"].iloc[0]]
    by_value = base[base["by"] == "value"]
    assert len(by_value) == 3 and by_value["estimate"].is_monotonic_increasing
    assert all(cmd.startswith("boggle what-if new --swap 'die ") for cmd in by_value["what_if"] if cmd)
    worst = tables.dice[tables.dice["run"] == base["run"].iloc[0]].sort_values("value")
    assert by_value["die"].tolist() == worst["die"].head(3).tolist()
    assert set(base["by"]) <= {"value", "bad boards"}


def test_a_model_warning_when_the_model_and_the_measurement_disagree(arms: Any, tables: Any) -> None:
    """The check compares intervals: planting a measurement far from the prediction flips it."""
    from pipeline.analyze._diagnosis import model_check

    g = gathered([arms.base_dir, arms.variant_dir])
    far = tables.paired.assign(mean_diff=100.0, diff_low=99.0, diff_high=101.0)
    got = model_check(g, tables.dice_changes, far).iloc[0]
    assert not got["agree"] and "trust the measurement" in got["note"]


def test_two_qu_dice_show_as_an_interaction(tmp_path: Path) -> None:
    """A held-out set with a second Qu die: the bad-board section gets a "two Qu faces" row with
    a risk ratio counted from the boards."""
    from pipeline.boards import load_dice_set
    from pipeline.config import config_from_dict
    from pipeline.runner import execute

    dice = [list(d) for d in load_dice_set("new").dice]
    dice[0] = ["qu", "qu", "qu", "qu", "qu", "qu"]  # die 1: a second Qu die, always Qu
    dice[14] = ["qu", "qu", "qu", "qu", "qu", "qu"]
    path = tmp_path / "two-qu.txt"
    path.write_text("\n".join(" ".join("Qu" if f == "qu" else f for f in d) for d in dice) + "\n")
    out = tmp_path / "run"
    execute(
        config_from_dict(
            {
                "boards": {"dice": str(path), "count": 400, "chunk_size": 200, "seed": 2},
                "lexicon": {"path": "enable2k"},
                "run": {"out": str(out), "n_jobs": 1},
            }
        )
    )
    drivers = compute_all(gathered([out])).bad_drivers.set_index("factor")
    row = drivers.loc["two Qu faces"]
    assert row["kind"] == "interaction" and row["boards_with"] == 400  # every board shows both
    df = _boards(out)
    assert row["bad_with"] == int((df["n_words"] < 50).sum())
