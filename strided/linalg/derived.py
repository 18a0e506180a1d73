"""torch.linalg functions built on products and the factorizations: multi_dot, vander, matrix_exp,
householder_product, tensorinv and tensorsolve."""

from __future__ import annotations

import math

from .. import dtypes as _dt
from ..factories import eye as _eye
from ..ops import bound as _ops
from ..tensor import Tensor
from ._common import COMPLEX_DEVICES, arg_tensor, floating, kernel_dtype, square, type_name
from .lu import inv, solve

__all__ = ["multi_dot", "vander", "matrix_exp", "householder_product", "tensorinv", "tensorsolve"]

# c10's C++ type names, as multi_dot's dtype error prints them
_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
              "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
              "uint8": "unsigned char", "bool": "bool"}


# -- multi_dot -----------------------------------------------------------------------------------
def multi_dot(tensors) -> Tensor:
    """The product of a chain of matrices, multiplied in the order that costs the fewest flops; the first
    and last may be vectors."""
    tensors = list(tensors)
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    for i, t in enumerate(tensors):
        arg_tensor("linalg.multi_dot", f"tensors[{i}]", 1, t)
    first, last = tensors[0], tensors[-1]
    if first.dim() not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {first.dim()}D")
    for i in range(1, n - 1):
        if tensors[i].dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {tensors[i].dim()}D")
    if last.dim() not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last.dim()}D")
    for i, t in enumerate(tensors[1:], 1):
        if t.dtype != first.dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                               f"{_CPP_NAMES.get(first.dtype.name, first.dtype.name)} and tensor {i} "
                               f"{_CPP_NAMES.get(t.dtype.name, t.dtype.name)}")
        if t.device != first.device:
            raise RuntimeError(f"multi_dot(): all tensors must be on the same device but tensor 0 is on "
                               f"{first.device} and tensor {i} on {t.device}")
    mats = [first.unsqueeze(0) if first.dim() == 1 else first, *tensors[1:-1],
            last.unsqueeze(-1) if last.dim() == 1 else last]
    for i in range(n - 1):
        if mats[i].shape[-1] != mats[i + 1].shape[0]:
            a, b = list(tensors[i].shape), list(tensors[i + 1].shape)
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes {a} and {b} cannot be multiplied")
    out = _chain(mats, _chain_order([m.shape[0] for m in mats] + [mats[-1].shape[1]]), 0, n - 1)
    if first.dim() == 1:
        out = out.squeeze(0)
    if last.dim() == 1:
        out = out.squeeze(-1)
    return out


def _chain_order(p: list[int]) -> list[list[int]]:
    """The matrix-chain dynamic programme (as torch's ``multi_dot``): ``split[i][j]`` is where the cheapest
    product of matrices i..j is divided, for dimensions ``p`` (matrix i is p[i] x p[i+1])."""
    n = len(p) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _chain(mats: list[Tensor], split, i: int, j: int) -> Tensor:
    if i == j:
        return mats[i]
    k = split[i][j]
    return _ops.mm(_chain(mats, split, i, k), _chain(mats, split, k + 1, j))


# -- vander --------------------------------------------------------------------------------------
def vander(x: Tensor, *, N: int | None = None) -> Tensor:
    """The Vandermonde matrix of ``x`` along its last dim: column j holds ``x ** j`` for j < N."""
    arg_tensor("linalg.vander", "x", 1, x)
    if x.dtype in (_dt.bool, _dt.float16, _dt.bfloat16):
        raise RuntimeError(f"linalg.vander supports floating point, complex, and integer tensors, but got "
                           f"{type_name(x.dtype)}")
    n = x.shape[-1] if x.dim() > 0 else 1
    N = n if N is None else N
    if N <= 1:
        raise RuntimeError("N must be greater than 1.")
    if x.dim() == 0:  # torch's: one sample, one row
        x = x.unsqueeze(0)
    ones = _ops.ones_like(x).unsqueeze(-1)
    powers = x.unsqueeze(-1).expand(*x.shape, N - 1)
    return _ops.cumprod(_ops.cat([ones, powers], -1), -1)


# -- matrix_exp ----------------------------------------------------------------------------------
# Note [matrix_exp by scaling and squaring]
# exp(A) = exp(A / 2^s)^(2^s): A / 2^s is scaled until its 1-norm is below theta_13 = 5.37, where the
# [13/13] Padé approximant is accurate to double precision (Higham, "The scaling and squaring method for
# the matrix exponential revisited", 2005), and the result is squared s times. s is per matrix; the
# number of squaring rounds is the batch's largest s, read on the host once (one sync, as the loop
# length must be known), and a matrix squares only in its own first s rounds. Gradients flow through
# the matmuls and the solve, the exact derivative of the approximant.
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0,
           10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def matrix_exp(A: Tensor) -> Tensor:
    """The matrix exponential of each square matrix of ``A``."""
    arg_tensor("linalg.matrix_exp", "input", 1, A)
    square("linalg.matrix_exp", A)
    floating("linalg.matrix_exp", A, COMPLEX_DEVICES)  # complex: its Pade solve is the CPU's complex LU
    n = A.shape[-1]
    if A.numel() == 0 or A.device.type == "meta":
        return _ops.empty_like(A) if A.device.type == "meta" else A.clone()
    if n == 1:
        return A.exp()
    if A.dtype in (_dt.float16, _dt.bfloat16):  # the Pade solve takes float32 up: computed there, rounded once
        return matrix_exp(A.float()).to(A.dtype)
    norm1 = _ops.amax(_ops.sum(A.detach().abs(), [-2], True), [-1], True)  # (*, 1, 1)
    s = _ops.clamp_min(_ops.ceil(_ops.log2(norm1 / _THETA13)), 0.0)
    rounds = int(s.max().item()) if s.numel() else 0  # Note [matrix_exp by scaling and squaring]
    X = A * _ops.exp2(-s).to(A.dtype)
    b = _PADE13
    eye = _eye(n, dtype=A.dtype, device=A.device)
    X2 = X @ X
    X4 = X2 @ X2
    X6 = X4 @ X2
    U = X @ (X6 @ (b[13] * X6 + b[11] * X4 + b[9] * X2) + b[7] * X6 + b[5] * X4 + b[3] * X2 + b[1] * eye)
    V = X6 @ (b[12] * X6 + b[10] * X4 + b[8] * X2) + b[6] * X6 + b[4] * X4 + b[2] * X2 + b[0] * eye
    R = solve(V - U, V + U)
    for k in range(rounds):
        R = _ops.where(s > k, R @ R, R)
    return R


# -- householder_product -------------------------------------------------------------------------
def householder_product(A: Tensor, tau: Tensor) -> Tensor:
    """The first n columns of ``H_1 H_2 ... H_k`` with ``H_i = I - tau_i v_i v_i^H``, ``v_i`` the i-th column of
    ``A`` below the diagonal with an implicit 1 on it (LAPACK's orgqr / ungqr; complex on the CPU, with QR)."""
    op = "torch.linalg.householder_product"
    arg_tensor("linalg.householder_product", "input", 1, A)
    arg_tensor("linalg.householder_product", "tau", 2, tau)
    if A.dim() < 2:
        raise RuntimeError(f"{op}: input must have at least 2 dimensions.")
    m, n = A.shape[-2], A.shape[-1]
    if m < n:
        raise RuntimeError(f"{op}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if tau.dim() == 0 or n < tau.shape[-1]:
        raise RuntimeError(f"{op}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    if tau.dim() != A.dim() - 1:
        raise RuntimeError(f"{op}: Expected tau to have one dimension less than input, but got tau.ndim equal to "
                           f"{tau.dim()} and input.ndim is equal to {A.dim()}")
    if tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError(f"{op}: Expected batch dimensions of tau to be equal to input.shape[:-2], but got "
                           f"{list(tau.shape[:-1])}")
    if tau.dtype != A.dtype:
        raise RuntimeError(f"{op}: tau dtype {type_name(tau.dtype)} does not match input dtype {type_name(A.dtype)}")
    kernel_dtype("orgqr", A)  # LAPACK's orgqr / ungqr: float, double and complex ("orgqr_cpu" for half, int64)
    k = tau.shape[-1]
    lower = _ops.tril(A, -1) + _eye(m, n, dtype=A.dtype, device=A.device)  # v_i, with the implicit 1
    Q = _eye(m, n, dtype=A.dtype, device=A.device).expand(*A.shape[:-2], m, n)
    for i in reversed(range(k)):  # Q = H_i Q, from the last reflector back
        v = lower[..., :, i:i + 1]
        Q = Q - tau[..., i:i + 1].unsqueeze(-1) * (v @ (v.mH @ Q))
    return Q


# -- tensorinv / tensorsolve ---------------------------------------------------------------------
def _prod(shape) -> int:
    return math.prod(int(s) for s in shape)


def tensorinv(A: Tensor, ind: int = 2) -> Tensor:
    """The inverse of ``A`` seen as a linear map from its last dims to its first ``ind`` dims."""
    arg_tensor("linalg.tensorinv", "input", 1, A)
    if not isinstance(ind, int) or isinstance(ind, bool) or ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    out_shape, in_shape = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    rows, cols = _prod(out_shape), _prod(in_shape)
    if rows != cols:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    return inv(A.reshape(rows, cols)).reshape(*in_shape, *out_shape)


def tensorsolve(A: Tensor, B: Tensor, dims=None) -> Tensor:
    """The X with ``tensordot(A, X, X.ndim) == B``; ``dims`` are moved to the end of ``A`` first."""
    arg_tensor("linalg.tensorsolve", "input", 1, A)
    arg_tensor("linalg.tensorsolve", "other", 2, B)
    if dims is not None:
        dims = [d % A.dim() for d in ([dims] if isinstance(dims, int) else dims)]
        keep = [d for d in range(A.dim()) if d not in dims]
        A = A.permute(*keep, *dims)
    result_shape = tuple(A.shape[B.dim():])
    rows, cols = _prod(A.shape[:B.dim()]), _prod(result_shape)
    if rows != cols:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {cols} != {rows}")
    return solve(A.reshape(rows, cols), B.reshape(rows)).reshape(result_shape)
