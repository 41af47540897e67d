"""The stratified estimate of a proof's cost (benchmarks.prove_strata): the strata, the
allocation, the estimator against a direct computation, its validation against simple random
samples, and the pilot -> design -> proof -> estimate loop through the CLI."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import typer
from typer.testing import CliRunner

import pipeline.best.prove._strata as E
from benchmarks import prove_strata as S
from pipeline.best.prove._anchor import append_cost_line, cpp_costs
from pipeline.best.prove._status import class_costs
from pipeline.cli import app
from pipeline.lexicon import tanglet_languages
from tests.conftest import need_data, tiny_proof_args


def test_strata_cut_the_predicted_total_into_equal_shares_cheapest_first() -> None:
    predicted = np.array([1.0] * 90 + [10.0] * 9 + [90.0])  # total 270: three shares of 90
    labels = E.cut_strata(predicted, 3)
    assert labels[-1] == labels.max()  # the heaviest class is a stratum of its own
    assert (labels == labels.max()).sum() == 1
    totals = np.bincount(labels, weights=predicted)
    assert totals.tolist() == [90.0, 90.0, 90.0]
    # a stratum holds cheaper classes than the next one
    for h in range(labels.max()):
        assert predicted[labels == h].max() <= predicted[labels == h + 1].min()


def test_allocation_spreads_the_sample_and_takes_small_strata_whole() -> None:
    take = E.allocate(np.array([1000, 1000, 3, 1]), 40)
    assert take.tolist() == [18, 18, 3, 1]  # the small strata whole, their rest to the others
    assert take.sum() == 40
    assert E.allocate(np.array([50, 50]), 2).tolist() == [2, 2]  # at least 2 where there are 2


def test_stratified_total_is_the_direct_formula_and_exact_when_every_class_is_drawn() -> None:
    rng = np.random.default_rng(3)
    sizes = np.array([100, 10])
    labels = np.array([0] * 5 + [1] * 4)
    seconds = rng.exponential(1.0, 9)
    est = E.stratified_total(sizes, labels, seconds)
    y0, y1 = seconds[:5], seconds[5:]
    total = 100 * y0.mean() + 10 * y1.mean()
    var = 100**2 * (1 - 5 / 100) * y0.var(ddof=1) / 5 + 10**2 * (1 - 4 / 10) * y1.var(ddof=1) / 4
    assert est.total_s == pytest.approx(total)
    assert est.high_s - est.total_s == pytest.approx(1.96 * np.sqrt(var))
    every = E.stratified_total(np.array([5, 4]), labels, seconds)
    assert every.total_s == pytest.approx(seconds.sum()) and every.low_s == every.high_s
    with pytest.raises(ValueError, match="stratum 1 has no drawn class"):
        E.stratified_total(sizes, np.zeros(9, np.int64), seconds)


def test_stratifying_on_a_cost_model_beats_a_simple_sample_on_heavy_tailed_costs() -> None:
    # costs that depend on the features (as a class's cost depends on its buckets), heavy-tailed
    rng = np.random.default_rng(5)
    counts = rng.integers(0, 9, (6000, 2)).astype(np.float64)
    x = np.column_stack([np.ones(6000), counts, counts**2, counts[:, :1] * counts[:, 1:]])
    seconds = np.exp(0.6 * counts[:, 0] - 0.3 * counts[:, 1] + rng.normal(0, 0.7, 6000))
    res = E.validate_costs(x, seconds, pilot=100, n=300, n_strata=10, rounds=60, seed=2)
    strat, simple = res["stratified"], res["simple"]
    assert res["truth_s"] == pytest.approx(seconds.sum())
    assert strat["ratio_p95"] - strat["ratio_p05"] < 0.6 * (simple["ratio_p95"] - simple["ratio_p05"])
    assert 0.95 < strat["ratio_median"] < 1.05
    assert strat["coverage"] >= 0.8


@pytest.mark.integration
def test_pilot_design_proof_and_estimate_through_the_cli(tiny_dict: str, tmp_path: Path) -> None:
    runner = CliRunner()
    base = tiny_proof_args(tiny_dict, tmp_path / "unused")[:-1]  # without the output folder
    base[base.index("2x2")] = "2x3"
    pilot = tmp_path / "pilot"
    done = runner.invoke(app, [*base, str(pilot), "--limit-classes", "8", "--sample-seed", "1", "-q"])
    assert done.exit_code == 0, done.output

    design = tmp_path / "design.json"
    made = runner.invoke(S.app, ["design", str(pilot), "--out", str(design), "--n", "16", "--strata", "3"])
    assert made.exit_code == 0, made.output
    record = json.loads(design.read_text())
    assert len(record["class_ids"]) == len(record["strata"]) >= 10
    assert sum(record["strata_sizes"]) == record["classes_all"]
    ids_file = design.with_suffix(".ids")
    assert ids_file.read_text().split() == [str(i) for i in record["class_ids"]]

    proof = tmp_path / "strata"
    done = runner.invoke(app, [*base, str(proof), "--class-ids", f"@{ids_file}", "--chunk-size", "1", "-q"])
    assert done.exit_code == 0, done.output
    shown = runner.invoke(S.app, ["estimate", str(proof), "--design", str(design)])
    assert shown.exit_code == 0, shown.output

    # the printed figure, recomputed here from the proof's own seconds and the design's strata
    ids, seconds, _, _ = class_costs(proof)
    stratum = dict(zip(record["class_ids"], record["strata"], strict=True))
    total = sum(
        size * seconds[[stratum[int(i)] == h for i in ids]].mean()
        for h, size in enumerate(record["strata_sizes"])
    )
    m = re.search(r"estimate for all ([\d,]+) classes: [\d,.]+ CPU-h .*; ([\d.e+-]+) CPU s\)", shown.output)
    assert m is not None, shown.output
    assert int(m.group(1).replace(",", "")) == record["classes_all"]
    assert float(m.group(2)) == pytest.approx(total, rel=1e-4)

    # a proof under way: refused without --partial, and with it the same formula over the classes
    # proved so far while each stratum has 2 of them, refused once one has fewer
    def drop(part: Path) -> None:
        (proof / json.loads(part.read_text())["file"]).unlink()
        part.unlink()

    def strata_left(without: Path | None = None) -> np.ndarray:
        left = [int(i) for i in class_costs(proof)[0]]
        if without is not None:
            gone = pq.read_table(proof / json.loads(without.read_text())["file"]).column("class_id")
            left = [i for i in left if i not in set(gone.to_pylist())]
        return np.bincount([stratum[i] for i in left], minlength=len(record["strata_sizes"]))

    need = np.minimum(2, record["strata_sizes"])  # 2 a stratum, or all of a smaller one
    records = sorted((proof / "_parts").glob("_part-*.json"))
    drop(next(r for r in records if (strata_left(r) >= need).all()))
    ids, seconds, _, _ = class_costs(proof)
    assert 0 < len(ids) < len(record["class_ids"])
    shown = runner.invoke(S.app, ["estimate", str(proof), "--design", str(design)])
    assert shown.exit_code != 0 and "not proved yet (--partial" in shown.output
    shown = runner.invoke(S.app, ["estimate", str(proof), "--design", str(design), "--partial"])
    assert shown.exit_code == 0, shown.output
    assert f"from {len(ids)} of the design's {len(record['class_ids'])} classes" in shown.output
    labels = np.array([stratum[int(i)] for i in ids])
    total = sum(size * seconds[labels == h].mean() for h, size in enumerate(record["strata_sizes"]))
    m = re.search(r"classes\): [\d,.]+ CPU-h .*; ([\d.e+-]+) CPU s\)", shown.output)
    assert m is not None, shown.output
    assert float(m.group(1)) == pytest.approx(total, rel=1e-4)
    while (strata_left() >= need).all():
        drop(sorted((proof / "_parts").glob("_part-*.json"))[0])
    shown = runner.invoke(S.app, ["estimate", str(proof), "--design", str(design), "--partial"])
    assert shown.exit_code != 0 and "fewer than 2 classes proved" in shown.output


def test_validate_on_the_greek_certificate() -> None:
    need_data("el" in tanglet_languages(), "tanglet:el: tanglet-data not installed")
    cert = Path(__file__).parent.parent / "certificates" / "3x4-tanglet-el"
    shown = CliRunner().invoke(S.app, ["validate", str(cert), "--rounds", "3", "--n", "300"])
    assert shown.exit_code == 0, shown.output
    assert "27,135 classes, 8.20 CPU-h in all" in shown.output
    assert re.search(r"stratified: estimate / truth \d\.\d{3}", shown.output)


def test_the_ratio_of_two_provers_totals_and_its_intervals() -> None:
    rng = np.random.default_rng(4)
    ours = rng.exponential(1.0, 50)
    est = E.paired_ratio(ours, 2 * ours, rng)
    # every resample keeps each class's pair, so a constant ratio has no spread
    assert est.total_s == pytest.approx(0.5) and est.low_s == pytest.approx(0.5) == est.high_s
    theirs = rng.exponential(1.0, 50)
    est = E.paired_ratio(ours, theirs, rng)
    assert est.total_s == pytest.approx(ours.sum() / theirs.sum()) and est.low_s < est.total_s < est.high_s
    # stratified: each prover's total is sum N_h x its stratum mean
    labels = np.array([0] * 25 + [1] * 25)
    got, a, b = E.stratified_ratio(np.array([100, 10]), labels, ours, theirs, rng)
    assert a == pytest.approx(100 * ours[:25].mean() + 10 * ours[25:].mean())
    assert b == pytest.approx(100 * theirs[:25].mean() + 10 * theirs[25:].mean())
    assert got.total_s == pytest.approx(a / b) and got.low_s < got.total_s < got.high_s


def _part(folder: Path, n: int, ids: list[int], seconds: list[float], **meta: str) -> None:
    """A certificate part as ``class_costs`` reads it: class ids, seconds, metadata."""
    folder.mkdir(exist_ok=True)
    table = pa.table({"class_id": pa.array(ids, pa.int64()), "seconds": seconds})
    pq.write_table(
        table.replace_schema_metadata({f"boggle.{k}": v for k, v in meta.items()}),
        folder / f"part-{n:05d}.parquet",
    )


def test_measurements_merge_later_folders_first_and_keep_a_session_window(tmp_path: Path) -> None:
    """A class proved again (where the other prover ran) replaces its first measurement; a
    session window keeps one machine's parts; a part's CPU scales its classes' wall seconds."""
    a, b = tmp_path / "a", tmp_path / "b"
    _part(a, 0, [1, 2], [1.0, 1.0], session="2026-12-05T06:26:27.903250+00:00")
    _part(a, 1, [3, 4], [1.0, 3.0], session="2026-12-05T12:48:27+00:00", cpu_s="8.0")  # 2 and 6 CPU s
    _part(a, 2, [5], [7.0])  # an old part: no session recorded
    _part(b, 0, [2], [4.0], session="2026-12-05T15:50:00+00:00")

    def got(*args: object) -> dict[int, float]:
        return S.measured(*args)  # type: ignore[arg-type]

    assert got([a]) == {1: 1.0, 2: 1.0, 3: 2.0, 4: 6.0, 5: 7.0}
    assert got([a, b]) == {1: 1.0, 2: 4.0, 3: 2.0, 4: 6.0, 5: 7.0}
    assert got([b, a]) == {1: 1.0, 2: 1.0, 3: 2.0, 4: 6.0, 5: 7.0}  # the later folder wins
    noon = S._instant("2026-12-05T12:40", "--since")
    assert noon == datetime(2026, 12, 5, 12, 40, tzinfo=UTC)  # a time without a zone is UTC
    assert got([a, b], noon) == {2: 4.0, 3: 2.0, 4: 6.0}  # the part without a session left out
    assert got([a, b], None, noon) == {1: 1.0, 2: 1.0}
    assert got([a, b], S._instant("2026-12-05T13:40:00+01:00", "--since")) == {2: 4.0, 3: 2.0, 4: 6.0}
    with pytest.raises(typer.BadParameter, match="no part of a session in the window"):
        S.measured([a], S._instant("2027-01-01", "--since"))
    with pytest.raises(typer.BadParameter, match="expected an ISO date-time"):
        S._instant("yesterday", "--before")


@pytest.mark.integration
@pytest.mark.skipif(not Path("/usr/bin/time").is_file(), reason="/usr/bin/time measures the C++'s peak RSS")
def test_the_cpp_costs_resume_and_compare_with_ours(tiny_dict: str, tmp_path: Path) -> None:
    """``cpp`` against a stand-in for the C++ prover (a script that logs its arguments and
    reports no boards): one line per class, the ids mapped to the C++'s, resumed where it stopped
    (a line cut short is proved again); ``compare`` pairs the two on the classes both did."""
    from pipeline.best.prove._anchor import cpp_ids
    from pipeline.best.prove._worker import proof_problem

    runner = CliRunner()
    base = tiny_proof_args(tiny_dict, tmp_path / "unused")[:-1]
    base[base.index("2x2")] = "2x3"
    proof = tmp_path / "pilot"
    done = runner.invoke(app, [*base, str(proof), "--limit-classes", "6", "--sample-seed", "1", "-q"])
    assert done.exit_code == 0, done.output
    anchor = tmp_path / "anchor"
    (anchor / "venv" / "bin").mkdir(parents=True)
    (anchor / "hybrid-boggle").mkdir()
    (anchor / "hybrid-boggle" / "cpp_boggle.so").write_bytes(b"")
    fake = anchor / "venv" / "bin" / "python"
    fake.write_text(  # some CPU, so that the C++'s figure is not 0
        f'#!/bin/sh\necho "$@" >> {tmp_path}/calls.txt\ni=0; while [ $i -lt 20000 ]; do i=$((i+1)); done\n'
        'echo "Found 0 breaking failure(s)"\n'
    )
    fake.chmod(0o755)
    costs = tmp_path / "cpp.jsonl"
    cmd = ["cpp", str(proof), "--out", str(costs), "--anchor-dir", str(anchor)]
    first = runner.invoke(S.app, [*cmd, "--limit", "4"])
    assert first.exit_code == 0, first.output
    rows = [json.loads(ln) for ln in costs.read_text().splitlines()]
    ids = class_costs(proof)[0].tolist()
    first = [ids[k] for k in np.random.default_rng(S.CPP_ORDER_SEED).permutation(len(ids))][:4]
    assert [r["class_id"] for r in rows] == first  # a fixed shuffle of ours, not the lowest ids
    assert all(datetime.fromisoformat(r["at"]).tzinfo is not None for r in rows)  # when, in UTC
    space = proof_problem(proof)[0].space
    assert [r["cpp_id"] for r in rows] == cpp_ids(
        space.digits(np.array(first)).tolist(), space.radices.tolist()
    )
    calls = (tmp_path / "calls.txt").read_text().splitlines()
    assert len(calls) == 5 and calls[0].split()[calls[0].split().index("--board_ids") + 1] == "0"  # start-up
    assert [c.split()[c.split().index("--board_ids") + 1] for c in calls[1:]] == [
        str(r["cpp_id"]) for r in rows
    ]
    costs.write_text(costs.read_text() + '{"class_id": ' + str(ids[4]) + ', "cpu')  # a kill mid-line
    again = runner.invoke(S.app, cmd)
    assert again.exit_code == 0, again.output
    assert f"{len(ids) - 4} of {len(ids)} classes to prove" in again.output
    assert sorted(cpp_costs(costs)) == sorted(ids)
    shown = runner.invoke(S.app, ["compare", str(proof), "--cpp", str(costs), "--no-net"])
    assert shown.exit_code == 0, shown.output
    assert (
        f"{len(ids)} classes proved by both" in shown.output
        and "ours / C++ (as a random sample): " in shown.output
    )

    # by strata: a stratum with no class proved by both is named and left out of both totals
    design = tmp_path / "design.json"
    labels = [h % 3 for h in range(len(ids))]
    design.write_text(
        json.dumps({"class_ids": ids, "strata": labels, "strata_sizes": [10, 20, 30], "classes_all": 60})
    )
    line = '{{"class_id": {}, "cpu_s": 1.0, "startup_s": 0.0, "found": 0}}\n'
    costs.write_text("".join(line.format(i) for i, h in zip(ids, labels, strict=True) if h != 2))
    shown = runner.invoke(S.app, ["compare", str(proof), "--cpp", str(costs), "--design", str(design)])
    assert shown.exit_code == 0, shown.output
    assert "over the 30 classes in the strata with pairs (1 of 3 strata have none)" in shown.output
    costs.write_text("".join(line.format(i) for i in ids))
    shown = runner.invoke(S.app, ["compare", str(proof), "--cpp", str(costs), "--design", str(design)])
    assert "over all 60 classes: " in shown.output, shown.output
    # classes measured again (on the machine ours ran on) in a later file replace their first line
    again_file = tmp_path / "cpp-again.jsonl"
    again_file.write_text(
        line.replace("1.0", "3.0").format(ids[0]) + line.replace("1.0", "3.0").format(ids[1])
    )
    both = ["compare", str(proof), "--cpp", str(costs), "--cpp", str(again_file), "--no-net"]
    shown = runner.invoke(S.app, both)
    assert shown.exit_code == 0, shown.output
    assert f"the C++ {len(ids) + 4:,.1f} (with its start-up)" in shown.output
    shown = runner.invoke(S.app, [*both[:2], str(proof), *both[2:]])  # the same folder twice: no change
    assert f"{len(ids)} classes proved by both" in shown.output
    # a session window on ours: the proof's one session is inside the first, outside the second
    shown = runner.invoke(S.app, [*both, "--since", "2026-01-01"])
    assert f"{len(ids)} classes proved by both" in shown.output, shown.output
    shown = runner.invoke(S.app, [*both, "--before", "2026-01-01"])
    assert shown.exit_code == 2 and "no part of a session in the window" in re.sub(
        r"[\s│]+", " ", shown.output
    )
    # the C++'s CPU adding up to nothing (its start-up taken off): refused, not a division by 0
    costs.write_text(costs.read_text().replace('"startup_s": 0.0', '"startup_s": 1.0'))
    shown = runner.invoke(S.app, ["compare", str(proof), "--cpp", str(costs), "--design", str(design)])
    assert shown.exit_code == 2, shown.output
    assert "add up to 0 CPU s: no ratio" in re.sub(r"[\s│]+", " ", shown.output)

    # two runs on disjoint shards share one costs file: every class once, none twice
    shared = tmp_path / "shared.jsonl"
    for k in ("1/2", "0/2"):
        half = runner.invoke(S.app, [*cmd[:3], str(shared), *cmd[4:], "--shard", k])
        assert half.exit_code == 0, half.output
        got = [json.loads(ln)["class_id"] for ln in shared.read_text().splitlines()]
        assert all(i % 2 == 1 for i in got[: sum(i % 2 for i in ids)]), got
    assert sorted(got) == sorted(ids)
    bad = runner.invoke(S.app, [*cmd, "--shard", "2/2"])
    assert bad.exit_code == 2 and "expected K/N with 0 <= K < N" in re.sub(r"[\s│]+", " ", bad.output)


def test_a_costs_line_cut_short_is_dropped_and_shards_append_whole_lines(tmp_path: Path) -> None:
    """``cpp``'s appends: a last line a kill cut short (another shard's) is dropped before the
    next line, and runs writing the same file at once leave every line whole."""
    from concurrent.futures import ThreadPoolExecutor

    costs = tmp_path / "cpp.jsonl"
    costs.write_text('{"class_id": 1}\n{"class_id": 2, "cpu')
    append_cost_line(costs, '{"class_id": 3}')
    assert costs.read_text() == '{"class_id": 1}\n{"class_id": 3}\n'
    append_cost_line(costs, None)  # whole already: left as it is
    assert costs.read_text() == '{"class_id": 1}\n{"class_id": 3}\n'
    lines = [json.dumps({"class_id": i, "pad": "x" * (i % 5000)}) for i in range(400)]
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda ln: append_cost_line(costs, ln), lines))
    got = costs.read_text().splitlines()[2:]
    assert sorted(got) == sorted(lines)
