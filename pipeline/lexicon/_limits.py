"""What a word list is made into and what it may hold: the normalised :class:`Lexicon`, the
:class:`DropReport` that counts every dropped entry by reason, and the :class:`LexiconLimits`
(size, lines, word length, trie nodes) with their environment overrides.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pipeline import settings
from pipeline.lexicon.trie import DEFAULT_MAX_NODES

MAX_EXAMPLES = 5


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


#
# A word list is streamed: decompressed (gzip) and checked a chunk at a time, so a hostile or
# mistaken input (/dev/zero, a gzip bomb, a binary file, one endless line) is refused as soon as
# it crosses a limit, in one line naming the file and line, before memory grows with it.

MAX_BYTES_ENV = "BOGGLE_LEXICON_MAX_BYTES"
MAX_LINES_ENV = "BOGGLE_LEXICON_MAX_LINES"
MAX_WORD_ENV = "BOGGLE_LEXICON_MAX_WORD"
# The limits' defaults and the reasons for them are the settings' (pipeline.settings.Settings).
_DEFAULTS = settings.Settings()
DEFAULT_MAX_BYTES = _DEFAULTS.lexicon_max_bytes
DEFAULT_MAX_LINES = _DEFAULTS.lexicon_max_lines
DEFAULT_MAX_WORD = _DEFAULTS.lexicon_max_word
MAX_LINE_BYTES = settings.MAX_LINE_BYTES


@dataclass(frozen=True)
class LexiconLimits:
    """What a word list may hold; ``from_env`` reads the environment overrides.

    ``max_bytes`` caps the file and its decompressed text, ``max_lines`` its lines, and
    ``max_nodes`` the compiled trie (all refused, exit 2); words longer than ``max_word``
    letters are dropped and counted in the drop report; a line over ``MAX_LINE_BYTES`` bytes
    is refused.
    """

    max_bytes: int = DEFAULT_MAX_BYTES
    max_lines: int = DEFAULT_MAX_LINES
    max_word: int = DEFAULT_MAX_WORD
    max_nodes: int = DEFAULT_MAX_NODES

    def __post_init__(self) -> None:
        small = min(self.max_bytes, self.max_lines, self.max_nodes)
        if small < 1 or not 1 <= self.max_word <= MAX_LINE_BYTES:
            raise ValueError(f"invalid lexicon limits {self}")

    @classmethod
    def from_env(cls) -> LexiconLimits:
        env = settings.get()
        return cls(env.lexicon_max_bytes, env.lexicon_max_lines, env.lexicon_max_word, env.lexicon_max_nodes)


def limits_identity() -> dict[str, int]:
    """The limits that change what a word list compiles to, for a job's identity: the word
    length cap (longer words are dropped), recorded only when not the default so the identity
    of a job written before the cap existed stays the same."""
    max_word = LexiconLimits.from_env().max_word
    return {} if max_word == DEFAULT_MAX_WORD else {"lexicon_max_word": max_word}


def byte_size(n: int) -> str:
    return f"{n / 2**20:,.0f} MB" if n >= 2**20 else f"{n:,} bytes"
