"""Optional parts of the package (pyproject's extras) and the one-line error for a missing one.

The core (``pip install boggle-pipeline``) runs generate, solve, run, prove, optimize and the
Parquet readers; each extra adds one job. A command that needs an extra checks for it before
any work, so a missing package is a one-line error naming what to install (exit 2), never an
``ImportError`` halfway through.
"""

from __future__ import annotations

import importlib.util

from pipeline.errors import BoggleError

#: extra -> the modules it provides that the code imports
EXTRAS: dict[str, tuple[str, ...]] = {
    "analyze": ("duckdb", "matplotlib", "plotly", "itables", "wordfreq", "threadpoolctl"),
    "dask": ("dask", "distributed"),
    "polars": ("polars",),
}


class MissingExtraError(BoggleError):
    """A command needs an optional extra that is not installed (exit 2, bad input: the fix is
    an install, named in the message)."""


def missing(extra: str, modules: tuple[str, ...] | None = None) -> list[str]:
    """The modules of ``extra`` (or just ``modules`` of it) that cannot be imported."""
    return [m for m in modules or EXTRAS[extra] if importlib.util.find_spec(m) is None]


def require(extra: str, what: str, modules: tuple[str, ...] | None = None) -> None:
    """Raise MissingExtraError naming ``extra`` when any of its modules is missing."""
    gone = missing(extra, modules)
    if gone:
        raise MissingExtraError(
            f"{what} needs the [{extra}] extra ({', '.join(gone)} not installed): "
            f"pip install 'boggle-pipeline[{extra}]'"
        )
