"""Word lists a person recognises: ranking found words by how common they are in real text.

Frequencies come from **wordfreq** (Robyn Speer's word-frequency package: per-language tables
built from Wikipedia, subtitles, books, news, web text and more, shipped inside the package, so
nothing is downloaded). A word's *Zipf frequency* is log10 of its occurrences per billion words:
7 for "the", about 3 for a word seen once in a million words, 0 for one wordfreq never saw. A
word at or above :data:`COMMON_ZIPF` counts as common; the report shows those first and keeps the
rest (obscure Scrabble words such as "tes", "oes", "eth", "tae") behind a toggle.
"""

from __future__ import annotations

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


def zipf(words: Iterable[str], language: str) -> dict[str, float]:
    """Zipf frequency of each word (NaN where wordfreq has no table for the language)."""
    words = list(dict.fromkeys(words))
    if language not in _languages():
        return {w: float("nan") for w in words}
    import wordfreq

    # The "best" wordlist with minimum 0: unknown words are 0.0, known rare ones above it.
    return {w: float(wordfreq.zipf_frequency(w, language)) for w in words}


def run_languages(lexicons: Mapping[str, str | None]) -> dict[str, str]:
    """Run label -> wordfreq language, from each run's lexicon name."""
    return {run: language_of(name) for run, name in lexicons.items()}
