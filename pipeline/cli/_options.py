"""What the commands accept: choice enums and the options several commands share.

The enums mirror library constants so ``boggle --help`` needs no numpy (tests keep them in step).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

from pipeline import settings

if TYPE_CHECKING:
    from pipeline.cli.render import LogStyle


# The choices of the options that take one of a few values: those of the library constant named
# beside each, kept here so --help needs no numpy (tests keep the rule presets, backends,
# strategies, objectives and serve presets in step).
Algorithm = StrEnum("Algorithm", ["trie", "dp", "binary"])  # pipeline.solve._algorithms
RulesName = StrEnum("RulesName", ["boggle", "big", "superbig"])  # pipeline.rules.PRESETS
Backend = StrEnum("Backend", ["loky", "threading", "dask"])  # pipeline.config.BACKENDS
ProveBound = StrEnum("ProveBound", ["tree", "sumax"])  # pipeline.best.prove.tree.PROVERS
Strategy = StrEnum("Strategy", ["anneal", "hill"])  # pipeline.best.optimize._config.STRATEGIES
Objective = StrEnum("Objective", ["points", "words", "subset"])  # pipeline.best.optimize._config.OBJECTIVES
# pipeline.analyze._select.PRESETS: Tanglet's word-count bands
ServePreset = StrEnum(
    "ServePreset",
    [
        ("tanglet_easy", "tanglet-easy"),
        ("tanglet_medium", "tanglet-medium"),
        ("tanglet_hard", "tanglet-hard"),
    ],
)


# dice sets (pipeline/boards/dice_sets.json) and generators; tanglet:<lang> keeps --dice open-ended,
# so it is a string with its choices in the help and in shell completion (a test keeps them in step)
DICE_CHOICES = ("classic", "new", "big1979", "master", "superbig", "big2011", "uniform", "english")
DICE_HELP = "|".join((*DICE_CHOICES, "tanglet:<lang>"))
# --dice also takes a dice file (pipeline.boards.is_dice_file: a path with / or .txt/.json/.toml)
DICE_METAVAR = f"<{DICE_HELP}|FILE>"


def complete_dice(incomplete: str) -> list[str]:
    from pipeline.lexicon import TANGLET_PREFIX, tanglet_languages

    langs = [f"{TANGLET_PREFIX}{x}" for x in tanglet_languages()]
    return [d for d in (*DICE_CHOICES, *langs) if d.startswith(incomplete)]


# ---------------------------------------------------------------- integer options' caps

#: A score, a word count or a points threshold: the runs store them as int32.
MAX_SCORE = 2**31 - 1
#: A word length: the longest word a lexicon may keep (BOGGLE_LEXICON_MAX_WORD's own cap).
MAX_WORD_LENGTH = settings.MAX_LINE_BYTES
#: analyze --threads: more than the cores is capped to them with a note; beyond this, refused.
MAX_THREADS = 100_000


def int_caps() -> dict[str, int]:
    """The cap of every integer option, by the parameter's name in its command's function
    (``command.name`` for one command's own, else the same for every command that has it): a
    value beyond it (either sign) is refused in one line, exit 2, before the command runs and
    so before anything is allocated (:func:`check_int_options`). The library checks the same
    caps for its callers (config files, Python); a test lists every integer option of the CLI
    and fails for one missing here. Imported when a command runs, never for ``--help``, and
    from modules that import no kernel: ``boggle prove`` chooses its kernels after this runs
    (pipeline.jit decides once, at the first kernel module imported)."""
    from pipeline import config as cfg
    from pipeline.solve import MAX_QUEENS

    return {
        # shared by several commands
        "n_jobs": cfg.MAX_JOBS,
        "seed": cfg.MAX_SEED,
        "count": cfg.MAX_COUNT,
        "chunk_size": cfg.MAX_CHUNK_SIZE,
        "min_length": MAX_WORD_LENGTH,
        # one command's own
        "words.max_length": MAX_WORD_LENGTH,
        "queens.n": MAX_QUEENS,
        "analyze.top": cfg.MAX_TOP,
        "analyze.top_words": cfg.MAX_TOP,
        "analyze.threads": MAX_THREADS,
        "query.threads": MAX_THREADS,
        "analyze.bad_words": MAX_SCORE,
        "analyze.bad_score": MAX_SCORE,
        "select.min_common_words": MAX_SCORE,
        "select.limit": cfg.MAX_COUNT,
        "optimize.seed": cfg.MAX_OPTIMIZE_SEED,
        "optimize.restarts": cfg.MAX_RESTARTS,
        "optimize.iterations": cfg.MAX_ITERATIONS,
        "optimize.target": MAX_SCORE,
        "optimize.pool_size": cfg.MAX_POOL,
        "optimize.keep": cfg.MAX_KEEP,
        "optimize.cycle": cfg.MAX_CYCLE,
        "prove.threshold": MAX_SCORE,
        "prove.chunk_size": cfg.MAX_PROVE_CHUNK,
        "prove.limit_classes": cfg.MAX_CLASSES,
        "prove.sample_seed": cfg.MAX_SEED,
        "what_if.count": cfg.MAX_WHATIF_BOARDS,
        "design_dice.max_same": cfg.MAX_SAME,
        "design_dice.min_vowels": cfg.MAX_SAME,
        "design_dice.max_rare": cfg.MAX_SAME,
        "design_dice.batch": cfg.MAX_BATCH,
        "design_dice.max_batches": cfg.MAX_BATCHES,
        "design_dice.validate": cfg.MAX_VALIDATE,
    }


def option_name(name: str) -> str:
    """The command-line spelling of a parameter: ``--top-words`` for ``top_words`` (``N`` for
    the one integer argument, queens' board size)."""
    return "N" if name == "n" else f"--{name.replace('_', '-')}"


def check_int_options(command: str, values: dict[str, Any]) -> None:
    """A ConfigError (exit 2, one line) for an integer option of ``command`` (its function's
    name) beyond its cap (:func:`int_caps`), or with no cap known (a bug: every integer option
    has one)."""
    from pipeline.errors import ConfigError, InternalError

    given = {k: v for k, v in values.items() if isinstance(v, int) and not isinstance(v, bool)}
    if not given:
        return
    caps = int_caps()
    for name, v in given.items():
        cap = caps.get(f"{command}.{name}", caps.get(name))
        if cap is None:
            raise InternalError(f"{command}: the integer option {option_name(name)} has no cap (int_caps)")
        if -cap <= v <= cap:
            continue
        shown = f"{v:,}" if len(str(v)) <= 40 else f"a {len(str(v)) - (v < 0):,}-digit number"
        bound = f"at most {cap:,}" if v > 0 else f"at least {-cap:,}"
        raise ConfigError(f"{option_name(name)}: {bound}, got {shown}")


def value(choice: StrEnum | None) -> str | None:
    return None if choice is None else choice.value


def options_for(ctx: typer.Context, target: Callable[..., Any], **converted: Any) -> dict[str, Any]:
    """The keyword arguments of ``target`` (a library function, or a config dataclass) that the
    command's options give by name (a choice as its plain value), with ``converted`` (what the
    command made of an option, or adds) in their place. A command whose options are named as
    what it calls passes them on this way, so an option added to both needs no line here."""
    names = inspect.signature(target).parameters
    given = {k: v.value if isinstance(v, StrEnum) else v for k, v in ctx.params.items() if k in names}
    return {**given, **converted}


def set_option(section: str | None = None) -> Any:
    """``--set SECTION.KEY=VALUE``: any config value (``section``: any value of that section)."""
    key = section or "section"
    what = f"[{section}]" if section else "config"
    return typer.Option(
        "--set",
        metavar=f"{key.upper()}.KEY=VALUE",
        help=f"Any {what} value as {key}.key=value (TOML value), repeatable.",
    )


def digests_option(flag: str, job: str) -> Any:
    """A published digest per job (``boggle digest``), repeatable: the jobs must be the published
    ones (see :func:`published_digests`)."""
    return typer.Option(
        flag,
        metavar="DIGEST",
        help=f"Each {job}'s published digest (boggle digest), one per {job} in order, repeatable: "
        f"exit 4 unless every {job} is the published one.",
    )


def published_digests(digests: list[str], jobs: list[str], flag: str, job: str) -> list[str]:
    """The digests of :func:`digests_option`, one per job in order: every one parsed before any
    job is read, so a typo or a missing digest is bad input (exit 2), not a different job."""
    from pipeline import store
    from pipeline.cli.render import plural
    from pipeline.errors import ConfigError

    if len(digests) != len(jobs):
        given, wanted = plural(len(digests), "digest"), plural(len(jobs), job)
        raise ConfigError(f"{flag}: {given} for {wanted}; give one per {job}, in order")
    return [store.parse_digest(d, flag) for d in digests]


def dice_option(text: str) -> Any:
    """``--dice`` with its choices in the metavar and in shell completion; a dice file too."""
    help_text = f"{text} FILE: dice of your own (a path with / or .txt/.json/.toml; docs/guides/dice.md)."
    return typer.Option("--dice", metavar=DICE_METAVAR, autocompletion=complete_dice, help=help_text)


DictionaryOpt = Annotated[
    str | None,
    typer.Option(
        "--dictionary",
        "-d",
        help="Word list: enable2k (embedded), tanglet:<lang>, or a file (one word a line, "
        "optionally gzip). Default: $BOGGLE_DICTIONARY, else enable2k.",
    ),
]
RulesOpt = Annotated[
    RulesName | None,
    typer.Option("--rules", "-r", help="Rule preset. Default: big for 5x5, superbig for 6x6, else boggle."),
]
PresetOpt = Annotated[RulesName, typer.Option("--rules", "-r", help="Rule preset (sets the minimum length).")]
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
OverwriteOpt = Annotated[
    bool, typer.Option("--overwrite", help="Replace a different run already in the output directory.")
]


def summary_json_option(
    figures: str, *, where: str = "'-': stdout", after: str = "; on failure too: for schedulers."
) -> Any:
    """``--summary-json``: "Also write the outcome as JSON here (<where>): <figures><after>"."""
    help_text = f"Also write the outcome as JSON here ({where}): {figures}{after}"
    return typer.Option("--summary-json", metavar="PATH|-", help=help_text)


SummaryJsonOpt = Annotated[
    Path | None,
    summary_json_option(
        "status, exit_code, message, the job's figures, run_dir, started_at, finished_at, version"
    ),
]
N_JOBS_HELP = "Worker processes; -1 = all cores."
SCHEDULER_HELP = "Dask scheduler address, e.g. tcp://host:8786"
SCHEDULER_FILE_HELP = "Dask scheduler file, as HPC job scripts write it"


def n_jobs_option(help_text: str = N_JOBS_HELP) -> Any:
    return typer.Option("--n-jobs", "-j", help=help_text)


def backend_option(help_text: str = "Worker pool: loky (processes), threading or dask.") -> Any:
    return typer.Option("--backend", help=help_text)


def quiet_option(help_text: str) -> Any:
    return typer.Option("--quiet", "-q", help=help_text)


def out_option(help_text: str, metavar: str | None = None) -> Any:
    return typer.Option("--out", "-o", metavar=metavar, help=help_text)


def shape_option(help_text: str) -> Any:
    return typer.Option("--shape", help=help_text)


def placement_option(help_text: str, flag: str = "--placement") -> Any:
    """``--placement POLICY`` (where the dice may lie: pipeline.boards.parse_placement)."""
    return typer.Option(flag, metavar="POLICY", help=help_text)


def scheduler_option(help_text: str) -> Any:
    return typer.Option("--scheduler", help=help_text)


def scheduler_file_option(help_text: str) -> Any:
    return typer.Option("--scheduler-file", help=help_text)


# the options several commands share word for word (their defaults are each command's own)
NJobsOpt = Annotated[int | None, n_jobs_option()]
BackendOpt = Annotated[Backend, backend_option()]
BestOnlyOpt = Annotated[bool, quiet_option("Print only the BEST line.")]
Shape64Opt = Annotated[str | None, shape_option("Board shape RxC (at most 64 cells).")]


class PanelGroup(TyperGroup):
    """A group whose ``--help`` lists its commands under headings, one a panel: each command's
    ``rich_help_panel`` (Typer's; the plain help this program prints does not show Typer's own
    panels), in the order the panels first appear; a command without one under "Commands"."""

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        panels: dict[str, list[tuple[str, Any]]] = {}
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                panels.setdefault(getattr(cmd, "rich_help_panel", None) or "Commands", []).append((name, cmd))
        if not panels:
            return
        limit = formatter.width - 6 - max(len(name) for cmds in panels.values() for name, _ in cmds)
        for panel, cmds in panels.items():
            with formatter.section(panel):
                formatter.write_dl([(name, cmd.get_short_help_str(limit)) for name, cmd in cmds])


def command_group(help_text: str) -> typer.Typer:
    """A Typer application (``boggle`` itself, or a group such as ``boggle runs``) set up as
    every one of this program's: ``-h``, help when called bare, plain help text with its
    commands in panels (:class:`PanelGroup`), no Typer traceback pages."""
    return typer.Typer(
        cls=PanelGroup,
        help=help_text,
        no_args_is_help=True,
        context_settings={"help_option_names": ["-h", "--help"]},
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
    )


LogFormat = StrEnum("LogFormat", ["text", "json"])  # pipeline.cli.render.LOG_FORMATS


ProgressIntervalOpt = Annotated[
    float,
    typer.Option(
        "--progress-interval",
        min=0.1,
        metavar="SECONDS",
        envvar=settings.env_name("progress_interval"),
        help="When stderr is not a terminal (a log file, a pipe): seconds between two progress lines.",
    ),
]
LogFormatOpt = Annotated[
    LogFormat,
    typer.Option(
        "--log-format",
        envvar=settings.env_name("log_format"),
        help="Progress on stderr: text (a bar on a terminal, a plain timestamped line every "
        "--progress-interval in a log) or json (one JSON object a line, for log collectors).",
    ),
]


def log_style(interval: float, log_format: LogFormat) -> LogStyle:
    """The :class:`pipeline.cli.render.LogStyle` of ``--progress-interval`` and ``--log-format``."""
    from pipeline.cli.render import LogStyle

    return LogStyle(interval=interval, format=log_format.value)
