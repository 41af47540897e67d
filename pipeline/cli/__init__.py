"""The ``boggle`` command line: one small function per command, nothing else.

Each command parses its options, calls one library function, and turns the library's errors
into a one-line message and an exit code (see ``pipeline.errors``). Heavy modules (numpy,
numba, pyarrow) are imported inside the commands so ``boggle --help`` answers at once.

* :mod:`~pipeline.cli.options`: choice enums and the options several commands share;
* :mod:`~pipeline.cli.outcome`: errors to exit codes, BrokenPipe, ``--summary-json``;
* :mod:`~pipeline.cli.solving`: solve, lookup, words, check, queens, generate;
* :mod:`~pipeline.cli.batch`: run, analyze, optimize;
* :mod:`~pipeline.cli.proving`: prove.

What a command shows (text, JSON lines, progress) is made by :mod:`pipeline.render`.

Exported: :func:`main`, the ``boggle`` entry point, and ``app``, the Typer application (e.g.
``typer.testing.CliRunner().invoke(app, ["solve", ...])``).
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from pipeline.cli import batch, proving, solving
from pipeline.errors import Terminated

__all__ = ["app", "main"]

app = typer.Typer(
    help="Generate, solve and analyse Boggle boards at scale.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


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


# the order of `boggle --help`
for command in (
    solving.solve, solving.lookup, solving.words, batch.analyze, solving.check, solving.queens,
    batch.run, solving.generate, batch.optimize, proving.prove,
):  # fmt: skip
    app.command()(command)


def _terminate(signum: int, frame: Any) -> None:
    raise Terminated()


def main() -> None:
    import signal

    # SIGTERM (what schedulers, systemd and `kill` send) unwinds like Ctrl-C: joblib aborts and
    # kills its workers, and the command exits 143 saying the run can be resumed
    signal.signal(signal.SIGTERM, _terminate)
    app()
