"""What ``boggle prove`` proves: :class:`ProveConfig` (validated, resolved, its identity) and
the classes it selects of a recipe's canonical ones."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np

from pipeline.best.prove._search import ENUMERATE_MAX
from pipeline.best.prove.tree import PROVERS
from pipeline.boards import format_shape, parse_shape
from pipeline.config import BACKENDS, MAX_CLASSES, MAX_PROVE_CHUNK, check_count, check_jobs
from pipeline.errors import BoggleError, ConfigError
from pipeline.lexicon import is_named
from pipeline.rules import default_rules_for_shape
from pipeline.urls import resolve_out

MAX_CHOSEN = 10_000_000  # prove --class-ids
MAX_CELLS = 64


#: Classes per chunk (one part file, one worker task; a thread gives back its arrays after each).
CHUNK_SIZE = 64


@dataclass(frozen=True)
class ProveConfig:
    """What to prove: every board of ``shape`` scoring >= ``threshold`` with ``dictionary``."""

    dictionary: str
    shape: str = "3x3"
    threshold: int = 1
    classes: str | None = None
    rules: str | None = None
    min_length: int | None = None
    dice: str | None = None
    chunk_size: int = CHUNK_SIZE
    limit_classes: int | None = None  # prove only the first N chunks' worth (a sample); no _SUCCESS
    sample_seed: int | None = None  # with limit_classes: a random sample instead of the first N
    # only these canonical class ids of the recipe (re-checks, shards, benchmarks); no _SUCCESS
    class_ids: tuple[int, ...] | None = None
    enumerate_max: int = ENUMERATE_MAX
    # "tree" (orderly-tree bound, the default) or "sumax" (min of the sum and max bounds): the same
    # boards either way, but root_bound, nodes and boards_scored in the certificate differ
    bound: str = "tree"
    # how to run, not what: never part of the identity
    n_jobs: int | None = None
    backend: str = "loky"
    scheduler: str | None = None  # dask: the scheduler's address (none: a local cluster)
    scheduler_file: str | None = None  # dask: a scheduler file instead of an address
    out: str | None = None
    overwrite: bool = False

    def __post_init__(self) -> None:
        rows, cols = parse_shape(self.shape)
        if self.dice is not None:
            raise ConfigError(
                "prove: dice-constrained classes are not supported (a class bound would have to "
                "assign dice to cells); prove free-letter boards without --dice"
            )
        if rows * cols > MAX_CELLS:
            raise ConfigError(f"prove: shape {self.shape} has {rows * cols} cells; at most {MAX_CELLS}")
        if self.threshold < 1:
            raise ConfigError(f"prove: threshold must be >= 1, got {self.threshold}")
        if self.chunk_size < 1 or self.enumerate_max < 1:
            raise ConfigError("prove: chunk size and enumerate-max must be >= 1")
        if self.limit_classes is not None and self.limit_classes < 1:
            raise ConfigError(f"prove: --limit-classes must be >= 1, got {self.limit_classes}")
        check_count("chunk_size", self.chunk_size, 1, MAX_PROVE_CHUNK, "prove")
        check_count("limit_classes", self.limit_classes, 1, MAX_CLASSES, "prove")
        if self.class_ids is not None:
            # a list from a recorded config (JSON) becomes the tuple a frozen config holds
            object.__setattr__(self, "class_ids", tuple(sorted({int(i) for i in self.class_ids})))
            assert self.class_ids is not None
            if not self.class_ids or self.class_ids[0] < 0 or len(self.class_ids) > MAX_CHOSEN:
                raise ConfigError(f"prove: --class-ids takes 1 to {MAX_CHOSEN:,} class ids >= 0")
            if self.limit_classes is not None:
                raise ConfigError("prove: --class-ids and --limit-classes each choose the classes; give one")
        check_jobs(self.n_jobs, "prove")
        if self.bound not in PROVERS:
            raise ConfigError(f"prove: unknown bound {self.bound!r}; choose one of {', '.join(PROVERS)}")
        if self.backend not in BACKENDS:
            raise ConfigError(f"prove: unknown backend {self.backend!r}; choose one of {', '.join(BACKENDS)}")

    def resolve(self) -> ProveConfig:
        rows, cols = parse_shape(self.shape)
        dictionary = self.dictionary
        if not is_named(dictionary):
            dictionary = str(Path(dictionary).expanduser().absolute())
        return dataclasses.replace(
            self,
            shape=format_shape(rows, cols),
            rules=self.rules or default_rules_for_shape(rows, cols),
            dictionary=dictionary,
            out=resolve_out(self.out, "--out", None) if self.out else None,
        )

    def identity(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        for k in ("n_jobs", "backend", "scheduler", "scheduler_file", "out", "overwrite"):
            d.pop(k)
        if d["class_ids"] is None:  # absent, as in every proof made before the option existed
            d.pop("class_ids")
        else:
            d["class_ids"] = list(d["class_ids"])
        return d


def selected_classes(ids: np.ndarray, cfg: ProveConfig) -> np.ndarray:
    """The classes ``cfg`` proves of the canonical ``ids``: all, its sample (--limit-classes), or
    the chosen ones (--class-ids; each must be one of ``ids``)."""
    if cfg.class_ids is not None:
        chosen = np.array(cfg.class_ids, dtype=ids.dtype)
        at = np.minimum(np.searchsorted(ids, chosen), max(len(ids) - 1, 0))  # ids are sorted
        unknown = chosen[ids[at] != chosen] if len(ids) else chosen
        if len(unknown):
            raise ConfigError(
                f"prove: class id {int(unknown[0])} is not a canonical class of this recipe "
                f"({len(unknown):,} of the {len(chosen):,} given are not; it has {len(ids):,}, "
                f"the largest id {int(ids[-1])})"
            )
        return chosen
    if cfg.limit_classes is None or cfg.limit_classes >= len(ids):
        return ids
    if cfg.sample_seed is None:
        return ids[: cfg.limit_classes]
    rng = np.random.default_rng(cfg.sample_seed)
    return np.sort(rng.choice(ids, cfg.limit_classes, replace=False))


def parse_class_ids(text: str | None) -> tuple[int, ...] | None:
    """``--class-ids``: ids separated by commas or whitespace, or ``@FILE`` holding them (one a
    line; ``#`` comments); a bad id is one line naming it (exit 2). The file is read as a
    stream, refused (exit 2) unless it is a regular file (a FIFO would block, ``/dev/zero``
    never ends), past MAX_IDS_FILE_BYTES, at a line longer than MAX_LINE_BYTES or past
    MAX_CHOSEN ids, so memory stays bounded; an id beyond MAX_CLASS_ID is no class id."""
    if text is None:
        return None
    ids: list[int] = []
    if text.startswith("@"):
        _read_class_ids_file(text[1:], ids)
        source = text[1:]
    else:
        source = "--class-ids"
        for n, line in enumerate(text.splitlines(), 1):
            _class_ids_of_line(line, source, n, ids)
    if not ids:
        raise BoggleError("no class ids given", source=source)
    return tuple(ids)


#: The largest class id (they are int64) and the largest ``--class-ids @FILE`` read: MAX_CHOSEN
#: ids of 20 characters a line fit.
MAX_CLASS_ID = 2**63 - 1
MAX_IDS_FILE_BYTES = 256 << 20


def _read_class_ids_file(path: str, ids: list[int]) -> None:
    import io

    from pipeline.io import MAX_LINE_BYTES, open_regular

    try:
        with open_regular(path, "class ids") as (raw, st):
            if st.st_size > MAX_IDS_FILE_BYTES:
                raise BoggleError(
                    f"{st.st_size:,} bytes, more than the {MAX_IDS_FILE_BYTES:,} a class-ids file may hold",
                    source=path,
                )
            fh = io.BufferedReader(cast("io.RawIOBase", raw), 1 << 20)
            n = 0
            while line := fh.readline(MAX_LINE_BYTES + 1):
                n += 1
                if len(line) > MAX_LINE_BYTES:
                    raise BoggleError(
                        f"line longer than {MAX_LINE_BYTES:,} bytes; refused", source=path, line=n
                    )
                try:
                    decoded = line.decode("utf-8")
                except UnicodeDecodeError:
                    raise BoggleError("not UTF-8 text", source=path, line=n) from None
                _class_ids_of_line(decoded, path, n, ids)
    except OSError as exc:
        raise BoggleError(f"cannot read the class ids: {exc.strerror or exc}", source=path) from None


def _class_ids_of_line(line: str, source: str, n: int, ids: list[int]) -> None:
    """Append the ids of one line to ``ids`` (a BoggleError naming a bad one, or the id past
    MAX_CHOSEN)."""
    for token in line.split("#", 1)[0].replace(",", " ").split():
        if not (token.isascii() and token.isdigit()):
            raise BoggleError(f"not a class id (a whole number >= 0): {token[:40]!r}", source=source, line=n)
        if len(token) > len(str(MAX_CLASS_ID)) or int(token) > MAX_CLASS_ID:
            shown = token if len(token) <= 40 else f"a {len(token):,}-digit number"
            raise BoggleError(
                f"class id {shown} is beyond the largest class id ({MAX_CLASS_ID:,})", source=source, line=n
            )
        if len(ids) >= MAX_CHOSEN:
            raise BoggleError(
                f"more than {MAX_CHOSEN:,} class ids; give at most that many", source=source, line=n
            )
        ids.append(int(token))
