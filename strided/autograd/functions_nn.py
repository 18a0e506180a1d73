"""Derivative helpers for activations, linear layers and losses (derivatives.yaml formulas call
them; normalization's are in ``functions_norm``, the activation operators' in ``functions_activations``, the other
helpers in ``functions`` and ``functions_views``).

Note [Fused layer_norm backward] and its siblings: while no graph is recorded (no
``create_graph``), layer_norm, gelu, softmax and log_softmax differentiate through one fused
backward op each; under ``create_graph`` the decompositions below record a differentiable graph.
"""

from __future__ import annotations

import math

from .. import dtypes as dt
from ..dispatch.dispatcher import grad_mode
from ..ops import bound as ops
from ..ops.composite.decompositions import matmul_shared_grad
from ..ops.composite.nn_operators import BCE_EPSILON
from .functions_views import flat_view, matrix_transpose

__all__ = [
    "silu_backward",
    "addmm_activation_grad",
    "softmax_backward",
    "log_softmax_backward",
    "linear_input_backward",
    "linear_weight_backward",
    "linear_bias_backward",
    "matmul_backward",
    "cross_entropy_backward",
    "cross_entropy_target_backward",
    "cross_entropy_weight_backward",
    "gelu_backward",
    "mse_loss_backward",
    "smooth_l1_loss_backward",
    "huber_loss_backward",
    "nll_loss_backward",
    "binary_cross_entropy_backward",
    "binary_cross_entropy_target_backward",
    "binary_cross_entropy_with_logits_backward",
    "binary_cross_entropy_with_logits_target_backward",
    "max_pool_double_backward",
    "gelu_double_backward",
]


def silu_backward(grad, self):
    s = ops.sigmoid(self)
    return grad * s * (1 + self * (1 - s))


# Note [mm gradient layout]
# As torch's mm_mat1_backward / mm_mat2_backward: an operand that is column-major (a transposed
# row-major matrix, as Linear's ``weight.t()``) gets its gradient computed transposed, so the
# gradient is column-major too and the parameter behind the transpose receives a contiguous
# gradient (Note [Gradient layout contract]): no copy at accumulation, none in the optimizer.


def addmm_activation_grad(grad, self, mat1, mat2, beta, alpha, use_gelu, result):
    """The gradient at the pre-activation ``beta * self + alpha * mat1 @ mat2``."""
    if not use_gelu:
        return ops.where(ops.gt(result, 0), grad, 0.0)
    pre = ops.addmm(self, mat1, mat2, beta=beta, alpha=alpha)
    return gelu_backward(grad, pre, "none")  # the CPU kernel's exact gelu


def softmax_backward(grad, result, dim):
    if not grad_mode.enabled and grad.dtype is result.dtype:  # one fused op unless a graph is recorded
        return ops._softmax_backward_data(grad, result, dim, result.dtype)
    return result * (grad - ops.sum(grad * result, [dim], keepdim=True))


def log_softmax_backward(grad, result, dim):
    if not grad_mode.enabled and grad.dtype is result.dtype:
        return ops._log_softmax_backward_data(grad, result, dim, result.dtype)
    return grad - ops.exp(result) * ops.sum(grad, [dim], keepdim=True)


def matmul_backward(grad, self, other, grad_input_mask):
    """Gradients of ``matmul`` for (self, other) (Note [Fused linear]): ``grad @ otherᵀ`` and
    ``selfᵀ @ grad`` on the operands promoted to matrices as matmul promotes them; the engine sums
    broadcast batch dims back to each operand's shape."""
    need_self, need_other = grad_input_mask
    d1, d2 = self.dim(), other.dim()
    if d1 == 1 and d2 == 1:  # dot product: grad is 0-dim
        return grad * other if need_self else None, grad * self if need_other else None
    s = ops.unsqueeze(self, 0) if d1 == 1 else self
    o = ops.unsqueeze(other, -1) if d2 == 1 else other
    g = ops.unsqueeze(grad, -2) if d1 == 1 else grad
    if d2 == 1:
        g = ops.unsqueeze(g, -1)
    gs = go = None
    if need_self and need_other and d1 >= 3 and d2 >= 3:
        g = matmul_shared_grad(g)  # Note [Saved operand copies]
    if need_self:
        gs = ops.matmul(g, matrix_transpose(o))
        if d1 == 1:
            gs = ops.squeeze(gs, [-2])
    if need_other:
        go = ops.matmul(matrix_transpose(s), g)
        if d2 == 1:
            go = ops.squeeze(go, [-1])
    return gs, go


# Note [Fused linear] / Note [Saved when needed]: one formula per input, so a frozen weight is not saved
# for the input's gradient alone, nor an input whose gradient is not wanted for the weight's.
def linear_input_backward(grad, input_shape, input_dtype, weight):
    """The gradient of ``linear`` for its input: ``grad @ weight`` for the flattened input, no view nodes."""
    if input_dtype.is_complex:  # Note [Complex gradients]: the conjugated Jacobian
        weight = ops.conj(weight)
    if weight.dim() == 1:  # (..., K) @ (K,): a matrix-vector product per row
        return ops.unsqueeze(grad, -1) * weight
    if len(input_shape) == 1:  # (K,) @ (K, N): vector-matrix
        return ops.matmul(grad, weight)
    rows = math.prod(input_shape[:-1])
    g2 = grad if grad.dim() == 2 else flat_view(grad, (rows, weight._sizes[0]))
    gi = ops.mm(g2, weight)
    return gi if len(input_shape) == 2 else flat_view(gi, tuple(input_shape))


def linear_weight_backward(grad, input, weight_shape):
    """The gradient of ``linear`` for its weight: ``grad^T @ input`` over the flattened rows."""
    if input.dtype.is_complex:
        input = ops.conj(input)
    if len(weight_shape) == 1:
        gw = ops.unsqueeze(grad, -1) * input
        return _sum(ops.reshape(gw, (-1, weight_shape[0])), [0]) if gw.dim() > 1 else gw
    if input.dim() == 1:
        return ops.unsqueeze(grad, 1) * ops.unsqueeze(input, 0)
    n, k = weight_shape
    rows = math.prod(input._sizes[:-1])
    g2 = grad if grad.dim() == 2 else flat_view(grad, (rows, n))
    x2 = input if input.dim() == 2 else flat_view(input, (rows, k))
    return ops.mm(matrix_transpose(g2), x2)


def linear_bias_backward(grad, bias_dim, input_dim, weight_dim):
    """The gradient of ``linear`` for its bias: a 1-d bias of a matrix product sums the rows here; any
    other broadcast bias is summed back by the engine."""
    if weight_dim == 1 or input_dim == 1 or bias_dim != 1:
        return grad
    return _sum(grad, list(range(grad.dim() - 1)))


def _sum(t, dims, keepdim=False):
    return ops.sum.dim_IntList(t, dims, keepdim=keepdim)


def _mean(t, dims, keepdim=False):
    return ops.mean.dim(t, dims, keepdim=keepdim)


def _var(t, dims, correction, keepdim):
    return ops.var.correction(t, dims, correction=correction, keepdim=keepdim)


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
                denom = (_sum(onehot * w, [class_dim], keepdim=True) * validf).sum()
            else:
                denom = validf.sum()
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


def cross_entropy_weight_backward(grad, self, target, weight, reduction, label_smoothing):
    """d cross_entropy / d weight for probability targets (torch composes that loss, ``-sum(w t log_softmax(x))``,
    so its weight has a gradient): ``-sum(t log_softmax(self) grad)`` over all but the class dim. With class
    indices torch's nll_loss refuses a weight that requires grad (F.cross_entropy raises at the call)."""
    class_dim = 0 if self.dim() == 1 else 1
    if not target.dtype.is_floating_point:
        fn = "nll_loss_forward" if self.dim() <= 2 else "nll_loss2d_forward"
        raise RuntimeError(f"The function '{fn}' is not differentiable with respect to argument 'weight'. This "
                           "input cannot have requires_grad True.")
    c = self._sizes[class_dim]
    tgt = target * (1 - label_smoothing) + label_smoothing / c if label_smoothing > 0 else target
    g = ops.unsqueeze(grad, class_dim) if reduction == 0 else grad
    if reduction == 1:
        g = g / max(self.numel() // c if c else 0, 1)
    contrib = -ops.log_softmax(self, class_dim) * tgt * g
    dims = [d for d in range(self.dim()) if d != class_dim]
    return _sum(contrib, dims) if dims else contrib


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


def mse_loss_backward(grad, self, target, reduction):
    """torch's mse_loss_backward: ``norm * (self - target) * grad``, ``norm`` = 2 / numel for a mean, else 2 (F.mse_loss
    broadcasts the two first, so numel is the loss's count)."""
    diff = self - target
    norm = 2.0 / max(diff.numel(), 1) if reduction == 1 else 2.0
    return diff * norm * grad


def _loss_scale(grad, x, reduction):
    """``grad`` over the element count for a mean reduction (the loss's gradient per element)."""
    return grad * (1.0 / max(x.numel(), 1)) if reduction == 1 else grad


def smooth_l1_loss_backward(grad, self, target, reduction, beta):
    """torch's smooth_l1_loss_backward (``beta`` > 0): ``-g`` / ``g`` at or past ``-beta`` / ``beta``, ``x g / beta``
    inside, ``x = self - target``."""
    x = self - target
    g = _loss_scale(grad, x, reduction)
    return ops.where(ops.le(x, -beta), -g, ops.where(ops.ge(x, beta), g, x * g / beta))


def huber_loss_backward(grad, self, target, reduction, delta):
    """torch's huber_loss_backward: ``-g delta`` / ``g delta`` at or past ``-delta`` / ``delta``, ``x g`` inside."""
    x = self - target
    g = _loss_scale(grad, x, reduction)
    return ops.where(ops.le(x, -delta), -g * delta, ops.where(ops.ge(x, delta), g * delta, x * g))


def max_pool_double_backward(grad, indices):
    """The derivative of max_pool2d's backward for its ``grad_output``: ``grad`` (shaped as the input) read at the
    elements the windows chose (torch's max_pool_double_backward)."""
    lead = indices._sizes[:-2]
    flat = ops.reshape(grad, (*lead, -1))
    return ops.reshape(ops.gather(flat, -1, ops.reshape(indices, (*lead, -1))), indices._sizes)


def gelu_double_backward(grad, grad_output, self, approximate: str):
    """The derivative of ``gelu_backward(grad_output, self)`` for ``self``: ``grad * grad_output * gelu''(self)``
    (torch's gelu_double_backward)."""
    if approximate == "tanh":
        beta, kappa = math.sqrt(2.0) * 2.0 / math.sqrt(math.pi) * 0.5, 0.044715
        inner = beta * (self + kappa * self * self * self)
        t = ops.tanh(inner)
        g = 1 - t * t  # sech^2
        h = beta * (1 + 3 * kappa * self * self)
        # gelu = 0.5 x (1 + t): gelu'' = g h + 0.5 x (g' h + g h'), g' = -2 g t h, h' = 6 kappa beta x
        second = g * h + 0.5 * self * (-2 * g * t * h * h + g * (6 * kappa * beta * self))
        return grad * grad_output * second
    beta = 2.0 / math.sqrt(math.pi) * math.sqrt(0.5) * 0.5
    sq = self * self
    pdf = beta * ops.exp(-0.5 * sq)
    return grad * grad_output * (2 * pdf - sq * pdf)



def nll_loss_backward(grad, self, target, weight, reduction, ignore_index, total_weight):
    """torch's nll_loss_backward (and nll_loss2d_backward): ``-weight[t] * grad`` at each counted target's class
    (over ``total_weight`` for a mean), zero elsewhere."""
    class_dim = 0 if self.dim() == 1 else 1
    t = target if target.dtype is dt.int64 else target.to(dt.int64)
    if self.dim() == 1:
        t = ops.reshape(t, ())
    n_classes = self.size(class_dim)
    skipped = ops.logical_or(ops.eq(t, ignore_index), ops.logical_or(ops.lt(t, 0), ops.ge(t, n_classes)))
    safe = ops.where(skipped, 0, t)
    g = grad / total_weight if reduction == 1 else grad
    if weight is not None and t.numel():
        g = g * ops.reshape(ops.index_select(weight, 0, ops.reshape(safe, (-1,))), safe.shape)
    values = ops.where(skipped, 0.0, ops.neg(g))
    if values.shape != t.shape:
        values = ops.expand(values, t.shape)
    zeros = ops.zeros_like(self)
    if not n_classes:
        return zeros
    return ops.scatter(zeros, class_dim, ops.unsqueeze(safe, class_dim), ops.unsqueeze(values, class_dim))


def _per_element(g, x, reduction):
    return g / max(x.numel(), 1) if reduction == 1 else g


def binary_cross_entropy_backward(grad, self, target, weight, reduction):
    """torch's: ``grad (x - t) / max(x (1 - x), 1e-12)`` times the weight (not the derivative of the clamped logs:
    finite where x is 0 or 1)."""
    g = grad * (self - target) / ops.clamp_min((1 - self) * self, BCE_EPSILON)
    if weight is not None:
        g = g * weight
    return _per_element(g, self, reduction)


def binary_cross_entropy_target_backward(grad, self, target, weight, reduction):
    """torch's: ``grad (log(1 - x) - log(x))`` times the weight."""
    g = (ops.log1p(ops.neg(self)) - ops.log(self)) * grad
    if weight is not None:
        g = g * weight
    return _per_element(g, target, reduction)


def binary_cross_entropy_with_logits_backward(grad, self, target, weight, pos_weight, reduction):
    """torch's: ``(sigmoid(x) - t) grad``, with ``pos_weight`` ``((p t + 1 - t) sigmoid(x) - p t) grad``; times the
    weight."""
    if pos_weight is not None:
        pt = pos_weight * target
        g = (pt + 1 - target) * ops.sigmoid(self) - pt
    else:
        g = ops.sigmoid(self) - target
    g = g * grad
    if weight is not None:
        g = g * weight
    return _per_element(g, self, reduction)


def binary_cross_entropy_with_logits_target_backward(grad, self, target, weight, pos_weight, reduction):
    """torch's: ``-x grad``, with ``pos_weight`` ``(log_sigmoid(-x) - p log_sigmoid(x)) grad``; times the weight."""
    if pos_weight is not None:
        g = ops.log_sigmoid(ops.neg(self)) - ops.log_sigmoid(self) * pos_weight
    else:
        g = ops.neg(self)
    g = g * grad
    if weight is not None:
        g = g * weight
    return _per_element(g, target, reduction)
