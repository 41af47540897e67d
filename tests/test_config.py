"""The run config: TOML loading, strict validation, overrides, resolution."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

import pytest

from pipeline.config import Bounds, RunConfig, check_value, config_from_dict, load_config, parse_assignment
from pipeline.errors import BoggleError, ConfigError
from tests.conftest import REPO


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "job.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("name", ["default", "smoke", "large"])
def test_shipped_configs_are_valid(name: str) -> None:
    cfg = load_config(REPO / "configs" / f"{name}.toml")
    assert cfg.boards.source == "generate" and cfg.boards.dice == "new"
    assert cfg.boards.shape == "4x4" and cfg.rules.name == "boggle" and cfg.rules.min_length == 3
    assert cfg.lexicon.path == "enable2k"  # embedded: runs on any machine
    assert Path(cfg.run.out).is_absolute()


def test_shipped_config_sizes() -> None:
    sizes = {
        n: load_config(REPO / "configs" / f"{n}.toml").boards.count for n in ("smoke", "default", "large")
    }
    assert sizes["smoke"] <= 5000 and sizes["default"] == 100_000 and sizes["large"] >= 1_000_000


def test_typo_is_rejected_with_the_key_name_and_a_suggestion(tmp_path: Path) -> None:
    path = write(tmp_path, "[boards]\ncuont = 10\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    msg = info.value.one_line()
    assert msg.startswith(f"{path}: ") and "'cuont'" in msg and "did you mean 'count'?" in msg


def test_unknown_section_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"unknown section '\[bords\]'; did you mean '\[boards\]'"):
        load_config(write(tmp_path, "[bords]\ncount = 10\n"))


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('[boards]\ncount = "ten"\n', r"\[boards\] count: expected an integer, got 'ten'"),
        ("[boards]\ncount = 0\n", r"\[boards\] count: expected an integer >= 1"),
        ("[boards]\ncount = true\n", r"\[boards\] count: expected an integer"),
        ("[boards]\nseed = -1\n", r"\[boards\] seed: expected an integer >= 0"),
        ('[boards]\nsource = "magic"\n', r"\[boards\] source: expected one of 'generate', 'ingest'"),
        ('[boards]\nshape = "4by4"\n', r"\[boards\] shape: expected a shape RxC"),
        ("[boards]\nfiles = [1]\n", r"\[boards\] files: expected a list of non-empty strings"),
        ("[run]\nn_jobs = 0\n", r"\[run\] n_jobs: expected a non-zero integer"),
        ('[run]\nbackend = "spark"\n', r"\[run\] backend: expected one of 'loky', 'threading', 'dask'"),
        ('[rules]\nname = "scrabble"\n', r"\[rules\] name: expected one of 'boggle', 'big', 'superbig'"),
        ("[rules]\nscores = {three = 1}\n", r"\[rules\] scores: 'three' = 1: lengths and points"),
        ("[rules]\nrevisit = 1\n", r"\[rules\] revisit: expected true or false"),
        ("[rules]\nmin_length = 0\n", r"\[rules\] min_length: expected an integer >= 1, got 0"),
        ("[rules]\nscores = {}\n", r"\[rules\] scores: expected a table of length = points"),
        ("[boards]\nseed = 1" + "0" * 50 + "\n", r"\[boards\] seed: at most 340,28.*, got a 51-digit number"),
        ("boards = 3\n", r"\[boards\] must be a table"),
        ("[boards\n", r"not valid TOML"),
    ],
)
def test_bad_values_are_rejected(tmp_path: Path, toml: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_config(write(tmp_path, toml))


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="config file not found"):
        load_config(tmp_path / "nope.toml")


def test_overrides_beat_the_file_and_none_is_ignored(tmp_path: Path) -> None:
    path = write(tmp_path, "[boards]\ncount = 10\nseed = 3\n[run]\nn_jobs = 2\n")
    cfg = load_config(path, {"boards.count": 99, "boards.seed": None, "run.out": str(tmp_path / "o")})
    assert cfg.boards.count == 99 and cfg.boards.seed == 3 and cfg.run.n_jobs == 2
    assert cfg.run.out == str(tmp_path / "o")
    # overrides are validated like the file
    with pytest.raises(ConfigError, match="count: expected an integer >= 1"):
        load_config(path, {"boards.count": -5})
    with pytest.raises(ConfigError, match="unknown key in \\[run\\] 'jobs'"):
        load_config(path, {"run.jobs": 3})


def test_set_assignments_parse_toml_values(tmp_path: Path) -> None:
    assert parse_assignment("boards.count=1000") == ("boards.count", 1000)
    assert parse_assignment("boards.dice = classic") == ("boards.dice", "classic")
    assert parse_assignment('boards.files=["a.txt", "b.txt"]') == ("boards.files", ["a.txt", "b.txt"])
    cfg = load_config(None, assignments=["rules.scores={3=2, 4=2}", "rules.revisit=true"])
    assert dict(cfg.rules.scores or {}) == {3: 2, 4: 2} and cfg.rules.revisit is True
    assert cfg.rule_set().points(3) == 2
    with pytest.raises(ConfigError, match=r"expected section\.key=value"):
        parse_assignment("count")


def test_resolution_fills_dependent_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BOGGLE_DICTIONARY", "/words.txt")
    big = load_config(None, {"boards.dice": "big1979"})
    assert big.boards.shape == "5x5" and big.rules.name == "big" and big.rules.min_length == 4
    assert big.lexicon.path == "/words.txt"
    uniform = load_config(None, {"boards.dice": "uniform", "boards.shape": "3x5"})
    assert uniform.boards.shape == "3x5" and uniform.rules.name == "boggle"
    six = load_config(None, {"boards.dice": "superbig"})
    assert six.boards.shape == "6x6" and six.rules.name == "superbig"
    assert six.rule_set().points(10) == 20  # per-letter scoring kept through resolution
    # resolving twice changes nothing
    assert six.resolve() == six and big.resolve() == big


def test_inconsistent_values_are_rejected() -> None:
    with pytest.raises(ConfigError, match=r"\[boards\] shape: dice set 'new' rolls 4x4 boards, not 5x5"):
        load_config(None, {"boards.shape": "5x5"})
    with pytest.raises(ConfigError, match=r"\[boards\] dice: unknown dice set 'nwe'"):
        load_config(None, {"boards.dice": "nwe"})
    with pytest.raises(ConfigError, match=r"\[boards\] files: source = \"ingest\" needs input files"):
        load_config(None, {"boards.source": "ingest"})
    with pytest.raises(ConfigError, match="no file matches"):
        load_config(None, {"boards.source": "ingest", "boards.files": ["/nonexistent/*.txt"]})


def test_to_dict_round_trips_and_data_dict_leaves_out_run(tmp_path: Path) -> None:
    cfg = load_config(REPO / "configs" / "smoke.toml", {"run.out": str(tmp_path)})
    again = config_from_dict(cfg.to_dict()).resolve()
    assert again.to_dict() == cfg.to_dict()
    data = cfg.data_dict()
    assert "run" not in data and "files" not in data["boards"] and data["boards"]["seed"] == 1
    faster = load_config(REPO / "configs" / "smoke.toml", {"run.out": str(tmp_path), "run.n_jobs": 1})
    assert faster.data_dict() == data  # how it runs is not what it computes


def test_ingest_files_expand_globs_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("b.txt", "a.txt", "c.csv"):
        (tmp_path / name).write_text("x\n")
    monkeypatch.chdir(tmp_path)
    cfg = load_config(None, {"boards.source": "ingest", "boards.files": ["*.txt", "c.csv"]})
    assert cfg.boards.files == ("a.txt", "b.txt", "c.csv")
    data = cfg.data_dict()["boards"]
    assert "dice" not in data and "seed" not in data and data["files"] == ["a.txt", "b.txt", "c.csv"]


def test_errors_are_boggle_errors_with_exit_code_2() -> None:
    with pytest.raises(BoggleError) as info:
        config_from_dict({"run": {"n_jobs": "all"}})
    assert info.value.exit_code == 2


def test_the_default_config_resolves_like_an_empty_file(tmp_path: Path) -> None:
    cfg = RunConfig().resolve()
    # the defaults that depend on others are filled in: new dice roll 4x4 boards, standard rules
    assert (cfg.boards.shape, cfg.rules.name, cfg.rules.min_length) == ("4x4", "boggle", 3)
    assert Path(cfg.run.out).is_absolute() and cfg.lexicon.path is not None
    assert load_config(None) == cfg == config_from_dict({}).resolve()


def test_a_literal_field_takes_a_string_and_its_class_names_the_choices(tmp_path: Path) -> None:
    from pipeline.best.optimize import OptimizeConfig
    from pipeline.config import load_section

    path = tmp_path / "opt.toml"
    path.write_text('[optimize]\nstrategy = "hill"\nbackend = "threading"\n', encoding="utf-8")
    cfg = load_section(path, "optimize", OptimizeConfig)
    assert (cfg.strategy, cfg.backend) == ("hill", "threading")
    with pytest.raises(ConfigError, match=r"\[optimize\] strategy: expected a non-empty string, got 3"):
        load_section(None, "optimize", OptimizeConfig, {"optimize.strategy": 3})
    with pytest.raises(
        ConfigError, match=r"\[optimize\] backend: expected one of 'loky', 'threading', got 'dask'"
    ) as info:
        load_section(path, "optimize", OptimizeConfig, {"optimize.backend": "dask"})
    assert info.value.source == str(path)
    with pytest.raises(ConfigError, match=r"\[run\] backend: expected one of 'loky', 'threading', 'dask'"):
        config_from_dict({"run": {"backend": "spark"}})


@pytest.mark.parametrize(
    ("section", "key", "value", "message"),
    [
        ("boards", "count", 0, "[boards] count: expected an integer >= 1, got 0"),
        ("boards", "count", True, "[boards] count: expected an integer, got True"),
        ("boards", "files", ["a", ""], "[boards] files: expected a list of non-empty strings"),
        ("boards", "words", "yes", "[boards] words: expected true or false, got 'yes'"),
        ("boards", "shape", "4by4", "[boards] shape: expected a shape RxC, e.g. \"4x4\", got '4by4'"),
        ("rules", "scores", {"x": 1}, "[rules] scores: 'x' = 1: lengths and points must be whole numbers"),
        ("rules", "name", "chess", "[rules] name: expected one of 'boggle', 'big', 'superbig', got 'chess'"),
        ("run", "n_jobs", 0, "[run] n_jobs: expected a non-zero integer (-1 = all cores), got 0"),
        ("lexicon", "path", " ", "[lexicon] path: expected a non-empty string, got ' '"),
    ],
)
def test_each_kind_of_bad_value_is_one_line_naming_the_key(
    section: str, key: str, value: object, message: str
) -> None:
    with pytest.raises(ConfigError) as info:
        config_from_dict({section: {key: value}})
    assert info.value.one_line().startswith(message)


def test_a_section_is_checked_from_its_field_types() -> None:
    @dataclass(frozen=True)
    class Section:
        mode: Literal["fast", "exact"] = "fast"
        depth: Annotated[int | None, Bounds(0, 9)] = None
        ratio: float = 0.5
        tags: tuple[str, ...] = ()

    assert check_value(Section, "ratio", 1, "[s] ratio") == 1.0  # an int is taken for a float
    assert check_value(Section, "tags", "a", "[s] tags") == ("a",)
    with pytest.raises(
        ConfigError, match=r"^cfg\.toml: \[s\] mode: expected one of 'fast', 'exact', got 'slow'$"
    ):
        check_value(Section, "mode", "slow", "[s] mode", "cfg.toml")
    with pytest.raises(ConfigError, match=r"^\[s\] depth: at most 9, got 12$"):
        check_value(Section, "depth", 12, "[s] depth")
    with pytest.raises(ConfigError, match=r"^\[s\] ratio: expected a number, got True$"):
        check_value(Section, "ratio", True, "[s] ratio")


def test_a_field_type_without_a_check_is_refused() -> None:
    @dataclass(frozen=True)
    class Section:
        when: bytes = b""

    with pytest.raises(TypeError, match=r"Section\.when: no check for the type"):
        check_value(Section, "when", b"x", "[s] when")
