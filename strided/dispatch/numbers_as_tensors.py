"""Python numbers where an operator takes a Tensor: ``strided.add(2, t)``, ``strided.mul(2, 3)``, ``t.copy_(2)``.

Note [Numbers as tensors]
torch's Python argument parser lets a Python number stand for a plain ``Tensor`` argument of a few
operators only (``should_allow_numbers_as_tensors`` in torch/csrc/utils/python_arg_parser.cpp: add, sub,
mul, div, their aliases and in-place / out forms, true_divide, floor_divide, copy_), so
``torch.sub(1, x)`` and ``torch.mul(2, 3)`` work while ``torch.maximum(x, 2)`` is refused. The number
becomes a 0-dim "wrapped number" tensor, which type promotion ranks below 0-dim tensors, and the kernel
casts it to the common dtype. strided has no wrapped-number flag, so the number is made directly in the
dtype it would be cast to: ``result_type`` of the call's tensors and numbers, or the default float dtype
for a true division of integers (torch computes ``div(-3, uint8_tensor)`` in float). Such a 0-dim tensor
changes no result dtype: the result's category already contains it. A bool stays bool, so ``sub(True, t)``
meets sub's bool refusal as in torch. The value is cast from the number's own tensor dtype (int64 /
float64 / complex128), so out-of-range values wrap or become inf as torch's casts make them, and it is
made on the device of the call's first tensor (``out=`` included), or the CPU for ``mul(2, 3)``.

A packet of these names tries this only after no overload fits strictly (``packet.py``); the choice is
cached per argument types like any other, so a tensor-only call pays nothing. ``copy_`` is a lone
overload, called without matching, so ``Tensor.copy_`` tests its source itself (``tensor_extras.py``) and
copies the number from its own dtype: a copy casts, never promotes.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as dt
from ..tensor import Tensor
from .packet import NUMBERS_AS_TENSORS

__all__ = ["NUMBERS_AS_TENSORS", "numbers_to_tensors", "number_operand", "wrapped_number"]


def wrapped_number(value, dtype: dt.dtype | None, device=None) -> Tensor:
    """``value`` as a 0-dim tensor of ``dtype`` (None: its own) on ``device`` (None: the CPU, where a 0-dim tensor
    joins an operation on any device), cast from its own NumPy dtype as torch casts (an int wraps, a float past the
    dtype's range is inf)."""
    from ..tensor_data import from_numpy

    a = np.asarray(value)  # bool, int64, float64 or complex128; a Python int past int64 raises OverflowError
    if dtype is not None and a.dtype != dtype.numpy_dtype:
        if a.dtype.kind in "fc" and dtype.itemsize < a.dtype.itemsize:
            with np.errstate(over="ignore"):  # 70000 as float16, 1e40 as float32: inf, quietly as torch's
                a = a.astype(dtype.numpy_dtype)
        else:
            a = a.astype(dtype.numpy_dtype)
    out = from_numpy(a)
    return out if device is None or device.type == "cpu" else out.to(device)


def number_operand(value, other: Tensor, on_other_device: bool = True) -> Tensor:
    """A Scalar operand of a binary op with the tensor ``other`` (``remainder(2, t)``, ``2 - t``) as a 0-dim tensor in
    the dtype the op casts it to (a bool stays bool): Note [Numbers as tensors]. ``on_other_device``: made on
    ``other``'s device, else on the CPU."""
    if isinstance(value, Tensor):
        return value
    d = dt.bool if dt.scalar_dtype(value) is dt.bool else dt.result_type(other, value)
    return wrapped_number(value, d, other.device if on_other_device else None)


def numbers_to_tensors(op):
    """``op`` called with the Python numbers in its plain Tensor arguments made tensors (Note [Numbers as
    tensors])."""
    arguments = op.schema.arguments
    positional = [a for a in arguments if not a.kwarg_only]
    slots = tuple(i for i, a in enumerate(positional) if a.type.base == "Tensor" and not a.type.is_list)
    names = frozenset(a.name for a in arguments if a.type.base == "Tensor" and not a.type.is_list)  # out: a device
    true_division = op.schema.name.split("::")[-1].rstrip("_") in ("div", "divide", "true_divide")

    def call(*args, **kwargs):
        args = list(args)
        where = [(args, i) for i in slots if i < len(args)] + [(kwargs, k) for k in kwargs if k in names]
        tensors = [c[k] for c, k in where if isinstance(c[k], Tensor) and k != "out"]
        numbers = [(c, k) for c, k in where if c[k] is not None and not isinstance(c[k], Tensor) and k != "out"]
        device = next((c[k].device for c, k in where if isinstance(c[k], Tensor)), None)
        common = dt.result_type(*tensors, *(c[k] for c, k in numbers))
        if true_division and common.category < dt.FLOATING and kwargs.get("rounding_mode") is None:
            common = dt.get_default_dtype()  # true division computes integers in float: -3 stays -3, not uint8's 253
        for c, k in numbers:
            v = c[k]
            c[k] = wrapped_number(v, dt.bool if dt.scalar_dtype(v) is dt.bool else common, device)
        return op(*args, **kwargs)

    call.__name__ = call.__qualname__ = op.__name__
    return call
