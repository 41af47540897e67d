"""Certified optima by branch and bound over board classes (``boggle prove``).

* :mod:`pipeline.prove._classes`: letter buckets, class ids, canonical classes of a shape.
* :mod:`pipeline.prove._bounds`: the sum and max bounds of a class (numba, with a Python twin).
* :mod:`pipeline.prove._search`: branch and bound of one class, exact scoring at the leaves.
* :mod:`pipeline.prove._config`: what a proof proves (:class:`ProveConfig`), the classes it selects.
* :mod:`pipeline.prove._worker`: the problem a worker loads once, and proving one chunk of classes.
* :mod:`pipeline.prove._certificate`: the certificate's columns, the proof's records and totals.
* :mod:`pipeline.prove._job`: classes as chunked joblib tasks, parts, resume, coverage, manifest.
* :mod:`pipeline.prove._status`: where a proof stands (``--status``), and the CPU it has left.
"""

from pipeline.prove._certificate import (
    BOARDS_FILE_COLUMNS,
    CERTIFICATE_COLUMNS,
    FoundBoard,
    ProveProgress,
    ProveSummary,
)
from pipeline.prove._config import ProveConfig, parse_class_ids
from pipeline.prove._job import run_prove
from pipeline.prove._status import ProofStatus, check_undamaged, proof_status

__all__ = [
    "BOARDS_FILE_COLUMNS",
    "CERTIFICATE_COLUMNS",
    "FoundBoard",
    "ProofStatus",
    "ProveConfig",
    "ProveProgress",
    "ProveSummary",
    "check_undamaged",
    "parse_class_ids",
    "proof_status",
    "run_prove",
]
