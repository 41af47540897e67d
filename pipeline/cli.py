"""The ``boggle`` command line: one small function per command, nothing else.

Each command parses its options, calls one library function, and turns the library's errors
into a one-line message and an exit code (see ``pipeline.errors``). Heavy modules (numpy,
numba, pyarrow) are imported inside the commands so ``boggle --help`` answers at once.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from pipeline.errors import EXIT_BAD_INPUT, EXIT_INTERNAL, BoggleError

app = typer.Typer(
    help="Generate, solve and analyse Boggle boards at scale.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

F = TypeVar("F", bound=Callable[..., Any])


def err(message: str) -> None:
    typer.echo(message, err=True)


def handle_errors(fn: F) -> F:
    """Map domain errors to a one-line message on stderr and their exit code."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except BoggleError as exc:
            err(f"error: {exc.one_line()}")
            raise typer.Exit(exc.exit_code) from None
        except FileNotFoundError as exc:
            err(f"error: {exc.filename}: file not found")
            raise typer.Exit(EXIT_BAD_INPUT) from None
        except (typer.Exit, typer.Abort):
            raise
        except KeyboardInterrupt:
            err("interrupted")
            raise typer.Exit(130) from None
        except OSError as exc:
            err(f"error: {exc}")
            raise typer.Exit(EXIT_INTERNAL) from None

    return wrapper  # type: ignore[return-value]


def announce_kernel_compile() -> None:
    from pipeline.solve import kernel_needs_compile

    if kernel_needs_compile():
        err("note: compiling the solver kernel (first run on this machine, about 10-20 s)...")


# ------------------------------------------------------------------ options

DictionaryOpt = Annotated[
    str | None,
    typer.Option(
        "--dictionary",
        "-d",
        help="Word list: a file (one word a line, optionally gzip) or tanglet:<lang>. "
        "Default: $BOGGLE_DICTIONARY, else tanglet:en.",
    ),
]
RulesOpt = Annotated[
    str | None,
    typer.Option(
        "--rules",
        "-r",
        help="Rule preset: boggle, big or superbig. Default: big for 5x5, superbig for 6x6, else boggle.",
    ),
]
MinLengthOpt = Annotated[
    int | None, typer.Option("--min-length", min=1, help="Override the minimum word length (letters).")
]
RevisitOpt = Annotated[
    bool | None,
    typer.Option("--revisit/--no-revisit", help="Let a word revisit cells (each step still moves)."),
]
ShapeOpt = Annotated[
    str | None, typer.Option("--shape", help="Board shape RxC for non-square compact boards.")
]


def _read_boards(boards: list[str], file: Path | None, shape: str | None) -> list[Any]:
    from pipeline.boards import parse_board_text, parse_compact, parse_shape

    shp = parse_shape(shape) if shape else None
    out = []
    for i, text in enumerate(boards, start=1):
        try:
            out.append(parse_compact(text, shp))
        except BoggleError as exc:
            raise type(exc)(f"board argument {i}: {exc.message}") from None
    if file is not None:
        if str(file) == "-":
            text, source = sys.stdin.read(), "<stdin>"
        else:
            if not file.is_file():
                raise BoggleError(f"board file not found: {file}")
            try:
                text = file.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                raise BoggleError(f"{file}: not UTF-8 text") from None
            source = str(file)
        out.extend(parse_board_text(text, source=source, shape=shp))
    if not out:
        raise BoggleError("no boards given: pass BOARD arguments or --file PATH")
    return out


def _resolve_rules(name: str | None, min_length: int | None, revisit: bool | None, boards: list[Any]) -> Any:
    from pipeline.rules import default_rules_for_shape, get_rules

    if name is None:
        name = default_rules_for_shape(boards[0].rows, boards[0].cols) if boards else "boggle"
    return get_rules(name, min_length=min_length, revisit=revisit)


# ------------------------------------------------------------------ commands


@app.command()
@handle_errors
def solve(
    boards: Annotated[list[str] | None, typer.Argument(help="Compact boards, e.g. perslatgsineters.")] = None,
    file: Annotated[
        Path | None,
        typer.Option(
            "--file", "-f", help="Boards from a file (compact lines, grid text or algs4); - for stdin."
        ),
    ] = None,
    dictionary: DictionaryOpt = None,
    rules: RulesOpt = None,
    min_length: MinLengthOpt = None,
    revisit: RevisitOpt = None,
    shape: ShapeOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per board per line.")] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Report what the lexicon dropped.")
    ] = False,
) -> None:
    """Find every word on each board and score it.

    Example: boggle solve perslatgsineters --dictionary ../shared/data/enable2k.txt
    """
    from pipeline.boards import faces_of, format_compact, format_grid
    from pipeline.lexicon import compile_for_boards, default_dictionary
    from pipeline.solve import solve_boards

    parsed = _read_boards(boards or [], file, shape)
    rule_set = _resolve_rules(rules, min_length, revisit, parsed)
    lexicon = compile_for_boards(dictionary or default_dictionary(), rule_set, faces_of(parsed))
    if verbose:
        err(f"lexicon {lexicon.name}: {lexicon.report.summary()}")
    announce_kernel_compile()
    for res in solve_boards(parsed, lexicon):
        if as_json:
            typer.echo(
                json.dumps(
                    {
                        "board": format_compact(res.board),
                        "rows": res.board.rows,
                        "cols": res.board.cols,
                        "rules": rule_set.name,
                        "score": res.score,
                        "n_words": res.n_words,
                        "longest_word": res.longest,
                        "dead_cells": res.dead_cells,
                        "words": res.words,
                    },
                    ensure_ascii=False,
                )
            )
            continue
        typer.echo(f"Board {format_compact(res.board)} ({res.board.rows}x{res.board.cols})")
        typer.echo(format_grid(res.board))
        typer.echo("")
        for word, pts in zip(res.words, res.points, strict=True):
            typer.echo(f"{word} {pts}")
        typer.echo(f"Found {res.n_words} words")
        typer.echo(f"Total score: {res.score}")
        typer.echo("")


@app.command()
@handle_errors
def lookup(
    words: Annotated[list[str], typer.Argument(help="Words to look up.")],
    dictionary: DictionaryOpt = None,
    rules: Annotated[
        str, typer.Option("--rules", "-r", help="Rule preset (sets the minimum length).")
    ] = "boggle",
    min_length: MinLengthOpt = None,
) -> None:
    """Say whether each WORD is a word, a prefix of a word, or neither in the lexicon.

    Example: boggle lookup quit qu qat --dictionary ../shared/data/enable2k.txt
    """
    from pipeline.lexicon import compile_for_boards, default_dictionary
    from pipeline.rules import get_rules

    rule_set = get_rules(rules, min_length=min_length)
    lexicon = compile_for_boards(dictionary or default_dictionary(), rule_set)
    for w in words:
        typer.echo(f"{w} {lexicon.trie.lookup(w)}")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
