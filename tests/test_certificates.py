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

from pipeline.prove.status import proof_status
from pipeline.tanglet import tanglet_languages

REPO = Path(__file__).resolve().parents[1]
CERTIFICATES = REPO / "certificates"
PROOFS = sorted(p for p in CERTIFICATES.glob("*") if (p / "_run.json").is_file())


def test_certificates_hold_proofs() -> None:
    assert PROOFS, f"no proof directory (with its _run.json) in {CERTIFICATES}"


@pytest.mark.parametrize("proof", PROOFS, ids=[p.name for p in PROOFS])
def test_a_kept_proof_verifies(proof: Path) -> None:
    dictionary = json.loads((proof / "_run.json").read_text(encoding="utf-8"))["config"]["dictionary"]
    if dictionary.startswith("tanglet:") and dictionary.split(":", 1)[1] not in tanglet_languages():
        pytest.skip(f"{dictionary}: tanglet-data not installed")
    st = proof_status(str(proof))
    assert st.distrusted == [], st.distrusted
    parts = sorted(proof.glob("part-*.parquet"))
    assert st.parts_verified == len(parts) > 0
    if st.finished:
        assert st.parts_verified == st.parts_total and st.classes_done == st.classes_total
    else:
        assert st.classes_done <= st.classes_total and st.parts_verified < st.parts_total
    if st.notes:  # the installed word list is not the one the proof started with: not damage here
        pytest.skip("; ".join(st.notes))
