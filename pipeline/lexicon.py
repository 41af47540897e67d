"""Lexicons: load a word list (plain, gzip, or a Tanglet language pack), normalise it, report
what was dropped, and compile it (with a disk cache) for a face alphabet and a rule set.

Normalisation (docs/rules.md, "Lexicons"): trim, case-fold (Unicode-aware) and NFC-normalise each entry, then
drop empty lines and duplicates; compiling drops words shorter than the minimum length (in
letters) and words no sequence of the alphabet's faces can spell. Every drop is counted by
reason in a :class:`DropReport`; nothing is dropped silently.
"""

from __future__ import annotations

import bisect
import contextlib
import hashlib
import itertools
import os
import re
import stat
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from pipeline import settings
from pipeline.boards import is_face_char, normalise_text
from pipeline.errors import LexiconError
from pipeline.io import write_text_atomic
from pipeline.rules import Rules
from pipeline.tanglet import TANGLET_PREFIX, tanglet_pack
from pipeline.trie import DEFAULT_MAX_NODES, Alphabet, Trie, build_trie
from pipeline.wordlists import DEFAULT_DICTIONARY, EMBEDDED, embedded_bytes, embedded_path

# bump whenever the trie's saved layout or what an entry records changes: stale caches are never
# loaded (3: an entry records its source's hash and the compiler that made it)
CACHE_FORMAT = 3
MAX_EXAMPLES = 5


def default_dictionary() -> str:
    """``$BOGGLE_DICTIONARY`` if set, else the embedded ENABLE2K (``enable2k``)."""
    return settings.get().dictionary or DEFAULT_DICTIONARY


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
#
# A word list is streamed: decompressed (gzip) and checked a chunk at a time, so a hostile or
# mistaken input (/dev/zero, a gzip bomb, a binary file, one endless line) is refused as soon as
# it crosses a limit, in one line naming the file and line, before memory grows with it.

MAX_BYTES_ENV = "BOGGLE_LEXICON_MAX_BYTES"
MAX_LINES_ENV = "BOGGLE_LEXICON_MAX_LINES"
MAX_WORD_ENV = "BOGGLE_LEXICON_MAX_WORD"
MAX_NODES_ENV = "BOGGLE_LEXICON_MAX_NODES"
# tanglet:pl, the largest list we know, is 42 MB of text in 3.2M lines: 6x and 3x headroom.
# Every line costs a str while parsing, so the line cap is what bounds memory on short lines
# (10M distinct 5-letter words compile at a 1.5 GB peak); the node cap bounds the trie.
DEFAULT_MAX_BYTES = 256 * 2**20
DEFAULT_MAX_LINES = 10_000_000
# The longest word in any Tanglet pack or ENABLE2K has 28 letters; no board spells 64 faces.
DEFAULT_MAX_WORD = 64
# The longest line in any Tanglet pack is 77 bytes (a word and its fields); longer is not a word
# list. Fixed, and the ceiling for the word cap, so no length ever nears int16's 32,767.
MAX_LINE_BYTES = 1024
_READ_CHUNK = 2**20  # decompressed bytes examined per step


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


def _size(n: int) -> str:
    return f"{n / 2**20:,.0f} MB" if n >= 2**20 else f"{n:,} bytes"


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
            return cls(spec, path, _read_capped(path, spec, limits), True, limits=limits)
        path = Path(spec).expanduser()
        if not path.exists():
            raise LexiconError(
                f"dictionary file not found: {spec}; pass a word-list file, "
                f"{' or '.join(EMBEDDED)} (embedded) or tanglet:<lang>"
            )
        if path.is_dir():
            raise LexiconError(f"dictionary {spec} is a directory, expected a word-list file")
        return cls(path.name, path, _read_capped(path, spec, limits), False, limits=limits)

    @cached_property
    def content_hash(self) -> str:
        return hashlib.sha256(self.raw).hexdigest()

    @cached_property
    def lexicon(self) -> Lexicon:
        return _parse_lexicon(self)


def _read_capped(path: Path, spec: str, limits: LexiconLimits) -> bytes:
    """The file's bytes; refused before reading when it is not a regular file (/dev/zero, a
    pipe: no size to check, possibly endless) or is over the size limit."""
    try:
        # O_NONBLOCK: opening a FIFO would otherwise wait for a writer before we can refuse it
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
        with open(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise LexiconError(
                    "not a regular file (a device, pipe or socket); pass a word-list file", source=spec
                )
            if st.st_size > limits.max_bytes:
                raise LexiconError(_over_bytes(st.st_size, limits), source=spec)
            raw = fh.read(limits.max_bytes + 1)  # + 1: a file that grew since fstat is caught too
    except OSError as exc:
        raise LexiconError(f"cannot read dictionary: {exc.strerror or exc}", source=spec) from None
    if len(raw) > limits.max_bytes:
        raise LexiconError(_over_bytes(len(raw), limits), source=spec)
    return raw


def _over_bytes(n: int, limits: LexiconLimits, what: str = "the file is") -> str:
    return (
        f"{what} {_size(n)}, over the limit of {_size(limits.max_bytes)} for a word list "
        f"(set {MAX_BYTES_ENV} to raise it)"
    )


_GZIP_MAGIC = b"\x1f\x8b"


def _byte_chunks(src: WordSource) -> Iterator[bytes]:
    """The word list's bytes a chunk at a time, decompressed if gzip (never all at once): each
    decompress call is told the most it may return, so a bomb yields 1 MB at a time."""
    raw = src.raw
    if raw[:2] != _GZIP_MAGIC:
        for at in range(0, len(raw), _READ_CHUNK):
            yield raw[at : at + _READ_CHUNK]
        return
    bad = "not a valid gzip file (corrupt or truncated)"
    view = memoryview(raw)
    pos = 0
    while True:  # one gzip member per round: `cat a.gz b.gz` is a valid gzip file
        inflate = zlib.decompressobj(wbits=31)  # 31: gzip header and trailer, CRC checked
        pending: bytes | memoryview = b""
        while not inflate.eof:
            if not pending:
                if pos >= len(raw):
                    raise LexiconError(bad, source=str(src.path))
                pending, pos = view[pos : pos + _FEED], pos + _FEED
            try:
                block = inflate.decompress(pending, _READ_CHUNK)
            except zlib.error:
                raise LexiconError(bad, source=str(src.path)) from None
            pending = inflate.unconsumed_tail
            if block:
                yield block
        pos = min(pos, len(raw)) - len(inflate.unused_data) - len(pending)  # back to the member's end
        more = _NOT_ZERO.search(raw, pos)  # zero padding after the last member is allowed, as gzip does
        if more is None:
            return
        pos = more.start()
        if raw[pos : pos + 2] != _GZIP_MAGIC:
            raise LexiconError("not a valid gzip file (trailing data after the end)", source=str(src.path))


_FEED = 2**16  # compressed bytes handed to the decompressor at a time
_NOT_ZERO = re.compile(rb"[^\x00]")


def _checked_chunks(src: WordSource) -> Iterator[tuple[bytes, int]]:
    """(bytes, number of its first line) in chunks that end at a line break (or the end of the
    file), each checked against the limits before it is passed on: total size, lines, line
    length, NUL bytes. UTF-8 is checked by the caller, which decodes."""
    source, limits = str(src.path), src.limits
    gz = src.raw[:2] == _GZIP_MAGIC
    carry = b""  # the unfinished last line of the previous chunk
    total = 0
    line = 1  # number of the first line in carry + block
    for block in _byte_chunks(src):
        total += len(block)
        data = carry + block
        if total > limits.max_bytes:
            what = "the text decompresses to more than" if gz else "the text is more than"
            over = len(data) - (total - limits.max_bytes)  # where in data the limit is crossed
            where = line + data.count(b"\n", 0, over)
            raise LexiconError(_over_bytes(limits.max_bytes, limits, what), source=source, line=where)
        nul = data.find(b"\x00")
        if nul >= 0:
            where = line + data.count(b"\n", 0, nul)
            raise LexiconError("binary data (NUL byte), expected a text word list", source=source, line=where)
        cut = data.rfind(b"\n") + 1
        done, carry = data[:cut], data[cut:]
        breaks = np.flatnonzero(np.frombuffer(done, dtype=np.uint8) == 10)
        lengths = np.diff(breaks, prepend=-1) - 1
        if len(lengths) and lengths.max() > MAX_LINE_BYTES:
            _too_long(source, line + int(np.argmax(lengths > MAX_LINE_BYTES)))
        if len(carry) > MAX_LINE_BYTES:
            _too_long(source, line + len(breaks), carry)
        if line - 1 + len(breaks) > limits.max_lines:
            _too_many_lines(source, limits)
        if done:
            yield done, line
        line += len(breaks)
    if carry:
        if line > limits.max_lines:
            _too_many_lines(source, limits)
        if line == 1 and b"\r" in carry.strip():
            _too_long(source, line, carry)  # no "\n" at all, and more than one line
        yield carry, line


def _too_long(source: str, line: int, text: bytes = b"") -> NoReturn:
    if b"\r" in text.strip():
        why = "lines end in a bare carriage return (classic Mac); expected \\n or \\r\\n line ends"
    else:
        why = f"a line longer than {MAX_LINE_BYTES:,} bytes; a word list holds one word a line"
    raise LexiconError(why, source=source, line=line)


def _too_many_lines(source: str, limits: LexiconLimits) -> NoReturn:
    raise LexiconError(
        f"more than {limits.max_lines:,} lines, over the limit for a word list "
        f"(set {MAX_LINES_ENV} to raise it)",
        source=source,
        line=limits.max_lines + 1,
    )


def _decode(data: bytes, first: bool, source: str, line: int) -> str:
    try:
        return data.decode("utf-8-sig" if first else "utf-8")  # a byte-order mark only opens a file
    except UnicodeDecodeError as exc:
        at = line + data.count(b"\n", 0, exc.start)
        raise LexiconError("not UTF-8 text, expected a word list", source=source, line=at) from None


_RETAIN_BYTES = 64 * 2**20  # a list up to this size is decompressed once, not twice


def _check_all(src: WordSource) -> list[tuple[bytes, int]] | None:
    """Check the whole word list against the limits, keeping nothing but (up to
    ``_RETAIN_BYTES``) the checked chunks, so a bomb or a binary file is refused having cost a
    chunk of memory, not the words parsed so far. Returns the chunks, or None when the list was
    too big to keep (it is then streamed again)."""
    kept: list[tuple[bytes, int]] | None = []
    size = 0
    for data, line in _checked_chunks(src):
        if not data.isascii():
            _decode(data, line == 1, str(src.path), line)
        if kept is not None:
            size += len(data)
            kept.append((data, line))
            if size > _RETAIN_BYTES:
                kept = None
    return kept


def _texts(src: WordSource, checked: list[tuple[bytes, int]] | None) -> Iterator[str]:
    """The checked word list's text, a chunk (ending at a line break) at a time."""
    for data, line in checked if checked is not None else _checked_chunks(src):
        yield _decode(data, line == 1, str(src.path), line)


def load_lexicon(spec: str, limits: LexiconLimits | None = None) -> Lexicon:
    """Load and normalise a word list: a file path (plain or gzip) or ``tanglet:<lang>``."""
    return WordSource.open(spec, limits).lexicon


def _parse_lexicon(src: WordSource) -> Lexicon:
    # Per chunk, whole-text operations (one case-fold + NFC pass, C-level strip) rather than a
    # Python loop per line: a 3.2M-word list parses in about a second. Normalising a chunk at
    # once equals normalising each line: both are per-character and never touch line breaks,
    # and chunks end at line breaks.
    checked = _check_all(src)
    entries: list[str] = []
    empties: list[str] = []  # the first few blank lines, as written
    for text in _texts(src, checked):
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
    words = _drop_long(words, src.limits.max_word, report)
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


def _drop_long(words: list[str], max_word: int, report: DropReport) -> list[str]:
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
    for text in _texts(src, checked):
        lines = _lines(text)
        found.extend(lines[i - at].strip() for i in wanted if at <= i < at + len(lines))
        at += len(lines)
        if len(found) == len(wanted):
            break
    return found


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
        with contextlib.suppress(OSError):  # a read-only cache only costs speed
            compiled.trie.save(cache_file, {"report": compiled.report.to_dict(), "identity": identity})
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
    words = _drop_long(lexicon.words, limits.max_word if max_word is None else max_word, report)
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


def playable_words(
    spec: str, rules: Rules, *, max_length: int | None = None, dice: str | None = None
) -> Iterator[str]:
    """The words of ``spec`` a board can show, in trie order (alphabetical for single-letter
    faces), optionally pruned to ``max_length`` letters and to what a dice set can spell: its
    faces, each on as many cells as there are dice that carry it (``zuz`` needs two dice with a
    Z; the new dice have one)."""
    from pipeline.dice import load_dice_set

    dice_set = load_dice_set(dice) if dice else None
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
