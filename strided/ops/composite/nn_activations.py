"""torch.nn.functional's activations that are one operator with their own autograd node in torch, composed here of
other ops below autograd (CompositeExplicitAutograd; Note [Functional operators] in ``nn_operators.py``):
``hardtanh`` (``relu6``), ``leaky_relu``, ``elu`` (``selu``), ``celu``, ``hardsigmoid``, ``hardswish``, ``mish``,
``softshrink``, ``hardshrink``, ``threshold``, ``log_sigmoid``, ``glu`` and ``_prelu_kernel`` (F.prelu's), with their
in-place forms (explicit
where torch's gradient reads the result, autogen where it reads the old input). Their gradients are torch's
backward kernels, composed in ``autograd/functions_activations.py``.

Note [Activation operator values]
The forwards are the compositions ``nn/activations.py`` used before (their values already equal torch's kernels at
the edges, Note [Composed activation gradients]): elu's ``expm1`` sees ``where(x > 0, 0, x)`` so a large positive x
does not overflow, log_sigmoid is ``min(x, 0) - log1p(exp(-|x|))``, softshrink's dead zone gives ``x * 0`` (torch's
signed zero). Each refuses the dtypes torch's kernel does, in its words (``"elu_cpu" not implemented for 'Long'``).
The compositions of several arithmetic ops run float16 / bfloat16 inputs in float32 and round once at the end
(``_in_float32``), as torch's kernels compute in their opmath type: rounding after every op would drift a few ulps
from torch's values.
"""

from __future__ import annotations

from ... import dtypes as dt
from ...backends.meta.pointwise import check_floating, check_scalar_fits, scalar_type_name
from ...dispatch.library import kernel
from ...type_info import finfo
from .. import bound as ops
from ..complex_support import refuse_complex

__all__ = []

_HALF = (dt.float16, dt.bfloat16)


def _in_float32(fn):
    """``fn`` computed in float32 for a half-precision ``self``, its result rounded back once."""
    def run(self, *args, **kwargs):
        if self.dtype in _HALF:
            return fn(self.to(dt.float32), *args, **kwargs).to(self.dtype)
        return fn(self, *args, **kwargs)

    run.__name__, run.__doc__ = fn.__name__, fn.__doc__
    return run

@kernel("CompositeExplicitAutograd")
def hardtanh(self, min_val=-1, max_val=1):
    """``clamp(self, min_val, max_val)`` (NaN stays NaN)."""
    return ops.clamp(self, min_val, max_val)


@kernel("CompositeExplicitAutograd")
def leaky_relu(self, negative_slope=0.01):
    """``self`` where ``self > 0``, else ``negative_slope * self`` (floating dtypes, as torch's kernel)."""
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f"\"leaky_relu_{self.device.type}\" not implemented for "
                                  f"'{scalar_type_name(self.dtype)}'")
    return ops.where(ops.gt(self, 0), self, self * negative_slope)


@kernel("CompositeExplicitAutograd")
def leaky_relu_(self, negative_slope=0.01):
    """``leaky_relu`` written into ``self``; its gradient reads the result (Note [Functional operators])."""
    return ops.copy_(self, leaky_relu(self, negative_slope))


@kernel("CompositeExplicitAutograd")
@_in_float32
def elu(self, alpha=1, scale=1, input_scale=1):
    """``scale * x`` for x > 0, else ``alpha * scale * expm1(input_scale * x)`` (selu and celu are elus)."""
    check_floating(self, "elu")
    pos = ops.gt(self, 0)
    neg = ops.where(pos, 0.0, self)
    if input_scale != 1:
        neg = neg * input_scale
    return ops.where(pos, self * scale if scale != 1 else self, ops.expm1(neg) * (alpha * scale))


@kernel("CompositeExplicitAutograd")
def elu_(self, alpha=1, scale=1, input_scale=1):
    """``elu`` written into ``self``; its gradient reads the result (torch's ``is_result``)."""
    return ops.copy_(self, elu(self, alpha, scale, input_scale))


@kernel("CompositeExplicitAutograd")
def celu(self, alpha=1.0):
    """``elu(self, alpha, 1, 1 / alpha)``."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return elu(self, alpha, 1, 1.0 / alpha)


@kernel("CompositeExplicitAutograd")
def celu_(self, alpha=1.0):
    """``celu`` written into ``self``; its gradient reads the result."""
    return ops.copy_(self, celu(self, alpha))


@kernel("CompositeExplicitAutograd")
@_in_float32
def hardsigmoid(self):
    """``clamp(x + 3, 0, 6) / 6``."""
    check_floating(self, "hardsigmoid")
    return ops.clamp(self + 3.0, 0.0, 6.0) / 6.0


@kernel("CompositeExplicitAutograd")
@_in_float32
def hardswish(self):
    """``x * clamp(x + 3, 0, 6) / 6``."""
    check_floating(self, "hardswish")
    return self * ops.clamp(self + 3.0, 0.0, 6.0) / 6.0


@kernel("CompositeExplicitAutograd")
@_in_float32
def mish(self):
    """``x * tanh(softplus(x))``."""
    check_floating(self, "mish")
    return self * ops.tanh(ops.softplus(self))


def _dead_zone(self, lambd):
    return ops.logical_and(ops.ge(self, -lambd), ops.le(self, lambd))


@kernel("CompositeExplicitAutograd")
def hardshrink(self, lambd=0.5):
    """``0`` where ``-lambd <= x <= lambd``, else ``x`` (a NaN is outside and stays)."""
    check_floating(self, "hardshrink")
    return ops.where(_dead_zone(self, lambd), 0.0, self)


@kernel("CompositeExplicitAutograd")
def softshrink(self, lambd=0.5):
    """``0`` where ``-lambd <= x <= lambd``, else ``x - lambd * sign(x)`` (``lambd`` >= 0)."""
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f"\"softshrink_check\" not implemented for '{scalar_type_name(self.dtype)}'")
    top = finfo(self.dtype).max
    if not 0 <= lambd <= top:
        raise RuntimeError(f"lambda must be in range [0, {top:g}] for input dtype "
                           f"{scalar_type_name(self.dtype)}, but found {lambd:g}")
    return ops.where(_dead_zone(self, lambd), self * 0.0, self - ops.sign(self) * lambd)


@kernel("CompositeExplicitAutograd")
def threshold(self, threshold, value):
    """``value`` where ``x <= threshold``, else ``x``; an integer input keeps its type (``value`` truncated)."""
    refuse_complex(self, "threshold_cpu", "threshold_cuda")
    if self.dtype is dt.bool:
        raise NotImplementedError(f"\"threshold_{'cuda' if self.device.type == 'cuda' else 'cpu'}\" not "
                                  "implemented for 'Bool'")
    # torch's kernel converts the threshold to its compute type and the value to the input's type
    check_scalar_fits(threshold, dt.float32 if self.dtype in (dt.float16, dt.bfloat16) else self.dtype)
    check_scalar_fits(value, self.dtype)
    out = ops.where(ops.le(self, threshold), value, self)
    return out if out.dtype is self.dtype else out.to(self.dtype)


@kernel("CompositeExplicitAutograd")
@_in_float32
def log_sigmoid(self):
    """``log(sigmoid(x))`` as ``min(x, 0) - log1p(exp(-|x|))``."""
    check_floating(self, "log_sigmoid")
    return ops.minimum(self, ops.zeros((), dtype=self.dtype, device=self.device)) - ops.log1p(ops.exp(-ops.abs(self)))


@kernel("CompositeExplicitAutograd")
@_in_float32
def glu(self, dim=-1):
    """``a * sigmoid(b)`` of the two halves ``a, b`` of ``self`` along ``dim``."""
    if self.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    n = self.size(dim)
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim % self.dim()} is size {n}")
    check_floating(self, "glu")
    a, b = ops.chunk(self, 2, dim)
    return a * ops.sigmoid(b)


@kernel("CompositeExplicitAutograd")
def _prelu_kernel(self, weight):
    """``self`` where ``self > 0``, else ``weight * self``; ``weight`` already broadcasts (F.prelu reshapes it)."""
    check_floating(self, "prelu")
    return ops.where(ops.gt(self, 0), self, weight * self)
