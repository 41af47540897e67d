"""Word lists known by name rather than by path: the embedded ENABLE2K and Debian's Tanglet
language packs (``tanglet:<lang>``): where the packs are and what is installed.

ENABLE2K (Enhanced North American Benchmark LEXicon, 2000 edition; 173,528 words) was placed
in the public domain by its authors. It ships inside the package, gzip-compressed
(``pipeline/lexicon/enable2k.txt.gz``, 460 kB), byte for byte as it is published (CRLF lines), so
its content hash, and with it every cache key, run identity and certificate made from it, is
the same as for the plain file.

A Tanglet pack is a folder holding ``words`` (a word list) and ``dice`` (dice sets); the
lexicon reads the one, :mod:`pipeline.boards` the other.
"""

from __future__ import annotations

import gzip
import tempfile
from importlib import resources
from pathlib import Path

from pipeline import settings
from pipeline.errors import LexiconError
from pipeline.io import atomic_open

TANGLET_PREFIX = "tanglet:"

#: The embedded word lists: name -> package data file (gzip).
EMBEDDED = {"enable2k": "enable2k.txt.gz"}
#: What every command solves with when no word list is given (and $BOGGLE_DICTIONARY is unset).
DEFAULT_DICTIONARY = "enable2k"
#: A file named like an embedded list is addressed by a path: ./enable2k.


def is_named(spec: str) -> bool:
    """True for a word list given by name (embedded or ``tanglet:<lang>``), not by path: such a
    spec is never made absolute or expanded."""
    return spec in EMBEDDED or spec.startswith(TANGLET_PREFIX)


def embedded_path(name: str) -> Path:
    """Where the embedded list ``name`` lies in the installed package."""
    return Path(str(resources.files("pipeline.lexicon").joinpath(EMBEDDED[name])))


def embedded_bytes(name: str) -> bytes:
    """The embedded list's bytes, decompressed (our own data: no size cap needed)."""
    data = resources.files("pipeline.lexicon").joinpath(EMBEDDED[name]).read_bytes()
    return gzip.decompress(data)


def plain_file(spec: str, folder: Path | None = None) -> str:
    """A path to ``spec`` as a plain word-list file, for a tool that reads only files (the
    benchmarks hand it to the field's C++): an embedded list is written decompressed into
    ``folder`` (default: ``boggle-word-lists`` in the temporary directory) once (atomically);
    any other spec comes back as an absolute path."""
    if spec not in EMBEDDED:
        return str(Path(spec).resolve())
    data = embedded_bytes(spec)
    if folder is None:
        folder = Path(tempfile.gettempdir()) / "boggle-word-lists"
    path = folder / f"{spec}.txt"
    if not (path.is_file() and path.stat().st_size == len(data)):
        folder.mkdir(parents=True, exist_ok=True)
        with atomic_open(path, "wb", encoding=None) as fh:
            fh.write(data)
    return str(path)


# ---------------------------------------------------------------- Tanglet language packs


def tanglet_dir() -> Path:
    return settings.get().tanglet_data


def tanglet_languages() -> list[str]:
    root = tanglet_dir()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / "words").is_file())


def no_lexicon_help() -> str:
    return (
        "install the Tanglet word lists with `sudo apt-get install tanglet-data` "
        "(Debian/Ubuntu; or set TANGLET_DATA to a folder of language packs), "
        "or use the embedded English list (--dictionary enable2k) or a word-list file (--dictionary PATH)"
    )


def tanglet_pack(lang: str) -> Path:
    """The folder of a Tanglet language pack, or a LexiconError saying how to get one."""
    path = tanglet_dir() / lang
    if not (path / "words").is_file():
        have = tanglet_languages()
        hint = f"installed: {', '.join(have)}" if have else no_lexicon_help()
        raise LexiconError(f"Tanglet language pack {lang!r} not found in {tanglet_dir()}; {hint}")
    return path
