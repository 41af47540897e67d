"""Adversarial edits that keep a finished job's manifest parseable (and resealed where a seal
would otherwise give them away): the seal deleted or nulled, a checksum nulled or deleted, a
part dropped together with its manifest entry, counts edited, a part of another job swapped in
with a consistent entry. Every reader, the re-run, analyze, the prover and its status refuse
each one (DamagedRunError, exit 4): zero silently wrong reads, zero wrong certificates.

What the checksums do not cover (someone who rewrites the data, recomputes every checksum and
reseals) is the digest's job: ``boggle digest`` and ``--expect-digest`` (docs/methods/integrity.md).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pipeline import store
from pipeline.best.prove import ProveConfig, run_prove
from pipeline.best.prove._status import proof_status
from pipeline.errors import DamagedRunError, OutputConflictError
from pipeline.runner import run_job
from pipeline.store._manifest import seal_of
from pipeline.store._parts import file_blake2b
from tests.conftest import one_error_line, read_side_json, run_boggle, run_config, write_side

Edit = Callable[[Path, Path], None]  # (job, a job of another config to take parts from)


def prove_config(dictionary: str, out: Path, threshold: int = 20) -> ProveConfig:
    return ProveConfig(
        dictionary, shape="2x3", threshold=threshold, classes="ae rst", chunk_size=4, n_jobs=1, out=str(out)
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, enable2k_path: str) -> tuple[Path, Path]:
    """A finished 300-board run (3 parts) and one of another seed (the source of foreign parts)."""
    base = tmp_path_factory.mktemp("integrity")
    run_job(run_config(enable2k_path, base / "run"))
    run_job(run_config(enable2k_path, base / "other", seed=7))
    return base / "run", base / "other"


@pytest.fixture(scope="module")
def proofs(tmp_path_factory: pytest.TempPathFactory, tiny_dict: str) -> tuple[Path, Path]:
    """A finished tiny proof and one of another threshold."""
    base = tmp_path_factory.mktemp("integrity-proofs")
    run_prove(prove_config(tiny_dict, base / "proof"))
    run_prove(prove_config(tiny_dict, base / "other", threshold=15))
    return base / "proof", base / "other"


def edit_manifest(job: Path, change: Callable[[dict[str, Any]], None], *, reseal: bool = True) -> None:
    manifest = read_side_json(job, store.MANIFEST)
    change(manifest)
    manifest.pop("seal", None)
    if reseal:
        manifest["seal"] = seal_of(manifest)
    write_side(job, store.MANIFEST, manifest)


def delete_seal(job: Path, other: Path) -> None:
    edit_manifest(job, lambda m: None, reseal=False)


def null_seal(job: Path, other: Path) -> None:
    edit_manifest(job, lambda m: None, reseal=False)
    m = read_side_json(job, store.MANIFEST)
    m["seal"] = None
    write_side(job, store.MANIFEST, m)


def null_a_checksum(job: Path, other: Path) -> None:
    edit_manifest(job, lambda m: m["parts"][1].update(blake2b=None))


def delete_every_checksum(job: Path, other: Path) -> None:
    edit_manifest(job, lambda m: [p.pop("blake2b") for p in m["parts"]])


def drop_a_part_and_its_entry(job: Path, other: Path) -> None:
    (job / store.part_name(1)).unlink()
    edit_manifest(job, lambda m: m["parts"].pop(1))


def drop_the_last_part_and_fix_the_counts(job: Path, other: Path) -> None:
    def change(m: dict[str, Any]) -> None:
        gone = m["parts"].pop()
        if "counts" in m:
            m["counts"]["boards"] -= gone["rows"]
            m["counts"]["input_rows"] -= gone["rows"]
        else:
            m["classes_total"] -= gone["rows"]

    (job / store.part_name(len(list(job.glob("part-*.parquet"))) - 1)).unlink()
    edit_manifest(job, change)


def edit_the_counts(job: Path, other: Path) -> None:
    def change(m: dict[str, Any]) -> None:
        if "counts" in m:
            m["counts"]["boards"] = 3000
        else:
            m["classes_total"] += 1

    edit_manifest(job, change)


def swap_in_a_foreign_part(job: Path, other: Path) -> None:
    """A part of another job (another seed / threshold) copied over, its entry made consistent."""
    part = job / store.part_name(0)
    shutil.copyfile(other / store.part_name(0), part)

    def change(m: dict[str, Any]) -> None:
        m["parts"][0].update(bytes=part.stat().st_size, blake2b=file_blake2b(part))

    edit_manifest(job, change)


EDITS: dict[str, Edit] = {
    "seal deleted": delete_seal,
    "seal null": null_seal,
    "a checksum null, resealed": null_a_checksum,
    "every checksum deleted, resealed": delete_every_checksum,
    "a part and its entry dropped, resealed": drop_a_part_and_its_entry,
    "the last part dropped, counts fixed, resealed": drop_the_last_part_and_fix_the_counts,
    "counts edited, resealed": edit_the_counts,
    "a foreign part swapped in, entry fixed, resealed": swap_in_a_foreign_part,
}


def refused(call: Callable[[], Any]) -> bool:
    try:
        call()
    except (DamagedRunError, OutputConflictError):
        return True
    return False


@pytest.mark.parametrize("edit", EDITS, ids=list(EDITS))
def test_an_edited_run_is_refused_by_every_reader_and_the_rerun(
    edit: str, runs: tuple[Path, Path], tmp_path: Path, enable2k_path: str
) -> None:
    import pipeline
    from pipeline.analyze import analyze_runs

    clean, other = runs
    job = tmp_path / "run"
    shutil.copytree(clean, job)
    EDITS[edit](job, other)
    outcomes = {
        "store.read_run_table": refused(lambda: store.read_run_table(job)),
        "read_run_pandas": refused(lambda: pipeline.read_run_pandas(job)),
        "run_relation": refused(lambda: pipeline.run_relation(job).count("*").fetchall()),
        "analyze": refused(lambda: analyze_runs([str(job)], tmp_path / "report")),
        "re-run": refused(lambda: run_job(run_config(enable2k_path, job))),
    }
    assert all(outcomes.values()), outcomes


@pytest.mark.parametrize("edit", EDITS, ids=list(EDITS))
def test_an_edited_proof_is_refused_by_the_prover_and_its_status(
    edit: str, proofs: tuple[Path, Path], tmp_path: Path, tiny_dict: str
) -> None:
    clean, other = proofs
    job = tmp_path / "proof"
    shutil.copytree(clean, job)
    EDITS[edit](job, other)
    assert refused(lambda: run_prove(prove_config(tiny_dict, job))), "the re-run certified it"

    def status() -> None:
        if proof_status(str(job)).distrusted:
            raise DamagedRunError("distrusted")

    assert refused(status), "--status found nothing wrong"


def test_the_cli_names_the_damage_with_exit_4(runs: tuple[Path, Path], tmp_path: Path) -> None:
    clean, other = runs
    job = tmp_path / "run"
    shutil.copytree(clean, job)
    swap_in_a_foreign_part(job, other)
    res = run_boggle("analyze", str(job), "--out", str(tmp_path / "report"), "-q")
    assert res.returncode == 4
    one_error_line(res, "part-00000.parquet", "written by a run with another config")
    shutil.rmtree(job)
    shutil.copytree(clean, job)
    delete_seal(job, other)
    res = run_boggle("analyze", str(job), "--out", str(tmp_path / "report"), "-q")
    assert res.returncode == 4
    one_error_line(res, "_SUCCESS", "no seal")


def test_an_unedited_copy_still_reads(runs: tuple[Path, Path], tmp_path: Path) -> None:
    """The control: a byte-identical copy passes every check (the refusals above are the edits')."""
    clean, _ = runs
    job = tmp_path / "run"
    shutil.copytree(clean, job)
    assert store.read_run_table(job).equals(store.read_run_table(clean))
    assert store.job_problems(job, store.read_manifest(job)) == []


def test_a_digest_pins_a_job_against_a_consistent_forgery(runs: tuple[Path, Path], tmp_path: Path) -> None:
    """Beyond the threat model of the checksums: someone who can write the folder swaps in a
    foreign part and recomputes every record (part record, manifest entry, seal). The copy is
    self-consistent except for its identity tag, so to model a full forgery the edit also
    rewrites the part's embedded identity; only the digest published outside catches that."""
    import pyarrow.parquet as pq

    from pipeline.store._parts import record_part

    clean, other = runs
    published = run_boggle("digest", str(clean))
    assert published.returncode == 0, published.stderr
    digest = published.stdout.split()[0]
    assert digest.startswith("blake2b-256:") and len(digest) == len("blake2b-256:") + 64
    job = tmp_path / "forged"
    shutil.copytree(clean, job)
    assert run_boggle("digest", str(job), "--expect", digest).returncode == 0  # a true copy matches
    # the forgery: another run's boards under this run's identity, every checksum recomputed
    own = pq.read_metadata(job / store.part_name(0)).metadata
    table = pq.read_table(other / store.part_name(0)).replace_schema_metadata(own)
    pq.write_table(table, job / store.part_name(0))
    info = record_part(job, 0, table.num_rows)
    edit_manifest(job, lambda m: m["parts"][0].update(info.to_dict()))
    assert store.read_run_table(job).num_rows == 300  # consistent: the checksums cannot tell
    with pytest.raises(DamagedRunError, match="not the one expected"):
        store.read_run_table(job, expect_digest=digest)
    res = run_boggle("digest", str(job), "--expect", digest)
    assert res.returncode == 4
    one_error_line(res, "not the published job")
    res = run_boggle("analyze", str(job), "--expect-digest", digest, "--out", str(tmp_path / "r"), "-q")
    assert res.returncode == 4
    one_error_line(res, "not the published job")
    res = run_boggle("digest", str(tmp_path / "nowhere"))
    assert res.returncode == 2
