"""MkDocs hook: fills the generated parts of the reference pages from the code itself.

A page asks for a generated block with an HTML comment on a line of its own, e.g.
``<!-- generated: cli -->``; :data:`GENERATORS` lists the names. The blocks are built from the
Typer app (every command, argument and option with its help text), from the column
descriptions the schema modules keep next to the schemas they write, from the fields of
:class:`pipeline.settings.Settings` (every environment variable), and (for the design page)
from the import contracts in ``pyproject.toml`` and each module's docstring, so the reference
cannot drift from the code. ``tests/test_docs.py`` imports this module to check that everything
is documented without building the whole site.

A block can also be kept in the page's source, between ``<!-- generated: NAME -->`` and
``<!-- end generated: NAME -->``, so the page reads whole where Markdown is read raw: the site
build replaces it with a fresh copy, and ``python docs/_hooks/reference.py FILE...`` rewrites
the copy in the file (``--check``: exit 1, naming the file, when a copy is out of date; a test
does the same).
"""

from __future__ import annotations

import ast
import html
import re
import sys
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

# The checkout this file belongs to: the package documented is its ``pipeline``, not another
# copy that happens to be installed (on_config puts it first on sys.path).
REPO = Path(__file__).resolve().parents[2]

MARKER = re.compile(r"^<!--\s*generated:\s*([a-z0-9-]+)\s*-->\s*$", re.MULTILINE)
# A generated block kept in the page's source: the marker, the last copy, the end marker.
BLOCK = re.compile(
    r"^<!--\s*generated:\s*([a-z0-9-]+)\s*-->[ \t]*\n(.*?)^<!--\s*end generated:\s*\1\s*-->[ \t]*$",
    re.MULTILINE | re.DOTALL,
)


def _cell(text: str) -> str:
    """Text for a Markdown table cell: HTML-escaped, pipes and emphasis characters escaped."""
    text = html.escape(" ".join(text.split()), quote=False)
    return text.replace("|", "\\|").replace("*", "\\*").replace("_", "\\_")


def root_command() -> Any:
    """The `boggle` command as Click sees it (`typer.main.get_command`)."""
    import typer.main

    from pipeline.cli import app

    return typer.main.get_command(app)


def cli_commands() -> dict[str, Any]:
    """The ``boggle`` commands by name, in ``boggle --help`` order."""
    import typer

    root = root_command()
    ctx = typer.Context(root, info_name="boggle")
    out: dict[str, Any] = {}
    for name in root.list_commands(ctx):
        cmd = root.get_command(ctx, name)
        sub = getattr(cmd, "list_commands", None)
        if sub is None:
            out[name] = cmd
            continue
        # a group (`boggle runs`): its commands, each as `runs ls`
        group_ctx = typer.Context(cmd, info_name=name, parent=ctx)
        for sub_name in sub(group_ctx):
            out[f"{name} {sub_name}"] = cmd.get_command(group_ctx, sub_name)
    return out


def cli_reference() -> str:
    """Markdown for every command: what it does, its usage line, and a table of its arguments
    and options (as ``boggle COMMAND --help`` shows them, defaults included)."""
    import typer

    root = root_command()
    root_ctx = typer.Context(root, info_name="boggle")
    out: list[str] = []
    for name, cmd in cli_commands().items():
        ctx = typer.Context(cmd, info_name=name, parent=root_ctx)
        paragraphs = [p.strip() for p in (cmd.help or "").split("\n\n") if p.strip()]
        out.append(f"## `boggle {name}`\n")
        for p in paragraphs:
            if p.startswith("Example"):
                lines = [ln.strip() for ln in p.splitlines()]
                lines[0] = lines[0].split(":", 1)[1].strip()
                out.append("Example:\n\n```\n" + "\n".join(x for x in lines if x) + "\n```\n")
            else:
                out.append(" ".join(p.split()) + "\n")
        usage = " ".join(cmd.collect_usage_pieces(ctx))
        out.append(f"Usage: `boggle {name} {usage}`\n")
        out.append("| argument / option | help |\n|---|---|")
        for param in cmd.params:
            record = param.get_help_record(ctx)
            if record is None:  # hidden
                continue
            names, text = record
            out.append(f"| `{names}` | {_cell(text)} |")  # a pipe inside a code span is no separator
        out.append("")
    return "\n".join(out)


def _columns_table(columns: Mapping[str, str]) -> str:
    rows = ["| column | type | meaning |", "|---|---|---|"]
    for name, doc in columns.items():
        kind, _, meaning = doc.partition(": ")
        rows.append(f"| `{name}` | `{kind}` | {_cell(meaning)} |")
    return "\n".join(rows) + "\n"


def run_columns() -> str:
    from pipeline.store import COLUMNS

    return _columns_table(COLUMNS)


def reject_columns() -> str:
    from pipeline.store import REJECT_COLUMNS

    return _columns_table(REJECT_COLUMNS)


def prove_columns() -> str:
    from pipeline.best.prove import CERTIFICATE_COLUMNS

    return _columns_table(CERTIFICATE_COLUMNS)


def prove_board_columns() -> str:
    from pipeline.best.prove import BOARDS_FILE_COLUMNS

    return _columns_table(BOARDS_FILE_COLUMNS)


def optimize_columns() -> str:
    from pipeline.best.optimize import RESULT_COLUMNS

    return _columns_table(RESULT_COLUMNS)


def pool_columns() -> str:
    from pipeline.analyze import POOL_COLUMNS

    return _columns_table(POOL_COLUMNS)


# ---------------------------------------------------------------- the design page


def import_contracts_config() -> dict[str, Any]:
    """``[tool.importlinter]`` of the checkout's ``pyproject.toml``."""
    with open(REPO / "pyproject.toml", "rb") as fh:
        return dict(tomllib.load(fh)["tool"]["importlinter"])


def package_layers() -> list[list[str]]:
    """The layers of the package's ``layers`` contract (``containers = ["pipeline"]``), top
    first, each as the names it holds (``"runner | prove"`` gives ``["runner", "prove"]``)."""
    for contract in import_contracts_config()["contracts"]:
        if contract["type"] == "layers" and contract.get("containers") == ["pipeline"]:
            return [[n.strip() for n in re.split(r"[|:]", layer)] for layer in contract["layers"]]
    raise ValueError("pyproject.toml has no layers contract over pipeline")


def package_modules() -> list[str]:
    """Every module of the package as a path below ``pipeline/``: ``render.py``, a package as
    its folder (``analyze/``, its ``__init__.py``), ``analyze/_faces.py``; sorted."""
    root = REPO / "pipeline"
    out = []
    for path in root.rglob("*.py"):
        if "__pycache__" in path.parts:
            continue
        rel = path.relative_to(root)
        out.append(f"{rel.parent.as_posix()}/" if rel.name == "__init__.py" else rel.as_posix())
    return sorted(m for m in out if m != "./")


def _module_path(module: str) -> Path:
    root = REPO / "pipeline"
    return root / module / "__init__.py" if module.endswith("/") else root / module


_ROLE = re.compile(r":(?:func|class|mod|meth|data|attr|exc|obj):`(~?)([^`]+)`")
_SENTENCE_END = re.compile(r"(?<=\.)\s+(?=[A-Z(`*\"])")


def _markdown_text(text: str) -> str:
    """reST inline markup as Markdown for a table cell: Sphinx roles and double-backtick
    literals as code spans; between them ``|``, ``*`` and ``_`` escaped and ``<`` as
    ``&lt;`` (no tag)."""
    # :func:`~a.b` shows as ``b``, :mod:`a.b` as ``a.b``
    text = _ROLE.sub(lambda m: f"``{m.group(2).split('.')[-1] if m.group(1) else m.group(2)}``", text)
    parts = re.split(r"``(.+?)``", text)
    out = []
    for i, part in enumerate(parts):
        if i % 2:
            out.append(f"`{part}`")
        else:
            for char, escaped in (("<", "&lt;"), ("|", "\\|"), ("*", "\\*"), ("_", "\\_")):
                part = part.replace(char, escaped)
            out.append(part)
    return "".join(out)


def first_sentence(path: Path) -> str:
    """The first sentence of a module's docstring (its first paragraph up to the first full
    stop followed by a new sentence; a question mark does not end it), as Markdown; ``""``
    when it has none."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    doc = ast.get_docstring(tree) or ""
    paragraph = " ".join(doc.strip().split("\n\n")[0].split())
    return _markdown_text(_SENTENCE_END.split(paragraph, maxsplit=1)[0])


def module_summary(module: str) -> str:
    """:func:`first_sentence` of a module of the package, given as :func:`package_modules` names it."""
    return first_sentence(_module_path(module))


def layer_of(module: str, layers: list[list[str]]) -> int | None:
    """The number (1 = top) of the layer that holds ``module``'s top-level name, or None."""
    top = module.split("/")[0].removesuffix(".py")
    return next((i for i, names in enumerate(layers, 1) if top in names), None)


def module_map() -> str:
    """A table of every module of the package, top layer first (a layer's names in the
    contract's order, a package's modules after it, alphabetically): its layer's number and the
    first sentence of its docstring. A module in no layer is listed last, its layer ``-``."""
    layers = package_layers()
    order = {name: (i, j) for i, names in enumerate(layers) for j, name in enumerate(names)}

    def key(module: str) -> tuple[int, int, str]:
        top = module.split("/")[0].removesuffix(".py")
        i, j = order.get(top, (len(layers), 0))
        return (i, j, module)

    rows = ["| layer | module | what it holds |", "|---|---|---|"]
    for module in sorted(package_modules(), key=key):
        layer = layer_of(module, layers)
        rows.append(f"| {layer if layer is not None else '-'} | `{module}` | {module_summary(module)} |")
    return "\n".join(rows) + "\n"


def benchmark_map() -> str:
    """A table of the benchmarks (``benchmarks/``, beside the package, outside what it installs):
    each module and the first sentence of its docstring."""
    rows = ["| module | what it measures |", "|---|---|"]
    for path in sorted((REPO / "benchmarks").glob("*.py")):
        name = "benchmarks/" if path.name == "__init__.py" else f"benchmarks/{path.name}"
        rows.append(f"| `{name}` | {first_sentence(path)} |")
    return "\n".join(rows) + "\n"


def _names(items: list[str]) -> str:
    return ", ".join(f"`{x}`" for x in items)


def import_contracts() -> str:
    """The import contracts of ``pyproject.toml``, as a list: the package's layers numbered
    (top first, the numbers of the module map), then every other contract by its name."""
    config = import_contracts_config()
    out = []
    for contract in config["contracts"]:
        kind, name = contract["type"], contract["name"]
        if kind == "layers" and contract.get("containers") == ["pipeline"]:
            out.append("**Layers**, top to bottom:\n")
            out += [f"{i}. `{layer}`" for i, layer in enumerate(contract["layers"], 1)]
            out.append("")
        elif kind == "layers":
            chain = " > ".join(f"`{layer}`" for layer in contract["layers"])
            out.append(f"* **{name}**: inside {_names(contract['containers'])}, {chain}.")
        elif kind == "independence":
            out.append(f"* **{name}**: {_names(contract['modules'])} import none of each other.")
        elif kind == "protected":
            out.append(
                f"* **{name}**: only {_names(contract['allowed_importers'])} import "
                f"{_names(contract['protected_modules'])}."
            )
        elif kind == "acyclic_siblings":
            out.append(f"* **{name}**: below {_names(contract['ancestors'])}.")
        else:
            out.append(f"* **{name}** ({kind}).")
    return "\n".join(out) + "\n"


def environment() -> str:
    """The table of every environment variable, from the fields of
    :class:`pipeline.settings.Settings` (name, what it does, default)."""
    from pipeline import settings

    rows = ["| variable | what it does | default |", "|---|---|---|"]
    for f in settings.FIELDS:
        # the description is Markdown already (code spans, links): only pipes are escaped
        doc = " ".join(f.metadata["doc"].split()).replace("|", "\\|")
        rows.append(f"| `{f.metadata['env']}` | {doc} | {settings.shown_default(f)} |")
    return "\n".join(rows) + "\n"


GENERATORS: dict[str, Callable[[], str]] = {
    "environment": environment,
    "cli": cli_reference,
    "run-columns": run_columns,
    "reject-columns": reject_columns,
    "prove-columns": prove_columns,
    "prove-board-columns": prove_board_columns,
    "optimize-columns": optimize_columns,
    "pool-columns": pool_columns,
    "import-contracts": import_contracts,
    "module-map": module_map,
    "benchmark-map": benchmark_map,
}


def _generate(name: str) -> str:
    if name not in GENERATORS:
        raise ValueError(f"unknown generated block {name!r}; known: {', '.join(GENERATORS)}")
    return GENERATORS[name]()


def expand(markdown: str) -> str:
    """``markdown`` with every generated block filled in (an unknown name is an error); a block
    kept in the source is replaced, markers and all, by a fresh copy."""
    markdown = BLOCK.sub(lambda m: _generate(m.group(1)), markdown)
    return MARKER.sub(lambda m: _generate(m.group(1)), markdown)


def refresh(markdown: str) -> str:
    """``markdown`` with every block kept in its source (between the two markers) regenerated."""

    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        body = _generate(name).rstrip("\n")
        return f"<!-- generated: {name} -->\n{body}\n<!-- end generated: {name} -->"

    return BLOCK.sub(fill, markdown)


def main(argv: list[str]) -> int:
    """``python docs/_hooks/reference.py [--check] FILE...``: rewrite the generated blocks kept in
    each file; with ``--check``, rewrite nothing and exit 1 when one is out of date."""
    if str(REPO) not in sys.path[:1]:
        sys.path.insert(0, str(REPO))
    from pipeline.io import write_text_atomic

    check = "--check" in argv
    stale = []
    for name in [a for a in argv if a != "--check"]:
        path = Path(name)
        text = path.read_text(encoding="utf-8")
        fresh = refresh(text)
        if fresh == text:
            continue
        stale.append(name)
        if not check:
            write_text_atomic(path, fresh)
    for name in stale:
        sys.stderr.write(f"{name}: {'out of date' if check else 'regenerated'}\n")
    return 1 if check and stale else 0


def on_config(config: Any, **kwargs: Any) -> Any:
    if sys.path[:1] != [str(REPO)]:
        sys.path.insert(0, str(REPO))
    return config


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    return expand(markdown)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
