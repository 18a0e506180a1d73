"""Complex ``logsumexp`` and ``logcumsumexp`` on CUDA, composed of the complex elementwise and reduction kernels.

Note [Complex log-sum-exp on CUDA]
The reduction and scan engines have no complex log-sum-exp, so these run torch's formulas through ops that do
take complex tensors (Note [Complex log-sum-exp] in backends/cpu/complex_math.py): ``logsumexp`` as
``log(sum(exp(z - m))) + m`` with ``m`` the largest real part; ``logcumsumexp`` as a Hillis-Steele scan,
log2(n) rounds of c10's ``_log_add_exp_helper`` over the dim (each round reads every value before it writes,
as the complex cumprod does). The real parts are the CPU's up to rounding; the imaginary parts may differ from
the CPU's sequential fold by a multiple of 2 pi (the same sum, another branch of the logarithm), as torch's CUDA
scan may from torch's CPU fold. No host sync: both can be captured in a CUDA graph.
"""

from __future__ import annotations

import math

__all__ = ["logsumexp_complex", "logcumsumexp_complex"]


def logsumexp_complex(self, dims, keepdim: bool):
    """torch's complex ``logsumexp`` over ``dims`` (already wrapped; empty for a 0-dim tensor)."""
    from ....ops import bound as ops

    dims = list(dims) if dims else list(range(self.dim()))
    if self.numel() == 0:
        return ops.log(ops.sum(ops.exp(self), dims, keepdim))
    m = ops.amax(ops.real(self), dims, True)
    m = ops.masked_fill(m, ops.isinf(m), 0.0)
    s = ops.sum(ops.exp(ops.sub(self, m)), dims, keepdim)
    return ops.add(ops.log(s), m if keepdim else ops.reshape(m, s._sizes))


def _log_add_exp(x, y):
    """c10's complex ``_log_add_exp_helper(x, y)`` as elementwise ops (backends/cpu/complex_math.log_add_exp)."""
    from ....ops import bound as ops

    x_first = ops.lt(ops.real(x), ops.real(y))
    lo, hi = ops.where(x_first, x, y), ops.where(x_first, y, x)
    out = ops.add(ops.log1p(ops.exp(ops.sub(lo, hi))), hi)
    lo_re, hi_re = ops.real(lo), ops.real(hi)
    both_inf = ops.logical_and(ops.isinf(lo_re), ops.eq(lo_re, hi_re))
    both_pos_inf = ops.log(ops.add(ops.exp(lo), ops.exp(hi)))
    out = ops.where(both_inf, ops.where(ops.lt(lo_re, 0), lo, both_pos_inf), out)
    return ops.masked_fill(out, ops.logical_or(ops.isnan(x), ops.isnan(y)), complex(math.nan, math.nan))


def logcumsumexp_complex(self, dim: int):
    """torch's complex ``logcumsumexp`` along ``dim`` (wrapped), as a doubling scan."""
    from ....ops import bound as ops

    # the fold starts from -inf + 0i: a -inf real part ends as -inf + 0i, a NaN in either part as NaN + NaN i
    out = ops.masked_fill(self, ops.eq(ops.real(self), -math.inf), complex(-math.inf, 0.0))  # a new tensor
    out = ops.masked_fill_(out, ops.isnan(out), complex(math.nan, math.nan))
    if not out._sizes:
        return out
    y = ops.movedim(out, dim, -1)
    n, k = y._sizes[-1], 1
    while k < n:
        step = _log_add_exp(ops.narrow(y, -1, k, n - k), ops.narrow(y, -1, 0, n - k))
        ops.narrow(y, -1, k, n - k).copy_(step)  # step was computed from the old values before this write
        k *= 2
    return out
