"""Nonsymmetric eigendecomposition (eig, eigvals): the ops ``linalg_eig`` and ``linalg_eigvals`` (LAPACK's geev
on the CPU and, on a host copy, for CUDA tensors: Note [eig on the host]) with torch's gradient (Note [eig
gradient] in autograd/functions_eig.py) and torch's ``out=`` checks."""

from __future__ import annotations

from ..dispatch.dispatcher import grad_mode
from ..ops import bound as ops
from ..return_types import structseq
from ..tensor import Tensor
from ._common import arg_tensor

__all__ = ["eig", "eigvals"]

linalg_eig = structseq("linalg_eig", ("eigenvalues", "eigenvectors"))


def _write(api: str, name: str, out, value: Tensor) -> Tensor:
    """torch's out= contract: a complex dtype the result casts to safely, the result's device, resized."""
    if not out.dtype.is_complex:  # torch's canCast: complex128 results go into complex64 too
        from ..backends.meta.reductions import type_name

        raise RuntimeError(f"torch.linalg.{api.split('_')[-1]}: Expected {name} to be safely castable from "
                           f"{type_name(value.dtype)} dtype, but got {name} with dtype {type_name(out.dtype)}")
    if out.device != value.device:
        raise RuntimeError(f"Attempting to copy from device {value.device} to device {out.device}, but "
                           "cross-device copies are not allowed!")
    if tuple(out.shape) != tuple(value.shape):
        out.resize_(value.shape)
    return out.copy_(value)


def _no_grad_out(api: str, A: Tensor) -> None:
    if grad_mode.enabled and A._requires_grad:
        raise RuntimeError(f"{api}(): functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")


def eig(A: Tensor, *, out=None):
    """The eigenvalues and eigenvectors of the square matrices in ``A`` (real or complex), as complex tensors
    ``linalg_eig(eigenvalues, eigenvectors)`` with ``A V = V diag(w)``; each eigenvector has unit 2-norm and, as
    in torch, an arbitrary phase."""
    arg_tensor("linalg_eig", "input", 1, A)
    if out is not None:
        if not isinstance(out, (tuple, list)) or len(out) != 2 or not all(isinstance(t, Tensor) for t in out):
            raise TypeError(f"linalg_eig(): argument 'out' must be tuple of Tensors, not {type(out).__name__}")
        _no_grad_out("linalg_eig", A)
    w, V = ops.linalg_eig(A)
    if out is None:
        return linalg_eig((w, V))
    return linalg_eig((_write("linalg_eig", "eigenvalues", out[0], w), _write("linalg_eig", "eigenvectors", out[1], V)))


def eigvals(A: Tensor, *, out=None) -> Tensor:
    """The eigenvalues of the square matrices in ``A`` (complex; the order of ``eig``'s)."""
    arg_tensor("linalg_eigvals", "input", 1, A)
    if out is not None:
        if not isinstance(out, Tensor):
            raise TypeError(f"linalg_eigvals(): argument 'out' must be Tensor, not {type(out).__name__}")
        _no_grad_out("linalg_eigvals", A)
    w = ops.linalg_eigvals(A)
    return w if out is None else _write("linalg_eigvals", "eigenvalues", out, w)
