"""What the user trial found rough in the command line: plurals, type labels in --help, an
option's bad value blamed on the config file, prove's two board counts, progress lines cut at
80 columns in a log, and the local dask cluster's dashboard warning."""

from __future__ import annotations

import io
import os
import re
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli import app, render

REPO = Path(__file__).resolve().parents[1]
CLI = CliRunner()
COMMANDS = ["solve", "lookup", "words", "analyze", "check", "queens", "run", "generate", "optimize", "prove"]


@pytest.mark.parametrize("command", COMMANDS)
def test_help_names_types_in_words(command: str) -> None:
    res = CLI.invoke(app, [command, "--help"], terminal_width=200)
    assert res.exit_code == 0
    python_labels = re.findall(r"<(?:int|float|str|path|list\[[a-z]+\])(?: range)?>", res.output)
    assert python_labels == [], f"{command} --help shows {python_labels}"


def test_help_labels_of_run() -> None:
    out = CLI.invoke(app, ["run", "--help"], terminal_width=200).output
    for label in (
        "--set SECTION.KEY=VALUE",
        "--count INTEGER",
        "-i, --input FILE",
        "--out DIR",
        "--summary-json PATH|-",
        "--seed-from-date YYYY-MM-DD|today",
    ):
        assert label in out, label
    assert re.search(r"^\s+\[CONFIG\.toml\]\s+Run config", out, re.M)  # an optional argument: its name alone


@pytest.mark.parametrize(
    ("option", "value", "line"),
    [
        ("--count", "0", "error: --count: expected an integer >= 1, got 0"),
        ("--n-jobs", "0", "error: --n-jobs: expected a non-zero integer (-1 = all cores), got 0"),
        ("--chunk-size", "2000000", "error: --chunk-size: at most 1,000,000, got 2,000,000"),
        ("--shape", "4by4", "error: --shape: expected a shape RxC, e.g. \"4x4\", got '4by4'"),
    ],
)
def test_a_bad_option_is_blamed_on_the_option(tmp_path: Path, option: str, value: str, line: str) -> None:
    cfg = tmp_path / "job.toml"
    cfg.write_text("[boards]\ncount = 10\n")
    res = CLI.invoke(app, ["run", str(cfg), option, value])
    assert res.exit_code == 2 and res.stderr.strip() == line
    # the same value in the file is blamed on the file
    cfg.write_text("[boards]\ncount = 0\n")
    res = CLI.invoke(app, ["run", str(cfg)])
    assert (
        res.exit_code == 2
        and res.stderr.strip() == f"error: {cfg}: [boards] count: expected an integer >= 1, got 0"
    )


@dataclass
class Progress:
    classes_done: int = 700
    classes_total: int = 1000
    boards_found: int = 5
    best_score: int | None = 3625
    best_board: str | None = "perslatgsineters"
    elapsed: float = 1.0


@dataclass
class Board:
    board: str
    score: int


@dataclass
class Proof:
    status: str = "complete"
    threshold: int = 500
    classes_total: int = 1000
    classes_done: int = 1000
    boards: list[Board] = field(default_factory=lambda: [Board("perslatgsineters", 3625), Board("b", 600)])
    wall_s: float = 1.0
    cpu_s: float = 2.0
    eliminated: int = 990
    boards_scored: int = 12
    out: Path | None = None
    cpu_s_recorded: float = 2.0
    parts_recorded: int = 16
    parts_total: int = 16
    parts_reused: int = 0
    wall_s_recorded: float = 1.0
    parts_wall: int = 16

    @property
    def best(self) -> Board:
        return self.boards[0]


def test_prove_counts_read_the_same_in_progress_and_at_the_end() -> None:
    proof = Proof()
    assert render.prove_best(proof) == "BEST perslatgsineters 3625 (2 boards >= 500, 1000 classes)"
    line = render.prove_summary(proof, hits=5)
    assert "5 hits = 2 boards >= 500 (symmetric copies merged)" in line
    assert "2 boards >= 500" in render.prove_summary(proof)
    one = Proof(boards=[Board("x", 700)], classes_done=1)
    assert render.prove_best(one) == "BEST x 700 (1 board >= 500, 1 class)"


def test_a_proof_over_several_sessions_reports_the_cpu_and_wall_its_parts_record() -> None:
    assert "CPU-h" not in render.prove_summary(Proof())  # one session: its own figure says it all
    resumed = Proof(status="resumed", cpu_s_recorded=7200.0, wall_s_recorded=5400.0, parts_reused=10)
    assert render.prove_summary(resumed).endswith(
        "2.0 s CPU in workers; 2.00 CPU-h and 1.50 h wall over every session"
    )
    older = Proof(
        status="resumed",
        cpu_s_recorded=5400.0,
        parts_recorded=6,
        wall_s_recorded=1800.0,
        parts_wall=4,
        parts_reused=10,
    )
    assert render.prove_summary(older).endswith(
        "; 1.50 CPU-h over the 6 of 16 parts that record it"
        "; 0.50 h wall over the 4 of 16 parts that record it"
    )
    no_wall = Proof(
        status="resumed", cpu_s_recorded=3600.0, wall_s_recorded=0.0, parts_wall=0, parts_reused=10
    )
    assert render.prove_summary(no_wall).endswith(
        "; 1.00 CPU-h over every session; 0.00 h wall over the 0 of 16 parts that record it"
    )


def test_progress_in_a_log_is_not_cut_at_80_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    log = io.StringIO()  # not a terminal
    monkeypatch.setattr(sys, "stderr", log)
    monkeypatch.delenv("COLUMNS", raising=False)
    with render.prove_progress() as update:
        update(Progress())
    text = log.getvalue()
    assert "700/1,000 classes" in text and "5 hits" in text and "best 3625 perslatgsineters" in text
    assert max(len(line) for line in text.splitlines()) > 80
    assert render.stderr_console().width == render.LOG_WIDTH
    monkeypatch.setenv("COLUMNS", "100")
    assert render.stderr_console().width == 100


@pytest.mark.integration
def test_local_dask_cluster_says_nothing_about_its_dashboard(tmp_path: Path, enable2k_path: str) -> None:
    """With the default dashboard port taken (another cluster), a run on a local dask cluster
    prints no port warning: the dashboard gets a free port."""
    with socket.socket() as taken:
        try:
            taken.bind(("127.0.0.1", 8787))
            taken.listen()
        except OSError:
            pass  # already taken by someone else: the same situation
        res = subprocess.run(
            [
                sys.executable,
                "-m",
                "pipeline.cli",
                "run",
                str(REPO / "configs" / "smoke.toml"),
                "--count",
                "40",
                "--chunk-size",
                "20",
                "-j",
                "2",
                "--backend",
                "dask",
                "-d",
                enable2k_path,
                "-q",
                "--out",
                str(tmp_path / "run"),
            ],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )
    assert res.returncode == 0, res.stderr
    said = [line for line in res.stderr.splitlines() if not line.startswith("note: compiling")]
    assert said == [], res.stderr  # no "Port 8787 is already in use", no dashboard address
    assert "40 boards in 2 parts" in res.stdout


def test_help_lists_the_commands_in_panels() -> None:
    """``boggle --help``: the commands in panels (batch jobs, boards and words, the designer's
    tools, proofs and searches, the catalog), the classic puzzles apart at the end."""
    from typer.testing import CliRunner

    from pipeline.cli import app

    text = CliRunner().invoke(app, ["--help"]).output
    heads = [ln.rstrip(":") for ln in text.splitlines() if ln and not ln.startswith(" ") and ln.endswith(":")]
    assert heads == [
        "Options",
        "Batch jobs",
        "Boards and words",
        "The designer's tools",
        "Proofs and searches",
        "The catalog",
        "Classic puzzles",
    ]
    panels: dict[str, list[str]] = {}
    current: list[str] = []
    for ln in text.splitlines():
        if ln.endswith(":") and not ln.startswith(" "):
            current = panels.setdefault(ln.rstrip(":"), [])
        elif ln.startswith("  ") and ln.strip():
            current.append(ln.split()[0])
    assert panels["Batch jobs"] == ["run", "analyze", "select"]
    assert panels["Classic puzzles"] == ["check", "queens"]
    assert sorted(panels["The catalog"]) == ["digest", "runs"]
    assert sorted(c for name, cs in panels.items() if name != "Options" for c in cs) == sorted(
        [
            "run",
            "analyze",
            "select",
            "solve",
            "lookup",
            "words",
            "generate",
            "dice",
            "what-if",
            "design-dice",
            "prove",
            "optimize",
            "digest",
            "runs",
            "check",
            "queens",
        ]
    )
