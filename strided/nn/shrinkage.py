"""Shrinkage activations of ``strided.nn.functional``: hardshrink and softshrink, each torch's operator
(``ops/composite/nn_activations.py``, nodes HardshrinkBackward0 / SoftshrinkBackward0).

The dead zone ``[-lambd, lambd]`` is closed, the gradient there is 0 and 1 outside, and a NaN falls outside the
zone (it comes back as NaN and passes the gradient), as in torch's ``x >= -lambd && x <= lambd`` test.
"""

from __future__ import annotations

from ..ops import bound as ops
from ..tensor import Tensor

__all__ = ["hardshrink", "softshrink"]


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``0`` where ``-lambd <= x <= lambd``, else ``x``."""
    return ops.hardshrink(input, lambd)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``0`` where ``-lambd <= x <= lambd``, else ``x - lambd * sign(x)`` (``lambd`` must be >= 0)."""
    return ops.softshrink(input, lambd)
