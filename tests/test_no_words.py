"""Scores-only runs (``[boards] words = false`` / ``boggle run --no-words``): no ``words``
column, every other column as in a run with words; the setting is part of the run's identity;
readers and ``boggle analyze`` work on such runs, alone and mixed with runs that have words."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from pipeline import read_run, read_run_pandas, run_relation, scan_run_polars, store
from pipeline.analyze import analyze_runs
from pipeline.cli import app
from pipeline.config import load_config
from pipeline.errors import BoggleError, OutputConflictError
from pipeline.runner import execute
from pipeline.store._parts import part_record_path
from tests.conftest import read_side_json, side_path

CLI = CliRunner()


def config(enable2k: str, out: Path, words: bool):  # type: ignore[no-untyped-def]
    return load_config(
        None,
        {
            "boards.dice": "new",
            "boards.count": 1200,
            "boards.seed": 4,
            "boards.chunk_size": 500,
            "boards.words": words,
            "lexicon.path": enable2k,
            "run.out": str(out),
        },
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, enable2k_path: str) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("nowords")
    out = {"with": base / "with", "without": base / "without"}
    for name, words in (("with", True), ("without", False)):
        execute(config(enable2k_path, out[name], words), n_jobs=1)
    return out


def test_no_words_column_and_the_other_columns_equal(runs: dict[str, Path], enable2k_path: str) -> None:
    with_words, without = read_run(runs["with"]), read_run(runs["without"])
    assert "words" in with_words.column_names and "words" not in without.column_names
    # every column but run_id (the identity differs: [boards] words = false is part of it)
    assert without.drop(["run_id"]).equals(with_words.drop(["words", "run_id"]))
    assert without["run_id"].unique().to_pylist() != with_words["run_id"].unique().to_pylist()
    parts = sorted(runs["without"].glob("part-*.parquet"))
    assert len(parts) == 3
    cfg = config(enable2k_path, runs["without"], False)
    for p in parts:
        arrow = pq.ParquetFile(p).schema_arrow
        assert "words" not in arrow.names
        assert arrow.remove_metadata().equals(store.board_schema(3, words=False))
        assert json.loads(arrow.metadata[b"boggle.config"]) == cfg.data_dict()
        assert cfg.data_dict()["boards"]["words"] is False
    manifest = read_side_json(runs["without"])
    assert "words" not in manifest["columns"] and "n_words" in manifest["columns"]
    assert manifest["config"]["boards"]["words"] is False
    # a run with words records nothing new: same identity and part metadata as before the setting
    words_cfg = config(enable2k_path, runs["with"], True)
    assert "words" not in words_cfg.data_dict()["boards"] and words_cfg.to_dict()["boards"]["words"] is True
    meta = pq.ParquetFile(runs["with"] / "part-00000.parquet").schema_arrow.metadata
    assert b'"words"' not in meta[b"boggle.config"]
    assert sum(p.stat().st_size for p in parts) < sum(
        p.stat().st_size for p in runs["with"].glob("part-*.parquet")
    )


def test_readers_work_without_words(runs: dict[str, Path]) -> None:
    df = read_run_pandas(runs["without"], columns=["board_id", "score", "n_words"])
    assert len(df) == 1200 and df["n_words"].sum() > 0
    rel = run_relation(runs["without"])
    assert "words" not in rel.columns and rel.aggregate("count(*)").fetchall() == [(1200,)]
    mixed = read_run([runs["with"], runs["without"]])
    assert mixed.num_rows == 2400 and mixed.column("words").null_count == 1200
    rel2 = run_relation([runs["with"], runs["without"]])
    assert rel2.filter("words IS NULL").aggregate("count(*)").fetchall() == [(1200,)]
    polars = pytest.importorskip("polars")
    lf = scan_run_polars(runs["without"])
    assert "words" not in lf.collect_schema().names()
    assert lf.select(polars.col("score").sum()).collect().item() == int(df["score"].sum())


def test_modes_never_mix_in_one_run_dir(runs: dict[str, Path], tmp_path: Path, enable2k_path: str) -> None:
    # a finished run with words is refused for a run without (and back), naming the setting
    copy = tmp_path / "copy"
    shutil.copytree(runs["with"], copy)
    with pytest.raises(OutputConflictError, match=r"data\.boards\.words: true there, false now"):
        execute(config(enable2k_path, copy, False), n_jobs=1)
    shutil.copytree(runs["without"], tmp_path / "copy2")
    with pytest.raises(OutputConflictError, match=r"data\.boards\.words: false there, true now"):
        execute(config(enable2k_path, tmp_path / "copy2", True), n_jobs=1)
    # --overwrite replaces it: the parts lose their words column
    done = execute(config(enable2k_path, copy, False), n_jobs=1, overwrite=True)
    assert done.chunks_reused == 0
    assert read_run(copy).equals(read_run(runs["without"]))
    # a part written with words (its record copied too) in an unfinished run without words is
    # named and recomputed, never reused
    side_path(copy).unlink()
    shutil.copy(runs["with"] / "part-00001.parquet", copy / "part-00001.parquet")
    shutil.copy(part_record_path(runs["with"], 1), part_record_path(copy, 1))
    notes: list[str] = []
    again = execute(config(enable2k_path, copy, False), n_jobs=1, note=notes.append)
    assert again.chunks_reused == 2 and len(notes) == 1 and "part-00001.parquet" in notes[0]
    assert {p.name: p.read_bytes() for p in copy.glob("part-*.parquet")} == {
        p.name: p.read_bytes() for p in runs["without"].glob("part-*.parquet")
    }


def test_cli_no_words_end_to_end(tmp_path: Path, enable2k_path: str) -> None:
    out = tmp_path / "run"
    job = tmp_path / "job.toml"
    job.write_text(
        f'[boards]\ncount = 600\nchunk_size = 300\nseed = 1\n[lexicon]\npath = "{enable2k_path}"\n'
        f'[run]\nout = "{out}"\nn_jobs = 1\n',
        encoding="utf-8",
    )
    first = CLI.invoke(app, ["run", str(job), "-q", "--no-words"])
    assert first.exit_code == 0, first.output
    assert "words" not in pq.read_schema(out / "part-00000.parquet").names
    same = CLI.invoke(app, ["run", str(job), "-q", "--set", "boards.words=false"])
    assert same.exit_code == 0 and "already complete" in same.output
    other = CLI.invoke(app, ["run", str(job), "-q", "--words"])
    assert other.exit_code == 4 and "data.boards.words: false there, true now" in other.output
    assert "--overwrite" in other.output
    typo = CLI.invoke(app, ["run", str(job), "-q", "--set", "boards.word=false"])
    assert typo.exit_code == 2 and "did you mean 'words'?" in typo.output
    bad = CLI.invoke(app, ["run", str(job), "-q", "--set", "boards.words=1"])
    assert bad.exit_code == 2 and "[boards] words: expected true or false" in bad.output
    forced = CLI.invoke(app, ["run", str(job), "-q", "--words", "--overwrite"])
    assert forced.exit_code == 0 and "words" in pq.read_schema(out / "part-00000.parquet").names


@pytest.mark.integration
def test_analyze_a_run_without_words(runs: dict[str, Path], tmp_path: Path) -> None:
    result = analyze_runs([runs["without"]], tmp_path / "rep")
    page = result.report.read_text(encoding="utf-8")
    assert "No word lists in without ([boards] words = false)" in page
    assert 'id="words"' not in page and "Most frequent words" not in page
    assert "(not recorded)" in page and 'id="top"' in page
    assert result.tables.frequent_words.empty and len(result.tables.top_boards) > 0
    cli = CLI.invoke(app, ["analyze", str(runs["without"]), "--out", str(tmp_path / "cli"), "-q"])
    assert cli.exit_code == 0 and "Traceback" not in cli.output


@pytest.mark.integration
def test_analyze_mixed_runs_treats_words_as_absent_for_the_run_without(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    result = analyze_runs([runs["with"], runs["without"]], tmp_path / "rep")
    page = result.report.read_text(encoding="utf-8")
    assert page.count("No word lists in") == 1 and "No word lists in without " in page
    assert 'id="words"' in page
    freq = result.tables.frequent_words
    assert set(freq["run"]) == {"with"} and len(freq) > 0
    top = result.tables.top_boards
    assert top.loc[top["run"] == "without", "words"].isna().all()
    assert top.loc[top["run"] == "with", "words"].notna().all()


def test_columns_a_scores_only_run_lacks_are_null_as_without_columns(runs: dict[str, Path]) -> None:
    """``read_run([with_words, scores_only], columns=[..., "words"])`` gives the same table as
    reading every column and selecting: null words for the scores-only run, not an error. A
    column no run has is still refused."""
    both = [runs["with"], runs["without"]]
    picked = read_run(both, columns=["score", "words"])
    assert picked.column_names == ["score", "words"]
    assert picked.equals(read_run(both).select(["score", "words"]))
    n_with = read_run(runs["with"], columns=["score"]).num_rows
    words = picked["words"].to_pylist()
    assert all(w is not None for w in words[:n_with]) and words[n_with:] == [None] * (len(words) - n_with)
    assert picked["score"].to_pylist() == read_run(both, columns=["score"])["score"].to_pylist()
    # the other order: the column's type comes from the run that has it
    assert read_run(both[::-1], columns=["words", "score"]).column_names == ["words", "score"]
    with pytest.raises(BoggleError, match=r"no run of .* has column\(s\) nope"):
        read_run(both, columns=["score", "nope"])
    with pytest.raises(BoggleError, match=r"no column\(s\) words"):
        read_run(runs["without"], columns=["words"])
