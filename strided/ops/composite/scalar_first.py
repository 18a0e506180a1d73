"""CompositeImplicitAutograd binary ops whose first operand is a Scalar: ``remainder(2, t)``,
``bitwise_and(True, t)``, ``bitwise_left_shift(1, t)`` (torch's ``.Scalar_Tensor`` overloads).

As torch's (``at::remainder(wrapped_scalar_tensor(self), other)``), each makes the number a 0-dim tensor and
calls the Tensor overload; the tensor is made in the dtype the op casts it to (Note [Numbers as tensors] in
``dispatch/numbers_as_tensors.py``), so the result's dtype and values are the Tensor overload's.
"""

from __future__ import annotations

from ...dispatch.library import kernel
from ...dispatch.numbers_as_tensors import number_operand
from .. import bound as ops

__all__ = []


@kernel("CompositeImplicitAutograd")
def remainder_scalar_tensor(self, other):
    """``remainder`` of a Scalar by a tensor (Python's sign rule: the result has ``other``'s sign)."""
    return ops.remainder(number_operand(self, other), other)


@kernel("CompositeImplicitAutograd")
def bitwise_and_scalar_tensor(self, other):
    """``bitwise_and`` of a Scalar and a tensor."""
    return ops.bitwise_and(number_operand(self, other), other)


@kernel("CompositeImplicitAutograd")
def bitwise_or_scalar_tensor(self, other):
    """``bitwise_or`` of a Scalar and a tensor."""
    return ops.bitwise_or(number_operand(self, other), other)


@kernel("CompositeImplicitAutograd")
def bitwise_xor_scalar_tensor(self, other):
    """``bitwise_xor`` of a Scalar and a tensor."""
    return ops.bitwise_xor(number_operand(self, other), other)


@kernel("CompositeImplicitAutograd")
def bitwise_left_shift_scalar_tensor(self, other):
    """A Scalar shifted left by each element of ``other``."""
    return ops.bitwise_left_shift(number_operand(self, other), other)


@kernel("CompositeImplicitAutograd")
def bitwise_right_shift_scalar_tensor(self, other):
    """A Scalar shifted right (arithmetically) by each element of ``other``."""
    return ops.bitwise_right_shift(number_operand(self, other), other)
