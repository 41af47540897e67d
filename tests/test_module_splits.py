"""The packages folded from families of sibling modules (``lexicon_*``, ``trie_*``, ``dice*``,
``ingest*``, ``design*``, ``render*``...): each package's ``__init__`` exports a deliberate list
(``__all__``) of names its private modules define, callers import what they use from that list,
and every private module says what it is for and stays small.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util

import pytest

from tests.conftest import REPO

FACADES = {
    "pipeline.lexicon.trie": [
        "pipeline.lexicon.trie._alphabet",
        "pipeline.lexicon.trie._nodes",
        "pipeline.lexicon.trie._build",
        "pipeline.lexicon.trie._passes",
    ],
    "pipeline.lexicon": [
        "pipeline.lexicon._named",
        "pipeline.lexicon._limits",
        "pipeline.lexicon._read",
        "pipeline.lexicon._parse",
        "pipeline.lexicon._compile",
    ],
    "pipeline.boards": [
        "pipeline.boards._board",
        "pipeline.boards._geometry",
        "pipeline.boards._dice",
        "pipeline.boards._dice_files",
        "pipeline.boards._roll",
        "pipeline.boards._generate",
    ],
    "pipeline.boards.ingest": [
        "pipeline.boards.ingest._files",
        "pipeline.boards.ingest._records",
        "pipeline.boards.ingest._chunks",
    ],
    "pipeline.design": [
        "pipeline.design._config",
        "pipeline.design._eval",
        "pipeline.design._report",
        "pipeline.design._search",
        "pipeline.design._whatif",
    ],
    "pipeline.cli.render": [
        "pipeline.cli.render._log",
        "pipeline.cli.render._solve",
        "pipeline.cli.render._batch",
        "pipeline.cli.render._search",
        "pipeline.cli.render._catalog",
    ],
    "pipeline.store.dataset": [
        "pipeline.store.dataset._read",
        "pipeline.store.dataset._catalog",
        "pipeline.store.dataset._query",
    ],
    "pipeline.parallel": [
        "pipeline.parallel._backends",
        "pipeline.parallel.lifeline",
        "pipeline.parallel._memory",
    ],
}
MODULES = [name for facade, parts in FACADES.items() for name in (facade, *parts)]
MAX_LINES = 500


@pytest.mark.parametrize("facade", FACADES)
def test_a_facade_exports_its_list_and_each_name_is_the_defining_modules_object(facade: str) -> None:
    module = importlib.import_module(facade)
    assert sorted(set(module.__all__)) == sorted(module.__all__)  # no name listed twice
    parts = [importlib.import_module(p) for p in FACADES[facade]]
    for name in module.__all__:
        value = getattr(module, name)
        # a re-exported name is the very object its own module defines (not a copy)
        owners = [p for p in parts if name in vars(p)]
        if owners and not isinstance(value, (int, float, str, tuple)):
            assert all(vars(p)[name] is value for p in owners), f"{facade}.{name}"


def _is_submodule(package: str, name: str) -> bool:
    return (
        importlib.util.find_spec(f"{package}.{name}") is not None
        if hasattr(importlib.import_module(package), "__path__")
        else False
    )


def test_names_imported_from_the_old_paths_are_exported() -> None:
    """Every ``from pipeline.<package> import name`` in the package and the tests names a listed
    export (or a subpackage), so a later move cannot silently drop one."""
    missing = []
    for path in [*(REPO / "pipeline").rglob("*.py"), *(REPO / "tests").rglob("*.py")]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module in FACADES:
                exported = importlib.import_module(node.module).__all__
                missing += [
                    f"{path.name}: {node.module}.{a.name}"
                    for a in node.names
                    if a.name not in exported and not _is_submodule(node.module, a.name)
                ]
    assert missing == []


@pytest.mark.parametrize("name", MODULES)
def test_a_split_module_says_what_it_is_for_and_stays_small(name: str) -> None:
    path = REPO / (name.replace(".", "/") + ".py")
    if not path.exists():  # a package: its face
        path = REPO / name.replace(".", "/") / "__init__.py"
    text = path.read_text(encoding="utf-8")
    doc = ast.get_docstring(ast.parse(text))
    assert doc and len(doc.split("\n\n")[0].split()) >= 8  # a sentence, not a label
    assert len(text.splitlines()) <= MAX_LINES
