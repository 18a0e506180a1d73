"""Composite kernels: ops written in terms of other ops, shared by every backend.

CompositeExplicitAutograd kernels (views, factories, conversions) and CompositeImplicitAutograd
decompositions (linear -> addmm, stack -> unsqueeze + cat, ...).
"""

from . import (  # noqa: F401
    aliases,
    combining,
    conversions,
    decompositions,
    einsum,
    factories,
    foreach,
    joining,
    linalg_householder,
    linalg_jacobi,
    linalg_solvers,
    order_statistics,
    packing,
    rearranging,
    recurrent,
    reduction_stats,
    sampling,
    selection,
    uniqueness,
    views,
    views_split,
)
