"""Shared fixtures: the ENABLE2K word list, a compiled lexicon, an isolated cache."""

from __future__ import annotations

import os
import sys
import time
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


# ---------------------------------------------------------------- boggle prove: a tiny lexicon

#: The faces of the tiny lexicon the prove tests enumerate exhaustively.
TINY_LETTERS = "aerst"


@pytest.fixture(scope="session")
def tiny_dict(tmp_path_factory: pytest.TempPathFactory, enable_words: list[str]) -> str:
    """ENABLE2K words of at most 6 letters over a e r s t: every board of 2x2 and 2x3 can be
    enumerated (5^6 = 15,625)."""
    words = [w for w in enable_words if len(w) <= 6 and set(w) <= set(TINY_LETTERS)]
    path = tmp_path_factory.mktemp("lex") / "tiny.txt"
    path.write_text("\n".join(words) + "\n", encoding="utf-8")
    return str(path)


@pytest.fixture(scope="session")
def tiny(tiny_dict: str):  # type: ignore[no-untyped-def]
    """The tiny word list compiled for its five faces."""
    from pipeline.lexicon import compile_for_boards
    from pipeline.rules import get_rules

    lex = compile_for_boards(tiny_dict, get_rules("boggle"))
    assert lex.alphabet.faces == tuple(TINY_LETTERS)
    return lex


def _draw_class(data):  # type: ignore[no-untyped-def]
    """(rows, cols, masks) of a random small class over the tiny lexicon's faces, drawn with
    hypothesis: at most 4^4, 3^6 or 2^9 boards, so a test can score them all."""
    from hypothesis import strategies as st

    rows, cols = data.draw(st.sampled_from([(2, 2), (2, 3), (3, 3)]))
    most = {4: 4, 6: 3, 9: 2}[rows * cols]
    faces = st.sets(st.integers(0, len(TINY_LETTERS) - 1), min_size=1, max_size=most)
    return rows, cols, [sum(1 << f for f in data.draw(faces)) for _ in range(rows * cols)]


def _class_boards(masks: list[int]):  # type: ignore[no-untyped-def]
    """Every board of the class ``masks`` (int8 [boards, cells])."""
    import itertools

    import numpy as np

    return np.array(list(itertools.product(*[[f for f in range(64) if m >> f & 1] for m in masks])), np.int8)


@pytest.fixture(scope="session")
def draw_class():  # type: ignore[no-untyped-def]
    return _draw_class


@pytest.fixture(scope="session")
def class_boards():  # type: ignore[no-untyped-def]
    return _class_boards


def _reseal(job_dir: Path, legacy: bool = False) -> None:
    """Rewrite a finished job's manifest for parts changed on purpose (what an older writer
    would have left): part sizes and checksums taken anew and the seal recomputed, or, with
    ``legacy``, the manifest of a schema without side-file records or a seal."""
    import json

    from pipeline.store.parts import file_blake2b, seal_of

    path = job_dir / "_SUCCESS"
    manifest = json.loads(path.read_text())
    for p in manifest["parts"]:
        part = job_dir / p["file"]
        p["bytes"], p["blake2b"] = part.stat().st_size, file_blake2b(part)
    manifest.pop("seal", None)
    if legacy:
        manifest.pop("files", None)
    else:
        manifest["seal"] = seal_of(manifest)
    path.write_text(json.dumps(manifest))


@pytest.fixture(scope="session")
def reseal():  # type: ignore[no-untyped-def]
    return _reseal


# ---------------------------------------------------------------- jobs in their own process group


def boggle_command(*args: str) -> list[str]:
    """A ``boggle`` command line run by this interpreter (the installed entry point's module)."""
    return [sys.executable, "-m", "pipeline.cli", *args]


def job_environment() -> dict[str, str]:
    """The environment for a ``boggle`` subprocess, read when called: the session's isolated
    cache (set by a fixture, after modules are imported) and this checkout on the path."""
    return {**os.environ, "PYTHONPATH": str(REPO)}


def group_processes(pgid: int) -> list[int]:
    """Live processes of the process group ``pgid`` (read from /proc/*/stat). Zombies are left
    out: they run nothing, and this container's init may never reap them."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                stat = fh.read()
        except OSError:  # gone while we looked
            continue
        # the command name (field 2) may hold spaces and parentheses: split after its last ")"
        state, _ppid, group = stat[stat.rindex(")") + 2 :].split()[:3]
        if int(group) == pgid and state not in ("Z", "X"):
            found.append(int(entry))
    return found


def wait_group_gone(pgid: int, limit: float = 10.0) -> list[int]:
    """Poll until no live process of ``pgid`` is left or ``limit`` seconds pass; what is left."""
    deadline = time.monotonic() + limit
    while (alive := group_processes(pgid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive
