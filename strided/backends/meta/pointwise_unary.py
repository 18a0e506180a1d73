"""Meta functions for pointwise unary ops (``neg``, ``exp``, ``gelu``, ``isnan`` ...).

Note [Unary int-to-float]
Floating unary ops (exp, log, sqrt, sin, tanh, sigmoid ...) on integer or bool inputs return the
default float dtype, as torch's ``promoteIntegerToFloat`` does; neg, abs, sign, relu, floor, ceil,
round and trunc keep integer dtypes; isnan/isinf/isfinite return bool. Activations with no integer
kernel in torch (gelu, silu, softplus) raise its AT_DISPATCH error instead. ``polygamma(n, self)``
and ``mvlgamma(self, p)`` are floating unary ops of ``self`` with an int parameter; the in-place
``polygamma_(self, n)`` is written out (autogen needs ``self`` first) with the autogen in-place checks
(Note [Autogen]).
"""

from __future__ import annotations

from ... import dtypes as dt
from ...dispatch.library import kernel
from .common import check, new_output_like
from .pointwise import not_implemented
from .reductions import type_name

__all__ = ["float_unary_dtype", "float_unary", "predicate", "rounding", "FLOAT_UNARY", "GELU_APPROXIMATIONS"]

GELU_APPROXIMATIONS = ("none", "tanh")


def float_unary_dtype(d: dt.dtype) -> dt.dtype:
    """The result dtype of a floating unary op (Note [Unary int-to-float])."""
    return d if d.category >= dt.FLOATING else dt.get_default_dtype()  # floating and complex keep theirs


FLOAT_UNARY = ("exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "reciprocal", "sin", "cos", "tanh",
               "sigmoid", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "erf", "erfc",
               "erfinv", "log2", "log10", "exp2", "lgamma", "digamma")


def float_unary(self):
    """Floating unary ops: ``self``'s shape and layout, int/bool promoted to the default float."""
    return new_output_like(self, float_unary_dtype(self.dtype))


for _name in FLOAT_UNARY:
    kernel("Meta", name=_name)(float_unary)


@kernel("Meta")
def polygamma(n, self):
    check(n >= 0, "polygamma(n, x) does not support negative n.")
    return float_unary(self)


@kernel("Meta")
def polygamma_(self, n):
    """Validates the in-place form and returns ``self`` (every backend's kernel calls this first)."""
    check(n >= 0, "polygamma(n, x) does not support negative n.")
    d = float_unary_dtype(self.dtype)
    check(dt.can_cast(d, self.dtype),
          f"result type {type_name(d)} can't be cast to the desired output type {type_name(self.dtype)}")
    check(0 in self._sizes or not any(st == 0 and size > 1 for size, st in zip(self._sizes, self._strides)),
          "unsupported operation: more than one element of the written-to tensor refers to a single memory "
          "location. Please clone() the tensor before performing the operation.")
    return self


@kernel("Meta")
def mvlgamma(self, p):
    check(self.dtype is not dt.bool, "The input tensor may not be a boolean tensor.")
    check(p >= 1, "p has to be greater than or equal to 1")
    return float_unary(self)


@kernel("Meta")
def neg(self):
    if self.dtype is dt.bool:  # torch's TORCH_CHECK_NOT_IMPLEMENTED
        raise NotImplementedError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
                                  "to invert a mask, use the `~` or `logical_not()` operator instead.")
    return new_output_like(self)


@kernel("Meta")
def abs(self):  # noqa: A001 - the op's name
    if self.dtype is dt.bool and self.device.type != "cuda":  # torch's CUDA kernel takes bool (the identity)
        raise not_implemented("abs_cpu", self.dtype)
    return new_output_like(self, self.dtype.to_real() if self.dtype.is_complex else None)


@kernel("Meta")
def sign(self):
    return new_output_like(self)


@kernel("Meta")
def relu(self):
    if self.dtype is dt.bool:  # torch's TORCH_CHECK_NOT_IMPLEMENTED
        raise NotImplementedError("Boolean inputs not supported for relu")
    return new_output_like(self)


def _floating_only(self, kernel_name: str, cuda_name: str | None = None):
    """Floating inputs only, else torch's AT_DISPATCH error (``cuda_name``: its CUDA kernel's, where different)."""
    if not self.dtype.is_floating_point:
        raise not_implemented(cuda_name if cuda_name and self.device.type == "cuda" else kernel_name, self.dtype)
    return new_output_like(self)


@kernel("Meta")
def gelu(self, *, approximate="none"):
    check(approximate in GELU_APPROXIMATIONS, "approximate argument must be either none or tanh.")
    return _floating_only(self, "GeluKernelImpl", "GeluCUDAKernelImpl")


@kernel("Meta")
def gelu_backward(grad_output, self, *, approximate="none"):
    """torch's gelu_backward: a binary pointwise op over (grad_output, self) in their common dtype."""
    from .pointwise import pointwise_output

    check(approximate in GELU_APPROXIMATIONS, "approximate argument must be either none or tanh.")
    d = dt.promote_types(grad_output.dtype, self.dtype)
    if not d.is_floating_point:
        raise not_implemented("GeluBackwardKernelImpl", d)
    return pointwise_output(d, grad_output, self)


@kernel("Meta")
def silu(self):
    if self.dtype.is_complex:  # torch's silu takes complex values (no gradient: autograd/kernels.py)
        return new_output_like(self)
    return _floating_only(self, "silu_cpu", "silu_cuda")


@kernel("Meta")
def softplus(self, beta=1, threshold=20):
    return _floating_only(self, "softplus_cpu", "softplus_cuda")


def rounding(self, name: str):
    """floor, ceil, round, trunc: same dtype; no bool kernel in torch."""
    if self.dtype is dt.bool:
        raise not_implemented(f"{name}_vml_cpu", self.dtype)
    return new_output_like(self)


@kernel("Meta")
def floor(self):
    return rounding(self, "floor")


@kernel("Meta")
def ceil(self):
    return rounding(self, "ceil")


@kernel("Meta")
def round(self):  # noqa: A001 - the op's name
    return rounding(self, "round")


@kernel("Meta")
def trunc(self):
    return rounding(self, "trunc")


def predicate(self):
    """isnan, isinf, isfinite: bool."""
    return new_output_like(self, dt.bool)


for _name in ("isnan", "isinf", "isfinite"):
    kernel("Meta", name=_name)(predicate)
