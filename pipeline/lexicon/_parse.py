"""Parsing a word list: :class:`WordSource` resolves a dictionary spec (embedded name, Tanglet pack
or file) to its bytes, and :func:`load_lexicon` normalises its lines (case-fold, NFC, trim) into a
sorted :class:`~pipeline.lexicon.Lexicon`, counting blank, duplicate and over-long entries.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from pipeline.errors import LexiconError
from pipeline.lexicon._limits import MAX_EXAMPLES, MAX_WORD_ENV, DropReport, Lexicon, LexiconLimits
from pipeline.lexicon._named import EMBEDDED, TANGLET_PREFIX, embedded_bytes, embedded_path, tanglet_pack
from pipeline.lexicon._read import check_all, read_capped, texts
from pipeline.lexicon.trie import normalise_text


@dataclass
class WordSource:
    """A dictionary spec resolved to its bytes; hashed and parsed at most once."""

    name: str
    path: Path
    raw: bytes
    is_tanglet: bool
    announced: bool = False
    limits: LexiconLimits = field(default_factory=LexiconLimits)

    @classmethod
    def open(cls, spec: str, limits: LexiconLimits | None = None) -> WordSource:
        """Resolve an embedded list's name (``enable2k``), ``tanglet:<lang>`` or a file path; a
        missing, unreadable, non-regular or over-limit file is a LexiconError."""
        limits = limits or LexiconLimits.from_env()
        if spec in EMBEDDED:
            return cls(spec, embedded_path(spec), embedded_bytes(spec), False, limits=limits)
        if spec.startswith(TANGLET_PREFIX):
            path = tanglet_pack(spec[len(TANGLET_PREFIX) :]) / "words"
            return cls(spec, path, read_capped(path, spec, limits), True, limits=limits)
        path = Path(spec).expanduser()
        if not path.exists():
            raise LexiconError(
                f"dictionary file not found: {spec}; pass a word-list file, "
                f"{' or '.join(EMBEDDED)} (embedded) or tanglet:<lang>"
            )
        if path.is_dir():
            raise LexiconError(f"dictionary {spec} is a directory, expected a word-list file")
        return cls(path.name, path, read_capped(path, spec, limits), False, limits=limits)

    @cached_property
    def content_hash(self) -> str:
        return hashlib.sha256(self.raw).hexdigest()

    @cached_property
    def lexicon(self) -> Lexicon:
        return _parse_lexicon(self)


def load_lexicon(spec: str, limits: LexiconLimits | None = None) -> Lexicon:
    """Load and normalise a word list: a file path (plain or gzip) or ``tanglet:<lang>``."""
    return WordSource.open(spec, limits).lexicon


def _parse_lexicon(src: WordSource) -> Lexicon:
    # Per chunk, whole-text operations (one case-fold + NFC pass, C-level strip) rather than a
    # Python loop per line: a 3.2M-word list parses in about a second. Normalising a chunk at
    # once equals normalising each line: both are per-character and never touch line breaks,
    # and chunks end at line breaks.
    checked = check_all(src)
    entries: list[str] = []
    empties: list[str] = []  # the first few blank lines, as written
    for text in texts(src, checked):
        lines = _lines(normalise_text(text))
        if src.is_tanglet and _INNER_SPACE.search(text):
            part = [ln.split(None, 1)[0] if ln.strip() else "" for ln in lines]
        else:
            part = list(map(str.strip, lines))
        del lines
        if len(empties) < MAX_EXAMPLES and "" in part:
            raw_lines = _lines(text)
            empties.extend(raw_lines[i] for i, e in enumerate(part) if not e)
            del empties[MAX_EXAMPLES:]
        entries.extend(part)
    report = DropReport(n_input=len(entries))
    # Sort first, then drop adjacent repeats: word lists come nearly sorted, which timsort
    # handles in linear time (sorting a set of 3.2M words took 6 s).
    ordered = sorted(entries)
    n_empty = bisect.bisect_right(ordered, "")
    words = [w for w, _ in itertools.groupby(ordered[n_empty:])]
    del ordered
    n_duplicate = len(entries) - n_empty - len(words)
    if n_empty:
        report.dropped["empty"] = n_empty
        report.examples["empty"] = empties
    if n_duplicate:
        report.dropped["duplicate"] = n_duplicate
        report.examples["duplicate"] = _duplicate_examples(src, checked, entries, n_duplicate)
    del entries, checked
    if not words:
        raise LexiconError("no words (the file is empty or blank)", source=str(src.path))
    words = drop_long(words, src.limits.max_word, report)
    if not words:
        raise LexiconError(
            f"no words of at most {src.limits.max_word} letters (set {MAX_WORD_ENV} to raise the limit)",
            source=str(src.path),
        )
    return Lexicon(src.name, str(src.path), src.content_hash, words, report)


_INNER_SPACE = re.compile(r"\S[^\S\n]+\S")


def _lines(text: str) -> list[str]:
    """The lines of a chunk, split at "\n" only (a "\r" before it is stripped with the other
    whitespace): str.splitlines also splits at form feeds, "\x1c" and the like, so a file
    of those would make millions of entries out of a few checked lines."""
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return lines


def drop_long(words: list[str], max_word: int, report: DropReport) -> list[str]:
    """``words`` without those over ``max_word`` letters, which are counted in ``report``."""
    if max(map(len, words), default=0) <= max_word:
        return words  # the usual case: no copy of a multi-million-word list
    report.drop_many(f"longer than {max_word} letters", [w for w in words if len(w) > max_word])
    return [w for w in words if len(w) <= max_word]


def _duplicate_examples(
    src: WordSource, checked: list[tuple[bytes, int]] | None, entries: list[str], n_duplicate: int
) -> list[str]:
    """The first few duplicate lines as written in the file (stripped): found by index, then
    read back in a second streaming pass, since the raw lines are never all kept."""
    seen: set[str] = set()
    wanted: list[int] = []
    for i, entry in enumerate(entries):
        if not entry:
            continue
        if entry in seen:
            wanted.append(i)
            if len(wanted) >= min(n_duplicate, MAX_EXAMPLES):
                break
        else:
            seen.add(entry)
    del seen
    found: list[str] = []
    at = 0
    for text in texts(src, checked):
        lines = _lines(text)
        found.extend(lines[i - at].strip() for i in wanted if at <= i < at + len(lines))
        at += len(lines)
        if len(found) == len(wanted):
            break
    return found
