"""Word lists known by name rather than by path: the embedded ENABLE2K and Debian's Tanglet
language packs (``tanglet:<lang>``).

ENABLE2K (Enhanced North American Benchmark LEXicon, 2000 edition; 173,528 words) was placed
in the public domain by its authors. It ships inside the package, gzip-compressed
(``pipeline/data/enable2k.txt.gz``, 460 kB), byte for byte as it is published (CRLF lines), so
its content hash, and with it every cache key, run identity and certificate made from it, is
the same as for the plain file.
"""

from __future__ import annotations

import gzip
from importlib import resources
from pathlib import Path

from pipeline.tanglet import TANGLET_PREFIX

#: The embedded word lists: name -> package data file (gzip).
EMBEDDED = {"enable2k": "data/enable2k.txt.gz"}
#: What every command solves with when no word list is given (and $BOGGLE_DICTIONARY is unset).
DEFAULT_DICTIONARY = "enable2k"
#: A file named like an embedded list is addressed by a path: ./enable2k.


def is_named(spec: str) -> bool:
    """True for a word list given by name (embedded or ``tanglet:<lang>``), not by path: such a
    spec is never made absolute or expanded."""
    return spec in EMBEDDED or spec.startswith(TANGLET_PREFIX)


def embedded_path(name: str) -> Path:
    """Where the embedded list ``name`` lies in the installed package."""
    return Path(str(resources.files("pipeline").joinpath(EMBEDDED[name])))


def embedded_bytes(name: str) -> bytes:
    """The embedded list's bytes, decompressed (our own data: no size cap needed)."""
    data = resources.files("pipeline").joinpath(EMBEDDED[name]).read_bytes()
    return gzip.decompress(data)
