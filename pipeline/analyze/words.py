"""Word lists a person recognises: ranking found words by how common they are in real text.

Frequencies come from **wordfreq** (Robyn Speer's word-frequency package: per-language tables
built from Wikipedia, subtitles, books, news, web text and more, shipped inside the package, so
nothing is downloaded). A word's *Zipf frequency* is log10 of its occurrences per billion words:
7 for "the", about 3 for a word seen once in a million words, 0 for one wordfreq never saw. A
word at or above :data:`COMMON_ZIPF` counts as common; the report shows those first and keeps the
rest (obscure Scrabble words such as "tes", "oes", "eth", "tae") behind a toggle.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache

COMMON_ZIPF = 3.6
DEFAULT_LANGUAGE = "en"


def source_note() -> str:
    """Where the frequencies come from, for the report."""
    try:
        from importlib import metadata

        version = metadata.version("wordfreq")
    except Exception:  # a missing distribution only blanks the version
        version = "?"
    return (
        f"word frequencies: wordfreq {version} (Zipf scale, log10 of uses per billion words; "
        f"common = Zipf ≥ {COMMON_ZIPF:g})"
    )


@lru_cache(maxsize=1)
def _languages() -> frozenset[str]:
    try:
        import wordfreq
    except ImportError:
        return frozenset()
    return frozenset(wordfreq.available_languages())


def language_of(lexicon_name: str | None) -> str:
    """The wordfreq language of a lexicon: ``tanglet:<lang>`` names it (``pt_BR`` -> ``pt``);
    any other word list is taken as English (ENABLE2K and the other lists users bring)."""
    name = lexicon_name or ""
    m = re.fullmatch(r"tanglet:([A-Za-z]+)(?:_[A-Za-z]+)?", name)
    return m.group(1).lower() if m else DEFAULT_LANGUAGE


@lru_cache(maxsize=8)
def _frequencies(language: str) -> dict[str, float]:
    import wordfreq

    # One table load per language (~0.2 s); looking words up in it directly avoids
    # zipf_frequency's tokenizer, which costs ~0.1 ms a word. Lexicon entries are single
    # lower-case words, the table's own keys.
    return wordfreq.get_frequency_dict(language)


def zipf(words: Iterable[str], language: str) -> dict[str, float]:
    """Zipf frequency of each word: log10 of its uses per billion words, 0.0 for a word
    wordfreq never saw, NaN where wordfreq has no table for the language."""
    words = list(dict.fromkeys(words))
    if language not in _languages():
        return {w: float("nan") for w in words}
    table = _frequencies(language)
    out = {}
    for w in words:
        f = table.get(w, 0.0)
        out[w] = round(math.log10(f * 1e9), 2) if f > 0 else 0.0
    return out


def run_languages(lexicons: Mapping[str, str | None]) -> dict[str, str]:
    """Run label -> wordfreq language, from each run's lexicon name."""
    return {run: language_of(name) for run, name in lexicons.items()}
