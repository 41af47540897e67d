"""One outcome for every command's finished job (:meth:`pipeline.store.JobDir.outcome`): a
finished run, proof or design re-run is "already complete" with nothing computed, and a
finished job whose sealed manifest lists other parts than its config makes is refused (exit 4)
naming the manifest; --overwrite recomputes what is missing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from pipeline import store
from pipeline.best.prove import ProveConfig, run_prove
from pipeline.best.prove._status import proof_status
from pipeline.cli import app
from pipeline.design import DesignConfig, design_dice
from pipeline.errors import EXIT_OUTPUT_CONFLICT, DamagedRunError
from pipeline.runner import run_job
from pipeline.store._manifest import seal_of
from pipeline.store._parts import part_record_name
from tests.conftest import read_side_json, run_config, side_path, tiny_proof_args, write_side

DONE = store.JobStatus.ALREADY_COMPLETE


def reopened(job_dir: Path) -> store.JobOutcome:
    """The outcome of the finished job in ``job_dir``, opened again as its own identity."""
    manifest = store.read_manifest(job_dir)
    kind = store.job_kind(manifest["format"])
    with store.JobDir.open(job_dir, kind, manifest["identity"], manifest["config"]) as job:
        assert job.state is store.JobState.DONE
        return job.outcome()


def assert_nothing_computed(job_dir: Path, parts: int) -> None:
    outcome = reopened(job_dir)
    assert outcome.status is DONE and outcome.where == job_dir
    assert (outcome.parts_total, outcome.parts_reused, outcome.parts_computed) == (parts, parts, 0)


def unchanged(job_dir: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in job_dir.rglob("*") if p.is_file() and p.name != ".lock"}


def test_a_finished_run_proof_and_design_re_run_are_already_complete(tiny_dict: str, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    first = run_job(run_config(tiny_dict, run_dir))
    assert first.status is store.JobStatus.COMPLETE and first.boards_solved == 300
    before = unchanged(run_dir)
    again = run_job(run_config(tiny_dict, run_dir))
    assert again.status is DONE and (again.chunks, again.chunks_reused, again.boards_solved) == (3, 3, 0)
    assert again.boards == 300 and unchanged(run_dir) == before
    assert_nothing_computed(run_dir, 3)

    proof_dir = tmp_path / "proof"
    cfg = ProveConfig(
        tiny_dict, shape="2x3", threshold=20, classes="ae rst", chunk_size=4, n_jobs=1, out=str(proof_dir)
    )
    proved = run_prove(cfg)
    assert proved.status is store.JobStatus.COMPLETE and proved.parts_reused == 0
    before = unchanged(proof_dir)
    again_proof = run_prove(cfg)
    assert again_proof.status is DONE and again_proof.cpu_s == 0.0
    assert again_proof.parts_reused == again_proof.parts_total == proved.parts_total > 1
    assert again_proof.boards == proved.boards and unchanged(proof_dir) == before
    assert_nothing_computed(proof_dir, proved.parts_total)

    design_dir = tmp_path / "design"
    design = DesignConfig("new", "mean", "enable2k", str(design_dir), budget=2_000, batch=400, validate=800)
    designed = design_dice(design)
    assert designed.status is store.JobStatus.COMPLETE
    before = unchanged(design_dir)
    again_design = design_dice(design)
    assert again_design.status is DONE and again_design.report == designed.report
    assert unchanged(design_dir) == before
    assert_nothing_computed(design_dir, 0)


def drop_last_part(job_dir: Path, **records: Any) -> str:
    """Remove the last part of a finished job with its record and its manifest entry, set
    ``records`` in the manifest and seal it again: a manifest that verifies but lists fewer
    parts than the config makes. Returns the part's name."""
    manifest = read_side_json(job_dir)
    last = manifest["parts"].pop()
    (job_dir / last["file"]).unlink()
    side_path(job_dir, part_record_name(last["chunk"])).unlink()
    manifest.update(records)
    manifest["seal"] = seal_of(manifest)
    write_side(job_dir, store.MANIFEST, manifest)
    return str(last["file"])


def test_a_finished_proof_listing_fewer_parts_is_refused_then_repaired(
    tiny_dict: str, tmp_path: Path
) -> None:
    out = tmp_path / "proof"
    args = [*tiny_proof_args(tiny_dict, out), "--chunk-size", "2", "-q"]
    clean = CliRunner().invoke(app, args)
    assert clean.exit_code == 0, clean.output
    manifest = store.read_manifest(out)
    n_parts = len(manifest["parts"])
    assert n_parts > 1
    # the counts agree with the parts left (classes_total too): only the config tells it short
    kept = sum(p["rows"] for p in manifest["parts"][:-1])
    drop_last_part(out, classes_total=kept)
    assert store.job_problems(out, store.read_manifest(out)) == []
    # prove --status, which a re-run's decision must agree with, distrusts it too
    status = proof_status(str(out))
    assert status.finished and status.damaged == 2
    assert status.distrusted == [
        (store.MANIFEST, f"{n_parts - 1:,} part files listed, the config makes {n_parts:,}"),
        (store.MANIFEST, f"classes_total {kept!r} recorded, the config gives {manifest['classes_total']!r}"),
    ]

    refused = CliRunner().invoke(app, args)
    assert refused.exit_code == EXIT_OUTPUT_CONFLICT
    assert f"{out} is a finished proof with damaged files (_SUCCESS: {n_parts - 1:,} part files listed, " in (
        refused.output
    )
    assert f"the config makes {n_parts:,}" in refused.output and "--overwrite" in refused.output
    assert refused.output.count("\n") == 1  # one line, no traceback

    repaired = CliRunner().invoke(app, [*args, "--overwrite"])
    assert repaired.exit_code == 0, repaired.output
    assert len(store.read_manifest(out)["parts"]) == n_parts
    assert store.read_manifest(out)["classes_total"] == manifest["classes_total"]
    assert store.read_manifest(out)["chunks_reused"] == n_parts - 1  # only the missing part computed


def test_a_finished_run_listing_fewer_parts_is_refused_naming_the_manifest(
    tiny_dict: str, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    run_job(run_config(tiny_dict, out))
    drop_last_part(out)
    with pytest.raises(DamagedRunError) as refused:
        run_job(run_config(tiny_dict, out))
    assert refused.value.exit_code == EXIT_OUTPUT_CONFLICT
    assert f"{out} is a finished run with damaged files (_SUCCESS: " in refused.value.message
    # a run's manifest also records its boards: the count check names the shortfall first
    assert "_SUCCESS: the config makes 300 boards in 3 parts; listed: 200 in 2" in refused.value.message
