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
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from pipeline.analyze._gather import Gathered

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


def has_frequencies(language: str) -> bool:
    """Whether wordfreq has a table for ``language`` (else every Zipf value is NaN)."""
    return language in _languages()


def common_mask(zipfs: Any) -> Any:
    """Which Zipf values count as common words: at or above :data:`COMMON_ZIPF`, or NaN (a
    language wordfreq has no table for: nothing can be called obscure there). The one
    definition of "common" (and of "obscure": not common) that the report and
    ``boggle select`` share; takes a number, a numpy array or a pandas Series."""
    import numpy as np

    z = np.asarray(zipfs, dtype=np.float64) if not isinstance(zipfs, pd.Series) else zipfs
    return np.isnan(z) | (z >= COMMON_ZIPF)


def run_languages(lexicons: Mapping[str, str | None]) -> dict[str, str]:
    """Run label -> wordfreq language, from each run's lexicon name."""
    return {run: language_of(name) for run, name in lexicons.items()}


FREQUENT_WORDS_COLUMNS = [
    "run",
    "source",
    "rank",
    "word",
    "letters",
    "boards",
    "share",
    "zipf",
    "common",
    "rank_common",
]


def frequent_words(
    gathered: Sequence[Gathered], n: int = 50, languages: Mapping[str, str] | None = None
) -> pd.DataFrame:
    """The words found on most boards of each run and source (share of boards), ranked two
    ways: ``rank`` among all words, ``rank_common`` among common words (wordfreq Zipf ≥
    :data:`~pipeline.analyze._words.COMMON_ZIPF`). Holds the ``n`` best of each ranking
    (``common`` tells which rows are common words); runs without word lists have none.

    The counts are the runs' statistics: boards finding each word (a board's list holds
    distinct words)."""
    from pipeline.analyze._gather import groups

    pool = max(20 * int(n), 2000)
    langs = dict(languages or {})
    frames = []
    for run, label, key, rs in groups(gathered):
        if not rs.has_word_lists or rs.words is None:
            continue
        words, counts = rs.words.items(key, most=pool)  # the top of the pool and its ties
        total = int(rs.value_counts("score", key)[1].sum())
        order = np.lexsort((np.array(words, dtype=object), -counts))[:pool].tolist() if words else []
        g = pd.DataFrame(
            {
                "run": run,
                "source": label,
                "rank": np.arange(1, len(order) + 1, dtype=np.int64),
                "word": [words[i] for i in order],
                "letters": np.array([len(words[i]) for i in order], dtype=np.int64),
                "boards": np.array([int(counts[i]) for i in order], dtype=np.int64),
            }
        )
        g["share"] = g["boards"] / total
        freq = zipf(g["word"], langs.get(str(run), language_of(None)))
        frames.append(g.assign(zipf=g["word"].map(freq).astype(float)))
    if not frames:
        return pd.DataFrame(columns=FREQUENT_WORDS_COLUMNS)
    df = pd.concat(frames, ignore_index=True)
    df["common"] = common_mask(df["zipf"].astype(float))
    df["rank_common"] = df.where(df["common"]).groupby(["run", "source"])["rank"].rank(method="first")
    keep = (df["rank"] <= n) | (df["rank_common"] <= n)
    df = df[keep].reset_index(drop=True)
    df["rank_common"] = df["rank_common"].astype("Int64")
    return df[FREQUENT_WORDS_COLUMNS]
