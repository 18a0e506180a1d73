"""``strided.nn.utils.parametrizations``: weight normalization, spectral normalization and orthogonal
matrices as parametrizations (torch.nn.utils.parametrizations), built on :mod:`.parametrize`."""

from __future__ import annotations

from enum import Enum, auto

from ... import factories
from ...autograd.grad_mode import no_grad
from ...ops import bound as ops
from ...tensor import Tensor
from .. import functional as F
from ..module import Module
from . import parametrize

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _linalg():
    # strided.linalg costs import time; strided loads it lazily (Note [Lazy submodules]), so do we
    from ... import linalg

    return linalg


def _norm_except_dim(v: Tensor, dim: int) -> Tensor:
    """torch.norm_except_dim(v, 2, dim): the 2-norm over every dim but ``dim`` (kept as size 1);
    ``dim=-1`` is the norm of the whole tensor (a 0-dim result), as torch."""
    if dim == -1:
        return _linalg().vector_norm(v)
    if dim == 0:
        return _linalg().vector_norm(v.reshape(v.size(0), -1), dim=1).reshape((v.size(0),) + (1,) * (v.dim() - 1))
    if dim == v.dim() - 1:
        return _linalg().vector_norm(v.reshape(-1, v.size(-1)), dim=0).reshape((1,) * (v.dim() - 1) + (v.size(-1),))
    return _norm_except_dim(v.transpose(0, dim), 0).transpose(0, dim)


def _weight_norm(v: Tensor, g: Tensor, dim: int) -> Tensor:
    """torch._weight_norm: ``v * (g / ||v||)`` with the norm taken over every dim but ``dim``."""
    return v * (g / _norm_except_dim(v, dim))


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Reparametrize ``module.<name>`` as ``g * v / ||v||`` (``original0`` = g, ``original1`` = v), the
    norm taken over every dim but ``dim`` (the whole tensor when ``dim`` is None).

    A state dict saved with the deprecated hook form (``<name>_g`` / ``<name>_v``) still loads.
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                 error_msgs) -> None:
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight.detach())
            h, w = weight_mat.size()
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)  # start u, v near the singular vectors

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        # Note [Power iteration in place]: torch writes with ``out=self._u``; the buffers keep their
        # identity (a state dict taken with keep_vars, or a module.to() view, still sees them).
        with no_grad():
            weight_mat = weight_mat.detach()
            for _ in range(n_power_iterations):
                self._u.copy_(F.normalize(weight_mat.mv(self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(weight_mat.H.mv(self._u), dim=0, eps=self.eps))

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()  # the backward must not see the next in-place update
        sigma = u.vdot(weight_mat.mv(v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> Module:
    """Reparametrize ``module.<name>`` as ``W / sigma(W)``, its largest singular value estimated by power
    iteration; ``u`` / ``v`` are buffers of the parametrization, updated on each read in training mode.
    ``dim`` defaults to 1 for ConvTranspose layers, else 0."""
    from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d

    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


def _is_orthogonal(q: Tensor) -> bool:
    from ...type_info import finfo

    n, k = q.size(-2), q.size(-1)
    eye = factories.eye(k, dtype=q.dtype, device=q.device)
    return bool((q.mH @ q).sub(eye).abs().le(10.0 * n * finfo(q.dtype).eps).all())


def _make_orthogonal(a: Tensor) -> Tensor:
    """The Q of A's QR decomposition with R's diagonal made positive (torch's geqrf + householder_product)."""
    q, r = _linalg().qr(a)
    return q * r.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    def __init__(self, weight: Tensor, orthogonal_map: _OrthMaps, *, use_trivialization: bool = True) -> None:
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:  # noqa: N803 - torch's names
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X, n, k = X.mT, k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:
                X = ops.cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mH
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = _linalg().matrix_exp(A)
            else:
                eye = factories.eye(n, dtype=A.dtype, device=A.device)
                Q = _linalg().solve(eye.add(A, alpha=-0.5), eye.add(A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = _linalg().householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        return Q.mT if transposed else Q

    def right_inverse(self, Q: Tensor) -> Tensor:  # noqa: N803
        with no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q: Tensor) -> Tensor:  # noqa: N803
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        Q_init = Q  # noqa: N806
        n, k = Q.size(-2), Q.size(-1)
        if n < k:
            Q, n, k = Q.mT, k, n  # noqa: N806
        if not hasattr(self, "base"):
            # Note [No geqrf]: torch stores geqrf's reflectors here for the householder map; strided has
            # no geqrf, so ``orthogonal`` refuses that combination up front. These two maps cannot be assigned.
            raise NotImplementedError("It is not possible to assign to the matrix exponential or the Cayley "
                                      "parametrizations when use_trivialization=False.")
        if n == k:
            Q = _make_orthogonal(Q) if not _is_orthogonal(Q) else Q.clone()  # noqa: N806
        else:
            N = factories.randn(*Q.size()[:-2] + (n, n - k), dtype=Q.dtype, device=Q.device)  # noqa: N806
            Q = _make_orthogonal(ops.cat([Q, N], dim=-1))  # noqa: N806
        self.base = Q
        neg_id = factories.zeros_like(Q_init)
        neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_id


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """Constrain ``module.<name>`` (a matrix or batch of matrices) to be orthogonal (unitary).

    ``orthogonal_map`` is ``"matrix_exp"`` (default for square or complex), ``"cayley"`` or
    ``"householder"`` (default otherwise). ``use_trivialization=False`` with ``"householder"`` is not
    supported (it needs geqrf, which strided lacks).
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        square = weight.size(-2) == weight.size(-1)
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    if orth_enum == _OrthMaps.householder and not use_trivialization:
        raise NotImplementedError("orthogonal: the householder map with use_trivialization=False needs geqrf, "
                                  "which strided does not implement")
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
