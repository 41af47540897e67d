from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest

from pipeline.errors import LexiconError
from pipeline.lexicon import (
    compile_for_boards,
    compile_lexicon,
    load_lexicon,
    tanglet_languages,
)
from pipeline.lexicon.trie import Alphabet
from pipeline.rules import get_rules
from tests.conftest import IN_CI


def write(tmp_path: Path, name: str, data: bytes) -> str:
    p = tmp_path / name
    p.write_bytes(data)
    return str(p)


def test_enable2k_loads_every_word_despite_crlf(enable2k_path: str) -> None:
    lex = load_lexicon(enable2k_path)
    assert len(lex.words) == 173528
    assert max(len(w) for w in lex.words) == 28
    assert all("\r" not in w for w in lex.words[:1000])
    assert lex.report.n_kept == 173528 and lex.report.n_dropped == 0


def test_normalisation_reports_every_drop(tmp_path: Path) -> None:
    path = write(tmp_path, "w.txt", "Cat\n  dog \n\nCAT\nqat\nquiet\nox\nÉTÉ\n".encode())
    lex = load_lexicon(path)
    assert lex.words == ["cat", "dog", "ox", "qat", "quiet", "été"]
    assert lex.report.dropped == {"empty": 1, "duplicate": 1}
    compiled = compile_lexicon(path, Alphabet.english(), get_rules("boggle"), use_cache=False)
    assert compiled.words == ["cat", "dog", "quiet"]
    rep = compiled.report
    assert rep.n_input == 8 and rep.n_kept == 3
    assert rep.dropped["shorter than 3 letters"] == 1
    unspellable = next(k for k in rep.dropped if k.startswith("not spellable"))
    assert rep.dropped[unspellable] == 2
    assert sorted(rep.examples[unspellable]) == ["qat", "été"]
    assert rep.n_input == rep.n_kept + rep.n_dropped


def test_gzip_and_plain_give_the_same_words(tmp_path: Path) -> None:
    text = b"alpha\nbeta\ngamma\n"
    a = load_lexicon(write(tmp_path, "w.txt", text))
    b = load_lexicon(write(tmp_path, "w.txt.gz", gzip.compress(text)))
    assert a.words == b.words == ["alpha", "beta", "gamma"]


@pytest.mark.parametrize(
    "data, message",
    [
        (b"", "no words"),
        (b"\n \n", "no words"),
        (b"abc\nde\x00f\n", ":2: binary data"),
        (b"abc\n\xff\xfe\n", ":2: not UTF-8"),
        (b"\x1f\x8bnot really gzip", "not a valid gzip file"),
    ],
)
def test_bad_lexicon_files(tmp_path: Path, data: bytes, message: str) -> None:
    with pytest.raises(LexiconError, match=message):
        load_lexicon(write(tmp_path, "bad.txt", data))


def test_missing_lexicon_file_names_what_a_dictionary_can_be(tmp_path: Path) -> None:
    with pytest.raises(LexiconError) as info:
        load_lexicon(str(tmp_path / "nope.txt"))
    msg = info.value.one_line()
    assert msg == (
        f"dictionary file not found: {tmp_path / 'nope.txt'}; pass a word-list file, enable2k (embedded) "
        "or tanglet:<lang>"
    )
    assert "apt-get" not in msg  # a missing file is not a missing package


def test_the_embedded_enable2k_is_the_published_list() -> None:
    """The embedded list is ENABLE2K byte for byte: 173,528 words, CRLF lines, and the content
    hash of the published file (so caches, run identities and certificates made from the plain
    file carry over)."""
    from pipeline.lexicon import WordSource, default_dictionary

    src = WordSource.open("enable2k")
    assert src.content_hash == "f1e9b50e535a31d0d8451f7b373bb7966637d225e256a7c485983a0c7545fcd3"
    assert src.raw.count(b"\r\n") == 173_528 and src.raw.startswith(b"aa\r\naah\r\naahed\r\n")
    words = load_lexicon("enable2k").words
    assert len(words) == 173_528 and max(map(len, words)) == 28
    assert {"quiz", "zyzzyva", "ethylenediaminetetraacetates"} <= set(words)
    assert default_dictionary() == "enable2k" or os.environ.get("BOGGLE_DICTIONARY")


def test_a_file_named_like_an_embedded_list_is_reached_by_its_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, "enable2k", b"cat\ndog\n")
    monkeypatch.chdir(tmp_path)
    assert len(load_lexicon("enable2k").words) == 173_528  # the name: the embedded list
    assert load_lexicon("./enable2k").words == ["cat", "dog"]  # a path: the file


def test_missing_tanglet_pack(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TANGLET_DATA", str(tmp_path))
    with pytest.raises(LexiconError, match="apt-get install tanglet-data"):
        load_lexicon("tanglet:en")


@pytest.mark.skipif("en" not in tanglet_languages() and not IN_CI, reason="tanglet-data not installed")
def test_tanglet_pack_takes_only_the_first_field() -> None:
    lex = load_lexicon("tanglet:en")
    assert len(lex.words) > 200_000
    assert all(" " not in w and w == w.lower() for w in lex.words[:5000])


def test_compiled_lexicon_is_cached(tmp_path: Path) -> None:
    path = write(tmp_path, "w.txt", b"tea\neat\nate\n")
    rules = get_rules("boggle")
    first = compile_lexicon(path, Alphabet.english(), rules)
    second = compile_lexicon(path, Alphabet.english(), rules)
    assert not first.from_cache and second.from_cache
    assert second.words == first.words
    assert second.report.to_dict() == first.report.to_dict()
    # another minimum length is another cache entry
    assert not compile_lexicon(path, Alphabet.english(), get_rules("big")).from_cache
    # changed content, same path: the hash changes, so the cache is not reused
    Path(path).write_bytes(b"tea\neat\nate\ntae\n")
    third = compile_lexicon(path, Alphabet.english(), rules)
    assert not third.from_cache and third.words == ["ate", "eat", "tae", "tea"]


def test_corrupt_cache_entry_is_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BOGGLE_CACHE_DIR", str(tmp_path / "cache"))
    path = write(tmp_path, "w.txt", b"tea\neat\n")
    compile_lexicon(path, Alphabet.english(), get_rules("boggle"))
    for f in (tmp_path / "cache").glob("*.npz"):
        f.write_bytes(b"garbage")
    again = compile_lexicon(path, Alphabet.english(), get_rules("boggle"))
    assert again.words == ["eat", "tea"] and not again.from_cache


def test_compact_alphabet_uses_qu_for_q(tmp_path: Path) -> None:
    path = write(tmp_path, "w.txt", b"quiz\nqat\nzebra\n")
    c = compile_for_boards(path, get_rules("boggle"))
    assert "qu" in c.alphabet.faces and "q" not in c.alphabet.faces
    assert c.words == ["quiz", "zebra"]
    # a board that shows a plain q face adds it to the alphabet, and qat becomes spellable
    c2 = compile_for_boards(path, get_rules("boggle"), {"q"})
    assert c2.words == ["qat", "quiz", "zebra"]


def test_non_ascii_lexicon(tmp_path: Path) -> None:
    path = write(tmp_path, "pl.txt", "żółw\nŁĄKA\nkot\n".encode())
    c = compile_for_boards(path, get_rules("boggle"))
    assert c.words == ["kot", "łąka", "żółw"]
    assert {"ż", "ó", "ł", "ą"} <= set(c.alphabet.faces)


def test_a_cache_miss_is_announced_once_and_a_hit_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pipeline.lexicon._compile as compiling  # ANNOUNCE_BYTES, patched
    from pipeline.lexicon import set_compile_listener

    small = write(tmp_path, "small.txt", b"tea\neat\n")
    path = write(tmp_path, "w.txt", b"tea\neat\nate\n")
    heard: list[str] = []
    set_compile_listener(heard.append)
    try:
        compile_for_boards(small, get_rules("boggle"))  # under ANNOUNCE_BYTES: compiles quietly
        assert heard == []
    finally:
        set_compile_listener(None)
    monkeypatch.setattr(compiling, "ANNOUNCE_BYTES", 0)
    heard: list[str] = []
    set_compile_listener(heard.append)
    try:
        compile_for_boards(path, get_rules("boggle"))  # parses for the alphabet, then compiles
        assert len(heard) == 1 and "compiling the word list w.txt" in heard[0]
        compile_for_boards(path, get_rules("boggle"))
        assert len(heard) == 1
    finally:
        set_compile_listener(None)


def test_an_old_layout_cache_file_is_never_loaded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    from pipeline.lexicon import cache_dir, cache_key

    monkeypatch.setenv("BOGGLE_CACHE_DIR", str(tmp_path / "cache"))
    path = write(tmp_path, "w.txt", b"tea\neat\n")
    first = compile_lexicon(path, Alphabet.english(), get_rules("boggle"))
    # the layout before format 2: three separate node arrays, no packed records
    t = first.trie
    cache_file = cache_dir() / f"{cache_key(first.content_hash, Alphabet.english(), get_rules('boggle'))}.npz"
    with open(cache_file, "wb") as fh:
        np.savez(fh, mask=t.mask, first_child=t.first_child, word_id=t.word_id)
    again = compile_lexicon(path, Alphabet.english(), get_rules("boggle"))
    assert not again.from_cache and again.words == ["eat", "tea"]


def test_duplicates_and_blanks_are_counted_with_examples_as_written(tmp_path: Path) -> None:
    path = write(tmp_path, "w.txt", b"b\n  \nA\na\nB\nc\nc \n")
    lex = load_lexicon(path)
    assert lex.words == ["a", "b", "c"]
    assert lex.report.dropped == {"empty": 1, "duplicate": 3}
    assert lex.report.examples["duplicate"] == ["a", "B", "c"]
    assert lex.report.examples["empty"] == ["  "]


def _spell_with_dice(word: str, dice: list[list[str]]) -> bool:
    """Plain search: can distinct dice, one a cell, show ``word`` (``qu`` one face)?"""
    faces: list[str] = []
    i = 0
    while i < len(word):
        step = 2 if word.startswith("qu", i) else 1
        faces.append(word[i : i + step])
        i += step

    def place(k: int, used: frozenset[int]) -> bool:
        if k == len(faces):
            return True
        return any(
            d not in used and faces[k] in die and place(k + 1, used | {d}) for d, die in enumerate(dice)
        )

    return place(0, frozenset())


def test_playable_words_use_each_die_once(tmp_path: Path) -> None:
    """``boggle words --dice new`` lists a word only if distinct dice can spell it: the new dice
    carry one Z, so ``zzz`` and ``zuz`` are out; ``fez`` (one F die, F twice on it) is in, ``off``
    (one die with F) out, ``eye`` (several E dice) in."""
    import json

    from pipeline.boards import load_dice_set
    from pipeline.lexicon import playable_words

    words = ["zzz", "zuz", "fez", "off", "eye", "quit", "quiz", "jazz", "fizz", "see", "bob", "abbe", "tot"]
    path = write(tmp_path, "w.txt", "\n".join(words).encode())
    got = list(playable_words(path, get_rules("boggle"), max_length=4, dice=load_dice_set("new")))
    raw = json.loads((Path(__file__).parent.parent / "pipeline" / "boards" / "dice_sets.json").read_text())
    dice = [[f.lower() for f in die] for die in raw["new"]["dice"]]
    assert set(got) == {w for w in words if _spell_with_dice(w, dice)}
    assert {"fez", "eye", "quit", "see", "tot"} <= set(got)
    assert not {"zzz", "zuz", "off", "jazz", "fizz", "bob"} & set(got)
    assert got == sorted(got)
    new = load_dice_set("new")
    assert not new.can_show(["z", "z"]) and new.can_show(["z", "qu", "e"])


def test_plain_file_writes_the_embedded_list_for_a_tool_that_reads_only_files(tmp_path: Path) -> None:
    """The benchmarks hand the field's C++ a file: the embedded list comes out as the published
    bytes (173,528 CRLF lines), written once; a path comes back absolute and untouched."""
    from pipeline.lexicon import plain_file

    out = Path(plain_file("enable2k", tmp_path / "lists"))
    data = out.read_bytes()
    assert out.parent == tmp_path / "lists" and data.count(b"\r\n") == 173_528
    assert data.startswith(b"aa\r\n")
    mtime = out.stat().st_mtime_ns
    assert plain_file("enable2k", tmp_path / "lists") == str(out) and out.stat().st_mtime_ns == mtime
    mine = tmp_path / "mine.txt"
    mine.write_text("cat\n")
    assert plain_file(os.path.relpath(mine), tmp_path) == str(mine.resolve())
    assert not (tmp_path / "mine.txt.txt").exists()
