"""Every environment variable the package reads, declared once and read once.

:class:`Settings` has one field per variable: its type, its default and, in the field's metadata,
the variable's name and a one-line description (``docs/reference/environment.md`` is generated
from them). :func:`get` reads the environment the first time it is called and keeps the result;
a bad value (``BOGGLE_FS_RETRIES=abc``) is a one-line :class:`~pipeline.errors.ConfigError`
naming the variable (exit 2). An empty variable counts as unset.

No other module reads ``os.environ``: they call ``settings.get().field``. Tests that change the
environment call :func:`reload` (``tests/conftest.py`` does it for ``monkeypatch.setenv``), and a
process that sets a variable for the worker processes it starts does so with :func:`export`.

>>> Settings().fs_retries
3
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.errors import ConfigError, quote

Parser = Callable[[str, str], Any]  # (variable name, its text) -> the value

# The longest line in any Tanglet pack is 77 bytes (a word and its fields); longer is not a word
# list. Fixed, and the ceiling for the word cap, so no length ever nears int16's 32,767.
MAX_LINE_BYTES = 1024
_SIZE_SUFFIX = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30}


def _text(name: str, text: str) -> str:
    return text


def _path(name: str, text: str) -> Path:
    return Path(text)


def _flag(name: str, text: str) -> bool:
    return True  # set (to anything but the empty string, which is unset)


def _number(least: float, most: float, *, whole: bool = False) -> Parser:
    """A number from ``least`` to ``most`` (a whole one when ``whole``)."""

    def parse(name: str, text: str) -> float | int:
        kind = "a whole number" if whole else "a number"
        try:
            value: float | None = int(text) if whole else float(text)
        except ValueError:
            value = None
        if value is None or not least <= value <= most:  # nan fails both comparisons
            raise ConfigError(f"{name}={quote(text, 40)}: expected {kind} from {least:g} to {most:g}")
        return value

    return parse


def _one_of(*choices: str) -> Parser:
    """One of ``choices``."""

    def parse(name: str, text: str) -> str:
        if text not in choices:
            raise ConfigError(f"{name}={quote(text, 40)}: expected one of {', '.join(choices)}")
        return text

    return parse


def _count(*, most: int | None = None, suffixes: bool = False) -> Parser:
    """A positive whole number of at most 15 digits (no ``int()`` of a 5,000-digit string),
    with a K, M or G suffix (powers of 1,024) when ``suffixes``."""
    pattern = r"(\d{1,15})\s*([kmg]?)(?:i?b)?" if suffixes else r"(\d{1,15})()"

    def parse(name: str, text: str) -> int:
        m = re.fullmatch(pattern, text, re.IGNORECASE)
        value = int(m.group(1)) * _SIZE_SUFFIX[m.group(2).lower()] if m else 0
        if value < 1 or (most is not None and value > most):
            span = f"1 to {most}" if most is not None else "a positive whole number"
            unit = " (bytes, or with a K, M or G suffix)" if suffixes else ""
            raise ConfigError(f"{name}={quote(text, 40)}: expected {span}{unit}")
        return value

    return parse


def _var(env: str, default: Any, doc: str, *, parse: Parser = _text, shown: str | None = None) -> Any:
    """A :class:`Settings` field read from ``$env``: ``doc`` says what it does, ``shown`` is
    the default as the environment page writes it (else the default itself, or "unset")."""
    return field(default=default, metadata={"env": env, "doc": doc, "parse": parse, "shown": shown})


def _ranged(env: str, default: float, doc: str, least: float, most: float, *, whole: bool = False) -> Any:
    """A :func:`_var` holding a number from ``least`` to ``most``, the range said once: the
    parser checks it and the description ends with it."""
    kind = "a whole number, " if whole else ""
    return _var(
        env, default, f"{doc} ({kind}{least:,g} to {most:,g})", parse=_number(least, most, whole=whole)
    )


@dataclass(frozen=True, kw_only=True)
class Settings:
    """What the environment sets; a field's metadata names its variable and says what it does."""

    dictionary: str | None = _var(
        "BOGGLE_DICTIONARY",
        None,
        "the word list every command uses when none is given (`enable2k`, `tanglet:<lang>` or a file)",
        shown="`enable2k` (embedded)",
    )
    cache_dir: Path | None = _var(
        "BOGGLE_CACHE_DIR",
        None,
        "where compiled lexicons are cached (made 0700; not used, with a note, when others can "
        "write it: see [Lexicons](../methods/lexicon.md#the-cache))",
        parse=_path,
        shown="`$XDG_CACHE_HOME/boggle-pipeline`, else `~/.cache/boggle-pipeline`",
    )
    xdg_cache_home: Path | None = _var(
        "XDG_CACHE_HOME",
        None,
        "the user's cache folder, which holds `boggle-pipeline` when `BOGGLE_CACHE_DIR` is unset",
        parse=_path,
        shown="`~/.cache`",
    )
    # tanglet:pl, the largest list we know, is 42 MB of text in 3.2M lines: 6x and 3x headroom.
    # Every line costs a str while parsing, so the line cap is what bounds memory on short lines
    # (10M distinct 5-letter words compile at a 1.5 GB peak); the node cap bounds the trie.
    lexicon_max_bytes: int = _var(
        "BOGGLE_LEXICON_MAX_BYTES",
        256 * 2**20,
        "largest word-list file or decompressed text accepted, e.g. `512M`",
        parse=_count(suffixes=True),
        shown="256 MB",
    )
    lexicon_max_lines: int = _var(
        "BOGGLE_LEXICON_MAX_LINES",
        10_000_000,
        "most lines a word list may have",
        parse=_count(),
    )
    # tanglet:pl makes 5.3M nodes. At 19 bytes a node plus the build's temporaries, 64M nodes is
    # a compile of about 3 GB; a list of random letters of the size the loader accepts would make
    # 200M+ (measured: 64 MB of random 24-letter words, 54M nodes, 2.3 GB peak).
    lexicon_max_nodes: int = _var(
        "BOGGLE_LEXICON_MAX_NODES",
        64_000_000,
        "most trie nodes a compiled lexicon may have (counted before its arrays exist)",
        parse=_count(most=2**31 - 1),  # the trie's child indices are int32
    )
    # The longest word in any Tanglet pack or ENABLE2K has 28 letters; no board spells 64 faces.
    lexicon_max_word: int = _var(
        "BOGGLE_LEXICON_MAX_WORD",
        64,
        "longest word kept, in letters (longer ones are dropped and counted); at most 1,024",
        parse=_count(most=MAX_LINE_BYTES),
    )
    fs_connect_timeout: float = _ranged(
        "BOGGLE_FS_CONNECT_TIMEOUT", 10.0, "seconds to wait for an object store to answer", 0.1, 600.0
    )
    fs_retries: int = _ranged(
        "BOGGLE_FS_RETRIES", 3, "attempts of a failed object-store request", 1, 20, whole=True
    )
    lease_ttl: float = _ranged(
        "BOGGLE_LEASE_TTL", 60.0, "seconds an object-store lease lives without renewal", 0.1, 86_400.0
    )
    lease_renew: float = _ranged("BOGGLE_LEASE_RENEW", 15.0, "seconds between lease renewals", 0.1, 86_400.0)
    run_dir: str | None = _var(
        "BOGGLE_RUN_DIR",
        None,
        "the run the notebook reads (a folder or an object-store URL)",
        shown="`runs/default` of the checkout",
    )
    compare_dirs: str = _var(
        "BOGGLE_COMPARE_DIRS",
        "",
        "the runs the notebook compares with the one it reads, separated by commas or `:`",
        shown="none",
    )
    # the next two are read by their command-line options (click checks them), as given
    progress_interval: str | None = _var(
        "BOGGLE_PROGRESS_INTERVAL",
        None,
        "seconds between two progress lines of `run`, `prove`, `optimize` and `analyze` when "
        "stderr is not a terminal (as `--progress-interval`; see "
        "[Progress in a log](../guides/batch-runs.md#progress-in-a-log))",
        shown="10",
    )
    log_format: str | None = _var(
        "BOGGLE_LOG_FORMAT",
        None,
        "`json`: progress as one JSON object a line, on a terminal too (as `--log-format`); "
        "`text`: a bar on a terminal, plain lines in a log",
        shown="`text`",
    )
    traceback: bool = _var(
        "BOGGLE_TRACEBACK",
        False,
        "`1` (any value): show the Python traceback of an internal error (exit 1)",
        parse=_flag,
        shown="unset",
    )
    tanglet_data: Path = _var(
        "TANGLET_DATA",
        Path("/usr/share/tanglet/gamedata"),
        "the folder of Debian's Tanglet language packs (`tanglet:<lang>`)",
        parse=_path,
    )
    columns: str | None = _var(
        "COLUMNS",
        None,
        "width of a progress line written to a log (not a terminal)",
        shown="200",
    )
    kernels: str = _var(
        "BOGGLE_KERNELS",
        "jit",
        "which compiled kernels a process runs: `jit` (numba's, compiled on first use) or `aot` "
        "(those `make aot` built, where they match the sources, else `jit`); `boggle prove` "
        "sets `aot` unless this is set "
        "(see [Performance](../performance.md#memory-per-core-threads-or-processes))",
        parse=_one_of("jit", "aot"),
    )
    numba_cache_dir: Path | None = _var(
        "NUMBA_CACHE_DIR",
        None,
        "numba's own: where it keeps the kernels' machine code",
        parse=_path,
        shown="`__pycache__` beside each kernel",
    )
    anchor_dir: Path = _var(
        "ANCHOR_DIR",
        Path("/tmp/anchor"),
        "the benchmarks' build of the C++ reference (see [Development](../development.md))",
        parse=_path,
    )
    main_pid: str | None = _var(
        "BOGGLE_MAIN_PID",
        None,
        "set by a command for the worker processes it starts (they exit when it dies); not for users",
    )


FIELDS: tuple[dataclasses.Field[Any], ...] = dataclasses.fields(Settings)
_CURRENT: Settings | None = None


def read(environ: Mapping[str, str]) -> Settings:
    """The settings of ``environ`` (a bad value is a one-line ConfigError naming it).

    >>> read({"BOGGLE_FS_RETRIES": "5"}).fs_retries
    5
    """
    values: dict[str, Any] = {}
    for f in FIELDS:
        text = environ.get(f.metadata["env"], "").strip()
        if text:
            values[f.name] = f.metadata["parse"](f.metadata["env"], text)
    return Settings(**values)


def get() -> Settings:
    """The settings of this process's environment, read on the first call."""
    global _CURRENT
    if _CURRENT is None:
        _CURRENT = read(os.environ)
    return _CURRENT


def reload() -> None:
    """Forget what :func:`get` read: the next call reads the environment again (tests)."""
    global _CURRENT
    _CURRENT = None


def export(name: str, value: str, *, replace: bool = True) -> None:
    """Set ``$name`` for the processes started from now on (and this one's settings); with
    ``replace=False`` a value already there is kept (the user's choice wins)."""
    if replace or not os.environ.get(name):
        os.environ[name] = value
        reload()


def env_name(name: str) -> str:
    """The variable behind the field ``name``: ``env_name("fs_retries")`` is
    ``"BOGGLE_FS_RETRIES"``."""
    return next(f.metadata["env"] for f in FIELDS if f.name == name)


def shown_default(f: dataclasses.Field[Any]) -> str:
    """The default of ``f`` as the environment page writes it."""
    if f.metadata["shown"] is not None:
        return str(f.metadata["shown"])
    value = f.default
    if value is None:
        return "unset"
    if isinstance(value, Path):
        return f"`{value}`"
    if isinstance(value, float):
        return f"{value:g}"
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)
