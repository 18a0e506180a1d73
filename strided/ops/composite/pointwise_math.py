"""CompositeImplicitAutograd elementwise math: ldexp, signbit, heaviside, logit, sinc, float_power,
deg2rad, rad2deg, isneginf, isposinf, isreal, xlogy_ (each torch's own composition or an exact
rewrite of its kernel). The igamma / gcd / nextafter / frexp kernels are in ``backends/*/math_more.py``.

Note [sinc at zero]
``sin(pi x) / (pi x)`` is 0/0 at 0; ``where(x == 0, 1, ...)`` alone would still send NaN gradients
through the unselected branch, so the division reads a safe ``x`` (1 where x is 0), as torch's
``sinc_backward`` is finite (0) there.
"""

from __future__ import annotations

import math

from ... import dtypes as dt
from ...backends.meta.pointwise import scalar_type_name
from ...dispatch.library import kernel
from ...tensor import Tensor
from .. import bound as ops
from .inplace_compositions import grad_safe_source

__all__ = []


def _float(self):
    """``self`` promoted to the default float dtype when it is integral or bool (torch's unary float ops);
    floating and complex tensors as they are."""
    return self if self.dtype.is_floating_point or self.dtype.is_complex else self.to(dt.get_default_dtype())


@kernel("CompositeImplicitAutograd")
def ldexp(self, other):
    """``self * 2 ** other`` in the operands' promoted type (the default float for two integer ones), as torch.

    torch's CPU kernel for a floating ``self`` and an integer exponent has no bool loop; a bool exponent of a
    floating ``self`` is refused in its words there."""
    out = dt.result_type(self, other)  # as torch's mul: a 0-dim operand promotes by category only
    if not (out.is_floating_point or out.is_complex):
        out = dt.get_default_dtype()
    if self.dtype.is_floating_point and other.dtype is dt.bool and self.device.type == "cpu":
        raise NotImplementedError("\"ldexp_cpu_exp\" not implemented for 'Bool'")
    # a complex exponent stays complex (2 ** (a + bi)); a real one in the result's real dtype
    scale = ops.pow(2.0, other.to(out if other.dtype.is_complex else out.to_real() if out.is_complex else out))
    return ops.mul(self, scale).to(out)


@kernel("CompositeImplicitAutograd")
def signbit(self):
    """True where the sign bit is set (-0.0 and negative NaN included)."""
    if self.dtype is dt.bool or not self.dtype.is_signed:
        return ops.zeros_like(self, dtype=dt.bool)
    if not self.dtype.is_floating_point:
        return ops.lt(self, 0)
    return ops.lt(ops.copysign(ops.ones_like(self), self), 0)


@kernel("CompositeImplicitAutograd")
def heaviside(self, values):
    """0 where ``self < 0``, 1 where ``self > 0`` and ``values`` where ``self == 0``."""
    if not isinstance(values, Tensor):  # a number: torch's binding refuses it (no Scalar overload)
        raise TypeError(f"heaviside(): argument 'values' (position 2) must be Tensor, not {type(values).__name__}")
    if self.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    if self.dtype is dt.bool:
        return ops.logical_or(self, values)
    pos = ops.gt(self, 0).to(self.dtype)
    return ops.where(ops.eq(self, 0), values, pos)


@kernel("CompositeExplicitAutograd")
def logit(self, eps=None):
    """``log(x / (1 - x))``, ``x`` clamped to ``[eps, 1 - eps]`` when ``eps`` is given (and not negative: torch's
    kernel does not clamp then). Past ``eps = 0.5`` the bounds cross and torch's ``x < lo ? lo : x > hi ? hi : x``
    gives ``lo`` below ``lo`` and ``hi`` from there, where ``clamp`` gives ``hi`` everywhere."""
    x = _float(self)
    if eps is not None and eps >= 0:
        lo, hi = eps, 1 - eps
        x = ops.clamp(x, lo, hi) if lo <= hi else ops.where(ops.lt(x, lo), lo, ops.where(ops.gt(x, hi), hi, x))
    return ops.log(ops.div(x, ops.rsub(x, 1)))


@kernel("CompositeImplicitAutograd")
def sinc(self):
    """``sin(pi x) / (pi x)``, 1 at 0 (Note [sinc at zero]); float16 / bfloat16 compute in float32, as torch's
    kernel (``pi x`` rounded to half loses every digit of ``sin`` past |x| ~ 100)."""
    x = _float(self)
    half = x.dtype in (dt.float16, dt.bfloat16)
    if half:
        x = x.to(dt.float32)
    zero = ops.eq(x, 0)
    safe = ops.where(zero, 1.0, x)
    px = ops.mul(safe, math.pi)
    result = ops.where(zero, 1.0, ops.div(ops.sin(px), px))
    return result.to(self.dtype) if half else result


def _is_complex(x) -> bool:
    return x.dtype.is_complex if isinstance(x, Tensor) else isinstance(x, complex)


def _double(x, complex_result: bool = False):
    """``x`` in float64, or complex128 when the result is complex (torch's float_power)."""
    if isinstance(x, Tensor):
        return x.to(dt.complex128 if complex_result else dt.float64)
    return complex(x) if complex_result else float(x)


def _float_power(self, exponent):
    wide = _is_complex(self) or _is_complex(exponent)
    return ops.pow(_double(self, wide), _double(exponent, wide))


@kernel("CompositeImplicitAutograd")
def float_power_tensor_tensor(self, exponent):
    """``pow`` in float64 (complex128 when either operand is complex)."""
    return _float_power(self, exponent)


@kernel("CompositeImplicitAutograd")
def float_power_tensor_scalar(self, exponent):
    """``pow`` in float64 (complex128 when either operand is complex)."""
    return _float_power(self, exponent)


@kernel("CompositeImplicitAutograd")
def float_power_scalar(self, exponent):
    """``pow`` in float64 (complex128 when either operand is complex)."""
    return _float_power(self, exponent)


def _float_power_inplace(self, exponent):
    wide = _is_complex(self) or _is_complex(exponent)
    need = dt.complex128 if wide else dt.float64
    if self.dtype is not need:
        raise RuntimeError(f"the base given to float_power_ has dtype {scalar_type_name(self.dtype)} but the "
                           f"operation's result requires dtype {scalar_type_name(need)}")
    return ops.copy_(self, ops.pow(grad_safe_source(self, exponent), _double(exponent, wide)))


@kernel("CompositeImplicitAutograd")
def float_power__tensor(self, exponent):
    """In-place ``float_power`` (``self`` must be float64)."""
    return _float_power_inplace(self, exponent)


@kernel("CompositeImplicitAutograd")
def float_power__scalar(self, exponent):
    """In-place ``float_power`` (``self`` must be float64)."""
    return _float_power_inplace(self, exponent)


@kernel("CompositeImplicitAutograd")
def deg2rad(self):
    """Degrees to radians (integers promote to the default float)."""
    return ops.mul(_float(self), math.pi / 180)


@kernel("CompositeImplicitAutograd")
def rad2deg(self):
    """Radians to degrees (integers promote to the default float)."""
    return ops.mul(_float(self), 180 / math.pi)


@kernel("CompositeImplicitAutograd")
def isneginf(self):
    """True where ``self`` is -inf."""
    if not self.dtype.is_floating_point:
        return ops.zeros_like(self, dtype=dt.bool)
    return ops.eq(self, -math.inf)


@kernel("CompositeImplicitAutograd")
def isposinf(self):
    """True where ``self`` is +inf."""
    if not self.dtype.is_floating_point:
        return ops.zeros_like(self, dtype=dt.bool)
    return ops.eq(self, math.inf)


@kernel("CompositeImplicitAutograd")
def isreal(self):
    """True where the imaginary part is 0 (everywhere for real dtypes)."""
    if self.dtype.is_complex:
        return ops.eq(ops.imag(self), 0)
    return ops.ones_like(self, dtype=dt.bool)


@kernel("CompositeImplicitAutograd")
def xlogy__tensor(self, other):
    """In-place ``xlogy``."""
    result = ops.xlogy(grad_safe_source(self, other), other)
    if not dt.can_cast(result.dtype, self.dtype):
        raise RuntimeError(f"result type {scalar_type_name(result.dtype)} can't be cast to the desired output type "
                           f"{scalar_type_name(self.dtype)}")
    return ops.copy_(self, result)


def _wrapped(value, like: Tensor) -> Tensor:
    """A Python number as torch's wrapped number: a 0-dim tensor on ``like``'s device that promotes as the number
    does (a 0-dim tensor wins only across categories, with its own dtype: so a float joins an integer tensor in the
    default float dtype and a complex one in the promoted complex dtype), exact where it cannot win."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, bool):
        d = dt.bool
    elif isinstance(value, int):
        d = dt.int64
    elif isinstance(value, float):
        d = dt.float64 if like.dtype.is_floating_point or like.dtype.is_complex else dt.get_default_dtype()
    else:
        d = dt.result_type(like, value)
    return ops.full((), value, dtype=d, device=like.device)


@kernel("CompositeImplicitAutograd")
def xlogy__scalar_other(self, other):
    """In-place ``xlogy`` with a Scalar ``other``."""
    return xlogy__tensor(self, _wrapped(other, self))


@kernel("CompositeImplicitAutograd")
def xlogy_scalar_other(self, other):
    """``xlogy`` with a Scalar ``other``."""
    return ops.xlogy(self, _wrapped(other, self))


@kernel("CompositeImplicitAutograd")
def xlogy_scalar_self(self, other):
    """``xlogy`` with a Scalar ``self``."""
    return ops.xlogy(_wrapped(self, other), other)


@kernel("CompositeImplicitAutograd")
def copysign_scalar(self, other):
    """``copysign`` with a Scalar ``other`` (its sign, as torch's: -0.0 counts as negative)."""
    return ops.copysign(self, _wrapped(other, self))


@kernel("CompositeImplicitAutograd")
def copysign__scalar(self, other):
    """In-place ``copysign`` with a Scalar ``other``."""
    return ops.copysign_(self, _wrapped(other, self))


@kernel("CompositeImplicitAutograd")
def special_zeta_self_scalar(self, other):
    """``special_zeta`` with a Scalar ``self``."""
    return ops.special_zeta(_wrapped(self, other), other)


@kernel("CompositeImplicitAutograd")
def special_zeta_other_scalar(self, other):
    """``special_zeta`` with a Scalar ``other``."""
    return ops.special_zeta(self, _wrapped(other, self))
