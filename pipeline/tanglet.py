"""Debian's Tanglet language packs (``tanglet:<lang>``): where they are and what is installed.

A pack is a folder holding ``words`` (a word list) and ``dice`` (dice sets); the lexicon reads
the one, the dice module the other.
"""

from __future__ import annotations

from pathlib import Path

from pipeline import settings
from pipeline.errors import LexiconError

TANGLET_PREFIX = "tanglet:"


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
