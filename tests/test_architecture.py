"""The package's shape: what the import contract in pyproject.toml cannot see.

``make lint`` runs import-linter (layers, no cycles, numba only in pipeline.jit and pipeline.aot); it works on
modules, so the rule on names lives here.
"""

from __future__ import annotations

import ast
import importlib
import json
import re
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import REPO

SOURCES = sorted(
    [
        *(REPO / "pipeline").rglob("*.py"),
        *(REPO / "benchmarks").glob("*.py"),
        *(REPO / "tests").rglob("*.py"),
        *(REPO / "notebooks").glob("*.ipynb"),
    ]
)


def python_source(path: Path) -> str:
    """A module's text, or a notebook's code cells joined."""
    if path.suffix != ".ipynb":
        return path.read_text(encoding="utf-8")
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")


def private_imports(path: Path, root: Path = REPO) -> list[str]:
    """``from pipeline.x import _name`` lines: one module reaching into another's internals."""
    tree = ast.parse(python_source(path), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "pipeline":
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"{path.relative_to(root)}:{node.lineno}: {node.module}.{alias.name}")
    return found


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(REPO)))
def test_no_module_imports_another_modules_underscore_names(path: Path) -> None:
    assert private_imports(path) == []


def test_the_check_sees_a_private_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from pipeline.solve.kernels._walk import ONE, _grow\nfrom os import _exit\nfrom x import __all__\n"
    )
    assert private_imports(bad, tmp_path) == ["bad.py:1: pipeline.solve.kernels._walk._grow"]


def private_module_imports(path: Path, root: Path = REPO) -> list[str]:
    """Imports of a private module (``pipeline.store._parts``) from outside the package that
    owns it: a caller imports from the package (its ``__init__``), never past it."""
    where = ".".join(path.relative_to(root).with_suffix("").parts)
    found = []
    for node in ast.walk(ast.parse(python_source(path), filename=str(path))):
        if isinstance(node, ast.ImportFrom):
            modules = [node.module or ""]
        elif isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        else:
            continue
        for module in modules:
            parts = module.split(".")
            private = next((i for i, part in enumerate(parts) if part.startswith("_")), None)
            if parts[0] != "pipeline" or private is None:
                continue
            owner = ".".join(parts[:private])
            if not (where == owner or where.startswith(owner + ".")):
                found.append(f"{path.relative_to(root)}:{node.lineno}: {module}")
    return found


#: The ahead-of-time build may reach past a surface, as the tests and the benchmarks (benchmarks/,
#: outside the package: they time the internals) do: it compiles the internals.
INSTRUMENTS = ("aot.py",)
CALLERS = [
    p
    for p in (REPO / "pipeline").rglob("*.py")
    if p.relative_to(REPO / "pipeline").parts[0] not in INSTRUMENTS
] + sorted([*(REPO / "notebooks").glob("*.ipynb"), *(REPO / "docs" / "_hooks").glob("*.py")])


@pytest.mark.parametrize("path", sorted(CALLERS), ids=lambda p: str(p.relative_to(REPO)))
def test_callers_import_a_package_from_its_surface_not_its_private_modules(path: Path) -> None:
    assert private_module_imports(path) == []


def test_the_check_sees_a_private_module_imported_from_outside(tmp_path: Path) -> None:
    (tmp_path / "pipeline" / "store").mkdir(parents=True)
    inside = tmp_path / "pipeline" / "store" / "_job.py"
    outside = tmp_path / "pipeline" / "runner.py"
    code = "import pipeline.store._parts as P\nfrom pipeline.store._schema import X\n"
    code += "from pipeline.store import Y\n"
    inside.write_text(code)
    outside.write_text(code + "def f():\n    from pipeline.best.prove.tree._build import Z\n")
    assert private_module_imports(inside, tmp_path) == []
    assert private_module_imports(outside, tmp_path) == [
        "pipeline/runner.py:1: pipeline.store._parts",
        "pipeline/runner.py:2: pipeline.store._schema",
        "pipeline/runner.py:5: pipeline.best.prove.tree._build",
    ]


# ---------------------------------------------------------------- public surfaces

#: Subpackages and their deliberate public surface: what the layers above them may use (and
#: users: the README and docs show it). Each one's ``__all__`` must be exactly this list, so a
#: name joins a surface by a decision made here, never because some module reached for it;
#: the rest is the package's own (tests import it from the defining module).
PUBLIC: dict[str, set[str]] = {
    "pipeline.store": {
        # the job protocol: one JobDir, the kinds of job, the read-only look at a directory
        *("JobDir", "JobKind", "JobOutcome", "JobState", "JobStatus", "JobView", "PartCheck", "RUN"),
        *("check_parts", "inspect", "job_kind", "part_tag"),
        # where a job lives (local folder or object store, one interface)
        *("Location", "PartRef", "is_url", "job_path", "location"),
        # where a command writes what is not a job of its own (a pool, a report, a what-if's runs)
        *("output_file", "output_folder", "output_location", "refuse_inside_job"),
        # reading finished jobs and checking them
        *("FinishedRun", "open_run", "read_rejects", "read_run_table", "read_manifest"),
        *("job_problems", "manifest_mismatches", "describe_problems", "job_digest", "check_digest"),
        *("parse_digest",),
        # the run's files and schema
        *("FORMAT", "SCHEMA_VERSION", "MANIFEST", "RUN_RECORD", "REJECTS", "MAX_PART", "META_CONFIG"),
        *("REJECT_COLUMNS",),
        *("REQUIRED_COLUMNS",),
        *("COLUMNS", "PartInfo", "board_schema", "columns_doc", "length_bins", "parquet_metadata"),
        *("part_name", "results_table", "run_id_of", "write_part"),
        # each part's statistics file and the run's vocabulary they count words of
        *("VOCABULARY", "stats_name"),
        # what a worker commits beside its part, and what a reader of committed parts needs
        *("write_part_info", "write_stats", "write_json", "read_part", "read_part_record"),
        *("committed_chunks", "listed_parts", "file_entry", "bytes_blake2b", "PART_RE"),
        # checking an output file's name before any work
        *("check_output_file", "split_output"),
    },
    "pipeline.analyze.sections": {
        # the report's sections, each a function of the result tables
        *("runs_header", "verdicts", "what_if_note", "model_fit_text", "face_effects_section"),
        *("dice_section", "dice_changes_section", "frequent_words_section", "comparisons_section"),
        *("paired_section", "face_comparisons_section", "bad_boards_section", "serve_section"),
        "trend_section",
    },
    "pipeline.best.optimize": {
        *("BestBoard", "OptimizeConfig", "OptimizeProgress", "OptimizeResult", "ProgressCallback"),
        *("RestartResult", "SECTION", "load_command_config", "load_optimize_config", "optimize"),
        *("read_results", "run_optimize", "INTERRUPTED", "RESULT_COLUMNS"),
    },
    "pipeline.best.prove": {
        *(
            "CERTIFICATE_COLUMNS",
            "BOARDS_FILE_COLUMNS",
            "FoundBoard",
            "ProveConfig",
            "ProveProgress",
            "ProveSummary",
            "run_prove",
        ),
        # --status and --classes
        *("ProofStatus", "proof_status", "check_undamaged", "parse_class_ids"),
    },
    "pipeline.best.prove.tree": {
        # the tree prover, the provers by name, and the gates the benches vary
        *("PROVERS", "TreeProver", "DEDUP_RATIO", "LIFT_KEEP", "LIFT_RATIO", "max_cells"),
    },
    "pipeline.runner": {
        *("Progress", "RunSummary", "execute", "run_from_file", "run_job"),
        # the designer scores its variants with the run's own workers
        *("make_handle", "worker_lexicon"),
    },
    "pipeline.solve.kernels": {
        # the batch driver and its variants, the walks' helpers the other solvers and the
        # prover share, the optimizer's scoring and moves
        *("HIT_ROOM", "LARGE", "REVISIT", "SMALL", "solve_batch", "ctz", "popcount", "enter", "grow"),
        *("new_outputs", "next_neighbour", "tally_board", "Scratch", "score_one", "score_batch"),
        *("cell_scores", "REROLL", "anneal", "neighbourhood", "LOW32"),
    },
    "pipeline.stats": {
        # what a part's statistics hold, computing them, their bytes, and merging them
        *("PartStats", "RunStats", "KeyCounts", "StatsSpec", "WordIds", "DiceLayout", "BadCounts"),
        *("part_stats", "to_bytes", "from_bytes", "merge", "value_counts", "top_boards", "source_codes"),
        *("bad_counts", "die_sums", "length_bins_of", "STATS_VERSION", "VALUE_COLUMNS", "DEFAULT_TOP"),
        *("LEXICON_VOCAB", "LOCAL_VOCAB"),
        # what the statistics count: faces cell by cell, positions, bad boards and their drivers
        *("BadDefinition", "BLANK_FACE", "POSITIONS", "QU", "VOWELS", "RARE_LETTERS", "MAX_VOWELS"),
        *("DEFAULT_BAD_WORDS", "DEAD_CELL", "WHERE", "decode_boards", "decode_column", "position_classes"),
        *("rare_face", "vowel_face"),
        # the loops of the analysis's second pass
        *("gram", "meat", "face_cross"),
        # the 95% interval of a share and of a mean (the report's, and a run's expectations')
        *("Interval", "Z95", "wilson", "mean_interval", "normal_interval"),
    },
    "pipeline.cli": {"app", "main"},
}
SURFACES = list(PUBLIC)
DOCS = [
    REPO / "README.md",
    REPO / "pyproject.toml",
    *(REPO / "notebooks").glob("*.ipynb"),
    *sorted((REPO / "docs").rglob("*.md")),
]


def names_used_from(package: str, path: Path) -> set[str]:
    """The names of ``package`` the module at ``path`` uses: ``from package import name`` and
    ``alias.name`` where ``alias`` is the package (``from pipeline import store``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    parent, _, last = package.rpartition(".")
    aliases, used = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == package:
            used |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module == parent:
            aliases |= {alias.asname or alias.name for alias in node.names if alias.name == last}
        elif isinstance(node, ast.Import):
            aliases |= {alias.asname for alias in node.names if alias.name == package and alias.asname}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            used.add(node.attr)
    return used


def names_documented_from(package: str) -> set[str]:
    """Names of ``package`` shown to users: in the README, the docs pages and the notebooks
    (``from package import a, b``, ```package.name``, ``package:name`` of an entry point in
    pyproject.toml), and in the package's own docstring (``:func:`name```, ````name````)."""
    found = set()
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for names in re.findall(rf"from {re.escape(package)} import ([\w, ]+)", text):
            found |= {n.strip() for n in names.split(",") if n.strip()}
        found |= set(re.findall(rf"[`\"]{re.escape(package)}[.:](\w+)", text))
    docstring = importlib.import_module(package).__doc__ or ""
    found |= set(re.findall(r":(?:func|class|data):`~?(?:[\w.]*\.)?(\w+)`", docstring))
    return found | set(re.findall(r"``(\w+)``", docstring))


@pytest.mark.parametrize("package", SURFACES)
def test_a_package_exports_its_deliberate_surface_and_the_layers_above_use_only_it(package: str) -> None:
    module = importlib.import_module(package)
    exported = set(module.__all__)
    assert all(hasattr(module, name) for name in exported)
    assert exported == PUBLIC[package], f"{package}.__all__ differs from its public list (PUBLIC)"
    inside = REPO / Path(*package.split("."))
    outside = [p for p in (REPO / "pipeline").rglob("*.py") if inside not in p.parents]
    used = set().union(*(names_used_from(package, p) for p in outside))
    # whatever the layers above use through the package is public (not reached for past it)
    submodules = {p.stem for p in inside.glob("*.py")} | {p.name for p in inside.iterdir() if p.is_dir()}
    assert sorted(used - exported - submodules) == []


def test_the_top_level_package_exports_the_documented_readers() -> None:
    import pipeline

    top = REPO / "pipeline"
    readers = {
        n for n in names_documented_from("pipeline") if not any(top.glob(f"{n}.py")) | (top / n).is_dir()
    }
    assert set(pipeline.__all__) == readers | {"__version__"}
    # nothing else: no typing helpers (submodules become attributes once imported)
    names = {n for n, v in vars(pipeline).items() if not n.startswith("_") and not isinstance(v, ModuleType)}
    assert names <= set(pipeline.__all__)


def test_the_surface_check_sees_both_ways_of_using_a_package(tmp_path: Path) -> None:
    user = tmp_path / "user.py"
    user.write_text(
        "from pipeline import store as s\nfrom pipeline.store import open_run\n"
        "from pipeline.store._job import X\ns.read_run(s.MANIFEST)\nstore.ignored\n"
    )
    assert names_used_from("pipeline.store", user) == {"open_run", "read_run", "MANIFEST"}
