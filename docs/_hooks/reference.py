"""MkDocs hook: fills the generated parts of the reference pages from the code itself.

A page asks for a generated block with an HTML comment on a line of its own, e.g.
``<!-- generated: cli -->``; :data:`GENERATORS` lists the names. The blocks are built from the
Typer app (every command, argument and option with its help text) and from the column
descriptions the schema modules keep next to the schemas they write, so the reference cannot
drift from the code. ``tests/test_docs.py`` imports this module to check that everything is
documented without building the whole site.
"""

from __future__ import annotations

import html
import re
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

# The checkout this file belongs to: the package documented is its ``pipeline``, not another
# copy that happens to be installed (on_config puts it first on sys.path).
REPO = Path(__file__).resolve().parents[2]

MARKER = re.compile(r"^<!--\s*generated:\s*([a-z0-9-]+)\s*-->\s*$", re.MULTILINE)


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
    from pipeline.store import schema

    return _columns_table(schema.COLUMNS)


def reject_columns() -> str:
    from pipeline.store import schema

    return _columns_table(schema.REJECT_COLUMNS)


def prove_columns() -> str:
    from pipeline.prove import CERTIFICATE_COLUMNS

    return _columns_table(CERTIFICATE_COLUMNS)


def prove_board_columns() -> str:
    from pipeline.prove.certificate import BOARDS_FILE_COLUMNS

    return _columns_table(BOARDS_FILE_COLUMNS)


def optimize_columns() -> str:
    from pipeline.optimize.output import RESULT_COLUMNS

    return _columns_table(RESULT_COLUMNS)


def pool_columns() -> str:
    from pipeline.analyze.select import POOL_COLUMNS

    return _columns_table(POOL_COLUMNS)


GENERATORS: dict[str, Callable[[], str]] = {
    "cli": cli_reference,
    "run-columns": run_columns,
    "reject-columns": reject_columns,
    "prove-columns": prove_columns,
    "prove-board-columns": prove_board_columns,
    "optimize-columns": optimize_columns,
    "pool-columns": pool_columns,
}


def expand(markdown: str) -> str:
    """``markdown`` with every generated block filled in (an unknown name is an error)."""

    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in GENERATORS:
            raise ValueError(f"unknown generated block {name!r}; known: {', '.join(GENERATORS)}")
        return GENERATORS[name]()

    return MARKER.sub(fill, markdown)


def on_config(config: Any, **kwargs: Any) -> Any:
    if sys.path[:1] != [str(REPO)]:
        sys.path.insert(0, str(REPO))
    return config


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    return expand(markdown)
