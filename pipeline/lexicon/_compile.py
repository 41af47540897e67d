"""Compiling a word list for a face alphabet and a rule set: the :class:`CompiledLexicon`, its
disk cache (checked on load, never shared with other users), the compact alphabet of a list,
and the playable words.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from pipeline import settings
from pipeline.errors import LexiconError
from pipeline.io import write_text_atomic
from pipeline.lexicon._limits import (
    DEFAULT_MAX_WORD,
    DropReport,
    Lexicon,
    LexiconLimits,
)
from pipeline.lexicon._named import DEFAULT_DICTIONARY
from pipeline.lexicon._parse import WordSource, drop_long
from pipeline.lexicon.trie import Alphabet, Trie, build_trie, is_face_char, normalise_text
from pipeline.rules import Rules

# bump whenever the trie's saved layout or what an entry records changes: stale caches are never
# loaded (3: an entry records its source's hash and the compiler that made it; 4: and a keyed
# checksum of its arrays, words and drop report)
CACHE_FORMAT = 4


def default_dictionary() -> str:
    """``$BOGGLE_DICTIONARY`` if set, else the embedded ENABLE2K (``enable2k``)."""
    return settings.get().dictionary or DEFAULT_DICTIONARY


# ---------------------------------------------------------------- reading


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
    the CLI says so first. It also hears, in one line, of a damaged cache file discarded for a
    rebuild."""
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
    env = settings.get()
    if env.cache_dir is not None:
        return env.cache_dir
    return (env.xdg_cache_home or Path.home() / ".cache") / "boggle-pipeline"


_UNSAFE_NOTED: set[str] = set()


def usable_cache_dir() -> Path | None:
    """The cache folder, made (mode 0700) if missing; None when it cannot be trusted: not ours,
    or writable by group or others without the sticky bit (anyone could plant an entry), or not
    a folder at all. Then the word list is compiled in memory and nothing is written, with a
    one-line note the first time."""
    folder = cache_dir()
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=0o700)
        st = folder.stat()
    except OSError:
        return None  # a read-only or missing home only costs speed
    why = _untrusted(st)
    if why is None:
        return folder
    if str(folder) not in _UNSAFE_NOTED:
        _UNSAFE_NOTED.add(str(folder))
        if _compile_listener is not None:
            _compile_listener(f"the lexicon cache folder {folder} {why}; not using it (compiling in memory)")
    return None


def _untrusted(st: os.stat_result) -> str | None:
    """Why a cache folder (or file) of status ``st`` cannot be trusted, or None."""
    if not stat.S_ISDIR(st.st_mode) and not stat.S_ISREG(st.st_mode):
        return "is not a folder"
    getuid = getattr(os, "getuid", None)
    if getuid is None:  # no POSIX owners here (Windows): the user's profile is private
        return None
    if st.st_uid != getuid():
        return f"belongs to another user (uid {st.st_uid})"
    if st.st_mode & 0o022 and not (stat.S_ISDIR(st.st_mode) and st.st_mode & stat.S_ISVTX):
        return "is writable by other users"
    return None


def compiler_version() -> str:
    """The release that compiles lexicons, recorded in every cache entry (another release
    rebuilds the entry rather than trust a trie it did not make)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("boggle-pipeline")
    except PackageNotFoundError:  # pragma: no cover - a source tree that was never installed
        return "unknown"


def cache_identity(
    content_hash: str, alphabet: Alphabet, rules: Rules, max_word: int = DEFAULT_MAX_WORD
) -> str:
    """What a cache entry is of: the format, the source's full content hash, the alphabet, the
    word lengths kept (points are recomputed on load) and the compiler. Recorded in the entry
    and checked on load, so an entry copied over another's name is never used for it."""
    return (
        f"v{CACHE_FORMAT}|{content_hash}|{alphabet.key()}|min={rules.min_length}|max={max_word}"
        f"|compiler={compiler_version()}"
    )


def cache_key(content_hash: str, alphabet: Alphabet, rules: Rules, max_word: int = DEFAULT_MAX_WORD) -> str:
    """The cache file's name (without ``.npz``) for an entry of :func:`cache_identity`."""
    identity = cache_identity(content_hash, alphabet, rules, max_word)
    return hashlib.sha256(identity.encode()).hexdigest()[:32]


def _discard_cache_file(path: Path, exc: BaseException, kind: str = "damaged") -> None:
    """Remove a cache file that failed to load (or is not what its name says), and say so in one
    line: it is rebuilt, and left in place it would fail every later run the same way."""
    with contextlib.suppress(OSError):
        path.unlink()
    if _compile_listener is not None:
        why = (str(exc).splitlines() or [""])[0]
        why = why if len(why) <= 120 else why[:120] + "..."
        # a mismatch says what the file is; damage says how loading it failed
        why = f"{type(exc).__name__}: {why}" if why and kind == "damaged" else why or type(exc).__name__
        _compile_listener(f"discarded the {kind} lexicon cache file {path} ({why}); rebuilding it")


class _Mismatch(ValueError):
    """A readable cache entry made for another source, alphabet, rules or compiler."""


def entry_checksum(trie: Trie, report: dict[str, Any], identity: str) -> str:
    """The checksum of a cache entry's content: BLAKE2b-256 of the trie's arrays (their types,
    shapes and bytes), its words and the drop report, keyed with the entry's identity (the
    source's hash, the format, the release: :func:`cache_identity`), so the checksum of one
    entry is never another's. Recorded when the entry is written and compared on load: an
    edit that keeps the file a valid zip of valid arrays (a word length changed, a word added)
    is caught, which the zip's CRC is not. A checksum, not a signature: see "The cache" in
    docs/methods/lexicon.md for what it does and does not protect against."""
    h = hashlib.blake2b(digest_size=32, key=hashlib.sha256(identity.encode("utf-8")).digest())
    h.update(json.dumps(list(trie.alphabet.faces)).encode("utf-8"))
    for name in ("nodes", "node_face", "node_depth", "word_len"):
        a = np.ascontiguousarray(getattr(trie, name))
        h.update(f"|{name}:{a.dtype.str}:{a.shape}|".encode())
        h.update(a.data.cast("B"))
    step = 200_000  # encoded a slice at a time: one str of 3.2M words is much more memory
    h.update(f"|words:{len(trie.words)}|".encode())
    for i in range(0, len(trie.words), step):
        h.update(("\n".join(trie.words[i : i + step]) + "\n").encode("utf-8"))
    h.update(b"|report|" + json.dumps(report, sort_keys=True).encode("utf-8"))
    return h.hexdigest()


def _load_cached(cache_file: Path, alphabet: Alphabet, identity: str) -> tuple[Trie, DropReport] | None:
    """The cached trie and drop report, or None on a miss; a file that fails to load in any
    way (truncated, not a zip, foreign arrays, bad JSON), that is not ours, or that records
    another ``identity`` (an entry of another word list copied over this one's name) is
    discarded, which makes it a miss."""
    try:
        st = cache_file.lstat()
    except OSError:
        return None
    try:
        why = _untrusted(st) if stat.S_ISREG(st.st_mode) else "is not a regular file"
        if why is not None:
            raise _Mismatch(f"it {why}")
        trie, meta = Trie.load(cache_file)
        if meta.get("identity") != identity:
            raise _Mismatch("made from another word list, for other rules or by another release")
        if trie.alphabet != alphabet:
            raise _Mismatch("built for another alphabet")
        if meta.get("checksum") != entry_checksum(trie, meta["report"], identity):
            raise ValueError("its checksum differs from its content: changed since it was written")
        return trie, DropReport.from_dict(meta["report"])
    except Exception as exc:  # any failure to load means: rebuild
        _discard_cache_file(cache_file, exc, "mismatched" if isinstance(exc, _Mismatch) else "damaged")
        return None


def compile_lexicon(
    spec: str | WordSource,
    alphabet: Alphabet,
    rules: Rules,
    *,
    use_cache: bool = True,
) -> CompiledLexicon:
    """Load ``spec`` and compile it for ``alphabet`` and ``rules``, using the disk cache (see
    :func:`usable_cache_dir`, :func:`cache_identity`).

    >>> from pipeline.rules import get_rules
    >>> compile_lexicon("words.txt", Alphabet.english(), get_rules("boggle"))  # doctest: +SKIP
    """
    src = spec if isinstance(spec, WordSource) else WordSource.open(spec)
    max_word = src.limits.max_word
    folder = usable_cache_dir() if use_cache else None
    identity = cache_identity(src.content_hash, alphabet, rules, max_word)
    cache_file = folder / f"{cache_key(src.content_hash, alphabet, rules, max_word)}.npz" if folder else None
    cached = _load_cached(cache_file, alphabet, identity) if cache_file is not None else None
    if cached is not None:
        trie, report = cached
        return CompiledLexicon(
            src.name,
            str(src.path),
            src.content_hash,
            alphabet,
            rules,
            trie,
            report,
            points_for(trie, rules),
            from_cache=True,
        )
    _announce_compile(src)
    compiled = compile_words(src.lexicon, alphabet, rules, max_word=max_word)
    if cache_file is not None:
        report = json.loads(json.dumps(compiled.report.to_dict()))  # as the entry will read it back
        checksum = entry_checksum(compiled.trie, report, identity)
        with contextlib.suppress(OSError):  # a read-only cache only costs speed
            compiled.trie.save(cache_file, {"report": report, "identity": identity, "checksum": checksum})
    return compiled


def compile_words(
    lexicon: Lexicon, alphabet: Alphabet, rules: Rules, *, max_word: int | None = None
) -> CompiledLexicon:
    """Compile an already loaded lexicon (no cache). Words over ``max_word`` letters (default:
    the environment's limit) are dropped here too, for lexicons built without the loader."""
    report = DropReport(
        lexicon.report.n_input,
        dict(lexicon.report.dropped),
        {k: list(v) for k, v in lexicon.report.examples.items()},
    )
    limits = LexiconLimits.from_env()
    words = drop_long(lexicon.words, limits.max_word if max_word is None else max_word, report)
    short = [w for w in words if len(w) < rules.min_length]
    report.drop_many(f"shorter than {rules.min_length} letters", short)
    # no copy of a multi-million-word list when nothing is dropped
    long_enough = [w for w in words if len(w) >= rules.min_length] if short else words
    try:
        trie, unspellable = build_trie(long_enough, alphabet, max_nodes=limits.max_nodes)
    except LexiconError as exc:
        raise LexiconError(exc.message, source=exc.source or lexicon.source, line=exc.line) from None
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


LETTERS_FORMAT = "boggle-letters v2"  # a letters marker's first line starts so


def _compact_alphabet(src: WordSource) -> Alphabet:
    # Cached on disk by content hash: finding the letters means reading every word.
    # a word over the length limit is dropped, and its letters with it: another limit, another file
    limit = "" if src.limits.max_word == DEFAULT_MAX_WORD else f"-max{src.limits.max_word}"
    folder = usable_cache_dir()
    marker = folder / f"letters-v2-{src.content_hash[:32]}{limit}.txt" if folder else None
    header = f"{LETTERS_FORMAT} {src.content_hash} max={src.limits.max_word}"
    if marker is not None and (marker.exists() or marker.is_symlink()):
        try:
            return _read_marker(marker, header)
        except Exception as exc:  # any failure to read means: find the letters again
            _discard_cache_file(marker, exc, "mismatched" if isinstance(exc, _Mismatch) else "damaged")
    _announce_compile(src)
    alphabet = Alphabet.compact_for(src.lexicon.words)
    if marker is not None:
        with contextlib.suppress(OSError):
            write_text_atomic(marker, "\n".join([header, *alphabet.faces]))
    return alphabet


def _read_marker(marker: Path, header: str) -> Alphabet:
    st = marker.lstat()
    why = _untrusted(st) if stat.S_ISREG(st.st_mode) else "is not a regular file"
    if why is not None:
        raise _Mismatch(f"it {why}")
    if st.st_size > 64 * 1024:  # 64 faces of a few letters: never near this
        raise ValueError("too large for a list of faces")
    first, *faces = marker.read_text(encoding="utf-8").split("\n")
    if first != header:
        raise _Mismatch("made from another word list or by another release")
    if not faces or not all(
        f and all(is_face_char(ch) for ch in f) and f == normalise_text(f) for f in faces
    ):
        raise ValueError("not a list of faces")
    return Alphabet(tuple(faces))


class Dice(Protocol):
    """What :func:`playable_words` asks of a dice set (:class:`pipeline.boards.DiceSet`)."""

    @property
    def faces(self) -> set[str]: ...

    def can_show(self, faces: Sequence[str]) -> bool: ...


def playable_words(
    spec: str, rules: Rules, *, max_length: int | None = None, dice: Dice | None = None
) -> Iterator[str]:
    """The words of ``spec`` a board can show, in trie order (alphabetical for single-letter
    faces), optionally pruned to ``max_length`` letters and to what a dice set can spell: its
    faces, each on as many cells as there are dice that carry it (``zuz`` needs two dice with a
    Z; the new dice have one)."""
    dice_set = dice
    faces = dice_set.faces if dice_set is not None else None
    trie = compile_for_boards(spec, rules, faces).trie
    if max_length is not None or faces is not None:
        trie = trie.prune(
            keep_word=None if max_length is None else (lambda w: len(w) <= max_length),
            keep_face=None if faces is None else (lambda f: f in faces),
        )
    seen: set[int] = set()
    for path, word_id in trie.iter_paths():
        if word_id in seen:  # a word with several spellings is listed once
            continue
        if dice_set is None or dice_set.can_show(path):  # one die a cell
            seen.add(word_id)
            yield trie.words[word_id]
