"""The torch.* linear-algebra functions that predate torch.linalg: ``strided.det``, ``strided.svd``,
``strided.cholesky_solve``, ... Each is a thin form of a ``strided.linalg`` function, with torch's
argument order, result types and errors. ``strided`` binds them on first use (Note [Lazy submodules])
and ``Tensor``'s methods of the same names call them (``tensor_linalg.py``)."""

from __future__ import annotations

from builtins import range as builtins_range

from .. import dtypes as _dt
from ..dispatch.dispatcher import grad_mode
from ..dispatch.out_arguments import accepting_out as _accepting_out
from ..factories import eye as _eye
from ..ops import bound as _ops
from ..ops.composite.linalg_householder import solve_upper as _solve_upper
from ..ops.composite.linalg_solvers import perm_from_pivots
from ..return_types import structseq
from ..tensor import Tensor
from ..warn_once import warn_once
from ._common import COMPLEX_DEVICES, arg_tensor, floating, refuse_complex, square, type_name
from .derived import householder_product as _householder_product
from .derived import matrix_exp as _matrix_exp
from .lu import det as _det
from .lu import inv as _inv
from .lu import low_precision as _low_precision
from .lu import matrix_power as _matrix_power
from .lu import slogdet as _slogdet
from .removed import cholesky, eig, lstsq, matrix_rank, qr, solve, symeig  # noqa: F401 - torch.*'s names
from .svd import pinv as _pinv
from .svd import svd as _linalg_svd
from .svd import svdvals as _svdvals
from .triangular import solve_triangular as _solve_triangular

__all__ = ["inverse", "det", "logdet", "slogdet", "svd", "cholesky_solve", "cholesky_inverse", "pinverse",
           "matrix_power", "matrix_exp", "lu_unpack", "triangular_solve", "lu", "lu_solve", "nuclear_norm",
           "frobenius_norm", "norm_except_dim", "qr", "cholesky", "orgqr", "ormqr"]

svd_result = structseq("svd", ("U", "S", "V"))
slogdet_result = structseq("slogdet", ("sign", "logabsdet"))
lu_unpack_result = structseq("lu_unpack", ("P", "L", "U"))
triangular_solve_result = structseq("triangular_solve", ("solution", "cloned_coefficient"))
lu_with_info_result = structseq("_lu_with_info", ("LU", "pivots", "infos"))


def inverse(input: Tensor) -> Tensor:
    """``strided.linalg.inv``."""
    return _inv(input)


def det(input: Tensor) -> Tensor:
    """``strided.linalg.det``."""
    return _det(input)


def slogdet(input: Tensor):
    """``strided.linalg.slogdet``, as ``strided.return_types.slogdet(sign, logabsdet)``."""
    return slogdet_result(tuple(_slogdet(input)))


def logdet(input: Tensor) -> Tensor:
    """``log(det(input))``: nan where the determinant is negative, -inf where it is zero."""
    arg_tensor("logdet", "input", 1, input)
    square("logdet", input)
    floating("logdet", input, COMPLEX_DEVICES)
    _low_precision("logdet", input)
    sign, logabsdet = _slogdet(input)
    if input.dtype.is_complex:  # torch's: log(sign) + logabsdet, a complex logarithm of det
        return _ops.log(sign) + logabsdet
    return _ops.where(sign < 0, _ops.full_like(logabsdet, float("nan")), logabsdet)


def svd(input: Tensor, some: bool = True, compute_uv: bool = True):
    """``(U, S, V)`` with ``input = U diag(S) V^T`` (V, not ``linalg.svd``'s Vh). ``some=False`` gives full
    square U and V; ``compute_uv=False`` gives zero-filled U (m x m) and V (n x n), as torch."""
    arg_tensor("svd", "input", 1, input)
    if not compute_uv:
        m, n = input.shape[-2], input.shape[-1]
        batch = tuple(input.shape[:-2])
        S = _svdvals(input)
        U = _ops.zeros((*batch, m, m), dtype=input.dtype, device=input.device)
        V = _ops.zeros((*batch, n, n), dtype=input.dtype, device=input.device)
        return svd_result((U, S, V))
    U, S, Vh = _linalg_svd(input, full_matrices=not some)
    return svd_result((U, S, Vh.mT))


def _cholesky_args(op: str, b: Tensor, L: Tensor) -> None:
    if b.dim() < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {b.dim()} dimensions instead")
    if L.dim() < 2:
        raise RuntimeError(f"u should have at least 2 dimensions, but has {L.dim()} dimensions instead")
    if b.dtype != L.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type {type_name(b.dtype)} and "
                           f"A of type {type_name(L.dtype)} instead.")
    if L.shape[-1] != L.shape[-2] or L.shape[-1] != b.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for {op}: each A matrix is {L.shape[-2]} by {L.shape[-1]} "
                           f"but each b matrix is {b.shape[-2]} by {b.shape[-1]}")


def cholesky_solve(B: Tensor, L: Tensor, upper: bool = False) -> Tensor:
    """The X with ``A X = B`` for ``A = L L^H`` (``U^H U`` with ``upper``), given the Cholesky factor."""
    arg_tensor("cholesky_solve", "input", 1, B)
    arg_tensor("cholesky_solve", "input2", 2, L)
    _cholesky_args("cholesky_solve", B, L)
    if upper:
        L = L.mH
    Y = _solve_triangular(L, B, upper=False)
    return _solve_triangular(L.mH, Y, upper=True)


def cholesky_inverse(L: Tensor, upper: bool = False) -> Tensor:
    """``(L L^H)^-1`` (``(U^H U)^-1`` with ``upper``) from a Cholesky factor."""
    arg_tensor("cholesky_inverse", "input", 1, L)
    if L.dim() < 2:
        raise RuntimeError("cholesky_inverse: The input tensor A must have at least 2 dimensions.")
    if L.shape[-1] != L.shape[-2]:
        raise RuntimeError(f"cholesky_inverse: A must be batches of square matrices, but they are {L.shape[-2]} by "
                           f"{L.shape[-1]} matrices")
    eye = _eye(L.shape[-1], dtype=L.dtype, device=L.device).expand(L.shape)
    return cholesky_solve(eye, L, upper)


def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """``strided.linalg.pinv`` with ``rcond`` as its relative tolerance."""
    arg_tensor("pinverse", "input", 1, input)
    if isinstance(rcond, Tensor) and (rcond.dim() != 0 or rcond.requires_grad) or isinstance(rcond, str) \
            or rcond is None:  # torch's parser: a float, or a 0-dim tensor standing for one
        raise TypeError(f"pinverse(): argument 'rcond' (position 2) must be float, not {type(rcond).__name__}")
    if input.dim() >= 2 and input.dtype.is_complex and input.device.type not in COMPLEX_DEVICES:
        refuse_complex("pinverse", input)
    if input.dim() < 2 or not (input.dtype.is_floating_point or input.dtype.is_complex):
        dtype = {"float32": "Float", "float64": "Double"}.get(input.dtype.name, type_name(input.dtype))
        raise RuntimeError(f"linalg.pinv({dtype}{{{list(input.shape)}}}): expected a tensor with 2 or more dimensions "
                           "of float, double, cfloat or cdouble types")
    return _pinv(input, rtol=rcond)


def matrix_power(input: Tensor, n: int) -> Tensor:
    """``strided.linalg.matrix_power``."""
    return _matrix_power(input, n)


def matrix_exp(input: Tensor) -> Tensor:
    """``strided.linalg.matrix_exp``."""
    return _matrix_exp(input)


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True, unpack_pivots: bool = True):
    """``(P, L, U)`` from ``strided.linalg.lu_factor``'s packed result, with ``A = P L U``; a part not unpacked is
    an empty tensor, as torch."""
    arg_tensor("lu_unpack", "LU_data", 1, LU_data)
    arg_tensor("lu_unpack", "LU_pivots", 2, LU_pivots)
    if LU_pivots.dtype is not _dt.int32:
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.\n"
                           "Note: this function is intended to be used with the output produced by "
                           "torch.linalg.lu_factor")
    if LU_data.dim() < 2:
        raise RuntimeError("torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(LU_data.shape)} instead")
    m, n = LU_data.shape[-2], LU_data.shape[-1]
    k = min(m, n)
    empty = _ops.empty((0,), dtype=LU_data.dtype, device=LU_data.device)
    if unpack_data:
        L = _ops.tril(LU_data[..., :, :k], -1) + _eye(m, k, dtype=LU_data.dtype, device=LU_data.device)
        U = _ops.triu(LU_data[..., :k, :])
    else:
        L = U = empty
    if unpack_pivots:
        perm = perm_from_pivots(LU_pivots, m)
        P = _ops.one_hot(perm, m).to(LU_data.dtype).mT  # P[perm[i], i] = 1
    else:
        P = empty
    return lu_unpack_result((P, L, U))


def triangular_solve(b: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False):
    """Deprecated (as in torch): ``(X, A.clone())`` with ``op(A) X = b``, ``op`` the transpose when asked."""
    warn_once(
        "triangular_solve",
        "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will be removed in a "
        "future PyTorch release.\ntorch.linalg.solve_triangular has its arguments reversed and does not return a "
        "copy of one of the inputs.\nX = torch.triangular_solve(B, A).solution\nshould be replaced with\n"
        "X = torch.linalg.solve_triangular(A, B).")
    arg_tensor("triangular_solve", "input", 1, b)
    arg_tensor("triangular_solve", "A", 2, A)
    _cholesky_args("triangular_solve", b, A)
    coefficient = A.mT if transpose else A
    X = _solve_triangular(coefficient, b, upper=upper != transpose, unitriangular=unitriangular)
    return triangular_solve_result((X, A.clone()))


def _deprecated(name: str, text: str) -> None:
    """torch's deprecation warning of a pre-torch.linalg function, once per function (Note [Warn once])."""
    warn_once(name, text, stacklevel=3)


def lu(A: Tensor, pivot: bool = True, get_infos: bool = False):
    """Deprecated (as in torch): ``(LU, pivots)``, or ``(LU, pivots, infos)`` with ``get_infos``, of
    ``strided.linalg.lu_factor_ex``."""
    from .lu import lu_factor_ex

    _deprecated("lu", "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and "
                "will be removed in a future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\nshould be "
                "replaced with\nLU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\nLU, pivots, info = "
                "torch.lu(A, compute_pivots, get_infos=True)\nshould be replaced with\nLU, pivots, info = "
                "torch.linalg.lu_factor_ex(A, compute_pivots)")
    LU, pivots, infos = lu_factor_ex(A, pivot=pivot)
    return lu_with_info_result((LU, pivots, infos)) if get_infos else (LU, pivots)


def lu_solve(b: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:
    """Deprecated (as in torch): ``strided.linalg.lu_solve(LU_data, LU_pivots, b)``."""
    from .lu import lu_solve as _lu_solve

    _deprecated("lu_solve", "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a "
                "future PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.\nX = "
                "torch.lu_solve(B, LU, pivots)\nshould be replaced with\nX = torch.linalg.lu_solve(LU, pivots, B)")
    return _lu_solve(LU_data, LU_pivots, b)


def nuclear_norm(input: Tensor, dim=(-2, -1), keepdim: bool = False) -> Tensor:  # noqa: A002
    """Deprecated (as in torch): ``strided.linalg.matrix_norm(input, 'nuc', dim, keepdim)``."""
    from .norms import matrix_norm

    if isinstance(dim, bool):  # nuclear_norm(input, keepdim)
        dim, keepdim = (-2, -1), dim
    _deprecated("nuclear_norm", "at::nuclear_norm is deprecated and it is just left for JIT compatibility. It will be "
                "removed in a future PyTorch release. Please use `linalg.matrix_norm(A, 'nuc', dim, keepdim)` instead")
    return matrix_norm(input, "nuc", dim, keepdim)


def frobenius_norm(input: Tensor, dim, keepdim: bool = False) -> Tensor:  # noqa: A002
    """Deprecated (as in torch): ``strided.linalg.vector_norm(input, 2, dim, keepdim)`` over at most two dims."""
    from .norms import vector_norm

    dims = [dim] if isinstance(dim, int) else list(dim)
    if len(dims) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions instead.")
    _deprecated("frobenius_norm", "at::frobenius_norm is deprecated and it is just left for JIT compatibility. It "
                "will be removed in a future PyTorch release. Please use `linalg.vector_norm(A, 2., dim, keepdim)` "
                "instead")
    return vector_norm(input, 2, dims, keepdim)


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:  # noqa: A002 - torch's argument name
    """The ``pow``-norm over every dim but ``dim``, kept as size-1 dims (weight normalization's norm);
    ``dim=-1`` is the norm of everything (a 0-dim tensor)."""
    if dim == -1:
        return _ops.norm(v, pow)
    n = v.dim()
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    dim %= n
    dims = [d for d in builtins_range(n) if d != dim]
    return _ops.norm(v, pow, dims, True)



def orgqr(input: Tensor, tau: Tensor) -> Tensor:
    """``strided.linalg.householder_product`` (torch.orgqr, LAPACK's name)."""
    return _householder_product(input, tau)


def _ormqr_checks(input: Tensor, tau: Tensor, other: Tensor, left: bool) -> None:
    """torch's checks of ``ormqr``, in its order and words."""
    arg_tensor("ormqr", "input", 1, input)
    arg_tensor("ormqr", "tau", 2, tau)
    arg_tensor("ormqr", "other", 3, other)
    if input.dim() < 2:
        raise RuntimeError("torch.ormqr: input must have at least 2 dimensions.")
    if other.dim() < 2:
        raise RuntimeError("torch.ormqr: other must have at least 2 dimensions.")
    cond = -2 if left else -1
    if other.shape[cond] != input.shape[-2]:
        raise RuntimeError(f"torch.ormqr: other.shape[{cond}] must be equal to input.shape[-2]")
    if tau.dim() == 0 or min(other.shape[cond], input.shape[-1]) != tau.shape[-1]:
        raise RuntimeError(f"torch.ormqr: tau.shape[-1] must be equal to min(other.shape[{cond}], input.shape[-1])")
    if input.dim() - tau.dim() != 1:
        raise RuntimeError(f"torch.ormqr: Expected tau to have one dimension less than input, but got tau.ndim equal "
                           f"to {tau.dim()} and input.ndim is equal to {input.dim()}")
    if input.dim() != other.dim():
        raise RuntimeError(f"torch.ormqr: Expected other to have the same number of dimensions as input, but got "
                           f"other.ndim equal to {other.dim()} and input.ndim is equal to {input.dim()}")
    batch = list(input.shape[:-2])
    for name, lead in (("tau", list(tau.shape[:-1])), ("other", list(other.shape[:-2]))):
        if input.dim() > 2 and lead != batch:
            raise RuntimeError(f"torch.ormqr: Expected batch dimensions of {name} to be equal to input.shape[:-2], but "
                               f"got {lead}")
    for name, t in (("tau", tau), ("other", other)):
        if t.dtype is not input.dtype:  # torch's words, its missing space included
            raise RuntimeError(f"torch.ormqr: Expected input and {name} to have the same dtype, but input has dtype"
                               f"{type_name(input.dtype)} and {name} has dtype {type_name(t.dtype)}")
    complex_ok = input.dtype in (_dt.complex64, _dt.complex128) and input.device.type in COMPLEX_DEVICES  # QR's
    if input.dtype not in (_dt.float32, _dt.float64) and not complex_ok:
        raise NotImplementedError(f'"ormqr_{input.device.type}" not implemented for \'{type_name(input.dtype)}\'')


# Note [ormqr by the compact WY form]
# Q = H_1 ... H_t with H_i = I - tau_i v_i v_i^H is I - V S V^H: V (m x t) holds the reflectors' vectors (geqrf's
# strictly lower part under a unit diagonal), S is upper triangular, the inverse of triu(V^H V, 1) + diag(1 / tau)
# (the UT transform of Joffrain, Low, Quintana-Orti and van de Geijn, 2006; with complex tau as it stands, checked
# against LAPACK's Q). ``transpose`` is op(Q) = Q^H for complex input, LAPACK's 'C'. So op(Q) C is three GEMMs and
# one t x t triangular inverse: O(m t n) work and no m x m matrix, where forming Q first (householder_product)
# costs an m x m matrix and O(m^2 n). A reflector with tau = 0 is the identity: its vector is zeroed and its 1 / tau
# taken as 1, which leaves it out of V S V^H. Every step is a differentiable op, so the gradients follow. Complex
# input runs on the CPU (with QR, Note [QR gradient]); S then comes from the composite back substitution.
# When tau needs a gradient the reflectors are applied one by one instead (t rank-1 updates, the same O(m t n)):
# d/dtau of H = I - tau v v^H is -v v^H also at tau = 0, which geqrf gives the last reflector of a square matrix,
# and the 1 / tau of the WY form has no gradient there (it read 0, torch's is not).
def ormqr(input: Tensor, tau: Tensor, other: Tensor, left: bool = True, transpose: bool = False) -> Tensor:
    """``op(Q) @ other`` (``left``) or ``other @ op(Q)``, where ``Q`` (m x m, m = input.shape[-2]) is the product
    of the Householder reflectors ``(input, tau)`` -- geqrf's result -- and ``op`` transposes when ``transpose``
    (LAPACK's ormqr), applied in the compact WY form (Note [ormqr by the compact WY form])."""
    _ormqr_checks(input, tau, other, left)
    m, t = input.shape[-2], tau.shape[-1]
    if t == 0:
        return other.clone()
    unit = _eye(m, t, dtype=input.dtype, device=input.device)
    if tau.requires_grad and grad_mode.enabled:
        return _ormqr_by_reflectors(_ops.add(_ops.tril(input[..., :, :t], -1), unit), tau, other, left, transpose)
    V = _ops.add(_ops.tril(input[..., :, :t], -1), unit)
    identity = _ops.eq(tau, 0)  # (..., t)
    V = _ops.where(_ops.unsqueeze(identity, -2), 0.0, V)
    inv_tau = _ops.reciprocal(_ops.where(identity, 1.0, tau))
    T = _ops.add(_ops.triu(V.mH @ V, 1), _ops.diag_embed(inv_tau))
    eye = _eye(t, dtype=input.dtype, device=input.device).expand(T.shape)
    S = _solve_triangular(T, eye, upper=True) if not T.dtype.is_complex else _solve_upper(T, eye)
    if transpose:
        S = S.mH
    if left:  # op(Q) C = C - V op(S) V^H C
        return _ops.sub(other, V @ (S @ (V.mH @ other)))
    return _ops.sub(other, ((other @ V) @ S) @ V.mH)  # C op(Q) = C - C V op(S) V^H


def _ormqr_by_reflectors(V: Tensor, tau: Tensor, C: Tensor, left: bool, transpose: bool) -> Tensor:
    """``ormqr`` one reflector at a time (Note [ormqr by the compact WY form]): op(Q) = H_1 ... H_t or its adjoint
    H_t^H ... H_1^H, with H_i^H = I - conj(tau_i) v_i v_i^H."""
    if transpose:
        tau = _ops.conj(tau)
    order = builtins_range(tau.shape[-1])
    if left != transpose:  # H_t acts first on C from the left, H_1 first from the right
        order = reversed(order)
    for i in order:
        v = V[..., :, i:i + 1]
        scale = tau[..., i:i + 1].unsqueeze(-1)
        C = _ops.sub(C, scale * (v @ (v.mH @ C))) if left else _ops.sub(C, scale * ((C @ v) @ v.mH))
    return C


# Note [Out arguments]
_accepting_out(globals(), ("cholesky_inverse", "cholesky_solve", "lu", "lu_solve", "lu_unpack", "svd", "orgqr",
                           "ormqr", "triangular_solve"))


from ..amp.composed_functions import wrap_native as _wrap_native  # noqa: E402
from ..amp.composed_functions import wrap_policies as _wrap_policies  # noqa: E402

# as strided.linalg's (Note [Autocast around composed functions]), with torch's CPU float32 list of these names
_wrap_native(globals(), (
    "inverse", "det", "logdet", "slogdet", "svd", "cholesky_solve", "cholesky_inverse", "pinverse", "matrix_exp",
    "triangular_solve", "lu", "lu_solve", "qr", "cholesky"), cpu_fp32=(
    "inverse", "svd", "cholesky_solve", "cholesky_inverse", "pinverse", "triangular_solve", "lu_solve", "qr",
    "cholesky"))
# torch's CPU float32 list (orgqr, ormqr: native kernels); torch's CUDA float32 list (frobenius_norm.dim,
# nuclear_norm), which compose on the CPU
_wrap_policies(globals(), {"orgqr": {"cpu": "fp32", "cuda": "native"}, "ormqr": {"cpu": "fp32", "cuda": "native"}})
_wrap_policies(globals(), {"frobenius_norm": {"cuda": "fp32"}, "nuclear_norm": {"cuda": "fp32"}})
