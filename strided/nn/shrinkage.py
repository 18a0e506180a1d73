"""Shrinkage activations of ``strided.nn.functional``: hardshrink and softshrink, composed of ``where``.

Values *and* gradients equal torch's kernels (Note [Composed activation gradients] in activations.py): the
dead zone ``[-lambd, lambd]`` is closed, the gradient there is 0 and 1 outside, and a NaN falls outside the
zone (it comes back as NaN and passes the gradient), as in torch's ``x >= -lambd && x <= lambd`` test.
"""

from __future__ import annotations

from ..backends.meta.reductions import type_name
from ..ops import bound as ops
from ..tensor import Tensor
from ..type_info import finfo
from .activations import _check_float

__all__ = ["hardshrink", "softshrink"]


def _dead_zone(input: Tensor, lambd: float) -> Tensor:
    return ops.logical_and(ops.ge(input, -lambd), ops.le(input, lambd))


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``0`` where ``-lambd <= x <= lambd``, else ``x``."""
    _check_float(input, "hardshrink")
    return ops.where(_dead_zone(input, lambd), 0.0, input)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``0`` where ``-lambd <= x <= lambd``, else ``x - lambd * sign(x)`` (``lambd`` must be >= 0)."""
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"softshrink_check\" not implemented for '{type_name(input.dtype)}'")
    top = finfo(input.dtype).max
    if not 0 <= lambd <= top:
        raise RuntimeError(f"lambda must be in range [0, {top:g}] for input dtype {type_name(input.dtype)}, but "
                           f"found {lambd:g}")
    # x * 0 in the zone keeps torch's signed zero; sign(x) has no gradient, so outside it is 1
    return ops.where(_dead_zone(input, lambd), input * 0.0, input - ops.sign(input) * lambd)
