"""A finished run directory is a dataset: pandas, pyarrow, polars and DuckDB read it as it is,
with no option, and get exactly its boards (a folder of runs too); every row names its lexicon,
rules and source; ``read_run`` and friends read one run or several, of this schema or the one
before (tests/data/schema5)."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

import pipeline
from pipeline import store
from pipeline.errors import BoggleError, DamagedRunError
from pipeline.lexicon import load_lexicon
from pipeline.runner import execute, run_job
from pipeline.store._pack import BASE64_KEY, SUFFIX, TEXT_KEY
from pipeline.store._schema import LOCK_FILE, PARTS_DIR, RUN_RECORD
from pipeline.store.dataset import repo_root, resolve_run_dir
from tests.conftest import REPO, gen_config, ingest_config, read_side_json, side_path, write_side

SCHEMA5 = REPO / "tests" / "data" / "schema5"  # runs of the layout before packed side files


def board_ids_by_reader(run: Path, skip: tuple[str, ...] = ()) -> dict[str, list[int]]:
    """board_id of every row each reader returns for the run directory (or folder of runs)
    itself, as it is: no option (the globs people also write are checked too)."""

    def duck(sql: str) -> list[int]:
        return sorted(r[0] for r in duckdb.sql(sql).fetchall())

    readers = {
        "pandas": lambda: sorted(pd.read_parquet(run)["board_id"]),
        "pyarrow.dataset": lambda: sorted(
            ds.dataset(run).to_table(columns=["board_id"])["board_id"].to_pylist()
        ),
        "pyarrow.parquet": lambda: sorted(pq.read_table(run, columns=["board_id"])["board_id"].to_pylist()),
        "polars scan dir": lambda: sorted(pl.scan_parquet(run).select("board_id").collect()["board_id"]),
        "polars read dir": lambda: sorted(pl.read_parquet(run)["board_id"]),
        "polars glob": lambda: sorted(
            pl.scan_parquet(f"{run}/**/*.parquet").select("board_id").collect()["board_id"]
        ),
        "duckdb dir": lambda: duck(f"SELECT board_id FROM read_parquet('{run}')"),
        "duckdb **": lambda: duck(f"SELECT board_id FROM read_parquet('{run}/**/*.parquet')"),
    }
    return {name: read() for name, read in readers.items() if name not in skip}


def manifest_of(run: Path) -> dict[str, Any]:
    return read_side_json(run)  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def gen_run(tmp_path_factory: pytest.TempPathFactory, enable2k_path: str) -> Path:
    out = tmp_path_factory.mktemp("gen") / "run"
    execute(gen_config(enable2k_path, out, boards__count=700, boards__chunk_size=250), n_jobs=1)
    return out


@pytest.fixture(scope="module")
def short_words(tmp_path_factory: pytest.TempPathFactory, enable2k_path: str) -> Path:
    """A second word list: ENABLE2K's words of at most 5 letters (another name and hash)."""
    path = tmp_path_factory.mktemp("lex") / "short5.txt"
    words = [w for w in load_lexicon(enable2k_path).words if len(w) <= 5]
    path.write_text("\n".join(words) + "\n")
    return path


@pytest.fixture(scope="module")
def short_run(tmp_path_factory: pytest.TempPathFactory, short_words: Path, enable2k_path: str) -> Path:
    """Same dice and seed as gen_run (chunk 0 holds the same boards), solved with the short
    list and min_length 4."""
    out = tmp_path_factory.mktemp("short") / "run"
    cfg = gen_config(
        enable2k_path,
        out,
        boards__count=400,
        boards__chunk_size=250,
        lexicon__path=str(short_words),
        rules__min_length=4,
    )
    execute(cfg, n_jobs=1)
    return out


@pytest.fixture(scope="module")
def ingest_run(tmp_path_factory: pytest.TempPathFactory, enable2k_path: str) -> Path:
    tmp = tmp_path_factory.mktemp("ingest")
    config = ingest_config(tmp, enable2k_path)
    from pipeline.runner import run_from_file

    summary = run_from_file(config)
    assert summary.rejected == 4  # the case the rejects file must not break
    return tmp / "run"


# ---------------------------------------------------------------- the directory as a dataset


@pytest.mark.parametrize("which", ["gen_run", "ingest_run"])
def test_every_reader_reads_exactly_the_runs_boards(which: str, request: pytest.FixtureRequest) -> None:
    run: Path = request.getfixturevalue(which)
    n = manifest_of(run)["counts"]["boards"]
    assert n > 0
    got = board_ids_by_reader(run)
    assert got == {reader: list(range(n)) for reader in got}


def pack_keys(path: Path) -> set[bytes]:
    """The payload key of a packed side file's footer (text or base64)."""
    return set(pq.read_metadata(path).metadata) & {TEXT_KEY, BASE64_KEY}


def test_every_file_that_is_not_a_part_is_an_empty_table_of_the_runs_schema(
    gen_run: Path, ingest_run: Path
) -> None:
    """Why every engine reads the folder as it is: each side file is a Parquet file of no rows
    with the parts' schema (pipeline.store._pack), its name hidden (``_``) from the readers that
    skip such names, and no lock is left."""
    for run in (gen_run, ingest_run):
        names = sorted(p.name for p in run.iterdir())
        parts = [p["file"] for p in manifest_of(run)["parts"]]
        side = [n + SUFFIX for n in (store.MANIFEST, store.REJECTS, store.VOCABULARY, RUN_RECORD)]
        assert names == sorted([*side, PARTS_DIR, *parts]) and LOCK_FILE not in names
        schema = pq.read_schema(run / parts[0]).remove_metadata()
        others = [p for p in run.rglob("*") if p.is_file() and p.name not in parts]
        assert len(others) == 4 + 2 * len(parts)  # the side files, each part's record and statistics
        for path in others:
            assert path.name[0] == "_" and path.suffix == ".parquet", path
            assert pq.read_metadata(path).num_rows == 0
            assert pq.read_schema(path).remove_metadata() == schema
            # the payload is in the footer once: not again inside the stored Arrow schema
            keys = pack_keys(path)
            assert len(keys) == 1 and set(pq.read_metadata(path).metadata) == {b"ARROW:schema", *keys}
            assert not (set(pq.read_schema(path).metadata or {}) & keys)
    assert len(store.read_rejects(ingest_run)) == 4
    assert manifest_of(ingest_run)["rejects_file"] == "_rejects.csv"


def test_a_folder_of_nightly_runs_reads_as_one_table_with_one_date_column(
    tmp_path: Path, enable2k_path: str
) -> None:
    """Runs made for dates, side by side under one folder (`RUNS/DATE/`): every engine reads the
    folder as it is, and the date is one column, ``run_date``, a date in every engine (no Hive
    ``date=`` folder adds a second one, as text in some engines)."""
    import datetime

    from pipeline.config import load_config

    nightly = tmp_path / "nightly"
    for day in ("2026-12-01", "2026-12-02"):
        values = {
            "boards.count": 60,
            "boards.chunk_size": 30,
            "boards.seed": "date",
            "lexicon.path": enable2k_path,
        }
        run_job(
            load_config(None, {**values, "run.out": str(nightly / day)}, day=datetime.date.fromisoformat(day))
        )
    got = board_ids_by_reader(nightly)
    assert got == {reader: sorted([*range(60), *range(60)]) for reader in got}
    want = {datetime.date(2026, 12, 1): 60, datetime.date(2026, 12, 2): 60}
    frame = pd.read_parquet(nightly)
    assert [c for c in frame.columns if "date" in c] == ["run_date"]
    assert frame["run_date"].value_counts().to_dict() == want
    lazy = pl.scan_parquet(nightly)
    assert lazy.collect_schema()["run_date"] == pl.Date and "date" not in lazy.collect_schema()
    assert dict(lazy.group_by("run_date").len().collect().iter_rows()) == want
    rows = duckdb.sql(
        f"SELECT run_date, typeof(run_date), count(*) FROM '{nightly}/**/*.parquet' GROUP BY ALL"
    ).fetchall()
    assert {r[0]: r[2] for r in rows} == want and {r[1] for r in rows} == {"DATE"}
    hive = duckdb.sql(
        f"SELECT count(*) FROM read_parquet('{nightly}/**/*.parquet', hive_partitioning = true)"
    )
    assert hive.fetchall() == [(120,)]
    assert ds.dataset(nightly).schema.field("run_date").type == pa.date32()


def test_runs_of_schema_5_read_with_every_reader_of_the_package(tmp_path: Path) -> None:
    """A run written before packed side files (schema 5: plain JSON and CSV beside the parts,
    Hive ``date=`` folders, Qu written ``q``) reads with every reader of the package, and the
    engines that skip ``_`` names read its parts as before."""
    old = tmp_path / "schema5"
    shutil.copytree(SCHEMA5, old)
    night = old / "nightly" / "date=2026-12-01"
    assert (night / store.MANIFEST).is_file() and not (night / (store.MANIFEST + SUFFIX)).exists()
    assert pipeline.read_run(night).num_rows == 40
    both = [night, old / "nightly" / "date=2026-12-02"]
    assert pipeline.read_run_pandas(both, columns=["run_date"])["run_date"].nunique() == 2
    assert pipeline.run_relation(both).count("*").fetchall() == [(80,)]
    assert pipeline.scan_run_polars(both).select(pl.len()).collect().item() == 80
    assert len(store.read_rejects(old / "ingest")) == 2
    assert pd.read_parquet(night).shape[0] == 40  # pandas skips the plain side files by name
    with pytest.raises(pl.exceptions.InvalidOperationError):  # what schema 6 is for
        pl.scan_parquet(night).collect()


def test_a_part_being_written_is_never_read(gen_run: Path, tmp_path: Path) -> None:
    """A writer's temp file (what a crashed or running worker leaves) is invisible to the
    readers that skip hidden names, and polars, which reads every file of a folder, refuses
    the folder (its names differ in extension) rather than read it."""
    run = tmp_path / "run"
    shutil.copytree(gen_run, run)
    src = run / store.part_name(0)
    (run / f".{store.part_name(3)}.4242.tmp").write_bytes(src.read_bytes())  # a whole part
    (run / LOCK_FILE).write_text("4242")  # as a killed run leaves it
    n = manifest_of(run)["counts"]["boards"]
    with pytest.raises(pl.exceptions.InvalidOperationError):
        pl.scan_parquet(run).collect()
    got = {
        reader: ids
        for reader, ids in board_ids_by_reader(run, skip=("polars scan dir", "polars read dir")).items()
    }
    assert got == {reader: list(range(n)) for reader in got}


def test_optimize_output_reads_as_a_dataset(tmp_path: Path, enable2k_path: str) -> None:
    from pipeline.best.optimize import OptimizeConfig, run_optimize

    out = tmp_path / "opt"
    cfg = OptimizeConfig(
        enable2k_path, strategy="hill", restarts=2, iterations=2, pool_size=8, keep=4, out=str(out), n_jobs=1
    )
    run_optimize(cfg)
    assert sorted(p.name for p in out.iterdir()) == ["_SUCCESS", "_parts", "_run.json", "part-00000.parquet"]
    want = pq.read_table(out / "part-00000.parquet")["board"].to_pylist()
    assert pd.read_parquet(out)["board"].tolist() == want
    assert ds.dataset(out).to_table()["board"].to_pylist() == want
    assert pl.scan_parquet(out, hidden_file_prefix=["_"]).collect()["board"].to_list() == want
    assert [r[0] for r in duckdb.sql(f"SELECT board FROM '{out}/*.parquet'").fetchall()] == want


# ---------------------------------------------------------------- provenance columns


def test_rows_name_their_lexicon_rules_and_source(gen_run: Path, short_run: Path, ingest_run: Path) -> None:
    for run, rules in ((gen_run, "boggle"), (ingest_run, "boggle")):
        m = manifest_of(run)
        t = pq.read_table(run, columns=["lexicon", "lexicon_hash", "rules", "source"])
        assert set(t["lexicon"].to_pylist()) == {"enable2k"} == {m["lexicon"]["name"]}
        assert set(t["lexicon_hash"].to_pylist()) == {m["lexicon"]["content_hash"][:12]}
        assert set(t["rules"].to_pylist()) == {rules}
        assert pa.types.is_dictionary(t.schema.field("lexicon").type)
    assert set(pq.read_table(gen_run)["source"].to_pylist()) == {"new"}  # the dice set
    inputs = {i["file"] for i in manifest_of(ingest_run)["inputs"]}
    assert set(pq.read_table(ingest_run)["source"].to_pylist()) == inputs  # the files
    # overridden rules: the preset name plus a hash of what they resolved to
    short = pq.read_table(short_run, columns=["rules", "lexicon"])
    m = manifest_of(short_run)
    from pipeline.rules import Rules

    resolved = Rules(**{**m["rules"], "scores": {int(k): v for k, v in m["rules"]["scores"].items()}})
    digest = hashlib.sha256(resolved.key().encode()).hexdigest()[:8]
    assert set(short["rules"].to_pylist()) == {f"boggle+{digest}"}
    assert set(short["lexicon"].to_pylist()) == {"short5.txt"}


def test_two_lexicons_read_together_separate_by_lexicon(gen_run: Path, short_run: Path) -> None:
    want = {"enable2k": 700, "short5.txt": 400}
    both = f"['{gen_run}/*.parquet', '{short_run}/*.parquet']"
    rows = duckdb.sql(f"SELECT lexicon, count(*) FROM read_parquet({both}, union_by_name = true) GROUP BY 1")
    assert dict(rows.fetchall()) == want
    table = ds.dataset([ds.dataset(gen_run), ds.dataset(short_run)]).to_table(
        columns=["lexicon", "score", "board_id"]
    )
    counts = table.unify_dictionaries().group_by("lexicon").aggregate([([], "count_all")]).to_pylist()
    assert {r["lexicon"]: r["count_all"] for r in counts} == want
    # the same boards score differently under the two lexicons: the column is what separates them
    frame = pipeline.read_run_pandas([gen_run, short_run], columns=["board_id", "board", "lexicon", "score"])
    by_lex = {str(k): g for k, g in frame.groupby("lexicon", observed=True)}
    same = by_lex["enable2k"].merge(by_lex["short5.txt"], on=["board_id", "board"])
    assert len(same) >= 250  # chunk 0 holds the same boards in both runs
    assert (same["score_y"] < same["score_x"]).any() and (same["score_y"] <= same["score_x"]).all()


# ---------------------------------------------------------------- the API


def test_read_run_one_and_several(gen_run: Path, short_run: Path) -> None:
    one = pipeline.read_run(gen_run)
    assert one.num_rows == 700 and one["board_id"].to_pylist() == list(range(700))
    assert one.equals(store.read_run_table(gen_run).unify_dictionaries())
    both = pipeline.read_run([gen_run, short_run])
    assert both.num_rows == 1100
    assert both["board_id"].to_pylist() == [*range(700), *range(400)]
    # short_run has min_length 4 and the same length columns; a column only one run had is null
    assert both.group_by("lexicon").aggregate([([], "count_all")]).num_rows == 2
    cols = pipeline.read_run(short_run, columns=["board_id", "score"])
    assert cols.column_names == ["board_id", "score"]
    with pytest.raises(BoggleError, match="no column"):
        pipeline.read_run(gen_run, columns=["nope"])


def test_read_run_pandas_and_relation(gen_run: Path, short_run: Path) -> None:
    df = pipeline.read_run_pandas(gen_run, columns=["board_id", "score", "lexicon"])
    table = pq.read_table(gen_run, columns=["board_id", "score"]).sort_by("board_id")
    assert df["score"].tolist() == table["score"].to_pylist()
    assert isinstance(df["lexicon"].dtype, pd.CategoricalDtype)
    rel = pipeline.run_relation([gen_run, short_run])
    assert isinstance(rel, duckdb.DuckDBPyRelation)
    got = dict(rel.aggregate("lexicon, sum(score)", "lexicon").fetchall())
    assert got["enable2k"] == manifest_of(gen_run)["counts"]["score_total"]
    assert got["short5.txt"] == manifest_of(short_run)["counts"]["score_total"]
    con = duckdb.connect()
    assert pipeline.run_relation(gen_run, con=con).count("*").fetchall() == [(700,)]


def test_scan_run_polars_reads_runs_verified(gen_run: Path, short_run: Path) -> None:
    # a run folder reads as it is now; the helper verifies first and combines runs by name
    assert pl.scan_parquet(gen_run).select(pl.len()).collect().item() == 700
    lf = pipeline.scan_run_polars([gen_run, short_run])
    sums = dict(lf.group_by("lexicon").agg(pl.col("score").sum()).collect().iter_rows())
    assert sums == {
        "enable2k": manifest_of(gen_run)["counts"]["score_total"],
        "short5.txt": manifest_of(short_run)["counts"]["score_total"],
    }
    assert lf.select(pl.len()).collect().item() == 1100


def test_api_refuses_unfinished_and_missing_runs(gen_run: Path, tmp_path: Path) -> None:
    half = tmp_path / "half"
    shutil.copytree(gen_run, half)
    side_path(half).unlink()
    for fn in (pipeline.read_run, pipeline.read_run_pandas, pipeline.run_relation, pipeline.scan_run_polars):
        with pytest.raises(BoggleError, match="unfinished"):
            fn(half)  # type: ignore[operator]
        with pytest.raises(BoggleError, match="unfinished"):
            fn([gen_run, half])  # type: ignore[operator]
        with pytest.raises(BoggleError, match="not found"):
            fn(tmp_path / "nowhere")  # type: ignore[operator]
        with pytest.raises(BoggleError, match="no run directories"):
            fn([])  # type: ignore[operator]


def test_an_unsealed_manifest_is_refused_by_every_reader(gen_run: Path, tmp_path: Path, reseal: Any) -> None:
    """A manifest without a seal (what a schema-1 writer left, or an edit that deleted it) is
    damage, not an older format: every reader refuses it (exit 4)."""
    old = tmp_path / "old"
    shutil.copytree(gen_run, old)
    reseal(old, legacy=True)
    for read in (pipeline.read_run, store.read_rejects, store.read_run_table):
        with pytest.raises(DamagedRunError, match="no seal"):
            read(old)


def test_lock_is_gone_after_a_finished_and_a_repeated_run(tmp_path: Path, enable2k_path: str) -> None:
    out = tmp_path / "run"
    cfg = gen_config(enable2k_path, out, boards__count=50, boards__chunk_size=25, run__n_jobs=1)
    assert run_job(cfg).status == "complete"
    assert not (out / LOCK_FILE).exists()
    (out / LOCK_FILE).write_text("999999")  # left by a killed run
    assert run_job(cfg).status == "already complete"
    assert not (out / LOCK_FILE).exists()


def test_import_pipeline_is_light_and_exports_lazily() -> None:
    code = (
        "import sys, pipeline\n"
        "heavy = [m for m in ('numpy', 'pyarrow', 'pandas', 'duckdb', 'polars') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
        "from pipeline import read_run, read_run_pandas, run_relation\n"
        "assert 'pyarrow' in sys.modules and read_run.__module__.startswith('pipeline.store.dataset.')\n"
        "try:\n    pipeline.nope\nexcept AttributeError:\n    pass\nelse:\n    raise SystemExit('no error')\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert res.returncode == 0, res.stderr


def test_run_dir_resolves_from_the_checkout_not_the_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert repo_root() == REPO
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("BOGGLE_RUN_DIR", raising=False)
    assert resolve_run_dir() == REPO / "runs" / "default"
    assert resolve_run_dir("notebooks") == REPO / "notebooks"  # not in the cwd: from the checkout
    (tmp_path / "notebooks").mkdir()
    assert resolve_run_dir("notebooks") == Path("notebooks")  # in the cwd: that one
    monkeypatch.setenv("BOGGLE_RUN_DIR", str(tmp_path / "elsewhere"))
    assert resolve_run_dir() == tmp_path / "elsewhere"
    assert resolve_run_dir("/abs/run") == Path("/abs/run")


def test_a_run_of_another_schema_is_refused_by_every_reader_naming_both(
    gen_run: Path, tmp_path: Path, reseal: Any
) -> None:
    """A finished run of an older schema (its parts as that writer left them: word items plain
    strings in schema 2) is not read into this release's tables: every reader refuses it in one
    line naming its version, this release's, and how to migrate; a newer one likewise."""
    old = tmp_path / "old"
    shutil.copytree(gen_run, old)
    first = sorted(old.glob("part-*.parquet"))[0]
    table = pq.read_table(first)
    i = table.schema.get_field_index("words")
    plain = pa.list_(pa.field("element", pa.string(), nullable=False))
    pq.write_table(
        table.set_column(i, pa.field("words", plain, nullable=False), table["words"].cast(plain)), first
    )
    manifest = manifest_of(old)
    write_side(old, store.MANIFEST, {**manifest, "schema_version": 2})
    reseal(old)
    newer = tmp_path / "newer"
    shutil.copytree(gen_run, newer)
    write_side(newer, store.MANIFEST, {**manifest, "schema_version": store.SCHEMA_VERSION + 1})
    reseal(newer)
    readers = (pipeline.read_run, pipeline.read_run_pandas, pipeline.run_relation, pipeline.scan_run_polars)
    for read in (*readers, store.read_run_table):
        with pytest.raises(
            BoggleError, match=rf"a run of schema 2, .*reads schema 5 to {store.SCHEMA_VERSION}\)"
        ):
            read([gen_run, old] if read in readers else old)  # type: ignore[operator]
        with pytest.raises(BoggleError, match="newer than this release reads"):
            read(newer)  # type: ignore[operator]
    with pytest.raises(BoggleError) as refused:
        pipeline.read_run(old)
    assert "\n" not in refused.value.message and "boggle run --overwrite" in refused.value.message
    assert refused.value.exit_code == 2
