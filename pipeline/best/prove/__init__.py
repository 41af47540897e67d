"""Certified optima by branch and bound over board classes (``boggle prove``).

* :mod:`pipeline.best.prove._classes`: letter buckets, class ids, canonical classes of a shape.
* :mod:`pipeline.best.prove._bounds`: the sum and max bounds of a class (numba, with a Python twin).
* :mod:`pipeline.best.prove._search`: branch and bound of one class, exact scoring at the leaves.
* :mod:`pipeline.best.prove._config`: what a proof proves (:class:`ProveConfig`), the classes it selects.
* :mod:`pipeline.best.prove._worker`: the problem a worker loads once, and proving one chunk of classes.
* :mod:`pipeline.best.prove._certificate`: the certificate's columns, the proof's records and totals.
* :mod:`pipeline.best.prove._job`: classes as chunked joblib tasks, parts, resume, coverage, manifest.
* :mod:`pipeline.best.prove._status`: where a proof stands (``--status``), and the CPU it has left.
"""

from pipeline.best.prove._certificate import (
    BOARDS_FILE_COLUMNS,
    CERTIFICATE_COLUMNS,
    FoundBoard,
    ProveProgress,
    ProveSummary,
)
from pipeline.best.prove._config import ProveConfig, parse_class_ids
from pipeline.best.prove._job import run_prove
from pipeline.best.prove._status import ProofStatus, check_undamaged, proof_status

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
