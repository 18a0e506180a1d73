"""``strided.special``: torch.special's functions, as strided operators or compositions of them.

Each function takes torch's arguments (``out=`` included) and follows its dtype promotion (integer and
bool inputs give the default float dtype) and errors. Compositions run on every backend and are
differentiated through the operators they call, except where a ``Function`` gives torch's derivative
formula (Note [Special compositions]).

Note [Special compositions]
* ``i0``: the series ``sum_k (x^2 / 4)^k / k!^2`` (36 terms) for ``|x| < 20`` and the asymptotic series
  ``e^|x| / sqrt(2 pi |x|) sum_k ((2k - 1)!!)^2 / (k! (8 |x|)^k)`` (25 terms) beyond: both below 1e-16
  relative; half types compute in float32.
* ``entr``, ``logit`` and ``xlog1py`` (and ``special_normal``'s ``erfcx``, ``log_ndtr`` and ``ndtri``) are
  ``Function``s whose backward is torch's formula: their compositions would differentiate through clamps,
  ``where`` and the Newton steps, and differ at the edges (``entr``: ``-(1 + log x)``, +inf at 0 and NaN below;
  ``logit``: NaN outside [0, 1], or 0 outside [eps, 1 - eps]; ``xlog1py``: ``log1p(y)`` for ``x``
  even at ``x = 0``). ``sinc`` is a plain composition whose ``where`` keeps 0/0 out of the gradient.
"""

from __future__ import annotations

import math
import operator
import warnings

from . import dtypes as _dt
from .autograd.function import Function
from .autograd.grad_mode import is_grad_enabled
from .dispatch.argument_checks import arg_tensor
from .factories import full
from .ops import bound as _ops
from .tensor import Tensor

__all__ = ["gammaln", "digamma", "psi", "polygamma", "multigammaln", "erf", "erfc", "erfinv", "erfcx", "expit",
           "logit", "xlogy", "xlog1py", "entr", "sinc", "ndtr", "ndtri", "log_ndtr", "logsumexp", "softmax",
           "log_softmax", "log1p", "expm1", "exp2", "round", "i0", "gammainc", "gammaincc", "zeta"]

_SQRT_PI = math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2 * math.pi)
_SQRT_HALF = math.sqrt(0.5)


def _out(name: str, result: Tensor, out, inputs=()) -> Tensor:
    """``result``, or ``result`` written into ``out`` with torch's out= rules."""
    if out is None:
        return result
    if is_grad_enabled() and any(isinstance(t, Tensor) and t._requires_grad for t in inputs):
        raise RuntimeError(f"special_{name}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    from .dispatch.out_dtypes import check_out_dtype

    check_out_dtype(name, result.dtype, out.dtype)  # Note [Exact out dtypes]
    if not _dt.can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"result type {_type_name(result.dtype)} can't be cast to the desired output type "
                           f"{_type_name(out.dtype)}")
    if out.shape != result.shape:
        if out.numel():
            warnings.warn(f"An output with one or more elements was resized since it had shape {list(out.shape)}, "
                          f"which does not match the required output shape {list(result.shape)}. This behavior "
                          "is deprecated.", UserWarning, stacklevel=3)
        out.resize_(result.shape)
    return out.copy_(result)


def _type_name(d) -> str:
    from .backends.meta.reductions import type_name

    return type_name(d)


def _opmath(input: Tensor, name: str, arg: str = "input", complex_ok: bool = False, half_ok: bool = True):
    """``input`` in the dtype a composition computes in, and the dtype it returns: integer and bool
    inputs give the default float; float16 and bfloat16 compute in float32 (torch's opmath) and are
    rounded once at the end. A non-tensor, (unless ``complex_ok``) a complex input or (unless ``half_ok``: torch's
    kernel takes float and double only) a half-type one raises torch's error for ``special_<name>``."""
    if not isinstance(input, Tensor):
        raise TypeError(f"special_{name}(): argument '{arg}' (position 1) must be Tensor, not {type(input).__name__}")
    if input.dtype.is_complex and not complex_ok or not half_ok and input.dtype in (_dt.float16, _dt.bfloat16):
        device = "cuda" if input.device.type == "cuda" else "cpu"
        raise NotImplementedError(f"\"{name}_{device}\" not implemented for '{_type_name(input.dtype)}'")
    d = input.dtype if input.dtype.is_floating_point or input.dtype.is_complex else _dt.get_default_dtype()
    return input.to(_dt.float32 if d is _dt.float16 or d is _dt.bfloat16 else d), d


def _unary(name: str, op):
    def fn(input: Tensor, *, out=None) -> Tensor:  # noqa: A002 - torch's name
        return _out(name, op(input), out, (input,))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.special.{name}: ``strided.{op.__name__}``."
    return fn


gammaln = _unary("gammaln", _ops.lgamma)
digamma = _unary("digamma", _ops.digamma)
psi = _unary("psi", _ops.digamma)
erf = _unary("erf", _ops.erf)
erfc = _unary("erfc", _ops.erfc)
erfinv = _unary("erfinv", _ops.erfinv)
expit = _unary("expit", _ops.sigmoid)
log1p = _unary("log1p", _ops.log1p)
expm1 = _unary("expm1", _ops.expm1)
exp2 = _unary("exp2", _ops.exp2)


def polygamma(n: int, input: Tensor, *, out=None) -> Tensor:  # noqa: A002
    """The n-th derivative of digamma (``strided.polygamma``)."""
    if isinstance(n, bool) or not hasattr(type(n), "__index__"):
        raise TypeError(f"special_polygamma(): argument 'n' (position 1) must be int, not {type(n).__name__}")
    return _out("polygamma", _ops.polygamma(operator.index(n), input), out, (input,))


def multigammaln(input: Tensor, p: int, *, out=None) -> Tensor:  # noqa: A002
    """The multivariate log-gamma of dimension ``p`` (``strided.mvlgamma``)."""
    return _out("multigammaln", _ops.mvlgamma(input, p), out, (input,))


class _Logit(Function):
    @staticmethod
    def forward(ctx, x, eps):
        ctx.save_for_backward(x)
        ctx.eps = eps
        if eps is not None:
            x = x.clamp(eps, 1 - eps)
        return (x / (1 - x)).log()

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        eps = ctx.eps
        outside = (x < 0) | (x > 1) if eps is None else (x < eps) | (x > 1 - eps)
        return _ops.where(outside, math.nan if eps is None else 0.0, grad / (x * (1 - x))), None


def logit(input: Tensor, eps: float | None = None, *, out=None) -> Tensor:  # noqa: A002
    """``log(x / (1 - x))``, with ``x`` clamped to ``[eps, 1 - eps]`` when ``eps`` is given (and >= 0)."""
    if eps is not None and (isinstance(eps, bool) or not isinstance(eps, (int, float))):
        raise TypeError(f"special_logit(): argument 'eps' must be float, not {type(eps).__name__}")
    x, d = _opmath(input, "logit")
    result = _Logit.apply(x, eps if eps is not None and eps >= 0 else None).to(d)
    return _out("logit", result, out, (input,))


def _binary_operands(name: str, input, other):
    """``input`` and ``other`` as tensors of their common floating dtype (torch's promotion)."""
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(f"special_{name}() received an invalid combination of arguments - got "
                        f"({type(input).__name__}, {type(other).__name__}), but expected one of:\n"
                        " * (Tensor input, Tensor other, *, Tensor out = None)\n"
                        " * (Number self, Tensor other, *, Tensor out = None)\n"
                        " * (Tensor input, Number other, *, Tensor out = None)\n")
    d = _dt.result_type(input, other)
    device = (input if isinstance(input, Tensor) else other).device
    if d.is_complex:  # never the real part alone: torch has no complex kernel
        raise NotImplementedError(f"\"{name}_{'cuda' if device.type == 'cuda' else 'cpu'}\" not implemented for "
                                  f"'{_type_name(d)}'")
    if not d.is_floating_point:
        d = _dt.get_default_dtype()
    c = _dt.float32 if d is _dt.float16 or d is _dt.bfloat16 else d

    def cast(v):
        return v.to(c) if isinstance(v, Tensor) else full((), v, dtype=c, device=device)

    return cast(input), cast(other), d


def xlogy(input, other, *, out=None) -> Tensor:  # noqa: A002
    """``x * log(y)``, 0 where ``x == 0`` (unless ``y`` is NaN)."""
    x, y, d = _binary_operands("xlogy", input, other)
    return _out("xlogy", _ops.xlogy(x, y).to(d), out, (input, other))


def gammainc(input: Tensor, other: Tensor, *, out=None) -> Tensor:  # noqa: A002
    """The regularized lower incomplete gamma function ``P(input, other)`` (``strided.igamma``)."""
    return _out("gammainc", _ops.igamma(input, other), out, (input, other))


def gammaincc(input: Tensor, other: Tensor, *, out=None) -> Tensor:  # noqa: A002
    """The regularized upper incomplete gamma function ``Q(input, other)`` (``strided.igammac``)."""
    return _out("gammaincc", _ops.igammac(input, other), out, (input, other))


def zeta(input, other, *, out=None) -> Tensor:  # noqa: A002
    """The Hurwitz zeta function ``sum_k (other + k) ** -input`` (Note [Hurwitz zeta far below zero])."""
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        _binary_operands("zeta", input, other)  # raises torch's TypeError
    return _out("zeta", _ops.special_zeta(input, other), out, (input, other))


class _Xlog1py(Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return _ops.where((x == 0) & ~y.isnan(), 0.0, x * y.log1p())

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        gx = grad * _ops.where((x == 0) & (y <= -1), 0.0, y.log1p()) if ctx.needs_input_grad[0] else None
        return gx, grad * x / (y + 1) if ctx.needs_input_grad[1] else None


def xlog1py(input, other, *, out=None) -> Tensor:  # noqa: A002
    """``x * log1p(y)``, 0 where ``x == 0`` (unless ``y`` is NaN)."""
    x, y, d = _binary_operands("xlog1py", input, other)
    return _out("xlog1py", _Xlog1py.apply(x, y).to(d), out, (input, other))


class _Entr(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        value = _ops.where(x > 0, -x * x.log(), _ops.where(x == 0, 0.0, -math.inf).to(x.dtype))
        return _ops.where(x.isnan(), x, value)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * -(x.log() + 1)


def entr(input: Tensor, *, out=None) -> Tensor:  # noqa: A002
    """Elementwise entropy ``-x log x`` (0 at 0, -inf below)."""
    x, d = _opmath(input, "entr")
    return _out("entr", _Entr.apply(x).to(d), out, (input,))


def sinc(input: Tensor, *, out=None) -> Tensor:  # noqa: A002
    """The normalized sinc ``sin(pi x) / (pi x)``, 1 at 0."""
    x, d = _opmath(input, "sinc", complex_ok=True)
    zero = x == 0
    y = _ops.where(zero, 1.0, x) * math.pi  # no 0 / 0 in the forward or the gradient
    return _out("sinc", _ops.where(zero, 1.0, y.sin() / y).to(d), out, (input,))


def _horner(coefficients, t: Tensor) -> Tensor:
    r = full(t.shape, coefficients[0], dtype=t.dtype, device=t.device)
    for c in coefficients[1:]:
        r = r * t + c
    return r


_I0_SERIES = tuple(1 / math.factorial(k) ** 2 for k in range(35, -1, -1))
_I0_ASYMPTOTIC = tuple(math.prod(range(1, 2 * k, 2)) ** 2 / (math.factorial(k) * 8**k) for k in range(24, -1, -1))


def i0(input: Tensor, *, out=None) -> Tensor:  # noqa: A002
    """The modified Bessel function of the first kind, order 0 (Note [Special compositions])."""
    x, d = _opmath(input, "i0")
    x = x.double()  # Note [Modified Bessel series]: the series' gradient overflows float32 past |x| ~ 7
    a = x.abs()
    small = x.clamp(-20.0, 20.0)
    near = _horner(_I0_SERIES, small * small / 4)
    big = a.clamp(20.0, 1000.0)  # e^|x| overflows past 709.8 (as torch's)
    far = big.exp() / (2 * math.pi * big).sqrt() * _horner(_I0_ASYMPTOTIC, 1 / big)
    return _out("i0", _ops.where(a < 20, near, far).to(d), out, (input,))


def logsumexp(input: Tensor, dim, keepdim: bool = False, *, out=None) -> Tensor:  # noqa: A002
    """``log(sum(exp(x), dim))`` (``strided.logsumexp``)."""
    return _out("logsumexp", _ops.logsumexp(input, dim, keepdim), out, (input,))


def softmax(input: Tensor, dim: int, *, dtype=None) -> Tensor:  # noqa: A002
    """``strided.softmax``."""
    return _ops.softmax(input, dim, dtype)


def log_softmax(input: Tensor, dim: int, *, dtype=None) -> Tensor:  # noqa: A002
    """``strided.log_softmax``."""
    return _ops.log_softmax(input, dim, dtype)


def round(input: Tensor, *, decimals: int = 0, out=None) -> Tensor:  # noqa: A001, A002 - torch's names
    """Round half to even, to ``decimals`` decimal digits (negative: to tens, hundreds ...)."""
    arg_tensor("special_round", "input", 1, input)
    if not isinstance(decimals, int) or isinstance(decimals, bool):
        raise TypeError(f"round(): argument 'decimals' must be int, not {type(decimals).__name__}")
    if not input.dtype.is_floating_point:
        kernel = "round_cpu" if decimals else "round_vml_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_type_name(input.dtype)}'")
    if decimals == 0:
        return _out("round", input.round(), out, (input,))
    x = input.to(_dt.float32) if input.dtype in (_dt.float16, _dt.bfloat16) else input
    scale = float(10 ** abs(decimals))
    result = (x / scale).round() * scale if decimals < 0 else (x * scale).round() / scale
    return _out("round", result.to(input.dtype), out, (input,))


from .special_bessel import i0e, i1, i1e, modified_bessel_i0, modified_bessel_i1, spherical_bessel_j0  # noqa: E402
from .special_normal import erfcx, log_ndtr, ndtr, ndtri  # noqa: E402

__all__ += ["i0e", "i1", "i1e", "modified_bessel_i0", "modified_bessel_i1", "spherical_bessel_j0"]

from .special_bessel_jyk import *  # noqa: E402, F403 - bessel_j0 ... scaled_modified_bessel_k1
from .special_bessel_jyk import __all__ as _jyk  # noqa: E402
from .special_polynomials import *  # noqa: E402, F403 - chebyshev_polynomial_t ... legendre_polynomial_p
from .special_polynomials import __all__ as _polynomials  # noqa: E402

__all__ += [*_jyk, *_polynomials]
from .special_airy import airy_ai  # noqa: E402

__all__ += ["airy_ai"]
