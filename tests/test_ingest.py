"""Ingest: every input format, streamed in chunks, with exact rejects (file, line, raw, reason)."""

from __future__ import annotations

import gzip
import itertools
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.boards import Board, format_compact, parse_compact
from pipeline.boards.ingest import (
    BoardParser,
    IngestChunk,
    Record,
    check_input,
    fingerprint,
    iter_chunks,
    iter_ingest_chunks,
    read_records,
)
from pipeline.errors import BoardError, BoggleError
from pipeline.lexicon.trie import Alphabet

ENGLISH = Alphabet.english()


def ingest(files: list[Path], chunk_size: int = 1000, **kw: object) -> list[IngestChunk]:
    alphabet = kw.pop("alphabet", ENGLISH)
    return list(iter_ingest_chunks([str(f) for f in files], alphabet, chunk_size, **kw))  # type: ignore[arg-type]


def boards_of(chunks: list[IngestChunk], alphabet: Alphabet = ENGLISH) -> list[Board]:
    """The valid boards in input order, decoded."""
    out: list[tuple[int, Board]] = []
    base = 0
    for ch in chunks:
        for g in ch.groups:
            for k, row in zip(g.index, g.boards, strict=True):
                faces = tuple("" if c < 0 else alphabet.faces[c] for c in row)
                out.append((base + int(k), Board(g.rows, g.cols, faces)))
        base += ch.n_valid
    return [b for _, b in sorted(out, key=lambda t: t[0])]


def rejects_of(chunks: list[IngestChunk]) -> list[tuple[int, str, str]]:
    return [(r.line, r.raw, r.reason) for ch in chunks for r in ch.rejects]


def test_compact_lines_mixed_good_and_bad(tmp_path: Path) -> None:
    f = tmp_path / "boards.txt"
    f.write_text(
        "perslatgsineters\n"  # 1 ok
        "PERSLATGSINETERS\r\n"  # 2 ok (upper case, CRLF)
        "\n"  # 3 blank: not a record
        "abc\n"  # 4 not square
        "# a comment\n"  # 5 not a record
        "perslatgsinete1s\n"  # 6 a digit
        "qqqqqqqqqqqqqqqq\n"  # 7 ok: q is the Qu cell
        "[th]erslatgsineters\n"  # 8 face outside the alphabet
        "  abcd.fghijklmnop  \n"  # 9 ok, with a blank cell and spaces around
        "abcdefghijklmnopqrstuvwxy\n",  # 10 ok: 5x5
        encoding="utf-8",
    )
    chunks = ingest([f], chunk_size=3)
    # 10 lines, less the blank line and the comment: 8 records, 5 good and 3 rejected
    assert [c.n_input for c in chunks] == [3, 3, 2]
    assert [c.n_valid for c in chunks] == [2, 1, 2]
    assert [format_compact(b) for b in boards_of(chunks)] == [
        "perslatgsineters",
        "perslatgsineters",
        "[qu]" * 16,
        "abcd.fghijklmnop",
        "abcdefghijklmnop[qu]rstuvwxy",
    ]
    got = rejects_of(chunks)
    assert [(line, raw) for line, raw, _ in got] == [
        (4, "abc"),
        (6, "perslatgsinete1s"),
        (8, "[th]erslatgsineters"),
    ]
    reasons = [r for _, _, r in got]
    assert "not a square number" in reasons[0]
    assert reasons[1] == "position 15: unknown face '1' (faces are letters; '.' is a blank)"
    assert "face 'th' (cell 1) is not in the run's alphabet" in reasons[2]
    assert reasons[2].endswith("add it to [boards] faces")


def test_counts_add_up_and_boards_keep_input_order(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    lines = []
    good = []
    for i in range(500):
        if i % 7 == 3:
            lines.append("x" * 15)  # not square
        elif i % 11 == 5:
            lines.append("abcdefgh1jklmnop")  # bad face
        else:
            text = "".join(rng.choice(list("abcdefghijklmnoprstuvwxyz"), 16))
            lines.append(text)
            good.append(text)
    f = tmp_path / "many.txt"
    f.write_text("\n".join(lines) + "\n")
    chunks = ingest([f], chunk_size=64)
    assert sum(c.n_input for c in chunks) == 500
    assert sum(c.n_valid for c in chunks) == len(good)
    assert sum(len(c.rejects) for c in chunks) == 500 - len(good)
    assert [format_compact(b) for b in boards_of(chunks)] == good
    assert all(c.n_input == 64 for c in chunks[:-1]) and [c.chunk for c in chunks] == list(range(len(chunks)))


def test_exact_counts(tmp_path: Path) -> None:
    f = tmp_path / "b.txt"
    f.write_text(
        "perslatgsineters\nabc\nqqqqqqqqqqqqqqqq\n\n  abcd.fghijklmnop  \nabcdefghijklmnopqrstuvwxy\n"
    )
    chunks = ingest([f])
    assert [format_compact(b) for b in boards_of(chunks)] == [
        "perslatgsineters",
        "[qu]" * 16,
        "abcd.fghijklmnop",
        "abcdefghijklmnop[qu]rstuvwxy",
    ]
    assert [b.shape for b in boards_of(chunks)] == [(4, 4), (4, 4), (4, 4), (5, 5)]
    assert rejects_of(chunks)[0][:2] == (2, "abc") and len(rejects_of(chunks)) == 1


def test_shape_restricts_boards(tmp_path: Path) -> None:
    f = tmp_path / "b.txt"
    f.write_text("abcdefghijkl\nperslatgsineters\nabcdefghijklmnopqrstuvwxy\n")
    chunks = ingest([f], shape=(3, 4))
    assert [b.shape for b in boards_of(chunks)] == [(3, 4)]
    reasons = [r for _, _, r in rejects_of(chunks)]
    hint = " (the run's shape; [boards] mixed_shapes = true keeps every shape)"
    assert reasons == [
        f"board 'perslatgsineters' has 16 faces, expected 12 for 3x4{hint}",
        f"board 'abcdefghijklmnopqrstuvwxy' has 25 faces, expected 12 for 3x4{hint}",
    ]


def test_algs4_boards_in_sequence(tmp_path: Path) -> None:
    f = tmp_path / "b.algs4"
    f.write_text(
        "4 4\nP E R S\nL A T G\nS I N E\nT E R S\n"  # line 1: ok
        "4 4\nA B\n"  # line 6: too short (cut by the next header)
        "3 3\nA B C\nD E F\nG H Qu\n"  # line 8: ok, Qu
        "2 2\nA B\nC 7\n"  # line 12: a bad face
        "2 2\nA B C\n",  # line 15: too short at the end
    )
    chunks = ingest([f])
    assert [format_compact(b) for b in boards_of(chunks)] == ["perslatgsineters", "abcdefgh[qu]"]
    got = rejects_of(chunks)
    assert [(line, reason) for line, _, reason in got] == [
        (6, "expected 16 faces after the header, found 2"),
        (12, "line 3, token 2: unknown face '7' (faces are letters; '.' is a blank)"),
        (15, "expected 4 faces after the header, found 3"),
    ]
    assert got[0][1] == "4 4\nA B"


def test_grid_blocks(tmp_path: Path) -> None:
    f = tmp_path / "b.grid"
    f.write_text("a b c\nd e f\ng h i\n\nx y\nz\n\nq u i\nt e s\na b c\n\n\nth e\nn .\n")
    alphabet = ENGLISH.union(["th", "q"])
    chunks = ingest([f], alphabet=alphabet)
    valid = boards_of(chunks, alphabet)
    assert [b.shape for b in valid] == [(3, 3), (3, 3), (2, 2)]
    assert valid[1].faces[0] == "q" and valid[2].faces[0] == "th" and valid[2].faces[3] == ""
    assert rejects_of(chunks) == [(5, "x y\nz", "line 6: expected 2 faces like the first row, found 1")]


def test_csv_with_quoted_multiline_field(tmp_path: Path) -> None:
    f = tmp_path / "b.csv"
    f.write_text(
        "id,board,note\n"
        "1,perslatgsineters,ok\n"  # line 2
        '2,"bad,board","spans\ntwo lines"\n'  # line 3-4
        "3,qqqqqqqqqqqqqqqq\n"  # line 5: too few fields
        "4,ABCDEFGHIJKLMNOP,ok\n"  # line 6
        "5,,empty\n"  # line 7
    )
    chunks = ingest([f])
    assert [format_compact(b) for b in boards_of(chunks)] == ["perslatgsineters", "abcdefghijklmnop"]
    assert rejects_of(chunks) == [
        (3, "bad,board", "position 4: unknown face ',' (faces are letters; '.' is a blank)"),
        (5, "qqqqqqqqqqqqqqqq", "row has 2 fields, the header has 3"),
        (7, "", "empty board"),
    ]
    assert sum(c.n_input for c in chunks) == 5


def test_csv_and_parquet_file_errors(tmp_path: Path) -> None:
    f = tmp_path / "b.csv"
    f.write_text("id,grid\n1,abcd\n")
    with pytest.raises(BoardError, match=r"b.csv:1: no 'board' column \(columns: id, grid\)"):
        check_input(str(f))
    check_input(str(f), column="grid")
    (tmp_path / "e.csv").write_text("")
    with pytest.raises(BoardError, match="empty CSV"):
        check_input(str(tmp_path / "e.csv"))
    with pytest.raises(BoggleError, match="input file not found"):
        check_input(str(tmp_path / "missing.txt"))
    (tmp_path / "x.parquet").write_text("not parquet")
    with pytest.raises(BoardError, match="not a readable Parquet file"):
        check_input(str(tmp_path / "x.parquet"))
    pq.write_table(pa.table({"board": [1, 2]}), tmp_path / "n.parquet")
    with pytest.raises(BoardError, match="column 'board' is int64, expected strings"):
        check_input(str(tmp_path / "n.parquet"))


def test_parquet_rows_and_nulls(tmp_path: Path) -> None:
    f = tmp_path / "b.parquet"
    pq.write_table(pa.table({"x": [1, 2, 3, 4], "board": ["perslatgsineters", None, "abc", "QIET"]}), f)
    chunks = ingest([f], chunk_size=2)
    assert [format_compact(b) for b in boards_of(chunks)] == ["perslatgsineters", "[qu]iet"]
    assert [(line, reason.split(":")[0]) for line, _, reason in rejects_of(chunks)] == [
        (2, "missing board (null)"),
        (3, "board 'abc' has 3 faces, not a square number; give the shape as RxC"),
    ]


def test_gzip_bom_and_bad_utf8(tmp_path: Path) -> None:
    f = tmp_path / "b.txt.gz"
    f.write_bytes(gzip.compress(b"\xef\xbb\xbfperslatgsineters\nab\xffdefghijklmnop\nqiet\n"))
    chunks = ingest([f])
    assert [format_compact(b) for b in boards_of(chunks)] == ["perslatgsineters", "[qu]iet"]
    ((line, raw, reason),) = rejects_of(chunks)
    assert (line, reason) == (2, "not UTF-8 text") and raw.startswith("ab") and "\ufffd" in raw


def test_sources_name_each_file(tmp_path: Path) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("perslatgsineters\n")
    b.write_text("qiet\nabcd\n")
    chunks = ingest([a, b], chunk_size=10)
    (ch,) = chunks
    names = [ch.sources[s] for g in ch.groups for s in g.source]
    assert sorted(names) == [str(a), str(b), str(b)]


def test_fast_path_agrees_with_the_parsers() -> None:
    rng = np.random.default_rng(1)
    parser = BoardParser(ENGLISH)
    chars = list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.")
    records = []
    for i in range(300):
        n = int(rng.choice([4, 9, 16, 25]))
        records.append(Record("f", i + 1, "".join(rng.choice(chars, n)), "compact"))
    chunk = parser.parse(0, records)
    assert chunk.rejects == [] and chunk.n_valid == 300
    got = {}
    for g in chunk.groups:
        for k, row in zip(g.index, g.boards, strict=True):
            got[int(k)] = Board(g.rows, g.cols, tuple("" if c < 0 else ENGLISH.faces[c] for c in row))
    assert [got[i] for i in range(300)] == [parse_compact(r.raw) for r in records]


def test_chunks_stream_lazily() -> None:
    def endless() -> Iterator[Record]:
        for i in itertools.count():
            yield Record("f", i + 1, "abcd", "compact")

    first_two = list(itertools.islice(iter_chunks(endless(), 5), 2))
    assert [len(c) for c in first_two] == [5, 5] and first_two[1][0].line == 6


def test_reader_is_a_generator(tmp_path: Path) -> None:
    f = tmp_path / "b.txt"
    f.write_text("abcd\n" * 10)
    it = read_records(str(f))
    assert next(it).line == 1 and next(it).line == 2


def test_fingerprint(tmp_path: Path) -> None:
    f = tmp_path / "b.txt"
    f.write_bytes(b"abc\n")
    fp = fingerprint(str(f))
    assert fp == {
        "file": str(f),
        "bytes": 4,
        "sha256": "edeaaff3f1774ad2888673770c6d64097e391bc362d7d6fb34982ddf0efd18cb",
    }


def test_a_run_keeps_its_shape_unless_mixing_is_asked_for(tmp_path: Path, enable2k_path: str) -> None:
    """An ingest run's shape is ``[boards] shape``, else its dice's (4x4 for the default dice):
    a 1-letter and a 25-letter row are rejects with their reason, and the counts add up;
    ``mixed_shapes = true`` keeps them (square lines take their side from their length)."""
    from pipeline import read_run
    from pipeline.config import load_config
    from pipeline.runner import run_job
    from pipeline.store import read_rejects

    f = tmp_path / "b.txt"
    f.write_text("perslatgsineters\na\nabcdefghijklmnopqrstuvwxy\n")
    values = {"boards.source": "ingest", "boards.files": [str(f)], "lexicon.path": enable2k_path}
    one = run_job(load_config(None, {**values, "run.out": str(tmp_path / "one"), "run.n_jobs": 1}))
    assert (one.boards, one.rejected, one.input_rows) == (1, 2, 3)
    reasons = {r["raw"]: r["reason"] for r in read_rejects(tmp_path / "one")}
    assert reasons["a"].startswith("board 'a' has 1 faces, expected 16 for 4x4 (the run's shape")
    assert "expected 16 for 4x4" in reasons["abcdefghijklmnopqrstuvwxy"]
    mixed = {**values, "boards.mixed_shapes": True, "run.out": str(tmp_path / "mixed"), "run.n_jobs": 1}
    both = run_job(load_config(None, mixed))
    assert (both.boards, both.rejected) == (3, 0)
    shapes = read_run(tmp_path / "mixed", columns=["rows", "cols"]).to_pylist()
    assert sorted((r["rows"], r["cols"]) for r in shapes) == [(1, 1), (4, 4), (5, 5)]
    with pytest.raises(BoggleError, match="mixed_shapes = true: a run keeps boards of one shape"):
        load_config(None, {**mixed, "boards.shape": "4x4"})


def test_a_repeated_header_row_is_a_reject_saying_so(tmp_path: Path) -> None:
    """CSV files joined with ``cat`` repeat their header; a text export may start with the
    column's name: each is a reject named as a header row, not a board of the wrong size."""
    csv_file = tmp_path / "b.csv"
    csv_file.write_text("id,board\n1,perslatgsineters\nid,board\n2,perslatgsineters\n")
    chunks = ingest([csv_file])
    assert len(boards_of(chunks)) == 2
    assert [(line, raw, reason) for line, raw, reason in rejects_of(chunks)] == [
        (3, "board", "a repeated header row, not a board")
    ]
    text = tmp_path / "b.txt"
    text.write_text("Board\nperslatgsineters\n")
    (reject,) = rejects_of(ingest([text]))
    assert reject[0] == 1 and reject[2] == "a header row ('Board', the board column's name), not a board"
