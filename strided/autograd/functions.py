"""Helpers that derivatives.yaml formulas call (torch's FunctionsManual.cpp, small): pointwise,
reductions, normalization and losses (views, indexing and joining: ``functions_views``).

Written with operators only, so they run on every backend and record a graph themselves under
``create_graph`` (double backward).
"""

from __future__ import annotations

import math

from ..backends.meta.common import wrap_dim
from ..dispatch.dispatcher import grad_mode
from ..ops import bound as ops
from ..ops.composite.views import int_list
from .functions_views import _zeros

__all__ = [
    "sum_to",
    "maybe_multiply",
    "unsqueeze_dims",
    "expand_reduced",
    "sum_backward",
    "mean_backward",
    "prod_backward",
    "select_extreme_backward",
    "extreme_dim_backward",
    "amax_backward",
    "extremum_backward",
    "silu_backward",
    "mm_mat1_backward",
    "mm_mat2_backward",
    "addmm_activation_grad",
    "var_backward",
    "std_backward",
    "norm_backward",
    "logsumexp_backward",
    "cumsum_backward",
    "softmax_backward",
    "log_softmax_backward",
    "layer_norm_backward",
    "cross_entropy_backward",
    "cross_entropy_target_backward",
    "clamp_backward",
    "clamp_bound_backward",
    "pow_backward_self",
    "pow_backward_exponent",
    "gelu_backward",
    "softplus_backward",
]


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
    return t if (not hasattr(s, "_sizes") and s == 1) else t * s


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


def select_extreme_backward(grad, self, result):
    """max()/min() of all elements: the gradient is split evenly among the tied extremes."""
    mask = ops.eq(self, result)
    count = ops.sum(mask)
    return ops.where(mask, grad / count, 0.0)


def extreme_dim_backward(grad, shape, dim, indices, keepdim):
    """max.dim/min.dim: the gradient goes to the selected index."""
    ndim = len(shape)
    if ndim == 0:
        return grad
    g = unsqueeze_dims(grad, dim, ndim, keepdim)
    idx = unsqueeze_dims(indices, dim, ndim, keepdim)
    return ops.scatter(_zeros(grad, shape), wrap_dim(dim, ndim), idx, g)


def amax_backward(grad, self, result, dim, keepdim):
    """amax/amin: evenly distributed among ties (torch's scale_grad_by_count)."""
    r = unsqueeze_dims(result, dim, self.dim(), keepdim)
    g = unsqueeze_dims(grad, dim, self.dim(), keepdim)
    mask = ops.eq(self, r)
    count = ops.sum(mask, _dims(dim, self.dim()), keepdim=True)
    return ops.where(mask, g / count, 0.0)


def extremum_backward(grad, a, b, is_max: bool):
    """maximum/minimum, gradient for ``a``: where it won, half where it tied (torch)."""
    win = ops.gt(a, b) if is_max else ops.lt(a, b)
    return ops.where(win, grad, 0.0) + ops.where(ops.eq(a, b), grad / 2, 0.0)


def silu_backward(grad, self):
    s = ops.sigmoid(self)
    return grad * s * (1 + self * (1 - s))


# Note [mm gradient layout]
# As torch's mm_mat1_backward / mm_mat2_backward: an operand that is column-major (a transposed
# row-major matrix, as Linear's ``weight.t()``) gets its gradient computed transposed, so the
# gradient is column-major too and the parameter behind the transpose receives a contiguous
# gradient (Note [Gradient layout contract]): no copy at accumulation, none in the optimizer.
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


def addmm_activation_grad(grad, self, mat1, mat2, beta, alpha, use_gelu, result):
    """The gradient at the pre-activation ``beta * self + alpha * mat1 @ mat2``."""
    if not use_gelu:
        return ops.where(ops.gt(result, 0), grad, 0.0)
    pre = ops.addmm(self, mat1, mat2, beta=beta, alpha=alpha)
    return gelu_backward(grad, pre, "none")  # the CPU kernel's exact gelu


def var_backward(grad, self, dim, correction, keepdim):
    dims = _dims(dim, self.dim())
    n = math.prod(self._sizes[d] for d in dims) if self.dim() else 1
    g = unsqueeze_dims(grad, dim, self.dim(), keepdim)
    mean = ops.mean(self, dims, keepdim=True) if self.dim() else self
    return g * (self - mean) * (2.0 / (n - (1 if correction is None else correction)))


def std_backward(grad, self, result, dim, correction, keepdim):
    r = unsqueeze_dims(result, dim, self.dim(), keepdim)
    g = unsqueeze_dims(grad, dim, self.dim(), keepdim)
    return var_backward(g / (r * 2), self, dim, correction, True)


def norm_backward(grad, self, p, result, dim=None, keepdim=False):
    p = 2.0 if p is None else float(p)
    g = unsqueeze_dims(grad, dim, self.dim(), keepdim)
    r = unsqueeze_dims(result, dim, self.dim(), keepdim)
    if p == 0.0:
        return ops.zeros_like(self)
    if p == 1.0:
        return ops.sign(self) * g
    if p == 2.0:
        return ops.where(ops.eq(r, 0), 0.0, self * (g / r))
    if math.isinf(p):
        mask = ops.eq(ops.abs(self), r)
        count = ops.sum(mask, _dims(dim, self.dim()), keepdim=True)
        return ops.where(mask, ops.sign(self) * g / count, 0.0)
    scale = ops.abs(self) ** (p - 2) * self
    return ops.where(ops.eq(r, 0), 0.0, scale * g / r ** (p - 1))


def logsumexp_backward(grad, self, result, dim, keepdim):
    g = unsqueeze_dims(grad, dim, self.dim(), keepdim)
    r = unsqueeze_dims(result, dim, self.dim(), keepdim)
    return g * ops.exp(self - r)


def cumsum_backward(grad, dim):
    if grad.dim() == 0:
        return grad
    d = wrap_dim(dim, grad.dim())
    total = ops.sum(grad, [d], keepdim=True)
    return total - ops.cumsum(grad, d) + grad


def softmax_backward(grad, result, dim):
    if not grad_mode.enabled and grad.dtype is result.dtype:  # one fused op unless a graph is recorded
        return ops._softmax_backward_data(grad, result, dim, result.dtype)
    return result * (grad - ops.sum(grad * result, [dim], keepdim=True))


def log_softmax_backward(grad, result, dim):
    if not grad_mode.enabled and grad.dtype is result.dtype:
        return ops._log_softmax_backward_data(grad, result, dim, result.dtype)
    return grad - ops.exp(result) * ops.sum(grad, [dim], keepdim=True)


def _sum(t, dims, keepdim=False):
    return ops.sum.dim_IntList(t, dims, keepdim=keepdim)


def _mean(t, dims, keepdim=False):
    return ops.mean.dim(t, dims, keepdim=keepdim)


def _var(t, dims, correction, keepdim):
    return ops.var.correction(t, dims, correction=correction, keepdim=keepdim)


def layer_norm_backward(grad, input, normalized_shape, weight, eps, grad_input_mask):
    """Gradients of layer_norm for (input, weight, bias), each only where ``grad_input_mask`` asks.

    mean and rstd are recomputed from ``input`` (the forward keeps no statistics), once for all three.
    """
    need_input, need_weight, need_bias = grad_input_mask
    if not grad_mode.enabled:
        # Note [Fused layer_norm backward]: one op; the decomposition below is for create_graph=True
        mask = [need_input, need_weight and weight is not None, need_bias]
        dx, dw, db = ops._layer_norm_backward(grad, input, normalized_shape, weight, eps, mask)
        return dx if need_input else None, dw if need_weight else None, db if need_bias else None
    nd = input.dim()
    n = len(int_list(normalized_shape))
    dims, lead = list(range(nd - n, nd)), list(range(nd - n))
    gb = (_sum(grad, lead) if lead else grad) if need_bias else None
    if not (need_input or need_weight):
        return None, None, gb
    if math.prod(input._sizes[d] for d in dims) == 0:
        return (ops.zeros_like(input) if need_input else None,
                _sum(grad * input, lead) if need_weight and lead else (grad * input if need_weight else None), gb)
    mean = _mean(input, dims, keepdim=True)
    rstd = ops.rsqrt(_var(input, dims, correction=0, keepdim=True) + eps)
    xhat = (input - mean) * rstd
    gw = None
    if need_weight:
        gw = grad * xhat
        if lead:
            gw = _sum(gw, lead)
    gi = None
    if need_input:
        g = grad * weight if weight is not None else grad
        # rstd * (g - mean(g) - xhat * mean(g * xhat))
        inner = ops.addcmul(g - _mean(g, dims, keepdim=True), xhat,
                            _mean(g * xhat, dims, keepdim=True), value=-1)
        gi = inner * rstd
    return gi, gw, gb


def cross_entropy_backward(grad, self, target, weight, reduction, ignore_index, label_smoothing):
    """d cross_entropy / d logits, for class-index or probability targets."""
    class_dim = 0 if self.dim() == 1 else 1
    if weight is None and not label_smoothing and not target.dtype.is_floating_point:
        return _cross_entropy_index_backward(grad, self, target, reduction, ignore_index, class_dim)
    c = self._sizes[class_dim]
    logp = ops.log_softmax(self, class_dim)
    p = ops.exp(logp)
    wshape = [1] * self.dim()
    wshape[class_dim] = c
    w = ops.reshape(weight, wshape) if weight is not None else None
    if target.dtype.is_floating_point:  # probabilities
        tgt = target
        if label_smoothing > 0:
            tgt = tgt * (1 - label_smoothing) + label_smoothing / c
        wt = tgt * w if w is not None else tgt
        dlogits = p * _sum(wt, [class_dim], keepdim=True) - wt
        if reduction == 1:  # mean over the batch elements
            n = self.numel() // c if c else 0
            dlogits = dlogits / max(n, 1)
    else:
        valid = ops.ne(target, ignore_index)
        safe = ops.where(valid, target, 0)
        onehot = ops.one_hot(safe, c).to(self.dtype)
        if class_dim == 1 and self.dim() > 1:
            onehot = ops.movedim(onehot, -1, 1)
        validf = ops.unsqueeze(valid, class_dim).to(self.dtype)
        tgt = onehot
        if label_smoothing > 0:
            tgt = onehot * (1 - label_smoothing) + label_smoothing / c
        wt = tgt * w if w is not None else tgt
        wt = wt * validf
        dlogits = p * _sum(wt, [class_dim], keepdim=True) - wt
        if reduction == 1:
            if w is not None:
                denom = _sum(_sum(onehot * w, [class_dim], keepdim=True) * validf)
            else:
                denom = _sum(validf)
            dlogits = dlogits / denom
    if reduction == 0:  # none: grad has the per-element shape
        return dlogits * ops.unsqueeze(grad, class_dim)
    return dlogits * grad


def _cross_entropy_index_backward(grad, self, target, reduction, ignore_index, class_dim):
    """The common case (class indices, no weight, no smoothing): ``softmax - one_hot`` scaled per row.

    Built with gather/scatter on ``(N, 1)`` columns, so the only full-size tensors are the softmax,
    its scattered copy and the scaled result (no one-hot matrix, no log-probabilities).
    """
    valid = ops.ne(target, ignore_index)
    idx = ops.unsqueeze(ops.where(valid, target, 0), class_dim)
    p = ops.softmax(self, class_dim)
    dlogits = ops.scatter(p, class_dim, idx, ops.gather(p, class_dim, idx) - 1)
    del p
    validf = ops.unsqueeze(valid, class_dim).to(self.dtype)
    if reduction == 0:  # none: grad has the per-element shape
        return dlogits * (validf * ops.unsqueeze(grad, class_dim))
    if reduction == 1:  # mean over the targets that are not ignored
        grad = grad / ops.sum(validf)
    return dlogits * (validf * grad)


def cross_entropy_target_backward(grad, self, target, weight, reduction, label_smoothing):
    """d cross_entropy / d target for probability targets: -(1 - ls) * w * log_softmax(self)."""
    class_dim = 0 if self.dim() == 1 else 1
    c = self._sizes[class_dim]
    logp = ops.log_softmax(self, class_dim)
    if weight is not None:
        wshape = [1] * self.dim()
        wshape[class_dim] = c
        logp = logp * ops.reshape(weight, wshape)
    g = -logp * (1 - label_smoothing)
    if reduction == 0:
        return g * ops.unsqueeze(grad, class_dim)
    if reduction == 1:
        g = g / max(self.numel() // c if c else 0, 1)
    return g * grad


def clamp_backward(grad, self, min=None, max=None):
    """Pass the gradient where ``min <= self <= max`` (torch's clamp_backward)."""
    mask = None
    if min is not None:
        mask = ops.ge(self, min)
    if max is not None:
        m = ops.le(self, max)
        mask = m if mask is None else ops.logical_and(mask, m)
    return grad if mask is None else ops.where(mask, grad, 0.0)


def clamp_bound_backward(grad, self, bound, other, is_min: bool):
    """Gradient of a Tensor ``min``/``max`` bound of clamp.Tensor (torch's clamp_backward_min_max)."""
    if is_min:
        mask = ops.gt(bound, self)
        if other is not None:
            mask = ops.logical_and(mask, ops.lt(bound, other))
    else:
        mask = ops.lt(bound, self)
        if other is not None:
            mask = ops.logical_or(mask, ops.lt(bound, other))
    return ops.where(mask, grad, 0.0)


def pow_backward_self(grad, self, exponent):
    """d x^e / d x = e * x^(e-1), and 0 where e == 0 (torch's convention, also at x == 0)."""
    if not hasattr(exponent, "_sizes"):
        return ops.zeros_like(self) if exponent == 0 else grad * exponent * self ** (exponent - 1)
    return ops.where(ops.eq(exponent, 0), 0.0, grad * exponent * self ** (exponent - 1))


def pow_backward_exponent(grad, self, exponent, result):
    """d (b^e) / d e = b^e * log(b), with 0 where b == 0 and e >= 0 (torch's convention)."""
    base = self if hasattr(self, "_sizes") else ops.full_like(result, self)
    cond = ops.logical_and(ops.eq(base, 0), ops.ge(exponent, 0))
    return ops.where(cond, 0.0, grad * result * ops.log(base))


def gelu_backward(grad, self, approximate):
    """d gelu: Phi(x) + x * phi(x) (exact), or the tanh approximation's derivative."""
    if not grad_mode.enabled:  # one fused op; the decomposition below records a graph (create_graph)
        return ops.gelu_backward(grad, self, approximate=approximate)
    if approximate == "tanh":
        # y = x/2 (1 + t), t = tanh(u), u = k (x + c x^3):
        # y' = (1 + t)/2 (1 + x u' (1 - t)), x u' = k x + 3 c k x^3
        k, c = math.sqrt(2 / math.pi), 0.044715
        x2 = self * self
        t = ops.tanh(ops.addcmul(self, x2, self, value=c) * k)
        xu = ops.addcmul(self * k, x2, self, value=3 * c * k)
        return (grad * (t * 0.5 + 0.5)) * (ops.addcmul(xu, xu, t, value=-1) + 1)
    pdf = ops.exp(self * self * -0.5) * (1 / math.sqrt(2 * math.pi))
    # Phi(x) = gelu(x) / x, and 1/2 at x == 0 (no erf operator needed)
    nonzero = ops.ne(self, 0)
    cdf = ops.where(nonzero, ops.gelu(self) / ops.where(nonzero, self, 1.0), 0.5)
    return grad * (cdf + self * pdf)


def softplus_backward(grad, self, beta, threshold):
    z = self * beta
    return ops.where(ops.gt(z, threshold), grad, grad * ops.sigmoid(z))
