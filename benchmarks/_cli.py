"""What the benches' command lines share: their Typer app and the options several of them take,
declared once (each bench keeps its own default). Nothing here times or computes anything, so a
bench's figures still depend on its own code alone."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def bench_app() -> typer.Typer:
    """A bench's command line: no shell completion, and a plain traceback on a failure (the
    benches are a developer's tools)."""
    return typer.Typer(add_completion=False, pretty_exceptions_enable=False)


DictionaryOpt = Annotated[
    str, typer.Option("-d", "--dictionary", help="Word list: enable2k, a file or tanglet:<lang>.")
]
ShapeOpt = Annotated[str, typer.Option(help="Board shape RxC.")]
ThresholdOpt = Annotated[int, typer.Option(help="Score threshold T: the boards sought score at least this.")]
ClassesOpt = Annotated[
    str | None,
    typer.Option(
        help="Bucket spec, as boggle prove --classes (default: boggle prove's for the word list and shape)."
    ),
]
AnchorDirOpt = Annotated[
    Path | None, typer.Option(help="The C++ anchor's build (default $ANCHOR_DIR, else /tmp/anchor).")
]
RepeatOpt = Annotated[int, typer.Option(help="Timed repetitions; the best is reported.")]
