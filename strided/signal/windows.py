"""torch.signal.windows: bartlett, blackman, cosine, exponential, gaussian, general_cosine, general_hamming,
hamming, hann, kaiser and nuttall windows of ``M`` points, with torch's formulas, arguments and errors.

Each is built from factory and pointwise ops (``linspace`` and one or two elementwise functions), so it runs
on any device and follows autograd when ``requires_grad=True``. ``sym=False`` gives the periodic window
(one period of an ``M + 1``-point symmetric window, for spectral analysis).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from .. import dtypes as dt
from .. import factories as f
from ..layouts import strided as _strided_layout
from ..ops import bound as ops

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming",
           "hamming", "hann", "kaiser", "nuttall"]


def _int_length(name: str, M) -> None:
    if isinstance(M, bool) or not isinstance(M, int):
        raise TypeError(f"{name}(): argument 'M' must be int, not {type(M).__name__}")


def _checks(name: str, M: int, dtype, layout):
    """torch's checks, in its words (a window made from another names that one, as torch's do)."""
    _int_length(name, M)
    if dtype is None:
        dtype = dt.get_default_dtype()
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not _strided_layout:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (dt.float32, dt.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    return dtype


def _trivial(M: int, dtype, device, requires_grad: bool, ones_at_one: bool = True):
    """The window of 0 points (empty) or, where torch special-cases it, of 1 point (ones); else None."""
    if M == 0:
        return f.empty(0, dtype=dtype, device=device).requires_grad_(requires_grad)
    if M == 1 and ones_at_one:
        return f.ones(1, dtype=dtype, device=device).requires_grad_(requires_grad)
    return None


def _grid(start: float, step: float, M: int, dtype, device, requires_grad: bool):
    return f.linspace(start, start + (M - 1) * step, M, dtype=dtype, device=device).requires_grad_(requires_grad)


def exponential(M: int, *, center: float | None = None, tau: float = 1.0, sym: bool = True, dtype=None,
                layout=_strided_layout, device=None, requires_grad: bool = False):
    """``exp(-|n - center| / tau)``."""
    dtype = _checks("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    empty = _trivial(M, dtype, device, requires_grad, ones_at_one=False)
    if empty is not None:
        return empty
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    k = _grid(-center / tau, 1 / tau, M, dtype, device, requires_grad)
    return ops.exp(ops.neg(ops.abs(k)))


def cosine(M: int, *, sym: bool = True, dtype=None, layout=_strided_layout, device=None,
           requires_grad: bool = False):
    """``sin(pi (n + 0.5) / M)`` (the sine window)."""
    dtype = _checks("cosine", M, dtype, layout)
    empty = _trivial(M, dtype, device, requires_grad, ones_at_one=False)
    if empty is not None:
        return empty
    step = math.pi / (M + 1 if not sym and M > 1 else M)
    return ops.sin(_grid(0.5 * step, step, M, dtype, device, requires_grad))


def gaussian(M: int, *, std: float = 1.0, sym: bool = True, dtype=None, layout=_strided_layout, device=None,
             requires_grad: bool = False):
    """``exp(-(n - (M - 1) / 2)^2 / (2 std^2))``."""
    dtype = _checks("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    empty = _trivial(M, dtype, device, requires_grad, ones_at_one=False)
    if empty is not None:
        return empty
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    step = 1 / (std * math.sqrt(2))
    k = _grid(start * step, step, M, dtype, device, requires_grad)
    return ops.exp(ops.neg(k * k))


def kaiser(M: int, *, beta: float = 12.0, sym: bool = True, dtype=None, layout=_strided_layout, device=None,
           requires_grad: bool = False):
    """``I0(beta sqrt(1 - (2n / (M - 1) - 1)^2)) / I0(beta)``."""
    dtype = _checks("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    trivial = _trivial(M, dtype, device, requires_grad)
    if trivial is not None:
        return trivial
    step = 2.0 * beta / (M if not sym else M - 1)
    end = min(beta, -beta + (M - 1) * step)
    k = f.linspace(-beta, end, M, dtype=dtype, device=device).requires_grad_(requires_grad)
    b = f.full((), beta, dtype=dtype, device=device)
    return ops.i0(ops.sqrt(b * b - k * k)) / ops.i0(b)


def general_cosine(M, *, a: Iterable, sym: bool = True, dtype=None, layout=_strided_layout, device=None,
                   requires_grad: bool = False):
    """``sum_i (-1)^i a_i cos(2 pi i n / (M - 1))``."""
    dtype = _checks("general_cosine", M, dtype, layout)
    trivial = _trivial(M, dtype, device, requires_grad)
    if trivial is not None:
        return trivial
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    step = 2 * math.pi / (M if not sym else M - 1)
    k = _grid(0.0, step, M, dtype, device, requires_grad)
    coef = f.tensor([(-1) ** i * w for i, w in enumerate(a)], dtype=dtype, device=device)
    coef = coef.requires_grad_(requires_grad)
    i = f.arange(coef.shape[0], dtype=dtype, device=device)
    return (coef.unsqueeze(-1) * ops.cos(i.unsqueeze(-1) * k)).sum(0)


def general_hamming(M, *, alpha: float = 0.54, sym: bool = True, dtype=None, layout=_strided_layout, device=None,
                    requires_grad: bool = False):
    """``alpha - (1 - alpha) cos(2 pi n / (M - 1))``."""
    _int_length("general_hamming", M)
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def hamming(M: int, *, sym: bool = True, dtype=None, layout=_strided_layout, device=None,
            requires_grad: bool = False):
    """The Hamming window (``general_hamming`` with alpha 0.54)."""
    _int_length("hamming", M)
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def hann(M: int, *, sym: bool = True, dtype=None, layout=_strided_layout, device=None, requires_grad: bool = False):
    """The Hann window (``general_hamming`` with alpha 0.5)."""
    _int_length("hann", M)
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M: int, *, sym: bool = True, dtype=None, layout=_strided_layout, device=None,
             requires_grad: bool = False):
    """The Blackman window (cosine coefficients 0.42, 0.5, 0.08)."""
    dtype = _checks("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def bartlett(M: int, *, sym: bool = True, dtype=None, layout=_strided_layout, device=None,
             requires_grad: bool = False):
    """The triangular window ``1 - |2n / (M - 1) - 1|``."""
    dtype = _checks("bartlett", M, dtype, layout)
    trivial = _trivial(M, dtype, device, requires_grad)
    if trivial is not None:
        return trivial
    k = _grid(-1.0, 2 / (M if not sym else M - 1), M, dtype, device, requires_grad)
    return 1 - ops.abs(k)


def nuttall(M: int, *, sym: bool = True, dtype=None, layout=_strided_layout, device=None,
            requires_grad: bool = False):
    """The minimum 4-term Blackman-Harris window of Nuttall."""
    _int_length("nuttall", M)
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)
