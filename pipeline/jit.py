"""The compiled kernels' decorators: numba's just-in-time compiler, or the same kernels compiled
ahead of time into an extension module (``make aot``: :mod:`pipeline.aot`).

A kernel module writes ``from pipeline.jit import njit`` where it would write ``from numba
import njit``. Which compiler serves a process is decided once, when its first kernel module
is imported:

* ``jit`` (the default): :func:`njit` is numba's. numba's runtime and LLVM cost a process
  about 110 MB before any data (docs/performance.md, "Memory per core"), and importing it and
  loading its cached kernels about 0.8 CPU-s.
* ``aot``: asked for by ``BOGGLE_KERNELS=aot`` (``boggle prove`` and ``boggle analyze`` ask,
  see :func:`prefer_ahead_of_time`) and granted only when the built module matches the kernel
  modules' sources byte for byte (:func:`fingerprint`). :func:`njit` then returns the built
  module's function for each kernel the build exported, and numba is not imported. The
  exported functions release the GIL like the ``nogil`` kernels do, so threads share one
  process. A kernel called from Python with argument types no export takes, or one the build
  did not export, is compiled by numba's JIT at that call (:class:`NotExported`): correct,
  at the JIT's cost; one that calls other kernels cannot be, and raises
  :class:`~pipeline.errors.InternalError`.

The module must not import numba itself: that is the memory the ``aot`` mode saves.

The built module itself is fingerprinted too: the record holds its size and SHA-256, checked
before it is loaded (:func:`module_state`), so a truncated or replaced module falls back to the
JIT, saying why, instead of crashing the process as it is mapped (SIGBUS).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline import settings
from pipeline.errors import InternalError

if TYPE_CHECKING:  # what __getattr__ gives the kernels, for the type checker (numba is untyped)
    from numba import types as types
    from numba.typed import Dict as Dict

ENV = "BOGGLE_KERNELS"
#: The built module (an extension module beside this file) and its record (exports, fingerprint).
AOT_MODULE = "_kernels_aot"
AOT_RECORD = Path(__file__).with_name("_kernels_aot.json")
PACKAGE_ROOT = Path(__file__).parent

_mode: str | None = None
_why: str = ""
_exports: dict[str, list[str]] = {}
_built: Any = None


def kernel_sources() -> list[Path]:
    """Every module of the package that defines kernels (it imports this module's decorators;
    not this module, which compiles nothing), and the build's own (``aot.py``: its runs decide
    which kernels are exported, so a new run makes the build stale)."""
    found = []
    for path in sorted(PACKAGE_ROOT.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if path == PACKAGE_ROOT / "aot.py" or ("from pipeline.jit import" in text and path.name != "jit.py"):
            found.append(path)
    return found


def fingerprint(paths: list[Path]) -> dict[str, str]:
    """Each kernel module's path (relative to the package) and the SHA-256 of its bytes."""
    return {
        str(p.relative_to(PACKAGE_ROOT)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(paths)
    }


def built_state() -> tuple[bool, str]:
    """(whether the ahead-of-time module is built and matches the sources, why not)."""
    if not AOT_RECORD.is_file():
        return False, "not built (make aot)"
    try:
        record = json.loads(AOT_RECORD.read_text(encoding="utf-8"))
        recorded = record["sources"]
    except (OSError, ValueError, KeyError, TypeError):
        return False, f"{AOT_RECORD.name} unreadable (make aot)"
    if fingerprint(kernel_sources()) != recorded:
        return False, "built from other kernel sources (make aot)"
    built = module_file()
    if built is None:
        return False, "its extension module is missing (make aot)"
    return module_state(built, record.get("module"))


def module_file() -> Path | None:
    """The built extension module beside this file (None: none)."""
    import importlib.machinery

    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = PACKAGE_ROOT / f"{AOT_MODULE}{suffix}"
        if path.is_file():
            return path
    return None


def module_fingerprint(path: Path) -> dict[str, Any]:
    """What the build records of the module it wrote: its name, size and SHA-256."""
    with open(path, "rb") as fh:
        digest = hashlib.file_digest(fh, "sha256").hexdigest()
    return {"file": path.name, "bytes": path.stat().st_size, "sha256": digest}


def module_state(path: Path, recorded: Any) -> tuple[bool, str]:
    """(whether ``path`` is the module the build recorded, why not), read before it is loaded."""
    if not isinstance(recorded, dict):
        return False, "its record has no fingerprint of the module (an older build; make aot)"
    try:
        got = module_fingerprint(path)
    except OSError as exc:
        return False, f"{path.name} unreadable ({exc.strerror or exc}; make aot)"
    if got != recorded:
        return False, (
            f"{path.name} is not the module the build recorded ({got['bytes']:,} bytes, "
            f"{recorded.get('bytes')} recorded: truncated or replaced; make aot)"
        )
    return True, ""


def prefer_ahead_of_time() -> None:
    """Ask for the ``aot`` mode in this process and its child processes, unless the
    environment already says which (``BOGGLE_KERNELS``): a command whose kernels the build
    covers (``boggle prove``) calls this before importing any kernel module."""
    settings.export(ENV, "aot", replace=False)


def mode() -> str:
    """``jit`` or ``aot``, decided at the first call in a process (see the module's docstring)."""
    global _mode, _why, _exports, _built
    if _mode is None:
        if settings.get().kernels == "aot":
            ok, _why = built_state()
            if ok:
                try:  # e.g. numpy upgraded since the build: the module may no longer load
                    _built = _load(module_file())
                    _exports = json.loads(AOT_RECORD.read_text(encoding="utf-8"))["exports"]
                except (ImportError, OSError, ValueError, KeyError, TypeError) as exc:
                    _built, _why = None, f"its extension module does not load ({exc}; make aot)"
        _mode = "aot" if _built is not None else "jit"
    return _mode


def _load(path: Path | None) -> Any:
    """The extension module at ``path``, the very file :func:`built_state` checked."""
    name = f"pipeline.{AOT_MODULE}"
    spec = importlib.util.spec_from_file_location(name, path) if path is not None else None
    if spec is None or spec.loader is None:
        raise ImportError(f"no extension module at {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[name] = module  # as an import would leave it
    return module


def why_not_ahead_of_time() -> str:
    """Why a process that asked for ``aot`` runs ``jit`` ("" when it did not ask, or got it)."""
    return _why


class NotExported:
    """A kernel the ahead-of-time build did not export: compiled by numba's JIT at its first
    call from Python (numba is imported then, in this process only), as a kernel the build
    never saw called; a kernel that calls other kernels cannot be (they are the built module's
    here), which raises :class:`~pipeline.errors.InternalError`."""

    def __init__(self, func: Callable[..., Any], options: dict[str, Any] | None = None) -> None:
        self.py_func = func
        self.key = f"{func.__module__}.{func.__qualname__}"
        self._options = dict(options or {})
        self._jitted: Any = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        import numba
        from numba.core.errors import TypingError

        if self._jitted is None:
            self._jitted = numba.njit(**self._options)(self.py_func)
        try:
            return self._jitted(*args, **kwargs)
        except TypingError:  # it calls kernels of the built module, which numba cannot type
            raise InternalError(
                f"{self.key} was not compiled ahead of time; re-run with {ENV}=jit, or add a run "
                "that calls it to pipeline/aot.py and run make aot"
            ) from None


def _exported(func: Callable[..., Any], options: dict[str, Any]) -> Callable[..., Any]:
    key = f"{func.__module__}.{func.__qualname__}"
    symbols = _exports.get(key)
    if not symbols:
        return NotExported(func, options)
    variants = [getattr(_built, s) for s in symbols]
    fallback = NotExported(func, options)

    def call(*args: Any) -> Any:
        for variant in variants:
            try:
                return variant(*args)
            except TypeError:  # its argument types are another export's
                continue
        return fallback(*args)  # types no export takes: numba's JIT compiles them

    call.__name__ = func.__name__
    return call


def njit(*args: Any, **options: Any) -> Any:
    """numba's ``njit`` (the ``jit`` mode), or the built module's export of the kernel."""
    if mode() == "jit":
        import numba

        return numba.njit(*args, **options)
    if args and callable(args[0]):
        return _exported(args[0], options)
    return lambda func: _exported(func, options)


def intrinsic(func: Callable[..., Any]) -> Any:
    """numba's ``intrinsic``; in the ``aot`` mode the function itself (only kernels use it)."""
    if mode() == "jit":
        from numba.extending import intrinsic as numba_intrinsic

        return numba_intrinsic(func)
    return func


def __getattr__(name: str) -> Any:
    """``types`` and ``Dict``, numba's, for the kernels that name them (placeholders in ``aot``)."""
    if name not in ("types", "Dict"):
        raise AttributeError(name)
    if mode() == "aot":
        return None
    if name == "types":
        from numba import types

        return types
    from numba.typed import Dict

    return Dict
