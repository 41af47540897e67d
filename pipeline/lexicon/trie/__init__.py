"""The compact array trie over a face alphabet, and building it from a word list.

* ``_alphabet``: what a face is (letters, ``qu``, a blank) and its normal form, and the
  :class:`Alphabet` of faces a trie and a board share;
* ``_nodes``: the :class:`Trie`'s node arrays: lookup, copy, prune, walk, save and load;
* ``_build``: :func:`build_trie`, streamed from a sorted word list, with its numba passes in
  ``_passes`` (imported only while a list is compiled, so a cache load never loads numba).
"""

from __future__ import annotations

from pipeline.lexicon.trie._alphabet import BLANK, QU, Alphabet, is_face_char, normalise_text
from pipeline.lexicon.trie._build import DEFAULT_MAX_NODES, build_trie
from pipeline.lexicon.trie._nodes import Trie, pack_nodes

__all__ = [
    "BLANK",
    "DEFAULT_MAX_NODES",
    "QU",
    "Alphabet",
    "Trie",
    "build_trie",
    "is_face_char",
    "normalise_text",
    "pack_nodes",
]
