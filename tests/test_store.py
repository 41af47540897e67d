"""The run store: the part schema against the reference solver, manifests, locks, run states."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline import store
from pipeline.boards import Board, compact_strings, format_compact, parse_compact
from pipeline.errors import BoggleError, DamagedRunError, OutputConflictError
from pipeline.lexicon import CompiledLexicon, DropReport, Lexicon, compile_words
from pipeline.lexicon.trie import Alphabet
from pipeline.rules import get_rules
from pipeline.solve import solve_arrays
from pipeline.solve._reference import ReferenceSolver
from pipeline.store._flock import run_lock
from pipeline.store._manifest import seal_of
from pipeline.store._parts import committed_chunks, part_rows
from pipeline.store._schema import LOCK_FILE

EXPECTED_COLUMNS = [
    "board_id",
    "board",
    "rows",
    "cols",
    "source",
    "lexicon",
    "lexicon_hash",
    "rules",
    "run_id",
    "seed",
    "run_date",
    "dice",
    "chunk",
    "score",
    "n_words",
    "words",
    "longest_word",
    "max_word_len",
    "dead_cells",
    "words_len_3",
    "words_len_4",
    "words_len_5",
    "words_len_6",
    "words_len_7",
    "words_len_8",
    "words_len_9plus",
    "points_len_3",
    "points_len_4",
    "points_len_5",
    "points_len_6",
    "points_len_7",
    "points_len_8",
    "points_len_9plus",
]

LOCK_HOLDER = (
    "import sys, time\n"
    "from pipeline.store._flock import run_lock\n"
    "with run_lock(sys.argv[1]):\n"
    "    print('locked', flush=True)\n"
    "    time.sleep(60)\n"
)


def table_for(boards: list[Board], lexicon: CompiledLexicon, first_id: int = 0) -> pa.Table:
    enc = np.stack([lexicon.alphabet.encode(b.faces) for b in boards])
    rows, cols = boards[0].shape
    res = solve_arrays(enc, rows, cols, lexicon)
    ids = np.arange(first_id, first_id + len(boards))
    return store.results_table(enc, rows, cols, ids, res, lexicon, source="test", chunk=3)


def test_schema_columns_and_types() -> None:
    schema = store.board_schema(3)
    assert schema.names == EXPECTED_COLUMNS
    assert schema.field("board_id").type == pa.int64()
    words_item = pa.field("item", pa.dictionary(pa.int32(), pa.string()), nullable=False)
    assert schema.field("words").type == pa.list_(words_item)
    assert schema.field("rows").type == pa.int16() and schema.field("dead_cells").type == pa.int16()
    assert schema.field("score").type == pa.int32() and schema.field("words_len_9plus").type == pa.int32()
    assert schema.field("run_date").type == pa.date32() and schema.field("run_date").nullable
    # a rule set with shorter words gets columns from its minimum length up
    assert "words_len_1" in store.board_schema(1).names
    assert store.length_bins(2)[0] == "2" and store.length_bins(4)[0] == "3"


def test_table_matches_reference_solver(enable_lexicon: CompiledLexicon) -> None:
    rng = np.random.default_rng(5)
    letters = [*"abcdefghijklmnoprstuvwxyz", "qu"]
    boards = [Board(4, 4, tuple(rng.choice(letters, 16))) for _ in range(60)]
    boards.append(parse_compact("perslatgsineters"))
    table = table_for(boards, enable_lexicon, first_id=100)
    assert table.schema.equals(store.board_schema(3))
    ref = ReferenceSolver(enable_lexicon.words, enable_lexicon.rules)
    rules = enable_lexicon.rules
    for i, (board, row) in enumerate(zip(boards, table.to_pylist(), strict=True)):
        want = ref.solve(board)
        assert row["board_id"] == 100 + i and row["chunk"] == 3 and row["source"] == "test"
        assert parse_compact(row["board"], (row["rows"], row["cols"])) == board
        assert row["words"] == sorted(want.words)
        assert row["score"] == want.score and row["n_words"] == len(want.words)
        assert row["dead_cells"] == want.dead_cells and row["max_word_len"] == want.longest
        if want.words:
            best = max(len(w) for w in want.words)
            assert row["longest_word"] == min(w for w in want.words if len(w) == best)
        else:
            assert row["longest_word"] == ""
        for length in range(3, 9):
            same = [w for w in want.words if len(w) == length]
            assert row[f"words_len_{length}"] == len(same)
            assert row[f"points_len_{length}"] == sum(rules.points(len(w)) for w in same)
        long = [w for w in want.words if len(w) >= 9]
        assert row["words_len_9plus"] == len(long)
        assert row["points_len_9plus"] == sum(rules.points(len(w)) for w in long)
        assert sum(row[f"points_len_{b}"] for b in store.length_bins(3)) == row["score"]
    golden = table.to_pylist()[-1]
    assert (golden["score"], golden["n_words"]) == (3625, 1045)


def test_longest_word_ties_break_alphabetically() -> None:
    words = ["cab", "abc", "bca", "ab"]
    lex = compile_words(
        Lexicon("t", "t", "0", sorted(words), DropReport(4)),
        Alphabet.from_faces("abc"),
        get_rules("boggle", min_length=2),
    )
    row = table_for([parse_compact("abc.", (2, 2))], lex).to_pylist()[0]
    assert row["words"] == ["ab", "abc", "bca", "cab"]
    assert row["longest_word"] == "abc" and row["max_word_len"] == 3
    assert row["words_len_2"] == 1 and row["words_len_3"] == 3
    assert row["dead_cells"] == 0  # the blank is not counted


def test_store_does_not_import_numba() -> None:
    # readers (analyze, DuckDB users) import the store; numba costs ~60 MB and a second there
    code = "import sys, pipeline.store; print('numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_compact_strings_round_trip_every_kind_of_face() -> None:
    faces = ("a", "qu", "th", "q", "ł", "[", "é")
    alphabet = Alphabet.from_faces(faces)
    board = Board(2, 4, ("a", "qu", "th", "", "q", "ł", "é", "a"))
    enc = alphabet.encode(board.faces)[None, :]
    text = compact_strings(enc, alphabet.faces).to_pylist()[0]
    assert text == format_compact(board)
    assert parse_compact(text, (2, 4)) == board
    # the vectorised path (single ASCII faces) agrees with format_compact too
    plain = Alphabet.english()
    rng = np.random.default_rng(0)
    enc = rng.integers(-1, len(plain), size=(50, 9)).astype(np.int8)
    got = compact_strings(enc, plain.faces).to_pylist()
    want = [format_compact(Board(3, 3, tuple("" if c < 0 else plain.faces[c] for c in row))) for row in enc]
    assert got == want


def test_write_part_is_atomic_zstd_with_metadata(tmp_path: Path, enable_lexicon: CompiledLexicon) -> None:
    table = table_for([parse_compact("perslatgsineters")], enable_lexicon)
    meta = store.parquet_metadata({"boards": {"seed": 1}}, enable_lexicon.provenance(), {"name": "boggle"})
    nbytes = store.write_part(tmp_path, 7, table, meta)
    path = tmp_path / "part-00007.parquet"
    assert path.stat().st_size == nbytes
    assert [p.name for p in tmp_path.iterdir()] == ["part-00007.parquet"]  # no temp file left
    pf = pq.ParquetFile(path)
    assert pf.metadata.row_group(0).column(0).compression == "ZSTD"
    kv = pf.schema_arrow.metadata
    assert json.loads(kv[b"boggle.config"]) == {"boards": {"seed": 1}}
    assert json.loads(kv[b"boggle.lexicon"])["content_hash"] == enable_lexicon.content_hash
    assert committed_chunks(tmp_path) == {7: path}
    assert part_rows(path) == 1


def test_duckdb_and_pandas_read_parts_naturally(tmp_path: Path, enable_lexicon: CompiledLexicon) -> None:
    duckdb = pytest.importorskip("duckdb")
    table = table_for([parse_compact("perslatgsineters"), parse_compact("qietxxxxxxxxxxxx")], enable_lexicon)
    store.write_part(tmp_path, 0, table)
    q = f"select sum(points_len_3 + points_len_4) as p, max(len(words)) as w from '{tmp_path}/part-*.parquet'"
    ((p, w),) = duckdb.sql(q).fetchall()
    df = pq.read_table(tmp_path / "part-00000.parquet").to_pandas()
    assert p == int((df.points_len_3 + df.points_len_4).sum()) and w == 1045
    assert "quiet" in set(df.words[1]) and "quit" not in set(df.words[1])
    assert df.words[1].tolist() == sorted(df.words[1].tolist())
    assert all(type(w) is str for w in df.words[0]) and len(df.words[0]) == 1045
    ((kind,),) = duckdb.sql(f"select typeof(words) from '{tmp_path}/part-00000.parquet' limit 1").fetchall()
    assert kind == "VARCHAR[]"


def test_word_lists_are_one_dictionary_of_the_parts_words(
    tmp_path: Path, enable_lexicon: CompiledLexicon
) -> None:
    boards = [
        parse_compact(b)
        for b in ("perslatgsineters", "qietxxxxxxxxxxxx", "xxxxxxxxxxxxxxxx", "seratinglmopdcbu")
    ]
    table = table_for(boards, enable_lexicon)
    items = table.column("words").combine_chunks().values
    # each distinct word once, in alphabetical order; every list item is an index into them
    assert items.dictionary.to_pylist() == sorted({w for ws in table.column("words").to_pylist() for w in ws})
    store.write_part(tmp_path, 0, table)
    md = pq.ParquetFile(tmp_path / "part-00000.parquet").metadata.row_group(0)
    encodings = {md.column(i).path_in_schema: md.column(i).encodings for i in range(md.num_columns)}
    # Parquet holds a plain list of UTF-8 strings, dictionary-encoded; the all-distinct
    # columns skip the dictionary
    assert "RLE_DICTIONARY" in encodings["words.list.element"]
    for name in ("board", "board_id", "longest_word"):
        assert "RLE_DICTIONARY" not in encodings[name], name
    assert "RLE_DICTIONARY" in encodings["score"]
    back = pq.read_table(tmp_path / "part-00000.parquet")
    assert back.column("words").to_pylist() == table.column("words").to_pylist()
    assert back.column("words").to_pylist()[2] == []


# ---------------------------------------------------------------- run directory states


def _identity(identity: dict) -> dict:
    """The identity of an (ingest) run that holds ``identity``'s keys as well."""
    return {"data": {"boards": {"source": "ingest"}}, **identity}


def _job(run: Path, identity: dict, overwrite: bool = False) -> Any:
    """A job directory of an (ingest) run whose identity holds ``identity``'s keys as well."""
    return store.JobDir.open(run, store.RUN, _identity(identity), {}, overwrite=overwrite)


#: the counts of a run of no boards: what a finished run's manifest must add up to
NO_BOARDS = {"counts": {"boards": 0, "input_rows": 0, "rejected": 0}}


def test_open_run_refuses_unfinished_run(tmp_path: Path) -> None:
    with pytest.raises(BoggleError, match="not found"):
        store.open_run(tmp_path / "nope")
    with _job(tmp_path, {"a": 1}) as job:
        assert job.state is store.JobState.NEW
        with pytest.raises(BoggleError, match="unfinished"):
            store.open_run(tmp_path)
        job.commit(0, 0, store.board_schema().empty_table())
        job.finish(1, NO_BOARDS)
    manifest, parts = store.open_run(tmp_path)
    assert manifest["format"] == "boggle-run" and parts == [tmp_path / "part-00000.parquet"]
    (tmp_path / "part-00000.parquet").unlink()
    with pytest.raises(DamagedRunError, match=r"part-00000\.parquet: missing"):
        store.open_run(tmp_path)


def test_job_dir_states(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    with _job(run, {"seed": 1}) as job:
        assert job.state is store.JobState.NEW
    (run / ".part-00000.parquet.123.tmp").write_text("partial")
    with _job(run, {"seed": 1}) as job:
        assert job.state is store.JobState.RESUME
    assert not (run / ".part-00000.parquet.123.tmp").exists()  # stale temp files are cleared
    with pytest.raises(
        OutputConflictError, match=r"unfinished run with a different config \(seed: 1 there, 2 now\)"
    ):
        _job(run, {"seed": 2}).__enter__()
    with _job(run, {"seed": 1}) as job:
        job.finish(0, NO_BOARDS)
    with _job(run, {"seed": 1}) as job:
        assert job.state is store.JobState.DONE
    with pytest.raises(OutputConflictError, match="finished run"):
        _job(run, {"seed": 2}).__enter__()
    (run / "notes.txt").write_text("mine")
    with _job(run, {"seed": 2}, overwrite=True) as job:
        assert job.state is store.JobState.NEW
    assert sorted(p.name for p in run.iterdir()) == ["_run.json", "notes.txt"]  # only run files removed
    (run / "_run.json").unlink()
    with pytest.raises(OutputConflictError, match="not empty"):
        _job(run, {"seed": 2}, overwrite=True).__enter__()


def test_job_dir_unreadable_manifest_refused_then_repaired(tmp_path: Path) -> None:
    with _job(tmp_path, {"seed": 1}) as job:
        job.finish(0, NO_BOARDS)
    (tmp_path / "_SUCCESS").write_bytes(b"\x00garbage")
    with pytest.raises(DamagedRunError, match=r"unreadable manifest.*--overwrite"):
        _job(tmp_path, {"seed": 1}).__enter__()
    with _job(tmp_path, {"seed": 1}, overwrite=True) as job:
        assert job.state is store.JobState.RESUME  # the record is intact: the job resumes and finishes again
        job.finish(0, NO_BOARDS)
    assert store.open_run(tmp_path).manifest["identity"]["seed"] == 1


def test_manifest_seal_and_paths_confined(tmp_path: Path) -> None:
    with _job(tmp_path, {"seed": 1}) as job:
        job.commit(0, 0, store.board_schema().empty_table())
        job.finish(1, NO_BOARDS)
    path = tmp_path / "_SUCCESS"
    good = path.read_text()
    path.write_text(good.replace('"rows": 0', '"rows": 1'))
    with pytest.raises(DamagedRunError, match="seal differs"):
        store.open_run(tmp_path)
    data = json.loads(good)
    data["parts"][0]["file"] = "../other/part-00000.parquet"
    data["seal"] = seal_of(data)
    path.write_text(json.dumps(data))
    with pytest.raises(DamagedRunError, match=r"own part-NNNNN\.parquet"):
        store.open_run(tmp_path)


def test_lock_refuses_second_holder_and_frees_on_death(tmp_path: Path) -> None:
    busy = f"in use by another run \\(pid {os.getpid()}\\)"
    with run_lock(tmp_path), pytest.raises(OutputConflictError, match=busy), run_lock(tmp_path):
        pass
    # a process holding the lock that is killed frees it at once (no stale lock)
    code = LOCK_HOLDER
    proc = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
        with pytest.raises(OutputConflictError), run_lock(tmp_path):
            pass
    finally:
        proc.kill()
        proc.wait()
    deadline = time.monotonic() + 10
    while True:
        try:
            with run_lock(tmp_path):
                break
        except OutputConflictError:
            assert time.monotonic() < deadline
            time.sleep(0.05)


def test_lock_file_removed_when_the_run_lets_go(tmp_path: Path) -> None:
    with run_lock(tmp_path) as path:
        assert path.is_file() and path.read_text() == str(os.getpid())
    assert not (tmp_path / LOCK_FILE).exists()
    with run_lock(tmp_path):  # and the next run takes it again
        pass
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_lock_taken_on_an_unlinked_file_is_retried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The race of removing a held lock file: a taker opens the file, the holder unlinks it and
    lets go, the taker's flock then succeeds on a file nobody else can see. The taker must
    notice and lock the file that is at the path now."""
    import fcntl

    real = fcntl.flock
    raced: list[int] = []

    def flock(fd: int, op: int) -> None:
        if not raced:
            raced.append(fd)
            os.unlink(tmp_path / LOCK_FILE)  # the previous holder finishing meanwhile
        real(fd, op)

    monkeypatch.setattr(fcntl, "flock", flock)
    with run_lock(tmp_path) as path:
        monkeypatch.setattr(fcntl, "flock", real)
        assert raced and path.is_file() and path.read_text() == str(os.getpid())
        other = os.open(path, os.O_RDWR)
        try:
            with pytest.raises(BlockingIOError):  # the file at the path is the one held
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(other)


# ---------------------------------------------------------------- the protocol: kinds, pending, the look


def test_each_kind_tags_its_parts_as_the_jobs_before_it_did() -> None:
    """The tag every part embeds: a run's data config, a proof's whole identity escaped to ASCII
    (as its parts have always been), a search's whole identity; computed here independently."""
    identity = {"data": {"boards": {"dice": "ελλάδα"}}, "lexicon_sha256": "x"}
    assert store.RUN.tag(identity) == json.dumps(identity["data"], sort_keys=True, ensure_ascii=False)
    assert store.job_kind("boggle-prove").tag(identity) == json.dumps(identity, sort_keys=True)
    assert "\\u03b5" in store.job_kind("boggle-prove").tag(identity)  # escaped, not the letter
    search = store.job_kind("boggle-optimize").tag(identity)
    assert search == json.dumps(identity, sort_keys=True, ensure_ascii=False) and "ε" in search
    assert store.part_tag("boggle-run", identity) == store.RUN.tag(identity)
    other = store.job_kind("boggle-unknown")
    assert other.noun == "job" and other.tag({"a": 1}) == '{"a": 1}'
    assert store.JobState.DONE == "done" and store.RUN.schema_version == store.SCHEMA_VERSION


def _parts(run: Path, chunks: range) -> None:
    with _job(run, {"seed": 1}) as job:
        for k in chunks:
            job.commit(k, 0, store.board_schema().empty_table())


def test_pending_reuses_verified_parts_and_recomputes_the_rest(tmp_path: Path) -> None:
    _parts(tmp_path, range(4))
    (tmp_path / "part-00001.parquet").write_bytes(b"damaged")  # its record no longer matches
    notes: list[str] = []
    seen: list[int] = []

    def reuse(chunk: int, number: int) -> str | None:
        seen.append(number)
        return "not this chunk's rows" if number == 2 else None

    with store.JobDir.open(tmp_path, store.RUN, _identity({"seed": 1}), {}, note=notes.append) as job:
        todo = list(job.pending(range(5), reuse=reuse))
        assert todo == [1, 2, 4] and job.chunks_reused == 2
    assert seen == [0, 2, 3]  # the command's check runs on verified parts only
    assert len(notes) == 2
    assert notes[0].startswith(f"{tmp_path / 'part-00001.parquet'}: 7 bytes, ")
    assert notes[0].endswith(" recorded (truncated or replaced); recomputing it")
    assert notes[1] == f"{tmp_path / 'part-00002.parquet'}: not this chunk's rows; recomputing it"
    assert sorted(p.name for p in tmp_path.glob("part-*")) == ["part-00000.parquet", "part-00003.parquet"]


def test_pending_refuses_strays_first_for_a_list_and_last_for_a_stream(tmp_path: Path) -> None:
    _parts(tmp_path, range(3))
    with store.JobDir.open(tmp_path, store.RUN, _identity({"seed": 1}), {}) as job:
        pending = job.pending([0, 1])  # a generator: nothing runs until it is consumed
        with pytest.raises(OutputConflictError, match="beyond this run's 2 chunks"):
            next(pending)
        consumed: list[int] = []

        def stream() -> Any:
            for k in (0, 1):
                consumed.append(k)
                yield k

        with pytest.raises(OutputConflictError, match="beyond this run's 2 chunks"):
            list(job.pending(stream()))
        assert consumed == [0, 1]  # a stream's length is known only at its end


def test_check_parts_is_the_read_only_verdict_a_resume_acts_on(tmp_path: Path) -> None:
    _parts(tmp_path, range(3))
    (tmp_path / "_parts" / "_part-00002.json").unlink()  # committed, not yet recorded
    tag = store.RUN.tag(_identity({"seed": 1}))
    checks = store.check_parts(tmp_path, tag, n_chunks=2, noun="run")
    assert [(c.chunk, c.problem) for c in checks] == [
        (0, None),
        (1, None),
        (2, "beyond this run's 2 chunks"),
    ]
    checks = store.check_parts(tmp_path, tag)
    assert checks[2].record is None and checks[2].problem == "no record of it being committed by this run"
    assert (
        store.check_parts(tmp_path, "another identity")[0].problem == "written by a run with another config"
    )
    view = store.inspect(tmp_path)
    assert not view.finished and view.record is not None and view.latest is view.record
    assert sorted(p.name for p in tmp_path.glob("part-*")) == [f"part-0000{k}.parquet" for k in range(3)]
