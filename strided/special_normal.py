"""torch.special's functions of the normal distribution and the scaled error function: ``ndtr``, ``log_ndtr``,
``ndtri`` and ``erfcx`` (``strided.special``), compositions of strided's ops.

Note [Normal-distribution functions]
* ``erfcx(x) = exp(x^2) erfc(x)``, computed in float64: for ``x < 12`` with ``x^2`` split exactly as
  ``h^2 + l (2h + l)`` (``h`` is ``x`` rounded to float32, so ``h^2`` is exact) and ``erfc`` from the
  backend (on CPU good to about 1e-11 relative in its tail, Note [Vectorized erf]), clamped at -30
  (it overflows below -26.6); for ``x >= 12`` the
  asymptotic series ``1 / (x sqrt(pi)) sum_k (-1)^k (2k - 1)!! / (2x^2)^k`` (13 terms, below 1e-17).
  ``log_ndtr`` is torch's formula on top of it (``log(erfcx(-x / sqrt 2) / 2) - x^2 / 2`` below -1,
  ``log1p(-erfc(x / sqrt 2) / 2)`` above): accurate far into the lower tail.
* ``ndtri(p)``: ``q = min(p, 1 - p)`` (exact), a start from ``sqrt(2) erfinv(2q - 1)`` (or from the
  tail asymptote ``-sqrt(t - log(t) - log(2 pi))``, ``t = -2 log q``, for ``q < 1e-10``, where ``2q - 1``
  has lost q), then three Newton steps on ``log_ndtr(x) = log q``: full float64 accuracy down to the
  smallest q, where torch uses Cephes' rational approximations. NaN outside [0, 1].
* ``ndtr(x) = erfc(-x / sqrt 2) / 2``: accurate in the lower tail, where torch's ``(1 + erf(x / sqrt
  2)) / 2`` returns 0 below about -8.3 (a deviation from torch there, of at most 1e-16 absolute).
* ``erfcx``, ``log_ndtr`` and ``ndtri`` are ``Function``s whose backward is torch's formula (Note [Special
  compositions] in ``special.py``).
"""

from __future__ import annotations

import math

from . import dtypes as _dt
from .autograd.function import Function
from .dispatch.argument_checks import arg_tensor
from .ops import bound as _ops
from .ops.complex_support import refuse_complex
from .special import _horner, _opmath, _out, _type_name
from .tensor import Tensor

__all__ = ["erfcx", "ndtr", "log_ndtr", "ndtri"]

_SQRT_PI = math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2 * math.pi)
_SQRT_HALF = math.sqrt(0.5)


def _wide(input: Tensor, name: str):
    """``input`` in float64 and the dtype to return (input's floating dtype or the default); torch has
    no half-type kernel for erfcx, log_ndtr and ndtri."""
    if input.dtype is _dt.float16 or input.dtype is _dt.bfloat16 or input.dtype.is_complex:
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{_type_name(input.dtype)}'")
    d = input.dtype if input.dtype.is_floating_point else _dt.get_default_dtype()
    return input.to(_dt.float64), d


_ERFCX_SERIES = tuple(float((-1) ** k * math.prod(range(1, 2 * k, 2))) for k in range(12, -1, -1))


def _erfcx64(x: Tensor) -> Tensor:
    """erfcx of a float64 tensor (Note [Normal-distribution functions])."""
    small = x.clamp(-30.0, 12.0)  # erfcx(-30) overflows already
    h = small.to(_dt.float32).to(_dt.float64)
    lo = small - h
    near = (h * h).exp() * (lo * (2 * h + lo)).exp() * small.erfc()
    big = x.clamp(min=12.0)
    u = 0.5 / (big * big)
    series = _horner(_ERFCX_SERIES, u) / (big * _SQRT_PI)
    return _ops.where(x < 12, near, series)


class _Erfcx(Function):
    @staticmethod
    def forward(ctx, x):
        x64, d = _wide(x, "erfcx")
        result = _erfcx64(x64).to(d)
        ctx.save_for_backward(x, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        x, result = ctx.saved_tensors
        return grad * (2 * x * result - 2 / _SQRT_PI)


def erfcx(input: Tensor, *, out=None) -> Tensor:  # noqa: A002
    """The scaled complementary error function ``exp(x^2) erfc(x)`` (Note [Normal-distribution functions])."""
    arg_tensor("special_erfcx", "input", 1, input)
    refuse_complex(input, "erfcx_cpu", "erfcx_cuda")
    return _out("erfcx", _Erfcx.apply(input), out, (input,))


def ndtr(input: Tensor, *, out=None) -> Tensor:  # noqa: A002
    """The standard normal CDF ``erfc(-x / sqrt 2) / 2``."""
    x, d = _opmath(input, "ndtr")
    return _out("ndtr", ((x * -_SQRT_HALF).erfc() * 0.5).to(d), out, (input,))


def _log_ndtr64(x: Tensor) -> Tensor:
    t = x * _SQRT_HALF
    lower = (_erfcx64(-t) * 0.5).log() - t * t
    upper = (t.erfc() * -0.5).log1p()
    return _ops.where(x < -1, lower, upper)


class _LogNdtr(Function):
    @staticmethod
    def forward(ctx, x):
        x64, d = _wide(x, "log_ndtr")
        result = _log_ndtr64(x64).to(d)
        ctx.save_for_backward(x, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        x, result = ctx.saved_tensors
        return grad / _SQRT_2PI * (-(result + x * x / 2)).exp()


def log_ndtr(input: Tensor, *, out=None) -> Tensor:  # noqa: A002
    """log of the standard normal CDF, accurate in both tails (Note [Normal-distribution functions])."""
    arg_tensor("special_log_ndtr", "input", 1, input)
    return _out("log_ndtr", _LogNdtr.apply(input), out, (input,))


class _Ndtri(Function):
    @staticmethod
    def forward(ctx, p):
        p64, d = _wide(p, "ndtri")
        q = _ops.minimum(p64, 1 - p64)
        q = _ops.where((q > 0) & (q <= 0.5), q, 0.5)  # 0, outside [0, 1] and NaN are set below
        log_q = q.log()
        t = -2 * log_q
        tail = -(t - t.log() - math.log(2 * math.pi)).clamp(min=0).sqrt()
        x = _ops.where(q < 1e-10, tail, (2 * q - 1).erfinv() * math.sqrt(2))
        for _ in range(3):  # Newton on log_ndtr(x) = log q
            log_phi = _log_ndtr64(x)
            x = x - (log_phi - log_q) * _SQRT_2PI * (log_phi + x * x / 2).exp()
        x = _ops.where(p64 > 0.5, -x, x)
        x = _ops.where(p64 == 0, -math.inf, _ops.where(p64 == 1, math.inf, x))
        result = _ops.where((p64 >= 0) & (p64 <= 1), x, math.nan).to(d)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        return grad * _SQRT_2PI * (result * result / 2).exp()


def ndtri(input: Tensor, *, out=None) -> Tensor:  # noqa: A002
    """The inverse of ``ndtr`` (Note [Normal-distribution functions])."""
    arg_tensor("special_ndtri", "input", 1, input)
    return _out("ndtri", _Ndtri.apply(input), out, (input,))
