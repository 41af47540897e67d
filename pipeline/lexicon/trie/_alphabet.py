"""Faces and the face alphabet a trie and a board share: what a face is (letters, ``qu``, a
blank) and its normal form, the faces in order (at most 64), encoding a board's faces to codes,
and the spellings of a word as face sequences.

A face is a non-empty string of letters (``a``, ``qu``, ``th``, ``·l``) or ``""`` for a blank
(blocked) cell; faces and words are compared case-folded and NFC-normalised.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from pipeline.errors import BoardError, LexiconError

MAX_FACES = 64
QU = "qu"
BLANK = ""

# Allowed inside a face besides letters and combining marks: the Catalan middle dot ("·l").
_EXTRA_FACE_CHARS = frozenset("·")


def normalise_text(text: str) -> str:
    """Case-fold and NFC-normalise (the form every word and face is compared in)."""
    return unicodedata.normalize("NFC", text.casefold())


def is_face_char(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "LM" or ch in _EXTRA_FACE_CHARS


@dataclass(frozen=True)
class Alphabet:
    """The faces the kernel knows, sorted; a face's index is its position here."""

    faces: tuple[str, ...]

    def __post_init__(self) -> None:
        if list(self.faces) != sorted(set(self.faces)) or BLANK in self.faces:
            raise ValueError("alphabet faces must be sorted, unique and non-blank")
        if len(self.faces) > MAX_FACES:
            raise LexiconError(f"the alphabet has {len(self.faces)} faces; at most {MAX_FACES} are supported")

    @classmethod
    def from_faces(cls, faces: Iterable[str]) -> Alphabet:
        return cls(tuple(sorted({f for f in faces if f != BLANK})))

    @classmethod
    def english(cls) -> Alphabet:
        """a-z with the Qu face in place of q."""
        return cls.from_faces([chr(c) for c in range(ord("a"), ord("z") + 1) if chr(c) != "q"] + [QU])

    @classmethod
    def compact_for(cls, words: Iterable[str]) -> Alphabet:
        """The letters ``words`` use, with ``qu`` in place of ``q`` (the compact convention)."""
        chars: set[str] = set()
        for w in words:
            chars.update(w)  # C-level per word: a per-character generator took 3 s on 3.2M words
        letters = {ch for ch in chars if is_face_char(ch)}
        if "q" in letters:
            letters.discard("q")
            letters.add(QU)
        return cls.from_faces(letters)

    def union(self, faces: Iterable[str]) -> Alphabet:
        return Alphabet.from_faces([*self.faces, *faces])

    @cached_property
    def index(self) -> dict[str, int]:
        return {f: i for i, f in enumerate(self.faces)}

    def __len__(self) -> int:
        return len(self.faces)

    def key(self) -> str:
        return "\x1f".join(self.faces)

    def describe(self) -> str:
        return "{" + " ".join(self.faces) + "}"

    def encode(self, faces: Iterable[str], where: str = "board") -> np.ndarray:
        """Face strings -> int8 indices (blank = -1); an unknown face is a BoardError."""
        idx = self.index
        out = []
        for k, f in enumerate(faces):
            if f == BLANK:
                out.append(-1)
                continue
            i = idx.get(f)
            if i is None:
                raise BoardError(
                    f"{where}: face {f!r} (cell {k + 1}) is not in the alphabet {self.describe()}"
                )
            out.append(i)
        return np.array(out, dtype=np.int8)

    def tokenize(self, word: str) -> list[tuple[int, ...]]:
        """Every way to spell ``word`` as a sequence of faces (empty if there is none)."""
        faces = self.faces
        n = len(word)
        # ways[i] = spellings of word[i:], built right to left
        ways: list[list[tuple[int, ...]]] = [[] for _ in range(n + 1)]
        ways[n] = [()]
        for i in range(n - 1, -1, -1):
            for fi, f in enumerate(faces):
                if word.startswith(f, i) and ways[i + len(f)]:
                    ways[i].extend((fi, *rest) for rest in ways[i + len(f)])
        return ways[0]
