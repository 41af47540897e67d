"""The proofs kept in ``certificates/`` verify: every part against its record, the proof's
identity and its chunk's class ids (what a resumed proof checks before it trusts a part;
``boggle prove --status`` reads them the same way), so a damaged or foreign file committed there
fails here, not in the next session's resume. Where the installed word list is no longer the
one the proof started with (a new tanglet-data), the proof cannot be resumed with it: the test
says so as a skip."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.best.prove._status import proof_status
from pipeline.lexicon import tanglet_languages
from tests.conftest import need_data

REPO = Path(__file__).resolve().parents[1]
CERTIFICATES = REPO / "certificates"
PROOFS = sorted(p for p in CERTIFICATES.glob("*") if (p / "_run.json").is_file())


def test_certificates_hold_proofs() -> None:
    assert PROOFS, f"no proof directory (with its _run.json) in {CERTIFICATES}"


@pytest.mark.parametrize("proof", PROOFS, ids=[p.name for p in PROOFS])
def test_a_kept_proof_verifies(proof: Path) -> None:
    dictionary = json.loads((proof / "_run.json").read_text(encoding="utf-8"))["config"]["dictionary"]
    if dictionary.startswith("tanglet:"):
        need_data(
            dictionary.split(":", 1)[1] in tanglet_languages(), f"{dictionary}: tanglet-data not installed"
        )
    st = proof_status(str(proof))
    assert st.distrusted == [], st.distrusted
    parts = sorted(proof.glob("part-*.parquet"))
    assert st.parts_verified == len(parts) > 0
    if st.finished or st.sample_done:  # a --limit-classes sample is done, never finished
        assert st.parts_verified == st.parts_total and st.classes_done == st.classes_total
    else:
        assert st.classes_done <= st.classes_total and st.parts_verified < st.parts_total
    if st.notes:  # the installed word list is not the one the proof started with: not damage here
        pytest.skip("; ".join(st.notes))


def front_page_certificate_rows() -> list[list[str]]:
    """The cells of each row of the "Certified optima" table on the docs' front page."""
    text = (REPO / "docs" / "index.md").read_text(encoding="utf-8")
    section = text.split("## Certified optima", 1)[1].split("\n## ", 1)[0]
    lines = [ln for ln in section.splitlines() if ln.startswith("|")]
    assert lines[0].startswith("| shape") and lines[1].startswith("|---"), lines[:2]
    return [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in lines[2:]]


def test_the_front_page_table_of_certified_optima_agrees_with_certificates() -> None:
    """A row that claims a certificate names a finished proof in certificates/ whose best board,
    score, threshold and count of boards are the row's; every other row says plainly that no
    certificate is kept (and a proof it names as re-running there is indeed unfinished)."""
    import re

    import pandas as pd

    rows = front_page_certificate_rows()
    assert len(rows) >= 4
    claimed = set()
    for cells in rows:
        board_cell, count_cell, cert_cell = cells[1], cells[2], cells[-1]
        links = re.findall(r"`certificates/([^`/]+)`", cert_cell)
        if cert_cell.startswith("not kept"):
            for name in links:  # "re-running in certificates/X": there, and not finished
                assert (CERTIFICATES / name / "_run.json").is_file(), name
                assert not (CERTIFICATES / name / "_SUCCESS").exists(), f"{name} is finished: claim it"
            continue
        assert len(links) == 1, f"a row must name its certificate or say 'not kept': {cells}"
        proof = CERTIFICATES / links[0]
        claimed.add(proof)
        assert (proof / "_SUCCESS").is_file(), f"{proof.name} is not a finished proof"
        run = json.loads((proof / "_run.json").read_text(encoding="utf-8"))
        board = re.search(r"`([^`/]+)` \*\*(\d+)\*\*", board_cell)
        count = re.match(r"(\d+) >= (\d+)", count_cell)
        assert board and count, cells
        found = pd.read_parquet(proof / "_boards.pq").sort_values("score", ascending=False)
        assert run["identity"]["threshold"] == int(count.group(2))
        assert len(found) == int(count.group(1))
        assert (found["board"].iloc[0], int(found["score"].iloc[0])) == (board.group(1), int(board.group(2)))
        shape = re.match(r"(\d+x\d+)", cells[0])
        assert shape and run["identity"]["shape"] == shape.group(1)
    finished = {p for p in PROOFS if (p / "_SUCCESS").is_file()}
    assert finished <= claimed, f"finished certificates the front page does not list: {finished - claimed}"


def test_published_digests_match_the_certificates() -> None:
    """certificates/README.md publishes each finished certificate's digest; each one matches."""
    import re

    from pipeline import store

    text = (CERTIFICATES / "README.md").read_text(encoding="utf-8")
    published = dict(re.findall(r"\| `([^`]+)` \| `(blake2b-256:[0-9a-f]{64})` \|", text))
    finished = {p.name for p in PROOFS if (p / "_SUCCESS").is_file()}
    assert set(published) == finished
    for name, digest in published.items():
        manifest = store.read_manifest(CERTIFICATES / name)
        store.check_digest(manifest, digest, name)
