"""How a command ends: one error line and an exit code, one BrokenPipe handling, notes on stderr,
and the ``--summary-json`` record for schedulers."""

from __future__ import annotations

import _thread
import functools
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click
import typer

from pipeline import settings
from pipeline.errors import (
    EXIT_BAD_INPUT,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_IO,
    EXIT_TERMINATED,
    SIGNALS_TAKEN,
    BoggleError,
    Terminated,
    quote,
)
from pipeline.io import now_iso

F = TypeVar("F", bound=Callable[..., Any])


def printable(text: str) -> str:
    """``text`` as any terminal, log or JSON file takes it: the bytes of a file name that are not
    UTF-8 (kept by Python as surrogates) become ``\\xNN`` instead of a UnicodeEncodeError."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape" if _escapable(text) else "backslashreplace").decode(
            "utf-8", "backslashreplace"
        )


def _escapable(text: str) -> bool:
    # surrogateescape only takes U+DC80..U+DCFF (one undecodable byte each), not other surrogates
    return not any("\ud800" <= ch <= "\udfff" and not "\udc80" <= ch <= "\udcff" for ch in text)


def err(message: str) -> None:
    """One line on stderr: printable, and with any credential in it redacted."""
    from pipeline.urls import redact

    typer.echo(printable(redact(message)), err=True)


def say(message: str) -> None:
    """One line of a command's report on stdout, with any credential in it redacted (a run's
    folder, a proof's URL)."""
    from pipeline.urls import redact

    typer.echo(redact(message))


def note(message: str) -> None:
    err(f"note: {message}")


# the signals this process's handlers took (SIGTERM, SIGINT), the first decides the exit code
# (the library's list: a job stops at its next commit even if the exception was swallowed);
# whether the command's error line for it was already printed
_signals: list[int] = SIGNALS_TAKEN
_signal_reported: list[bool] = []
_redelivered: list[int] = []  # a signal lost in a finalizer and delivered again
REDELIVER_S = 0.02


def install_signal_handlers() -> None:
    """SIGTERM (what schedulers, systemd and ``kill`` send) unwinds like Ctrl-C: joblib aborts and
    kills its workers, and the command exits 143 saying the run can be resumed. Both signals are
    recorded, so whatever they break on the way out (a numba compile cut short, an exception
    Python could only print, the command-line parser) still ends the command with 130/143."""
    previous = sys.unraisablehook

    def unraisable(info: Any) -> None:
        # a signal raised inside a finalizer or callback Python cannot propagate: no traceback,
        # and the signal is delivered to the main thread again (once: the only signal so far
        # was this one, so nothing is unwinding from it), else the command would go on as if
        # never signalled (a run ran to its end and exited 0 after a SIGTERM so lost)
        if not (isinstance(info.exc_value, KeyboardInterrupt) and _signals):
            previous(info)
        elif len(_signals) == 1 and not _redelivered and not _signal_reported:
            _redelivered.append(_signals[0])
            # from another thread, a moment later: delivered now, the handler would raise in
            # this hook (dropped again); by then the main thread is back in the command's code
            timer = threading.Timer(REDELIVER_S, _thread.interrupt_main, (_signals[0],))
            timer.daemon = True
            timer.start()

    sys.unraisablehook = unraisable
    # SIGTERM last: once it is caught, both are (what a supervisor may wait for, in /proc)
    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGTERM, _on_signal)


def _on_signal(signum: int, frame: Any) -> None:
    _signals.append(signum)
    raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


def _signal_exception() -> BaseException | None:
    if not _signals:
        return None
    return Terminated() if _signals[0] == signal.SIGTERM else KeyboardInterrupt()


def end_main(exc: BaseException, command: str) -> int | None:
    """The exit code ``boggle`` ends with after ``exc`` ended the command-line application
    (``None``: ``exc`` stands). A signal taken before a command's own error handling (while the
    commands are built or the command line is parsed) ends with its code and line too."""
    signalled = _signal_exception()
    if signalled is not None:
        _forget_interrupted_eval()
    code = exc.code if isinstance(exc, SystemExit) else None
    if signalled is None or code == 0 or (_signal_reported and isinstance(exc, SystemExit)):
        return None
    code, line = error_outcome(signalled, command)
    err(line)
    return code


def _forget_interrupted_eval() -> None:
    """CPython marks a KeyboardInterrupt that escaped an ``eval`` of a string as unhandled (typer
    and ``typing.get_type_hints`` evaluate annotations so), and at exit then ends the process by
    SIGINT whatever exit code was chosen; the next ``eval`` of a string that succeeds clears it."""
    eval("None")  # a constant: resets the interpreter's flag


def error_outcome(exc: BaseException, command: str = "", place: str | None = None) -> tuple[int, str]:
    """The exit code and the one line on stderr (empty: nothing to say) for an exception that
    ends a command; the one mapping behind :func:`handle_errors` and ``run --summary-json``.
    ``place`` (the command's output path) is named in an I/O error that names no file. Once a
    signal was taken, whatever ends the command is its fallout: the signal's outcome."""
    signalled = _signal_exception()
    if signalled is not None and not isinstance(exc, typer.Exit):
        exc = signalled
    from pipeline.urls import redact

    code, line = _outcome(exc, command, place)
    return code, printable(redact(line))


def _outcome(exc: BaseException, command: str, place: str | None) -> tuple[int, str]:
    resume = "; re-run the same command to resume" if command in ("run", "prove") else ""
    cause = exc
    while isinstance(cause, SystemError) and cause.__cause__ is not None:
        cause = cause.__cause__
    if isinstance(cause, KeyboardInterrupt):
        # Ctrl-C or SIGTERM handled while compiled (numba) functions returned: the interpreter
        # reports "returned a result with an exception set" (once per nested call), caused by
        # the signal
        exc = cause
    if isinstance(exc, typer.Exit):
        return exc.exit_code, ""
    if isinstance(exc, BoggleError):
        return exc.exit_code, f"error: {exc.one_line()}"
    if isinstance(exc, Terminated):
        return EXIT_TERMINATED, f"terminated (SIGTERM): workers stopped{resume}"
    if isinstance(exc, KeyboardInterrupt):
        return EXIT_INTERRUPTED, f"interrupted: workers stopped{resume}"
    if isinstance(exc, FileNotFoundError):
        return EXIT_BAD_INPUT, f"error: {exc.filename}: file not found"
    if isinstance(exc, OSError):
        # disk full, read-only file system, a file where a directory is expected, no
        # permission: nothing the data did; parts already committed stay valid. pyarrow's and
        # os.fsync's errors name no file: then the line names what the command writes
        where = f"{exc.filename}: " if exc.filename else f"{place}: " if place else ""
        what = exc.strerror or (str(exc).splitlines() or [type(exc).__name__])[0]
        what = what if len(what) <= 200 else what[:200] + "..."
        again = "; fix it and re-run the same command to resume" if resume else "; fix it and re-run"
        return EXIT_IO, f"error: I/O failure: {where}{what}{again}"
    return EXIT_INTERNAL, (
        f"error: internal error (please report it with the command and this line): "
        f"{type(exc).__name__}: {quote(str(exc), 200)}"
    )


def silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush of what the reader never took
    cannot fail again on the way out."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):  # no file descriptor (a captured stdout): replace the object
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115


def handle_errors(fn: F) -> F:
    """Map domain errors to a one-line message on stderr and their exit code."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from pipeline.lexicon import set_compile_listener

        set_compile_listener(note)
        try:
            settings.get()  # a bad variable is refused (one line, exit 2) before any work starts
            # every integer option within its cap, before the command allocates anything
            from pipeline.cli._options import check_int_options

            check_int_options(fn.__name__, kwargs)
            result = fn(*args, **kwargs)
            signalled = _signal_exception()
            if signalled is not None:
                # a signal whose exception was lost on the way (and lost again when delivered
                # anew) still decides how the command ends
                raise signalled
            return result
        except (typer.Exit, typer.Abort, click.exceptions.ClickException):
            raise
        except BrokenPipeError:
            # the reader went away (`boggle words | head`): stop quietly, as Unix tools do
            silence_stdout()
            raise typer.Exit(0) from None
        except (BoggleError, KeyboardInterrupt, Exception) as exc:
            # anything else is a bug: one line and exit 1 (never a traceback and exit 2);
            # BOGGLE_TRACEBACK=1 shows the traceback for the report
            if not isinstance(exc, BoggleError | OSError) and settings.get().traceback:
                raise
            out = kwargs.get("out")
            code, line = error_outcome(exc, fn.__name__, str(out) if out is not None else None)
            err(line)
            if _signals:
                _signal_reported.append(True)
            raise typer.Exit(code) from None

    return wrapper  # type: ignore[return-value]


def announce_kernel_compile(module: str = "_drive") -> None:
    from pipeline.solve import kernel_needs_compile

    if kernel_needs_compile(module=module):
        err("note: compiling the solver kernel (first run on this machine, about 10-20 s)...")


# every record starts with what ran and how it ended, and ends with when it ran and which
# release ran it; the command's own figures lie between
OUTCOME_FIELDS = ("command", "status", "exit_code", "message")
WHEN_FIELDS = ("started_at", "finished_at", "elapsed_s", "version")


def summary_fields(*figures: str) -> tuple[str, ...]:
    """The keys of a command's ``--summary-json`` record, in order, around its ``figures``."""
    return (*OUTCOME_FIELDS, *figures, *WHEN_FIELDS)


# chunks_total is null while not known (a refused config, an ingest run stopped before the end
# of its input); chunks_done counts every committed chunk, reused ones included
SUMMARY_FIELDS = summary_fields(
    "config",
    "run_id",
    "boards",
    "rejected",
    "input_rows",
    "chunks",
    "chunks_total",
    "chunks_done",
    "chunks_reused",
    "boards_solved",
    "run_dir",
    # each expectation measured: check, met (null: not checked), value, low, high, boards,
    # limits, nights, line
    "expectations",
)
# prove and optimize write the same record with their own figures (same lifecycle, same outcome)
PROVE_SUMMARY_FIELDS = summary_fields(
    "classes_total", "classes_done", "boards", "best_board", "best_score", "run_dir"
)
OPTIMIZE_SUMMARY_FIELDS = summary_fields("boards", "best_board", "best_score", "run_dir")
ANALYZE_SUMMARY_FIELDS = summary_fields("runs", "boards", "report", "out_dir", "files")
SELECT_SUMMARY_FIELDS = summary_fields("runs", "boards", "selected", "out", "filters")
STDOUT = "-"  # --summary-json -: the record goes to stdout (and the command's own lines to stderr)


def summary_to_stdout(path: Path | str | None) -> bool:
    return path is not None and str(path) == STDOUT


def report_to(summary_json: Path | str | None, default: Callable[[str], None] = say) -> Callable[[str], None]:
    """Where a command's report lines go: ``default`` (stdout), or stderr when
    ``--summary-json -`` keeps stdout for the record alone."""
    return err if summary_to_stdout(summary_json) else default


def package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("boggle-pipeline")
    except PackageNotFoundError:  # pragma: no cover - a source tree that was never installed
        return "unknown"


@contextmanager
def run_summary_json(
    path: Path | None, out: str | None, command: str = "run", fields: tuple[str, ...] = SUMMARY_FIELDS
) -> Iterator[dict[str, Any]]:
    """The scheduler's view of ``boggle run`` (also ``prove`` and ``optimize``, with their
    ``fields``) as ``--summary-json``: the block fills in the job's figures; on leaving it,
    whatever ended the job sets the exit code, message and status, and the record is written
    atomically (failing to write it is reported but changes no exit code)."""
    t0 = time.monotonic()
    outcome: dict[str, Any] = {
        "command": command,
        "run_dir": shown_output(out),
        "started_at": now_iso(),
        "version": package_version(),
    }
    try:
        yield outcome
        code, message = 0, ""
    except BaseException as exc:
        code, message = error_outcome(exc, command)
        if not isinstance(exc, typer.Exit):
            outcome["status"] = {130: "interrupted", 143: "terminated"}.get(code, "failed")
        raise
    finally:
        if path is not None:
            outcome.update(
                exit_code=code,
                # a command that ends by its own exit code may have said why (a broken expectation)
                message=message or outcome.get("message") or "",
                elapsed_s=round(time.monotonic() - t0, 3),
                finished_at=now_iso(),
            )
            _write_summary(path, outcome, fields)


def shown_output(out: str | os.PathLike[str] | None) -> str | None:
    """An output as records show it: a URL as given (redacted), a local path made absolute."""
    from pipeline.urls import is_url, redact

    if not out:
        return None
    text = os.fspath(out)
    return redact(text) if is_url(text) else redact(str(Path(text).absolute()))


def _printable_value(value: Any) -> Any:
    """``value`` with every string in it :func:`printable` and redacted (analyze's records hold
    lists of runs and files)."""
    from pipeline.urls import redact

    if isinstance(value, str):
        return printable(redact(value))
    if isinstance(value, list | tuple):
        return [_printable_value(v) for v in value]
    if isinstance(value, dict):
        return {k: _printable_value(v) for k, v in value.items()}
    return value


def _write_summary(path: Path, outcome: dict[str, Any], fields: tuple[str, ...]) -> None:
    import json

    from pipeline.io import write_json_atomic

    record = {k: _printable_value(outcome.get(k)) for k in fields}
    if summary_to_stdout(path):
        try:
            typer.echo(json.dumps(record, ensure_ascii=False, default=str))
        except BrokenPipeError:
            silence_stdout()
        return
    # only into a folder that exists: a refused run must leave no directory behind, and
    # --summary-json RUN/s.json would otherwise make RUN
    if not path.parent.is_dir():
        err(f"warning: --summary-json {path}: its folder does not exist; not written")
        return
    try:
        write_json_atomic(path, record)
    except BoggleError as exc:  # not a regular file (/dev/null, a FIFO): never replaced
        err(f"warning: --summary-json {path}: {exc.message}; not written")
    except OSError as exc:
        err(f"warning: cannot write --summary-json {path}: {exc.strerror or exc}")
