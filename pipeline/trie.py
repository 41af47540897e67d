"""The compact array trie over a face alphabet, and building it from a word list.

The names live in :mod:`pipeline.trie_alphabet` (the faces), :mod:`pipeline.trie_nodes` (the
node arrays: lookup, copy, prune, walk, save and load) and :mod:`pipeline.trie_from_words`
(building); they are importable from here.
"""

from __future__ import annotations

from pipeline.trie_alphabet import MAX_FACES, Alphabet
from pipeline.trie_from_words import DEFAULT_MAX_NODES, MAX_WORD_LETTERS, build_trie
from pipeline.trie_nodes import Trie, pack_nodes

__all__ = [
    "DEFAULT_MAX_NODES",
    "MAX_FACES",
    "MAX_WORD_LETTERS",
    "Alphabet",
    "Trie",
    "build_trie",
    "pack_nodes",
]
