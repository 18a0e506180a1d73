"""CPU kernels: reductions, computed with NumPy over the Meta function's output.

Note [Reduction accumulation]
Every reduction accumulates in the compute dtype of its *result* (Note [CPU compute dtype]):
float16/bfloat16 in float32, integral sums in int64. As torch, the input is first cast to the
result dtype (``sum(x_float, dtype=int32)`` sums the truncated elements), then reduced. The kernels run under
the dispatcher's quiet NumPy error state (Note [Backend kernel wrappers]): no ``np.errstate`` here.
"""

from __future__ import annotations

import math

import numpy as np

from ... import dtypes as dt
from ...dispatch.library import kernel
from ..meta import reductions as meta
from ..meta.common import wrap_dim
from . import complex_math
from .blocked_sums import fast_sum, sum_trailing
from .common import as_numpy, compute_dtype, discard_imag, store
from .pointwise import quiet

__all__ = []


def _axes(self, dims) -> tuple:
    """NumPy axes for reduced dims (a 0-dim tensor's dim 0 is no axis)."""
    return dims if self._sizes else ()


def _input(self, d: dt.dtype) -> np.ndarray:
    """``self`` cast to dtype ``d`` and then to ``d``'s compute dtype (casting through ``d`` rounds
    as torch's ``self.to(d)`` would before computing)."""
    a = as_numpy(self)
    if a.dtype != d.numpy_dtype:
        a = (discard_imag(a) if self.dtype.is_complex and not d.is_complex else a).astype(d.numpy_dtype)
    cd = compute_dtype(d)
    return a if a.dtype == cd else a.astype(cd)


@kernel("CPU", name="sum")
def sum_(self, dim=None, keepdim=False, *, dtype=None):
    out, dims = meta.reduction_output(self, dim, keepdim, meta.sum_dtype(self, dtype))
    a = _input(self, out.dtype)
    axes = _axes(self, dims)
    total = sum_trailing(a, axes, keepdim)  # Note [Blocked sums]
    if total is None:
        # the ufunc's reduce, not np.sum: the same loop without np.sum's Python wrapper (1.4 us against 4.1)
        total = np.add.reduce(a, axis=axes, keepdims=keepdim, dtype=a.dtype)
    return store(out, total)


@kernel("CPU")
def mean(self, dim=None, keepdim=False, *, dtype=None):
    out, dims = meta.reduction_output(self, dim, keepdim, meta.mean_dtype(self, dtype))
    a = _input(self, out.dtype)
    count = math.prod(self._sizes[d] for d in dims) if self._sizes else 1
    axes = _axes(self, dims)
    total = sum_trailing(a, axes, keepdim)  # Note [Blocked sums]
    if total is None:
        total = np.add.reduce(a, axis=axes, keepdims=keepdim, dtype=a.dtype)
    return store(out, quiet(np.true_divide, total, a.dtype.type(count)))  # an empty mean is NaN, quietly


@kernel("CPU")
def prod(self, dim=None, keepdim=False, *, dtype=None):
    out, dims = meta.reduction_output(self, dim, keepdim, meta.sum_dtype(self, dtype))
    a = _input(self, out.dtype)
    return store(out, np.multiply.reduce(a, axis=_axes(self, dims), keepdims=keepdim, dtype=a.dtype))


def _extreme(self, dims, keepdim, fn):
    a = as_numpy(self)
    if a.dtype.name == "bfloat16":
        a = a.astype(np.float32)
    return fn(a, axis=_axes(self, dims), keepdims=keepdim)


@kernel("CPU")
def amax(self, dim=(), keepdim=False):
    out, dims = meta.amax_output(self, dim, keepdim, "amax")
    return store(out, _extreme(self, dims, keepdim, np.amax))


@kernel("CPU")
def amin(self, dim=(), keepdim=False):
    out, dims = meta.amax_output(self, dim, keepdim, "amin")
    return store(out, _extreme(self, dims, keepdim, np.amin))


@kernel("CPU", name="max")
def max_(self):
    out = meta.max_(self)
    return store(out, _extreme(self, tuple(range(self.dim())), False, np.amax))


@kernel("CPU", name="min")
def min_(self):
    out = meta.min_(self)
    return store(out, _extreme(self, tuple(range(self.dim())), False, np.amin))


def _with_indices(self, dim, result, index_fn):
    values, indices = result
    if not self._sizes or self.numel() == 0:
        store(values, as_numpy(self).reshape(values._sizes))
        store(indices, 0)
        return result
    d = wrap_dim(dim, self.dim())
    a = as_numpy(self)
    if a.dtype.name == "bfloat16":
        a = a.astype(np.float32)
    # NumPy's argmax/argmin return the first extreme element and treat NaN as the extreme, as torch.
    idx = index_fn(a, axis=d, keepdims=True)
    store(values, np.take_along_axis(a, idx, axis=d).reshape(values._sizes))
    store(indices, idx.reshape(indices._sizes))
    return result


@kernel("CPU")
def max_dim(self, dim, keepdim=False):
    return _with_indices(self, dim, meta.max_dim(self, dim, keepdim), np.argmax)


@kernel("CPU")
def min_dim(self, dim, keepdim=False):
    return _with_indices(self, dim, meta.min_dim(self, dim, keepdim), np.argmin)


def _arg(self, dim, keepdim, out, fn):
    a = as_numpy(self)
    if a.dtype.name == "bfloat16":
        a = a.astype(np.float32)
    if dim is None or not self._sizes:
        return store(out, fn(a.reshape(-1)) if a.size else 0)
    if a.size == 0:
        return out
    return store(out, fn(a, axis=wrap_dim(dim, self.dim()), keepdims=keepdim))


@kernel("CPU")
def argmax(self, dim=None, keepdim=False):
    return _arg(self, dim, keepdim, meta.argmax(self, dim, keepdim), np.argmax)


@kernel("CPU")
def argmin(self, dim=None, keepdim=False):
    return _arg(self, dim, keepdim, meta.argmin(self, dim, keepdim), np.argmin)


# torch's CPU var / std accumulate every floating dtype in double (WelfordOps<scalar_t, double>); here float32
# accumulates in float32 (NumPy's pairwise sums): results differ from torch's in the last bits (2.4e-6 at most on
# rows of 1000 around 1e4), and a float32 std of values past 1.8e19 overflows where torch's is finite. Accumulating
# in float64 matched torch bit for bit but made var 2.5x and batch_norm's training forward 2.3x slower.


def _var(self, dim, correction, keepdim):
    """(output, variance array) of var/std."""
    out, dims, c = meta.var_output(self, dim, correction, keepdim)
    a = _input(self, self.dtype)
    axes = _axes(self, dims)
    n = math.prod(self._sizes[d] for d in dims) if self._sizes else 1
    mu = np.sum(a, axis=axes, keepdims=True, dtype=a.dtype) / a.dtype.type(n)
    dev = a - mu
    if dev.dtype.kind == "c":  # |z - mean|^2 = re^2 + im^2: the variance of a complex tensor is real
        dev = np.abs(dev)
    m2 = np.sum(dev * dev, axis=axes, keepdims=keepdim, dtype=dev.dtype)
    # torch divides by max(0, N - correction): 0/0 -> nan, x/0 -> inf.
    return out, m2 / dev.dtype.type(max(0, n - c))


@kernel("CPU")
def var(self, dim=None, *, correction=None, keepdim=False):
    out, v = _var(self, dim, correction, keepdim)
    return store(out, v)


@kernel("CPU")
def std(self, dim=None, *, correction=None, keepdim=False):
    out, v = _var(self, dim, correction, keepdim)
    return store(out, np.sqrt(v))


@kernel("CPU")
def norm(self, p=2, dim=None, keepdim=False):
    out, p, dims = meta.norm_output(self, p, dim, keepdim)
    x = np.abs(_input(self, self.dtype))
    axes = _axes(self, dims)
    if p == 2:
        r = np.sqrt(np.sum(x * x, axis=axes, keepdims=keepdim))
    elif p == 1:
        r = np.sum(x, axis=axes, keepdims=keepdim)
    elif p == math.inf:
        r = np.amax(x, axis=axes, keepdims=keepdim)
    elif p == -math.inf:
        r = np.amin(x, axis=axes, keepdims=keepdim)
    elif p == 0:
        r = np.sum(x != 0, axis=axes, keepdims=keepdim, dtype=x.dtype)
    else:
        r = np.sum(x ** x.dtype.type(p), axis=axes, keepdims=keepdim) ** x.dtype.type(1.0 / p)
    return store(out, r)


@kernel("CPU", name="all")
def all_(self, dim=None, keepdim=False):
    out, dims = meta.reduction_output(self, dim, keepdim, meta.logical_dtype(self))
    return store(out, np.all(as_numpy(self), axis=_axes(self, dims), keepdims=keepdim))


@kernel("CPU", name="any")
def any_(self, dim=None, keepdim=False):
    out, dims = meta.reduction_output(self, dim, keepdim, meta.logical_dtype(self))
    return store(out, np.any(as_numpy(self), axis=_axes(self, dims), keepdims=keepdim))


@kernel("CPU")
def logsumexp(self, dim, keepdim=False):
    out, dims = meta.reduction_output(self, dim, keepdim, meta.logsumexp_dtype(self))
    axes = _axes(self, dims)
    a = _input(self, out.dtype)
    if a.size == 0:
        return store(out, np.log(np.sum(np.exp(a), axis=axes, keepdims=keepdim)))
    # As torch: subtract the max, with infinite maxima replaced by 0 (so that all -inf gives
    # -inf and +inf gives +inf rather than nan); of complex values, the max of the real parts
    # (Note [Complex log-sum-exp]).
    re = a.real if a.dtype.kind == "c" else a
    m = np.amax(re, axis=axes, keepdims=True)
    m = np.where(np.isinf(m), re.dtype.type(0), m)
    s = fast_sum(np.exp(a - m), axes, keepdim)
    m = m if keepdim else m.reshape(s.shape)
    return store(out, np.log(s) + m)


# Note [Scans by slices]
# np.cumsum along any axis but the last walks the array element by element (14 ms for (1024, 1024) float32 along
# dim 0, against 4.5 along dim 1). When each step of the scan is a wide slice -- the dims after the axis hold at
# least _WIDE_STEP elements -- adding slice i - 1 of the result to slice i of the input, one vectorized call per
# step, does the same additions in the same order (so the same bits) in 1.4 ms; for narrow steps the per-call cost
# loses and np.cumsum stays.
_WIDE_STEP = 512


# torch's CPU scans accumulate float32 (complex64) results in double precision and round each result once; half
# types in float32 (their compute dtype)
_SCAN_ACCUMULATOR = {dt.float32: np.dtype(np.float64), dt.complex64: np.dtype(np.complex128)}


def _scan(self, dim, dtype, accumulate, ufunc, shape_fn):
    """cumsum / cumprod: ``accumulate`` (np.cumsum / np.cumprod) in the result dtype's accumulator (overflow wraps
    or gives inf, as torch), or step by step with ``ufunc`` over wide slices (Note [Scans by slices]); ``shape_fn``:
    the op's Meta function (its output, its dtype refusals)."""
    out = shape_fn(self, dim, dtype=dtype)
    a = _input(self, out.dtype)
    if not self._sizes:
        return store(out, a)
    a = a.astype(_SCAN_ACCUMULATOR.get(out.dtype, a.dtype), copy=False)
    axis = wrap_dim(dim, self.dim())
    if a.shape[axis] > 1 and math.prod(a.shape[axis + 1:]) >= _WIDE_STEP:
        src = np.moveaxis(a, axis, 0)
        result = np.empty(src.shape, a.dtype)
        result[0] = src[0]
        for i in range(1, src.shape[0]):
            ufunc(result[i - 1], src[i], out=result[i])
        return store(out, np.moveaxis(result, 0, axis))
    return store(out, accumulate(a, axis=axis, dtype=a.dtype))


@kernel("CPU")
def cumsum(self, dim, *, dtype=None):
    return _scan(self, dim, dtype, np.cumsum, np.add, meta.cumsum)


@kernel("CPU")
def cumprod(self, dim, *, dtype=None):
    return _scan(self, dim, dtype, np.cumprod, np.multiply, meta.cumprod)


def _cummaxmin(self, dim, name: str, extreme):
    """Running extreme (``extreme``: np.maximum / np.minimum, which propagate NaN) and the latest index
    where it was reached: an element that equals the running value, or is NaN, takes over (torch's rule)."""
    values, indices = result = meta.cummaxmin(self, dim, name)
    a = as_numpy(self)
    if self.dtype in (dt.float16, dt.bfloat16):
        a = a.astype(np.float32)
    if not self._sizes:
        store(values, a)
        store(indices, 0)
        return result
    d = wrap_dim(dim, self.dim())
    v = extreme.accumulate(a, axis=d)
    hit = a == v
    if a.dtype.kind == "f":
        hit |= np.isnan(a)
    pos = np.arange(a.shape[d]).reshape([-1 if k == d else 1 for k in range(a.ndim)])
    store(values, v)
    store(indices, np.maximum.accumulate(np.where(hit, pos, 0), axis=d))
    return result


@kernel("CPU")
def cummax(self, dim):
    return _cummaxmin(self, dim, "cummax", np.maximum)


@kernel("CPU")
def cummin(self, dim):
    return _cummaxmin(self, dim, "cummin", np.minimum)


@kernel("CPU")
def logcumsumexp(self, dim):
    """``log(cumsum(exp(x)))`` without overflow: ``np.logaddexp.accumulate`` in the compute dtype."""
    out = meta.logcumsumexp(self, dim)
    if self.dtype.is_complex:  # Note [Complex log-sum-exp]
        a = as_numpy(self)
        return store(out, complex_math.logcumsumexp(a.reshape(a.shape or (1,)), wrap_dim(dim, self.dim()) if
                                                    self._sizes else 0).reshape(a.shape))
    a = _input(self, out.dtype)
    if not self._sizes:
        return store(out, a)
    return store(out, np.logaddexp.accumulate(a, axis=wrap_dim(dim, self.dim())))
