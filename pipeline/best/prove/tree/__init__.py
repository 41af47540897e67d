"""The orderly-tree bound of a board class and branch and bound inside it: ``TreeProver``.

Private modules: ``_prover`` (the prover: the deduping force, lifting and forcing, the gates),
``_builder`` (``TreeBuilder``: a class's paths and tree in arrays kept across classes), the
numba kernels of ``_build`` (paths walked, sorted and built into a tree), ``_dedup`` (a
sub-class's paths read off its parent's, the redundant ones dropped) and ``_eval`` (the tree
evaluated, lifted and forced), and ``_reference``, the plain-Python twin the tests check the
kernels against. See docs/methods/prover.md.
"""

from pipeline.best.prove.tree._build import max_cells
from pipeline.best.prove.tree._prover import DEDUP_RATIO, LIFT_KEEP, LIFT_RATIO, PROVERS, TreeProver

__all__ = ["DEDUP_RATIO", "LIFT_KEEP", "LIFT_RATIO", "PROVERS", "TreeProver", "max_cells"]
