"""The CPU backend: NumPy kernels over host storage (see common.py for the array views)."""

from . import factories, indexing, linalg, normalization, pointwise, reductions, threads  # noqa: F401
