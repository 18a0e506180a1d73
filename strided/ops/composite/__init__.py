"""Composite kernels: ops written in terms of other ops, shared by every backend.

CompositeExplicitAutograd kernels (views, factories, conversions) and CompositeImplicitAutograd
decompositions (linear -> addmm, stack -> unsqueeze + cat, ...).
"""

from . import aliases, conversions, decompositions, factories, foreach, joining, sampling, views, views_split  # noqa: F401
