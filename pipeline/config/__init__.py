"""The typed run config: load a TOML file, apply overrides, validate, resolve defaults.

A config has five sections, nested like ``configs/default.toml``::

    [boards]   source ("generate" | "ingest"), dice, count, seed, seed_date, files, shape,
               chunk_size, faces, column, mixed_shapes, words, placement
    [lexicon]  path (a word-list file or tanglet:<lang>)
    [rules]    name (boggle | big | superbig), min_length, scores, revisit
    [run]      out, n_jobs, backend (loky | threading | dask), scheduler, scheduler_file
    [expect]   checks (expectations on the data: ``mean_score >= 120``; :mod:`pipeline.config._expect`)

Unknown sections and keys are errors naming the key (with a suggestion for a typo). Values from
the command line override the file (options and ``--set``). :meth:`RunConfig.resolve` fills in
every default that depends on other values (the shape from the dice set, the rule preset from
the shape, the dictionary from ``$BOGGLE_DICTIONARY``), and :meth:`RunConfig.to_dict` gives the
resolved config that every output records. Relative paths are taken from the current directory
(``[run] out`` is recorded as an absolute path; input and lexicon paths as written).

``seed = "date"`` derives the seed from the schedule's date (``load_config(..., day=...)``,
else today; :mod:`pipeline.config._schedule`), recorded as ``seed`` and ``seed_date``; ``[run] out``
may hold placeholders (``runs/nightly/{date}``), filled in when the config is loaded.

Other commands read their own section through the same machinery (:func:`load_section`):
``boggle optimize`` reads ``[optimize]`` into :class:`pipeline.best.optimize.OptimizeConfig`.

Validation is declarative: each section is a frozen dataclass whose field types say what a key
takes (``Literal`` choices, ``Annotated`` ranges and conversions), read by one small checker
(:func:`check_value`). msgspec and pydantic v2 were tried and not taken: both reject an unknown
key without a "did you mean" hint ("Object contains unknown field `cuont`", "Extra inputs are
not permitted"), word other errors their own way ("Invalid enum value 'magic'" without the
choices, "Input should be a valid integer"), and pydantic's strict mode (needed to refuse
``true`` for an integer) refuses a TOML list for a tuple field. A wrapper rewriting every error
type would be as long as this checker, the domain checks (shapes, score tables, limits written
``1,000,000``) stay custom either way, and either library would be a new dependency.
"""

from __future__ import annotations

from pipeline.boards import DEFAULT_CHUNK_SIZE, MAX_CHUNK_SIZE, MAX_COUNT
from pipeline.config._checks import (
    MAX_BATCH,
    MAX_BATCHES,
    MAX_BUDGET,
    MAX_CLASSES,
    MAX_CYCLE,
    MAX_ITERATIONS,
    MAX_JOBS,
    MAX_KEEP,
    MAX_OPTIMIZE_SEED,
    MAX_POOL,
    MAX_PROVE_CHUNK,
    MAX_RESTARTS,
    MAX_SAME,
    MAX_TOP,
    MAX_VALIDATE,
    MAX_WHATIF_BOARDS,
    Bounds,
    Check,
    Invalid,
    check_count,
    check_jobs,
    check_value,
)
from pipeline.config._expect import WORD_BANDS, Expectation, ExpectConfig, parse_expectation, read_range
from pipeline.config._loading import (
    config_from_dict,
    load_config,
    load_section,
    parse_assignment,
)
from pipeline.config._run import (
    BACKENDS,
    MAX_SEED,
    SOURCES,
    Backend,
    BoardsConfig,
    LexiconConfig,
    RuleName,
    RulesConfig,
    RunConfig,
    RunSettings,
    Source,
)
from pipeline.config._schedule import (
    DATE_SEED,
    date_seed,
    expand_pattern,
    has_placeholders,
    parse_day,
    placeholder_values,
    scheduled_day,
)

__all__ = [
    "BACKENDS",
    "DATE_SEED",
    "DEFAULT_CHUNK_SIZE",
    "MAX_BATCH",
    "MAX_BATCHES",
    "MAX_BUDGET",
    "MAX_CHUNK_SIZE",
    "MAX_CLASSES",
    "MAX_COUNT",
    "MAX_CYCLE",
    "MAX_ITERATIONS",
    "MAX_JOBS",
    "MAX_KEEP",
    "MAX_OPTIMIZE_SEED",
    "MAX_POOL",
    "MAX_PROVE_CHUNK",
    "MAX_RESTARTS",
    "MAX_SAME",
    "MAX_SEED",
    "MAX_TOP",
    "MAX_VALIDATE",
    "MAX_WHATIF_BOARDS",
    "SOURCES",
    "WORD_BANDS",
    "Backend",
    "BoardsConfig",
    "Bounds",
    "Check",
    "ExpectConfig",
    "Expectation",
    "Invalid",
    "LexiconConfig",
    "RuleName",
    "RulesConfig",
    "RunConfig",
    "RunSettings",
    "Source",
    "check_count",
    "check_jobs",
    "check_value",
    "config_from_dict",
    "date_seed",
    "expand_pattern",
    "has_placeholders",
    "load_config",
    "load_section",
    "parse_assignment",
    "parse_day",
    "parse_expectation",
    "placeholder_values",
    "read_range",
    "scheduled_day",
]
