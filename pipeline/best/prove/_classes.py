"""Board classes: letter buckets, class ids, and the canonical classes of a shape.

A bucket spec partitions the alphabet into buckets (``"bdfgjqvwxz aeiou lnrsy chkmpt"``:
buckets separated by spaces, ``q`` meaning the Qu face where the alphabet has no plain ``q``).
A spec may give other buckets to some kinds of cells: comma-separated sections, the first
unlabelled one the default for every cell, ``corner:``, ``edge:`` (border cells that are not
corners) and ``inner:`` (cells off the border) overriding it for those cells, e.g.
``"aeijou bcdfgmpqvwxz hklnrsty, corner:aeiosuy bcdfghjklmnpqrtvwxz"``. Each section is a full
partition of the alphabet on its own.

A class assigns one of its buckets to every cell (:class:`ClassSpace`); its id is the bucket
numbers read as a mixed-radix number (cell c has radix k_c, its number of buckets), cell 0 (top
left) the most significant digit, so ids sort like the bucket tuples; with the same k buckets
on every cell it is the base-k number. The classes of a shape cover every board exactly once.
A class is canonical when its tuple is the smallest among its images under the symmetries that
keep the shape (8 for a square, 4 otherwise; they map corners to corners, edges to edges and
inner cells to inner cells, so an image is a class again); every board is a symmetric image of
a board in a canonical class.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence

import numpy as np

from pipeline.boards import QU, symmetry_maps
from pipeline.errors import ConfigError
from pipeline.jit import njit
from pipeline.lexicon.trie import Alphabet

#: The field's 4-bucket split of English letters (vowels, frequent, middling and rare consonants).
ENGLISH_BUCKETS = "bdfgjqvwxz aeiou lnrsy chkmpt"
#: The field's corner recipe: 3 buckets on most cells, 2 on the corners. On ENABLE2K 3x4 it
#: has 27,135 canonical classes at about 1.14 s CPU each (about 8.6 CPU-h) against 4,212,736 at
#: about 63 ms (about 74 CPU-h) for ENGLISH_BUCKETS (``make bench-prove``, 300 random classes
#: of each, one run), so it is the English default from 12 cells.
ENGLISH_CORNER = "aeijou bcdfgmpqvwxz hklnrsty, corner:aeiosuy bcdfghjklmnpqrtvwxz"
CORNER_FROM_CELLS = 12
#: Vowels of the Latin, Cyrillic and Greek alphabets (accented forms are matched by their base
#: letter, see :func:`_is_vowel`); й, a consonant, is an и with a breve.
VOWELS = set("aeiou") | set("аеиоуыэюя") | set("αεηιουω")
NOT_VOWELS = {"й"}
MAX_CLASSES = 1 << 40  # most classes a shape may have to be listed
CELL_KINDS = ("corner", "edge", "inner")
_LABEL = re.compile(r"([A-Za-z]+)\s*:(.*)", re.DOTALL)  # a section's label: letters, then a colon


def _split_faces(token: str, alphabet: Alphabet, where: str = "class spec") -> list[str]:
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
                f"prove: {where}: {token[i]!r} in bucket {token!r} is not a face of the "
                f"alphabet {alphabet.describe()}"
            )
    return out


def parse_buckets(spec: str, alphabet: Alphabet, where: str = "class spec") -> list[list[int]]:
    """Face indices of each bucket; every face of the alphabet in exactly one bucket (else a
    ConfigError whose message names ``where``, e.g. one section of a spec).

    >>> parse_buckets("ab c", Alphabet(("a", "b", "c")))
    [[0, 1], [2]]
    """
    tokens = spec.split()
    if not tokens:
        if where == "class spec":
            raise ConfigError("prove: the class spec is empty; give buckets separated by spaces")
        raise ConfigError(f"prove: {where} is empty; give buckets separated by spaces")
    buckets: list[list[int]] = []
    owner: dict[str, str] = {}
    for tok in tokens:
        faces = _split_faces(tok.casefold(), alphabet, where)
        for f in faces:
            if f in owner:
                raise ConfigError(f"prove: {where}: face {f!r} is in buckets {owner[f]!r} and {tok!r}")
            owner[f] = tok
        buckets.append(sorted(alphabet.index[f] for f in faces))
    missing = [f for f in alphabet.faces if f not in owner]
    if missing:
        raise ConfigError(
            f"prove: {where}: faces {' '.join(missing)} are in no bucket (every face of "
            f"{alphabet.describe()} must be in one)"
        )
    if len(buckets) > 16:
        raise ConfigError(f"prove: {where}: {len(buckets)} buckets; at most 16 are supported")
    return buckets


def _is_vowel(face: str) -> bool:
    base = unicodedata.normalize("NFD", face[0])[0]
    return base in VOWELS and face[0] not in NOT_VOWELS


def default_spec(alphabet: Alphabet, words: Sequence[str], n_cells: int = 9) -> str:
    """For the English alphabet, the English buckets below :data:`CORNER_FROM_CELLS` cells and
    the corner recipe from there (the faster one measured). Otherwise the consonants are ranked
    by their frequency in ``words``; below :data:`CORNER_FROM_CELLS` cells: the vowels (with
    accented ones) and the consonants dealt into three buckets (frequent, middling, rare);
    from there the corner recipe's layout: vowels, the frequent 40% of the consonants, the
    rest; and on the corners the vowels with the two most frequent consonants, then the rest
    (English's corner recipe is built so; the 4-bucket split would be 4**12 / 4 classes on
    3x4, about 155 times the corner recipe's, and cost 18 times less a class on English)."""
    if alphabet == Alphabet.english():
        return ENGLISH_CORNER if n_cells >= CORNER_FROM_CELLS else ENGLISH_BUCKETS
    counts: Counter[str] = Counter()
    for w in words:
        counts.update(w)
    vowels = [f for f in alphabet.faces if _is_vowel(f)]
    rest = sorted((f for f in alphabet.faces if not _is_vowel(f)), key=lambda f: (-counts.get(f[0], 0), f))
    n = len(rest)

    def spec(parts: list[list[str]]) -> str:
        return " ".join("".join(sorted(p)) for p in parts if p)

    if n_cells < CORNER_FROM_CELLS:
        cut1, cut2 = round(n * 0.25), round(n * 0.5)
        return spec([vowels, rest[:cut1], rest[cut1:cut2], rest[cut2:]])
    cut = round(n * 0.4)
    return f"{spec([vowels, rest[:cut], rest[cut:]])}, corner:{spec([vowels + rest[:2], rest[2:]])}"


def bucket_masks(buckets: list[list[int]]) -> np.ndarray:
    """uint64 [k]: bit f of mask b set iff face f is in bucket b."""
    return np.array([sum(1 << f for f in b) for b in buckets], dtype=np.uint64)


def shape_perms(rows: int, cols: int) -> list[np.ndarray]:
    """The cell permutations of the symmetries that keep the shape (identity included)."""
    return [perm for r, c, perm in symmetry_maps(rows, cols) if (r, c) == (rows, cols)]


def _places(radices: Sequence[int]) -> np.ndarray:
    """Place values of a mixed-radix number, the first digit the most significant."""
    out = [1] * len(radices)
    for c in range(len(radices) - 2, -1, -1):
        out[c] = out[c + 1] * radices[c + 1]
    return np.array(out, dtype=np.int64)


def _digits(ids: np.ndarray, radices: np.ndarray, places: np.ndarray) -> np.ndarray:
    return ((np.asarray(ids, dtype=np.int64)[:, None] // places) % radices).astype(np.int8)


def _canonical(perms: list[np.ndarray], radices: np.ndarray, places: np.ndarray, total: int) -> np.ndarray:
    """Sorted ids (of ``total``) that are <= the id of each image under ``perms``: counted by
    Burnside's lemma (:func:`canonical_count`), then listed by :func:`list_canonical`."""
    del places  # the kernel steps the digits like an odometer
    others = [p for p in perms if not np.array_equal(p, np.arange(len(p)))]
    table = np.array(others, np.int64).reshape(len(others), len(radices))
    out = np.empty(canonical_count(perms, radices), np.int64)
    got = list_canonical(np.ascontiguousarray(radices, np.int64), table, np.int64(total), out)
    if got != len(out):
        raise AssertionError(f"{got} canonical classes listed, Burnside's lemma counts {len(out)}")
    return out


def canonical_count(perms: list[np.ndarray], radices: np.ndarray) -> int:
    """How many classes are canonical: the orbits of the symmetry group ``perms`` (identity
    included) on the classes, by Burnside's lemma (a symmetry fixes the classes that are
    constant on each of its cycles, and a cycle's cells share their buckets)."""
    fixed = 0
    for perm in perms:
        seen = np.zeros(len(perm), bool)
        n = 1
        for c in range(len(perm)):
            if not seen[c]:
                n *= int(radices[c])
                while not seen[c]:
                    seen[c] = True
                    c = int(perm[c])
        fixed += n
    return fixed // len(perms)


@njit(nogil=True, cache=True, inline="always")
def next_digits(digit, radices):
    """Step the mixed-radix number ``digit`` (the last digit fastest, ``digit[c]`` below
    ``radices[c]``) on by one, in place, like an odometer (from the largest, back to 0)."""
    c = len(digit) - 1
    while c >= 0:
        digit[c] += 1
        if digit[c] < radices[c]:
            break
        digit[c] = 0
        c -= 1


@njit(nogil=True, cache=True)
def list_canonical(radices, perms, total, out):
    """Write the canonical ids of ``total`` classes (digits ``radices``, cell 0 most
    significant) into ``out`` in increasing order; returns how many. A class is canonical
    when, for each symmetry ``perms[s]`` (the identity left out), its digit tuple is at most
    the image's (digit c of the image is ``d[perms[s, c]]``); the radices being the same at a
    cell and its image, that is the ids' order. Most classes differ from an image at the first
    cells, so a class costs a few comparisons: 8.5M 4x4 classes in about 0.1 s where numpy,
    every image's id computed, took 6 s."""
    n = radices.shape[0]
    d = np.zeros(n, np.int64)
    k = 0
    for i in range(total):
        keep = True
        for s in range(perms.shape[0]):
            for c in range(n):
                a = d[perms[s, c]]
                b = d[c]
                if a != b:
                    keep = a > b
                    break
            if not keep:
                break
        if keep:
            if k == out.shape[0]:
                return -1
            out[k] = i
            k += 1
        next_digits(d, radices)
    return k


def class_digits(ids: np.ndarray, k: int, n_cells: int) -> np.ndarray:
    """Class ids -> int8 [len(ids), n_cells] bucket numbers (cell 0 most significant)."""
    return _digits(ids, np.full(n_cells, k, np.int64), _places([k] * n_cells))


def _too_many(rows: int, cols: int, radices: Sequence[int], total: int) -> ConfigError:
    n = rows * cols
    if len(set(radices)) == 1:
        k = radices[0]
        return ConfigError(
            f"prove: {k} buckets on {rows}x{cols} make {k}^{n} classes; too many to list "
            "(use fewer buckets or a smaller shape)"
        )
    return ConfigError(
        f"prove: the class spec makes {total:,} classes on {rows}x{cols}; too many to list "
        "(use fewer buckets or a smaller shape)"
    )


def canonical_class_ids(rows: int, cols: int, k: int) -> np.ndarray:
    """Sorted ids of the canonical classes of the shape with k buckets on every cell (int64)."""
    n = rows * cols
    total = k**n
    if total > MAX_CLASSES:
        raise _too_many(rows, cols, [k] * n, total)
    return _canonical(shape_perms(rows, cols), np.full(n, k, np.int64), _places([k] * n), total)


# ---------------------------------------------------------------- per-cell buckets


def cell_kind(rows: int, cols: int, cell: int) -> str:
    """``corner``, ``edge`` (a border cell that is not a corner) or ``inner`` (off the border)."""
    r, c = divmod(cell, cols)
    on_r, on_c = r in (0, rows - 1), c in (0, cols - 1)
    return "corner" if on_r and on_c else "edge" if on_r or on_c else "inner"


def parse_sections(spec: str, alphabet: Alphabet) -> dict[str, list[list[int]]]:
    """A spec's sections: ``""`` (the default, the first section when unlabelled) and the
    labelled ones (``corner``, ``edge``, ``inner``), each parsed by :func:`parse_buckets`.

    >>> parse_sections("ab c, corner: a bc", Alphabet(("a", "b", "c")))
    {'': [[0, 1], [2]], 'corner': [[0], [1, 2]]}
    """
    parts = spec.split(",")
    out: dict[str, list[list[int]]] = {}
    for i, raw in enumerate(parts):
        text = raw.strip()
        if len(parts) == 1:
            label, where = "", "class spec"
        elif not text:
            raise ConfigError(f"prove: class spec: section {i + 1} of {len(parts)} is empty (a stray comma?)")
        else:
            label, where = "", "class spec default section"
        m = _LABEL.match(text)
        if m is not None:
            label = m.group(1).casefold()
            if label not in CELL_KINDS:
                raise ConfigError(
                    f"prove: class spec: unknown section label {m.group(1) + ':'!r} "
                    f"(labels: {', '.join(k + ':' for k in CELL_KINDS)})"
                )
            text, where = m.group(2), f"class spec section {label}:"
        elif i > 0:
            raise ConfigError(
                f"prove: class spec: section {i + 1} {text!r} has no label; only the first section "
                f"is the default (label the others {', '.join(k + ':' for k in CELL_KINDS)})"
            )
        if label in out:
            raise ConfigError(f"prove: class spec: section {label}: is given twice")
        out[label] = parse_buckets(text, alphabet, where)
    return out


class ClassSpace:
    """The classes of a shape: per cell its buckets, class ids as mixed-radix numbers.

    >>> space = ClassSpace.from_spec("ab c, corner: a bc", Alphabet(("a", "b", "c")), 1, 3)
    >>> space.n_classes, space.radices.tolist()
    (8, [2, 2, 2])
    >>> [space.bucket_text(c, 1) for c in range(3)]
    ['bc', 'c', 'bc']
    """

    def __init__(
        self, rows: int, cols: int, cell_buckets: Sequence[Sequence[Sequence[int]]], faces: Sequence[str]
    ) -> None:
        n = rows * cols
        if len(cell_buckets) != n:
            raise ValueError(f"{len(cell_buckets)} cells' buckets for a {rows}x{cols} shape")
        self.rows, self.cols, self.n_cells = rows, cols, n
        self.cell_buckets = [[list(b) for b in bs] for bs in cell_buckets]
        self.radices = np.array([len(bs) for bs in cell_buckets], dtype=np.int64)
        self.n_classes = 1
        for k in self.radices.tolist():
            self.n_classes *= k
        self.places = _places(self.radices.tolist()) if self.n_classes <= MAX_CLASSES else None
        self._cells = np.arange(n)
        self._mask_table = np.zeros((n, int(self.radices.max())), dtype=np.uint64)
        self._texts: list[list[str]] = []
        for c, bs in enumerate(self.cell_buckets):
            self._mask_table[c, : len(bs)] = bucket_masks(bs)
            self._texts.append(["".join("q" if faces[f] == QU else faces[f] for f in b) for b in bs])
        self.perms = shape_perms(rows, cols)
        for perm in self.perms:  # a symmetry maps each cell to one with the same buckets
            if any(self.cell_buckets[int(perm[c])] != self.cell_buckets[c] for c in range(n)):
                raise ValueError("the cells' buckets are not invariant under the shape's symmetries")

    @classmethod
    def from_spec(cls, spec: str, alphabet: Alphabet, rows: int, cols: int) -> ClassSpace:
        """The class space of a spec (see :func:`parse_sections`) on a shape."""
        sections = parse_sections(spec, alphabet)
        cells = []
        for c in range(rows * cols):
            kind = cell_kind(rows, cols, c)
            buckets = sections.get(kind, sections.get(""))
            if buckets is None:
                raise ConfigError(
                    f"prove: class spec: no buckets for the {kind} cells of {rows}x{cols} (give a "
                    f"default section first or a {kind}: section)"
                )
            cells.append(buckets)
        return cls(rows, cols, cells, alphabet.faces)

    def _checked_places(self) -> np.ndarray:
        if self.places is None:
            raise _too_many(self.rows, self.cols, self.radices.tolist(), self.n_classes)
        return self.places

    def canonical_ids(self) -> np.ndarray:
        """Sorted ids of the canonical classes (int64)."""
        return _canonical(self.perms, self.radices, self._checked_places(), self.n_classes)

    def digits(self, ids: np.ndarray) -> np.ndarray:
        """Class ids -> int8 [len(ids), n_cells] bucket numbers, each of its own cell."""
        return _digits(ids, self.radices, self._checked_places())

    def ids(self, digits: np.ndarray) -> np.ndarray:
        return np.asarray(digits).astype(np.int64) @ self._checked_places()

    def masks(self, digits: np.ndarray) -> np.ndarray:
        """uint64 [..., n_cells]: per cell the face mask of its bucket ``digits[..., c]``."""
        return self._mask_table[self._cells, np.asarray(digits, dtype=np.int64)]

    def bucket_text(self, cell: int, b: int) -> str:
        """The faces of bucket ``b`` of ``cell`` (Qu shown as q)."""
        return self._texts[cell][b]
