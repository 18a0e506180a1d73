"""CUDA kernels for the pointwise ops (binary, ternary, unary), on the elementwise engine.

Each kernel calls the op's Meta function for its output (validation, promotion, shape, strides),
exactly as the CPU kernel does, then runs one expression of ``elementwise.cuh`` over the operands
(Note [Elementwise kernels] in ``strided/backends/cuda/elementwise.py``). The expressions follow
the CPU kernels (``strided/backends/cpu/pointwise*.py``) and torch's CUDA kernels: NaN propagates
through maximum/minimum/clamp/relu, ``sign(nan)`` is 0, ``round`` is half to even, integer powers
with negative exponents give 1, (-1)**b or 0, floor division and remainder follow Python's signs.

Note [CUDA integer division by zero]
The CPU kernels raise ``ZeroDivisionError`` when an integer ``div`` (trunc/floor), ``floor_divide``
or ``remainder`` divides by zero; finding that out on the GPU would need a device-to-host copy and a
synchronization per call. torch's CUDA kernels do not check either: the result is whatever the
hardware's integer division gives (unspecified). strided does as torch's CUDA backend does.
"""

from __future__ import annotations

import numpy as np

from .... import dtypes as dt
from ....dispatch.library import kernel
from ....tensor import Tensor
from ...meta import pointwise as meta
from ...meta import pointwise_unary as meta_u
from ..elementwise import binary, opmath, run

__all__ = ["instantiations"]

_C4 = {d: (opmath(d),) * 4 for d in dt.all_dtypes + dt.complex_dtypes}  # each operand in the result's opmath type
_SAME4 = {d: (d,) * 4 for d in dt.all_dtypes}
_BOOL4 = (dt.bool,) * 4


def _floating(d: dt.dtype) -> bool:
    return d.category == dt.FLOATING


# ---------------------------------------------------------------------------- arithmetic
@kernel("CUDA")
def add(self, other, alpha=1):
    if other.__class__ is Tensor and alpha.__class__ is int and alpha == 1:
        return binary("x0 + x1", meta.add, self, other, _C4)  # Note [Binary plan memo]
    out = meta.add(self, other, alpha)
    if alpha == 1:
        return run("x0 + x1", out, (self, other), _C4[out.dtype])
    return run("x0 + x2 * x1", out, (self, other, alpha), _C4[out.dtype])


@kernel("CUDA")
def sub(self, other, alpha=1):
    if other.__class__ is Tensor and alpha.__class__ is int and alpha == 1:
        return binary("x0 - x1", meta.sub, self, other, _C4)
    out = meta.sub(self, other, alpha)
    if alpha == 1:
        return run("x0 - x1", out, (self, other), _C4[out.dtype])
    return run("x0 - x2 * x1", out, (self, other, alpha), _C4[out.dtype])


@kernel("CUDA")
def mul(self, other):
    if other.__class__ is Tensor:
        return binary("x0 * x1", meta.mul, self, other, _C4)
    out = meta.mul(self, other)
    return run("x0 * x1", out, (self, other), _C4[out.dtype])


_DIV = {
    (None, True): "x0 / x1",
    ("trunc", True): "ew_trunc(x0 / x1)", ("trunc", False): "x0 / x1",
    ("floor", True): "ew_div_floor_f(x0, x1)", ("floor", False): "ew_div_floor_i(x0, x1)",
}


@kernel("CUDA")
def div(self, other, *, rounding_mode=None):
    if rounding_mode is None and other.__class__ is Tensor:  # true division: always a floating result
        return binary("x0 / x1", meta.div, self, other, _C4)
    out = meta.div(self, other, rounding_mode=rounding_mode)
    d = out.dtype
    return run(_DIV[rounding_mode, d.category >= dt.FLOATING], out, (self, other), _C4[d])  # complex: x0 / x1


@kernel("CUDA")
def floor_divide(self, other):
    out = meta.floor_divide(self, other)
    d = out.dtype
    return run(_DIV["floor", _floating(d)], out, (self, other), _C4[d])


@kernel("CUDA")
def remainder(self, other):
    out = meta.remainder(self, other)
    d = out.dtype
    return run("ew_rem_f(x0, x1)" if _floating(d) else "ew_rem_i(x0, x1)", out, (self, other), _C4[d])


def _pow(out, base, exponent):
    d = out.dtype
    if d.category >= dt.FLOATING:  # complex: ew_pow of complex.cuh (Note [Complex math])
        return run("ew_pow(x0, x1)", out, (base, exponent), _C4[d])
    if d is dt.bool:  # bool ** bool (torch allows it): integers 0/1
        return run("ew_powi(x0, x1)", out, (base, exponent), _SAME4[dt.int32])
    return run("ew_powi(x0, x1)", out, (base, exponent), _SAME4[d])


# Note [CUDA pow fast paths]
# torch's CUDA pow with a number exponent fills 1 for an exponent of 0 and copies the base for 1 (Pow.cpp, before
# any kernel); its pow_tensor_scalar_kernel (a number or a 0-dim CPU tensor exponent) then runs sqrt for 0.5,
# rsqrt for -0.5 and reciprocal for -1 when the exponent is not complex, in every floating and complex dtype
# (pow(-inf, 0.5) is nan there, not powf's inf; pow(-0.0, 0.5) is -0.0), ``base * base`` for 2 with a complex
# result, and ``base * base``, ``base * base * base``, ``1 / (base * base)`` for 2, 3, -2 with a real one. Anything
# else is powf, or exp(y log x) for complex (Note [Complex math]). The products matter beyond speed: a complex
# square through exp(2 log z) is off in its last bits (z ** 1 was not z) and gives nan + nan i at infinities where
# z * z gives torch's inf + nan i. torch rounds a number exponent to a half or bfloat16 tensor's dtype first (1.7 is
# 1.703125 in bfloat16: 1.3% off at 100 ** 1.7); strided keeps it in float, as the CPU backend does.
_POW_ROOTS = {0.5: "ew_sqrt(x0)", -0.5: "C0(1) / ew_sqrt(x0)", -1: "C0(1) / x0"}
_POW_PRODUCTS = {2: "x0 * x0", 3: "x0 * x0 * x0", -2: "C0(1) / (x0 * x0)"}
_NUMBERS = (int, float, complex, bool)


def _pow_fast_path(e, number: bool, d: dt.dtype) -> str | None:
    """The expression torch's CUDA pow runs for the scalar exponent ``e`` and result dtype ``d``, when it is not
    pow itself (Note [CUDA pow fast paths]); ``number``: ``e`` was a Python number, not a 0-dim CPU tensor."""
    if d is dt.bool:
        return None
    if number and e == 0:
        return "C0(1)"
    if number and e == 1:
        return "x0"
    real = e.__class__ is not complex
    if d.category >= dt.FLOATING and real and e in _POW_ROOTS:
        return _POW_ROOTS[e]
    if d.is_complex:
        return "x0 * x0" if e == 2 else None
    return _POW_PRODUCTS.get(e) if real else None


@kernel("CUDA")
def pow(self, exponent):  # noqa: A001 - the op's name
    out = meta.pow(self, exponent)
    e = exponent
    number = e.__class__ in _NUMBERS
    if not number and e.__class__ is Tensor and not e._sizes and e.device.type == "cpu":
        e = e.item()
    if number or e is not exponent:
        expr = _pow_fast_path(e, number, out.dtype)
        if expr is not None:
            return run(expr, out, (self,), _C4[out.dtype])
    return _pow(out, self, exponent)


@kernel("CUDA")
def pow_scalar_base(self, exponent):
    return _pow(meta.pow_scalar_base(self, exponent), self, exponent)


@kernel("CUDA")
def maximum(self, other):
    out = meta.maximum(self, other)
    return run("ew_max(x0, x1)", out, (self, other), _C4[out.dtype])


@kernel("CUDA")
def minimum(self, other):
    out = meta.minimum(self, other)
    return run("ew_min(x0, x1)", out, (self, other), _C4[out.dtype])


# ---------------------------------------------------------------------------- comparisons, logical
def _exact_scalar(x, d: dt.dtype):
    """A Python scalar rounded to ``d`` first (torch compares ``half_tensor == 0.1`` in half)."""
    if d is dt.float16 or d is dt.bfloat16:
        return float(np.asarray(x, dtype=np.float64).astype(d.numpy_dtype))
    return x


def _comparison(name, expr):
    def compare(self, other):
        out = meta.comparison(self, other, name)
        d = dt.result_type(self, other)
        if not isinstance(other, Tensor):
            other = _exact_scalar(other, d)
        return run(expr, out, (self, other), _C4[d])

    compare.__name__ = compare.__qualname__ = name
    return kernel("CUDA")(compare)


eq = _comparison("eq", "x0 == x1")
ne = _comparison("ne", "x0 != x1")
lt = _comparison("lt", "x0 < x1")
le = _comparison("le", "x0 <= x1")
gt = _comparison("gt", "x0 > x1")
ge = _comparison("ge", "x0 >= x1")


def _truth(x):
    """A complex operand as its truth values (either part nonzero): the bool kernels have no complex loads."""
    return x.ne(0) if getattr(x, "dtype", None) is not None and x.dtype.is_complex else x


def _logical(name, expr):
    def logical(self, other):
        out = meta.comparison(self, other)
        return run(expr, out, (_truth(self), _truth(other)), _BOOL4)

    logical.__name__ = logical.__qualname__ = name
    return kernel("CUDA")(logical)


logical_and = _logical("logical_and", "x0 && x1")
logical_or = _logical("logical_or", "x0 || x1")
logical_xor = _logical("logical_xor", "x0 != x1")


@kernel("CUDA")
def logical_not(self):
    return run("!x0", meta.logical_not(self), (_truth(self),), _BOOL4)


# ---------------------------------------------------------------------------- ternary
@kernel("CUDA")
def where(condition, self, other):
    out = meta.where(condition, self, other)
    c = opmath(out.dtype)
    return run("x0 ? x1 : x2", out, (condition, self, other), (dt.bool, c, c))


@kernel("CUDA")
def clamp(self, min=None, max=None):  # noqa: A002 - the schema's names
    out = meta.clamp(self, min, max)
    cs = _C4[out.dtype]
    if min is None:
        return run("ew_min(x0, x1)", out, (self, max), cs)
    if max is None:
        return run("ew_max(x0, x1)", out, (self, min), cs)
    return run("ew_min(ew_max(x0, x1), x2)", out, (self, min, max), cs)


@kernel("CUDA")
def lerp(self, end, weight):
    out = meta.lerp(self, end, weight)
    return run("ew_lerp(x0, x1, x2)", out, (self, end, weight), _C4[out.dtype])


@kernel("CUDA")
def addcmul(self, tensor1, tensor2, *, value=1):
    out = meta.addcmul(self, tensor1, tensor2, value=value)
    if value == 1:
        return run("x0 + x1 * x2", out, (self, tensor1, tensor2), _C4[out.dtype])
    return run("x0 + x3 * (x1 * x2)", out, (self, tensor1, tensor2, value), _C4[out.dtype])


@kernel("CUDA")
def addcdiv(self, tensor1, tensor2, *, value=1):
    out = meta.addcdiv(self, tensor1, tensor2, value=value)
    if value == 1:
        return run("x0 + x1 / x2", out, (self, tensor1, tensor2), _C4[out.dtype])
    return run("x0 + (x3 * x1) / x2", out, (self, tensor1, tensor2, value), _C4[out.dtype])


@kernel("CUDA")
def masked_fill(self, mask, value):
    out = meta.masked_fill(self, mask, value)
    d = out.dtype  # the value is cast straight to self's dtype (no opmath round trip)
    return run("x1 ? x2 : x0", out, (self, mask, value), (d, dt.bool, d))


# ---------------------------------------------------------------------------- unary
@kernel("CUDA")
def neg(self):
    out = meta_u.neg(self)
    return run("-x0", out, (self,), _C4[out.dtype])


@kernel("CUDA")
def abs(self):  # noqa: A001 - the op's name
    out = meta_u.abs(self)
    if self.dtype.is_complex:  # |z| in the real dtype (complex.cuh)
        return run("ew_cabs(x0)", out, (self,), (self.dtype,))
    d = out.dtype
    expr = "ew_fabs(x0)" if _floating(d) else ("x0" if d in (dt.uint8, dt.bool) else "(x0 < 0 ? -x0 : x0)")
    return run(expr, out, (self,), _C4[d])


@kernel("CUDA")
def sign(self):
    out = meta_u.sign(self)
    d = out.dtype
    expr = "x0" if d is dt.bool else ("(x0 != 0)" if d is dt.uint8 else "ew_sign(x0)")
    return run(expr, out, (self,), _C4[d])


@kernel("CUDA")
def relu(self):
    out = meta_u.relu(self)
    return run("(x0 > C0(0) || ew_isnan(x0)) ? x0 : C0(0)", out, (self,), _C4[out.dtype])


_FLOAT_EXPRS = {
    "exp": "ew_exp(x0)", "log": "ew_log(x0)", "log1p": "ew_log1p(x0)", "expm1": "ew_expm1(x0)",
    "sqrt": "ew_sqrt(x0)", "rsqrt": "C0(1) / ew_sqrt(x0)", "reciprocal": "C0(1) / x0", "sin": "ew_sin(x0)",
    "cos": "ew_cos(x0)", "tanh": "ew_tanh(x0)", "sigmoid": "ew_sigmoid(x0)",
    **{name: f"ew_{name}(x0)" for name in ("tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh",
                                           "erf", "erfc", "erfinv", "log2", "log10", "exp2", "lgamma",
                                           "digamma")},
}


def _float_unary(name, expr):
    def unary(self):
        out = meta_u.float_unary(self)
        return run(expr, out, (self,), _C4[out.dtype])

    unary.__name__ = unary.__qualname__ = name
    return kernel("CUDA")(unary)


for _name in meta_u.FLOAT_UNARY:
    globals()[_name] = _float_unary(_name, _FLOAT_EXPRS[_name])


@kernel("CUDA")
def gelu(self, *, approximate="none"):
    out = meta_u.gelu(self, approximate=approximate)
    return run("ew_gelu_tanh(x0)" if approximate == "tanh" else "ew_gelu(x0)", out, (self,), _C4[out.dtype])


@kernel("CUDA")
def gelu_backward(grad_output, self, *, approximate="none"):
    out = meta_u.gelu_backward(grad_output, self, approximate=approximate)
    expr = "ew_gelu_tanh_bwd(x0, x1)" if approximate == "tanh" else "ew_gelu_bwd(x0, x1)"
    return run(expr, out, (grad_output, self), _C4[out.dtype])


@kernel("CUDA")
def silu(self):
    out = meta_u.silu(self)
    return run("x0 / (C0(1) + ew_exp(-x0))", out, (self,), _C4[out.dtype])


@kernel("CUDA")
def softplus(self, beta=1, threshold=20):
    out = meta_u.softplus(self, beta, threshold)
    return run("ew_softplus(x0, x1, x2)", out, (self, beta, threshold), _C4[out.dtype])


def _rounding(name, expr):
    def rounding(self):
        out = meta_u.rounding(self, name)
        d = out.dtype
        return run(expr if _floating(d) else "x0", out, (self,), _C4[d])

    rounding.__name__ = rounding.__qualname__ = name
    return kernel("CUDA")(rounding)


floor = _rounding("floor", "ew_floor(x0)")
ceil = _rounding("ceil", "ew_ceil(x0)")
round = _rounding("round", "ew_rint(x0)")  # noqa: A001 - half to even, as torch
trunc = _rounding("trunc", "ew_trunc(x0)")


def _predicate(name, expr, integer_value):
    def predicate(self):
        out = meta_u.predicate(self)
        d = self.dtype
        return run(expr if d.category >= dt.FLOATING else integer_value, out, (self,), _C4[d])  # complex.cuh

    predicate.__name__ = predicate.__qualname__ = name
    return kernel("CUDA")(predicate)


isnan = _predicate("isnan", "ew_isnan(x0)", "false")
isinf = _predicate("isinf", "ew_isinf(x0)", "false")
isfinite = _predicate("isfinite", "ew_isfinite(x0)", "true")


def instantiations(dtypes=dt.all_dtypes) -> list:
    """The ``(expr, out dtype, slots)`` the kernels here instantiate for ``dtypes`` (see
    ``pointwise_instantiations.py``): for the NVRTC null test and ``elementwise.precompile``."""
    from .pointwise_instantiations import instantiations as find

    return find(dtypes)


from . import gamma_ops  # noqa: E402, F401 - polygamma, mvlgamma (int-parameter unary ops)
