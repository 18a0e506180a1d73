"""What the Autograd kernels refuse, in torch's words: a complex output of an op whose gradient is real-only, and
a Tensor argument without a formula that requires grad (Note [Arguments without a formula])."""

from __future__ import annotations

from ..tensor import Tensor

__all__ = ["NOT_DIFFERENTIABLE_FOR_COMPLEX", "refuse_complex_autograd", "no_formula_arguments",
           "check_no_requires_grad"]

# Ops that take complex tensors but, as in torch, have no complex gradient: recording one raises torch's
# throw_error_for_complex_autograd words after the call (torch checks the functional form only)
NOT_DIFFERENTIABLE_FOR_COMPLEX = frozenset({"scatter_reduce", "silu", "embedding"})


def refuse_complex_autograd(name: str, out) -> None:
    """torch's throw_error_for_complex_autograd for a complex ``out`` of ``name``."""
    if isinstance(out, Tensor) and out.dtype.is_complex:
        raise RuntimeError(f"{name} does not support automatic differentiation for outputs with "
                           f"complex dtype.")


# Note [Arguments without a formula]
# As torch's generated code (check_no_requires_grad): a Tensor argument of a differentiable op that has no formula
# may not require grad -- the call raises in torch's words instead of dropping that gradient silently. Integer and
# bool tensors (indices, masks, class targets) cannot require grad, so only floating arguments ever trip it:
# nll_loss's and binary_cross_entropy's weights, batch norm's running statistics.
def no_formula_arguments(op, info) -> tuple:
    """(position, name) of ``op``'s Tensor arguments without a formula, when some output is differentiable."""
    if not any(info.output_differentiability):
        return ()
    with_formula = {name for name, _, _ in info.inputs}
    return tuple((i, a.name) for i, a in enumerate(op.schema.arguments)
                 if a.type.base == "Tensor" and a.name not in with_formula)


def check_no_requires_grad(op, bound, unchecked) -> None:
    """Note [Arguments without a formula]."""
    for pos, name in unchecked:
        v = bound[pos]
        values = v if isinstance(v, (list, tuple)) else (v,)
        if any(isinstance(t, Tensor) and t._requires_grad for t in values):
            raise RuntimeError(f"The function '{op.schema.name}' is not differentiable with respect to argument "
                               f"'{name}'. This input cannot have requires_grad True.")
