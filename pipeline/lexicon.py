"""Lexicons: load a word list (plain, gzip, or a Tanglet language pack), normalise it, report
what was dropped, and compile it (with a disk cache) for a face alphabet and a rule set.

Normalisation (DOMAIN.md): trim, case-fold (Unicode-aware) and NFC-normalise each entry, then
drop empty lines and duplicates; compiling drops words shorter than the minimum length (in
letters) and words no sequence of the alphabet's faces can spell. Every drop is counted by
reason in a :class:`DropReport`; nothing is dropped silently.
"""

from __future__ import annotations

import bisect
import contextlib
import gzip
import hashlib
import itertools
import os
import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.boards import normalise_text
from pipeline.errors import LexiconError
from pipeline.io import write_text_atomic
from pipeline.rules import Rules
from pipeline.tanglet import TANGLET_PREFIX, no_lexicon_help, tanglet_pack
from pipeline.trie import Alphabet, Trie, build_trie

CACHE_FORMAT = 2  # bump whenever the trie's saved layout changes: stale caches are never loaded
MAX_EXAMPLES = 5


def default_dictionary() -> str:
    """``$BOGGLE_DICTIONARY`` if set, else ``tanglet:en`` (which may not be installed)."""
    return os.environ.get("BOGGLE_DICTIONARY", "tanglet:en")


@dataclass
class DropReport:
    """How many entries were read, kept and dropped (by reason, with a few examples)."""

    n_input: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def drop(self, reason: str, entry: str) -> None:
        self.dropped[reason] = self.dropped.get(reason, 0) + 1
        ex = self.examples.setdefault(reason, [])
        if len(ex) < MAX_EXAMPLES:
            ex.append(entry)

    def drop_many(self, reason: str, entries: list[str]) -> None:
        if not entries:
            return
        self.dropped[reason] = self.dropped.get(reason, 0) + len(entries)
        ex = self.examples.setdefault(reason, [])
        ex.extend(entries[: max(0, MAX_EXAMPLES - len(ex))])

    @property
    def n_dropped(self) -> int:
        return sum(self.dropped.values())

    @property
    def n_kept(self) -> int:
        return self.n_input - self.n_dropped

    def to_dict(self) -> dict[str, Any]:
        return {
            "n_input": self.n_input,
            "n_kept": self.n_kept,
            "dropped": dict(self.dropped),
            "examples": {k: list(v) for k, v in self.examples.items()},
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> DropReport:
        return cls(int(d["n_input"]), dict(d["dropped"]), {k: list(v) for k, v in d["examples"].items()})

    def summary(self) -> str:
        parts = [f"{self.n_input} entries read, {self.n_kept} kept"]
        for reason, n in sorted(self.dropped.items()):
            ex = ", ".join(repr(e) for e in self.examples.get(reason, [])[:3])
            parts.append(f"{n} dropped as {reason}" + (f" (e.g. {ex})" if ex else ""))
        return "; ".join(parts)


@dataclass
class Lexicon:
    """A normalised word list: sorted, unique, non-empty entries."""

    name: str
    source: str
    content_hash: str
    words: list[str]
    report: DropReport


# ---------------------------------------------------------------- reading


@dataclass
class WordSource:
    """A dictionary spec resolved to its bytes; hashed and parsed at most once."""

    name: str
    path: Path
    raw: bytes
    is_tanglet: bool
    announced: bool = False

    @classmethod
    def open(cls, spec: str) -> WordSource:
        """Resolve a file path or ``tanglet:<lang>``; a missing or unreadable file is a LexiconError."""
        if spec.startswith(TANGLET_PREFIX):
            path = tanglet_pack(spec[len(TANGLET_PREFIX) :]) / "words"
            return cls(spec, path, path.read_bytes(), True)
        path = Path(spec).expanduser()
        if not path.exists():
            raise LexiconError(f"dictionary file not found: {spec}; {no_lexicon_help()}")
        if path.is_dir():
            raise LexiconError(f"dictionary {spec} is a directory, expected a word-list file")
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise LexiconError(f"cannot read dictionary {spec}: {exc.strerror}") from None
        return cls(path.name, path, raw, False)

    @cached_property
    def content_hash(self) -> str:
        return hashlib.sha256(self.raw).hexdigest()

    @cached_property
    def lexicon(self) -> Lexicon:
        return _parse_lexicon(self)


def _decode(raw: bytes, source: str) -> str:
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error):
            raise LexiconError("not a valid gzip file", source=source) from None
    nul = raw.find(b"\x00")
    if nul >= 0:
        line = raw.count(b"\n", 0, nul) + 1
        raise LexiconError("binary data (NUL byte), expected a text word list", source=source, line=line)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise LexiconError("not UTF-8 text, expected a word list", source=source, line=line) from None
    return text


def load_lexicon(spec: str) -> Lexicon:
    """Load and normalise a word list: a file path (plain or gzip) or ``tanglet:<lang>``."""
    return WordSource.open(spec).lexicon


def _parse_lexicon(src: WordSource) -> Lexicon:
    # Whole-text operations (one case-fold + NFC pass, C-level strip, a set) rather than a
    # Python loop per line: a 3.2M-word list parses in about a second. Normalising the text at
    # once equals normalising each line: both are per-character and never touch line breaks.
    raw_text = _decode(src.raw, str(src.path))
    lines = normalise_text(raw_text).splitlines()
    report = DropReport(n_input=len(lines))
    if src.is_tanglet and _INNER_SPACE.search(raw_text):
        entries = [ln.split(None, 1)[0] if ln.strip() else "" for ln in lines]
    else:
        entries = list(map(str.strip, lines))
    del lines
    # Sort first, then drop adjacent repeats: word lists come nearly sorted, which timsort
    # handles in linear time (sorting a set of 3.2M words took 6 s).
    ordered = sorted(entries)
    n_empty = bisect.bisect_right(ordered, "")
    words = [w for w, _ in itertools.groupby(ordered[n_empty:])]
    del ordered
    n_duplicate = len(entries) - n_empty - len(words)
    if n_empty or n_duplicate:
        _count_drops(report, entries, raw_text.splitlines(), n_empty, n_duplicate)
    del entries
    if not words:
        raise LexiconError("no words (the file is empty or blank)", source=str(src.path))
    return Lexicon(src.name, str(src.path), src.content_hash, words, report)


_INNER_SPACE = re.compile(r"\S[^\S\n]+\S")


def _count_drops(
    report: DropReport, entries: list[str], raw_lines: list[str], n_empty: int, n_duplicate: int
) -> None:
    """Record the empty and duplicate lines, with the first few as written in the file."""
    report.dropped.update({k: n for k, n in (("empty", n_empty), ("duplicate", n_duplicate)) if n})
    seen: set[str] = set()
    empties: list[str] = []
    duplicates: list[str] = []
    for entry, raw in zip(entries, raw_lines, strict=True):
        if not entry:
            if len(empties) < MAX_EXAMPLES:
                empties.append(raw)
        elif entry in seen:
            if len(duplicates) < MAX_EXAMPLES:
                duplicates.append(raw.strip())
        else:
            seen.add(entry)
        if len(empties) >= min(n_empty, MAX_EXAMPLES) and len(duplicates) >= min(n_duplicate, MAX_EXAMPLES):
            break
    for reason, examples in (("empty", empties), ("duplicate", duplicates)):
        if examples:
            report.examples[reason] = examples


# ---------------------------------------------------------------- compiling


@dataclass
class CompiledLexicon:
    """A lexicon compiled for one alphabet and rule set: the trie, word table and points."""

    name: str
    source: str
    content_hash: str
    alphabet: Alphabet
    rules: Rules
    trie: Trie
    report: DropReport
    word_points: np.ndarray  # int32 [n_words]
    from_cache: bool = False

    @property
    def words(self) -> list[str]:
        return self.trie.words

    @property
    def n_words(self) -> int:
        return len(self.trie.words)

    def provenance(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "source": self.source,
            "content_hash": self.content_hash,
            "n_words": self.n_words,
            "alphabet": list(self.alphabet.faces),
            "report": self.report.to_dict(),
        }


_compile_listener: Callable[[str], None] | None = None


def set_compile_listener(listener: Callable[[str], None] | None) -> None:
    """Call ``listener(message)`` before a word list of at least ``ANNOUNCE_BYTES`` is parsed and
    compiled from scratch (a cache miss): a multi-million-word list takes several seconds, and
    the CLI says so first."""
    global _compile_listener
    _compile_listener = listener


ANNOUNCE_BYTES = 1_000_000  # smaller lists compile in well under a second: no note


def _announce_compile(src: WordSource) -> None:
    if (
        _compile_listener is not None
        and len(src.raw) >= ANNOUNCE_BYTES
        and "lexicon" not in src.__dict__
        and not src.announced
    ):
        src.announced = True
        size = f"{len(src.raw) / 1e6:.1f} MB"
        _compile_listener(f"compiling the word list {src.name} ({size}; cached for next time)...")


def cache_dir() -> Path:
    base = os.environ.get("BOGGLE_CACHE_DIR")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "boggle-pipeline"


def cache_key(content_hash: str, alphabet: Alphabet, rules: Rules) -> str:
    # Only the minimum length changes which words the trie holds; points are recomputed on load.
    text = f"v{CACHE_FORMAT}|{content_hash}|{alphabet.key()}|min={rules.min_length}"
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def compile_lexicon(
    spec: str | WordSource,
    alphabet: Alphabet,
    rules: Rules,
    *,
    use_cache: bool = True,
) -> CompiledLexicon:
    """Load ``spec`` and compile it for ``alphabet`` and ``rules``, using the disk cache.

    >>> from pipeline.rules import get_rules
    >>> compile_lexicon("words.txt", Alphabet.english(), get_rules("boggle"))  # doctest: +SKIP
    """
    src = spec if isinstance(spec, WordSource) else WordSource.open(spec)
    cache_file = cache_dir() / f"{cache_key(src.content_hash, alphabet, rules)}.npz"
    if use_cache and cache_file.is_file():
        try:
            trie, meta = Trie.load(cache_file)
        except (OSError, ValueError, KeyError):
            trie = None  # a corrupt cache entry is rebuilt below
        if trie is not None and trie.alphabet == alphabet:
            return CompiledLexicon(
                src.name,
                str(src.path),
                src.content_hash,
                alphabet,
                rules,
                trie,
                DropReport.from_dict(meta["report"]),
                points_for(trie, rules),
                from_cache=True,
            )
    _announce_compile(src)
    compiled = compile_words(src.lexicon, alphabet, rules)
    if use_cache:
        with contextlib.suppress(OSError):  # a read-only cache only costs speed
            compiled.trie.save(cache_file, {"report": compiled.report.to_dict()})
    return compiled


def compile_words(lexicon: Lexicon, alphabet: Alphabet, rules: Rules) -> CompiledLexicon:
    """Compile an already loaded lexicon (no cache)."""
    report = DropReport(
        lexicon.report.n_input,
        dict(lexicon.report.dropped),
        {k: list(v) for k, v in lexicon.report.examples.items()},
    )
    short = [w for w in lexicon.words if len(w) < rules.min_length]
    report.drop_many(f"shorter than {rules.min_length} letters", short)
    # no copy of a multi-million-word list when nothing is dropped
    long_enough = [w for w in lexicon.words if len(w) >= rules.min_length] if short else lexicon.words
    trie, unspellable = build_trie(long_enough, alphabet)
    report.drop_many("not spellable with the faces " + alphabet.describe(), unspellable)
    return CompiledLexicon(
        lexicon.name,
        lexicon.source,
        lexicon.content_hash,
        alphabet,
        rules,
        trie,
        report,
        points_for(trie, rules),
    )


def points_for(trie: Trie, rules: Rules) -> np.ndarray:
    table = rules.points_table(int(trie.word_len.max(initial=0)))
    return table[trie.word_len].astype(np.int32)


def compile_for_boards(
    spec: str, rules: Rules, faces: set[str] | None = None, *, use_cache: bool = True
) -> CompiledLexicon:
    """Compile ``spec`` with the compact alphabet of its letters plus ``faces``.

    The compact alphabet is every letter the lexicon uses, with ``q`` standing for the Qu face
    (so words with a ``q`` not followed by ``u`` are unspellable); extra faces (multi-letter
    dice faces, a plain ``q``) are added when boards show them.
    """
    src = WordSource.open(spec)
    alphabet = _compact_alphabet(src)
    if faces:
        alphabet = alphabet.union(faces)
    return compile_lexicon(src, alphabet, rules, use_cache=use_cache)


def lexicon_alphabet(spec: str) -> Alphabet:
    """The compact alphabet for a lexicon: its letters, with ``qu`` in place of ``q``."""
    return _compact_alphabet(WordSource.open(spec))


def _compact_alphabet(src: WordSource) -> Alphabet:
    # Cached on disk by content hash: finding the letters means reading every word.
    marker = cache_dir() / f"letters-{src.content_hash[:32]}.txt"
    if marker.is_file():
        with contextlib.suppress(OSError, ValueError):
            return Alphabet(tuple(marker.read_text(encoding="utf-8").split("\n")))
    _announce_compile(src)
    alphabet = Alphabet.compact_for(src.lexicon.words)
    with contextlib.suppress(OSError):
        write_text_atomic(marker, "\n".join(alphabet.faces))
    return alphabet


def playable_words(
    spec: str, rules: Rules, *, max_length: int | None = None, dice: str | None = None
) -> Iterator[str]:
    """The words of ``spec`` a board can show, in trie order (alphabetical for single-letter
    faces), optionally pruned to ``max_length`` letters and to the faces of a dice set."""
    from pipeline.dice import load_dice_set

    faces = load_dice_set(dice).faces if dice else None
    trie = compile_for_boards(spec, rules, faces).trie
    if max_length is not None or faces is not None:
        trie = trie.prune(
            keep_word=None if max_length is None else (lambda w: len(w) <= max_length),
            keep_face=None if faces is None else (lambda f: f in faces),
        )
    seen: set[int] = set()
    for _, word_id in trie.iter_words():
        if word_id not in seen:  # a word with several spellings is listed once
            seen.add(word_id)
            yield trie.words[word_id]
