"""The provenance columns of schema 4 (run_id, seed, dice; source dictionary-encoded), and runs
written before them refused by every reader in one line that says how to migrate them."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import pipeline
import pipeline.store._schema as store_schema
from pipeline import store
from pipeline.cli import app
from pipeline.config import load_config
from pipeline.errors import BoggleError
from pipeline.runner import run_job
from tests.conftest import read_side_json, write_side

REPO = Path(__file__).resolve().parents[1]
CLI = CliRunner()


def small_run(enable2k: str, out: Path, seed: int) -> Path:
    overrides = {
        "run.out": str(out),
        "run.n_jobs": 1,
        "run.backend": "threading",
        "lexicon.path": enable2k,
        "boards.count": 30,
        "boards.chunk_size": 10,
        "boards.seed": seed,
    }
    run_job(load_config(REPO / "configs" / "smoke.toml", overrides))
    return out


@pytest.fixture(scope="module")
def two_seeds(tmp_path_factory: pytest.TempPathFactory, enable2k_path: str) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("prov")
    return small_run(enable2k_path, base / "s1", 1), small_run(enable2k_path, base / "s2", 2)


def as_schema_3(run: Path, dest: Path, reseal: Any) -> Path:
    """A copy of ``run`` as a schema-3 writer left it: no run_id, seed, dice; source plain; its
    manifest says schema 3."""
    shutil.copytree(run, dest)
    for part in sorted(dest.glob("part-*.parquet")):
        table = pq.read_table(part)
        meta = table.schema.metadata
        table = table.drop(["run_id", "seed", "dice"])
        i = table.schema.get_field_index("source")
        table = table.set_column(
            i, pa.field("source", pa.string(), nullable=False), table["source"].cast(pa.string())
        )
        pq.write_table(table.replace_schema_metadata(meta), part)
    manifest = read_side_json(dest)
    write_side(dest, "_SUCCESS", {**manifest, "schema_version": 3})
    reseal(dest)
    return dest


def test_two_seeds_of_one_config_tell_apart(two_seeds: tuple[Path, Path]) -> None:
    both = pipeline.read_run(list(two_seeds), columns=["board_id", "run_id", "seed", "dice", "source"])
    assert both.num_rows == 60
    for name in ("run_id", "seed", "dice", "source"):
        assert pa.types.is_dictionary(both.schema.field(name).type), name
    groups = both.group_by(["run_id", "seed"]).aggregate([("board_id", "count")]).to_pylist()
    assert sorted((g["seed"], g["board_id_count"]) for g in groups) == [("1", 30), ("2", 30)]
    assert len({g["run_id"] for g in groups}) == 2
    for run in two_seeds:
        manifest = read_side_json(run)
        ids = set(pipeline.read_run(run, columns=["run_id"])["run_id"].to_pylist())
        assert (
            ids == {store.run_id_of(manifest["identity"])}
            and manifest["schema_version"] == store.SCHEMA_VERSION == 6
        )
    assert set(both["dice"].to_pylist()) == {"new"}
    df = pipeline.read_run_pandas(list(two_seeds), columns=["seed", "score"])
    assert str(df["seed"].dtype) == "category"
    rel = pipeline.run_relation(list(two_seeds)).aggregate("seed, count(*)", "seed").order("seed").fetchall()
    assert rel == [("1", 30), ("2", 30)]


def test_ingest_rows_have_null_seed_and_dice(tmp_path: Path, enable2k_path: str) -> None:
    src = tmp_path / "in.txt"
    src.write_text("perslatgsineters\nabcdefghijklmnop\n")
    out = tmp_path / "ingest"
    smoke = str(REPO / "configs" / "smoke.toml")
    args = [
        "run",
        smoke,
        "-i",
        str(src),
        "-d",
        enable2k_path,
        "-o",
        str(out),
        "-q",
        "--set",
        'run.backend="threading"',
    ]
    res = CLI.invoke(app, args)
    assert res.exit_code == 0, res.output
    t = pipeline.read_run(out, columns=["seed", "dice", "source", "run_id"])
    assert t["seed"].null_count == t["dice"].null_count == 2 and t["run_id"].null_count == 0
    assert set(t["source"].to_pylist()) == {str(src)} and pa.types.is_dictionary(
        t.schema.field("source").type
    )


@pytest.mark.integration
def test_schema_3_runs_are_refused_alone_and_with_new_ones(
    two_seeds: tuple[Path, Path], tmp_path: Path, reseal: Any
) -> None:
    new = two_seeds[0]
    old = as_schema_3(new, tmp_path / "old", reseal)
    assert "run_id" not in pq.read_schema(next(old.glob("part-*.parquet"))).names
    readers = (pipeline.read_run, pipeline.read_run_pandas, pipeline.run_relation, pipeline.scan_run_polars)
    for read in readers:
        for runs in (old, [new, old]):
            with pytest.raises(BoggleError, match=f"{old}: a run of schema 3, which this release no longer"):
                read(runs)  # type: ignore[operator]
    res = CLI.invoke(app, ["analyze", str(new), str(old), "--out", str(tmp_path / "rep"), "-q"])
    assert res.exit_code == 2, res.output
    assert res.output.strip() == (
        f"error: {old}: a run of schema 3, which this release no longer reads (it reads schema "
        f"{store_schema.READABLE_VERSIONS[0]} to {store.SCHEMA_VERSION}): re-run its config with "
        "`boggle run --overwrite` to write it anew"
    )
