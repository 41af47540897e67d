"""The paths a config names: checked to be UTF-8 (runs record them), shown safely, globbed."""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence

from pipeline.errors import ConfigError


def shown_path(path: str) -> str:
    """A path as text that any terminal, log or JSON file takes: bytes of a file name that are
    not UTF-8 (Python keeps them as surrogates) become ``\\xNN``."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def utf8_path(path: str, key: str, where: str | None) -> str:
    """``path`` if it is valid UTF-8, else ConfigError: runs record their paths in JSON and in
    Parquet's UTF-8 columns, which cannot hold such a name."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise ConfigError(
            f"{key}: '{shown_path(path)}' is not a UTF-8 name; rename it (a run records its paths as UTF-8)",
            source=where,
        ) from None
    return path


def expand_inputs(files: Sequence[str], where: str | None = None) -> list[str]:
    """Input paths with glob patterns (``*``, ``?``, ``[``) expanded in sorted order. Paths
    stay as written (relative to the current directory), since they name each board's source."""
    out: list[str] = []
    from pipeline.urls import check_url, is_url

    for f in files:
        if is_url(f):  # read through fsspec (pipeline.boards.ingest.local_input); no globbing
            try:
                out.append(check_url(f, "[boards] files"))
            except ConfigError as exc:
                raise ConfigError(exc.message, source=where) from None
            continue
        path = os.path.expanduser(f)
        if any(ch in path for ch in "*?["):
            matches = sorted(glob.glob(path))
            if not matches:
                raise ConfigError(f"[boards] files: no file matches {f!r}", source=where)
            out.extend(matches)
        else:
            out.append(path)
    return out
