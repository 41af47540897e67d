"""Shared fixtures: the ENABLE2K word list, a compiled lexicon, an isolated cache."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
ENABLE2K = Path(os.environ.get("ENABLE2K", REPO.parent / "shared" / "data" / "enable2k.txt"))
SHARED_DICE = REPO.parent / "shared" / "data" / "dice_sets.json"


@pytest.fixture(scope="session", autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Compiled lexicons go to a per-session cache, never the user's."""
    os.environ["BOGGLE_CACHE_DIR"] = str(tmp_path_factory.mktemp("boggle-cache"))


@pytest.fixture(scope="session")
def enable2k_path() -> str:
    if not ENABLE2K.is_file():
        pytest.skip(f"ENABLE2K not found at {ENABLE2K} (set ENABLE2K=path)")
    return str(ENABLE2K)


@pytest.fixture(scope="session")
def enable_lexicon(enable2k_path: str):  # type: ignore[no-untyped-def]
    """ENABLE2K compiled for the English alphabet (a-z, q = Qu) and standard 4x4 rules."""
    from pipeline.lexicon import compile_lexicon
    from pipeline.rules import get_rules
    from pipeline.trie import Alphabet

    return compile_lexicon(enable2k_path, Alphabet.english(), get_rules("boggle"))


@pytest.fixture(scope="session")
def enable_words(enable2k_path: str) -> list[str]:
    from pipeline.lexicon import load_lexicon

    return load_lexicon(enable2k_path).words
