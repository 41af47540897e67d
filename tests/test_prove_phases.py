"""The prover's phase bench (``python -m benchmarks.prove_phases``): where a round's CPU
goes, on the classes ``boggle prove`` would choose with the same options."""

from __future__ import annotations

import subprocess
import sys

import pipeline.best.prove.tree._builder as builder
import pipeline.best.prove.tree._prover as tree
from benchmarks.prove_phases import phase_rounds
from pipeline.best.prove._config import ProveConfig
from tests.conftest import REPO

TWO = "aeiosuy bcdfghjklmnpqrtvwxz"


def test_the_phase_bench_splits_a_rounds_cpu_and_puts_the_kernels_back() -> None:
    # two 3x3 classes of the 2-bucket recipe (the sample bench-prove draws with seed 21: ids 56
    # and 187), twice: the phases nest inside the round, the rounds prove the same (branch
    # nodes, boards scored), and the kernels are their modules' own again afterwards
    def kernels() -> tuple[object, ...]:
        names = (
            "collect_paths",
            "radix_sort",
            "derive_paths",
            "drop_redundant",
            "tree_value",
            "tree_from_paths",
        )
        return (*(getattr(builder, n) for n in names), tree.tree_branch)

    before = kernels()
    seen: list[tuple[int, int, float, dict[str, float]]] = []
    cfg = ProveConfig("enable2k", shape="3x3", threshold=500, classes=TWO, limit_classes=2, sample_seed=21)
    rounds = phase_rounds(cfg, 2, lambda *row: seen.append(row))
    assert kernels() == before
    assert [(r, cid) for r, cid, _, _ in seen] == [(0, 56), (0, 187), (1, 56), (1, 187)]
    assert len(rounds) == 2 and rounds[0]["nodes"] == rounds[1]["nodes"] > 0
    assert rounds[0]["scored"] == rounds[1]["scored"] > 0
    for got in rounds:
        assert got["classes"] == 2
        parts = ("walk", "sort", "derive", "dedup", "value", "tree")
        assert 0 < sum(got[k] for k in parts) <= got["build"]
        assert got["branch"] > 0
        assert got["build"] + got["branch"] + got["score"] <= got["total"]
    for _, _, seconds, phases in seen:
        assert phases["build"] + phases["branch"] + phases["score"] <= seconds + 1e-9


def _bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "benchmarks.prove_phases", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
    )


def test_the_phase_bench_prints_a_line_per_class_and_round() -> None:
    got = _bench("--shape", "3x3", "--threshold", "500", "--classes", TWO, "--class-ids", "56", "--per-class")
    assert got.returncode == 0, got.stderr
    lines = [line for line in got.stdout.splitlines() if line.strip()]
    assert [line.split()[:4] for line in lines] == [
        ["round", "1", "class", "56"],
        ["round", "2", "class", "56"],
        ["round", "1,", "1", "classes,"],
        ["round", "2,", "1", "classes,"],
    ]
    assert all(f" {phase} " in line for line in lines for phase in ("build", "walk", "branch", "score"))


def test_the_phase_bench_refuses_bad_class_ids_in_one_line() -> None:
    got = _bench("--shape", "3x3", "--classes", TWO, "--class-ids", "56,x")
    assert got.returncode == 2
    # parsed as boggle prove parses them (pipeline.best.prove._config.parse_class_ids)
    assert got.stderr.splitlines() == [
        "prove_phases: --class-ids:1: not a class id (a whole number >= 0): 'x'"
    ]
    got = _bench("--shape", "3x3", "--classes", TWO, "--class-ids", "99999")
    assert got.returncode == 2
    assert got.stderr.splitlines() == [
        "prove_phases: prove: class id 99999 is not a canonical class of this recipe "
        "(1 of the 1 given are not; it has 102, the largest id 511)"
    ]
