"""Output: the Parquet table and manifest, config errors, the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipeline.best.optimize import OptimizeConfig, run_optimize
from pipeline.best.optimize._run import prepare
from pipeline.boards import format_compact
from pipeline.errors import ConfigError, OutputConflictError


def test_run_writes_parquet_and_manifest(small_dict: str, tmp_path: Path) -> None:
    out = tmp_path / "opt"
    cfg = OptimizeConfig(
        small_dict, strategy="hill", restarts=2, iterations=3, pool_size=8, keep=5, out=str(out), n_jobs=1
    )
    res = run_optimize(cfg)
    table = pq.read_table(out / "part-00000.parquet")
    assert table.column_names == [
        "board",
        "rows",
        "cols",
        "score",
        "points",
        "n_words",
        "words",
        "restart",
        "iteration",
        "iterations",
        "strategy",
        "objective",
        "seed",
    ]
    rows = table.to_pylist()
    assert len(rows) == len(res.boards) <= 5
    for row, b in zip(rows, res.boards, strict=True):
        assert row["board"] == format_compact(b.board) and row["score"] == b.score
        assert row["words"] == sorted(row["words"]) and len(row["words"]) == row["n_words"]
        assert row["strategy"] == "hill" and row["seed"] == 0
    manifest = json.loads((out / "_SUCCESS").read_text())
    assert manifest["format"] == "boggle-optimize"
    assert manifest["lexicon"]["content_hash"] and manifest["rules"]["name"] == "boggle"
    assert manifest["counts"]["restarts"] == 2 and manifest["counts"]["boards"] == len(rows)
    assert manifest["best"] == {"board": rows[0]["board"], "score": rows[0]["score"]}
    assert "numpy" in manifest["packages"] and manifest["config"]["restarts"] == 2
    assert not [p.name for p in out.iterdir() if p.name.endswith(".tmp")]
    # a different config may not overwrite it, unless asked
    other = OptimizeConfig(
        small_dict, strategy="hill", restarts=1, iterations=2, pool_size=8, out=str(out), n_jobs=1
    )
    with pytest.raises(OutputConflictError):
        run_optimize(other)
    import dataclasses

    run_optimize(dataclasses.replace(other, overwrite=True))
    assert json.loads((out / "_SUCCESS").read_text())["config"]["restarts"] == 1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"strategy": "tabu"}, "unknown strategy"),
        ({"objective": "subset"}, "needs --subset"),
        ({"restarts": 0}, "restarts must be"),
        ({"time_limit": -1.0}, "time limit"),
        ({"t_start": 1.0, "t_end": 5.0}, "temperatures"),
        ({"shape": "4by4"}, "shape"),
    ],
)
def test_bad_config_is_a_config_error(kwargs: dict, message: str) -> None:
    from pipeline.errors import BoggleError

    with pytest.raises(BoggleError, match=message):
        OptimizeConfig("x.txt", **kwargs)


def test_too_large_board_is_refused(small_dict: str) -> None:
    with pytest.raises(ConfigError, match="at most 64 cells"):
        prepare(OptimizeConfig(small_dict, shape="9x9"))


def test_dice_set_must_fit_the_shape(small_dict: str) -> None:
    from pipeline.errors import BoggleError

    with pytest.raises(BoggleError, match="5x5"):
        prepare(OptimizeConfig(small_dict, dice="big1979", shape="4x4"))


def test_cli_optimize_prints_best_last(small_dict: str, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from pipeline.cli import app

    out = tmp_path / "cli"
    result = CliRunner().invoke(
        app,
        [
            "optimize",
            "-d",
            small_dict,
            "--strategy",
            "hill",
            "--restarts",
            "2",
            "--iterations",
            "3",
            "--pool-size",
            "8",
            "--n-jobs",
            "1",
            "--out",
            str(out),
            "--quiet",
        ],
    )
    assert result.exit_code == 0, result.output
    last = result.output.strip().splitlines()[-1]
    table = pq.read_table(out / "part-00000.parquet").to_pylist()
    assert last == f"BEST {table[0]['board']} {table[0]['score']}"
    bad = CliRunner().invoke(app, ["optimize", "-d", small_dict, "--strategy", "tabu", "--out", str(out)])
    assert bad.exit_code == 2 and "'tabu' is not one of 'anneal', 'hill'" in bad.output
    missing = CliRunner().invoke(
        app, ["optimize", "-d", str(tmp_path / "nope.txt"), "--out", str(tmp_path / "x")]
    )
    assert missing.exit_code == 2 and "not found" in missing.output
