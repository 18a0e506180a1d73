"""``gradcheck``: analytical gradients against central finite differences (float64, CPU)."""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor

__all__ = ["gradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by ``gradcheck`` when the analytical and numerical Jacobians differ."""


def _outputs(out) -> list:
    if isinstance(out, Tensor):
        return [out]
    return [o for o in out if isinstance(o, Tensor)]


def _differentiable(outs) -> list:
    return [o for o in outs if o.dtype.is_floating_point]


def gradcheck(fn, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True) -> bool:
    """Compare the Jacobian autograd computes with central differences of ``fn`` at ``inputs``.

    ``inputs`` is a tuple whose tensors that ``requires_grad`` are differentiated (float64 CPU
    tensors, as torch.autograd.gradcheck expects). Every floating output is checked, one
    output element at a time through ``autograd.grad`` (vector-Jacobian products with unit
    vectors), against ``(f(x + eps) - f(x - eps)) / (2 eps)`` per input element. ``fn`` runs
    with grad mode on throughout, so it may itself call ``autograd.grad`` (second derivatives).
    """
    from .backward_api import grad as autograd_grad

    inputs = tuple(inputs) if isinstance(inputs, (list, tuple)) else (inputs,)
    wrt = [x for x in _flat(inputs) if isinstance(x, Tensor) and x.requires_grad]
    for x in wrt:
        if x.dtype.name != "float64":
            raise GradcheckError(f"gradcheck expects float64 inputs, got {x.dtype}")
    outs = _differentiable(_outputs(fn(*inputs)))
    # numerical Jacobian: d out_k / d x_i
    numerical = [[np.zeros((x.numel(), o.numel())) for o in outs] for x in wrt]
    for i, x in enumerate(wrt):
        flat = x.detach().numpy()  # shares memory with x
        for j, idx in enumerate(np.ndindex(*x._sizes)):
            orig = flat[idx]
            flat[idx] = orig + eps
            plus = [o.detach().numpy(force=True).astype(np.float64).copy()
                    for o in _differentiable(_outputs(fn(*inputs)))]
            flat[idx] = orig - eps
            minus = [o.detach().numpy(force=True).astype(np.float64).copy()
                     for o in _differentiable(_outputs(fn(*inputs)))]
            flat[idx] = orig
            for k, (p, m) in enumerate(zip(plus, minus)):
                numerical[i][k][j] = ((p - m) / (2 * eps)).reshape(-1)
    # analytical Jacobian, one output element at a time
    from ..ops import bound as ops

    for k, o in enumerate(outs):
        if not o.requires_grad:
            for i in range(len(wrt)):
                if np.any(numerical[i][k] != 0):
                    return _fail(raise_exception, f"output {k} does not require grad but its numerical "
                                                  f"gradient w.r.t. input {i} is not zero")
            continue
        for m in range(o.numel()):
            seed = np.zeros(o.numel())
            seed[m] = 1.0
            g = ops.reshape(_from(seed, o), o._sizes)
            grads = autograd_grad([o], wrt, [g], retain_graph=True, allow_unused=True)
            for i, gx in enumerate(grads):
                a = np.zeros(wrt[i].numel()) if gx is None else gx.numpy(force=True).astype(np.float64).reshape(-1)
                n = numerical[i][k][:, m]
                if not np.allclose(a, n, rtol=rtol, atol=atol):
                    return _fail(raise_exception, (
                        f"Jacobian mismatch for output {k} element {m} with respect to input {i},\n"
                        f"numerical:{n}\nanalytical:{a}"))
    return True


def _from(array, like: Tensor) -> Tensor:
    from ..factories import tensor

    return tensor(array, dtype=like.dtype, device=like.device)


def _flat(inputs):
    for x in inputs:
        if isinstance(x, (list, tuple)):
            yield from _flat(x)
        else:
            yield x


def _fail(raise_exception: bool, msg: str) -> bool:
    if raise_exception:
        raise GradcheckError(msg)
    return False
