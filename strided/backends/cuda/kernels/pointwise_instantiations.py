"""The elementwise instantiations the pointwise, bitwise, binary-math and further math (math_more_ops.py) CUDA
kernels use, found without a GPU.

Each kernel of ``pointwise_ops``, ``bitwise_ops`` and ``binary_math_ops`` runs on small CPU tensors
of every dtype (tensor, Python-scalar and 0-dim CPU operands) with a recording ``run``: the Meta
functions accept or reject the combination as on a GPU, and what reaches ``run`` is exactly what a
GPU launch would instantiate. Used by the NVRTC null test and to precompile the kernels in parallel
(``elementwise.precompile``, scripts/gpu.sh).
"""

from __future__ import annotations

from .... import dtypes as dt
from ...meta import pointwise_unary as meta_u
from . import binary_math_ops as bm
from . import bitwise_ops as bw
from . import math_more_ops as am
from . import pointwise_ops as pw

__all__ = ["instantiations"]

_BINARY = ("add", "sub", "mul", "div", "floor_divide", "remainder", "pow", "maximum", "minimum", "eq", "ne",
           "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor")
_UNARY = ("neg", "abs", "sign", "relu", "silu", "softplus", "gelu", "floor", "ceil", "round", "trunc", "isnan",
          "isinf", "isfinite", "logical_not") + meta_u.FLOAT_UNARY


def _sample_calls(d: dt.dtype):
    from .... import factories as f

    def t(x=d):
        return f.ones(3, dtype=x)

    mask = t(dt.bool)
    g = vars(pw)
    for name in _BINARY:
        for other in (t(), 2, 2.5, True, f.tensor(3.0)):
            yield g[name], (t(), other), {}
    for mode in ("trunc", "floor"):
        yield pw.div, (t(), t()), {"rounding_mode": mode}
        yield pw.div, (t(), 2), {"rounding_mode": mode}
    for fn in (pw.add, pw.sub):
        yield fn, (t(), t()), {"alpha": 2}
        yield fn, (t(), 2), {"alpha": 2}
    for e in (0, 1, 0.5, -0.5, -1, 3, -2):  # Note [CUDA pow fast paths]
        yield pw.pow, (t(), e), {}
    yield pw.pow_scalar_base, (2, t()), {}
    yield pw.pow_scalar_base, (2.5, t()), {}
    yield from ((pw.where, (mask, t(), t()), {}), (pw.where, (mask, t(), 1), {}), (pw.where, (mask, 1, t()), {}),
                (pw.where, (mask, 1, 2.0), {}), (pw.clamp, (t(), 0, 1), {}), (pw.clamp, (t(), None, 1), {}),
                (pw.clamp, (t(), 0, None), {}), (pw.clamp, (t(), t(), t()), {}), (pw.clamp, (t(), t(), None), {}),
                (pw.clamp, (t(), None, t()), {}), (pw.lerp, (t(), t(), 0.3), {}), (pw.lerp, (t(), t(), t()), {}),
                (pw.addcmul, (t(), t(), t()), {}), (pw.addcmul, (t(), t(), t()), {"value": 2}),
                (pw.addcdiv, (t(), t(), t()), {}), (pw.addcdiv, (t(), t(), t()), {"value": 2}),
                (pw.masked_fill, (t(), mask, 3), {}), (pw.masked_fill, (t(), mask, f.tensor(2)), {}),
                (pw.gelu, (t(),), {"approximate": "tanh"}), (pw.gelu_backward, (t(), t()), {}),
                (pw.gelu_backward, (t(), t()), {"approximate": "tanh"}))
    for name in _UNARY:
        yield g[name], (t(),), {}
    for name in bw.NAMES:
        for other in (t(), 2, True, f.tensor(3)):
            yield getattr(bw, name), (t(), other), {}
    yield bw.bitwise_not, (t(),), {}
    for name in bm.NAMES:
        for other in (t(), 2, 2.5, True, f.tensor(3.0)):
            yield getattr(bm, name), (t(), other), {}
    for fn, args in am.sample_calls(d):  # igamma, gcd, nextafter, frexp, ...
        yield fn, args, {}


def instantiations(dtypes=dt.all_dtypes) -> list:
    """The ``(expr, out dtype, slots)`` of ``pointwise_ops`` for ``dtypes`` (see the module docstring).
    Not thread-safe: it swaps ``pointwise_ops.run`` while it works."""
    from .. import elementwise

    found = {}

    def record(expr, out, args, computes, dense=True):
        slots = tuple((1, a.dtype, c) if elementwise.is_tensor_operand(a) else (2, None, c)
                      for a, c in zip(args, computes))
        found.setdefault((expr, out.dtype, slots), None)
        return out

    saved, pw.run, bw.run, bm.run, am.run = pw.run, record, record, record, record
    try:
        for d in dtypes:
            for fn, args, kwargs in _sample_calls(d):
                try:
                    fn(*args, **kwargs)
                except (RuntimeError, NotImplementedError, TypeError, ValueError):
                    pass  # the op rejects this dtype combination (its Meta function says so)
    finally:
        pw.run = bw.run = bm.run = am.run = saved
    return list(found)
