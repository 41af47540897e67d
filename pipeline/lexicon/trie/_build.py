"""Building a trie from a sorted word list, streamed: words become flat face codes a chunk at a
time, spellings with multi-letter faces are merged into sorted order, and numba loops
(``_passes``, imported only here) turn the sorted rows into breadth-first nodes,
refusing a trie over the node limit before its arrays exist.
"""

from __future__ import annotations

import numpy as np

from pipeline.errors import LexiconError, quote
from pipeline.lexicon.trie._alphabet import Alphabet
from pipeline.lexicon.trie._nodes import Trie
from pipeline.settings import Settings

# ---------------------------------------------------------------- building
#
# The build streams: words become one flat int8 array of face codes (a few words at a time),
# the spellings are merged into sorted order, and numba loops turn the sorted rows into nodes.
# A 3.2M-word list (tanglet:pl) builds in a few seconds in a few hundred MB; padded
# [words, longest] matrices took 2 GB.

_CHUNK = 200_000  # words encoded per step: bounds the per-character temporaries
_MAX_CODE_POINT = 0x110000


def _simple_spellings(
    words: list[str], simple: np.ndarray, alphabet: Alphabet
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Words that use no multi-letter face, where each character is at most one face: (flat
    face codes, row lengths, word index per row) of the spellable ones, and the others."""
    lut = np.full(_MAX_CODE_POINT, -1, dtype=np.int8)
    for i, f in enumerate(alphabet.faces):
        if len(f) == 1:
            lut[ord(f)] = i
    all_lens = np.fromiter((len(words[i]) for i in simple), dtype=np.int32, count=len(simple))
    tokens = np.empty(int(all_lens.sum()), dtype=np.int8)  # filled in place: no concatenated copy
    good = np.zeros(len(simple), dtype=bool)
    at = 0
    for lo in range(0, len(simple), _CHUNK):
        chunk = [words[i] for i in simple[lo : lo + _CHUNK]]
        lens = all_lens[lo : lo + len(chunk)]
        codes = lut[np.frombuffer("".join(chunk).encode("utf-32-le"), dtype=np.uint32)]
        del chunk
        if not len(codes):
            continue
        starts = np.concatenate(([0], np.cumsum(lens)[:-1]))
        ok = np.minimum.reduceat(codes, starts) >= 0
        good[lo : lo + len(lens)] = ok
        kept = codes[np.repeat(ok, lens)]
        tokens[at : at + len(kept)] = kept
        at += len(kept)
    return tokens[:at], all_lens[good], simple[good], simple[~good]


def _sorted_rows(
    tokens: np.ndarray, lens: np.ndarray, row_word: np.ndarray, extra: list[tuple[int, tuple[int, ...]]]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All spellings (the simple rows plus ``extra`` (word index, faces) rows) in lexicographic
    order of their faces, a prefix before its extensions: (flat tokens, row starts, word per row).

    The simple rows of a sorted word list are already in order (single-character faces sort
    like their characters), so usually only the few extra rows need placing."""
    # numba: only when a list is compiled, never on a cache load
    from pipeline.lexicon.trie._passes import count_nodes, merge_rows

    starts = np.zeros(len(lens) + 1, dtype=np.int64)
    np.cumsum(lens, out=starts[1:])
    if count_nodes(tokens, starts) < 0:  # not from a sorted word list: sort (slowly) here
        order = sorted(range(len(lens)), key=lambda r: tokens[starts[r] : starts[r + 1]].tobytes())
        extra = extra + [(int(row_word[r]), tuple(tokens[starts[r] : starts[r + 1]].tolist())) for r in order]
        tokens, starts, row_word = np.zeros(0, np.int8), np.zeros(1, np.int64), np.zeros(0, np.int64)
    if not extra:
        return tokens, starts, row_word
    extra = sorted(extra, key=lambda row: row[1])
    extra_tokens = np.array([f for _, faces in extra for f in faces], dtype=np.int8)
    extra_starts = np.zeros(len(extra) + 1, dtype=np.int64)
    np.cumsum([len(faces) for _, faces in extra], out=extra_starts[1:])
    extra_words = np.array([i for i, _ in extra], dtype=np.int64)
    return merge_rows(tokens, starts, row_word, extra_tokens, extra_starts, extra_words)


MAX_WORD_LETTERS = int(np.iinfo(np.int16).max)  # word_len and node_depth are int16


def _word_lengths(words: list[str]) -> np.ndarray:
    lens = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    if len(lens) and lens.max() > MAX_WORD_LETTERS:
        longest = words[int(lens.argmax())]
        raise LexiconError(
            f"the word {quote(longest, 20)} is too long: the trie stores words of at most "
            f"{MAX_WORD_LETTERS:,} letters"
        )
    return lens.astype(np.int16)


#: The compiled trie's node cap unless ``BOGGLE_LEXICON_MAX_NODES`` says otherwise (the figure and
#: the reason for it are the settings').
DEFAULT_MAX_NODES = Settings().lexicon_max_nodes


def build_trie(
    words: list[str], alphabet: Alphabet, *, max_nodes: int = DEFAULT_MAX_NODES
) -> tuple[Trie, list[str]]:
    """Build the trie for ``words`` (sorted, unique, normalised); return it and the words no
    face sequence can spell. Word ids index the spellable words in their given order. A trie
    of more than ``max_nodes`` nodes is refused (LexiconError) before its arrays exist."""
    all_lens = _word_lengths(words)  # first: the numba passes store depths as int16 unchecked
    multis = [f for f in alphabet.faces if len(f) > 1]
    is_special = np.zeros(len(words), dtype=bool)
    if multis:
        for m in multis:
            is_special[[i for i, w in enumerate(words) if m in w]] = True
    special = np.flatnonzero(is_special).tolist()
    tokens, lens, row_word, bad = _simple_spellings(
        words, np.flatnonzero(~is_special).astype(np.int32), alphabet
    )
    del is_special
    extra: list[tuple[int, tuple[int, ...]]] = []
    unspellable = bad.tolist()
    for i in special:
        spells = alphabet.tokenize(words[i])
        if not spells:
            unspellable.append(i)
        extra.extend((i, sp) for sp in spells)
    unspellable.sort()

    kept = np.ones(len(words), dtype=bool)
    kept[np.array(unspellable, dtype=np.int64)] = False
    new_id = (np.cumsum(kept) - 1).astype(np.int32)  # word index -> id among the spellable words
    kept_words = [w for w, k in zip(words, kept.tolist(), strict=True) if k] if unspellable else words
    word_len = all_lens[kept] if unspellable else all_lens
    bad_words = [words[i] for i in unspellable]

    # numba: only when a list is compiled, never on a cache load
    from pipeline.lexicon.trie._passes import breadth_first, count_nodes, preorder_nodes

    tokens, starts, row_word = _sorted_rows(tokens, lens, row_word, extra)
    del lens, extra
    n_rows = len(starts) - 1
    if n_rows == 0:
        trie = Trie.from_arrays(
            alphabet,
            np.zeros(1, np.uint64),
            np.zeros(1, np.int32),
            np.full(1, -1, np.int32),
            np.full(1, -1, np.int8),
            np.zeros(1, np.int16),
            kept_words,
            word_len,
        )
        return trie, bad_words
    max_len = int(np.diff(starts).max())
    n_nodes = count_nodes(tokens, starts)
    if n_nodes > max_nodes:
        raise LexiconError(
            f"the word list makes a trie of {n_nodes:,} nodes, over the limit of {max_nodes:,} "
            "(set BOGGLE_LEXICON_MAX_NODES to raise it)"
        )
    row_word = new_id[row_word]
    del new_id
    parent, face, depth, word = preorder_nodes(tokens, starts, row_word, n_nodes, max_len)
    del tokens, starts, row_word
    nodes, node_face, node_depth = breadth_first(parent, face, depth, word, max_len)
    del parent, face, depth, word
    return Trie(alphabet, nodes, node_face, node_depth, kept_words, word_len), bad_words
