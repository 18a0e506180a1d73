"""Composite kernels: ops written in terms of other ops, shared by every backend.

CompositeExplicitAutograd kernels (views, factories, conversions) and CompositeImplicitAutograd
decompositions (linear -> addmm, stack -> unsqueeze + cat, ...).
"""

from . import (  # noqa: F401
    aliases,
    aliases_more,
    batch_norm,
    combining,
    complex_ops,
    conversions,
    convolution,
    counting,
    decompositions,
    einsum,
    factories,
    foreach,
    im2col,
    indexing_more,
    inplace_compositions,
    joining,
    linalg_eig,
    linalg_helpers,
    linalg_householder,
    linalg_jacobi,
    linalg_solvers,
    order_statistics,
    packing,
    pointwise_math,
    pooling,
    random_fills,
    rearranging,
    recurrent,
    reduction_stats,
    sampling,
    selection,
    shapes_more,
    uniqueness,
    views,
    views_expand,
    views_split,
)
