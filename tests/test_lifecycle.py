"""The one job lifecycle (pipeline.store.JobDir) under real damage, for run, prove and optimize:
nothing wrong is certified or read, every damaged file is named, --overwrite repairs.

The random-corruption tests flip single bits in (and truncate) the parts, part records,
records and manifests of a finished run and a finished proof; every outcome must be a refusal
(DamagedRunError / OutputConflictError, exit 4) or data equal to the clean job's.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from pipeline import store
from pipeline.best.prove import ProveConfig, run_prove
from pipeline.errors import EXIT_OUTPUT_CONFLICT, BoggleError, DamagedRunError, OutputConflictError
from pipeline.runner import run_job
from tests.conftest import (
    boggle_command,
    group_processes,
    job_environment,
    one_error_line,
    read_side_json,
    run_boggle,
    run_config,
    side_path,
    write_side,
)

SLOW_FLIPS = 240  # per kind of job in the slow suite
FAST_FLIPS = 30  # per kind of job in the default run


def prove_config(dictionary: str, out: Path | None, threshold: int = 20) -> ProveConfig:
    return ProveConfig(
        dictionary,
        shape="2x3",
        threshold=threshold,
        classes="ae rst",
        chunk_size=4,
        n_jobs=1,
        out=str(out) if out else None,
    )


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory: pytest.TempPathFactory, enable2k_path: str) -> Path:
    out = tmp_path_factory.mktemp("clean") / "run"
    assert run_job(run_config(enable2k_path, out)).status == "complete"
    return out


@pytest.fixture(scope="module")
def clean_proof(tmp_path_factory: pytest.TempPathFactory, tiny_dict: str) -> Path:
    out = tmp_path_factory.mktemp("clean") / "proof"
    assert run_prove(prove_config(tiny_dict, out)).status == "complete"
    return out


def copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


# ---------------------------------------------------------------- prove


def test_resumed_proof_distrusts_a_part_from_another_threshold(tiny_dict: str, tmp_path: Path) -> None:
    """The outside trial: a part (and its record) copied from a proof with another threshold
    into an unfinished proof is recomputed, not certified."""
    other = tmp_path / "other"
    run_prove(prove_config(tiny_dict, other, threshold=5))
    out = tmp_path / "p"
    cfg = prove_config(tiny_dict, out)
    with pytest.raises(_Stop):
        run_prove(cfg, progress=_stop_after(2))
    shutil.copy(other / "part-00003.parquet", out / "part-00003.parquet")
    shutil.copy(other / "_parts" / "_part-00003.json", out / "_parts" / "_part-00003.json")
    notes: list[str] = []
    res = run_prove(cfg, note=notes.append)
    clean = run_prove(prove_config(tiny_dict, None))
    assert res.boards == clean.boards and res.status == "resumed"
    assert any("part-00003.parquet: written by a run with another config" in n for n in notes), notes
    assert_certificate_equal(out, tmp_path, tiny_dict)


def test_resumed_proof_recomputes_flipped_and_truncated_parts(tiny_dict: str, tmp_path: Path) -> None:
    out = tmp_path / "p"
    cfg = prove_config(tiny_dict, out)
    with pytest.raises(_Stop):
        run_prove(cfg, progress=_stop_after(4))
    parts = sorted(out.glob("part-*.parquet"))
    assert len(parts) >= 2
    flip(parts[0], 100)
    parts[1].write_bytes(parts[1].read_bytes()[:50])
    notes: list[str] = []
    res = run_prove(cfg, note=notes.append)
    assert res.boards == run_prove(prove_config(tiny_dict, None)).boards
    assert sum("recomputing" in n for n in notes) == 2, notes
    assert_certificate_equal(out, tmp_path, tiny_dict)


def more_damage(*kinds: str) -> list[Any]:
    """Kinds of damage checked only with ``-m slow``: the default run checks one kind of each,
    and its random corruption test flips bits in (or truncates) random files of both jobs."""
    return [pytest.param(kind, marks=pytest.mark.slow) for kind in kinds]


@pytest.mark.parametrize(
    "damage", ["truncate", *more_damage("flip", "delete", "extra", "foreign", "boards", "manifest")]
)
def test_finished_proof_refuses_damage_then_overwrite_repairs(
    clean_proof: Path, tiny_dict: str, tmp_path: Path, damage: str
) -> None:
    out = copy(clean_proof, tmp_path / "p")
    part = out / "part-00001.parquet"
    if damage == "truncate":
        part.write_bytes(part.read_bytes()[:-10])
    elif damage == "delete":
        part.unlink()
    elif damage == "extra":
        shutil.copy(part, out / "part-00099.parquet")
    elif damage == "foreign":
        other = tmp_path / "other"
        run_prove(prove_config(tiny_dict, other, threshold=5))
        shutil.copy(other / "part-00001.parquet", part)
    elif damage == "flip":
        flip(part, part.stat().st_size // 2)
    elif damage == "boards":
        flip(out / "_boards.pq", 40)
    else:
        text = (out / "_SUCCESS").read_text()
        (out / "_SUCCESS").write_text(text.replace('"eliminated": ', '"eliminated": 1', 1))
    if damage in ("truncate", "manifest"):  # a real process, as an operator runs it
        res = run_boggle(
            "prove",
            "-d",
            tiny_dict,
            "--shape",
            "2x3",
            "-t",
            "20",
            "--classes",
            "ae rst",
            "--chunk-size",
            "4",
            "-j",
            "1",
            "-o",
            str(out),
            "-q",
        )
        assert res.returncode == EXIT_OUTPUT_CONFLICT, res.stderr
        line = one_error_line(res)
        assert "damaged" in line or "changed after it was written" in line, line
    else:
        with pytest.raises(DamagedRunError, match=r"damaged files.*--overwrite"):
            run_prove(prove_config(tiny_dict, out))
    repaired = run_prove(_replace(prove_config(tiny_dict, out), overwrite=True))
    assert repaired.boards == run_prove(prove_config(tiny_dict, None)).boards
    assert_certificate_equal(out, tmp_path, tiny_dict)


def test_unreadable_success_is_refused_and_overwrite_repairs(
    clean_run: Path, enable2k_path: str, tmp_path: Path
) -> None:
    out = copy(clean_run, tmp_path / "run")
    side_path(out).write_bytes(b"\x00\xff not json")
    with pytest.raises(DamagedRunError, match="unreadable manifest"):
        store.open_run(out)
    with pytest.raises(DamagedRunError, match="--overwrite"):
        run_job(run_config(enable2k_path, out))
    run_job(run_config(enable2k_path, out), overwrite=True)
    assert store.read_run_table(out).equals(store.read_run_table(clean_run))


# ---------------------------------------------------------------- readers


@pytest.mark.parametrize(
    "damage", ["flip", *more_damage("extra", "truncate", "foreign-seed", "outside-path")]
)
def test_readers_refuse_a_damaged_run(
    clean_run: Path, enable2k_path: str, tmp_path: Path, damage: str
) -> None:
    import pipeline

    out = copy(clean_run, tmp_path / "run")
    part = out / "part-00001.parquet"
    if damage == "flip":
        flip(part, part.stat().st_size // 3)
    elif damage == "truncate":
        part.write_bytes(part.read_bytes()[:-1])
    elif damage == "extra":  # what an orphaned worker of an earlier run would have left
        shutil.copy(part, out / "part-00007.parquet")
    elif damage == "foreign-seed":
        other = tmp_path / "seed7"
        run_job(run_config(enable2k_path, other, seed=7))
        shutil.copy(other / "part-00001.parquet", part)
    else:
        from pipeline.store._manifest import seal_of

        elsewhere = copy(clean_run, tmp_path / "other-run")
        manifest = read_side_json(out)
        manifest["parts"][1]["file"] = f"../{elsewhere.name}/part-00001.parquet"
        manifest["seal"] = seal_of(manifest)
        write_side(out, "_SUCCESS", manifest)
    for read in (store.read_run_table, pipeline.read_run, pipeline.run_relation, pipeline.read_run_pandas):
        with pytest.raises(DamagedRunError, match=r"part-0000[17]\.parquet"):
            read(out)
    if damage in ("flip", "extra"):  # a real process, as an analyst runs it
        res = run_boggle("analyze", str(out), "--out", str(tmp_path / "report"), "-q")
        assert res.returncode == EXIT_OUTPUT_CONFLICT
        assert "part-0000" in one_error_line(res)
        assert not (tmp_path / "report").exists()


def test_rejects_file_is_checked_against_the_manifest(tmp_path: Path, enable2k_path: str) -> None:
    boards = tmp_path / "boards.txt"
    boards.write_text("catsdogsbirdfish\nnot-a-board!\n")
    out = tmp_path / "run"
    run_job(run_config(enable2k_path, out, source="ingest", files=[str(boards)]))
    assert [r["line"] for r in store.read_rejects(out)] == ["2"]
    flip(side_path(out, "_rejects.csv"), 30)
    with pytest.raises(DamagedRunError, match=r"_rejects\.csv: checksum differs"):
        store.read_rejects(out)
    with pytest.raises(DamagedRunError, match=r"_rejects\.csv"):
        store.read_run_table(out)


def test_verify_false_skips_checksums_but_not_sizes(clean_run: Path, tmp_path: Path) -> None:
    out = copy(clean_run, tmp_path / "run")
    part = out / "part-00000.parquet"
    flip(part, 60)  # inside the data pages: the footer still reads
    with pytest.raises(DamagedRunError, match="checksum"):
        store.open_run(out)
    assert len(store.open_run(out, verify=False).parts) == 3
    part.write_bytes(part.read_bytes()[:-1])
    with pytest.raises(DamagedRunError, match="bytes"):
        store.open_run(out, verify=False)


# ---------------------------------------------------------------- optimize


def test_optimize_rerun_interrupted_keeps_the_previous_result(enable2k_path: str, tmp_path: Path) -> None:
    from pipeline.best.optimize import OptimizeConfig, read_results, run_optimize
    from pipeline.best.optimize._output import INTERRUPTED

    out = tmp_path / "opt"
    cfg = OptimizeConfig(
        enable2k_path, shape="3x3", restarts=2, iterations=200, seed=3, n_jobs=1, out=str(out)
    )
    first = run_optimize(cfg)
    before = read_results(out)
    assert before.num_rows == len(first.boards)
    files = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}

    def interrupt(p: Any) -> None:
        if p.event == "best" and p.best_score > 0:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_optimize(cfg, progress=interrupt)
    # the finished result is untouched; the interrupted search's best so far is beside it
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file() and p.name != INTERRUPTED} == files
    assert read_results(out).equals(before)
    import json

    unfinished = json.loads((out / INTERRUPTED).read_text())
    assert unfinished["status"] == "unfinished" and unfinished["boards"][0]["score"] > 0
    again = run_optimize(cfg)  # a finished re-run replaces the result and clears the note
    assert not (out / INTERRUPTED).exists()
    assert read_results(out).column("score").to_pylist() == [b.score for b in again.boards]
    flip(out / "part-00000.parquet", 80)
    with pytest.raises(DamagedRunError):
        read_results(out)


# ---------------------------------------------------------------- random corruption


def corrupt(rng: random.Random, job: Path) -> str:
    """One random single-bit flip or truncation of a part, a part record, the record or the
    manifest of ``job``; returns what it did."""
    files = [p for p in job.rglob("*") if p.is_file() and p.name != ".lock"]
    target = rng.choice(files)
    data = bytearray(target.read_bytes())
    if rng.random() < 0.2 and data:
        cut = rng.randrange(len(data))
        target.write_bytes(bytes(data[:cut]))
        return f"truncated {target.relative_to(job)} to {cut}"
    bit = rng.randrange(len(data) * 8)
    data[bit // 8] ^= 1 << (bit % 8)
    target.write_bytes(bytes(data))
    return f"flipped bit {bit} of {target.relative_to(job)}"


def _run_trials(
    n: int, clean_run: Path, clean_proof: Path, enable2k_path: str, tiny_dict: str, tmp: Path
) -> None:
    rng = random.Random(20261201)
    clean_table = store.read_run_table(clean_run)
    clean_boards = run_prove(prove_config(tiny_dict, clean_proof)).boards
    refused = {"run": 0, "prove": 0}
    for i in range(n):
        out = copy(clean_run, tmp / f"r{i}")
        what = corrupt(rng, out)
        try:
            got = store.read_run_table(out)
        except DamagedRunError:
            refused["run"] += 1
        else:
            assert got.equals(clean_table), f"silently wrong read after {what}"
        try:
            summary = run_job(run_config(enable2k_path, out))
        except (DamagedRunError, OutputConflictError):
            pass
        else:
            assert store.read_run_table(out).equals(clean_table), f"wrong run after {what}"
            assert summary.boards == clean_table.num_rows
        shutil.rmtree(out)

        proof = copy(clean_proof, tmp / f"p{i}")
        what = corrupt(rng, proof)
        try:
            res = run_prove(prove_config(tiny_dict, proof))
        except (DamagedRunError, OutputConflictError):
            refused["prove"] += 1
        else:
            assert res.boards == clean_boards, f"wrong certificate after {what}"
            assert_certificate_equal(proof, tmp / f"c{i}", tiny_dict, clean_proof)
        shutil.rmtree(proof)
    # most damage is detected (the rest hit bytes no reader depends on, e.g. a record of a
    # finished run); a test that detected nothing would be testing nothing
    assert refused["run"] > n // 3 and refused["prove"] > n // 3, refused


def test_random_corruption_is_never_read_or_certified(
    clean_run: Path, clean_proof: Path, enable2k_path: str, tiny_dict: str, tmp_path: Path
) -> None:
    _run_trials(FAST_FLIPS, clean_run, clean_proof, enable2k_path, tiny_dict, tmp_path)


@pytest.mark.slow
def test_random_corruption_many(
    clean_run: Path, clean_proof: Path, enable2k_path: str, tiny_dict: str, tmp_path: Path
) -> None:
    _run_trials(SLOW_FLIPS, clean_run, clean_proof, enable2k_path, tiny_dict, tmp_path)


# ---------------------------------------------------------------- helpers


class _Stop(Exception):
    pass


def _stop_after(n: int) -> Any:
    seen: list[Any] = []

    def progress(p: Any) -> None:
        seen.append(p)
        if len(seen) > n:
            raise _Stop

    return progress


def _replace(cfg: Any, **changes: Any) -> Any:
    import dataclasses

    return dataclasses.replace(cfg, **changes)


def flip(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x10
    path.write_bytes(bytes(data))


def assert_certificate_equal(out: Path, tmp: Path, tiny_dict: str, clean: Path | None = None) -> None:
    """The certificate and boards table of ``out`` equal a clean proof's (seconds aside)."""
    if clean is None:
        clean = tmp / "clean-proof"
        if not clean.exists():
            run_prove(prove_config(tiny_dict, clean))
    for name in ("_boards.pq",):
        assert pq.read_table(out / name).equals(pq.read_table(clean / name))
    got = pq.read_table(sorted(out.glob("part-*.parquet"))).drop(["seconds"])
    want = pq.read_table(sorted(clean.glob("part-*.parquet"))).drop(["seconds"])
    assert got.equals(want)


def test_job_dir_refuses_another_kind_of_job(clean_proof: Path, enable2k_path: str, tmp_path: Path) -> None:
    out = copy(clean_proof, tmp_path / "p")
    with pytest.raises(BoggleError, match="boggle-prove directory, not a boggle-run one"):
        run_job(run_config(enable2k_path, out))


@pytest.mark.slow
def test_ctrl_c_of_an_optimize_rerun_keeps_the_result_and_prints_the_best(
    enable2k_path: str, tmp_path: Path
) -> None:
    """A real process and a real SIGINT to its process group, as Ctrl-C in a terminal sends."""
    import signal
    import time

    from pipeline.best.optimize import read_results
    from pipeline.best.optimize._output import INTERRUPTED

    out = tmp_path / "opt"
    # Each restart runs for 20 s whatever the machine's speed, so the signal, sent once the
    # workers run, lands mid-run: a fixed iteration count finished before the signal on CI,
    # whose re-run had a warm lexicon cache that the first run had to build.
    args = [
        "optimize",
        "-d",
        enable2k_path,
        "--shape",
        "4x4",
        "--restarts",
        "2",
        "-j",
        "2",
        "--seed",
        "5",
        "--iterations",
        "100000000",
        "--time-limit",
        "20",
        "-o",
        str(out),
        "-q",
    ]
    first = run_boggle(*args)
    assert first.returncode == 0, first.stderr
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    proc = subprocess.Popen(
        boggle_command(*args),
        stderr=subprocess.PIPE,
        text=True,
        env=job_environment(),
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while len(group_processes(proc.pid)) < 3 and time.monotonic() < deadline:  # the CLI and 2 workers
        time.sleep(0.2)
    time.sleep(2.0)
    assert proc.poll() is None, "the re-run ended before the signal"
    os.killpg(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "interrupted" in stderr and "Traceback" not in stderr
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file() and p.name != INTERRUPTED} == before
    assert read_results(out).num_rows > 0
    if (out / INTERRUPTED).exists():  # written on the signal: the boards reported before it, if any
        import json

        found = json.loads((out / INTERRUPTED).read_text(encoding="utf-8"))["boards"]
        assert ("unfinished: best so far" if found else "unfinished: no board found yet") in stderr


def test_a_word_length_cap_other_than_the_default_is_part_of_the_identity(
    clean_run: Path, enable2k_path: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Words over the cap are dropped, so a run resumed under another cap would mix word lists."""
    out = copy(clean_run, tmp_path / "run")
    monkeypatch.setenv("BOGGLE_LEXICON_MAX_WORD", "7")
    with pytest.raises(OutputConflictError, match="lexicon_max_word"):
        run_job(run_config(enable2k_path, out))
    monkeypatch.delenv("BOGGLE_LEXICON_MAX_WORD")
    assert run_job(run_config(enable2k_path, out)).status == "already complete"


def test_prove_and_optimize_write_a_summary_json(
    clean_proof: Path, tiny_dict: str, enable2k_path: str, tmp_path: Path
) -> None:
    import json

    from typer.testing import CliRunner

    from pipeline.cli import app

    out = copy(clean_proof, tmp_path / "p")
    summary = tmp_path / "prove.json"
    args = [
        "prove",
        "-d",
        tiny_dict,
        "--shape",
        "2x3",
        "-t",
        "20",
        "--classes",
        "ae rst",
        "--chunk-size",
        "4",
        "-j",
        "1",
        "-o",
        str(out),
        "-q",
        "--summary-json",
        str(summary),
    ]
    assert CliRunner().invoke(app, args).exit_code == 0
    record = json.loads(summary.read_text())
    clean = run_prove(prove_config(tiny_dict, None))
    assert (
        record["command"] == "prove" and record["status"] == "already complete" and record["exit_code"] == 0
    )
    assert record["boards"] == len(clean.boards) and record["best_score"] == clean.boards[0].score
    flip(out / "part-00000.parquet", 50)
    assert CliRunner().invoke(app, args).exit_code == EXIT_OUTPUT_CONFLICT
    record = json.loads(summary.read_text())
    assert record["exit_code"] == EXIT_OUTPUT_CONFLICT and record["status"] == "failed"
    assert "damaged" in record["message"]

    opt = tmp_path / "optimize.json"
    res = CliRunner().invoke(
        app,
        [
            "optimize",
            "-d",
            enable2k_path,
            "--shape",
            "3x3",
            "--restarts",
            "1",
            "--iterations",
            "50",
            "-j",
            "1",
            "-o",
            str(tmp_path / "o"),
            "-q",
            "--summary-json",
            str(opt),
        ],
    )
    assert res.exit_code == 0, res.output
    record = json.loads(opt.read_text())
    assert record["command"] == "optimize" and record["status"] == "complete" and record["boards"] >= 1
    assert res.output.strip().splitlines()[-1] == f"BEST {record['best_board']} {record['best_score']}"


@pytest.mark.integration
def test_the_main_process_records_parts_without_reading_them(
    enable2k_path: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Workers send back the size and checksum of what they committed; the main process only
    checks the size, so it never reads a part (its CPU and I/O stay flat as parts grow)."""
    import pipeline.store._parts as parts
    from pipeline.store._location import Location

    hash_file, hash_object = parts.file_blake2b, Location.blake2b

    def no_part(path: Any) -> str:
        assert "part-" not in str(path), "the main process hashed a part"
        return hash_file(path)  # the side files the main process writes itself (rejects)

    def no_part_object(self: Any, name: str) -> str:
        assert "part-" not in name, "the main process hashed a part"
        return hash_object(self, name)

    monkeypatch.setattr(parts, "file_blake2b", no_part)
    monkeypatch.setattr(Location, "blake2b", no_part_object)
    out = tmp_path / "run"
    cfg = run_config(enable2k_path, out)
    import dataclasses

    cfg = dataclasses.replace(cfg, run=dataclasses.replace(cfg.run, n_jobs=2))
    assert run_job(cfg).status == "complete"
    monkeypatch.undo()
    store.open_run(out)  # the records the workers sent are the parts' real checksums
