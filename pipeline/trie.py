"""A compact array trie over a face alphabet.

Nodes are numbered breadth-first, so the children of a node are contiguous and sorted by face:
``mask[n]`` has bit ``f`` set when node ``n`` has a child for face ``f``, and that child is
``first_child[n] + popcount(mask[n] & ((1 << f) - 1))``. ``word_id[n]`` is the id of the word
ending at ``n`` (-1 if none). A word with several spellings in faces (``the`` as ``t h e`` and
``th e``) ends on several nodes that share its id. About 19 bytes a node.

The three fields the kernels read per node live in one 16-byte record (``nodes[n]`` = mask, then
first child and word id as two int32): a step down the trie touches one cache line instead of
three arrays, which measured about 20% faster. ``mask``, ``first_child`` and ``word_id`` are
views of it.

Supports lookup, deep copy, pruning by a predicate on words or faces, and an in-order walk.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.boards import BLANK, QU, is_face_char
from pipeline.errors import BoardError, LexiconError, quote
from pipeline.io import atomic_path

MAX_FACES = 64


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


def pack_nodes(mask: np.ndarray, first_child: np.ndarray, word_id: np.ndarray) -> np.ndarray:
    """uint64 [n, 2] node records: the child mask, then first child and word id as int32."""
    nodes = np.empty((len(mask), 2), dtype=np.uint64)
    nodes[:, 0] = mask
    halves = nodes.view(np.int32)  # [n, 4]; little-endian: the second uint64 is columns 2, 3
    halves[:, 2] = first_child
    halves[:, 3] = word_id
    return nodes


@dataclass
class Trie:
    """The compact trie and its word table (``words[id]``, ``word_len[id]`` in letters)."""

    alphabet: Alphabet
    nodes: np.ndarray  # uint64 [n, 2], see pack_nodes
    node_face: np.ndarray  # int8 [n], the face on the edge into the node (-1 for the root)
    node_depth: np.ndarray  # int16 [n], in faces
    words: list[str]
    word_len: np.ndarray  # int16 [n_words], letters

    @classmethod
    def from_arrays(
        cls,
        alphabet: Alphabet,
        mask: np.ndarray,
        first_child: np.ndarray,
        word_id: np.ndarray,
        node_face: np.ndarray,
        node_depth: np.ndarray,
        words: list[str],
        word_len: np.ndarray,
    ) -> Trie:
        return cls(alphabet, pack_nodes(mask, first_child, word_id), node_face, node_depth, words, word_len)

    @property
    def mask(self) -> np.ndarray:  # uint64 [n], a view
        return self.nodes[:, 0]

    @property
    def first_child(self) -> np.ndarray:  # int32 [n], a view
        return self.nodes.view(np.int32)[:, 2]

    @property
    def word_id(self) -> np.ndarray:  # int32 [n], a view
        return self.nodes.view(np.int32)[:, 3]

    @property
    def n_nodes(self) -> int:
        return len(self.nodes)

    @property
    def max_depth(self) -> int:
        return int(self.node_depth.max(initial=0))

    @property
    def nbytes(self) -> int:
        """Size of the node arrays (what the kernel walks)."""
        return sum(a.nbytes for a in (self.nodes, self.node_face, self.node_depth))

    @property
    def n_reachable_words(self) -> int:
        ids = self.word_id[self.word_id >= 0]
        return len(np.unique(ids))

    # ------------------------------------------------------------ lookup

    def child(self, node: int, face: int) -> int:
        m = int(self.mask[node])
        if not (m >> face) & 1:
            return -1
        return int(self.first_child[node]) + (m & ((1 << face) - 1)).bit_count()

    def find(self, tokens: Iterable[int]) -> int:
        """The node reached by a face sequence, or -1."""
        node = 0
        for t in tokens:
            node = self.child(node, t)
            if node < 0:
                return -1
        return node

    def lookup(self, word: str) -> str:
        """``"word"``, ``"prefix"`` (a proper prefix of some word) or ``"neither"``.

        The word may end part-way through a multi-letter face: ``q`` is a prefix of ``quit``.
        """
        from pipeline.boards import normalise_text

        word = normalise_text(word.strip())
        if not word:
            return "neither"
        is_prefix = False
        stack = [(0, 0)]  # (position in word, node)
        while stack:
            pos, node = stack.pop()
            if pos == len(word):
                if self.word_id[node] >= 0:
                    return "word"
                is_prefix = is_prefix or self.mask[node] != 0
                continue
            rest = word[pos:]
            for fi, f in enumerate(self.alphabet.faces):
                child = self.child(node, fi)
                if child < 0:
                    continue
                if rest.startswith(f):
                    stack.append((pos + len(f), child))
                elif f.startswith(rest):
                    is_prefix = True
        return "prefix" if is_prefix else "neither"

    # ------------------------------------------------------------ structure

    def copy(self) -> Trie:
        """A deep copy: the arrays and the word table are new objects."""
        return Trie(
            self.alphabet,
            self.nodes.copy(),
            self.node_face.copy(),
            self.node_depth.copy(),
            list(self.words),
            self.word_len.copy(),
        )

    def parents(self) -> np.ndarray:
        """``parent[n]`` for every node (-1 for the root)."""
        counts = np.bitwise_count(self.mask).astype(np.int64)
        parent = np.empty(self.n_nodes, dtype=np.int32)
        parent[0] = -1
        parent[1:] = np.repeat(np.arange(self.n_nodes, dtype=np.int32), counts)
        return parent

    def prune(
        self,
        keep_word: Callable[[str], bool] | None = None,
        keep_face: Callable[[str], bool] | None = None,
    ) -> Trie:
        """A new trie holding only the spellings whose word passes ``keep_word`` and whose faces
        all pass ``keep_face``; nodes that lead to no kept word are removed. Word ids stay the
        same (the word table is shared), so results from either trie are comparable.

        >>> small = trie.prune(keep_word=lambda w: len(w) <= 5)  # doctest: +SKIP
        """
        n = self.n_nodes
        parent = self.parents()
        depth = self.node_depth
        allowed = np.ones(n, dtype=bool)
        if keep_face is not None:
            face_ok = np.array([bool(keep_face(f)) for f in self.alphabet.faces] + [True])
            # node_face is -1 for the root, which indexes the trailing True
            allowed = face_ok[self.node_face]
            for d in range(1, self.max_depth + 1):
                sel = depth == d
                allowed[sel] &= allowed[parent[sel]]
        wid = self.word_id
        is_word = wid >= 0
        if keep_word is not None:
            # one trailing False so that non-word nodes (id -1) index something harmless
            word_ok = np.array([bool(keep_word(w)) for w in self.words] + [False], dtype=bool)
            is_word = is_word & word_ok[wid]
        keep_as_word = is_word & allowed
        keep = keep_as_word.copy()
        keep[0] = True
        for d in range(self.max_depth, 0, -1):
            sel = np.flatnonzero((depth == d) & keep)
            keep[parent[sel]] = True
        new_index = np.cumsum(keep) - 1
        old = np.flatnonzero(keep)
        m = len(old)
        face = self.node_face[old]
        new_parent = np.where(parent[old] >= 0, new_index[np.maximum(parent[old], 0)], -1)
        mask = np.zeros(m, dtype=np.uint64)
        np.bitwise_or.at(mask, new_parent[1:], np.left_shift(np.uint64(1), face[1:].astype(np.uint64)))
        first_child = np.zeros(m, dtype=np.int32)
        uniq, first = np.unique(new_parent[1:], return_index=True)
        first_child[uniq] = first + 1
        word_id = np.where(keep_as_word[old], wid[old], -1).astype(np.int32)
        return Trie.from_arrays(
            self.alphabet,
            mask,
            first_child,
            word_id,
            face.copy(),
            self.node_depth[old].copy(),
            self.words,
            self.word_len,
        )

    def iter_words(self) -> Iterator[tuple[str, int]]:
        """(spelling, word id) for every word node, depth-first in face order (an in-order walk
        with an explicit stack)."""
        for path, word_id in self.iter_paths():
            yield "".join(path), word_id

    def iter_paths(self) -> Iterator[tuple[tuple[str, ...], int]]:
        """(the faces of a spelling, word id) for every word node, in :meth:`iter_words`' order:
        ``("qu", "i", "t")`` where ``iter_words`` says ``quit``."""
        faces = self.alphabet.faces
        stack: list[tuple[int, tuple[str, ...]]] = [(0, ())]
        while stack:
            node, path = stack.pop()
            if self.word_id[node] >= 0:
                yield path, int(self.word_id[node])
            m = int(self.mask[node])
            kids = [f for f in range(len(faces)) if (m >> f) & 1]
            base = int(self.first_child[node])
            # push in reverse so the smallest face is visited first
            for k in range(len(kids) - 1, -1, -1):
                stack.append((base + k, (*path, faces[kids[k]])))

    # ------------------------------------------------------------ persistence

    def save(self, path: Path, meta: dict[str, Any] | None = None) -> None:
        """Write atomically (temp file, fsync, rename, fsync of the directory)."""
        # encoded a chunk at a time: one str of 3.2M words is twice the bytes (UCS-2) again
        step = 200_000
        blob = b"\n".join(
            "\n".join(self.words[i : i + step]).encode("utf-8") for i in range(0, len(self.words), step)
        )
        header = {"faces": list(self.alphabet.faces), "meta": meta or {}}
        with atomic_path(path) as tmp, open(tmp, "wb") as fh:
            np.savez(
                fh,
                nodes=self.nodes,
                node_face=self.node_face,
                node_depth=self.node_depth,
                word_len=self.word_len,
                words=np.frombuffer(blob, dtype=np.uint8),
                header=np.frombuffer(json.dumps(header).encode("utf-8"), dtype=np.uint8),
            )

    @classmethod
    def load(cls, path: Path) -> tuple[Trie, dict[str, Any]]:
        """Read a saved trie. A damaged or foreign file raises (zipfile.BadZipFile, ValueError,
        KeyError, ...): callers treat any exception as "rebuild it"."""
        with np.load(path, allow_pickle=False) as z:
            header = json.loads(z["header"].tobytes().decode("utf-8"))
            blob = z["words"].tobytes().decode("utf-8")
            words = blob.split("\n") if blob else []
            trie = cls(
                Alphabet(tuple(header["faces"])),
                z["nodes"],
                z["node_face"],
                z["node_depth"],
                words,
                z["word_len"],
            )
        if trie.nodes.dtype != np.uint64 or trie.nodes.ndim != 2 or trie.nodes.shape[1] != 2:
            raise ValueError("trie cache in an old layout")
        trie.check()
        if not isinstance(header["meta"], dict):
            raise ValueError("corrupt trie cache: the header's meta is not a mapping")
        return trie, header["meta"]

    def check(self) -> None:
        """Raise ValueError unless the arrays are consistent. The kernels index with these
        values unchecked (numba), so a damaged cache file must fail here, not as a crash or a
        wrong count there. Contiguous copies first: reductions over the strided record
        columns ran several times slower (tanglet:pl, 5.3M nodes: 0.2-0.5 s of a 4-5 s cache
        load, measured on a busy 2-CPU machine)."""
        n, n_words, n_faces = self.n_nodes, len(self.words), len(self.alphabet)
        kinds = ((self.node_face, np.int8), (self.node_depth, np.int16), (self.word_len, np.int16))
        if any(a.dtype != t or a.ndim != 1 for a, t in kinds):
            raise ValueError("corrupt trie cache: unexpected array types")
        if n == 0 or len(self.node_face) != n or len(self.node_depth) != n or len(self.word_len) != n_words:
            raise ValueError("corrupt trie cache: array sizes differ")
        halves = self.nodes.view(np.int32)
        first, wid = np.ascontiguousarray(halves[:, 2]), np.ascontiguousarray(halves[:, 3])
        if wid.min() < -1 or wid.max() >= n_words:
            raise ValueError("corrupt trie cache: a word id out of range")
        del wid
        if first.min() < 0 or first.max() >= n:
            raise ValueError("corrupt trie cache: a child index out of range")
        if self.node_face.min() < -1 or self.node_face.max() >= n_faces:
            raise ValueError("corrupt trie cache: a face out of range")
        if self.node_depth.min() < 0 or (n_words and self.word_len.min() < 1):
            raise ValueError("corrupt trie cache: a negative depth or an empty word")
        mask = np.ascontiguousarray(self.nodes[:, 0])
        kids = np.bitwise_count(mask)
        # a bit beyond the alphabet shows in the largest mask (a shift by 64 is undefined)
        stray = n_faces < MAX_FACES and int(mask.max()) >> n_faces != 0
        if int(kids.sum(dtype=np.int64)) != n - 1 or stray:
            raise ValueError("corrupt trie cache: child masks do not match the node count")
        first += kids  # no overflow: first < n and kids <= 64
        if int(first.max()) > n:
            raise ValueError("corrupt trie cache: a child index out of range")


# ---------------------------------------------------------------- building
#
# The build streams: words become one flat int8 array of face codes (a few words at a time),
# the spellings are merged into sorted order, and numba loops turn the sorted rows into nodes.
# A 3.2M-word list (tanglet:pl) builds in a few seconds in a few hundred MB; padded
# [words, longest] matrices took 2 GB.

_CHUNK = 200_000  # words encoded per step: bounds the per-character temporaries
_MAX_CODE_POINT = 0x110000


def _simple_spellings(
    words: list[str], simple: np.ndarray, alphabet: Alphabet
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Words that use no multi-letter face, where each character is at most one face: (flat
    face codes, row lengths, word index per row) of the spellable ones, and the others."""
    lut = np.full(_MAX_CODE_POINT, -1, dtype=np.int8)
    for i, f in enumerate(alphabet.faces):
        if len(f) == 1:
            lut[ord(f)] = i
    all_lens = np.fromiter((len(words[i]) for i in simple), dtype=np.int32, count=len(simple))
    tokens = np.empty(int(all_lens.sum()), dtype=np.int8)  # filled in place: no concatenated copy
    good = np.zeros(len(simple), dtype=bool)
    at = 0
    for lo in range(0, len(simple), _CHUNK):
        chunk = [words[i] for i in simple[lo : lo + _CHUNK]]
        lens = all_lens[lo : lo + len(chunk)]
        codes = lut[np.frombuffer("".join(chunk).encode("utf-32-le"), dtype=np.uint32)]
        del chunk
        if not len(codes):
            continue
        starts = np.concatenate(([0], np.cumsum(lens)[:-1]))
        ok = np.minimum.reduceat(codes, starts) >= 0
        good[lo : lo + len(lens)] = ok
        kept = codes[np.repeat(ok, lens)]
        tokens[at : at + len(kept)] = kept
        at += len(kept)
    return tokens[:at], all_lens[good], simple[good], simple[~good]


def _sorted_rows(
    tokens: np.ndarray, lens: np.ndarray, row_word: np.ndarray, extra: list[tuple[int, tuple[int, ...]]]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All spellings (the simple rows plus ``extra`` (word index, faces) rows) in lexicographic
    order of their faces, a prefix before its extensions: (flat tokens, row starts, word per row).

    The simple rows of a sorted word list are already in order (single-character faces sort
    like their characters), so usually only the few extra rows need placing."""
    from pipeline import trie_build  # numba: only when a list is compiled, never on a cache load

    starts = np.zeros(len(lens) + 1, dtype=np.int64)
    np.cumsum(lens, out=starts[1:])
    if trie_build.count_nodes(tokens, starts) < 0:  # not from a sorted word list: sort (slowly) here
        order = sorted(range(len(lens)), key=lambda r: tokens[starts[r] : starts[r + 1]].tobytes())
        extra = extra + [(int(row_word[r]), tuple(tokens[starts[r] : starts[r + 1]].tolist())) for r in order]
        tokens, starts, row_word = np.zeros(0, np.int8), np.zeros(1, np.int64), np.zeros(0, np.int64)
    if not extra:
        return tokens, starts, row_word
    extra = sorted(extra, key=lambda row: row[1])
    extra_tokens = np.array([f for _, faces in extra for f in faces], dtype=np.int8)
    extra_starts = np.zeros(len(extra) + 1, dtype=np.int64)
    np.cumsum([len(faces) for _, faces in extra], out=extra_starts[1:])
    extra_words = np.array([i for i, _ in extra], dtype=np.int64)
    return trie_build.merge_rows(tokens, starts, row_word, extra_tokens, extra_starts, extra_words)


MAX_WORD_LETTERS = int(np.iinfo(np.int16).max)  # word_len and node_depth are int16


def _word_lengths(words: list[str]) -> np.ndarray:
    lens = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    if len(lens) and lens.max() > MAX_WORD_LETTERS:
        longest = words[int(lens.argmax())]
        raise LexiconError(
            f"the word {quote(longest, 20)} is too long: the trie stores words of at most "
            f"{MAX_WORD_LETTERS:,} letters"
        )
    return lens.astype(np.int16)


# tanglet:pl makes 5.3M nodes. At 19 bytes a node plus the build's temporaries, 64M nodes is a
# compile of about 3 GB; a list of random letters of the size the loader accepts would make
# 200M+ (measured: 64 MB of random 24-letter words, 54M nodes, 2.3 GB peak).
DEFAULT_MAX_NODES = 64_000_000


def build_trie(
    words: list[str], alphabet: Alphabet, *, max_nodes: int = DEFAULT_MAX_NODES
) -> tuple[Trie, list[str]]:
    """Build the trie for ``words`` (sorted, unique, normalised); return it and the words no
    face sequence can spell. Word ids index the spellable words in their given order. A trie
    of more than ``max_nodes`` nodes is refused (LexiconError) before its arrays exist."""
    all_lens = _word_lengths(words)  # first: the numba passes store depths as int16 unchecked
    multis = [f for f in alphabet.faces if len(f) > 1]
    is_special = np.zeros(len(words), dtype=bool)
    if multis:
        for m in multis:
            is_special[[i for i, w in enumerate(words) if m in w]] = True
    special = np.flatnonzero(is_special).tolist()
    tokens, lens, row_word, bad = _simple_spellings(
        words, np.flatnonzero(~is_special).astype(np.int32), alphabet
    )
    del is_special
    extra: list[tuple[int, tuple[int, ...]]] = []
    unspellable = bad.tolist()
    for i in special:
        spells = alphabet.tokenize(words[i])
        if not spells:
            unspellable.append(i)
        extra.extend((i, sp) for sp in spells)
    unspellable.sort()

    kept = np.ones(len(words), dtype=bool)
    kept[np.array(unspellable, dtype=np.int64)] = False
    new_id = (np.cumsum(kept) - 1).astype(np.int32)  # word index -> id among the spellable words
    kept_words = [w for w, k in zip(words, kept.tolist(), strict=True) if k] if unspellable else words
    word_len = all_lens[kept] if unspellable else all_lens
    bad_words = [words[i] for i in unspellable]

    from pipeline import trie_build  # numba: only when a list is compiled, never on a cache load

    tokens, starts, row_word = _sorted_rows(tokens, lens, row_word, extra)
    del lens, extra
    n_rows = len(starts) - 1
    if n_rows == 0:
        trie = Trie.from_arrays(
            alphabet,
            np.zeros(1, np.uint64),
            np.zeros(1, np.int32),
            np.full(1, -1, np.int32),
            np.full(1, -1, np.int8),
            np.zeros(1, np.int16),
            kept_words,
            word_len,
        )
        return trie, bad_words
    max_len = int(np.diff(starts).max())
    n_nodes = trie_build.count_nodes(tokens, starts)
    if n_nodes > max_nodes:
        raise LexiconError(
            f"the word list makes a trie of {n_nodes:,} nodes, over the limit of {max_nodes:,} "
            "(set BOGGLE_LEXICON_MAX_NODES to raise it)"
        )
    row_word = new_id[row_word]
    del new_id
    parent, face, depth, word = trie_build.preorder_nodes(tokens, starts, row_word, n_nodes, max_len)
    del tokens, starts, row_word
    nodes, node_face, node_depth = trie_build.breadth_first(parent, face, depth, word, max_len)
    del parent, face, depth, word
    return Trie(alphabet, nodes, node_face, node_depth, kept_words, word_len), bad_words
