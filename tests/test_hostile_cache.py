"""Issue 54, the lexicon cache: an entry edited on purpose (a valid zip of valid arrays, saved
with the same metadata) is caught by its keyed checksum, discarded with one note and rebuilt,
like a damaged one; it never changes a score or a word found. The zip's CRC only catches bit
flips. What the checksum does not stop (docs/methods/lexicon.md, "The cache") is tested too.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from pipeline.lexicon import compile_lexicon, set_compile_listener
from pipeline.lexicon._compile import cache_dir, entry_checksum
from pipeline.lexicon.trie import Alphabet, Trie
from pipeline.rules import get_rules
from tests.conftest import run_boggle

BOARD = "serspatglinesers"  # 3603 points with ENABLE2K (the board)


def _edit(npz: Path, **arrays: np.ndarray) -> None:
    """Replace arrays of a cache entry and save it with everything else as it was (its header,
    so its identity and recorded checksum, included): a valid file, edited on purpose."""
    with np.load(npz) as z:
        content = {k: z[k] for k in z.files}
    content.update(arrays)
    with open(npz, "wb") as fh:
        np.savez(fh, **content)


def _word_lengths_set_to_8(npz: Path) -> None:
    with np.load(npz) as z:
        word_len = z["word_len"].copy()
    word_len[word_len == 3] = 8  # 1 point each becomes 11: 3603 became 4653
    _edit(npz, word_len=word_len)


def _a_word_renamed(npz: Path) -> None:
    with np.load(npz) as z:
        words = z["words"].tobytes().decode("utf-8").split("\n")
    words[words.index("sers")] = "xxxxxxxx"  # the trie still leads to its id: reported as found
    _edit(npz, words=np.frombuffer("\n".join(words).encode(), dtype=np.uint8))


@pytest.fixture
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("BOGGLE_CACHE_DIR", str(folder))
    return folder


@pytest.mark.parametrize("edit", [_word_lengths_set_to_8, _a_word_renamed], ids=["word_len", "words"])
def test_an_edited_entry_is_discarded_with_a_note_and_rebuilt(own_cache: Path, edit: object) -> None:
    first = run_boggle("solve", BOARD, env={"BOGGLE_CACHE_DIR": str(own_cache)})
    assert first.returncode == 0 and "Total score: 3603" in first.stdout, first.stderr
    (npz,) = own_cache.glob("*.npz")
    edit(npz)  # type: ignore[operator]
    again = run_boggle("solve", BOARD, env={"BOGGLE_CACHE_DIR": str(own_cache)})
    assert again.returncode == 0 and again.stdout == first.stdout, again.stderr  # the same words, 3603
    assert "xxxxxxxx" not in again.stdout
    notes = [ln for ln in again.stderr.splitlines() if "lexicon cache" in ln]
    assert notes == [
        f"note: discarded the damaged lexicon cache file {npz} (ValueError: its checksum differs from "
        "its content: changed since it was written); rebuilding it"
    ]
    third = run_boggle("solve", BOARD, env={"BOGGLE_CACHE_DIR": str(own_cache)})
    assert third.stdout == first.stdout and "lexicon cache" not in third.stderr  # the rebuilt entry is used


def test_the_checksum_covers_every_array_the_words_and_the_report(
    own_cache: Path, enable2k_path: str
) -> None:
    rules = get_rules("boggle")
    lex = compile_lexicon(enable2k_path, Alphabet.english(), rules)
    (npz,) = cache_dir().glob("*.npz")
    trie, meta = Trie.load(npz)
    identity, report = meta["identity"], meta["report"]
    assert (
        meta["checksum"]
        == entry_checksum(trie, report, identity)
        == entry_checksum(lex.trie, report, identity)
    )
    base = meta["checksum"]
    for name in ("nodes", "node_face", "node_depth", "word_len"):
        changed = getattr(trie, name).copy()
        changed.reshape(-1).view(np.uint8)[-1] ^= 1
        other = Trie(trie.alphabet, **{**_fields(trie), name: changed})
        assert entry_checksum(other, report, identity) != base, name
    words = list(trie.words)
    words[0], words[1] = words[1], words[0]
    assert entry_checksum(Trie(trie.alphabet, **{**_fields(trie), "words": words}), report, identity) != base
    assert entry_checksum(trie, {**report, "n_input": 1}, identity) != base
    # keyed: the same content under another entry's identity has another checksum
    assert entry_checksum(trie, report, identity.replace("min=3", "min=4")) != base


def _fields(trie: Trie) -> dict[str, object]:
    return {
        "nodes": trie.nodes,
        "node_face": trie.node_face,
        "node_depth": trie.node_depth,
        "words": trie.words,
        "word_len": trie.word_len,
    }


def test_an_unkeyed_checksum_does_not_pass(own_cache: Path, enable2k_path: str) -> None:
    """An edit whose author recomputed a plain BLAKE2b of the content is still refused."""
    rules = get_rules("boggle")
    compile_lexicon(enable2k_path, Alphabet.english(), rules)
    (npz,) = cache_dir().glob("*.npz")
    trie, meta = Trie.load(npz)
    word_len = trie.word_len.copy()
    word_len[word_len == 3] = 8
    plain = hashlib.blake2b(word_len.tobytes(), digest_size=32).hexdigest()
    trie.word_len = word_len
    trie.save(npz, {**meta, "checksum": plain})
    heard: list[str] = []
    set_compile_listener(heard.append)
    try:
        again = compile_lexicon(enable2k_path, Alphabet.english(), rules)
    finally:
        set_compile_listener(None)
    assert not again.from_cache and int(again.trie.word_len.max()) < 40
    assert len(heard) == 2 and "checksum differs" in heard[0] and heard[1].startswith("compiling")


def test_what_the_checksum_does_not_stop(own_cache: Path, enable2k_path: str) -> None:
    """The threat model, as documented: the cache is the user's own (mode 0700, others' folders
    refused). Someone who can write it and recomputes the keyed checksum, whose key is derived
    from what the entry records, is not stopped; such a person can run code as the user
    anyway. The checksum catches accidents and edits that do not know the format."""
    rules = get_rules("boggle")
    compile_lexicon(enable2k_path, Alphabet.english(), rules)
    (npz,) = cache_dir().glob("*.npz")
    trie, meta = Trie.load(npz)
    trie.word_len = np.where(trie.word_len == 3, 8, trie.word_len).astype(np.int16)
    trie.save(npz, {**meta, "checksum": entry_checksum(trie, meta["report"], meta["identity"])})
    forged = compile_lexicon(enable2k_path, Alphabet.english(), rules)
    assert forged.from_cache and int((forged.trie.word_len == 8).sum()) > 1000
    assert json.loads(json.dumps(meta["report"])) == meta["report"]
