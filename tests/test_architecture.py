"""The package's shape: what the import contract in pyproject.toml cannot see.

``make lint`` runs import-linter (layers, no cycles, numba only in pipeline.solve); it works on
modules, so the rule on names lives here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import REPO

SOURCES = sorted([*(REPO / "pipeline").rglob("*.py"), *(REPO / "tests").rglob("*.py")])


def private_imports(path: Path, root: Path = REPO) -> list[str]:
    """``from pipeline.x import _name`` lines: one module reaching into another's internals."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "pipeline":
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"{path.relative_to(root)}:{node.lineno}: {node.module}.{alias.name}")
    return found


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(REPO)))
def test_no_module_imports_another_modules_underscore_names(path: Path) -> None:
    assert private_imports(path) == []


def test_the_check_sees_a_private_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from pipeline.solve.kernel import ONE, _grow\nfrom os import _exit\nfrom x import __all__\n"
    )
    assert private_imports(bad, tmp_path) == ["bad.py:1: pipeline.solve.kernel._grow"]
