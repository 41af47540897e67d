"""Shared fixtures and helpers: the ENABLE2K word list, a compiled lexicon, an isolated cache,
the tiny prove lexicon, ``boggle`` subprocesses and their one error line, small run configs,
hand-made runs (written with the store's own writers) and the smoke run."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import time
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import settings as hypothesis_settings

from pipeline import jit, settings

if TYPE_CHECKING:
    from pipeline.config import RunConfig

REPO = Path(__file__).resolve().parent.parent
#: The tests' own process compiles its kernels with numba's JIT, whatever the environment says:
#: they call kernels the ahead-of-time build does not export (pipeline.jit). ``boggle``
#: subprocesses choose for themselves (job_environment), as a user's do.
os.environ[jit.ENV] = "jit"
#: Hypothesis's per-example deadline is a timed assertion: a first example that compiles a
#: kernel, or a loaded 2-core CI machine, fails it with nothing wrong. Examples are not timed.
hypothesis_settings.register_profile("untimed", deadline=None)
hypothesis_settings.load_profile("untimed")
#: The embedded ENABLE2K, by name (pipeline/lexicon/enable2k.txt.gz): every machine has it.
ENABLE2K = "enable2k"
#: In CI a test that finds its data missing fails instead of skipping: a machine without it
#: must not report green.
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def need_data(present: bool, reason: str) -> None:
    """Skip (locally) or fail (in CI, ``CI=true``) a test whose data is missing, saying why."""
    if not present:
        if IN_CI:
            pytest.fail(f"{reason} (CI must have it: .ci/run installs it)", pytrace=False)
        pytest.skip(reason)


@pytest.fixture(scope="session", autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Compiled lexicons go to a per-session cache, never the user's."""
    os.environ["BOGGLE_CACHE_DIR"] = str(tmp_path_factory.mktemp("boggle-cache"))
    settings.reload()


class _SettingsMonkeyPatch(pytest.MonkeyPatch):
    """``monkeypatch`` whose environment changes reach :mod:`pipeline.settings`, which reads the
    environment once: each ``setenv``/``delenv`` (and the undo) makes the next ``get()`` read
    it again."""

    def setenv(self, name: str, value: str, prepend: str | None = None) -> None:
        super().setenv(name, value, prepend)
        settings.reload()

    def delenv(self, name: str, raising: bool = True) -> None:
        super().delenv(name, raising)
        settings.reload()

    def undo(self) -> None:
        super().undo()
        settings.reload()


@pytest.fixture
def monkeypatch() -> Iterator[pytest.MonkeyPatch]:
    """pytest's ``monkeypatch``, with :class:`_SettingsMonkeyPatch`'s environment handling."""
    patch = _SettingsMonkeyPatch()
    yield patch
    patch.undo()


@pytest.fixture(autouse=True)
def _fresh_settings() -> Iterator[None]:
    """Each test reads the environment anew (a test that set ``os.environ`` itself leaves
    nothing behind in the settings)."""
    settings.reload()
    yield
    settings.reload()


@pytest.fixture(scope="session")
def enable2k_path() -> str:
    """The embedded ENABLE2K's name, which every ``--dictionary`` and loader takes."""
    return ENABLE2K


@pytest.fixture(scope="session")
def enable_lexicon(enable2k_path: str):  # type: ignore[no-untyped-def]
    """ENABLE2K compiled for the English alphabet (a-z, q = Qu) and standard 4x4 rules."""
    from pipeline.lexicon import compile_lexicon
    from pipeline.lexicon.trie import Alphabet
    from pipeline.rules import get_rules

    return compile_lexicon(enable2k_path, Alphabet.english(), get_rules("boggle"))


@pytest.fixture(scope="session")
def enable_words(enable2k_path: str) -> list[str]:
    from pipeline.lexicon import load_lexicon

    return load_lexicon(enable2k_path).words


# ---------------------------------------------------------------- boggle prove: a tiny lexicon

#: The faces of the tiny lexicon the prove tests enumerate exhaustively.
TINY_LETTERS = "aerst"


@pytest.fixture(scope="session")
def tiny_dict(tmp_path_factory: pytest.TempPathFactory, enable_words: list[str]) -> str:
    """ENABLE2K words of at most 6 letters over a e r s t: every board of 2x2 and 2x3 can be
    enumerated (5^6 = 15,625)."""
    words = [w for w in enable_words if len(w) <= 6 and set(w) <= set(TINY_LETTERS)]
    path = tmp_path_factory.mktemp("lex") / "tiny.txt"
    path.write_text("\n".join(words) + "\n", encoding="utf-8")
    return str(path)


@pytest.fixture(scope="session")
def tiny(tiny_dict: str):  # type: ignore[no-untyped-def]
    """The tiny word list compiled for its five faces."""
    from pipeline.lexicon import compile_for_boards
    from pipeline.rules import get_rules

    lex = compile_for_boards(tiny_dict, get_rules("boggle"))
    assert lex.alphabet.faces == tuple(TINY_LETTERS)
    return lex


def _draw_class(data):  # type: ignore[no-untyped-def]
    """(rows, cols, masks) of a random small class over the tiny lexicon's faces, drawn with
    hypothesis: at most 4^4, 3^6 or 2^9 boards, so a test can score them all."""
    from hypothesis import strategies as st

    rows, cols = data.draw(st.sampled_from([(2, 2), (2, 3), (3, 3)]))
    most = {4: 4, 6: 3, 9: 2}[rows * cols]
    faces = st.sets(st.integers(0, len(TINY_LETTERS) - 1), min_size=1, max_size=most)
    return rows, cols, [sum(1 << f for f in data.draw(faces)) for _ in range(rows * cols)]


def _class_boards(masks: list[int]):  # type: ignore[no-untyped-def]
    """Every board of the class ``masks`` (int8 [boards, cells])."""
    import itertools

    import numpy as np

    return np.array(list(itertools.product(*[[f for f in range(64) if m >> f & 1] for m in masks])), np.int8)


@pytest.fixture(scope="session")
def draw_class():  # type: ignore[no-untyped-def]
    return _draw_class


@pytest.fixture(scope="session")
def class_boards():  # type: ignore[no-untyped-def]
    return _class_boards


def side_path(job_dir: Path, name: str = "_SUCCESS") -> Path:
    """The file a job's side file ``name`` is on disk: in a run's folder (packed, schema 6)
    ``name.parquet``, a Parquet file of no rows holding it (pipeline.store._pack); else ``name``."""
    from pipeline.store import location

    return Path(location(job_dir).ref(name))


def read_side(job_dir: Path, name: str = "_SUCCESS") -> bytes:
    """What a job's side file ``name`` holds (unpacked)."""
    from pipeline.store import location

    return location(job_dir).read_bytes(name)


def read_side_json(job_dir: Path, name: str = "_SUCCESS") -> Any:
    """A job's JSON side file (the manifest by default), unpacked, unchecked (no seal test)."""
    import json

    return json.loads(read_side(job_dir, name).decode("utf-8"))


def write_side(job_dir: Path, name: str, data: bytes | str | dict[str, Any]) -> None:
    """Replace what a job's side file ``name`` holds (packed again in a packed folder), as an
    edit by hand would: nothing is resealed."""
    import json

    from pipeline.store import location

    if isinstance(data, dict):
        data = json.dumps(data)
    location(job_dir).write_bytes(name, data.encode() if isinstance(data, str) else data)


def _reseal(job_dir: Path, legacy: bool = False) -> None:
    """Rewrite a finished job's manifest for parts changed on purpose (what an older writer
    would have left): part sizes and checksums taken anew and the seal recomputed, or, with
    ``legacy``, the manifest of a schema without side-file records or a seal."""
    import json

    from pipeline.store._manifest import seal_of
    from pipeline.store._parts import file_blake2b

    manifest = read_side_json(job_dir)
    for p in manifest["parts"]:
        part = job_dir / p["file"]
        p["bytes"], p["blake2b"] = part.stat().st_size, file_blake2b(part)
    manifest.pop("seal", None)
    if legacy:
        manifest.pop("files", None)
    else:
        manifest["seal"] = seal_of(manifest)
    write_side(job_dir, "_SUCCESS", json.dumps(manifest))


@pytest.fixture(scope="session")
def reseal():  # type: ignore[no-untyped-def]
    return _reseal


# ---------------------------------------------------------------- jobs in their own process group


def boggle_command(*args: str) -> list[str]:
    """A ``boggle`` command line run by this interpreter (the installed entry point's module)."""
    return [sys.executable, "-m", "pipeline.cli", *args]


def job_environment() -> dict[str, str]:
    """The environment for a ``boggle`` subprocess, read when called: the session's isolated
    cache (set by a fixture, after modules are imported) and this checkout on the path; the
    kernels' mode left to the command (``boggle prove`` takes the ahead-of-time module where it
    is built, see pipeline.jit)."""
    return {**{k: v for k, v in os.environ.items() if k != jit.ENV}, "PYTHONPATH": str(REPO)}


def group_processes(pgid: int) -> list[int]:
    """Live processes of the process group ``pgid`` (read from /proc/*/stat). Zombies are left
    out: they run nothing, and this container's init may never reap them."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                stat = fh.read()
        except OSError:  # gone while we looked
            continue
        # the command name (field 2) may hold spaces and parentheses: split after its last ")"
        state, _ppid, group = stat[stat.rindex(")") + 2 :].split()[:3]
        if int(group) == pgid and state not in ("Z", "X"):
            found.append(int(entry))
    return found


def wait_group_gone(pgid: int, limit: float = 10.0) -> list[int]:
    """Poll until no live process of ``pgid`` is left or ``limit`` seconds pass; what is left."""
    deadline = time.monotonic() + limit
    while (alive := group_processes(pgid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive


# ---------------------------------------------------------------- helpers several test files use


def run_boggle(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """``boggle ARGS`` in a subprocess (this checkout's package), its output captured as text;
    ``env`` adds to (or overrides) the job environment."""
    return subprocess.run(
        boggle_command(*args),
        capture_output=True,
        text=True,
        env={**job_environment(), **(env or {})},
        cwd=cwd,
        timeout=timeout,
    )


# ---------------------------------------------------------------- the command line's own listing


def cli_commands() -> Iterator[tuple[str, str, Any]]:
    """(the command as typed, its function's name, the function) of every command of
    ``boggle``: what the tests that list options from the command line itself walk."""
    from pipeline.cli import app

    for info in app.registered_commands:
        fn = inspect.unwrap(info.callback)
        yield info.name or fn.__name__, fn.__name__, fn
    for group in app.registered_groups:
        for info in group.typer_instance.registered_commands:
            fn = inspect.unwrap(info.callback)
            yield f"{group.name} {info.name or fn.__name__}", fn.__name__, fn


def base_type(hint: Any) -> Any:
    """``int`` for ``int`` and ``int | None``."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        (hint,) = [a for a in typing.get_args(hint) if a is not type(None)]
    return hint


def one_error_line(res: subprocess.CompletedProcess[str], *needles: str) -> str:
    """The one ``error: `` line of a refused command (notes and warnings aside), holding every
    one of ``needles``; no traceback."""
    assert "Traceback" not in res.stderr, res.stderr[-2000:]
    lines = [ln for ln in res.stderr.splitlines() if not ln.startswith(("note: ", "warning: "))]
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def part_bytes(run_dir: Path) -> dict[str, bytes]:
    """The content of each part file of a (local) run, by name."""
    return {p.name: p.read_bytes() for p in sorted(run_dir.glob("part-*.parquet"))}


def run_config(dictionary: str, out: str | Path, n_jobs: int = 1, **boards: Any) -> RunConfig:
    """A small generated run (300 boards in 3 chunks) of ``dictionary`` into ``out``."""
    from pipeline.config import config_from_dict

    return config_from_dict(
        {
            "boards": {"count": 300, "chunk_size": 100, "seed": 11, **boards},
            "lexicon": {"path": dictionary},
            "run": {"out": str(out), "n_jobs": n_jobs},
        }
    )


def gen_config(dictionary: str, out: Path, **values: Any) -> RunConfig:
    """A run of 3,000 new-dice boards (seed 5, chunks of 500) of ``dictionary`` into ``out``,
    changed by dotted keys written ``boards__count=...`` (CLI-style overrides, no file)."""
    from pipeline.config import load_config

    merged: dict[str, Any] = {
        "boards.dice": "new",
        "boards.count": 3000,
        "boards.seed": 5,
        "boards.chunk_size": 500,
        "lexicon.path": dictionary,
        "run.out": str(out),
    }
    merged.update({k.replace("__", "."): v for k, v in values.items()})
    return load_config(None, merged)


#: bytes of address space for a subprocess run under :func:`limit_memory`
MEMORY_LIMIT = 1536 << 20


def limit_memory() -> None:
    """``preexec_fn`` of a subprocess that must stay under :data:`MEMORY_LIMIT` (a loader that
    reads everything dies with a MemoryError there, not in the test run)."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


# ---------------------------------------------------------------- hand-made runs and inputs


def write_manifest(run_dir: Path, fields: dict[str, Any]) -> None:
    """Finish a hand-made run the way the store does: every part recorded (size, checksum),
    then a sealed ``_SUCCESS`` listing them."""
    from pipeline.io import write_json_atomic
    from pipeline.store._manifest import seal_of
    from pipeline.store._parts import record_part
    from pipeline.store._schema import FORMAT, SCHEMA_VERSION

    parts = [
        record_part(run_dir, p["chunk"], p["rows"]).to_dict()
        for p in sorted(fields.get("parts", []), key=lambda p: p["chunk"])
    ]
    manifest = {"format": FORMAT, "schema_version": SCHEMA_VERSION, **fields, "parts": parts, "files": {}}
    manifest["seal"] = seal_of(manifest)
    write_json_atomic(run_dir / "_SUCCESS", manifest)


def make_rows(boards: list[dict[str, Any]], start_id: int = 0, min_length: int = 3) -> list[dict[str, Any]]:
    """Complete hand-written boards (board, rows, cols, source, words, dead_cells) into rows
    (standard Boggle scoring)."""
    from pipeline.rules import get_rules
    from pipeline.store._schema import length_bins

    rules = get_rules("boggle")
    bins = length_bins(min_length)
    lo = int(bins[0])
    out = []
    for i, b in enumerate(boards):
        words = sorted(b["words"])
        row = {
            "board_id": start_id + i,
            "board": b["board"],
            "rows": b.get("rows", 2),
            "cols": b.get("cols", 2),
            "source": b["source"],
            "lexicon": b.get("lexicon", "test-words"),
            "lexicon_hash": "ab" * 6,
            "rules": rules.name,
            "run_id": "cd" * 6,
            "seed": None,
            "dice": None,
            "chunk": 0,
            "score": sum(rules.points(len(w)) for w in words),
            "n_words": len(words),
            "words": words,
            "longest_word": min(words, key=lambda w: (-len(w), w)) if words else "",
            "max_word_len": max((len(w) for w in words), default=0),
            "dead_cells": b["dead_cells"],
        }
        for key in bins:
            row[f"words_len_{key}"] = 0
            row[f"points_len_{key}"] = 0
        for w in words:
            key = bins[min(len(w) - lo, len(bins) - 1)]
            row[f"words_len_{key}"] += 1
            row[f"points_len_{key}"] += rules.points(len(w))
        out.append(row)
    return out


def write_run(
    run_dir: Path,
    boards: list[dict[str, Any]],
    *,
    chunk_size: int = 3,
    finished: bool = True,
    min_length: int = 3,
) -> Path:
    """Write ``boards`` as a run: parts of ``chunk_size`` boards, then (if finished) _SUCCESS.
    Laid out like a run of ``boggle run`` (the store's own schema and writers); the derived
    columns are computed from the words."""
    import pyarrow as pa

    from pipeline.rules import get_rules
    from pipeline.store._parts import PartInfo, write_part
    from pipeline.store._schema import board_schema, parquet_metadata

    rules = get_rules("boggle")
    run_dir.mkdir(parents=True, exist_ok=True)
    rows = make_rows(boards, min_length=min_length)
    schema = board_schema(min_length)
    # the data config is the run's identity and what every part embeds, as boggle run's are
    data = {"boards": {"source": "generate", "count": len(rows), "seed": 7, "chunk_size": chunk_size}}
    config = {**data, "run": {"out": str(run_dir)}}
    lexicon = {
        "name": "test-words",
        "source": "/nowhere/test.txt",
        "content_hash": "ab" * 32,
        "n_words": 42,
        "report": {"n_input": 50, "n_kept": 42, "dropped": {"too short": 8}},
    }
    meta = parquet_metadata(data, lexicon, rules.to_dict())
    parts = []
    for chunk, lo in enumerate(range(0, len(rows), chunk_size)):
        part = [dict(r, chunk=chunk) for r in rows[lo : lo + chunk_size]]
        table = pa.Table.from_pylist(part, schema=schema)
        size = write_part(run_dir, chunk, table, meta)
        parts.append(PartInfo(chunk=chunk, rows=len(part), bytes=size).to_dict())
    if finished:
        write_manifest(
            run_dir,
            {
                "identity": {"data": data},
                "config": config,
                "lexicon": lexicon,
                "rules": rules.to_dict(),
                "versions": {"python": "3.x"},
                "counts": {"boards": len(rows)},
                "parts": parts,
            },
        )
    return run_dir


# Five 2x2 boards with hand-checked statistics (scores 1, 2, 3, 4, 10; words 1, 2, 3, 3, 10).
ALPHA = [
    {"board": "cats", "source": "new", "words": ["cat"], "dead_cells": 1},
    {"board": "dogs", "source": "new", "words": ["dog", "god"], "dead_cells": 1},
    {"board": "qate", "source": "new", "words": ["ate", "eat", "tea"], "dead_cells": 1},
    {"board": "cate", "source": "new", "words": ["acute", "cat", "eat"], "dead_cells": 0},
    {
        "board": "[th]ose",
        "source": "new",
        "dead_cells": 0,
        "words": ["eth", "hoe", "hoes", "hose", "host", "hot", "shoe", "shot", "the", "toe"],
    },
]
# Two sources in one run (an ingest of two files), a wordless board and a blank cell.
BETA = [
    {"board": "xyzw", "source": "a.txt", "words": [], "dead_cells": 4},
    {"board": "bade", "source": "a.txt", "words": ["abed", "bad", "bead", "debase"], "dead_cells": 0},
    {"board": "ba.e", "source": "b.txt", "words": ["abe"], "dead_cells": 0},
]


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``boggle run configs/smoke.toml`` in a real process (2,000 boards, 2 workers, the embedded
    ENABLE2K) into a directory named ``smoke``, its ``--summary-json`` beside it as
    ``summary.json``."""
    out = tmp_path_factory.mktemp("smoke") / "smoke"
    summary = out.parent / "summary.json"
    res = run_boggle(
        "run",
        str(REPO / "configs" / "smoke.toml"),
        "-o",
        str(out),
        "-q",
        "--summary-json",
        str(summary),
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith(f"{out}: 2,000 boards in 4 parts"), res.stdout
    return out


def write_toml(path: Path, sections: dict[str, dict[str, Any]]) -> Path:
    """A TOML config of ``sections`` (flat tables of JSON-compatible values) at ``path``."""
    import json

    lines = []
    for name, values in sections.items():
        lines.append(f"[{name}]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in values.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def ingest_config(tmp_path: Path, lexicon: str) -> Path:
    """A run config at ``tmp_path/ingest.toml`` that ingests :func:`make_inputs` (8 rows, 4 of
    them rejected; boards of two shapes, kept by ``mixed_shapes``) in chunks of 3 into
    ``tmp_path/run`` on one worker."""
    files = make_inputs(tmp_path)
    boards = {"source": "ingest", "files": [str(f) for f in files], "chunk_size": 3, "mixed_shapes": True}
    return write_toml(
        tmp_path / "ingest.toml",
        {
            "boards": boards,
            "lexicon": {"path": lexicon},
            "run": {"out": str(tmp_path / "run"), "n_jobs": 1},
        },
    )


def tiny_proof_args(tiny_dict: str, out: Path) -> list[str]:
    """``boggle prove`` of 2x2 boards over the buckets ``ae rst`` (threshold 6) of the tiny word
    list, on one worker, into ``out``: a proof of a few seconds."""
    return [
        "prove",
        "-d",
        tiny_dict,
        "--shape",
        "2x2",
        "-t",
        "6",
        "--classes",
        "ae rst",
        "-j",
        "1",
        "-o",
        str(out),
    ]


def make_inputs(tmp_path: Path) -> list[Path]:
    """Two ingest inputs, a text file and a CSV: 8 rows, 4 of them rejected."""
    a = tmp_path / "good_and_bad.txt"
    a.write_text(
        "perslatgsineters\n"  # ok
        "perslatgsinete1s\n"  # bad face
        "qiet\n"  # ok (2x2; with mixed_shapes, else a reject)
        "abcde\n"  # not square
        "PERSLATGSINETERS\n",  # ok
        encoding="utf-8",
    )
    b = tmp_path / "more.csv"
    b.write_text("board,n\nqqqqqqqqqqqqqqqq,1\n[th]aaaaaaaaaaaaaaa,2\n,3\n", encoding="utf-8")
    return [a, b]


def gathered(runs: Any, spec: Any = None) -> Any:
    """The analysis's statistics of finished runs (paths or RunInfos), gathered part by part as
    ``boggle analyze`` does (:func:`pipeline.analyze._gather.gather`)."""
    from pipeline.analyze import load_runs
    from pipeline.analyze._gather import gather
    from pipeline.analyze._runs import RunInfo
    from pipeline.stats import StatsSpec

    infos = [r for r in runs if isinstance(r, RunInfo)]
    if len(infos) != len(runs):
        infos = load_runs(list(runs))
    return gather(infos, spec or StatsSpec())
