"""Derivative helpers where the function has a kink: clamp at its bounds, maximum / minimum / fmax / fmin where
the operands tie (derivatives.yaml formulas call them).

Note [Subgradients at ties and bounds]
At a bound of ``clamp`` or a tie of ``maximum`` there is no derivative, and torch picks a subgradient. Since
torch 2.14 (pytorch#184574) it is the minimum-norm one: ``clamp`` with number bounds passes the gradient only
strictly inside (min, max), as ``relu6`` / ``hardtanh`` always did; where two tensors tie -- ``maximum``,
``minimum``, ``fmax``, ``fmin``, a one-sided ``clamp`` with a tensor bound -- each gets half. A NaN operand of
those gives the gradient to both (torch's rule: no comparison holds, so no one is masked out). ``clamp`` with two
tensor bounds: the gradient goes to whichever of self, min or max the result is; half each to self and the bound
it equals; all to self when self, min and max are equal (and when self is NaN); all to ``max`` when min > max (the
result is max). tests/autograd/test_boundary_gradients.py holds torch 2.14's values on a grid of ties.
"""

from __future__ import annotations

from ..ops import bound as ops

__all__ = ["clamp_backward", "clamp_tensor_backward", "extremum_backward"]


def clamp_backward(grad, self, min=None, max=None):
    """clamp with number bounds: the gradient passes where ``min < self < max`` (Note [Subgradients at ties and
    bounds])."""
    mask = None
    if min is not None:
        mask = ops.gt(self, min)
    if max is not None:
        m = ops.lt(self, max)
        mask = m if mask is None else ops.logical_and(mask, m)
    return grad if mask is None else ops.where(mask, grad, 0.0)


def extremum_backward(grad, a, b, is_max: bool):
    """maximum / minimum / fmax / fmin, the gradient for ``a`` against ``b``: all where ``a`` wins, half where they
    tie, all where either is NaN (Note [Subgradients at ties and bounds])."""
    loses = ops.lt(a, b) if is_max else ops.gt(a, b)
    return ops.where(loses, 0.0, ops.where(ops.eq(a, b), grad / 2, grad))


def clamp_tensor_backward(grad, self, min, max, which: int):
    """clamp.Tensor's gradient for ``self`` (``which`` 0), ``min`` (1) or ``max`` (2) (Note [Subgradients at ties
    and bounds])."""
    if max is None:  # maximum(self, min)
        return extremum_backward(grad, self, min, True) if which == 0 else extremum_backward(grad, min, self, True)
    if min is None:  # minimum(self, max)
        return extremum_backward(grad, self, max, False) if which == 0 else extremum_backward(grad, max, self, False)
    crossed = ops.gt(min, max)
    at_min, at_max = ops.eq(self, min), ops.eq(self, max)
    if which == 0:
        out = ops.logical_or(crossed, ops.logical_or(ops.lt(self, min), ops.gt(self, max)))
        tie = ops.logical_xor(at_min, at_max)
        return ops.where(out, 0.0, ops.where(tie, grad / 2, grad))
    if which == 1:
        half = ops.logical_and(at_min, ops.logical_not(at_max))
        w = ops.where(ops.lt(self, min), grad, ops.where(half, grad / 2, 0.0))
        return ops.where(crossed, 0.0, w)
    half = ops.logical_and(at_max, ops.logical_not(at_min))
    whole = ops.logical_or(crossed, ops.gt(self, max))
    return ops.where(whole, grad, ops.where(half, grad / 2, 0.0))
