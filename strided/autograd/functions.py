"""Helpers that derivatives.yaml formulas call (torch's FunctionsManual.cpp, small): pointwise,
reductions and matrix products (views, indexing and joining: ``functions_views``; activations,
normalization and losses: ``functions_nn``).

Written with operators only, so they run on every backend and record a graph themselves under
``create_graph`` (double backward).
"""

from __future__ import annotations

import math

from ..backends.meta.common import wrap_dim
from ..ops import bound as ops
from ..ops.composite.views import int_list
from ..tensor import Tensor
from ..type_info import finfo
from .functions_views import _zeros

__all__ = [
    "not_implemented",
    "sum_to",
    "maybe_multiply",
    "unsqueeze_dims",
    "expand_reduced",
    "sum_backward",
    "mean_backward",
    "prod_backward",
    "evenly_distribute_backward",
    "extreme_dim_backward",
    "amax_backward",
    "mm_mat1_backward",
    "mm_mat2_backward",
    "var_backward",
    "std_backward",
    "norm_backward",
    "logsumexp_backward",
    "cumsum_backward",
    "cumprod_backward",
    "logcumsumexp_backward",
    "cummaxmin_backward",
    "logit_backward",
    "atan2_backward",
    "pow_backward_self",
    "pow_backward_exponent",
]


def not_implemented(name: str):
    """torch's ``not_implemented(name)`` formula: an op whose gradient torch does not define (geqrf)."""
    raise RuntimeError(f"the derivative for '{name}' is not implemented.")


def sum_to(grad, shape):
    """Sum ``grad`` down to ``shape`` (the inverse of broadcasting; torch's at::sum_to)."""
    shape = tuple(shape)
    sizes = grad._sizes
    if sizes == shape:
        return grad
    lead = len(sizes) - len(shape)
    if lead < 0:
        raise RuntimeError(f"sum_to: {list(sizes)} can't be reduced to {list(shape)}")
    dims = list(range(lead))
    for i, s in enumerate(shape):
        if s == 1 and sizes[lead + i] != 1:
            dims.append(lead + i)
        elif s != sizes[lead + i]:
            raise RuntimeError(f"sum_to: {list(sizes)} can't be reduced to {list(shape)}")
    if dims:
        grad = ops.sum.dim_IntList(grad, dims, keepdim=True)
    if lead:
        grad = ops.view.default(grad, shape)
    return grad


def maybe_multiply(t, s):
    return t if (not isinstance(s, Tensor) and s == 1) else t * s


def _dims(dim, ndim: int) -> list:
    if dim is None:
        return list(range(ndim))
    dims = int_list(dim)
    if not dims:
        return list(range(ndim))
    return sorted(wrap_dim(d, ndim) for d in dims)


def unsqueeze_dims(t, dim, ndim: int, keepdim: bool):
    """Put back the reduced dims of a reduction's output (keepdim=False) as size-1 dims."""
    if keepdim or ndim == 0:
        return t
    for d in _dims(dim, ndim):
        t = ops.unsqueeze(t, d)
    return t


def expand_reduced(t, shape, dim, keepdim: bool):
    return unsqueeze_dims(t, dim, len(shape), keepdim).expand(tuple(shape))


def sum_backward(grad, shape, dim=None, keepdim=False):
    return expand_reduced(grad, shape, dim, keepdim)


def mean_backward(grad, shape, dim=None, keepdim=False):
    n = math.prod(shape[d] for d in _dims(dim, len(shape))) if shape else 1
    return expand_reduced(grad, shape, dim, keepdim) / max(n, 1) if n else expand_reduced(grad, shape, dim, keepdim)


def prod_backward(grad, self, result, dim=None, keepdim=False):
    """d prod / d x_i = prod_{j != i} x_j (exact with zeros: products of the other elements)."""
    if self.dim() == 0:
        return grad
    if dim is None:
        flat = ops.reshape(self, (-1,))
        g = prod_backward(ops.reshape(grad, (1,)), flat, ops.reshape(result, (1,)), 0, True)
        return ops.reshape(g, self._sizes)
    d = wrap_dim(dim, self.dim())
    g = unsqueeze_dims(grad, d, self.dim(), keepdim)
    n = self._sizes[d]
    if n == 0:
        return ops.zeros_like(self)
    ones = ops.ones_like(ops.narrow(self, d, 0, 1))
    # exclusive prefix and suffix products along d
    before = ops.cat([ones, ops.narrow(self, d, 0, n - 1)], d) if n > 1 else ones
    after = ops.cat([ops.narrow(self, d, 1, n - 1), ones], d) if n > 1 else ones
    return g * _cumprod(before, d) * _rev_cumprod(after, d)


def _cumprod(t, d):
    n = t._sizes[d]
    parts, acc = [], None
    for i in range(n):
        x = ops.narrow(t, d, i, 1)
        acc = x if acc is None else acc * x
        parts.append(acc)
    return ops.cat(parts, d)


def _rev_cumprod(t, d):
    n = t._sizes[d]
    parts, acc = [], None
    for i in range(n - 1, -1, -1):
        x = ops.narrow(t, d, i, 1)
        acc = x if acc is None else acc * x
        parts.append(acc)
    return ops.cat(parts[::-1], d)


def evenly_distribute_backward(grad, self, result):
    """max() / min() / median() / nanmedian() of all elements: the gradient is shared evenly among the elements
    equal to the result, or among the NaNs when the result is NaN (torch's evenly_distribute_backward)."""
    mask = ops.eq(self, result)
    if self.dtype.is_floating_point or self.dtype.is_complex:
        mask = ops.logical_or(mask, ops.logical_and(ops.isnan(self), ops.isnan(result)))
    return ops.where(mask, grad / ops.sum(mask), 0.0)


def extreme_dim_backward(grad, shape, dim, indices, keepdim):
    """max.dim/min.dim: the gradient goes to the selected index."""
    ndim = len(shape)
    if ndim == 0:
        return grad
    g = unsqueeze_dims(grad, dim, ndim, keepdim)
    idx = unsqueeze_dims(indices, dim, ndim, keepdim)
    return ops.scatter(_zeros(grad, shape), wrap_dim(dim, ndim), idx, g)


def amax_backward(grad, self, result, dim, keepdim):
    """amax/amin: evenly distributed among ties (torch's scale_grad_by_count: ``grad / count * mask``, so a NaN
    extreme, which equals no element, makes every gradient NaN, as in torch)."""
    r = unsqueeze_dims(result, dim, self.dim(), keepdim)
    g = unsqueeze_dims(grad, dim, self.dim(), keepdim)
    mask = ops.eq(self, r)
    count = ops.sum(mask, _dims(dim, self.dim()), keepdim=True)
    return ops.mul(ops.div(g, count), mask)


def mm_mat1_backward(grad, mat2, sizes, strides, alpha):
    """Gradient of ``mat1 @ mat2`` for ``mat1`` (of ``sizes``/``strides``), scaled by ``alpha``."""
    if strides[0] == 1 and strides[1] == sizes[0]:
        return maybe_multiply(ops.mm(mat2, grad.t()).t(), alpha)
    return maybe_multiply(ops.mm(grad, mat2.t()), alpha)


def mm_mat2_backward(grad, mat1, sizes, strides, alpha):
    """Gradient of ``mat1 @ mat2`` for ``mat2`` (of ``sizes``/``strides``), scaled by ``alpha``."""
    if strides[0] == 1 and strides[1] == sizes[0]:
        return maybe_multiply(ops.mm(grad.t(), mat1).t(), alpha)
    return maybe_multiply(ops.mm(mat1.t(), grad), alpha)


def var_backward(grad, self, dim, correction, keepdim):
    dims = _dims(dim, self.dim())
    n = math.prod(self._sizes[d] for d in dims) if self.dim() else 1
    g = unsqueeze_dims(grad, dim, self.dim(), keepdim)
    mean = ops.mean(self, dims, keepdim=True) if self.dim() else self
    dof = n - (1 if correction is None else correction)
    return g * (self - mean) * (2.0 / dof if dof else math.inf)  # no degrees of freedom: NaN, as torch's 2.0 / 0


def std_backward(grad, self, result, dim, correction, keepdim):
    """Through var's: ``grad / (2 std)``, zero where std is 0 (constant input: torch's choice, not 0 / 0)."""
    r = unsqueeze_dims(result, dim, self.dim(), keepdim)
    g = unsqueeze_dims(grad, dim, self.dim(), keepdim)
    return var_backward(ops.where(ops.eq(r, 0), 0.0, g / (r * 2)), self, dim, correction, True)


def norm_backward(grad, self, p, result, dim=None, keepdim=False):
    p = 2.0 if p is None else float(p)
    g = unsqueeze_dims(grad, dim, self.dim(), keepdim)
    r = unsqueeze_dims(result, dim, self.dim(), keepdim)
    if p == 0.0:
        return ops.zeros_like(self)
    if p == 1.0:  # sgn: z / |z| for complex (the conjugate-Wirtinger gradient of |z|), sign for real
        return ops.sgn(self) * g
    # torch's norm_backward, with the zeros it masks never divided by (a NaN in the masked-out branch of a where
    # would come back in a double backward: the jvp of torch.func by reverse mode, Note [Double-backward trick])
    if math.isinf(p):
        mask = ops.eq(ops.abs(self), r)
        count = ops.sum(mask, _dims(dim, self.dim()), keepdim=True)
        return ops.where(mask, ops.sgn(self) * g / count, 0.0)
    zero_norm = ops.eq(r, 0)
    safe_r = ops.where(zero_norm, 1.0, r)
    if p == 2.0:
        return ops.where(zero_norm, 0.0, self * (g / safe_r))
    a = ops.abs(self)
    zero = ops.eq(a, 0)
    if p < 1.0:  # |x|^(p - 1) is infinite at 0, where torch's gradient is 0
        scaled = ops.where(zero, 0.0, ops.sgn(self) * ops.where(zero, 1.0, a) ** (p - 1))
        return scaled * g * r ** (1 - p)
    scaled = ops.sgn(self) * a ** (p - 1) if p < 2.0 else self * a ** (p - 2)
    return scaled * ops.where(zero_norm, 0.0, g / safe_r ** (p - 1))


def logsumexp_backward(grad, self, result, dim, keepdim):
    g = unsqueeze_dims(grad, dim, self.dim(), keepdim)
    r = unsqueeze_dims(result, dim, self.dim(), keepdim)
    e = ops.exp(self - r)
    return g * (ops.conj(e) if e.dtype.is_complex else e)


def cumsum_backward(grad, dim):
    if grad.dim() == 0:
        return grad
    d = wrap_dim(dim, grad.dim())
    total = ops.sum(grad, [d], keepdim=True)
    return total - ops.cumsum(grad, d) + grad


# Note [cumprod gradient]
# d out_j / d x_k = prod_{i <= j, i != k} x_i for j >= k. Only the first zero z of a line matters:
# * k < z: x_k != 0, so the term is out_j / x_k, and out_j = 0 from z on: the reversed cumsum of
#   grad * out, divided by x_k (no mask needed on the sum);
# * k = z: prod_{i < z} x_i times sum_{j >= z} grad_j prod_{z < i <= j} x_i (a cumprod of x with
#   the factors up to z replaced by 1);
# * k > z: every product holds x_z = 0.
# All masks, no host read: O(n) per line, differentiable again (double backward) through its ops.
def cummaxmin_backward(grad, self, indices, dim):
    """cummax / cummin: each output's gradient goes to the element it came from (scatter-added)."""
    if self.dim() == 0 or self.numel() == 0:
        return grad
    return ops.scatter_add(ops.zeros_like(self), wrap_dim(dim, self.dim()), indices, grad)


def logcumsumexp_backward(grad, self, result, dim):
    """torch's formula (after TensorFlow's): the positive and negative parts of ``grad`` in log space, each
    through a reversed logcumsumexp, so nothing overflows where ``exp(self)`` would."""
    if grad.dim() == 0 or grad.numel() == 0:
        return grad
    d = wrap_dim(dim, grad.dim())

    def reversed_lcse(x):
        return ops.flip(ops.logcumsumexp(ops.flip(x, [d]), d), [d])

    if grad.dtype.is_complex:  # complex logarithms need no split by sign (torch's complex branch)
        return ops.conj(ops.exp(reversed_lcse(ops.log(ops.conj(grad)) - result) + self))
    lowest = finfo(grad.dtype).min
    log_abs = ops.log(ops.abs(grad))
    pos = ops.where(ops.gt(grad, 0), log_abs, lowest)
    neg = ops.where(ops.lt(grad, 0), log_abs, lowest)
    return ops.exp(reversed_lcse(pos - result) + self) - ops.exp(reversed_lcse(neg - result) + self)


def cumprod_backward(grad, self, dim, result):
    if self.numel() <= 1 or self.dim() == 0:
        return grad
    d = wrap_dim(dim, self.dim())
    zero = ops.eq(self, 0)
    zeros_so_far = ops.cumsum(zero, d)
    before = ops.eq(zeros_so_far, 0)
    first = ops.logical_and(zero, ops.eq(zeros_so_far, 1))
    reversed_sum = ops.flip(ops.cumsum(ops.flip(result * grad, [d]), d), [d])
    grad_before = ops.where(before, reversed_sum / ops.where(before, self, 1), 0)
    after_first = ops.logical_and(ops.ge(zeros_so_far, 1), ops.logical_not(first))
    tail = ops.cumprod(ops.where(after_first, self, 1), d)
    tail_sum = ops.sum(ops.where(ops.ge(zeros_so_far, 1), grad * tail, 0), [d], keepdim=True)
    lead = ops.prod(ops.where(before, self, 1), d, keepdim=True)
    return grad_before + ops.where(first, lead * tail_sum, 0)


def atan2_backward(grad, self, other, for_self: bool):
    """atan2's gradient for ``self`` (``other / r^2``) or ``other`` (``-self / r^2``); zero at the origin, where
    both are 0 / 0 (torch >= 2.14)."""
    r2 = self * self + other * other
    return ops.where(ops.eq(r2, 0), 0.0, grad * (other if for_self else -self) / r2)


def logit_backward(grad, self, eps=None):
    """torch's logit_backward: ``grad / (x (1 - x))``; NaN outside [0, 1] (no ``eps``: the value is NaN there too),
    zero outside [eps, 1 - eps] (the clamp's flat parts); at 0 and 1 the division gives torch's infinities."""
    g = grad / (self * (1 - self))
    if eps is None or eps < 0:  # a negative eps does not clamp (torch's kernels)
        return ops.where(ops.logical_or(ops.lt(self, 0), ops.gt(self, 1)), math.nan, g)
    return ops.where(ops.logical_or(ops.lt(self, eps), ops.gt(self, 1 - eps)), 0.0, g)


def pow_backward_self(grad, self, exponent):
    """d x^e / d x = e * x^(e-1), and 0 where e == 0 (torch's convention, also at x == 0)."""
    if not isinstance(exponent, Tensor):
        return ops.zeros_like(self) if exponent == 0 else grad * exponent * self ** (exponent - 1)
    return ops.where(ops.eq(exponent, 0), 0.0, grad * exponent * self ** (exponent - 1))


def pow_backward_exponent(grad, self, exponent, result):
    """d (b^e) / d e = b^e * log(b), with 0 where b == 0 and e >= 0 (torch's convention)."""
    base = self if isinstance(self, Tensor) else ops.full_like(result, self)
    real = ops.ge(exponent, 0) if not exponent.dtype.is_complex else \
        ops.logical_and(ops.eq(ops.imag(exponent), 0), ops.ge(ops.real(exponent), 0))  # torch's complex rule
    cond = ops.logical_and(ops.eq(base, 0), real)
    return ops.where(cond, 0.0, grad * result * ops.log(base))
