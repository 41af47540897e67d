"""Finished runs for analysis: reading their manifests and labelling them by what differs."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.errors import BoggleError
from pipeline.store import MANIFEST, location

if TYPE_CHECKING:
    pass


class RunError(BoggleError):
    """A run directory that is missing, unfinished or not in the pipeline's layout."""


class _Section:
    """A run's manifest table of the attribute's name, read-only: empty where it has none."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, run: RunInfo, owner: type | None = None) -> dict[str, Any]:
        return _as_dict(run.manifest.get(self.name))


@dataclass(frozen=True)
class RunInfo:
    """A finished run: its directory, ``_SUCCESS`` manifest and part files."""

    label: str
    path: Path
    manifest: dict[str, Any] = field(repr=False)
    parts: tuple[Path, ...]

    config = _Section()
    lexicon = _Section()
    rules = _Section()
    counts = _Section()

    @property
    def has_words(self) -> bool:
        """False for a scores-only run (``[boards] words = false``: no ``words`` column)."""
        return _as_dict(self.config.get("boards")).get("words", True) is not False

    def manifest_mtime(self) -> float:
        if not isinstance(self.path, Path):  # an object store: the time it recorded
            from datetime import datetime

            return datetime.fromisoformat(str(self.manifest.get("finished_at"))).timestamp()
        return Path(location(self.path).ref(MANIFEST)).stat().st_mtime


def _as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def load_run(run_dir: str | os.PathLike[str], label: str | None = None, *, fetch: bool = True) -> RunInfo:
    """Open a finished run directory; raise a BoggleError (exit 2) unless ``_SUCCESS`` is there.
    ``fetch=False``: a run in an object store is not downloaded (see
    :func:`pipeline.store.open_run`); its ``parts`` are URLs."""
    from pipeline.store import job_path, open_run

    path: Any = job_path(run_dir, "run")
    if isinstance(path, Path) and path.is_file():  # e.g. a summary a glob such as nightly/* picked up
        raise RunError(f"{path}: not a run directory (a file); give run folders, such as 'nightly/*/'")
    manifest, parts = open_run(path, fetch=fetch)
    if not parts:
        raise RunError(f"{path}: the run has no part files (no boards to analyse)")
    return RunInfo(label or path.resolve().name, path, manifest, tuple(parts))


def load_runs(
    run_dirs: Sequence[str | os.PathLike[str]], labels: Mapping[str, str] | None = None, *, fetch: bool = True
) -> list[RunInfo]:
    """Open several runs, each labelled by what differs between them ("new dice · tanglet:en"),
    else by its directory name (made unique). ``labels`` maps a run (the directory as given,
    its resolved path or its name) to a label of one's own choosing.
    """
    from pipeline.analyze._provenance import describe, differing_labels

    if not run_dirs:
        raise RunError("no run directories given")
    runs = [load_run(d, fetch=fetch) for d in run_dirs]
    given = dict(labels or {})
    unknown = [k for k in given if not any(k in _keys(d, r) for d, r in zip(run_dirs, runs, strict=True))]
    if unknown:
        raise RunError(f"--label {unknown[0]!r}: names none of the runs given")
    described = differing_labels([describe(r.manifest) for r in runs])
    seen: dict[str, int] = {}
    out = []
    for i, (arg, run) in enumerate(zip(run_dirs, runs, strict=True)):
        own = next((v for k, v in given.items() if k in _keys(arg, run)), None)
        label = own or (described[i] if described else run.label)
        if label in seen and own is None and not described:
            parent = run.path.resolve().parent.name
            label = f"{parent}/{label}" if parent else label
        base = label
        while label in seen:
            seen[base] = seen.get(base, 1) + 1
            label = f"{base}-{seen[base]}"
        seen.setdefault(label, 1)
        out.append(RunInfo(label, run.path, run.manifest, run.parts))
    return out


def _keys(arg: str | os.PathLike[str], run: RunInfo) -> set[str]:
    return {str(arg), str(Path(arg)), str(run.path.resolve()), run.path.resolve().name}


def printable(text: str) -> str:
    """``text`` on one line with control characters (from damaged files) replaced by '?'."""
    return "".join(ch if ch.isprintable() else "?" for ch in " ".join(text.split()))
