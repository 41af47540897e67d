"""Ours and the C++ on the same classes, one after the other (``python -m
benchmarks.prove_pairs``): the design's stratum of heavy classes taken whole, and the
estimate from the lines measured so far."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from benchmarks.prove_pairs import app, net_costs, stratum_lines, usable_strata
from tests.conftest import REPO


def _row(cid: int, ours: float, cpp: float, cpp5000: float | None = None) -> dict:
    row = {
        "class_id": cid,
        "ours": {"cpu_s": ours + 1.0, "startup_s": 1.0, "found": 0, "rss_mb": 1.0},
        "cpp": {"cpu_s": cpp + 0.25, "startup_s": 0.25, "found": 0, "rss_mb": 1.0},
    }
    if cpp5000 is not None:
        row["cpp5000"] = {"cpu_s": cpp5000 + 0.25, "startup_s": 0.25, "found": 1, "rss_mb": 1.0}
    return row


def test_the_estimate_is_the_strata_totals_and_the_heavy_stratum_counted_whole(tmp_path: Path) -> None:
    # strata of 100 and 50 classes sampled, a census stratum of 2 taken whole: each total is
    # sum N_h * mean_h, the census stratum's its sum; start-ups are taken off every class
    design = {
        "classes_all": 152,
        "strata_sizes": [100, 50, 2],
        "class_ids": [1, 2, 3, 4, 5, 6],
        "strata": [0, 0, 1, 1, 2, 2],
    }
    (tmp_path / "d.json").write_text(json.dumps(design))
    rows = [
        _row(1, 1.0, 2.0, 2.5),
        _row(2, 3.0, 4.0, 4.5),
        _row(3, 10.0, 10.0, 12.0),
        _row(4, 20.0, 30.0, 32.0),
        _row(5, 100.0, 300.0),
        _row(6, 200.0, 500.0),
    ]
    (tmp_path / "p.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    got = CliRunner().invoke(app, ["estimate", str(tmp_path / "d.json"), str(tmp_path / "p.jsonl")])
    assert got.exit_code == 0, got.output
    ours = 100 * 2.0 + 50 * 15.0 + 300.0
    cpp = 100 * 3.0 + 50 * 20.0 + 800.0
    assert f"ours    : {ours / 3600:,.1f} CPU-h over all classes" in got.output
    assert f"cpp     : {cpp / 3600:,.1f} CPU-h over all classes" in got.output
    assert f"ours / cpp: {ours / cpp:.3f}" in got.output
    # the C++ at 5000 has no census line yet: its total leaves that stratum out, and says so
    assert "cpp5000 : " in got.output and "over 150 of 152 classes" in got.output


def test_a_line_per_stratum_says_where_the_hours_are() -> None:
    # stratum 0: 100 classes, ours 1 and 3 s (mean 2), the C++ 2 and 4 (mean 3); stratum 1: 50
    # classes, ours 10 and 20 (15), the C++ 10 and 30 (20); stratum 2 has no pair: no line
    sizes = np.array([100, 50, 2])
    stratum = {1: 0, 2: 0, 3: 1, 4: 1, 5: 2}
    ours = {1: 1.0, 2: 3.0, 3: 10.0, 4: 20.0, 5: 7.0}
    cpp = {1: 2.0, 2: 4.0, 3: 10.0, 4: 30.0}
    header, first, second = stratum_lines(sizes, stratum, ours, cpp)
    assert "share" in header
    assert first.split()[:5] == ["0", "100", "2", "2.00", "3.00"]
    assert f"{100 * 2.0 / 3600:,.1f} ({100 * 200 / 950:4.1f}%)" in first and first.endswith("0.67")
    assert second.split()[:5] == ["1", "50", "2", "15.00", "20.00"]
    assert f"({100 * 750 / 950:4.1f}%)" in second and second.endswith("0.75")


def test_net_costs_and_usable_strata() -> None:
    rows = {7: _row(7, 0.5, 0.0), 8: {"class_id": 8, "ours": {"cpu_s": 0.5, "startup_s": 1.0}}}
    assert net_costs(rows, "ours") == {7: 0.5, 8: 0.0}  # never below 0
    assert net_costs(rows, "cpp") == {7: 0.0}
    sizes = np.array([10, 1, 5])
    assert usable_strata(sizes, np.array([0, 0, 1, 2])).tolist() == [True, True, False]


@pytest.mark.slow  # lists and stratifies the 1,068,363 canonical 4x4 classes
def test_the_heavy_classes_leave_their_strata_for_one_of_their_own(tmp_path: Path) -> None:
    out = tmp_path / "pairs.json"
    got = CliRunner().invoke(
        app,
        [
            "design",
            str(REPO / "certificates" / "4x4-strata.json"),
            "--heavy",
            "705707,156513,5590939",
            "--out",
            str(out),
        ],
    )
    assert got.exit_code == 0, got.output
    old = json.loads((REPO / "certificates" / "4x4-strata.json").read_text())
    new = json.loads(out.read_text())
    assert sum(new["strata_sizes"]) == sum(old["strata_sizes"]) == old["classes_all"]
    assert new["strata_sizes"][-1] == 3 and new["census"] == [705707, 156513, 5590939]
    drawn = dict(zip(old["class_ids"], old["strata"], strict=True))
    for cid, h in zip(new["class_ids"], new["strata"], strict=True):
        assert h == (len(old["strata_sizes"]) if cid in new["census"] else drawn[cid])
    assert out.with_suffix(".ids").read_text().split() == [str(c) for c in new["class_ids"]]


def test_the_classes_to_prove_go_stratum_by_stratum_the_least_measured_first() -> None:
    from benchmarks.prove_pairs import balanced_order

    strata_of = {cid: cid % 3 for cid in range(30)}  # three strata of 10 classes
    done = [0, 3, 6, 1]  # stratum 0 has 3 measured, stratum 1 has 1, stratum 2 none
    rest = [c for c in range(30) if c not in done]
    order = balanced_order(rest, strata_of, done)
    assert sorted(order) == rest  # each class once
    strata = [strata_of[c] for c in order]
    assert sorted(strata[:3]) == [1, 2, 2]  # up to 2 measured each before stratum 0 gets one more
    counts = {0: 3, 1: 1, 2: 0}
    rounds = []  # how many of its stratum were measured before each class: never goes down
    for s in strata:
        rounds.append(counts[s])
        counts[s] += 1
    assert rounds == sorted(rounds) and rounds[0] == 0 and rounds[-1] == 9
    # the same shuffle within a stratum whatever was done in the others
    assert [c for c in order if strata_of[c] == 2] == [
        c for c in balanced_order(rest, strata_of, []) if strata_of[c] == 2
    ]
