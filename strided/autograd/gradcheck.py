"""``gradcheck``: analytical gradients against central finite differences (float64, CPU)."""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by ``gradcheck`` when the analytical and numerical Jacobians differ."""


def _outputs(out) -> list:
    if isinstance(out, Tensor):
        return [out]
    return [o for o in out if isinstance(o, Tensor)]


def _differentiable(outs) -> list:
    return [o for o in outs if o.dtype.is_floating_point or o.dtype.is_complex]


def gradcheck(fn, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True) -> bool:
    """Compare the Jacobian autograd computes with central differences of ``fn`` at ``inputs``.

    ``inputs`` is a tuple whose tensors that ``requires_grad`` are differentiated (float64 or
    complex128 CPU tensors, as torch.autograd.gradcheck expects; complex ones as torch's slow
    mode checks them, Note [Complex gradcheck]). Every floating output is checked, one
    output element at a time through ``autograd.grad`` (vector-Jacobian products with unit
    vectors), against ``(f(x + eps) - f(x - eps)) / (2 eps)`` per input element. ``fn`` runs
    with grad mode on throughout, so it may itself call ``autograd.grad`` (second derivatives).
    """
    inputs = tuple(inputs) if isinstance(inputs, (list, tuple)) else (inputs,)
    wrt = [x for x in _flat(inputs) if isinstance(x, Tensor) and x._requires_grad]
    for x in wrt:
        if x.dtype.name != ("complex128" if x.dtype.is_complex else "float64"):
            raise GradcheckError(f"gradcheck expects {'complex128' if x.dtype.is_complex else 'float64'} inputs, "
                                 f"got {x.dtype}")
    outs = _differentiable(_outputs(fn(*inputs)))
    if any(t.dtype.is_complex for t in (*wrt, *outs)):  # Note [Complex gradcheck]
        try:
            return _complex_gradcheck(fn, inputs, wrt, outs, eps, atol, rtol)
        except GradcheckError as e:
            return _fail(raise_exception, str(e))
    try:  # real inputs and outputs: strided's per-element message
        return _slow(fn, inputs, wrt, eps, atol, rtol, None, False, per_element=True)
    except GradcheckError as e:
        return _fail(raise_exception, str(e))



def gradgradcheck(fn, inputs, grad_outputs=None, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                  gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True) -> bool:
    """Check second derivatives (reverse over reverse, as torch.autograd.gradgradcheck): ``gradcheck`` of
    the function mapping ``(inputs, grad_outputs)`` to the gradients ``autograd.grad(create_graph=True)``
    returns. ``grad_outputs`` defaults to random values in [-1, 1) shaped like ``fn``'s outputs, made
    non-contiguous with ``gen_non_contig_grad_outputs``."""
    from ..testing import make_tensor
    from .backward_api import grad as autograd_grad

    inputs = tuple(inputs) if isinstance(inputs, (list, tuple)) else (inputs,)
    if grad_outputs is None:
        grad_outputs = tuple(
            make_tensor(o.shape, dtype=o.dtype, device=o.device, low=-1, high=1, requires_grad=True,
                        noncontiguous=gen_non_contig_grad_outputs)
            for o in _differentiable(_outputs(fn(*inputs))))
    else:
        grad_outputs = tuple(grad_outputs) if isinstance(grad_outputs, (list, tuple)) else (grad_outputs,)
    n = len(grad_outputs)
    diff_inputs = {i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x._requires_grad}
    diff_grad_outputs = {i for i, g in enumerate(grad_outputs) if g._requires_grad}

    def first_derivatives(*args):
        values = args[:len(args) - n]
        outs = _differentiable(_outputs(fn(*values)))
        seeds = tuple(g.requires_grad_() if i in diff_grad_outputs else g for i, g in enumerate(args[len(args) - n:]))
        wrt = tuple(x for i, x in enumerate(values) if i in diff_inputs)
        grads = autograd_grad(outs, wrt, seeds, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivatives, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)


# Note [Complex gradcheck]
# As torch.autograd.gradcheck (``_slow_gradcheck`` under ``_gradcheck_real_imag``, backward mode):
#
# - A function with complex outputs is checked as two real functions, the imaginary part of every
#   complex output first, then the real part (torch's ``_real_and_imag_output``); a mismatch on a
#   complex output is prefixed "While considering the imaginary (real) part of complex outputs only, ".
#   Seeding ``real(f)`` and ``imag(f)`` with 1 is seeding ``f`` with 1 and with 1j.
# - The numerical column of a complex input element is the conjugate Wirtinger derivative
#   ``ds/dx + 1j * ds/dy`` of each (real) output ``s``, from central differences along the real and the
#   imaginary axis (torch's ``_compute_numerical_jvps_wrt_specific_input``): what the convention of
#   Note [Complex gradients] makes autograd return for a unit ``grad_output`` of ``s``.
# - The analytical Jacobian has one row per output element, the ``autograd.grad`` of a unit seed, and is
#   compared whole with the numerical one for each (output, input) pair (torch's message and layout:
#   ``(input numel, output numel)``).
#
# torch's "While considering the real part of complex inputs only, " belongs to its forward-mode check
# (``_real_and_imag_input``); strided has no forward-mode AD, so that check and its message have no twin.


def _complex_gradcheck(fn, inputs, wrt, outs, eps: float, atol: float, rtol: float) -> bool:
    """Check ``fn`` whose differentiated inputs or floating outputs are complex; raises GradcheckError."""
    complex_indices = [k for k, o in enumerate(outs) if o.dtype.is_complex]
    if not complex_indices:
        return _slow(fn, inputs, wrt, eps, atol, rtol, None, False)
    real_fn, imag_fn = _real_and_imag_output(fn)
    _slow(imag_fn, inputs, wrt, eps, atol, rtol, complex_indices, True)
    return _slow(real_fn, inputs, wrt, eps, atol, rtol, complex_indices, False)


def _real_and_imag_output(fn):
    """``fn`` with ``real`` (``imag``) applied to its complex outputs (torch's ``_real_and_imag_output``)."""
    from ..ops import bound as ops

    def apply(part):
        def wrapped(*inputs):
            return tuple(part(o) if o.dtype.is_complex else o for o in _outputs(fn(*inputs)))

        return wrapped

    return apply(ops.real), apply(ops.imag)


def _slow(fn, inputs, wrt, eps, atol, rtol, complex_indices, test_imag, per_element: bool = False) -> bool:
    """Numerical against analytical Jacobians of every floating output; raises GradcheckError. ``per_element``
    (real functions) names the first mismatching output element instead of showing whole Jacobians."""
    outs = _differentiable(_outputs(fn(*inputs)))
    numerical = _numerical(fn, inputs, wrt, [o.numel() for o in outs], eps)
    for k, o in enumerate(outs):
        if not o._requires_grad:
            for i in range(len(wrt)):
                if np.any(numerical[i][k] != 0):
                    raise GradcheckError(f"output {k} does not require grad but its numerical "
                                         f"gradient w.r.t. input {i} is not zero")
            continue
        analytical = _analytical(o, wrt)
        if per_element:
            for m in range(o.numel()):
                for i, a in enumerate(analytical):
                    if not np.allclose(a[:, m], numerical[i][k][:, m], rtol=rtol, atol=atol):
                        raise GradcheckError(f"Jacobian mismatch for output {k} element {m} with respect to input "
                                             f"{i},\nnumerical:{numerical[i][k][:, m]}\nanalytical:{a[:, m]}")
            continue
        for i, a in enumerate(analytical):
            n = numerical[i][k]
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                raise GradcheckError(_notallclose_msg(a, n, k, i, complex_indices, test_imag))
    return True


def _notallclose_msg(analytical, numerical, output_idx, input_idx, complex_indices, test_imag) -> str:
    """torch's ``_get_notallclose_msg`` (backward mode)."""
    part = "imaginary" if test_imag else "real"
    prefix = f"While considering the {part} part of complex outputs only, " if (
        complex_indices and output_idx in complex_indices) else ""
    return (prefix + f"Jacobian mismatch for output {output_idx:d} with respect to input {input_idx:d},\n"
            f"numerical:{numerical}\nanalytical:{analytical}\n")


def _numerical(fn, inputs, wrt, out_numels, eps) -> list:
    """``[i][k]``: d output k / d input i, ``(input numel, output numel)``; Wirtinger columns for complex inputs."""
    jacobians = []
    for x in wrt:
        cplx = x.dtype.is_complex
        per_out = [np.zeros((x.numel(), n), np.complex128 if cplx else np.float64) for n in out_numels]
        flat = x.detach().numpy()  # shares memory with x
        for j, idx in enumerate(np.ndindex(*x._sizes)):
            for k, d in enumerate(_central(fn, inputs, flat, idx, eps, eps)):
                per_out[k][j] = d
            if cplx:  # conjugate Wirtinger derivative: ds/dx + 1j ds/dy
                for k, d in enumerate(_central(fn, inputs, flat, idx, eps * 1j, eps)):
                    per_out[k][j] += 1j * d
        jacobians.append(per_out)
    return jacobians


def _central(fn, inputs, flat, idx, step, eps) -> list:
    """``(f(x + step) - f(x - step)) / (2 eps)`` of each floating output, flattened."""
    orig = flat[idx]
    flat[idx] = orig - step
    minus = [_values(o) for o in _differentiable(_outputs(fn(*inputs)))]
    flat[idx] = orig + step
    plus = [_values(o) for o in _differentiable(_outputs(fn(*inputs)))]
    flat[idx] = orig
    return [((p - m) / (2 * eps)).reshape(-1) for p, m in zip(plus, minus)]


def _values(o: Tensor):
    return o.detach().numpy(force=True).astype(np.float64).copy()


def _analytical(o: Tensor, wrt) -> list:
    """Per input, the Jacobian of ``o`` row by row: ``autograd.grad`` of each unit seed."""
    from ..ops import bound as ops
    from .backward_api import grad as autograd_grad

    jacobians = [np.zeros((x.numel(), o.numel()), np.complex128 if x.dtype.is_complex else np.float64)
                 for x in wrt]
    for m in range(o.numel()):
        seed = np.zeros(o.numel())
        seed[m] = 1.0
        g = ops.reshape(_from(seed, o), o._sizes)
        grads = autograd_grad([o], wrt, [g], retain_graph=True, allow_unused=True)
        for i, gx in enumerate(grads):
            if gx is None:
                continue
            if tuple(gx.shape) != tuple(wrt[i].shape):
                raise GradcheckError("Analytical gradient has incorrect size")
            values = gx.numpy(force=True).reshape(-1)
            jacobians[i][:, m] = values if wrt[i].dtype.is_complex else np.real(values)
    return jacobians


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
