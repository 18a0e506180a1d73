"""Helpers that derivatives.yaml formulas call for complex tensors (torch's FunctionsManual.cpp).

Note [Complex gradients]
torch's convention: the gradient of a real loss ``L`` with respect to a complex ``z`` is the
conjugate Wirtinger derivative ``dL/dRe(z) + i dL/dIm(z)``, so a backward formula is the forward's
Jacobian conjugated: ``mul`` sends ``grad * other.conj()``, ``exp`` ``grad * result.conj()``.
``conj`` here returns a real tensor itself (one attribute read), so a formula written for complex
values costs a real op's backward nothing; the real part a real input of a mixed op keeps is taken
by the engine (Note [handle_r_to_c] in derivatives.py).

Note [Complex masks]
``where`` and ``masked_fill`` are not complex ops (Note [Complex operators]): a complex value is
masked through its real view (``view_as_real``, the mask broadcast over the (re, im) pair), which
is exact and differentiable again under ``create_graph``.
"""

from __future__ import annotations

from ..ops import bound as ops
from ..tensor import Tensor

__all__ = [
    "conj",
    "masked_zero",
    "sgn_backward",
    "angle_backward",
    "polar_backward",
    "to_copy_backward",
]


def conj(x):
    """``x.conj()`` of a complex tensor or Python complex; anything else is returned as it is."""
    if isinstance(x, Tensor):
        return ops.conj(x) if x.dtype.is_complex else x
    return x.conjugate() if type(x) is complex else x


def masked_zero(x, mask):
    """``x`` with zeros where ``mask`` is True, for real and complex ``x`` (Note [Complex masks])."""
    if not x.dtype.is_complex:
        return ops.where(mask, 0.0, x)
    pairs = ops.where(ops.unsqueeze(mask, -1), 0.0, ops.view_as_real(x))
    return ops.view_as_complex(pairs)


def sgn_backward(self, grad, result):
    """torch's sgn_backward: ``(g - sgn^2 conj(g)) / (2|z|)``, 0 at ``z == 0``; 0 for real ``self``."""
    if not self.dtype.is_complex:
        return ops.zeros_like(grad)
    absolute = ops.abs(self)
    zero = ops.eq(absolute, 0.0)
    out = (grad - result * result * ops.conj(grad)) / (ops.where(zero, 1.0, absolute) * 2.0)
    return masked_zero(out, zero)


def angle_backward(grad, self):
    """torch's angle_backward: ``grad * z / |z|^2 * i``, 0 at ``z == 0``; 0 for real ``self``."""
    if not self.dtype.is_complex:
        return ops.zeros_like(self)
    absolute = ops.abs(self)
    zero = ops.eq(absolute, 0.0)
    out = grad * self / ops.where(zero, 1.0, absolute * absolute) * 1j
    return masked_zero(out, zero)


def polar_backward(grad, result, grad_input_mask=(True, True)):
    """torch's polar_backward: ``abs``'s gradient ``Re(conj(g) sgn(r))``, ``angle``'s ``Re(conj(g) r i)``."""
    g = ops.conj(grad)
    grad_abs = ops.real(g * ops.sgn(result)) if grad_input_mask[0] else None
    grad_angle = ops.real(g * (result * 1j)) if grad_input_mask[1] else None
    return grad_abs, grad_angle



def to_copy_backward(grad, dtype, device):
    """torch's _to_copy_backward: back to the input's device and dtype, the real part for a real
    input (the cast runs in the node, on its stream: Note [Backward streams])."""
    if grad.dtype.is_complex and not dtype.is_complex:
        grad = ops.real(grad)
    return grad.to(device=device, dtype=dtype)
