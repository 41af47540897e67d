"""The compact array trie over a face alphabet: its node arrays, lookup, copy, pruning, an in-order
walk, and saving and loading (checked) a cache file.

Nodes are numbered breadth-first, so the children of a node are contiguous and sorted by face:
``mask[n]`` has bit ``f`` set when node ``n`` has a child for face ``f``, and that child is
``first_child[n] + popcount(mask[n] & ((1 << f) - 1))``. ``word_id[n]`` is the id of the word
ending at ``n`` (-1 if none). A word with several spellings in faces (``the`` as ``t h e`` and
``th e``) ends on several nodes that share its id. About 19 bytes a node.

The three fields the kernels read per node live in one 16-byte record (``nodes[n]`` = mask, then
first child and word id as two int32): a step down the trie touches one cache line instead of
three arrays, which measured about 20% faster. ``mask``, ``first_child`` and ``word_id`` are
views of it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.io import atomic_path, load_npz
from pipeline.lexicon.trie._alphabet import MAX_FACES, Alphabet, normalise_text


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
        z = load_npz(path)
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
        n_words = self._check_shapes()
        halves = self.nodes.view(np.int32)
        first, wid = np.ascontiguousarray(halves[:, 2]), np.ascontiguousarray(halves[:, 3])
        if wid.min() < -1 or wid.max() >= n_words:
            raise ValueError("corrupt trie cache: a word id out of range")
        del wid
        self._check_ranges(first)
        self._check_children(first)

    def _check_shapes(self) -> int:
        """Check the arrays' types and sizes; return the number of words."""
        n, n_words = self.n_nodes, len(self.words)
        kinds = ((self.node_face, np.int8), (self.node_depth, np.int16), (self.word_len, np.int16))
        if any(a.dtype != t or a.ndim != 1 for a, t in kinds):
            raise ValueError("corrupt trie cache: unexpected array types")
        if n == 0 or len(self.node_face) != n or len(self.node_depth) != n or len(self.word_len) != n_words:
            raise ValueError("corrupt trie cache: array sizes differ")
        return n_words

    def _check_ranges(self, first: np.ndarray) -> None:
        """Check the first children, faces, depths and word lengths are in range."""
        n, n_words, n_faces = self.n_nodes, len(self.words), len(self.alphabet)
        if first.min() < 0 or first.max() >= n:
            raise ValueError("corrupt trie cache: a child index out of range")
        if self.node_face.min() < -1 or self.node_face.max() >= n_faces:
            raise ValueError("corrupt trie cache: a face out of range")
        if self.node_depth.min() < 0 or (n_words and self.word_len.min() < 1):
            raise ValueError("corrupt trie cache: a negative depth or an empty word")

    def _check_children(self, first: np.ndarray) -> None:
        """Check the child masks add up to the node count and no child run passes the end;
        ``first`` (a contiguous copy of the first children) is changed."""
        n, n_faces = self.n_nodes, len(self.alphabet)
        mask = np.ascontiguousarray(self.nodes[:, 0])
        kids = np.bitwise_count(mask)
        # a bit beyond the alphabet shows in the largest mask (a shift by 64 is undefined)
        stray = n_faces < MAX_FACES and int(mask.max()) >> n_faces != 0
        if int(kids.sum(dtype=np.int64)) != n - 1 or stray:
            raise ValueError("corrupt trie cache: child masks do not match the node count")
        first += kids  # no overflow: first < n and kids <= 64
        if int(first.max()) > n:
            raise ValueError("corrupt trie cache: a child index out of range")
