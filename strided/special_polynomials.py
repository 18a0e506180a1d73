"""torch.special's orthogonal polynomials of a tensor degree ``n``: Chebyshev ``T``, ``U``, ``V``, ``W`` and their
shifted forms (on [0, 1]), Hermite ``H`` (physicists') and ``He`` (probabilists'), Laguerre ``L`` and Legendre
``P`` (``strided.special``).

Note [Polynomials of a tensor degree]
torch's kernels (``ATen/native/Math.h``) evaluate each element on its own: ``n`` truncated to an integer (0 for a
negative one, and for NaN or an infinite one), the exact values at the special points (``x = +-1`` for
Chebyshev and Legendre, ``x = 0`` for Laguerre), a closed form inside (-1, 1) for the Chebyshev polynomials of
a high degree (``T_n = cos(n acos x)``, ...), else the three-term recurrence up to ``n``. strided takes the same
branches element-wise with ``where`` and runs the recurrence for all elements at once, up to the highest degree
any element needs it for, keeping each element's value when the recurrence reaches its degree: one pass of
elementwise ops per degree (Note [Recurrences that saturate]). Hermite degrees beyond torch's limit (128 in
float32, 512 in float64) are NaN, as torch's. The results carry no gradient; the dtype is ``x``'s and ``n``'s
promoted, integers giving the default float; half and complex inputs are refused, as torch's.
"""

from __future__ import annotations

import math

from . import dtypes as _dt
from . import special as _special
from .autograd.grad_mode import no_grad
from .ops import bound as _ops
from .tensor import Tensor

__all__ = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
           "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
           "legendre_polynomial_p"]


def _operands(name: str, x, n):
    """``x`` and ``n`` as tensors of their promoted float dtype, broadcast, detached; ``n`` truncated (NaN, infinite:
    -1, so the value is 0)."""
    if not isinstance(x, Tensor) and not isinstance(n, Tensor):
        raise TypeError(f"special_{name}() received an invalid combination of arguments - got "
                        f"({type(x).__name__}, {type(n).__name__}), but expected one of: (Tensor x, Tensor n), "
                        "(Number x, Tensor n), (Tensor x, Number n)")
    for arg, v in (("x", x), ("n", n)):
        if not isinstance(v, (Tensor, int, float)):
            raise TypeError(f"special_{name}(): argument '{arg}' must be Tensor or Number, not {type(v).__name__}")
    d = _dt.result_type(x, n)
    like = x if isinstance(x, Tensor) else n
    if d in (_dt.float16, _dt.bfloat16) or d.is_complex:
        device = "cuda" if like.device.type == "cuda" else "cpu"
        raise NotImplementedError(f"\"{name}_{device}\" not implemented for '{_special._type_name(d)}'")
    if not d.is_floating_point:
        d = _dt.get_default_dtype()
    x = x.detach().to(d) if isinstance(x, Tensor) else _ops.full((), x, dtype=d, device=like.device)
    n = n.detach().to(d) if isinstance(n, Tensor) else _ops.full((), n, dtype=d, device=like.device)
    x, n = _ops.broadcast_tensors([x, n])
    # torch casts the degree to int64: NaN, infinite and |n| >= 2^63 become INT64_MIN, a negative degree (value 0)
    return x, _ops.where(n.isfinite() & (n.abs() < 2.0**63), n.trunc(), -1.0)


def _recurrence(ni: Tensor, need: Tensor, first: Tensor, result: Tensor, step) -> Tensor:
    """``result`` with, where ``need``, the degree-``ni`` value of the recurrence ``step(j, P_{j-2}, P_{j-1})``
    from ``P_0 = 1`` and ``P_1 = first``."""
    if ni.numel() == 0 or ni.device.type == "meta":  # nothing to evaluate, or no values (the shape is known)
        return result
    top = _ops.where(need, ni, 0.0).max().item()
    if top < 2:
        return result
    p, q = _ops.ones_like(first), first
    for j in range(2, int(top) + 1):
        p, q = q, step(j, p, q)
        result = _ops.where(need & (ni == j), q, result)
        if j % _CHECK_EVERY == 0:  # Note [Recurrences that saturate]
            pending = need & (ni > j)
            if not bool((pending & ~q.isnan()).any()):
                return _ops.where(pending, q, result)  # NaN from here on, as torch's loop keeps it
            if j >= _MAX_DEGREE:
                raise RuntimeError(f"strided.special: a polynomial degree of {int(top)} needs {int(top)} passes of "
                                   f"the recurrence (one elementwise pass per degree); strided stops at "
                                   f"{_MAX_DEGREE} where the values have not overflowed")
    return result


# Note [Recurrences that saturate]
# torch runs the recurrence in C up to each element's degree, 4988429 steps for n = 4988429.2; strided runs one
# elementwise pass per degree. Where |x| is large the values overflow within a few hundred steps and the recurrence
# then keeps NaN (inf - inf), so every 256 steps strided stops once each element still short of its degree holds
# NaN, and gives them NaN, torch's value. Past 2^16 steps the Chebyshev polynomials outside [-1, 1] take their
# hyperbolic forms (T_n(y) = cosh(n acosh y), ...; +-inf where torch's recurrence overflows to NaN), and a Legendre or
# Laguerre degree that still has finite values there (x near 1, Laguerre's slow decay; seconds of passes) is refused
# in words rather than run for minutes.
_CHECK_EVERY = 256
_MAX_DEGREE = 2**16


def _parity_sign(ni: Tensor) -> Tensor:
    """(-1)^n."""
    return 1 - 2 * _ops.remainder(ni, 2.0)


def _chebyshev(name: str, kind: str, shifted: bool, x, n) -> Tensor:
    x, ni = _operands(name, x, n)
    with no_grad():
        y = x + x - 1 if shifted else x
        two_y = y + y
        first = {"t": y, "u": two_y, "v": two_y - 1, "w": two_y + 1}[kind]
        threshold = {"t": 6, "u": 6 if shifted else 8, "v": 6 if shifted else 8, "w": 4 if shifted else 8}[kind]
        sign, odd_degree = _parity_sign(ni), 2 * ni + 1
        plus = (y == 1) if shifted else (y.abs() == 1) & (y > 0)
        minus = (y == -1) if shifted else (y.abs() == 1) & (y < 0)
        at_plus = {"t": 1.0, "u": ni + 1, "v": 1.0, "w": odd_degree}[kind]
        at_minus = {"t": sign, "u": sign * (ni + 1), "v": sign * odd_degree, "w": sign}[kind]
        inside = (ni > threshold) & (y.abs() < 1)
        theta = y.clamp(-1.0, 1.0).acos()
        if kind == "t":
            closed = (ni * theta).cos()
        elif kind == "u":
            s = theta.sin()
            closed = _ops.where(s != 0, ((ni + 1) * theta).sin() / _ops.where(s != 0, s, 1.0),
                                (ni + 1) * ((ni + 1) * theta).cos() / y)
        elif kind == "v":
            closed = _ops.where((theta / 2).sin() != 1, ((ni + 0.5) * theta).cos() / (theta / 2).cos(),
                                sign * odd_degree)
        else:
            half_sin = (theta / 2).sin()
            closed = _ops.where((theta / 2).cos() != 1, ((ni + 0.5) * theta).sin() / _ops.where(
                half_sin != 0, half_sin, 1.0), _ops.where(y > 0, odd_degree, sign))
        special = plus | minus
        # Note [Recurrences that saturate]: a degree past the recurrence's limit outside [-1, 1] by the hyperbolic forms
        far = (ni > _MAX_DEGREE) & (y.abs() > 1)
        any_far = ni.device.type != "meta" and ni.numel() > 0 and bool(far.any())  # meta: no values to test
        if any_far:
            t = y.abs().clamp(1.0, None).acosh()
            flip = _ops.where(y < 0, sign, 1.0)  # (-1)^n below -1
            ch, sh = ((ni + 0.5) * t).cosh(), ((ni + 0.5) * t).sinh()
            even, odd = ch / (t / 2).cosh(), sh / (t / 2).sinh()  # V and W at |y|
            hyperbolic = {"t": (ni * t).cosh(), "u": ((ni + 1) * t).sinh() / t.sinh(),
                          "v": _ops.where(y > 0, even, odd), "w": _ops.where(y > 0, odd, even)}[kind]
            result_far = flip * hyperbolic
        need = (ni >= 2) & ~special & ~inside & ~far
        result = _ops.where(ni == 1, first, _ops.ones_like(y))
        result = _recurrence(ni, need, first, result, lambda j, p, q: two_y * q - p)
        result = _ops.where(inside, closed, result)
        if any_far:
            result = _ops.where(far, result_far, result)
        result = _ops.where(minus, at_minus, _ops.where(plus, at_plus, result))
        return _ops.where(ni < 0, 0.0, result)


def _hermite(name: str, physicists: bool, x, n) -> Tensor:
    x, ni = _operands(name, x, n)
    with no_grad():
        first = x + x if physicists else x
        result = _ops.where(ni == 1, first, _ops.ones_like(x))
        limit = 128 if x.dtype is _dt.float32 else 512
        need = (ni >= 2) & (ni <= limit)
        if physicists:
            result = _recurrence(ni, need, first, result, lambda j, p, q: first * q - 2 * (j - 1) * p)
        else:
            result = _recurrence(ni, need, first, result, lambda j, p, q: x * q - (j - 1) * p)
        result = _ops.where(ni > limit, math.nan, result)
        return _ops.where(ni < 0, 0.0, result)


def laguerre_polynomial_l(x, n, *, out=None) -> Tensor:
    """torch.special.laguerre_polynomial_l: the Laguerre polynomial ``L_n(x)`` (Note [Polynomials of a tensor
    degree])."""
    name = "laguerre_polynomial_l"
    x, ni = _operands(name, x, n)
    with no_grad():
        first = 1 - x
        result = _ops.where(ni == 1, first, _ops.ones_like(x))
        need = (ni >= 2) & (x != 0)
        result = _recurrence(ni, need, first, result, lambda j, p, q: ((2 * (j - 1) + first) * q - (j - 1) * p) / j)
        result = _ops.where(x == 0, 1.0, result)
        return _special._out(name, _ops.where(ni < 0, 0.0, result), out)


def legendre_polynomial_p(x, n, *, out=None) -> Tensor:
    """torch.special.legendre_polynomial_p: the Legendre polynomial ``P_n(x)`` (Note [Polynomials of a tensor
    degree])."""
    name = "legendre_polynomial_p"
    x, ni = _operands(name, x, n)
    with no_grad():
        ends = x.abs() == 1
        result = _ops.where(ni == 1, x, _ops.ones_like(x))
        need = (ni >= 2) & ~ends
        result = _recurrence(ni, need, x, result, lambda j, p, q: ((2 * j - 1) * x * q - (j - 1) * p) / j)
        result = _ops.where(ends, _ops.where(x > 0, 1.0, _parity_sign(ni)), result)
        return _special._out(name, _ops.where(ni < 0, 0.0, result), out)


def _polynomial(name: str, compute, doc: str):
    def fn(x, n, *, out=None) -> Tensor:
        return _special._out(name, compute(name, x, n), out)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.special.{name}: {doc} (Note [Polynomials of a tensor degree])."
    return fn


def _cheb(kind: str, shifted: bool):
    return lambda name, x, n: _chebyshev(name, kind, shifted, x, n)


chebyshev_polynomial_t = _polynomial("chebyshev_polynomial_t", _cheb("t", False), "the Chebyshev polynomial T_n(x)")
chebyshev_polynomial_u = _polynomial("chebyshev_polynomial_u", _cheb("u", False), "the Chebyshev polynomial U_n(x)")
chebyshev_polynomial_v = _polynomial("chebyshev_polynomial_v", _cheb("v", False), "the Chebyshev polynomial V_n(x)")
chebyshev_polynomial_w = _polynomial("chebyshev_polynomial_w", _cheb("w", False), "the Chebyshev polynomial W_n(x)")
shifted_chebyshev_polynomial_t = _polynomial("shifted_chebyshev_polynomial_t", _cheb("t", True),
                                             "T_n(2x - 1), the shifted Chebyshev polynomial on [0, 1]")
shifted_chebyshev_polynomial_u = _polynomial("shifted_chebyshev_polynomial_u", _cheb("u", True),
                                             "U_n(2x - 1), the shifted Chebyshev polynomial on [0, 1]")
shifted_chebyshev_polynomial_v = _polynomial("shifted_chebyshev_polynomial_v", _cheb("v", True),
                                             "V_n(2x - 1), the shifted Chebyshev polynomial on [0, 1]")
shifted_chebyshev_polynomial_w = _polynomial("shifted_chebyshev_polynomial_w", _cheb("w", True),
                                             "W_n(2x - 1), the shifted Chebyshev polynomial on [0, 1]")
hermite_polynomial_h = _polynomial("hermite_polynomial_h", lambda name, x, n: _hermite(name, True, x, n),
                                   "the physicists' Hermite polynomial H_n(x)")
hermite_polynomial_he = _polynomial("hermite_polynomial_he", lambda name, x, n: _hermite(name, False, x, n),
                                    "the probabilists' Hermite polynomial He_n(x)")
