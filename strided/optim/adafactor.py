"""Adafactor (factored second moments, relative step sizes): for-loop and foreach, as torch.optim.Adafactor.

Note [Adafactor]
The second moment of a parameter with two or more dims is kept as a row factor (its last dim reduced) and
a column factor (the second-to-last reduced), so a (m, n) weight keeps m + n numbers instead of m * n;
a vector (or a 0-dim tensor) keeps a full one. The step size is relative: ``rho_t = min(lr, 1 / sqrt(t))``
times the parameter's RMS (at least ``eps[1]``), and each update is clipped to RMS ``d``. As in torch,
``lr`` also scales the decoupled weight decay, ``eps[0]`` (default: the dtype's machine epsilon) bounds
the row means and the variance estimate from below, the step is counted on the host, and the for-loop
form is the default (``foreach=True`` trades ~one parameter set of memory for fewer launches).
"""

from __future__ import annotations

from ..factories import tensor, zeros, zeros_like
from ..linalg import vector_norm
from ..ops import bound as ops
from ..type_info import finfo
from . import _foreach as fe
from .optimizer import Optimizer, group_by_device_and_dtype, no_grad

__all__ = ["Adafactor", "adafactor"]


def _fresh_state(state, p, group) -> None:
    """The state of a param's first step, as torch's (a complex param is refused, in torch's words)."""
    if p.is_complex():
        raise RuntimeError("Adafactor does not support complex parameters")
    state["step"] = tensor(0.0, dtype=fe.scalar_dtype())
    g = p.grad
    if g.dim() > 1:
        row, col = list(g.shape), list(g.shape)
        row[-1] = 1
        col[-2] = 1
        state["row_var"] = zeros(row, dtype=g.dtype, device=g.device)
        state["col_var"] = zeros(col, dtype=g.dtype, device=g.device)
    else:
        state["variance"] = zeros_like(g)


class Adafactor(Optimizer):
    """torch.optim.Adafactor (Note [Adafactor])."""

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        if hasattr(lr, "numel") and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One Adafactor step over every param with a ``.grad``."""
        self._cuda_graph_capture_health_check()
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                params, grads, (row_vars, col_vars, variances, steps) = self._gather(
                    group, ("row_var", "col_var", "variance", "step"), _fresh_state)
                eps1, eps2 = group["eps"]
                adafactor(params, grads, row_vars, col_vars, variances, steps, foreach=group["foreach"],
                          d=group["d"], lr=group["lr"], beta2_decay=group["beta2_decay"],
                          weight_decay=group["weight_decay"], eps1=eps1, eps2=eps2, maximize=group["maximize"])
        return loss


def adafactor(params, grads, row_vars, col_vars, variances, state_steps, foreach=None, *, d, lr, beta2_decay,
              weight_decay, eps1, eps2, maximize) -> None:
    """Functional Adafactor (``torch.optim._adafactor.adafactor``): the for-loop form unless ``foreach``."""
    fn = _multi_tensor_adafactor if foreach else _single_tensor_adafactor
    fn(params, grads, row_vars, col_vars, variances, state_steps, d=d, lr=float(lr), beta2_decay=beta2_decay,
       weight_decay=weight_decay, eps1=eps1, eps2=eps2, maximize=maximize)


def _rms(t) -> float:
    return ops.norm(t, 2).item() / (t.numel() ** 0.5)


def _single_tensor_adafactor(params, grads, row_vars, col_vars, variances, state_steps, *, d, lr, beta2_decay,
                             weight_decay, eps1, eps2, maximize) -> None:
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        row_var, col_var, variance = row_vars[i], col_vars[i], variances[i]
        if eps1 is None:
            eps1 = finfo(param.dtype).eps
        (step,) = fe.bump_steps([state_steps[i]])
        one_minus_beta2_t = step ** beta2_decay
        rho_t = min(lr, 1 / (step ** 0.5))
        alpha = max(eps2, _rms(param)) * rho_t
        if weight_decay != 0:
            param.mul_(1 - lr * weight_decay)
        if grad.dim() > 1:
            # (g * g).mean(dim) without a gradient-sized intermediate
            row_var.lerp_(vector_norm(grad, dim=-1, keepdim=True).square_().div_(grad.size(-1)), one_minus_beta2_t)
            col_var.lerp_(vector_norm(grad, dim=-2, keepdim=True).square_().div_(grad.size(-2)), one_minus_beta2_t)
            var_estimate = row_var @ col_var
            var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
        else:
            variance.lerp_(grad * grad, one_minus_beta2_t)
            var_estimate = variance.clone()  # the update must not write into the state
        update = var_estimate.clamp_(min=eps1 * eps1).rsqrt_()  # eps1 squared: the sqrt keeps its magnitude
        update.mul_(grad)
        denom = max(1.0, _rms(update) / d)
        param.add_(update, alpha=-alpha / denom)


def _multi_tensor_adafactor(params, grads, row_vars, col_vars, variances, state_steps, *, d, lr, beta2_decay,
                            weight_decay, eps1, eps2, maximize) -> None:
    if not params:
        return
    groups = {}  # torch's grouping: by device and dtype, then factored (dim > 1) or not
    lists = [params, grads, row_vars, col_vars, variances, state_steps]
    for (tensors, _) in group_by_device_and_dtype(lists).values():
        for j, g in enumerate(tensors[1]):
            key = (tensors[0][j].device, tensors[0][j].dtype, g.dim() > 1)
            entry = groups.setdefault(key, [[] for _ in lists])
            for k in range(len(lists)):
                entry[k].append(tensors[k][j])
    for (_device, dtype, multidim), (p, g, rows, cols, vs, steps) in groups.items():
        if eps1 is None:
            eps1 = finfo(dtype).eps
        if maximize:
            g = ops._foreach_neg.default(g)
        values = fe.bump_steps(steps)
        one_minus_beta2 = [s ** beta2_decay for s in values]
        alphas = [max(eps2, _rms(x)) * min(lr, 1 / (s ** 0.5)) for x, s in zip(p, values)]
        if weight_decay != 0:
            ops._foreach_mul_.Scalar(p, 1 - lr * weight_decay)
        if multidim:
            row_means = [vector_norm(x, dim=-1, keepdim=True) for x in g]
            fe.mul_list_(row_means, row_means)
            ops._foreach_div_.ScalarList(row_means, [x.size(-1) for x in g])
            fe.lerp_scalar_list_(rows, row_means, one_minus_beta2)
            del row_means
            col_means = [vector_norm(x, dim=-2, keepdim=True) for x in g]
            fe.mul_list_(col_means, col_means)
            ops._foreach_div_.ScalarList(col_means, [x.size(-2) for x in g])
            fe.lerp_scalar_list_(cols, col_means, one_minus_beta2)
            del col_means
            estimates = [r @ c for r, c in zip(rows, cols)]
            row_var_means = [r.mean(dim=-2, keepdim=True) for r in rows]
            fe.clamp_min_(row_var_means, eps1)
            fe.div_list_(estimates, row_var_means)
        else:
            fe.lerp_scalar_list_(vs, fe.mul_list(g, g), one_minus_beta2)
            estimates = [v.clone() for v in vs]
        fe.clamp_min_(estimates, eps1 * eps1)
        fe.rsqrt_(estimates)
        fe.mul_list_(estimates, g)
        scales = [-a / max(1.0, _rms(u) / d) for a, u in zip(alphas, estimates)]
        fe.mul_scalar_list_(estimates, scales)
        ops._foreach_add_.List(p, estimates)
