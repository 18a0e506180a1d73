"""torch's remaining factories: ``scalar_tensor``, ``logspace``, the deprecated inclusive ``range``,
``empty_permuted``, ``frombuffer`` and the window functions (``hann_window``, ``hamming_window``,
``blackman_window``, ``bartlett_window``, ``kaiser_window``).

Note [Window functions]
torch's windows are the symmetric ones of length ``N`` (``periodic=False``) or, by default, the first
``N`` values of the symmetric window of length ``N + 1`` (periodic: for spectral analysis). They are
computed in the requested floating dtype on the requested device from ``arange``, so they run on every
backend; ``N == 0`` gives an empty tensor and ``N == 1`` a single one.
"""

from __future__ import annotations

import builtins
import math
import warnings

from . import dtypes as _dt
from .dispatch.out_arguments import accepting_out as _accepting_out
from .ops import bound as _ops

__all__ = ["scalar_tensor", "logspace", "range", "asarray", "empty_permuted", "frombuffer", "hann_window",
           "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]


def _finish(t, requires_grad: bool):
    if requires_grad:
        t.requires_grad_(True)
    return t


def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=None, requires_grad: bool = False):
    """A 0-dim tensor holding ``s`` (the default float dtype unless ``dtype`` is given, as torch)."""
    t = _ops.full((), s, dtype=dtype or _dt.get_default_dtype(), device=device)
    return _finish(t, requires_grad)


def _refuse_dtype(op: str, dtype, device, complex_too: bool) -> None:
    from .backends.meta.factories import refuse_range_dtype, resolve_options

    refuse_range_dtype(op, *resolve_options(dtype, device), complex_too=complex_too)


def logspace(start, end, steps: int, base: float = 10.0, *, dtype=None, layout=None, device=None,
             pin_memory=None, requires_grad: bool = False):
    """``steps`` values ``base ** x`` for ``x`` evenly spaced from ``start`` to ``end`` inclusive."""
    from .factories import check_space_arguments

    check_space_arguments("logspace", start, end, steps)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dtype = dtype or _dt.get_default_dtype()
    _refuse_dtype("logspace", dtype, device, complex_too=False)
    if steps and dtype.category == _dt.INTEGRAL:  # torch's integer rule: pow in double, truncated (10 ** 1.5 -> 31)
        import numpy as np

        from .backends.meta.factories import integer_linspace
        from .tensor_data import tensor

        exponents = integer_linspace(start, end, steps, dtype, truncate=False)
        t = tensor(np.trunc(np.power(float(base), exponents))).to(dtype)
        return _finish(t if device is None else t.to(device), requires_grad)
    exponents = _ops.linspace(start, end, steps, dtype=_dt.float64, device=device)
    t = _ops.pow(float(base), exponents)
    if not (dtype.is_floating_point or dtype.is_complex):
        t = _ops.round(t)
    return _finish(t.to(dtype), requires_grad)


def range(start=0, end=None, step=1, *, dtype=None, layout=None, device=None, pin_memory=None,  # noqa: A001
          requires_grad: bool = False):
    """Deprecated (as torch): ``start .. end`` inclusive, ``step`` apart; use ``arange``."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                  "[start, end).", UserWarning, stacklevel=2)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    n = int(math.floor((end - start) / step)) + 1
    dtype = dtype or _dt.get_default_dtype()
    _refuse_dtype("range", dtype, device, complex_too=True)
    t = _ops.add(_ops.mul(_ops.arange(0, n, dtype=_dt.float64, device=device), step), start)
    return _finish(t.to(dtype), requires_grad)


def _window(name: str, window_length: int, periodic: bool, dtype, device, requires_grad, formula):
    dtype = dtype or _dt.get_default_dtype()
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    if not dtype.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")
    if window_length <= 1:
        return _finish(_ops.ones((window_length,), dtype=dtype, device=device), requires_grad)
    n = window_length + 1 if periodic else window_length
    k = _ops.arange(0, window_length, dtype=dtype, device=device)
    return _finish(formula(k, n), requires_grad)


def _cosine_sum(coefficients):
    def formula(k, n):
        out = None
        for j, a in enumerate(coefficients):
            term = _ops.mul(_ops.cos(_ops.mul(k, 2 * math.pi * j / (n - 1))), a) if j else None
            out = term if out is None else _ops.add(out, term)
        return _ops.add(out, coefficients[0])

    return formula


def hann_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None, device=None,
                pin_memory=None, requires_grad: bool = False):
    """``0.5 - 0.5 cos(2 pi k / (N - 1))`` (Note [Window functions])."""
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad, _cosine_sum((0.5, -0.5)))


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54, beta: float = 0.46, *,
                   dtype=None, layout=None, device=None, pin_memory=None, requires_grad: bool = False):
    """``alpha - beta cos(2 pi k / (N - 1))`` (Note [Window functions])."""
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_sum((alpha, -beta)))


def blackman_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None, device=None,
                    pin_memory=None, requires_grad: bool = False):
    """``0.42 - 0.5 cos(2 pi k / (N - 1)) + 0.08 cos(4 pi k / (N - 1))`` (Note [Window functions])."""
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_sum((0.42, -0.5, 0.08)))


def bartlett_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None, device=None,
                    pin_memory=None, requires_grad: bool = False):
    """The triangle ``1 - |2 k / (N - 1) - 1|`` (Note [Window functions])."""
    def formula(k, n):
        return _ops.rsub(_ops.abs(_ops.sub(_ops.mul(k, 2.0 / (n - 1)), 1.0)), 1.0)

    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad, formula)


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *, dtype=None, layout=None,
                  device=None, pin_memory=None, requires_grad: bool = False):
    """``I0(beta sqrt(1 - ((k - a) / a)^2)) / I0(beta)`` with ``a = (N - 1) / 2`` (Note [Window functions])."""
    from .special import i0

    def formula(k, n):
        a = (n - 1) / 2
        r = _ops.div(_ops.sub(k, a), a)
        arg = _ops.mul(_ops.sqrt(_ops.clamp(_ops.rsub(_ops.mul(r, r), 1.0), 0.0)), float(beta))
        return _ops.div(i0(arg), i0(_ops.full((), float(beta), dtype=k.dtype, device=k.device)))

    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, formula)


# Note [asarray]
# torch.asarray shares memory whenever it can and copies only when it must (or when ``copy=True``):
# a tensor is returned as is when dtype and device already match, a NumPy array or a buffer (bytes,
# bytearray, array.array, memoryview: read as ``dtype``, the default dtype if none, as torch) is shared
# on the CPU, and an object with ``__dlpack__`` is imported zero-copy first. ``copy=False`` turns every
# needed copy into torch's ValueError. ``requires_grad=None`` follows a tensor's own flag (torch 2.14's
# default; torch also warns about the change of default, strided does not).
def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=None):
    """A tensor from ``obj`` sharing its memory when dtype and device allow (Note [asarray])."""
    import numpy as np

    from .device import device as _device
    from .factories import from_numpy, tensor
    from .interop import from_dlpack
    from .tensor import Tensor

    d = None if dtype is None else _dt.to_dtype(dtype)
    if not isinstance(obj, (Tensor, np.ndarray)) and hasattr(obj, "__dlpack__"):
        obj = from_dlpack(obj)
    if isinstance(obj, (bytes, bytearray, memoryview)) or type(obj).__name__ == "array":
        view = d or _dt.get_default_dtype()
        nbytes = memoryview(obj).nbytes
        if nbytes % view.itemsize:
            raise ValueError(f"buffer length ({nbytes} bytes) after offset (0 bytes) must be a multiple of "
                             f"element size ({view.itemsize})")
        obj, d = np.frombuffer(obj, dtype=view.numpy_dtype), view
    if isinstance(obj, np.ndarray):
        try:
            obj = from_numpy(obj)
        except (TypeError, ValueError):
            if copy is False:
                raise
            obj = from_numpy(np.ascontiguousarray(obj).copy())
    if not isinstance(obj, Tensor):
        if copy is False:
            raise ValueError("can't alias arbitrary sequence into a tensor.")
        return tensor(obj, dtype=dtype, device=device, requires_grad=bool(requires_grad))
    target = obj.device if device is None else _device(device)
    d = obj.dtype if d is None else d
    if copy is False:
        if d is not obj.dtype:
            raise ValueError(f"can't alias tensor with dtype '{_dt_word(obj.dtype)}' into dtype '{_dt_word(d)}'.")
        if target != obj.device:
            raise ValueError(f"can't alias tensor from device '{obj.device}' to '{target}'.")
    grad = obj._requires_grad if requires_grad is None else bool(requires_grad)
    if copy or d is not obj.dtype or target != obj.device:
        out = obj.to(device=target, dtype=d, copy=True)
        return out if grad else out.detach()
    if grad == obj._requires_grad:
        return obj
    return obj.detach().requires_grad_(grad) if grad else obj.detach()


def _dt_word(d) -> str:
    from .backends.meta.pointwise import scalar_type_name

    return scalar_type_name(d)


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None, requires_grad: bool = False,
                   pin_memory: bool = False):
    """An uninitialized tensor of ``size`` whose memory holds its dims in the order ``physical_layout``
    (``empty_permuted((N, C, H, W), (0, 2, 3, 1))`` is channels-last)."""
    size, order = tuple(size), tuple(physical_layout)
    if len(size) != len(order):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the physical_layout; i.e. "
                           f"len(size) = {len(size)} is not equal to len(physical_layout) = {len(order)}")
    if sorted(order) != list(builtins.range(len(order))):
        raise RuntimeError("Duplicate dim not allowed" if len(set(order)) != len(order)
                           else f"Dimension out of range in physical_layout {list(order)}")
    physical = _ops.empty([size[d] for d in order], dtype=dtype, device=device, pin_memory=pin_memory)
    inverse = [order.index(d) for d in builtins.range(len(order))]
    return _finish(_ops.permute(physical, inverse), requires_grad)


def frombuffer(buffer, *, dtype, count: int = -1, offset: int = 0, requires_grad: bool = False):
    """A 1-D CPU tensor over the bytes of a Python buffer object (shared memory, as ``from_numpy``)."""
    from .factories import _warn_not_writable, wrap_array

    if not isinstance(dtype, _dt.dtype):
        raise TypeError(f"frombuffer(): argument 'dtype' must be strided.dtype, not {type(dtype).__name__}")
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    nbytes, itemsize = view.nbytes, dtype.itemsize
    if nbytes == 0 and count == -1 or count == 0:
        raise ValueError(f"both buffer length ({nbytes}) and count ({count}) must not be 0")
    if not 0 <= offset < nbytes:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than buffer length "
                         f"({nbytes} bytes) minus 1")
    if count < 0:
        if (nbytes - offset) % itemsize:
            raise ValueError(f"buffer length ({nbytes - offset} bytes) after offset ({offset} bytes) must be a "
                             f"multiple of element size ({itemsize})")
        count = (nbytes - offset) // itemsize
    elif count * itemsize > nbytes - offset:
        raise ValueError(f"requested buffer length ({count} * {itemsize} bytes) after offset ({offset} bytes) must "
                         f"not be greater than actual buffer length ({nbytes} bytes)")
    if view.readonly:
        _warn_not_writable("buffer", "buffer")
    import numpy as np

    raw = np.frombuffer(view.cast("B"), dtype=np.uint8, count=count * itemsize, offset=offset)
    return _finish(wrap_array(raw.view(dtype.numpy_dtype)), requires_grad)


_accepting_out(globals(), ("logspace", "range", "empty_permuted"), factory=True)  # Note [Out arguments]
