"""Python operators of ``Tensor`` (``+ - * / // % ** @``, comparisons, logical, in-place forms).

A mixin so that tensor.py holds metadata and conversions only. Every operator calls an operator
packet in ``strided.ops.bound``, which picks the overload (Tensor or Scalar) from the arguments;
Note [Tensor-Tensor operators] skips that choice when both operands are tensors.
"""

from __future__ import annotations

import numpy as np

from .ops import bound as _ops

__all__ = ["TensorOperators"]


# Note [Tensor-Tensor operators]
# ``a + b`` with two tensors always resolves to the ``.Tensor`` overload, so the binary dunders
# call it directly instead of asking the packet to match the arguments (a type tuple and a cache
# lookup per call, about a microsecond of an eager small op). Any other operand goes through the
# packet as before. The overloads are looked up once, on first use (the registry fills
# ``strided.ops.bound`` after this module is imported).
class _TensorOverloads:
    def __getattr__(self, name):
        op = getattr(_ops, name).Tensor
        setattr(self, name, op)
        return op


_T = _TensorOverloads()


class TensorOperators:
    """Operator dunders shared by ``Tensor`` (no state of its own)."""

    __slots__ = ()

    # arithmetic (overload resolution happens in the bound packets)
    def __add__(self, other):
        if isinstance(other, TensorOperators):
            return _T.add(self, other)
        return _ops.add(self, _arr(other) if other.__class__ is np.ndarray else other)

    def __radd__(self, other):
        return _ops.add(self, _arr(other) if other.__class__ is np.ndarray else other)

    def __iadd__(self, other):
        return self.add_(_arr(other) if other.__class__ is np.ndarray else other)

    def __sub__(self, other):
        if isinstance(other, TensorOperators):
            return _T.sub(self, other)
        return _ops.sub(self, _arr(other) if other.__class__ is np.ndarray else other)

    def __rsub__(self, other):
        return _ops.sub(_reflected_operand(self, other), self)

    def __isub__(self, other):
        return self.sub_(_arr(other) if other.__class__ is np.ndarray else other)

    def __mul__(self, other):
        if isinstance(other, TensorOperators):
            return _T.mul(self, other)
        return _ops.mul(self, _arr(other) if other.__class__ is np.ndarray else other)

    def __rmul__(self, other):
        return _ops.mul(self, _arr(other) if other.__class__ is np.ndarray else other)

    def __imul__(self, other):
        return self.mul_(_arr(other) if other.__class__ is np.ndarray else other)

    def __truediv__(self, other):
        if isinstance(other, TensorOperators):
            return _T.div(self, other)
        return _ops.div(self, _arr(other) if other.__class__ is np.ndarray else other)

    def __rtruediv__(self, other):
        if isinstance(other, TensorOperators):
            return _ops.div(other, self)
        if other.__class__ is np.ndarray:  # Note [NumPy operands]
            return _ops.div(_arr(other), self)
        return _ops.mul(_ops.reciprocal(self), other)  # torch's __rdiv__: an int tensor divides as floats

    __rdiv__ = __rtruediv__  # torch's older name, still a Tensor method

    def __itruediv__(self, other):
        return self.div_(_arr(other) if other.__class__ is np.ndarray else other)

    def __floordiv__(self, other):
        return _ops.floor_divide(self, _arr(other) if other.__class__ is np.ndarray else other)

    def __rfloordiv__(self, other):
        return _ops.floor_divide(_reflected_operand(self, other), self)

    def __ifloordiv__(self, other):
        return self.floor_divide_(_arr(other) if other.__class__ is np.ndarray else other)

    def __mod__(self, other):
        return _ops.remainder(self, _arr(other) if other.__class__ is np.ndarray else other)

    def __rmod__(self, other):
        return _ops.remainder(_reflected_operand(self, other), self)

    def __imod__(self, other):
        return self.remainder_(_arr(other) if other.__class__ is np.ndarray else other)

    def __pow__(self, other):
        return _ops.pow(self, _arr(other) if other.__class__ is np.ndarray else other)

    def __rpow__(self, other):
        return _ops.pow(_arr(other) if other.__class__ is np.ndarray else other, self)

    def __ipow__(self, other):
        return self.pow_(_arr(other) if other.__class__ is np.ndarray else other)

    def __matmul__(self, other):
        return _ops.matmul(self, _arr(other) if other.__class__ is np.ndarray else other)

    def __rmatmul__(self, other):
        return _ops.matmul(_arr(other) if other.__class__ is np.ndarray else other, self)

    def __neg__(self):
        return _ops.neg(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return _ops.abs(self)

    def __invert__(self):
        if self.dtype.is_floating_point or self.dtype.is_complex:  # torch's operator check, before the op's
            raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
        return _ops.bitwise_not(self)

    def __and__(self, other):
        return _ops.bitwise_and(self, _arr(other) if other.__class__ is np.ndarray else other)

    def __or__(self, other):
        return _ops.bitwise_or(self, _arr(other) if other.__class__ is np.ndarray else other)

    def __xor__(self, other):
        return _ops.bitwise_xor(self, _arr(other) if other.__class__ is np.ndarray else other)

    __rand__, __ror__, __rxor__ = __and__, __or__, __xor__

    def __iand__(self, other):
        return self.bitwise_and_(_arr(other) if other.__class__ is np.ndarray else other)

    def __ior__(self, other):
        return self.bitwise_or_(_arr(other) if other.__class__ is np.ndarray else other)

    def __ixor__(self, other):
        return self.bitwise_xor_(_arr(other) if other.__class__ is np.ndarray else other)

    def __lshift__(self, other):
        return _ops.bitwise_left_shift(self, _arr(other) if other.__class__ is np.ndarray else other)

    def __rshift__(self, other):
        return _ops.bitwise_right_shift(self, _arr(other) if other.__class__ is np.ndarray else other)

    def __rlshift__(self, other):
        return _ops.bitwise_left_shift(_ops.full((), other, device=self.device), self)

    def __rrshift__(self, other):
        return _ops.bitwise_right_shift(_ops.full((), other, device=self.device), self)

    def __ilshift__(self, other):
        return self.bitwise_left_shift_(_arr(other) if other.__class__ is np.ndarray else other)

    def __irshift__(self, other):
        return self.bitwise_right_shift_(_arr(other) if other.__class__ is np.ndarray else other)

    # Note [Comparing with other objects]
    # torch turns a TypeError of ``==`` / ``!=`` into NotImplemented, so that Python falls back to identity:
    # ``x == None`` is False, ``x != "a"`` True, and ``x in [None, y]`` works. The try costs nothing on the
    # number path (zero-cost exceptions).
    def __eq__(self, other):  # noqa: D105 - elementwise, as torch
        if isinstance(other, TensorOperators):
            return _T.eq(self, other)
        try:
            return _ops.eq(self, _arr(other) if other.__class__ is np.ndarray else other)
        except TypeError:
            return NotImplemented

    def __ne__(self, other):
        if isinstance(other, TensorOperators):
            return _T.ne(self, other)
        try:
            return _ops.ne(self, _arr(other) if other.__class__ is np.ndarray else other)
        except TypeError:
            return NotImplemented

    def __lt__(self, other):
        if isinstance(other, TensorOperators):
            return _T.lt(self, other)
        return _ops.lt(self, _arr(other) if other.__class__ is np.ndarray else other)

    def __le__(self, other):
        if isinstance(other, TensorOperators):
            return _T.le(self, other)
        return _ops.le(self, _arr(other) if other.__class__ is np.ndarray else other)

    def __gt__(self, other):
        if isinstance(other, TensorOperators):
            return _T.gt(self, other)
        return _ops.gt(self, _arr(other) if other.__class__ is np.ndarray else other)

    def __ge__(self, other):
        if isinstance(other, TensorOperators):
            return _T.ge(self, other)
        return _ops.ge(self, _arr(other) if other.__class__ is np.ndarray else other)


def _reflected_operand(self, other):
    """``other`` of ``other - self`` as a 0-dim CPU tensor of the promoted dtype (Note [Numbers as tensors]).

    A zero-dim tensor of the result dtype promotes exactly as the Python scalar would (both only
    win across categories), and a 0-dim CPU tensor may join any device (torch's rsub/rfloordiv do this).
    The number is cast as torch casts a wrapped Scalar into the computation (an int wraps: 300 - int8
    computes 44 - x), not checked as ``strided.tensor(300, dtype=int8)`` is; a bool stays bool, so that
    ``True - x`` meets sub's refusal.
    """
    if isinstance(other, TensorOperators):
        return other
    if other.__class__ is np.ndarray:
        return _arr(other)
    try:
        operand = _NUMBER_OPERAND[0]
    except IndexError:  # imported on first use: numbers_as_tensors imports tensor.py, which imports this module
        from .dispatch.numbers_as_tensors import number_operand as operand

        _NUMBER_OPERAND.append(operand)
    return operand(other, self, on_other_device=False)


_NUMBER_OPERAND = []


# Note [NumPy operands]
# torch's operators take a NumPy array as the tensor it holds (``t + np.ones(2)`` is a float64 tensor; ``t ==
# array`` compares elementwise), while its functions refuse one (``torch.add(t, array)``). The operator dunders
# here convert an ``np.ndarray`` operand with ``as_tensor`` (sharing its memory, on the CPU) before the op; before,
# ``==`` fell back to identity and answered False. The check is one class comparison, on the non-tensor path only.
def _arr(a: np.ndarray):
    from .factories import as_tensor

    return as_tensor(a)
