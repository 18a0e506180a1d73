"""CompositeImplicitAutograd linear-algebra helpers: dot, vdot, inner, mv, ger, addmv, addr, addbmm,
chain_matmul, dist, renorm, cov, corrcoef, trapezoid / trapz / cumulative_trapezoid.

Each follows torch's ATen composition (LinearAlgebra.cpp, Correlation.cpp, Integration.cpp) and its
argument checks, so values, dtypes and error messages match; the products go through mm / bmm /
matmul (cuBLASLt on CUDA).

Note [beta and alpha]
As torch, ``beta == 0`` ignores ``self`` entirely (NaN and inf in it do not propagate) and a factor
of 1 is not multiplied in, so the composition rounds as torch's GEMM epilogue does for the
defaults.
"""

from __future__ import annotations

import warnings

from ... import dtypes as dt
from ...backends.meta.common import wrap_dim
from ...backends.meta.linalg import gemm_scalar
from ...backends.meta.pointwise import scalar_type_name
from ...dispatch.library import kernel
from ...warn_once import warn_once
from .. import bound as ops

__all__ = []


def _check_vectors(self, other, name: str) -> None:
    if self.dim() != 1 or other.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {self.dim()}D and {other.dim()}D tensors")
    if self.dtype is not other.dtype:
        raise RuntimeError(f"{name} : expected both vectors to have same dtype, but found "
                           f"{scalar_type_name(self.dtype)} and {scalar_type_name(other.dtype)}")
    if self._sizes[0] != other._sizes[0]:
        n, m = self._sizes[0], other._sizes[0]
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to have the same number "
                           f"of elements, but got {n} and {m} elements respectively")
    if self.dtype is dt.bool:  # torch's dot kernels have no bool loop
        raise NotImplementedError("\"dot\" not implemented for 'Bool'")


@kernel("CompositeImplicitAutograd")
def dot(self, tensor):
    """The inner product of two 1-D tensors of one dtype (a 0-dim result of that dtype)."""
    _check_vectors(self, tensor, "dot")
    return ops.sum(ops.mul(self, tensor), dtype=self.dtype)


@kernel("CompositeImplicitAutograd")
def vdot(self, other):
    """``dot`` conjugating the first argument (a copy of a complex one: Note [No conjugate bit]; real: dot)."""
    _check_vectors(self, other, "dot")
    return ops.sum(ops.mul(ops.conj(self), other), dtype=self.dtype)


@kernel("CompositeImplicitAutograd")
def inner(self, other):
    """Sum over the last dims of both (a product with a 0-dim operand)."""
    if self.dim() == 0 or other.dim() == 0:
        return ops.mul(self, other)
    if self.dtype is not other.dtype:  # torch's check (a 0-dim operand above promotes instead)
        raise RuntimeError("both inputs should have same dtype")
    if self._sizes[-1] != other._sizes[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(self._sizes)} and {list(other._sizes)}")
    if self._sizes[-1] == 0:  # nothing to contract
        shape = self._sizes[:-1] + other._sizes[:-1]
        return ops.zeros(shape, dtype=dt.promote_types(self.dtype, other.dtype), device=self.device)
    return ops.tensordot(self, other, [-1], [-1])


def _same_dtype(name: str, *tensors) -> None:
    if len({t.dtype for t in tensors}) > 1:
        words = [scalar_type_name(t.dtype) for t in tensors]
        raise RuntimeError(f"{name} input tensors must have the same dtype, but got "
                           f"{', '.join(words[:-1])}, and {words[-1]}")


def _mv_checks(self, mat, vec) -> None:
    if mat.dim() != 2 or vec.dim() != 1 or self.dim() > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {self.dim()}, {mat.dim()}, {vec.dim()}")
    n = self._sizes[0] if self.dim() else 1
    if mat._sizes[1] != vec._sizes[0] or not (n == mat._sizes[0] or n == 1):
        raise RuntimeError(f"size mismatch, got input ({n}), mat ({mat._sizes[0]}x{mat._sizes[1]}), "
                           f"vec ({vec._sizes[0]})")


def _matvec(mat, vec):
    return ops.squeeze(ops.mm(mat, ops.unsqueeze(vec, 1)), [1])


@kernel("CompositeImplicitAutograd")
def mv(self, vec):
    """Matrix (n, m) times vector (m,)."""
    if self.dim() != 2 or vec.dim() != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {self.dim()}, {vec.dim()}")
    _mv_checks(ops.empty((self._sizes[0],), dtype=self.dtype, device=self.device), self, vec)
    if self.dtype is not vec.dtype:  # torch's mv makes its result with vec's options, then calls addmv_
        words = (scalar_type_name(vec.dtype), scalar_type_name(self.dtype), scalar_type_name(vec.dtype))
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {words[0]}, {words[1]}, "
                           f"and {words[2]}")
    return _matvec(self, vec)


def _axpby(self, product, beta, alpha):
    """``beta * self + alpha * product`` (Note [beta and alpha]), ``beta`` and ``alpha`` already of the result's
    type (``gemm_scalar``: a float factor of an integer product truncates, as torch's ``Scalar.to<T>``)."""
    out = product if alpha == 1 else ops.mul(product, alpha)
    if beta == 0:
        return ops.expand(out, out._sizes)  # shape already checked; self ignored
    return ops.add(out, self if beta == 1 else ops.mul(self, beta))


@kernel("CompositeImplicitAutograd")
def addmv(self, mat, vec, *, beta=1, alpha=1):
    """``beta * self + alpha * (mat @ vec)``."""
    _mv_checks(self, mat, vec)
    _same_dtype("addmv", self, mat, vec)
    if self.dtype is dt.bool:
        raise NotImplementedError("\"addmv_impl_cpu\" not implemented for 'Bool'")
    beta, alpha = gemm_scalar(beta, self.dtype), gemm_scalar(alpha, self.dtype)
    return _axpby(self, _matvec(mat, vec), beta, alpha)


def _check_1d(name: str, arg: str, t) -> None:
    if t.dim() != 1:
        raise RuntimeError(f"{name}: Expected 1-D argument {arg}, but got {t.dim()}-D")


@kernel("CompositeImplicitAutograd")
def ger(self, vec2):
    """The outer product of two 1-D tensors (torch's older name of ``outer``)."""
    _check_1d("outer", "self", self)
    _check_1d("outer", "vec2", vec2)
    return ops.outer(self, vec2)


@kernel("CompositeImplicitAutograd")
def addr(self, vec1, vec2, *, beta=1, alpha=1):
    """``beta * self + alpha * outer(vec1, vec2)``."""
    _check_1d("addr", "vec1", vec1)
    _check_1d("addr", "vec2", vec2)
    product = ops.outer(vec1, vec2)
    ops.expand(self, product._sizes)  # torch's broadcast check and message
    result_type = dt.promote_types(self.dtype, product.dtype)
    beta, alpha = _addr_scalar(result_type, beta, "beta"), _addr_scalar(result_type, alpha, "alpha")
    if result_type is dt.bool:  # torch's bool kernel: (beta && self) || (alpha && vec1 && vec2)
        out = product if alpha else ops.zeros_like(product)
        return ops.logical_or(out, self) if beta else ops.expand(out, out._sizes)
    return _axpby(self, product, beta, alpha)


def _addr_scalar(result_type, value, name: str):
    """torch's ``check_addr_scalar``, then the value as the result's type."""
    if isinstance(value, bool) and result_type is not dt.bool:
        raise RuntimeError(f"Boolean {name} only supported for Boolean results.")
    if not (result_type.is_floating_point or result_type.is_complex or isinstance(value, int)):
        raise RuntimeError(f"For integral input tensors, argument {name} must not be a floating point number.")
    return gemm_scalar(value, result_type)


@kernel("CompositeImplicitAutograd")
def addbmm(self, batch1, batch2, *, beta=1, alpha=1):
    """``beta * self + alpha * sum_b(batch1[b] @ batch2[b])``."""
    if batch1.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if batch2.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if batch1._sizes[0] != batch2._sizes[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {batch1._sizes[0]} and "
                           f"{batch2._sizes[0]}")
    if batch1._sizes[2] != batch2._sizes[1]:
        b1, b2 = batch1._sizes, batch2._sizes
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({b1[1]}x{b1[2]} and {b2[1]}x{b2[2]})")
    b, n, k = batch1._sizes
    m = batch2._sizes[2]
    ops.expand(self, (n, m))
    for name, first in (("self", self), ("mat1", batch1)):  # torch's addbmm runs addmm's checks
        if first.dtype is not batch2.dtype:
            raise RuntimeError(f"{name} and mat2 must have the same dtype, but got {scalar_type_name(first.dtype)} "
                               f"and {scalar_type_name(batch2.dtype)}")
    beta, alpha = gemm_scalar(beta, self.dtype), gemm_scalar(alpha, self.dtype)
    if b == 0:
        product = ops.zeros((n, m), dtype=batch1.dtype, device=batch1.device)
    else:  # one GEMM: (n, b*k) @ (b*k, m); sizes written out, as -1 is ambiguous for n == 0 or m == 0
        lhs = ops.reshape(ops.permute(batch1, [1, 0, 2]), (n, b * k))
        product = ops.mm(lhs, ops.reshape(batch2, (b * k, m)))
    return _axpby(self, product, beta, alpha)


@kernel("CompositeImplicitAutograd")
def chain_matmul(matrices):
    """The product of 2-D tensors, left to right (deprecated in torch for ``linalg.multi_dot``)."""
    warn_once("chain_matmul", "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. "
              "Use torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than multiple "
              "parameters.", stacklevel=3)
    if len(matrices) == 0:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for m in matrices:
        if m.dim() != 2:
            raise RuntimeError(f"Tensor dimension is {m.dim()}, expected 2 instead.")
    if len(matrices) == 1:
        return ops.clone(matrices[0])
    out = matrices[0]
    for m in matrices[1:]:
        out = ops.mm(out, m)
    return out


@kernel("CompositeImplicitAutograd")
def dist(self, other, p=2):
    """``norm(self - other, p)``: the check is of the difference's (promoted) dtype, as torch's."""
    diff = ops.sub(self, other)  # first, as torch (bool operands fail here)
    if not (diff.dtype.is_floating_point or diff.dtype.is_complex):
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. Got "
                           f"{scalar_type_name(diff.dtype)} instead.")
    return ops.norm(diff, p)


@kernel("CompositeImplicitAutograd")
def renorm(self, p, dim, maxnorm):
    """Each slice along ``dim`` with a p-norm above ``maxnorm`` scaled to norm ``maxnorm``."""
    if isinstance(p, complex) or isinstance(maxnorm, complex):
        raise RuntimeError("renorm: p and maxnorm must be real")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if self.dim() <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {self.dim()} dimensions")
    d = wrap_dim(dim, self.dim())
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{scalar_type_name(self.dtype)}")
    acc = dt.float32 if self.dtype in (dt.float16, dt.bfloat16) else self.dtype
    dims = [i for i in range(self.dim()) if i != d]
    norm = ops.norm(self.to(acc), p, dims, True)  # real, also for complex input
    factor = ops.where(ops.gt(norm, maxnorm), ops.div(ops.full((), maxnorm, dtype=norm.dtype, device=self.device),
                                                      ops.add(norm, 1e-7)), 1.0)
    return ops.mul(self, factor if self.dtype.is_complex else factor.to(self.dtype))


def _check_weights(name: str, w, n: int, integral: bool):
    if w.dim() > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with {w.dim()} "
                           "dimensions")
    if integral and (w.dtype.is_floating_point or w.dtype is dt.bool):
        raise RuntimeError(f"cov(): expected {name} to have integral dtype but got {name} with "
                           f"{scalar_type_name(w.dtype)} dtype")
    if not integral and not w.dtype.is_floating_point:
        raise RuntimeError(f"cov(): expected {name} to have floating point dtype but got {name} with "
                           f"{scalar_type_name(w.dtype)} dtype")
    if w.numel() != n:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the input "
                           f"but got {w.numel()} != {n}")
    if n and w.device.type != "meta" and float(ops.amin(w, [])) < 0:
        raise RuntimeError(f"cov(): {name} cannot be negative")


@kernel("CompositeImplicitAutograd")
def cov(self, *, correction=1, fweights=None, aweights=None):
    """The covariance of the rows' variables over the columns' observations (torch's Correlation.cpp)."""
    if self.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{self.dim()} dimensions")
    if self.dtype is dt.bool:
        raise NotImplementedError("cov(): bool dtype is not supported for input")  # torch's TORCH_CHECK_NOT_IMPLEMENTED
    x = ops.reshape(self, (1, -1)) if self.dim() < 2 else self
    n = x._sizes[1]
    w = None
    if fweights is not None:
        _check_weights("fweights", fweights, n, True)
        w = fweights
    if aweights is not None:
        _check_weights("aweights", aweights, n, False)
        w = aweights if w is None else ops.mul(w, aweights)
    if w is None:
        w_sum = ops.full((), n, dtype=dt.int64, device=self.device)
    else:
        w_sum = ops.sum(w)
        if w.device.type != "meta" and float(w_sum) == 0:
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = ops.div(ops.sum(x if w is None else ops.mul(x, w), [1]), w_sum)
    if w is not None and aweights is not None and correction != 0:
        norm_factor = ops.sub(w_sum, ops.div(ops.mul(ops.sum(ops.mul(w, aweights)), correction), w_sum))
    else:
        norm_factor = ops.sub(w_sum, correction)
    if norm_factor.device.type != "meta" and float(norm_factor) <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                      "observations.", UserWarning, stacklevel=3)
        norm_factor = ops.zeros_like(norm_factor)
    centered = ops.sub(x, ops.unsqueeze(avg, 1))
    other = ops.t(centered if w is None else ops.mul(centered, w))
    c = ops.mm(centered, ops.conj(other) if other.dtype.is_complex else other)  # torch's .t().conj()
    return ops.squeeze(ops.true_divide(c, norm_factor))


@kernel("CompositeImplicitAutograd")
def corrcoef(self):
    """Pearson correlation coefficients of the rows (clipped to [-1, 1]; complex: each part clipped)."""
    if self.dim() > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got an input with "
                           f"{self.dim()} dimensions")
    c = cov(self)
    if c.dim() == 0:
        return ops.div(c, c)
    d = ops.diagonal(c)
    stddev = ops.sqrt(ops.real(d) if d.dtype.is_complex else d)
    c = ops.div(ops.div(c, ops.reshape(stddev, (-1, 1))), ops.reshape(stddev, (1, -1)))
    if c.dtype.is_complex:  # torch clips both parts (|c| may still exceed 1)
        return ops.complex(ops.clamp(ops.real(c), -1, 1), ops.clamp(ops.imag(c), -1, 1))
    return ops.clamp(c, -1, 1)


def _zeros_except(y, d):
    sizes = list(y._sizes)
    del sizes[d]
    return ops.zeros(sizes, dtype=y.dtype, device=y.device)


def _x_spacing(y, x, d, name):
    """``x``'s differences along ``d``, viewed against ``y`` (torch's x_viewed)."""
    if x.dtype is dt.bool or y.dtype is dt.bool:
        raise NotImplementedError(f"{name}: received a bool input for `x` or `y`, but bool is not supported")
    if x.dim() == 1:
        if x._sizes[0] != y._sizes[d]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        shape = [1] * y.dim()
        shape[d] = x._sizes[0]
        x = ops.reshape(x, shape)
    elif x.dim() < y.dim():
        x = ops.reshape(x, (1,) * (y.dim() - x.dim()) + tuple(x._sizes))
    return ops.sub(ops.slice(x, d, 1), ops.slice(x, d, 0, -1))


def _check_dx(y, dx, name):
    if y.dtype is dt.bool:
        raise NotImplementedError(f"{name}: received a bool input for `y`, but bool is not supported")
    if isinstance(dx, (bool, complex)):
        raise RuntimeError(f"{name}: Currently, we only support dx as a real number.")


@kernel("CompositeImplicitAutograd")
def trapezoid_x(y, x, *, dim=-1):
    """The trapezoidal rule along ``dim`` at sample points ``x``."""
    d = wrap_dim(dim, y.dim())
    if y._sizes[d] == 0:
        return _zeros_except(y, d)
    dx = _x_spacing(y, x, d, "trapezoid")
    return ops.div(ops.sum(ops.mul(dx, ops.add(ops.slice(y, d, 1), ops.slice(y, d, 0, -1))), [d]), 2.0)


@kernel("CompositeImplicitAutograd")
def trapezoid_dx(y, *, dx=1, dim=-1):
    """The trapezoidal rule along ``dim`` with constant spacing ``dx``."""
    d = wrap_dim(dim, y.dim())
    if y._sizes[d] == 0:
        return _zeros_except(y, d)
    _check_dx(y, dx, "trapezoid")
    ends = ops.mul(ops.add(ops.select(y, d, 0), ops.select(y, d, -1)), 0.5)
    return ops.mul(ops.sub(ops.sum(y, [d]), ends), float(dx))


@kernel("CompositeImplicitAutograd")
def trapz_x(y, x, *, dim=-1):
    """``trapezoid`` (the older name)."""
    return trapezoid_x(y, x, dim=dim)


@kernel("CompositeImplicitAutograd")
def trapz_dx(y, *, dx=1, dim=-1):
    """``trapezoid`` (the older name)."""
    return trapezoid_dx(y, dx=dx, dim=dim)


@kernel("CompositeImplicitAutograd")
def cumulative_trapezoid_x(y, x, *, dim=-1):
    """Running trapezoidal integrals along ``dim`` at sample points ``x`` (one fewer than ``y``)."""
    d = wrap_dim(dim, y.dim())
    dx = _x_spacing(y, x, d, "cumulative_trapezoid")
    # torch's order (Integration.cpp): the sums and products in the operands' dtype, halved after the cumsum
    return ops.div(ops.cumsum(ops.mul(dx, ops.add(ops.slice(y, d, 0, -1), ops.slice(y, d, 1))), d), 2.0)


@kernel("CompositeImplicitAutograd")
def cumulative_trapezoid_dx(y, *, dx=1, dim=-1):
    """Running trapezoidal integrals along ``dim`` with constant spacing ``dx``."""
    d = wrap_dim(dim, y.dim())
    _check_dx(y, dx, "cumulative_trapezoid")
    return ops.cumsum(ops.mul(ops.add(ops.slice(y, d, 0, -1), ops.slice(y, d, 1)), float(dx) / 2.0), d)
