"""Whole-tensor comparisons: ``isclose``, ``allclose``, ``equal`` (torch's), composed of operators
(so they run on every backend)."""

from __future__ import annotations

from .ops import bound as _ops
from .tensor import Tensor

__all__ = ["isclose", "allclose", "equal"]


def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
    """Elementwise ``|input - other| <= atol + rtol * |other|`` (equal infinities are close; NaN only
    with ``equal_nan``)."""
    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        raise TypeError(f"isclose(): expected Tensors, got {type(input).__name__} and {type(other).__name__}")
    if input.dtype is not other.dtype:
        from .backends.meta.pointwise import scalar_type_name

        # torch's words
        raise RuntimeError(f"{scalar_type_name(input.dtype)} did not match {scalar_type_name(other.dtype)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    close = _ops.eq(input, other)
    if input.dtype.is_floating_point or input.dtype.is_complex:  # complex: |a - b| is the modulus, as torch
        diff = _ops.abs(_ops.sub(input, other))
        within = _ops.le(diff, _ops.add(_ops.mul(_ops.abs(other), rtol), atol))
        close = _ops.logical_or(close, _ops.logical_and(within, _ops.logical_not(_ops.isinf(diff))))
        if equal_nan:
            close = _ops.logical_or(close, _ops.logical_and(_ops.isnan(input), _ops.isnan(other)))
    elif rtol or atol:
        diff = _ops.abs(_ops.sub(input.double(), other.double()))
        close = _ops.le(diff, _ops.add(_ops.mul(_ops.abs(other.double()), rtol), atol))
    return close


def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    """Whether every element of ``input`` is close to ``other``'s (:func:`isclose`, broadcast)."""
    return bool(_ops.all(isclose(input, other, rtol, atol, equal_nan)).item())


def equal(input: Tensor, other: Tensor) -> bool:
    """True when both have the same size and the same elements (NaN is never equal)."""
    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        raise TypeError(f"equal(): expected Tensors, got {type(input).__name__} and {type(other).__name__}")
    if input.shape != other.shape:
        return False
    return bool(_ops.all(_ops.eq(input, other)).item())
