"""Statistics that merge (pipeline.stats): what a worker records beside each part gives the
same tables as the statistics computed from the part files, the merged fits are the fits over
every board held in memory, merging does not depend on how the boards were split or in what
order the parts came, and a damaged or foreign statistics file is refused like a damaged part."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import pipeline.analyze._cells as cells
from pipeline import stats
from pipeline.analyze import load_runs
from pipeline.analyze._gather import gather
from pipeline.analyze._tables import compute_all
from pipeline.cli import app
from pipeline.errors import DamagedRunError
from pipeline.store import stats_name
from tests.conftest import gathered, read_side, read_side_json, run_config, side_path, write_side


@pytest.fixture(scope="module")
def two_sources(tmp_path_factory: pytest.TempPathFactory, enable2k_path: str) -> Path:
    """An ingest of two files (two sources) of 4x4 boards, with word lists."""
    from pipeline.boards import generate_boards, generator_alphabet
    from pipeline.config import config_from_dict
    from pipeline.runner import execute

    base = tmp_path_factory.mktemp("two-sources")
    rng = np.random.default_rng(3)
    alphabet = generator_alphabet("classic")
    for name, dice in (("a.txt", "new"), ("b.txt", "classic")):
        boards = generate_boards(dice, alphabet, rng, 150)
        lines = ["".join("q" if alphabet.faces[c] == "qu" else alphabet.faces[c] for c in b) for b in boards]
        (base / name).write_text("\n".join(lines) + "\n")
    cfg = {
        "boards": {"source": "ingest", "files": [str(base / "a.txt"), str(base / "b.txt")], "chunk_size": 70},
        "lexicon": {"path": enable2k_path},
        "run": {"out": str(base / "run"), "n_jobs": 1},
    }
    execute(config_from_dict(cfg))
    return base / "run"


@pytest.fixture(scope="module")
def dice_run(tmp_path_factory: pytest.TempPathFactory, enable2k_path: str) -> Path:
    from pipeline.runner import execute

    out = tmp_path_factory.mktemp("stats") / "new"
    execute(run_config(enable2k_path, out, dice="new"))
    return out


def without_statistics(run: Path, dest: Path) -> Path:
    """A copy of ``run`` as a run made before statistics were recorded: no statistics files,
    no vocabulary, a manifest that lists neither (sealed again)."""
    from pipeline.store._manifest import seal_of

    shutil.copytree(run, dest)
    for f in (dest / "_parts").glob("*.stats.npz*"):
        f.unlink()
    side_path(dest, "_vocabulary.txt.gz").unlink()
    manifest = read_side_json(dest)
    for p in manifest["parts"]:
        del p["stats"]
    del manifest["files"]["_vocabulary.txt.gz"]
    manifest["seal"] = seal_of(manifest)
    write_side(dest, "_SUCCESS", manifest)
    return dest


def tables_of(runs: list[Path], spec: stats.StatsSpec | None = None) -> dict[str, pd.DataFrame]:
    spec = spec or stats.StatsSpec()
    t = compute_all(gathered(runs, spec), top=spec.top, bad=spec.bad)
    return dict(t.items())


def assert_same_tables(a: dict[str, pd.DataFrame], b: dict[str, pd.DataFrame]) -> None:
    assert a.keys() == b.keys()
    for name in a:
        pd.testing.assert_frame_equal(
            a[name].reset_index(drop=True), b[name].reset_index(drop=True), check_dtype=False, obj=name
        )


@pytest.mark.parametrize("which", ["dice_run", "two_sources"])
def test_recorded_statistics_give_the_tables_of_the_part_files(
    which: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """What the workers recorded (word ids, the dice they rolled) and what the analysis
    computes from the parts of the same run made before statistics existed (word strings,
    the dice re-rolled from the seed) give every table exactly."""
    run: Path = request.getfixturevalue(which)
    old = without_statistics(run, tmp_path / run.name)
    recorded, computed = gathered([run]), gathered([old])
    parts = len(list(run.glob("part-*.parquet")))
    assert (recorded[0].parts_recorded, recorded[0].parts_computed) == (parts, 0)
    assert (computed[0].parts_recorded, computed[0].parts_computed) == (0, parts)
    assert_same_tables(tables_of([run]), tables_of([old]))
    # a recount for another definition and more top boards reads the parts again, alike
    other = stats.StatsSpec(stats.BadDefinition(80, 90), top=40)
    assert_same_tables(tables_of([run], other), tables_of([old], other))


def _boards(run: Path) -> pd.DataFrame:
    return pd.concat([pd.read_parquet(p) for p in sorted(run.glob("part-*.parquet"))], ignore_index=True)


def test_merged_fits_are_the_fits_over_every_board(dice_run: Path) -> None:
    """The adjusted face and position effects from the parts' X'X and X'y and the second pass's
    meat equal a least-squares fit with HC1 intervals over all boards in memory (1e-9)."""
    t = compute_all(gathered([dice_run]))
    df = _boards(dice_run)
    faces, codes = cells.decode_boards(df["board"].tolist(), 4, 4)
    score = df["score"].to_numpy(dtype=float)
    adj, fit, _ = cells.adjusted_effects(codes, faces, score)
    got = t.face_effects.set_index("face").loc[adj["face"]]
    for col in ("adj_effect", "adj_low", "adj_high"):
        np.testing.assert_allclose(got[col].to_numpy(), adj[col].to_numpy(), rtol=1e-9, atol=1e-9)
    pos, _, _ = cells.position_effects(codes, faces, score, 4, 4)
    got_pos = t.face_positions.set_index(["face", "position"]).loc[
        list(zip(pos["face"], pos["position"], strict=True))
    ]
    for col in ("cell_share", "adj_effect", "adj_low", "adj_high"):
        np.testing.assert_allclose(got_pos[col].to_numpy(), pos[col].to_numpy(), rtol=1e-9, atol=1e-9)
    assert t.dice["model_r2"].iloc[0] == pytest.approx(cells.r_squared(fit, codes, score), abs=1e-9)


def _table(rng: np.random.Generator, n: int, first: int) -> pa.Table:
    letters = np.array([*"aeistqxz.", "[th]"])
    faces = rng.integers(0, len(letters), size=(n, 4))
    boards = ["".join(letters[f] for f in row) for row in faces]
    score = rng.integers(0, 60, n)
    cols: dict[str, Any] = {
        "board_id": np.arange(first, first + n, dtype=np.int64),
        "board": boards,
        "rows": np.full(n, 2, np.int16),
        "cols": np.full(n, 2, np.int16),
        "source": rng.choice(["s1", "s2"], n),
        "score": score.astype(np.int32),
        "n_words": (score // 2).astype(np.int32),
        "longest_word": rng.choice(["", "tea", "seat", "quest"], n),
        "max_word_len": rng.integers(0, 6, n).astype(np.int16),
        "dead_cells": rng.integers(0, 3, n).astype(np.int16),
        "words_len_3": rng.integers(0, 9, n).astype(np.int32),
        "points_len_3": rng.integers(0, 9, n).astype(np.int32),
        "words": [
            list(rng.choice(["tea", "eat", "seat", "tax"], int(k), replace=False))
            for k in rng.integers(0, 4, n)
        ],
    }
    return pa.table(cols)


@settings(deadline=None, max_examples=25)
@given(st.integers(0, 2**32 - 1), st.integers(1, 6), st.integers(2, 300))
def test_merging_does_not_depend_on_the_split_or_the_order(seed: int, parts: int, n: int) -> None:
    rng = np.random.default_rng(seed)
    whole = _table(rng, n, 0)
    one = stats.merge([stats.part_stats(whole, tag="t", chunk=0, bins=["3"])], stats.StatsSpec())
    cuts = sorted(set(rng.integers(1, n, size=parts - 1).tolist())) if n > 1 else []
    pieces = [whole.slice(a, b - a) for a, b in zip([0, *cuts], [*cuts, n], strict=True)]
    many = [stats.part_stats(p, tag="t", chunk=i, bins=["3"]) for i, p in enumerate(pieces)]
    rng.shuffle(many)
    split = stats.merge([stats.from_bytes(stats.to_bytes(p)) for p in many], stats.StatsSpec())
    assert (split.boards, split.bad, split.factors) == (one.boards, one.bad, one.factors)
    for col in stats.VALUE_COLUMNS:
        for source in one.sources():
            assert np.array_equal(split.value_counts(col, source)[1], one.value_counts(col, source)[1])
    faces, order = one.faces_sorted()
    faces2, order2 = split.faces_sorted()
    assert faces == faces2
    for source in one.sources():
        a = one.xtx[source][np.ix_(order, order)]
        b = split.xtx[source]
        b = np.pad(b, [(0, len(faces) - b.shape[0])] * 2)[np.ix_(order2, order2)]
        assert np.array_equal(a, b)
    assert one.words is not None and split.words is not None
    for source in (None, *one.sources()):
        assert dict(zip(*one.words.items(source), strict=True)) == dict(
            zip(*split.words.items(source), strict=True)
        )
    for source in one.sources():
        assert [r["board_id"] for r in one.top.get(source, [])] == [
            r["board_id"] for r in split.top.get(source, [])
        ]


def test_statistics_bytes_round_trip_and_refuse_damage(dice_run: Path) -> None:
    data = read_side(dice_run, stats_name(1))
    ps = stats.from_bytes(data)
    assert stats.to_bytes(ps) == data  # deterministic: the same statistics, the same bytes
    assert ps.chunk == 1 and ps.boards == 100 and ps.vocab == stats.LEXICON_VOCAB
    for bad in (data[: len(data) // 2], data.replace(b"face_n.npy", b"face_m.npy"), b"not a zip"):
        with pytest.raises(DamagedRunError, match="statistics"):
            stats.from_bytes(bad, "x")


def test_npz_files_are_parsed_under_one_lock(
    dice_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """numpy parses an .npz's array headers with ast.literal_eval, which CPython 3.11 cannot run
    in two threads at once (a spurious "AST constructor recursion depth mismatch" SystemError,
    once in `make test` when the analysis's threads read part statistics together): the
    statistics and the trie cache are read through pipeline.io.load_npz, which holds a lock."""
    from pipeline import io as pipeline_io
    from pipeline.lexicon.trie import Alphabet, Trie, build_trie

    real_load = np.load
    held: list[bool] = []

    def spy(*args: object, **kwargs: object) -> object:
        held.append(pipeline_io._NPZ_LOCK.locked())
        return real_load(*args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(np, "load", spy)
    ps = stats.from_bytes(read_side(dice_run, stats_name(1)))
    assert ps.boards == 100
    trie, _ = build_trie(["ab", "abc"], Alphabet(("a", "b", "c")))
    trie.save(tmp_path / "t.npz", {"k": 1})
    loaded, meta = Trie.load(tmp_path / "t.npz")
    assert loaded.words == ["ab", "abc"] and meta["k"] == 1
    assert held == [True, True]
    assert not pipeline_io._NPZ_LOCK.locked()


def test_statistics_arrays_are_kept_narrow_and_int64_files_still_read(dice_run: Path) -> None:
    """Each array is written in the smallest signed integer type its values fit (the word
    counts: half the bytes); the int64 arrays written before read the same, and a type that is
    not a signed integer is refused."""
    import io
    import zipfile

    data = read_side(dice_run, stats_name(1))
    with np.load(io.BytesIO(data), allow_pickle=False) as z:
        arrays = {name: z[name] for name in z.files}
    assert arrays["word_counts"].dtype == np.int32 and arrays["factor_bad"].dtype.itemsize <= 2
    ps = stats.from_bytes(data)
    assert ps.word_counts is not None and ps.word_counts.dtype == np.int64

    def rewritten(change: Callable[[np.ndarray], np.ndarray]) -> bytes:
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as zf:
            for name, a in arrays.items():
                member = io.BytesIO()
                np.lib.format.write_array(member, a if name == "meta" else change(a), allow_pickle=False)
                zf.writestr(f"{name}.npy", member.getvalue())
        return buf.getvalue()

    old = stats.from_bytes(rewritten(lambda a: a.astype(np.int64)))
    assert stats.to_bytes(old) == data
    with pytest.raises(DamagedRunError, match="wrong type"):
        stats.from_bytes(rewritten(lambda a: a.astype(np.float64)))


@pytest.mark.parametrize("how", ["flip", "swap"])
def test_a_damaged_or_swapped_statistics_file_is_refused(dice_run: Path, tmp_path: Path, how: str) -> None:
    """A statistics file that is not the one the sealed manifest records (a flipped bit, or
    another part's file copied over it) is refused in one line, exit 4, by analyze and by
    `boggle runs verify`."""
    run = tmp_path / "run"
    shutil.copytree(dice_run, run)
    target = side_path(run, stats_name(0))
    if how == "flip":
        data = bytearray(target.read_bytes())
        data[len(data) // 2] ^= 0x01
        target.write_bytes(bytes(data))
    else:
        shutil.copy(side_path(run, stats_name(1)), target)
    for args in (
        ["analyze", str(run), "--out", str(tmp_path / "r"), "--quiet"],
        ["runs", "verify", str(run)],
    ):
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 4, (args, res.output)
        assert "statistics" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "r").exists()


def test_statistics_of_another_run_are_refused(dice_run: Path, tmp_path: Path, enable2k_path: str) -> None:
    """A statistics file of another run, recorded in a resealed manifest (a forgery a
    checksum cannot catch), is still refused: the statistics name the run they belong to."""
    from pipeline.runner import execute
    from pipeline.store._manifest import seal_of
    from pipeline.store._parts import bytes_blake2b

    other = tmp_path / "other"
    execute(run_config(enable2k_path, other, dice="classic"))
    run = tmp_path / "run"
    shutil.copytree(dice_run, run)
    shutil.copy(side_path(other, stats_name(0)), side_path(run, stats_name(0)))
    manifest = read_side_json(run)
    data = side_path(run, stats_name(0)).read_bytes()  # as it is on disk, as the manifest records it
    manifest["parts"][0]["stats"] = {"bytes": len(data), "blake2b": bytes_blake2b(data)}
    manifest["seal"] = seal_of(manifest)
    write_side(run, "_SUCCESS", manifest)
    with pytest.raises(DamagedRunError, match="another run"):
        gather(load_runs([run]), stats.StatsSpec())


def test_a_part_written_before_statistics_reads_beside_recorded_ones(dice_run: Path, tmp_path: Path) -> None:
    """A run resumed by this version after an older one wrote some parts: those parts have no
    statistics and get them computed; the tables are the same as for the whole run."""
    from pipeline.store._manifest import seal_of

    run = tmp_path / dice_run.name  # the same label
    shutil.copytree(dice_run, run)
    side_path(run, stats_name(2)).unlink()
    manifest = read_side_json(run)
    del manifest["parts"][2]["stats"]
    manifest["seal"] = seal_of(manifest)
    write_side(run, "_SUCCESS", manifest)
    g = gathered([run])
    assert (g[0].parts_recorded, g[0].parts_computed) == (2, 1)
    assert_same_tables(tables_of([dice_run]), tables_of([run]))


def test_the_worker_records_what_the_part_holds(dice_run: Path) -> None:
    """Each part's recorded counts against the part file itself (pandas)."""
    for chunk in range(3):
        ps = stats.from_bytes(read_side(dice_run, stats_name(chunk)))
        df = pq.read_table(dice_run / f"part-{chunk:05d}.parquet").to_pandas()
        assert ps.boards == len(df) and ps.sources == ["new"]
        v, c = ps.values["score"][1], ps.values["score"][2]
        want = df["score"].value_counts().sort_index()
        assert v.tolist() == want.index.tolist() and c.tolist() == want.tolist()
        assert ps.bad == int((df["n_words"] < 50).sum())
        assert ps.dice is not None and ps.die_n is not None and int(ps.die_n.sum()) == 16 * len(df)
        top = df.sort_values(["score", "board_id"], ascending=[False, True]).head(ps.spec.top)
        assert [r["board_id"] for r in ps.top] == top["board_id"].tolist()
        assert ps.word_counts is not None and int(ps.word_counts[2].sum()) == int(df["n_words"].sum())


def test_the_tables_do_not_hang_on_which_part_finishes_first(
    tmp_path: Path, enable2k_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second pass adds floating-point sums (the fits' meat): added in the order the parts
    finished, their last bits, and so the report's intervals, hung on the timing (an analysis
    of a run in S3 differed from the same run's on disk). Parts held back so that they finish
    in another order give the same tables to the last bit."""
    import time

    import pipeline.analyze._gather as gather_module
    from pipeline.analyze import analyze_runs
    from pipeline.runner import execute

    run = tmp_path / "run"
    execute(run_config(enable2k_path, run, dice="new", count=600, chunk_size=50))
    want = analyze_runs([run], tmp_path / "in-order", threads=2).tables
    second_pass = gather_module.part_pass2

    def last_first(job: Any, plan: Any) -> Any:
        time.sleep(0.02 * (12 - job.chunk))  # the first parts finish last
        return second_pass(job, plan)

    monkeypatch.setattr(gather_module, "part_pass2", last_first)
    got = analyze_runs([run], tmp_path / "held-back", threads=2).tables
    for name, frame in want.items():
        other = getattr(got, name)
        assert frame.equals(other), (name, frame.compare(other) if frame.shape == other.shape else other)


@pytest.mark.integration
@pytest.mark.parametrize("backend", ["loky", "dask"])
def test_the_parts_are_read_on_any_backend_with_the_same_tables(
    dice_run: Path, tmp_path: Path, backend: str
) -> None:
    """Statistics computed and merged on loky processes or a dask cluster's workers (a local
    one) give the tables threads give (runs made before statistics too: their parts' are
    computed by the workers)."""
    pytest.importorskip("distributed")
    from pipeline.analyze import analyze_runs

    old = without_statistics(dice_run, tmp_path / dice_run.name)
    want = analyze_runs([dice_run, old], tmp_path / "threads", threads=2).tables
    got = analyze_runs([dice_run, old], tmp_path / backend, threads=2, backend=backend).tables
    for name, frame in want.items():
        pd.testing.assert_frame_equal(frame, getattr(got, name), check_dtype=False, obj=name)


@settings(deadline=None, max_examples=30)
@given(st.integers(0, 2**32 - 1), st.integers(1, 5), st.integers(1, 6))
def test_word_counts_are_the_same_dense_sparse_or_both(seed: int, n_sources: int, n_parts: int) -> None:
    """Word counts per source and pooled do not depend on which sources are counted densely
    (by vocabulary slot, from their first compaction on) and which sparsely (the sources past
    the dense memory budget), with names of the parts' own past the vocabulary too."""
    from types import SimpleNamespace

    rng = np.random.default_rng(seed)
    vocab = [f"w{i}" for i in range(50)]
    parts = []
    for chunk in range(n_parts):
        own = [f"x{i}" for i in rng.choice(8, 3, replace=False)]
        sources = [f"s{i}" for i in range(n_sources)]
        rows = [
            (s, k, int(rng.integers(1, 9)))
            for s in range(n_sources)
            for k in rng.choice(50, 10, replace=False)
        ]
        lexicon = SimpleNamespace(vocab=stats.LEXICON_VOCAB, words=None, chunk=chunk)
        parts.append((np.array(rows, np.int64).T, sources, lexicon))
        rows = [(s, k, int(rng.integers(1, 9))) for s in range(n_sources) for k in range(3)]
        strings = SimpleNamespace(vocab="part", words=own, chunk=chunk)
        parts.append((np.array(rows, np.int64).T, sources, strings))

    def counted(dense_sources: int) -> dict[str | None, tuple[list[str], list[int]]]:
        kc = stats.KeyCounts(vocab)
        kc._dense_max = dense_sources
        kc.compact_at = 12  # compacted (and made dense, where the budget has room) as parts come
        kc.dense_floor = 0
        for triples, sources, part in parts:
            kc.add(triples, sources, part)  # type: ignore[arg-type]
        assert len(kc._dense) == min(dense_sources, n_sources) or n_parts < 2
        out: dict[str | None, tuple[list[str], list[int]]] = {}
        for src in [None, *kc.sources()]:
            keys, counts = kc.items(src)
            out[src] = (keys, counts.tolist())
        return out

    want: dict[str | None, dict[str, int]] = {}
    for triples, sources, part in parts:
        for s, k, c in triples.T.tolist():
            word = vocab[k] if part.words is None else part.words[k]
            for src in (None, sources[s]):
                want.setdefault(src, {})[word] = want.setdefault(src, {}).get(word, 0) + c
    for dense_sources in (0, 1, n_sources):
        got = counted(dense_sources)
        assert {src: dict(zip(*v, strict=True)) for src, v in got.items()} == want


@settings(deadline=None, max_examples=40)
@given(st.lists(st.integers(0, 6), min_size=0, max_size=40), st.integers(1, 12))
def test_the_most_counted_keys_are_the_top_and_its_ties(counts: list[int], most: int) -> None:
    from types import SimpleNamespace

    vocab = [f"w{i:02d}" for i in range(len(counts))]
    kc = stats.KeyCounts(vocab)
    rows = [(0, k, c) for k, c in enumerate(counts) if c]
    if rows:
        part = SimpleNamespace(vocab=stats.LEXICON_VOCAB, words=None, chunk=0)
        kc.add(np.array(rows, np.int64).T, ["s"], part)  # type: ignore[arg-type]
    words, got = kc.items("s", most=most)
    ranked = sorted((c for c in counts if c), reverse=True)
    floor = ranked[most - 1] if len(ranked) > most else 1
    assert dict(zip(words, got.tolist(), strict=True)) == {
        w: c for w, c in zip(vocab, counts, strict=True) if c and c >= floor
    }
