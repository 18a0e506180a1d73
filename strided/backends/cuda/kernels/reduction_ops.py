"""CUDA kernels for the reductions: the Meta function allocates, the engine reduces.

Each kernel mirrors its CPU twin in ``backends/cpu/reductions.py`` (dtypes, NaN rules, the
identity of empty reductions); see Note [CUDA reduction engine] for how they run.
"""

from __future__ import annotations

import math

from ....dispatch.library import kernel
from ....tensor import make_tensor
from ...meta import normalization as meta_norm
from ...meta import reductions as meta
from ...meta.common import new_output, wrap_dim
from ..normalization import (
    cross_entropy_into,
    layer_norm_backward_into,
    layer_norm_into,
    scan,
    softmax_backward_into,
    softmax_into,
)
from ..reduction import reduce
from .complex_lse import logcumsumexp_complex, logsumexp_complex

__all__ = ["norm_mode"]


def _dims(self, dims):
    return dims if self._sizes else ()


@kernel("CUDA", name="sum")
def sum_(self, dim=None, keepdim=False, *, dtype=None):
    out, dims = meta.reduction_output(self, dim, keepdim, meta.sum_dtype(self, dtype))
    if out.dtype.is_complex or self.dtype.is_complex:
        return _complex_reduce("sum", self, out, _dims(self, dims))
    return reduce("sum", self, out, _dims(self, dims), cast=out.dtype)


@kernel("CUDA")
def mean(self, dim=None, keepdim=False, *, dtype=None):
    out, dims = meta.reduction_output(self, dim, keepdim, meta.mean_dtype(self, dtype))
    if out.dtype.is_complex or self.dtype.is_complex:
        return _complex_reduce("mean", self, out, _dims(self, dims))
    return reduce("mean", self, out, _dims(self, dims), cast=out.dtype)


# Note [Complex sum and mean]
# Summing complex numbers sums their real parts and their imaginary parts apart, and mean divides both by
# the count, so a complex sum / mean is the real one over the (..., 2) view of the pairs (view_as_real's
# layout) with the pair dim kept: the same float / double kernels, accumulators and NaN / empty rules (0, and
# NaN for the mean of nothing, in each part), no complex reducer in reduce.cu. An input whose dtype is not
# the result's (complex64 summed as complex128, a real tensor with a complex dtype=, a complex one with a real
# dtype=) is cast first, as the CPU kernels' ``self.to(dtype)`` (complex -> real warns, in copy_).
def _as_real(t):
    """The (..., 2) real view of a complex tensor's (re, im) pairs."""
    return make_tensor(t._storage, 2 * t._offset, t._sizes + (2,), tuple(2 * s for s in t._strides) + (1,),
                       t.dtype.to_real())


def _complex_reduce(op, self, out, dims):
    if self.dtype is not out.dtype:
        self = self.to(out.dtype)
    if not out.dtype.is_complex:
        return reduce(op, self, out, dims, cast=out.dtype)
    part = out.dtype.to_real()
    reduce(op, _as_real(self), _as_real(out), dims, cast=part)
    return out


@kernel("CUDA")
def prod(self, dim=None, keepdim=False, *, dtype=None):
    out, dims = meta.reduction_output(self, dim, keepdim, meta.sum_dtype(self, dtype))
    if out.dtype.is_complex or self.dtype.is_complex:
        return _complex_prod(self, out, _dims(self, dims))
    return reduce("prod", self, out, _dims(self, dims), cast=out.dtype)


def _complex_prod(self, out, dims):
    """A complex product as halves multiplied pairwise (complex ``mul`` kernels, log2 n launches): reduce.cu
    has no complex reducer, and a product does not split into its parts' products as a sum does."""
    x = self if self.dtype is out.dtype else self.to(out.dtype)
    dims = sorted(dims) if x._sizes else []
    keep = [d for d in range(x.dim()) if d not in dims]
    from ....ops import bound as ops

    rows, n = math.prod(x._sizes[d] for d in keep), math.prod(x._sizes[d] for d in dims)
    if not rows or not n:
        return out.fill_(1)
    x = x.permute(keep + dims).reshape((rows, n))
    while x._sizes[1] > 1:
        n, h = x._sizes[1], x._sizes[1] // 2
        y = x[:, :h] * x[:, h:2 * h]
        x = ops.cat([y, x[:, 2 * h:]], 1) if n % 2 else y
    return out.copy_(x.reshape(out._sizes))


@kernel("CUDA")
def amax(self, dim=(), keepdim=False):
    out, dims = meta.amax_output(self, dim, keepdim, "amax")
    return reduce("amax", self, out, _dims(self, dims))


@kernel("CUDA")
def amin(self, dim=(), keepdim=False):
    out, dims = meta.amax_output(self, dim, keepdim, "amin")
    return reduce("amin", self, out, _dims(self, dims))


@kernel("CUDA", name="max")
def max_(self):
    return reduce("amax", self, meta.max_(self), tuple(range(self.dim())))


@kernel("CUDA", name="min")
def min_(self):
    return reduce("amin", self, meta.min_(self), tuple(range(self.dim())))


def _with_indices(op, self, dim, result):
    values, indices = result
    dims = (wrap_dim(dim, self.dim()),) if self._sizes else ()
    reduce(op, self, values, dims, out_idx=indices)
    return result


@kernel("CUDA")
def max_dim(self, dim, keepdim=False):
    return _with_indices("max_dim", self, dim, meta.max_dim(self, dim, keepdim))


@kernel("CUDA")
def min_dim(self, dim, keepdim=False):
    return _with_indices("min_dim", self, dim, meta.min_dim(self, dim, keepdim))


def _arg(op, self, dim, out):
    if dim is None or not self._sizes:
        dims = tuple(range(self.dim()))
    else:
        dims = (wrap_dim(dim, self.dim()),)
    return reduce(op, self, out, dims)


@kernel("CUDA")
def argmax(self, dim=None, keepdim=False):
    return _arg("argmax", self, dim, meta.argmax(self, dim, keepdim))


@kernel("CUDA")
def argmin(self, dim=None, keepdim=False):
    return _arg("argmin", self, dim, meta.argmin(self, dim, keepdim))


@kernel("CUDA")
def var(self, dim=None, *, correction=None, keepdim=False):
    out, dims, c = meta.var_output(self, dim, correction, keepdim)
    if self.dtype.is_complex:
        return _complex_var(self, out, _dims(self, dims), float(c))
    return reduce("var", self, out, _dims(self, dims), arg=float(c))


@kernel("CUDA")
def std(self, dim=None, *, correction=None, keepdim=False):
    out, dims, c = meta.var_output(self, dim, correction, keepdim)
    if self.dtype.is_complex:
        return _complex_var(self, out, _dims(self, dims), float(c)).sqrt_()
    return reduce("std", self, out, _dims(self, dims), arg=float(c))


# Note [Complex var]
# E|z - mean z|^2 = E(re - mean re)^2 + E(im - mean im)^2 with the same divisor (n - correction), so a
# complex var is the real var of each part (stride-2 views of the pairs, no copies) added, and std its root:
# torch's own split (std_var_out adds the parts' variances), with the real kernels' NaN and empty rules.
def _complex_var(self, out, dims, c):
    pairs = _as_real(self)
    reduce("var", pairs.select(-1, 0), out, dims, arg=c)
    im = new_output(out._sizes, out.dtype, out.device)
    reduce("var", pairs.select(-1, 1), im, dims, arg=c)
    return out.add_(im)


def norm_mode(p: float) -> int:
    """Note [norm modes] of reduce_ops.cuh."""
    return {0.0: 0, 1.0: 1, 2.0: 2, math.inf: 3, -math.inf: 4}.get(p, 5)


@kernel("CUDA")
def norm(self, p=2, dim=None, keepdim=False):
    out, p, dims = meta.norm_output(self, p, dim, keepdim)
    x = self.abs() if self.dtype.is_complex else self  # the norm of the moduli (linalg.vector_norm's rule)
    return reduce("norm", x, out, _dims(self, dims), arg=p, mode=norm_mode(p))


@kernel("CUDA", name="all")
def all_(self, dim=None, keepdim=False):
    out, dims = meta.reduction_output(self, dim, keepdim, meta.logical_dtype(self))
    x = self.ne(0) if self.dtype.is_complex else self  # truth values: either part nonzero
    return reduce("all", x, out, _dims(self, dims), acc="bool")


@kernel("CUDA", name="any")
def any_(self, dim=None, keepdim=False):
    out, dims = meta.reduction_output(self, dim, keepdim, meta.logical_dtype(self))
    x = self.ne(0) if self.dtype.is_complex else self
    return reduce("any", x, out, _dims(self, dims), acc="bool")


@kernel("CUDA")
def logsumexp(self, dim, keepdim=False):
    out, dims = meta.reduction_output(self, dim, keepdim, meta.logsumexp_dtype(self))
    if self.dtype.is_complex:  # Note [Complex log-sum-exp on CUDA]
        return logsumexp_complex(self, _dims(self, dims), keepdim)
    return reduce("logsumexp", self, out, _dims(self, dims), cast=out.dtype)


@kernel("CUDA")
def cumsum(self, dim, *, dtype=None):
    out = meta.cumsum(self, dim, dtype=dtype)
    if out.dtype.is_complex:  # Note [Complex gathers]: the parts' scans; another dtype is cast first
        src = self if self.dtype is out.dtype else self.to(out.dtype)
        scan(_as_real(src.reshape((1,)) if not src._sizes else src), _as_real(out if out._sizes else out.reshape((1,))),
             wrap_dim(dim, self.dim()) if self._sizes else 0)
        return out
    return scan(self, out, wrap_dim(dim, self.dim()) if self._sizes else 0)


@kernel("CUDA")
def cumprod(self, dim, *, dtype=None):
    out = meta.cumprod(self, dim, dtype=dtype)
    if out.dtype.is_complex:
        return _complex_cumprod(self, out, wrap_dim(dim, self.dim()) if self._sizes else 0)
    return scan(self, out, wrap_dim(dim, self.dim()) if self._sizes else 0, mul=True)


def _complex_cumprod(self, out, dim):
    """A complex running product as log2 n doubling steps of the complex ``mul`` kernel (Hillis and Steele):
    scan.cu has no complex scans, and a product does not split over the parts as cumsum does."""
    out.copy_(self)  # the running products build up in out (self is only read: cast here if its dtype differs)
    if not out._sizes:
        return out
    y = out.movedim(dim, -1)
    n, k = y._sizes[-1], 1
    while k < n:
        step = y[..., k:] * y[..., :n - k]  # every product read before any is written
        y[..., k:].copy_(step)
        k *= 2
    return out


@kernel("CUDA")
def logcumsumexp(self, dim):
    out = meta.logcumsumexp(self, dim)
    if self.dtype.is_complex:  # Note [Complex log-sum-exp on CUDA]
        return logcumsumexp_complex(self, wrap_dim(dim, self.dim()) if self._sizes else 0)
    return scan(self, out, wrap_dim(dim, self.dim()) if self._sizes else 0, lse=True)



@kernel("CUDA")
def softmax(self, dim, dtype=None):
    out = meta_norm.softmax(self, dim, dtype)
    return softmax_into(self, out, wrap_dim(dim, self.dim()) if self._sizes else 0, log=False)


@kernel("CUDA")
def log_softmax(self, dim, dtype=None):
    out = meta_norm.log_softmax(self, dim, dtype)
    return softmax_into(self, out, wrap_dim(dim, self.dim()) if self._sizes else 0, log=True)


@kernel("CUDA")
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    n = meta_norm.layer_norm_dims(input, normalized_shape, weight, bias)
    out = new_output(input._sizes, input.dtype, input.device)
    return layer_norm_into(input, n, weight, bias, eps, out)


@kernel("CUDA")
def softmax_backward_data(grad_output, output, dim, input_dtype):
    res = meta_norm.softmax_backward_output(grad_output, output, dim, input_dtype, "_softmax_backward_data")
    return softmax_backward_into(grad_output, output, wrap_dim(dim, output.dim()) if output.dim() else 0, False, res)


@kernel("CUDA")
def log_softmax_backward_data(grad_output, output, dim, input_dtype):
    res = meta_norm.softmax_backward_output(grad_output, output, dim, input_dtype, "_log_softmax_backward_data")
    return softmax_backward_into(grad_output, output, wrap_dim(dim, output.dim()) if output.dim() else 0, True, res)


@kernel("CUDA")
def layer_norm_backward(grad_out, input, normalized_shape, weight, eps, output_mask):
    n, dx, dw, db = meta_norm.layer_norm_backward_outputs(grad_out, input, normalized_shape, weight, output_mask)
    layer_norm_backward_into(grad_out, input, n, weight, eps, output_mask, dx, dw, db)
    return dx, dw, db


@kernel("CUDA")
def cross_entropy_loss(self, target, weight=None, reduction=1, ignore_index=-100, label_smoothing=0.0):
    prob, shape, d = meta_norm.cross_entropy_meta(self, target, weight, reduction, ignore_index, label_smoothing)
    out = new_output(shape, d, self.device)
    return cross_entropy_into(self, target, weight, reduction, ignore_index, label_smoothing, prob, out)
