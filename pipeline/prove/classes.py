"""Board classes: letter buckets, class ids, and the canonical classes of a shape.

A bucket spec partitions the alphabet into k buckets (``"bdfgjqvwxz aeiou lnrsy chkmpt"``:
buckets separated by spaces, ``q`` meaning the Qu face where the alphabet has no plain ``q``).
A class assigns one bucket to every cell; its id is the bucket numbers read as a base-k number,
cell 0 (top left) the most significant digit, so ids sort like the bucket tuples. The classes
of a shape cover every board exactly once. A class is canonical when its tuple is the smallest
among its images under the symmetries that keep the shape (8 for a square, 4 otherwise);
every board is a symmetric image of a board in a canonical class.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Sequence

import numpy as np

from pipeline.boards import QU, symmetry_maps
from pipeline.errors import ConfigError
from pipeline.trie import Alphabet

#: The field's 4-bucket split of English letters (vowels, frequent, middling and rare consonants).
ENGLISH_BUCKETS = "bdfgjqvwxz aeiou lnrsy chkmpt"
VOWELS = set("aeiou")
BLOCK = 1 << 20  # class ids examined per numpy block when listing canonical classes


def _split_faces(token: str, alphabet: Alphabet) -> list[str]:
    """A bucket token -> faces, longest face first (``q`` is the Qu face when there is no q)."""
    faces = sorted(alphabet.faces, key=len, reverse=True)
    out = []
    i = 0
    while i < len(token):
        for f in faces:
            if token.startswith(f, i):
                out.append(f)
                i += len(f)
                break
        else:
            if token[i] == "q" and QU in alphabet.index and "q" not in alphabet.index:
                out.append(QU)
                i += 1
                continue
            raise ConfigError(
                f"prove: class spec: {token[i]!r} in bucket {token!r} is not a face of the "
                f"alphabet {alphabet.describe()}"
            )
    return out


def parse_buckets(spec: str, alphabet: Alphabet) -> list[list[int]]:
    """Face indices of each bucket; every face of the alphabet in exactly one bucket.

    >>> parse_buckets("ab c", Alphabet(("a", "b", "c")))
    [[0, 1], [2]]
    """
    tokens = spec.split()
    if not tokens:
        raise ConfigError("prove: the class spec is empty; give buckets separated by spaces")
    buckets: list[list[int]] = []
    owner: dict[str, str] = {}
    for tok in tokens:
        faces = _split_faces(tok.casefold(), alphabet)
        for f in faces:
            if f in owner:
                raise ConfigError(f"prove: class spec: face {f!r} is in buckets {owner[f]!r} and {tok!r}")
            owner[f] = tok
        buckets.append(sorted(alphabet.index[f] for f in faces))
    missing = [f for f in alphabet.faces if f not in owner]
    if missing:
        raise ConfigError(
            f"prove: class spec: faces {' '.join(missing)} are in no bucket (every face of "
            f"{alphabet.describe()} must be in one)"
        )
    if len(buckets) > 16:
        raise ConfigError(f"prove: class spec: {len(buckets)} buckets; at most 16 are supported")
    return buckets


def _is_vowel(face: str) -> bool:
    base = unicodedata.normalize("NFD", face[0])[0]
    return base in VOWELS


def default_spec(alphabet: Alphabet, words: Sequence[str]) -> str:
    """The English buckets for the English alphabet; otherwise vowels (with accented ones)
    and the consonants by frequency in ``words`` dealt into three buckets: frequent, middling,
    rare."""
    if alphabet == Alphabet.english():
        return ENGLISH_BUCKETS
    counts: Counter[str] = Counter()
    for w in words:
        counts.update(w)
    vowels = [f for f in alphabet.faces if _is_vowel(f)]
    rest = sorted((f for f in alphabet.faces if not _is_vowel(f)), key=lambda f: (-counts.get(f[0], 0), f))
    n = len(rest)
    cut1, cut2 = round(n * 0.25), round(n * 0.5)
    parts = [vowels, rest[:cut1], rest[cut1:cut2], rest[cut2:]]
    return " ".join("".join(sorted(p)) for p in parts if p)


def bucket_masks(buckets: list[list[int]]) -> np.ndarray:
    """uint64 [k]: bit f of mask b set iff face f is in bucket b."""
    return np.array([sum(1 << f for f in b) for b in buckets], dtype=np.uint64)


def shape_perms(rows: int, cols: int) -> list[np.ndarray]:
    """The cell permutations of the symmetries that keep the shape (identity included)."""
    return [perm for r, c, perm in symmetry_maps(rows, cols) if (r, c) == (rows, cols)]


def class_digits(ids: np.ndarray, k: int, n_cells: int) -> np.ndarray:
    """Class ids -> int8 [len(ids), n_cells] bucket numbers (cell 0 most significant)."""
    powers = k ** np.arange(n_cells - 1, -1, -1, dtype=np.int64)
    return ((np.asarray(ids, dtype=np.int64)[:, None] // powers) % k).astype(np.int8)


def class_ids(digits: np.ndarray, k: int) -> np.ndarray:
    n_cells = digits.shape[1]
    powers = k ** np.arange(n_cells - 1, -1, -1, dtype=np.int64)
    return digits.astype(np.int64) @ powers


def canonical_class_ids(rows: int, cols: int, k: int) -> np.ndarray:
    """Sorted ids of the canonical classes of the shape with k buckets (int64)."""
    n = rows * cols
    total = k**n
    if total > 1 << 40:
        raise ConfigError(
            f"prove: {k} buckets on {rows}x{cols} make {k}^{n} classes; too many to list "
            "(use fewer buckets or a smaller shape)"
        )
    perms = shape_perms(rows, cols)
    out = []
    for lo in range(0, total, BLOCK):
        ids = np.arange(lo, min(total, lo + BLOCK), dtype=np.int64)
        d = class_digits(ids, k, n)
        keep = np.ones(len(ids), dtype=bool)
        for perm in perms[1:]:
            keep &= ids <= class_ids(d[:, perm], k)
        out.append(ids[keep])
    return np.concatenate(out) if out else np.empty(0, np.int64)
