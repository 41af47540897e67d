"""Certified optima by branch and bound over board classes (``boggle prove``).

* :mod:`pipeline.prove.classes`: letter buckets, class ids, canonical classes of a shape.
* :mod:`pipeline.prove.bounds`: the sum and max bounds of a class (numba, with a Python twin).
* :mod:`pipeline.prove.search`: branch and bound of one class, exact scoring at the leaves.
* :mod:`pipeline.prove.config`: what a proof proves (:class:`ProveConfig`), the classes it selects.
* :mod:`pipeline.prove.worker`: the problem a worker loads once, and proving one chunk of classes.
* :mod:`pipeline.prove.certificate`: the certificate's columns, the proof's records and totals.
* :mod:`pipeline.prove.job`: classes as chunked joblib tasks, parts, resume, coverage, manifest.
* :mod:`pipeline.prove.status`: where a proof stands (``--status``), and the CPU it has left.
"""

from pipeline.prove.certificate import CERTIFICATE_COLUMNS, FoundBoard, ProveProgress, ProveSummary
from pipeline.prove.config import ProveConfig
from pipeline.prove.job import run_prove

__all__ = ["CERTIFICATE_COLUMNS", "FoundBoard", "ProveConfig", "ProveProgress", "ProveSummary", "run_prove"]
