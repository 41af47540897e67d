"""Domain errors. Each carries a one-line message; the CLI maps them to exit codes.

Exit codes (documented in the README):
  0  success
  1  unexpected internal error
  2  bad input: a board, a lexicon, a config or a command-line value
  3  finished, but some input rows were rejected (see the rejects file)
  4  the output directory is busy or holds a different run
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_BAD_INPUT = 2
EXIT_REJECTED_ROWS = 3
EXIT_OUTPUT_CONFLICT = 4


class BoggleError(Exception):
    """Base class for errors the user can fix; the message is one line."""

    exit_code = EXIT_BAD_INPUT

    def __init__(self, message: str, *, source: str | None = None, line: int | None = None):
        self.message = message
        self.source = source
        self.line = line
        super().__init__(self.one_line())

    def one_line(self) -> str:
        where = ""
        if self.source is not None:
            where = f"{self.source}:{self.line}: " if self.line is not None else f"{self.source}: "
        return (where + self.message).replace("\n", " ")


class BoardError(BoggleError):
    """A board that cannot be parsed or does not fit its shape or alphabet."""


class LexiconError(BoggleError):
    """A word list that is missing, empty, binary or otherwise unusable."""


class RulesError(BoggleError):
    """An unknown rule preset or an invalid rule field."""


class ConfigError(BoggleError):
    """An invalid run configuration."""


class OutputConflictError(BoggleError):
    """The output directory is locked by another run or holds a different run."""

    exit_code = EXIT_OUTPUT_CONFLICT
