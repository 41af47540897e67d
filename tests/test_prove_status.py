"""``boggle prove --status``: what a proof's directory holds, read without touching it, and the
stratified estimate of the CPU left."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from pipeline.best.prove import ProveSummary, run_prove
from pipeline.best.prove._certificate import canonical_compact
from pipeline.best.prove._job import META_CPU
from pipeline.best.prove._status import estimate_left, proof_status
from pipeline.cli import render
from pipeline.errors import EXIT_BAD_INPUT, EXIT_OUTPUT_CONFLICT
from pipeline.store._flock import run_lock
from tests.conftest import one_error_line, part_bytes, run_boggle, run_config
from tests.test_lifecycle import _Stop, _stop_after, flip, prove_config


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory, tiny_dict: str) -> tuple[Path, ProveSummary]:
    out = tmp_path_factory.mktemp("status") / "finished"
    return out, run_prove(prove_config(tiny_dict, out))


@pytest.fixture(scope="module")
def stopped(tmp_path_factory: pytest.TempPathFactory, tiny_dict: str) -> Path:
    """A proof stopped after three of its six parts (copy it before changing it)."""
    out = tmp_path_factory.mktemp("status") / "stopped"
    with pytest.raises(_Stop):
        run_prove(prove_config(tiny_dict, out), progress=_stop_after(3))
    assert len(list(out.glob("part-*.parquet"))) == 3
    return out


def _part_cpu(path: Path) -> float:
    return float(pq.read_schema(path).metadata[META_CPU.encode()])


def _found(paths: list[Path]) -> set[str]:
    t = pq.read_table(paths, columns=["found_boards"]) if paths else None
    return {b for bs in (t.column(0).to_pylist() if t is not None else []) for b in bs}


def test_status_of_a_finished_proof_is_its_manifest_verified(
    finished: tuple[Path, ProveSummary], tmp_path: Path
) -> None:
    out = shutil.copytree(finished[0], tmp_path / "p")
    res = finished[1]
    st = proof_status(str(out))
    assert st.finished and st.distrusted == [] and st.left is None
    assert (st.parts_verified, st.parts_total, st.classes_done) == (6, 6, res.classes_total)
    assert st.boards == [(b.board, b.score) for b in res.boards] and st.boards
    assert (st.eliminated, st.boards_scored) == (res.eliminated, res.boards_scored)
    assert st.cpu_s == pytest.approx(res.cpu_s_recorded, abs=1e-3) and st.parts_cpu == 6
    lines = render.prove_status(st)
    manifest = json.loads((out / "_SUCCESS").read_text())
    assert lines[0].startswith(f"{out}: finished proof")
    assert f"{manifest['eliminated']:,} classes eliminated by the bound" in lines[2]
    assert lines[3:5] == [f"{s}\t{b}" for b, s in st.boards[:2]]
    assert not any(ln.startswith("left:") for ln in lines)
    # damage is named, never certified; a part that is not the proof's is named, not counted
    flip(out / "part-00002.parquet", 60)
    shutil.copy(out / "part-00003.parquet", out / "part-00017.parquet")
    st = proof_status(str(out))
    assert st.parts_verified == 5
    assert st.distrusted == [
        ("part-00002.parquet", "checksum differs from the one recorded (damaged or replaced)"),
        ("part-00017.parquet", "not part of the finished job"),
    ]


def test_status_of_an_unfinished_proof_counts_only_parts_that_verify(
    tiny_dict: str, stopped: Path, finished: tuple[Path, ProveSummary], tmp_path: Path
) -> None:
    out, other = shutil.copytree(stopped, tmp_path / "p"), tmp_path / "other"
    run_prove(prove_config(tiny_dict, other, threshold=5))
    cfg = prove_config(tiny_dict, out)
    clean = finished[1].boards
    good = sorted(out.glob("part-*.parquet"))
    st = proof_status(str(out))
    assert not st.finished and st.distrusted == []
    assert st.parts_verified == len(good) and st.parts_total == 6
    assert st.classes_done == sum(pq.read_metadata(p).num_rows for p in good)
    assert st.cpu_s == pytest.approx(sum(_part_cpu(p) for p in good)) and st.parts_cpu == len(good)
    assert {b for b, _ in st.boards} <= {b.board for b in clean}
    assert st.left is not None and st.left.parts_sampled == len(good) and st.left.cpu_s > 0
    assert st.left.low_s <= st.left.cpu_s <= st.left.high_s

    # real damage: a flipped part, a part of another proof with its record, a part without one
    flip(good[0], 80)
    foreign = sorted(set(range(6)) - {int(p.stem[-5:]) for p in good})[0]
    shutil.copy(other / f"part-{foreign:05d}.parquet", out / f"part-{foreign:05d}.parquet")
    shutil.copy(other / "_parts" / f"_part-{foreign:05d}.json", out / "_parts" / f"_part-{foreign:05d}.json")
    (out / "_parts" / f"_part-{int(good[1].stem[-5:]):05d}.json").unlink()
    st = proof_status(str(out))
    why = dict(st.distrusted)
    assert why == {
        good[0].name: "checksum differs from the one recorded (damaged or replaced)",
        f"part-{foreign:05d}.parquet": "written by a run with another config",
        good[1].name: "no record of it being committed by this run",
    }
    trusted = good[2:]
    assert st.parts_verified == len(trusted)
    assert st.classes_done == sum(pq.read_metadata(p).num_rows for p in trusted)
    assert {b for b, _ in st.boards} == {canonical_compact(b, 2, 3) for b in _found(trusted)}
    # what status called distrusted is what the resumed proof recomputes: the result is the clean one's
    notes: list[str] = []
    res = run_prove(cfg, note=notes.append)
    assert sum("recomputing" in n for n in notes) == 3, notes
    assert res.boards == clean
    assert proof_status(str(out)).finished


def test_a_stopped_proof_copied_elsewhere_resumes_there(
    stopped: Path, finished: tuple[Path, ProveSummary], tiny_dict: str, tmp_path: Path
) -> None:
    """The directory is all a resume needs (how certificates/ carries a proof between
    machines): copied without its lock to another folder, a real ``boggle prove`` there trusts
    every part, rewrites none, proves the rest, and certifies what the uninterrupted proof did."""
    out = tmp_path / "elsewhere" / "proof"
    shutil.copytree(stopped, out, ignore=shutil.ignore_patterns(".lock"))
    before = part_bytes(out)
    cfg = prove_config(tiny_dict, out)  # the stopped proof's config, as command-line options
    res = run_boggle(
        "prove",
        "-d",
        tiny_dict,
        "--shape",
        cfg.shape,
        "-t",
        str(cfg.threshold),
        "--classes",
        str(cfg.classes),
        "--chunk-size",
        str(cfg.chunk_size),
        "-j",
        "1",
        "-o",
        str(out),
        timeout=240,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    assert "recomputing" not in res.stderr, res.stderr
    after = part_bytes(out)
    assert {k: after[k] for k in before} == before and len(after) == 6
    st = proof_status(str(out))
    assert st.finished and st.distrusted == []
    assert [(b.board, b.score) for b in finished[1].boards] == st.boards


def test_cli_status_reads_a_locked_proof_in_another_process_and_writes_nothing(
    tiny_dict: str, stopped: Path, tmp_path: Path
) -> None:
    out = shutil.copytree(stopped, tmp_path / "p")
    before = {p.relative_to(out): p.stat().st_mtime_ns for p in out.rglob("*")}
    with run_lock(out):  # as a running proof holds it
        res = run_boggle("prove", "--status", "-o", str(out), timeout=120)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    n = len(list(out.glob("part-*.parquet")))
    assert lines[0].startswith(f"{out}: unfinished proof, {tiny_dict} 2x3, T=20, classes 'ae rst'")
    assert lines[1].startswith(f"parts: {n} of 6 verified (") and lines[1].endswith(", 0 not")
    assert any(ln.startswith("left: ") and "CPU-h (95% interval" in ln for ln in lines), lines
    assert {p.relative_to(out): p.stat().st_mtime_ns for p in out.rglob("*")} == before


def test_cli_status_refuses_what_is_not_a_proof(tiny_dict: str, stopped: Path, tmp_path: Path) -> None:
    from pipeline.runner import run_job

    res = run_boggle("prove", "--status", "-o", str(tmp_path / "none"))
    assert res.returncode == EXIT_BAD_INPUT
    one_error_line(res, "no proof here")
    run_dir = tmp_path / "run"
    run_job(run_config(tiny_dict, run_dir))
    res = run_boggle("prove", "--status", "-o", str(run_dir))
    assert res.returncode == EXIT_BAD_INPUT
    one_error_line(res, "not a boggle prove record")
    proof = shutil.copytree(stopped, tmp_path / "p")
    record = proof / "_run.json"
    record.write_text(record.read_text().replace('"threshold": 20', '"threshold": 2', 1))
    res = run_boggle("prove", "--status", "-o", str(proof))
    assert res.returncode == EXIT_OUTPUT_CONFLICT
    one_error_line(res, "_run.json", "changed after it was written")


def test_cli_status_of_a_damaged_part_exits_4_after_the_report(
    finished: tuple[Path, ProveSummary], stopped: Path, tmp_path: Path
) -> None:
    """A flipped byte in a part: the report names it, then one error line and exit 4 (a finished
    proof refuses the part, an unfinished one recomputes it); a part a running proof has not yet
    recorded is no damage."""
    for kind, source in (("finished", finished[0]), ("unfinished", stopped)):
        out = shutil.copytree(source, tmp_path / kind)
        part = sorted(out.glob("part-*.parquet"))[0]
        flip(part, 60)
        res = run_boggle("prove", "--status", "-o", str(out), timeout=120)
        assert res.returncode == EXIT_OUTPUT_CONFLICT, res.stderr
        assert f"{part.name}: checksum differs" in res.stdout
        one_error_line(res, str(out), "1 part damaged")
    out = shutil.copytree(stopped, tmp_path / "committing")
    part = sorted(out.glob("part-*.parquet"))[0]
    (out / "_parts" / f"_part-{part.stem[-5:]}.json").unlink()
    res = run_boggle("prove", "--status", "-o", str(out), timeout=120)
    assert res.returncode == 0, res.stderr
    assert ", 1 not" in res.stdout


# ---------------------------------------------------------------- the estimate


def test_estimate_is_exact_for_a_uniform_cost_and_needs_two_parts() -> None:
    rows = [64] * 20 + [7]
    done = {0, 5, 11}
    left = estimate_left({c: 64 * 2.0 for c in done}, {c: 64 for c in done}, rows, done)
    assert left is not None and left.parts_sampled == 3 and left.strata == 8
    assert left.cpu_s == pytest.approx(2.0 * (64 * 17 + 7))
    assert left.low_s == pytest.approx(left.cpu_s) and left.high_s == pytest.approx(left.cpu_s)
    assert estimate_left({3: 10.0}, {3: 64}, rows, {3}) is None
    assert estimate_left({}, {}, rows, set()) is None


def test_estimate_is_stratified_so_an_id_order_prefix_does_not_bias_it() -> None:
    # cost per class = the chunk's number: a proof that ran its first half in id order, then a
    # shuffled stretch that took each later range's first and last chunk
    n, per = 64, 10
    rows = [per] * n
    done = set(range(32)) | {c for s in range(4, 8) for c in (8 * s, 8 * s + 7)}
    cpu = {c: float(c * per) for c in done}
    truth = sum(c * per for c in range(n) if c not in done)
    left = estimate_left(cpu, dict.fromkeys(done, per), rows, done)
    assert left is not None and left.cpu_s == pytest.approx(truth)
    assert left.low_s <= truth <= left.high_s
    naive = np.mean([cpu[c] for c in done]) * (n - len(done))  # the unstratified mean
    assert naive < 0.7 * truth
    # one range per chunk would charge every chunk left at its own range's rate: fewer than two
    # parts in a range fall back to the pooled rate
    pooled = estimate_left(cpu, dict.fromkeys(done, per), rows, done, strata=1)
    assert pooled is not None and pooled.cpu_s == pytest.approx(naive)


def test_status_of_a_finished_sample_says_so(tiny_dict: str, tmp_path: Path) -> None:
    """A --limit-classes sample ends without _SUCCESS: once all its parts verify, --status calls
    it a finished sample of N classes, not an unfinished proof with 0 classes left."""
    out = tmp_path / "sample"
    res = run_prove(dataclasses.replace(prove_config(tiny_dict, out), limit_classes=6))
    assert res.status == "sample" and res.classes_done == 6 and not (out / "_SUCCESS").exists()
    st = proof_status(str(out))
    assert st.sample and st.sample_done and not st.finished
    assert (st.classes_done, st.classes_total, st.classes_all) == (6, 6, res.classes_total)
    assert st.classes_all > 6
    lines = render.prove_status(st)
    assert f"finished sample of 6 of the proof's {st.classes_all} classes" in lines[0], lines
    assert not any("unfinished" in ln or ln.startswith(("left:", "so far:")) for ln in lines), lines
    # a sample stopped half way is an unfinished sample, with what is left of it
    (out / "part-00001.parquet").unlink()
    st = proof_status(str(out))
    assert st.sample and not st.sample_done
    lines = render.prove_status(st)
    assert "unfinished sample of 6 of the proof's" in lines[0]
    assert any(ln.startswith("left: 2 classes") for ln in lines), lines
