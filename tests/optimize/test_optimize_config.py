"""``boggle optimize`` settings from the [optimize] section of a TOML file: the same
validation, unknown-key hints and --set as ``boggle run``; CLI options override the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.best.optimize import OptimizeConfig, load_optimize_config
from pipeline.cli import app
from pipeline.config import load_section
from pipeline.errors import ConfigError
from tests.conftest import REPO


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "opt.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_shipped_optimize_config_is_the_make_target() -> None:
    cfg = load_optimize_config(REPO / "configs" / "optimize-4x4.toml")
    assert (cfg.shape, cfg.strategy, cfg.restarts, cfg.seed) == ("4x4", "anneal", 10, 0)
    assert (cfg.time_limit, cfg.target, cfg.n_jobs, cfg.out) == (120.0, 3625, 2, "runs/optimize-4x4")
    assert cfg.dictionary == "enable2k"
    # everything else is the library's default
    default = OptimizeConfig(cfg.dictionary)
    assert (cfg.cycle, cfg.t_start, cfg.t_end, cfg.keep) == (
        default.cycle,
        default.t_start,
        default.t_end,
        default.keep,
    )


def test_no_file_gives_the_defaults() -> None:
    assert load_optimize_config(None) == OptimizeConfig()


def test_unknown_key_is_rejected_with_a_hint(tmp_path: Path) -> None:
    path = write(tmp_path, "[optimize]\nrestart = 3\n")
    with pytest.raises(ConfigError) as info:
        load_optimize_config(path)
    msg = info.value.one_line()
    assert msg.startswith(f"{path}: ") and "'restart'" in msg and "did you mean 'restarts'?" in msg


def test_unknown_section_is_rejected_with_a_hint(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"unknown section '\[optimise\]'; did you mean '\[optimize\]'"):
        load_optimize_config(write(tmp_path, "[optimise]\nseed = 1\n"))


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('[optimize]\nrestarts = "many"\n', r"\[optimize\] restarts: expected an integer, got 'many'"),
        ("[optimize]\nseed = true\n", r"\[optimize\] seed: expected an integer"),
        ('[optimize]\nt_start = "hot"\n', r"\[optimize\] t_start: expected a number"),
        ("[optimize]\noverwrite = 1\n", r"\[optimize\] overwrite: expected true or false"),
        ("[optimize]\nshape = 4\n", r"\[optimize\] shape: expected a non-empty string"),
        (
            '[optimize]\nstrategy = "tabu"\n',
            r"opt.toml: \[optimize\] strategy: expected one of 'hill', 'anneal', got 'tabu'",
        ),
        ("[optimize]\nrestarts = 0\n", r"opt.toml: optimize: restarts must be >= 1"),
    ],
)
def test_bad_values_name_the_file_and_key(tmp_path: Path, toml: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_optimize_config(write(tmp_path, toml))


def test_set_and_overrides_beat_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, "[optimize]\nrestarts = 3\nseed = 1\nt_start = 80\n")
    cfg = load_optimize_config(path, assignments=["optimize.seed=7", "optimize.strategy=hill"])
    assert (cfg.restarts, cfg.seed, cfg.strategy, cfg.t_start) == (3, 7, "hill", 80.0)
    cfg = load_optimize_config(
        path, {"optimize.seed": 9, "optimize.restarts": None}, assignments=["optimize.seed=7"]
    )
    assert (cfg.restarts, cfg.seed) == (3, 9)  # an option beats --set; None leaves the file's value
    with pytest.raises(ConfigError, match=r"unknown key in \[optimize\] 'sede'"):
        load_optimize_config(path, assignments=["optimize.sede=7"])


def test_a_future_section_loads_the_same_way(tmp_path: Path) -> None:
    """What a [prove] section would do: any frozen dataclass with simple field types."""
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Prove:
        depth: int = 2
        budget: float | None = None

    path = write(tmp_path, "[prove]\ndepth = 4\n")
    assert load_section(path, "prove", Prove, assignments=["prove.budget=1.5"]) == Prove(4, 1.5)
    with pytest.raises(ConfigError, match="did you mean 'depth'"):
        load_section(path, "prove", Prove, {"prove.deph": 3})


def test_cli_reads_the_file_and_options_override_it(small_dict: str, tmp_path: Path) -> None:
    out = tmp_path / "run"
    path = write(
        tmp_path,
        f'[optimize]\ndictionary = "{small_dict}"\nstrategy = "hill"\nrestarts = 3\n'
        f'iterations = 2\npool_size = 8\nn_jobs = 1\nout = "{out}"\n',
    )
    result = CliRunner().invoke(
        app, ["optimize", str(path), "--restarts", "2", "--set", "optimize.seed=4", "-q"]
    )
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "_SUCCESS").read_text())
    config = manifest["config"]
    assert (config["restarts"], config["seed"], config["strategy"], config["pool_size"]) == (2, 4, "hill", 8)
    assert manifest["counts"]["restarts"] == 2


def test_cli_config_errors_are_one_line_exit_2(tmp_path: Path) -> None:
    path = write(tmp_path, "[optimize]\ncylce = 10\n")
    result = CliRunner().invoke(app, ["optimize", str(path)])
    assert result.exit_code == 2
    assert result.output.strip() == (
        f"error: {path}: unknown key in [optimize] 'cylce'; did you mean 'cycle'? (known: "
        + ", ".join(OptimizeConfig.__dataclass_fields__)
        + ")"
    )
    bad_set = CliRunner().invoke(app, ["optimize", "--set", "optimize.seed"])
    assert bad_set.exit_code == 2 and "expected section.key=value" in bad_set.output
