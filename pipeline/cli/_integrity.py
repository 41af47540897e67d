"""``boggle digest``: one root hash of a whole finished job (run, proof or search), verified
first, to publish beside it; ``--expect`` checks a job against a published one."""

from __future__ import annotations

from typing import Annotated

import typer

from pipeline.cli._options import digests_option, published_digests
from pipeline.cli._outcome import handle_errors


@handle_errors
def digest(
    jobs: Annotated[
        list[str],
        typer.Argument(metavar="JOB...", help="Finished job directories or URLs (runs, proofs, searches)."),
    ],
    expect: Annotated[list[str] | None, digests_option("--expect", "job")] = None,
) -> None:
    """Verify finished jobs and print each one's digest, a root hash of the whole job.

    Every part and side file is checked against the sealed manifest first (exit 4 naming what is
    damaged); the digest is then the BLAKE2b-256 of that manifest, which lists every file's
    checksum. Publish it beside a certificate or a shared run; anyone can check a copy with
    --expect (or read a run with --expect-digest in `boggle analyze`). The checksums guard
    against accidents; the digest, held outside the folder, against edits (docs: integrity).

    Example: boggle digest certificates/3x4-tanglet-el
    """
    from pipeline import store
    from pipeline.errors import BoggleError, DamagedRunError

    wanted = published_digests(expect, jobs, "--expect", "job") if expect else []
    for i, job in enumerate(jobs):
        loc = store.location(job)
        if not loc.is_file(store.MANIFEST):
            raise BoggleError(
                f"{job}: not a finished job (no {store.MANIFEST}); only a finished job has a digest"
            )
        manifest = store.read_manifest(loc)
        problems = store.job_problems(loc, manifest)
        if problems:
            raise DamagedRunError(f"{job}: damaged, no digest ({store.describe_problems(problems)})")
        if wanted:
            store.check_digest(manifest, wanted[i], job)
        typer.echo(f"{store.job_digest(manifest)}  {job}")
