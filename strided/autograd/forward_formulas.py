"""Forward derivative formulas for the ops whose Jacobian-vector product by double backward (Note [Forward AD by
double backward]) is not right everywhere.

Note [Explicit forward formulas]
Differentiating a backward formula gives ``J t`` wherever that formula is differentiable. logcumsumexp's backward
works in log space (``log |grad|`` split by sign, so that no exponential overflows), and where the input is
``-inf`` its own derivative is ``nan``: ``logcumsumexp([-inf, 0, 1])`` had the tangent ``[nan, 1, 1]`` where torch
gives ``[0, 1, 1]``. Its tangent is written here in the same log space instead,

    t_y[i] = sum_{j <= i} exp(x[j] - y[i]) t[j]
           = exp(logcumsumexp(x + log t+) - y) - exp(logcumsumexp(x + log t-) - y)

(t+ and t- the positive and negative parts of the tangent): every exponent is at most 0, so nothing overflows or
cancels, exact for any magnitude of ``x`` (torch's formula shifts by the global maximum, and loses the early
entries to underflow once the input spans ~100 in float32: a tangent off by 1.3 where this one is off by 1e-6),
and 0 where ``y`` is ``-inf`` (torch: 0 while the slice has a finite entry, NaN when it has none). A NaN in the
tangent reaches every later entry, as the sum says.
"""

from __future__ import annotations

import math

__all__ = ["EXPLICIT_JVPS"]


def _logcumsumexp(args, kwargs, duals, outs):
    from ..ops import bound as ops

    x = args[0]
    dim = args[1] if len(args) > 1 else kwargs["dim"]
    t = duals.get(id(x))
    if t is None:
        return [None]
    y = outs[0]
    inf = -math.inf
    log_pos = ops.where(ops.gt(t, 0), ops.log(ops.clamp_min(t, 0)), inf)
    log_neg = ops.where(ops.lt(t, 0), ops.log(ops.clamp_min(ops.neg(t), 0)), inf)
    tangent = ops.sub(ops.exp(ops.sub(ops.logcumsumexp(ops.add(x, log_pos), dim), y)),
                      ops.exp(ops.sub(ops.logcumsumexp(ops.add(x, log_neg), dim), y)))
    tangent = ops.where(ops.eq(y, inf), 0.0, tangent)
    return [ops.add(tangent, ops.cumsum(ops.mul(t, 0.0), dim))]  # a NaN tangent reaches the later entries


EXPLICIT_JVPS = {"aten::logcumsumexp": _logcumsumexp}
