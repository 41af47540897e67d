from __future__ import annotations

from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.lexicon.trie import Alphabet, Trie, build_trie

WORDS = sorted(["a", "at", "ate", "tea", "teas", "the", "then", "quit", "quite", "thin", "in"])
ALPHA = Alphabet.from_faces(["a", "e", "h", "i", "n", "s", "t", "qu", "th", "in"])


def build(words: list[str] = WORDS, alphabet: Alphabet = ALPHA) -> Trie:
    trie, unspellable = build_trie(sorted(words), alphabet)
    assert unspellable == []
    return trie


def test_lookup_word_prefix_neither() -> None:
    t = build()
    assert t.lookup("tea") == "word"
    assert t.lookup("te") == "prefix"
    assert t.lookup("q") == "prefix"  # ends inside the qu face
    assert t.lookup("qui") == "prefix"
    assert t.lookup("xyz") == "neither"
    assert t.lookup("teasx") == "neither"
    assert t.lookup("THE") == "word"


def test_every_spelling_is_in_the_trie() -> None:
    t = build()
    # "then" spells as t-h-e-n and th-e-n; "thin" as t-h-in, th-in, t-h-i-n, th-i-n
    assert sorted(ALPHA.tokenize("thin")) == sorted(
        [
            tuple(ALPHA.index[f] for f in s)
            for s in (["t", "h", "in"], ["th", "in"], ["t", "h", "i", "n"], ["th", "i", "n"])
        ]
    )
    for word in WORDS:
        for spelling in ALPHA.tokenize(word):
            node = t.find(spelling)
            assert node >= 0 and t.words[t.word_id[node]] == word


def test_unspellable_words_are_returned() -> None:
    _, bad = build_trie(["qat", "tea", "été"], Alphabet.english())
    assert bad == ["qat", "été"]


def test_iter_words_in_order_and_children_sorted() -> None:
    t = build(alphabet=Alphabet.english())
    assert [w for w, _ in t.iter_words()] == sorted(WORDS)
    for node in range(t.n_nodes):
        kids = range(int(t.first_child[node]), int(t.first_child[node]) + int(t.mask[node]).bit_count())
        faces = [int(t.node_face[k]) for k in kids]
        assert faces == sorted(faces)
        assert all(int(t.node_depth[k]) == int(t.node_depth[node]) + 1 for k in kids)


def test_copy_is_deep() -> None:
    t = build()
    c = t.copy()
    c.word_id[:] = -1
    c.words[0] = "changed"
    assert t.lookup("tea") == "word" and t.words[0] != "changed"


def test_prune_by_word_length_keeps_ids() -> None:
    t = build()
    small = t.prune(keep_word=lambda w: len(w) <= 3)
    assert sorted({w for w, _ in small.iter_words()}) == sorted(w for w in WORDS if len(w) <= 3)
    assert small.lookup("teas") == "neither"
    assert small.lookup("tea") == "word"
    assert small.n_nodes < t.n_nodes
    for w, wid in small.iter_words():
        assert t.words[wid] == w


def test_prune_by_faces_removes_spellings() -> None:
    t = build()
    no_digraphs = t.prune(keep_face=lambda f: len(f) == 1)
    spelled = {w for w, _ in no_digraphs.iter_words()}
    assert spelled == {w for w in WORDS if "q" not in w}  # quit/quite need the qu face
    assert no_digraphs.find([ALPHA.index["th"]]) == -1
    assert no_digraphs.lookup("then") == "word"


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    t = build()
    t.save(tmp_path / "t.npz", {"x": 1})
    back, meta = Trie.load(tmp_path / "t.npz")
    assert meta == {"x": 1}
    assert back.words == t.words and back.alphabet == t.alphabet
    for name in ("mask", "first_child", "word_id", "node_face", "node_depth", "word_len"):
        assert np.array_equal(getattr(back, name), getattr(t, name))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="abcqu", min_size=1, max_size=7), min_size=1, max_size=60, unique=True))
def test_trie_holds_exactly_the_spellable_words(words: list[str]) -> None:
    alphabet = Alphabet.from_faces(["a", "b", "c", "qu", "u"])
    trie, bad = build_trie(sorted(words), alphabet)
    spellable = sorted(w for w in words if alphabet.tokenize(w))
    assert trie.words == spellable
    assert sorted(bad) == sorted(set(words) - set(spellable))
    assert sorted({w for w, _ in trie.iter_words()}) == spellable
    for w in words:
        expected = "word" if w in spellable else None
        if expected:
            assert trie.lookup(w) == "word"
    # pruning with a predicate that keeps everything changes nothing
    same = trie.prune(keep_word=lambda w: True)
    assert np.array_equal(same.mask, trie.mask) and np.array_equal(same.word_id, trie.word_id)


def test_enable2k_trie_is_compact(enable_lexicon) -> None:  # type: ignore[no-untyped-def]
    assert enable_lexicon.n_words == 173402
    assert enable_lexicon.trie.nbytes < 10_000_000
