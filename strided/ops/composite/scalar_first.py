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


def _scalar_first(name: str) -> None:
    def fn(self, other):
        return getattr(ops, name)(number_operand(self, other), other)

    fn.__name__ = fn.__qualname__ = f"{name}_scalar_tensor"  # the YAML's kernel name for <name>.Scalar_Tensor
    fn.__doc__ = f"``{name}`` of a Scalar and a tensor."
    kernel("CompositeImplicitAutograd")(fn)


for _name in ("remainder", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift"):
    _scalar_first(_name)
del _name
