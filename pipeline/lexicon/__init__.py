"""Lexicons: load a word list (plain, gzip, embedded, or a Tanglet language pack), normalise it,
report what was dropped, and compile it (with a disk cache) for a face alphabet and a rule set.

Normalisation (docs/rules.md, "Lexicons"): trim, case-fold (Unicode-aware) and NFC-normalise each
entry, then drop empty lines and duplicates; compiling drops words shorter than the minimum
length (in letters) and words no sequence of the alphabet's faces can spell. Every drop is
counted by reason in a :class:`DropReport`; nothing is dropped silently.

* ``_named``: the lists known by name, the embedded ENABLE2K (``enable2k.txt.gz`` beside this
  file, its licence in ``ENABLE2K-LICENSE.txt``) and Tanglet's packs;
* ``_read``: a list's bytes read safely (size, line and UTF-8 checks, bounded gzip);
* ``_parse``: :class:`WordSource` and :func:`load_lexicon`, the normalised :class:`Lexicon`;
* ``_limits``: the records (:class:`Lexicon`, :class:`DropReport`) and :class:`LexiconLimits`;
* ``_compile``: :func:`compile_lexicon` and :func:`compile_for_boards`, the
  :class:`CompiledLexicon` and its cache, :func:`playable_words`;
* ``trie`` (a subpackage with its own surface): the face alphabet and the compact array trie a
  list compiles to, which the solver and the prover walk.
"""

from __future__ import annotations

from pipeline.lexicon._compile import (
    ANNOUNCE_BYTES,
    CompiledLexicon,
    Dice,
    cache_dir,
    cache_key,
    compile_for_boards,
    compile_lexicon,
    compile_words,
    default_dictionary,
    lexicon_alphabet,
    playable_words,
    points_for,
    set_compile_listener,
)
from pipeline.lexicon._limits import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    DEFAULT_MAX_WORD,
    MAX_LINE_BYTES,
    DropReport,
    Lexicon,
    LexiconLimits,
    limits_identity,
)
from pipeline.lexicon._named import (
    DEFAULT_DICTIONARY,
    EMBEDDED,
    TANGLET_PREFIX,
    embedded_bytes,
    is_named,
    plain_file,
    tanglet_dir,
    tanglet_languages,
    tanglet_pack,
)
from pipeline.lexicon._parse import WordSource, load_lexicon

__all__ = [
    "ANNOUNCE_BYTES",
    "DEFAULT_DICTIONARY",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_LINES",
    "DEFAULT_MAX_WORD",
    "EMBEDDED",
    "MAX_LINE_BYTES",
    "TANGLET_PREFIX",
    "CompiledLexicon",
    "Dice",
    "DropReport",
    "Lexicon",
    "LexiconLimits",
    "WordSource",
    "cache_dir",
    "cache_key",
    "compile_for_boards",
    "compile_lexicon",
    "compile_words",
    "default_dictionary",
    "embedded_bytes",
    "is_named",
    "lexicon_alphabet",
    "limits_identity",
    "load_lexicon",
    "plain_file",
    "playable_words",
    "points_for",
    "set_compile_listener",
    "tanglet_dir",
    "tanglet_languages",
    "tanglet_pack",
]
