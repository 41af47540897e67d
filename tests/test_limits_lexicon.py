"""Issue 18, the lexicon side: memory stays bounded on any word list, and a bad one (a device, a
gzip bomb, an endless line, a damaged cache file) ends in one line on stderr, never a traceback.

The command-line checks run ``boggle`` in a subprocess under a 1.5 GB address-space limit: a
loader that reads everything before refusing it dies there with a MemoryError traceback.
"""

from __future__ import annotations

import errno
import gzip
import json
import os
import stat
import subprocess
import sys
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import pipeline.lexicon._compile as compiling  # its listener, patched
from pipeline import io as pio
from pipeline.errors import ConfigError, LexiconError
from pipeline.lexicon import (
    DEFAULT_MAX_WORD,
    MAX_LINE_BYTES,
    DropReport,
    Lexicon,
    LexiconLimits,
    cache_dir,
    compile_for_boards,
    compile_lexicon,
    compile_words,
    load_lexicon,
    set_compile_listener,
)
from pipeline.lexicon.trie import Alphabet, Trie, build_trie
from pipeline.rules import get_rules
from tests.conftest import REPO, limit_memory, one_error_line

SMOKE = REPO / "configs" / "smoke.toml"


def boggle(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    """``boggle ARGS`` under the memory limit, with its lexicon cache in ``cache``/boggle-pipeline
    (through XDG_CACHE_HOME, as a user's would be)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOGGLE_")}
    env["XDG_CACHE_HOME"] = str(cache)
    return subprocess.run(
        [sys.executable, "-m", "pipeline.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        preexec_fn=limit_memory,
        timeout=300,
    )


def assert_one_line_refusal(proc: subprocess.CompletedProcess[str], *needles: str) -> str:
    assert "MemoryError" not in proc.stderr and proc.returncode == 2, proc.stderr[-2000:]
    return one_error_line(proc, *needles)


def refused_run(tmp_path: Path, dictionary: str, *needles: str) -> str:
    """``boggle run`` with ``dictionary``: refused in one line, and no run directory made."""
    out = tmp_path / "run"
    proc = boggle("run", str(SMOKE), "--out", str(out), "-q", "-d", dictionary, cache=tmp_path / "xdg")
    line = assert_one_line_refusal(proc, dictionary, *needles)
    assert not out.exists()
    return line


def gzip_bomb(path: Path, line: bytes, total: int) -> Path:
    """A one-member gzip file of ``line`` repeated to ``total`` bytes, made without compressing
    or checksumming ``total`` bytes: one fully flushed deflate segment (self-contained,
    byte-aligned) repeated, and the CRC of the repeats combined from the segment's. A few MB on
    disk, and valid (``gzip -t`` passes)."""
    block = line * ((1 << 20) // len(line))
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    segment = deflate.compress(block) + deflate.flush(zlib.Z_FULL_FLUSH)
    end = deflate.flush(zlib.Z_FINISH)
    n = -(-total // len(block))
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    crc = _repeated_crc32(zlib.crc32(block), len(block), n)
    trailer = crc.to_bytes(4, "little") + ((n * len(block)) & 0xFFFFFFFF).to_bytes(4, "little")
    with open(path, "wb") as fh:
        fh.write(header)
        for _ in range(n):
            fh.write(segment)
        fh.write(end + trailer)
    return path


def _gf2_times(matrix: list[int], vector: int) -> int:
    out, i = 0, 0
    while vector:
        if vector & 1:
            out ^= matrix[i]
        vector >>= 1
        i += 1
    return out


def _crc32_combine(crc1: int, crc2: int, len2: int) -> int:
    """zlib's crc32_combine (not exposed by Python): the CRC of A + B from those of A and B."""
    odd = [0xEDB88320] + [1 << k for k in range(31)]  # the operator for one zero bit
    even = [_gf2_times(odd, odd[k]) for k in range(32)]  # two zero bits
    odd = [_gf2_times(even, even[k]) for k in range(32)]  # four
    while len2:  # apply len2 zero bytes to crc1, squaring the operator per bit of len2
        even = [_gf2_times(odd, odd[k]) for k in range(32)]
        if len2 & 1:
            crc1 = _gf2_times(even, crc1)
        len2 >>= 1
        if not len2:
            break
        odd = [_gf2_times(even, even[k]) for k in range(32)]
        if len2 & 1:
            crc1 = _gf2_times(odd, crc1)
        len2 >>= 1
    return crc1 ^ crc2


def _repeated_crc32(crc: int, length: int, n: int) -> int:
    """The CRC-32 of n copies of a block of ``length`` bytes whose CRC is ``crc``."""
    out = 0
    while n:
        if n & 1:
            out = _crc32_combine(out, crc, length)
        crc, length, n = _crc32_combine(crc, crc, length), 2 * length, n >> 1
    return out


def write(path: Path, data: bytes) -> str:
    path.write_bytes(data)
    return str(path)


# ---------------------------------------------------------------- the command line, under a limit


def test_dev_zero_is_refused_before_reading(tmp_path: Path) -> None:
    refused_run(tmp_path, "/dev/zero", "not a regular file")


def test_gzip_bomb_of_short_lines_is_refused_while_streaming(tmp_path: Path) -> None:
    # 2 GB of "aaaa\n" in 3.2 MB: refused at the line limit, 50 MB in
    bomb = gzip_bomb(tmp_path / "bomb.gz", b"aaaa\n", 2 << 30)
    assert bomb.stat().st_size < 4 << 20
    line = refused_run(tmp_path, str(bomb), "more than 10,000,000 lines")
    assert f"{bomb}:10000001: " in line


@pytest.mark.slow
def test_gzip_bomb_of_long_lines_is_refused_at_the_size_limit(tmp_path: Path) -> None:
    # 2 GB of 1,000-byte lines: refused at the decompressed-size limit, 256 MB in (about 2 s)
    bomb = gzip_bomb(tmp_path / "bomb.gz", b"a" * 999 + b"\n", 2 << 30)
    line = refused_run(tmp_path, str(bomb), "decompresses to more than 256 MB", "BOGGLE_LEXICON_MAX_BYTES")
    assert f"{bomb}:268436: " in line  # 256 MiB / 1,000 bytes, rounded up


def test_a_40000_character_line_is_refused_with_its_line(tmp_path: Path) -> None:
    words = write(tmp_path / "w.txt", b"cat\ndog\n" + b"x" * 40_000 + b"\nemu\n")
    refused_run(tmp_path, words, f"{words}:3: ", "longer than 1,024 bytes")


def test_a_damaged_cache_is_discarded_with_a_note_and_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    words = write(tmp_path / "w.txt", b"cat\ndog\nquit\n")
    cache = tmp_path / "xdg" / "boggle-pipeline"
    monkeypatch.setenv("BOGGLE_CACHE_DIR", str(cache))
    compile_for_boards(words, get_rules("boggle"))  # fills the cache: an .npz and a letters file
    (npz,) = cache.glob("*.npz")
    (letters,) = cache.glob("letters-*.txt")
    npz.write_bytes(npz.read_bytes()[: npz.stat().st_size // 2])  # truncated: BadZipFile
    letters.write_bytes(b"\x00\xff garbage")
    proc = boggle("lookup", "cat", "qui", "-d", words, cache=tmp_path / "xdg")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stdout.splitlines() == ["cat word", "qui prefix"]
    notes = proc.stderr.splitlines()
    assert len(notes) == 2 and all(
        n.startswith("note: discarded the damaged lexicon cache file") for n in notes
    )
    assert str(letters) in notes[0] and str(npz) in notes[1] and "BadZipFile" in notes[1]
    heard: list[str] = []
    monkeypatch.setattr(compiling, "_compile_listener", heard.append)
    assert compile_for_boards(words, get_rules("boggle")).from_cache and heard == []  # rebuilt


# ---------------------------------------------------------------- limits, in process


def test_limits_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert LexiconLimits.from_env() == LexiconLimits(256 << 20, 10_000_000, 64, 64_000_000)
    monkeypatch.setenv("BOGGLE_LEXICON_MAX_BYTES", "512M")
    monkeypatch.setenv("BOGGLE_LEXICON_MAX_LINES", "20000000")
    monkeypatch.setenv("BOGGLE_LEXICON_MAX_WORD", "100")
    assert LexiconLimits.from_env() == LexiconLimits(512 << 20, 20_000_000, 100)
    monkeypatch.setenv("BOGGLE_LEXICON_MAX_BYTES", "1.5G")
    with pytest.raises(ConfigError, match=r"BOGGLE_LEXICON_MAX_BYTES='1\.5G'"):
        LexiconLimits.from_env()
    monkeypatch.setenv("BOGGLE_LEXICON_MAX_BYTES", "1K")
    monkeypatch.setenv("BOGGLE_LEXICON_MAX_WORD", str(MAX_LINE_BYTES + 1))
    with pytest.raises(ConfigError, match="BOGGLE_LEXICON_MAX_WORD"):
        LexiconLimits.from_env()
    monkeypatch.setenv("BOGGLE_LEXICON_MAX_WORD", "64")
    monkeypatch.setenv("BOGGLE_LEXICON_MAX_LINES", "9" * 5000)  # no int() of 5,000 digits
    with pytest.raises(ConfigError, match="BOGGLE_LEXICON_MAX_LINES"):
        LexiconLimits.from_env()


def test_size_and_line_limits_name_the_file_and_line(tmp_path: Path) -> None:
    text = b"".join(b"word%d\n" % i for i in range(1000))  # 7,890 bytes
    plain = write(tmp_path / "w.txt", text)
    packed = write(tmp_path / "w.txt.gz", gzip.compress(text))
    with pytest.raises(LexiconError, match=r"w.txt: the file is 7,890 bytes, over the limit of 4,096"):
        load_lexicon(plain, LexiconLimits(max_bytes=4096))
    with pytest.raises(LexiconError, match=r"w.txt.gz:526: the text decompresses to more than 4,096 bytes"):
        load_lexicon(packed, LexiconLimits(max_bytes=4096))
    with pytest.raises(LexiconError, match=r"w.txt:101: more than 100 lines"):
        load_lexicon(plain, LexiconLimits(max_lines=100))
    assert len(load_lexicon(plain, LexiconLimits(max_bytes=len(text), max_lines=1000)).words) == 1000


@pytest.mark.parametrize(
    "data, message",
    [
        (b"a\nb\n" + b"x" * (MAX_LINE_BYTES + 1), r":3: a line longer than 1,024 bytes"),
        (b"a\n" * 3 + b"x" * 3 * MAX_LINE_BYTES + b"\nb\n", r":4: a line longer than 1,024 bytes"),
        (gzip.compress(b"a\n" * 5 + b"\x00" * 10_000_000, mtime=0), r":6: binary data"),
        (gzip.compress(b"ok\n" * 10, mtime=0)[:-6], "not a valid gzip file"),
        (gzip.compress(b"ok\n", mtime=0) + b"junk", "trailing data"),
    ],
    # gzip's header holds its mtime: ids from fixed names, so that pytest-xdist's workers
    # (which collect apart and may do so in different seconds) see the same tests
    ids=["long-line", "long-line-later", "gzip-binary", "gzip-truncated", "gzip-trailing"],
)
def test_bad_streams_are_refused_with_the_line(tmp_path: Path, data: bytes, message: str) -> None:
    with pytest.raises(LexiconError, match=message):
        load_lexicon(write(tmp_path / "w.gz", data))


def test_a_trie_over_the_node_limit_is_refused_before_it_is_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path / "w.txt", b"cat\ncats\ndog\n")  # root + c a t s + d o g: 8 nodes
    monkeypatch.setenv("BOGGLE_LEXICON_MAX_NODES", "7")
    with pytest.raises(
        LexiconError, match=r"w.txt: the word list makes a trie of 8 nodes, over the limit of 7"
    ):
        compile_lexicon(path, Alphabet.english(), get_rules("boggle"), use_cache=False)
    monkeypatch.setenv("BOGGLE_LEXICON_MAX_NODES", "8")
    assert compile_lexicon(path, Alphabet.english(), get_rules("boggle"), use_cache=False).trie.n_nodes == 8


def test_lines_break_at_newlines_only(tmp_path: Path) -> None:
    # str.splitlines would make 500 entries of each line: a few checked lines, millions of words
    lex = load_lexicon(write(tmp_path / "w.txt", b"cat\r\n" + b"a\x0c" * 500 + b"\ndog\n"))
    assert lex.report.n_input == 3 and lex.words == ["cat", "dog"]
    assert lex.report.dropped == {"longer than 64 letters": 1}
    with pytest.raises(LexiconError, match=r"w.txt:1: lines end in a bare carriage return"):
        load_lexicon(write(tmp_path / "w.txt", b"cat\rdog\r" * 1000))
    with pytest.raises(LexiconError, match=r"w.txt:1: lines end in a bare carriage return"):
        load_lexicon(write(tmp_path / "w.txt", b"cat\rdog\r"))


def test_a_line_at_the_limit_is_read(tmp_path: Path) -> None:
    word = "é" * (MAX_LINE_BYTES // 2)  # 1,024 bytes of UTF-8, 512 letters
    lex = load_lexicon(write(tmp_path / "w.txt", f"cat\n{word}\n".encode()), LexiconLimits(max_word=512))
    assert lex.words == ["cat", word]


def test_concatenated_and_zero_padded_gzip_members_are_one_list(tmp_path: Path) -> None:
    data = gzip.compress(b"alpha\nbeta\n") + gzip.compress(b"gamma\n") + b"\x00" * 512
    assert load_lexicon(write(tmp_path / "w.gz", data)).words == ["alpha", "beta", "gamma"]


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(LexiconError, match="not a regular file"):
        load_lexicon(str(fifo))


# ---------------------------------------------------------------- the word-length cap


def test_words_over_the_cap_are_dropped_and_reported(tmp_path: Path) -> None:
    long_word, longest_kept = "a" * (DEFAULT_MAX_WORD + 1), "b" * DEFAULT_MAX_WORD
    path = write(tmp_path / "w.txt", f"cat\n{long_word}\n{longest_kept}\ncat\n\n".encode())
    lex = load_lexicon(path)
    assert lex.words == [longest_kept, "cat"]
    rep = lex.report
    assert rep.dropped == {"empty": 1, "duplicate": 1, "longer than 64 letters": 1}
    assert rep.examples["longer than 64 letters"] == [long_word]
    assert rep.n_input == 5 and rep.n_kept == 2 and rep.n_input == rep.n_kept + rep.n_dropped
    assert "1 dropped as longer than 64 letters" in rep.summary()
    compiled = compile_lexicon(path, Alphabet.english(), get_rules("boggle"), use_cache=False)
    assert compiled.words == [longest_kept, "cat"] and compiled.report.dropped["longer than 64 letters"] == 1


def test_the_cap_follows_the_environment_and_keys_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BOGGLE_CACHE_DIR", str(tmp_path / "cache"))
    path = write(tmp_path / "w.txt", b"cat\nhorse\nelephant\n")
    rules = get_rules("boggle")
    assert compile_lexicon(path, Alphabet.english(), rules).words == ["cat", "elephant", "horse"]
    monkeypatch.setenv("BOGGLE_LEXICON_MAX_WORD", "5")
    capped = compile_lexicon(path, Alphabet.english(), rules)
    assert not capped.from_cache and capped.words == ["cat", "horse"]
    assert capped.report.dropped == {"longer than 5 letters": 1}
    assert compile_lexicon(path, Alphabet.english(), rules).from_cache
    monkeypatch.setenv("BOGGLE_LEXICON_MAX_WORD", "1")
    with pytest.raises(LexiconError, match="no words of at most 1 letters"):
        load_lexicon(path)


def test_a_word_beyond_int16_never_overflows() -> None:
    # built in memory, not loaded: the cap still applies when the lexicon is compiled
    huge = "a" * 40_000
    lex = Lexicon("mem", "mem", "0" * 64, sorted(["cat", huge]), DropReport(n_input=2))
    compiled = compile_words(lex, Alphabet.english(), get_rules("boggle"))
    assert compiled.words == ["cat"] and compiled.report.dropped == {"longer than 64 letters": 1}
    assert compiled.report.examples["longer than 64 letters"] == [huge]
    with pytest.raises(LexiconError, match="too long: the trie stores words of at most 32,767 letters"):
        build_trie(["cat", huge], Alphabet.english())
    trie, _ = build_trie(["cat", "b" * 32_767], Alphabet.english())
    assert int(trie.word_len.max()) == 32_767 and trie.max_depth == 32_767


# ---------------------------------------------------------------- the cache, in process


def _damage_truncated(p: Path) -> None:
    p.write_bytes(p.read_bytes()[:1000])


def _damage_flipped(p: Path) -> None:
    import struct
    import zipfile

    data = bytearray(p.read_bytes())
    with zipfile.ZipFile(p) as z:
        info = z.getinfo("nodes.npy")
    # the member's data starts after its local header (30 bytes, then its name and extra field)
    name_len, extra_len = struct.unpack("<HH", data[info.header_offset + 26 : info.header_offset + 30])
    start = info.header_offset + 30 + name_len + extra_len
    data[start + info.compress_size // 2] ^= 0xFF  # inside an array: the member's CRC no longer matches
    p.write_bytes(bytes(data))


def _damage_ids(p: Path) -> None:
    trie, meta = Trie.load(p)
    trie.word_id[-1] = 10**6  # loads, but would send a kernel out of bounds
    trie.save(p, meta)


def _damage_meta(p: Path) -> None:
    trie, meta = Trie.load(p)
    trie.save(p, {"identity": meta["identity"]})  # what it is, but no drop report


@pytest.mark.parametrize(
    "damage, why",
    [
        (lambda p: p.write_bytes(b""), "EOFError"),
        (_damage_truncated, "BadZipFile"),
        (_damage_flipped, "BadZipFile"),
        (_damage_ids, "word id out of range"),
        (_damage_meta, "KeyError"),
    ],
)
def test_any_damaged_cache_entry_is_rebuilt_with_one_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: Callable[[Path], None], why: str
) -> None:
    monkeypatch.setenv("BOGGLE_CACHE_DIR", str(tmp_path / "cache"))
    path = write(tmp_path / "w.txt", b"tea\neat\nquit\n")
    rules = get_rules("boggle")
    first = compile_lexicon(path, Alphabet.english(), rules)
    (npz,) = cache_dir().glob("*.npz")
    damage(npz)
    heard: list[str] = []
    set_compile_listener(heard.append)
    try:
        again = compile_lexicon(path, Alphabet.english(), rules)
    finally:
        set_compile_listener(None)
    assert not again.from_cache and again.words == first.words == ["eat", "quit", "tea"]
    assert len(heard) == 1 and str(npz) in heard[0] and why in heard[0] and "\n" not in heard[0]
    assert compile_lexicon(path, Alphabet.english(), rules).from_cache


@pytest.mark.parametrize("content", [b"", b"a\nb\nb", b"a\n\nc", b"A\nb", b"\xff\xfe", b"1\n2"])
def test_a_damaged_alphabet_marker_is_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: bytes
) -> None:
    monkeypatch.setenv("BOGGLE_CACHE_DIR", str(tmp_path / "cache"))
    path = write(tmp_path / "w.txt", b"zebra\nquiz\n")
    assert compile_for_boards(path, get_rules("boggle")).alphabet.faces[-1] == "z"
    (marker,) = cache_dir().glob("letters-*.txt")
    header = marker.read_bytes().split(b"\n")[0]  # what the marker is of, kept: its faces damaged
    marker.write_bytes(header + b"\n" + content)
    heard: list[str] = []
    monkeypatch.setattr(compiling, "_compile_listener", heard.append)
    again = compile_for_boards(path, get_rules("boggle"))
    assert again.words == ["quiz", "zebra"] and "qu" in again.alphabet.faces
    assert len(heard) == 1 and str(marker) in heard[0] and "damaged" in heard[0]
    assert marker.read_text(encoding="utf-8").split("\n")[1:] == list(again.alphabet.faces)


# ---------------------------------------------------------------- durable writes


def test_atomic_writes_fsync_the_file_then_rename_then_fsync_the_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        events.append("fsync dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "fsync file")
        real_fsync(fd)

    def replace(a: str | Path, b: str | Path) -> None:
        events.append("rename")
        real_replace(a, b)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    trie, _ = build_trie(["cat", "dog"], Alphabet.english())
    trie.save(tmp_path / "t.npz")
    assert events == ["fsync file", "rename", "fsync dir"]
    events.clear()
    pio.write_text_atomic(tmp_path / "sub" / "x.txt", "x")
    assert events == ["fsync file", "rename", "fsync dir"]
    assert Trie.load(tmp_path / "t.npz")[0].words == ["cat", "dog"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sub", "t.npz"]  # no temp file left


def test_an_fsync_error_names_the_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def fsync(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "fsync", fsync)
    target = tmp_path / "x.txt"
    with pytest.raises(OSError) as info:
        pio.write_text_atomic(target, "x")
    assert info.value.errno == errno.EIO and str(target.name) in str(info.value.filename)
    assert not target.exists() and list(tmp_path.iterdir()) == []


def test_a_failed_write_names_the_file(tmp_path: Path) -> None:
    target = tmp_path / "x.txt"
    with pytest.raises(OSError) as info, pio.atomic_path(target):
        raise OSError(errno.ENOSPC, "No space left on device")  # as a full disk's write does
    assert info.value.errno == errno.ENOSPC and info.value.filename == str(target)
    assert list(tmp_path.iterdir()) == []


def test_a_directory_that_cannot_be_opened_is_skipped_quietly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_open = os.open

    def no_dirs(path: str | Path, flags: int, *args: int) -> int:
        if Path(path).is_dir():
            raise PermissionError(errno.EACCES, "Permission denied", str(path))  # as on Windows
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", no_dirs)
    pio.write_text_atomic(tmp_path / "x.txt", "x")
    assert (tmp_path / "x.txt").read_text() == "x"


def test_check_refuses_masks_that_do_not_match_the_node_count() -> None:
    trie, _ = build_trie(["cat", "cats", "dog"], Alphabet.english())
    trie.check()
    trie.nodes[0, 0] |= np.uint64(1 << 5)  # a child face more than the nodes hold
    with pytest.raises(ValueError, match="child masks"):
        trie.check()


# ---------------------------------------------------------------- a cache that cannot be trusted


def _solve_json(words: str, cache: Path) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    proc = boggle("solve", "ratsxxxxxxxxxxxx", "--json", "-d", words, cache=cache)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    return proc, [line for line in proc.stderr.splitlines() if line.startswith("note: ")]


def test_a_cache_entry_of_another_word_list_under_this_ones_name_is_rebuilt(tmp_path: Path) -> None:
    """Lexicon A's cache files copied over lexicon B's names (same letters, other words): B's
    words and score, with one note a file, never A's."""
    a = write(tmp_path / "a.txt", b"rats\nstar\n")
    b = write(tmp_path / "b.txt", b"rats\ntar\nrat\n")
    cache = tmp_path / "xdg"
    folder = cache / "boggle-pipeline"
    _solve_json(a, cache)
    a_files = {p.name: p.read_bytes() for p in folder.iterdir()}
    clean, _ = _solve_json(b, cache)
    b_files = {p.name for p in folder.iterdir()} - set(a_files)
    (b_npz,) = [n for n in b_files if n.endswith(".npz")]
    (b_letters,) = [n for n in b_files if n.startswith("letters-")]
    (a_npz,) = [n for n in a_files if n.endswith(".npz")]
    (a_letters,) = [n for n in a_files if n.startswith("letters-")]
    (folder / b_npz).write_bytes(a_files[a_npz])
    (folder / b_letters).write_bytes(a_files[a_letters])
    again, notes = _solve_json(b, cache)
    assert again.stdout == clean.stdout
    found = json.loads(clean.stdout)
    assert sorted(w["word"] if isinstance(w, dict) else w for w in found["words"]) == ["rat", "rats", "tar"]
    assert len(notes) == 2, notes
    assert all("discarded the mismatched lexicon cache file" in n and "rebuilding it" in n for n in notes)
    assert any(b_npz in n for n in notes) and any(b_letters in n for n in notes)
    _, notes = _solve_json(b, cache)  # rebuilt: used again, no note
    assert notes == []


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="no POSIX owners")
def test_a_cache_folder_others_can_write_is_not_used(tmp_path: Path) -> None:
    words = write(tmp_path / "w.txt", b"rats\nstar\n")
    cache = tmp_path / "xdg"
    clean, _ = _solve_json(words, cache)  # made 0700
    folder = cache / "boggle-pipeline"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    for p in folder.iterdir():
        p.unlink()
    folder.chmod(0o777)
    proc, notes = _solve_json(words, cache)
    assert proc.stdout == clean.stdout
    assert notes == [
        f"note: the lexicon cache folder {folder} is writable by other users; not using it "
        "(compiling in memory)"
    ]
    assert list(folder.iterdir()) == []  # nothing written there
    folder.chmod(0o1777)  # sticky, as /tmp: others cannot replace our files
    proc, notes = _solve_json(words, cache)
    assert proc.stdout == clean.stdout and notes == []
    assert len(list(folder.glob("*.npz"))) == 1


def test_atomic_temp_names_are_unpredictable_and_created_exclusively(tmp_path: Path) -> None:
    """A link planted at the temp name a writer used to pick (``.NAME.PID.tmp``) is neither
    followed nor renamed into place."""
    victim = tmp_path / "victim.txt"
    victim.write_text("mine")
    target = tmp_path / "out.txt"
    planted = tmp_path / f".{target.name}.{os.getpid()}.tmp"
    planted.symlink_to(victim)
    pio.write_text_atomic(target, "written")
    assert victim.read_text() == "mine"
    assert target.read_text() == "written" and not target.is_symlink()
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~pio._umask()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([victim.name, target.name, planted.name])
