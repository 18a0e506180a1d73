"""Meta functions of the fused optimizer ops: argument validation only (they write in place)."""

from __future__ import annotations

from math import prod

from ...dispatch.library import kernel

__all__ = ["check_fused_lists"]


def check_fused_lists(op: str, params, grads, *states, steps=None, grad_scale=None, found_inf=None) -> None:
    """torch's fused-optimizer checks: equal-length lists of floating tensors of matching shapes,
    one device per param group, and one-element float ``grad_scale`` / ``found_inf``.

    Note [Fast list checks]: the common (valid) case is decided by comprehensions (sets of the few
    distinct dtypes, devices and step sizes; lists of sizes compared at C speed) rather than
    generator expressions; the per-tensor loop that names the offending index runs only on failure.
    """
    n = len(params)
    if n == 0:
        raise RuntimeError("Tensor list must have at least one tensor.")
    states = tuple(s for s in states if len(s))
    for other in (grads,) + states + ((steps,) if steps is not None else ()):
        if len(other) != n:
            raise RuntimeError(f"Tensor lists must have the same number of tensors, got {n} and {len(other)}")
    dev = params[0].device
    sizes = [p._sizes for p in params]
    ok = all(d.is_floating_point for d in {p.dtype for p in params})
    devices = {t.device for t in params}
    for lst in (grads,) + states:
        ok = ok and [t._sizes for t in lst] == sizes
        devices |= {t.device for t in lst}
    if steps is not None:
        ok = ok and all(n == 1 for n in {prod(s._sizes) for s in steps})
    if not ok or len(devices) != 1:
        _explain(op, dev, params, grads, states, steps)
    for name, t in (("grad_scale", grad_scale), ("found_inf", found_inf)):
        if t is not None and (t.numel() != 1 or not t.dtype.is_floating_point):
            raise RuntimeError(f"{op}: {name} must be a one-element floating point tensor")


def _explain(op, dev, params, grads, states, steps) -> None:
    for i, p in enumerate(params):
        if not p.dtype.is_floating_point:
            raise RuntimeError(f"{op}: expected floating point params, but got {p.dtype} at index {i}")
        for t in (p, grads[i]) + tuple(s[i] for s in states):
            if t.device != dev:
                raise RuntimeError(f"{op}: all tensors must be on {dev}, but got {t.device} at index {i}")
            if t._sizes != p._sizes:
                raise RuntimeError(f"{op}: shape mismatch at index {i}: {list(t._sizes)} vs param "
                                   f"{list(p._sizes)}")
        if steps is not None and steps[i].numel() != 1:
            raise RuntimeError(f"{op}: state_steps[{i}] must have one element")


@kernel("Meta")
def _fused_adam_(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *, lr, beta1, beta2,
                 weight_decay, eps, amsgrad, maximize, grad_scale=None, found_inf=None):
    check_fused_lists("_fused_adam_", self, grads, exp_avgs, exp_avg_sqs,
                      max_exp_avg_sqs if amsgrad else (), steps=state_steps, grad_scale=grad_scale,
                      found_inf=found_inf)


@kernel("Meta")
def _fused_adamw_(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *, lr, beta1, beta2,
                  weight_decay, eps, amsgrad, maximize, grad_scale=None, found_inf=None):
    check_fused_lists("_fused_adamw_", self, grads, exp_avgs, exp_avg_sqs,
                      max_exp_avg_sqs if amsgrad else (), steps=state_steps, grad_scale=grad_scale,
                      found_inf=found_inf)


@kernel("Meta")
def _fused_sgd_(self, grads, momentum_buffer_list, *, weight_decay, momentum, lr, dampening, nesterov,
                maximize, is_first_step, grad_scale=None, found_inf=None):
    check_fused_lists("_fused_sgd_", self, grads, momentum_buffer_list if momentum != 0 else (),
                      grad_scale=grad_scale, found_inf=found_inf)


@kernel("Meta")
def _fused_adagrad_(self, grads, state_sums, state_steps, *, lr, lr_decay, weight_decay, eps, maximize,
                    grad_scale=None, found_inf=None):
    check_fused_lists("_fused_adagrad_", self, grads, state_sums, steps=state_steps, grad_scale=grad_scale,
                      found_inf=found_inf)
