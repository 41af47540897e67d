"""Domain errors. Each carries a one-line message; the CLI maps them to exit codes.

Exit codes (documented in docs/reference/exit-codes.md):
  0  success
  1  an internal error (a bug in this program: please report it with the command and its output)
  2  bad input: a board, a lexicon, a config or a command-line value
  3  finished, but some input rows were rejected (see the rejects file)
  4  the output directory is busy or holds a different run, or a damaged finished run
  5  an I/O failure (disk full, read-only file system, a file where a directory is expected,
     no permission) or a worker process that died; committed work is kept and a re-run resumes
  6  finished, and the data is written, but it breaks an expectation (``[expect]``, ``--expect``)
  130 interrupted (Ctrl-C), 143 terminated (SIGTERM): workers stopped, a re-run resumes

A re-run of a finished run returns what the first run returned: 0, or 3 when it had rejects
(6 when it breaks an expectation asked for now).
"""

from __future__ import annotations

import re
import signal

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_BAD_INPUT = 2
EXIT_REJECTED_ROWS = 3
EXIT_OUTPUT_CONFLICT = 4
EXIT_IO = 5
EXIT_EXPECTATION = 6  # the run is written and certified, but its data breaks an expectation
EXIT_INTERRUPTED = 130  # 128 + SIGINT, what shells report for Ctrl-C
EXIT_TERMINATED = 143  # 128 + SIGTERM

QUOTE_LIMIT = 80  # characters of a bad line quoted in a message


def quote(text: str, limit: int = QUOTE_LIMIT) -> str:
    """``repr(text)``, cut to about ``limit`` characters with the full length named, so a
    10 MB bad line never reaches a terminal or a log whole.

    >>> quote("x" * 1000, 10)
    "'xxxxxxxxxx'... (1,000 characters)"
    """
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text):,} characters)"


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


class DamagedRunError(BoggleError):
    """A finished job's files differ from what its manifest recorded (a damaged, truncated,
    missing, extra or foreign part, or a tampered manifest): refused rather than read."""

    exit_code = EXIT_OUTPUT_CONFLICT


class RunIOError(BoggleError):
    """Reading or writing the run failed for a reason outside the data: disk full, read-only
    file system, a file where a directory is expected, no permission. A re-run resumes."""

    exit_code = EXIT_IO


class WorkerLostError(BoggleError):
    """A worker process died (killed, out of memory) while the run was going."""

    exit_code = EXIT_IO

    @classmethod
    def from_pool(cls, exc: BaseException, source: str | None) -> WorkerLostError:
        """The error for a broken process pool (a worker killed by the OOM killer or kill -9),
        naming the workers' exit codes when the pool reports them."""
        codes = re.search(r"exit codes of the workers are \{([^}\n]{1,60})\}", str(exc))
        why = f" (exit {codes.group(1)})" if codes else ""
        if "SIGKILL" in why:
            why += ", killed by the system, most often for lack of memory"
        return cls(
            f"a worker process died{why}; committed parts are kept: re-run the same command to resume",
            source=source,
        )


class InternalError(BoggleError):
    """A check of the program's own work failed (a bug, not the user's input): exit 1, with a
    request to report it."""

    exit_code = EXIT_INTERNAL

    def one_line(self) -> str:
        return f"internal error (please report it): {super().one_line()}"


# the signals the command line's handlers took (SIGTERM, SIGINT; the first decides the outcome),
# kept here so that a job stops at its next commit even when the signal's exception was swallowed
# on its way up: pyarrow drops one raised while it imports pandas lazily (its first to_numpy),
# and a -j 1 run then solved on to its end and sealed itself after a SIGTERM
SIGNALS_TAKEN: list[int] = []


def stop_if_signalled() -> None:
    """Raise the first taken signal's exception again (a no-op when none was taken): called
    before a job commits a part or writes its manifest, so nothing is sealed after a signal."""
    if SIGNALS_TAKEN:
        raise Terminated() if SIGNALS_TAKEN[0] == signal.SIGTERM else KeyboardInterrupt()


class Terminated(KeyboardInterrupt):
    """Raised in the main process by the SIGTERM handler the CLI installs, so a terminated run
    unwinds exactly like Ctrl-C: joblib aborts and kills its workers, temp files are removed."""
