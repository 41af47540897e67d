"""The ``boggle`` command line: one small function per command, nothing else.

Each command parses its options, calls one library function, and turns the library's errors
into a one-line message and an exit code (see ``pipeline.errors``). Heavy modules (numpy,
numba, pyarrow) are imported inside the commands so ``boggle --help`` answers at once.

* :mod:`~pipeline.cli._options`: choice enums and the options several commands share;
* :mod:`~pipeline.cli._outcome`: errors to exit codes, BrokenPipe, ``--summary-json``;
* :mod:`~pipeline.cli._solving`: solve, lookup, words, check, queens, generate;
* :mod:`~pipeline.cli._batch`: run, optimize;
* :mod:`~pipeline.cli._analyzing`: analyze, select;
* :mod:`~pipeline.cli._proving`: prove;
* :mod:`~pipeline.cli._integrity`: digest;
* :mod:`~pipeline.cli._designing`: dice show, what-if, design-dice;
* :mod:`~pipeline.cli._catalog`: runs ls, show, verify, query (the catalog of job directories).

What a command shows (text, JSON lines, progress) is made by :mod:`pipeline.cli.render`.

Exported: :func:`main`, the ``boggle`` entry point, and ``app``, the Typer application (e.g.
``typer.testing.CliRunner().invoke(app, ["solve", ...])``).
"""

from __future__ import annotations

from typing import Annotated, Any

import typer
from typer.core import TyperCommand

import pipeline.cli._analyzing as analyzing
import pipeline.cli._batch as batch
import pipeline.cli._catalog as catalog
import pipeline.cli._designing as designing
import pipeline.cli._integrity as integrity
import pipeline.cli._proving as proving
import pipeline.cli._solving as solving
from pipeline.cli._options import command_group

__all__ = ["app", "main"]

app = command_group("Generate, solve and analyse Boggle boards at scale.")


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"boggle-pipeline {version('boggle-pipeline')}")
        raise typer.Exit()


@app.callback()
def _main_options(
    version: Annotated[
        bool | None,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit."),
    ] = None,
) -> None:
    """Generate, solve and analyse Boggle boards at scale."""


# what `--help` shows for a value of each type (Typer's own labels are Python's: <list[str]>)
HUMAN_TYPES = {
    "<int>": "INTEGER",
    "<float>": "NUMBER",
    "<str>": "TEXT",
    "<path>": "PATH",
    "<list[str]>": "TEXT",
    "<list[path]>": "PATH",
    "<int range>": "INTEGER",
    "<float range>": "NUMBER",
}


def _human_type(param: Any) -> None:
    """Give ``param`` a help label people read: its metavar, else a word for its type; an
    argument shows its name (or metavar) alone."""
    typer_label = getattr(param, "display_type_rich", None)
    if typer_label is None or getattr(param, "_human_label", False):
        return

    def label(ctx: Any) -> str | None:
        if param.param_type_name == "argument":
            return None
        if param.metavar is not None:
            return param.metavar
        text = str(typer_label(ctx=ctx))
        for python, human in HUMAN_TYPES.items():
            text = text.replace(python, human)
        return text

    param.display_type_rich = label
    param._human_label = True


class HumanHelpCommand(TyperCommand):
    """A command whose ``--help`` names value types in words (``INTEGER``, ``PATH``), from the
    moment it is built (so every reader of its help records, the docs' reference too, sees them)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            _human_type(param)

    def get_params(self, ctx: Any) -> list[Any]:
        params = super().get_params(ctx)
        for param in params:
            _human_type(param)
        return params


# `boggle --help` lists the commands in these panels, in this order
BATCH = "Batch jobs"
BOARDS = "Boards and words"
DESIGN = "The designer's tools"
SEARCH = "Proofs and searches"
CATALOG = "The catalog"
PUZZLES = "Classic puzzles"


def _add(command: Any, panel: str, name: str | None = None) -> None:
    app.command(name, cls=HumanHelpCommand, rich_help_panel=panel)(command)


batch_jobs: tuple[Any, ...] = (batch.run, analyzing.analyze, analyzing.select)
for command in batch_jobs:
    _add(command, BATCH)
for command in (solving.solve, solving.lookup, solving.words, solving.generate):
    _add(command, BOARDS)
designing.dice_app.command("show", cls=HumanHelpCommand)(designing.show)
app.add_typer(designing.dice_app, name="dice", rich_help_panel=DESIGN)
_add(designing.what_if, DESIGN, "what-if")
_add(designing.design_dice, DESIGN, "design-dice")
_add(proving.prove, SEARCH)
_add(batch.optimize, SEARCH)

runs_app = command_group(
    "The catalog of runs, proofs and optimize searches: ls, show, verify, query.\n\n"
    "Example: boggle runs ls runs"
)
for runs_command in (catalog.ls, catalog.show, catalog.verify, catalog.query):
    runs_app.command(cls=HumanHelpCommand)(runs_command)
app.add_typer(runs_app, name="runs", rich_help_panel=CATALOG)
_add(integrity.digest, CATALOG)
_add(solving.check, PUZZLES)
_add(solving.queens, PUZZLES)


def main() -> None:
    import shlex
    import sys

    from pipeline.io import record_command

    # what `boggle runs show` reports as the command that made a job (as typed, argv[0] aside)
    record_command(shlex.join(["boggle", *sys.argv[1:]]))

    from pipeline.cli._outcome import end_main, install_signal_handlers

    command = next((arg for arg in sys.argv[1:] if not arg.startswith("-")), "")
    try:
        # first, so a signal while the commands are built or parsed ends like one in a command
        install_signal_handlers()
        try:
            code = app(standalone_mode=False)
        except Exception as exc:
            if not _is_usage_error(exc):
                raise
            code = _usage_error(exc)
        raise SystemExit(code or 0)
    except (SystemExit, KeyboardInterrupt, Exception) as exc:
        # Exception too: a signal inside a class body of a module being imported (the parser
        # imports pydantic as it reads the command line) reaches here as the RuntimeError
        # Python wraps it in; end_main gives the signal's outcome, and anything else stands
        code = end_main(exc, command)
        if code is None:
            raise
        raise SystemExit(code) from None


def _is_usage_error(exc: BaseException) -> bool:
    """A command line the parser refused (an unknown option, a value of the wrong type), from
    whichever click Typer brings: it has a message, an exit code and the command's context."""
    return all(hasattr(exc, a) for a in ("format_message", "exit_code", "ctx", "show"))


def _usage_error(exc: Any) -> int:
    """One line on stderr for a refused command line (exit 2), as every other refusal is,
    instead of the parser's usage block; help asked for by no arguments is shown as it is."""
    from pipeline.cli._outcome import err, printable

    if type(exc).__name__ == "NoArgsIsHelpError" or exc.exit_code != 2:
        exc.show()
        return int(exc.exit_code)
    ctx = exc.ctx
    where = f" (see {ctx.command_path} -h)" if ctx is not None else ""
    message = " ".join(printable(exc.format_message()).split())
    err(f"error: {message}{where}")
    return 2
