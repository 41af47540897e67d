"""The best boards of a shape and word list: searched for, and certified.

* :mod:`pipeline.best.optimize` (``boggle optimize``): parallel hill climbing and simulated
  annealing find high-scoring boards fast, with no guarantee;
* :mod:`pipeline.best.prove` (``boggle prove``): branch and bound over board classes certifies
  every board scoring at least a threshold, so that none is missed.

The two stand apart (neither imports the other) and share the solver's kernels; each
subpackage's ``__init__`` is its surface. Importing this package loads neither.
"""

__all__: list[str] = []
