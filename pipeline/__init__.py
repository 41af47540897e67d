"""Boggle board-quality pipeline: generate or ingest boards, solve them exactly, analyse.

Reading finished runs (see :mod:`pipeline.store.dataset`)::

    from pipeline import read_run, read_run_pandas, run_relation, scan_run_polars
"""

import typing as _typing
from importlib import import_module as _import_module

__version__ = "0.1.0"

# Imported on first use, so `import pipeline` (and `boggle --help`) loads no pyarrow or pandas.
_LAZY = {name: "store.dataset" for name in ("read_run", "read_run_pandas", "run_relation", "scan_run_polars")}
__all__ = ["__version__", "read_run", "read_run_pandas", "run_relation", "scan_run_polars"]

if _typing.TYPE_CHECKING:
    from pipeline.store.dataset import read_run, read_run_pandas, run_relation, scan_run_polars


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pipeline' has no attribute {name!r}")
    value = getattr(_import_module(f"pipeline.{module}"), name)
    globals()[name] = value
    return value
