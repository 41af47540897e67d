"""Benchmarks, each run as ``python -m benchmarks.<name>``: figures with targets and ratios.

Nothing in the package imports them; they sit above every stage they time.
"""
