"""CompositeImplicitAutograd ops that combine several tensors (or a tensor's elements): broadcast_tensors,
meshgrid, cartesian_prod, combinations, block_diag, kron, tensordot, cross / linalg_cross, cdist.

Each is built from views (expand, reshape, permute), ``cat`` / ``stack``, pointwise ops, ``mm`` and
``norm``, so every backend and autograd follow from those parts. Errors are torch's, raised before
any work.

Note [cdist paths]
``cdist`` takes torch's two routes. The direct one is ``norm(x1[..., :, None, :] - x2[..., None, :, :],
p, -1)``: any p, and norm's derivative is zero where a distance is zero (as torch's
``_cdist_backward``), at the cost of a (P, R, M) temporary. For p = 2 with more than 25 rows on
either side (torch's ``use_mm_for_euclid_dist_if_necessary``), or when asked, it is torch's
``_euclidean_dist``: ``|x1|^2 + |x2|^2 - 2 x1 x2^T`` as one matmul of padded operands, clamped
at 1e-30 before the square root (so the gradient stays finite at zero distance).
"""

from __future__ import annotations

import itertools
import math
import warnings

from ... import dtypes as dt
from ...backends.meta.common import broadcast_shapes, wrap_dim
from ...backends.meta.pointwise import scalar_type_name
from ...backends.meta.reductions import type_name
from ...dispatch.library import kernel
from .. import bound as ops
from .views import int_list

__all__ = ["CDIST_MODES"]

CDIST_MODES = {"use_mm_for_euclid_dist_if_necessary": 0, "use_mm_for_euclid_dist": 1,
               "donot_use_mm_for_euclid_dist": 2}


@kernel("CompositeImplicitAutograd")
def broadcast_tensors(tensors):
    """Every tensor expanded (a view) to the tensors' common broadcast shape."""
    tensors = list(tensors)
    shape = ()
    for t in tensors:
        shape = broadcast_shapes(shape, t._sizes)
    return [t if t._sizes == shape else ops.expand(t, shape) for t in tensors]


def _meshgrid(tensors, indexing: str):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    if any(t.dtype is not tensors[0].dtype for t in tensors):
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    if any(t.device != tensors[0].device for t in tensors):
        raise RuntimeError("meshgrid expects all tensors to have the same device")
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:  # 'xy': the first two inputs trade places as grid dims; the outputs keep the input order
        tensors[0], tensors[1] = tensors[1], tensors[0]
    shape = tuple(t.numel() for t in tensors)
    n = len(tensors)
    grids = [ops.expand(ops.reshape(t, tuple(-1 if j == i else 1 for j in range(n))), shape)
             for i, t in enumerate(tensors)]
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return grids


@kernel("CompositeImplicitAutograd")
def meshgrid(tensors):
    """Coordinate grids of 1-D tensors, ``indexing='ij'``."""
    return _meshgrid(tensors, "ij")


@kernel("CompositeImplicitAutograd")
def meshgrid_indexing(tensors, *, indexing):
    """Coordinate grids of 1-D tensors; ``indexing='xy'`` swaps the first two dims (Cartesian)."""
    return _meshgrid(tensors, indexing)


@kernel("CompositeImplicitAutograd")
def cartesian_prod(tensors):
    """Every combination of one element from each 1-D tensor, as rows (itertools.product order)."""
    tensors = list(tensors)
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t._sizes)}")
    if len(tensors) == 1:
        return tensors[0]
    return ops.stack([ops.reshape(g, (-1,)) for g in _meshgrid(tensors, "ij")], 1)


@kernel("CompositeImplicitAutograd")
def combinations(self, r=2, with_replacement=False):
    """The length-``r`` combinations of a 1-D tensor's elements as rows, in itertools' order (one
    ``index_select``; the indices depend on the size only, so nothing is read from the device)."""
    if self.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(self._sizes)}")
    if r.__class__ is not int:
        raise TypeError(f"combinations(): argument 'r' must be int, not {type(r).__name__}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return ops.empty((0,), dtype=self.dtype, device=self.device)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = [i for combo in pick(range(self._sizes[0]), r) for i in combo]
    from ...factories import tensor  # the public factory; strided.factories imports the ops layer

    index = tensor(rows, dtype=dt.int64, device=self.device)
    return ops.reshape(ops.index_select(self, 0, index), (len(rows) // r, r))


@kernel("CompositeImplicitAutograd")
def block_diag(tensors):
    """The tensors (0-, 1- or 2-D) as blocks along the diagonal of one matrix, zeros elsewhere."""
    blocks = []
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{t.dim()} dimensions")
        blocks.append(ops.reshape(t, (1, -1)) if t.dim() < 2 else t)
    if not blocks:
        return ops.empty((1, 0), dtype=dt.get_default_dtype())
    dtype = dt.result_type(*tensors)  # torch's: a 0-dim block promotes as a 0-dim operand, not as a matrix
    device = blocks[0].device
    cols = sum(b._sizes[1] for b in blocks)
    rows, before = [], 0
    for b in blocks:
        r, c = b._sizes
        parts = [ops.zeros((r, before), dtype=dtype, device=device), b.to(dtype),
                 ops.zeros((r, cols - before - c), dtype=dtype, device=device)]
        rows.append(ops.cat(parts, 1))
        before += c
    return ops.cat(rows, 0)


@kernel("CompositeImplicitAutograd")
def kron(self, other):
    """The Kronecker product: each element of ``self`` scales a copy of ``other``."""
    n = max(self.dim(), other.dim())
    a_sizes = (1,) * (n - self.dim()) + tuple(self._sizes)
    b_sizes = (1,) * (n - other.dim()) + tuple(other._sizes)
    a = ops.reshape(self, tuple(v for s in a_sizes for v in (s, 1)))
    b = ops.reshape(other, tuple(v for s in b_sizes for v in (1, s)))
    return ops.reshape(ops.mul(a, b), tuple(x * y for x, y in zip(a_sizes, b_sizes)))


@kernel("CompositeImplicitAutograd")
def tensordot(self, other, dims_self, dims_other):
    """Sum of products over the paired dims ``dims_self`` of ``self`` and ``dims_other`` of ``other``."""
    ds = [wrap_dim(d, self.dim()) for d in int_list(dims_self, "tensordot", "dims_self")]
    do = [wrap_dim(d, other.dim()) for d in int_list(dims_other, "tensordot", "dims_other")]
    if len(ds) != len(do):
        raise RuntimeError("both dimension lists should have same length")
    if self.dtype is not other.dtype:
        raise RuntimeError("both inputs should have same dtype")
    for a, b in zip(ds, do):  # torch's: a size-1 side broadcasts, so the other side is summed over that dim first
        if other._sizes[b] == 1 and self._sizes[a] != 1:
            self = ops.sum(self, [a], True, dtype=self.dtype)
        elif self._sizes[a] == 1 and other._sizes[b] != 1:
            other = ops.sum(other, [b], True, dtype=other.dtype)
        elif self._sizes[a] != other._sizes[b]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {self._sizes[a]} in dim "
                               f"{a} and second has size {other._sizes[b]} in dim {b}")
    free_s = [d for d in range(self.dim()) if d not in ds]
    free_o = [d for d in range(other.dim()) if d not in do]
    k = math.prod(self._sizes[d] for d in ds)
    a = ops.reshape(ops.permute(self, free_s + ds), (-1, k))
    b = ops.reshape(ops.permute(other, do + free_o), (k, -1))
    out_sizes = [self._sizes[d] for d in free_s] + [other._sizes[d] for d in free_o]
    return ops.reshape(ops.mm(a, b), out_sizes)


def _cross(self, other, dim: int, op: str):
    if self.dim() != other.dim():
        raise RuntimeError(f"{op}: inputs must have the same number of dimensions.")
    if self.dtype is not other.dtype:  # torch's TensorIterator: no promotion between the operands
        raise RuntimeError(f"expected scalar type {scalar_type_name(self.dtype)} but found "
                           f"{scalar_type_name(other.dtype)}")
    d = wrap_dim(dim, self.dim())
    if self._sizes[d] != 3 or other._sizes[d] != 3:
        raise RuntimeError(f"{op}: inputs dimension {dim} must have length 3. Got {self._sizes[d]} and "
                           f"{other._sizes[d]}")
    a = [ops.select(self, d, i) for i in range(3)]
    b = [ops.select(other, d, i) for i in range(3)]
    return ops.stack([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]], d)


@kernel("CompositeImplicitAutograd")
def linalg_cross(self, other, *, dim=-1):
    """The cross product of 3-vectors along ``dim`` (other dims broadcast)."""
    return _cross(self, other, dim, "linalg.cross")


@kernel("CompositeImplicitAutograd")
def cross(self, other, dim=None):
    """``linalg_cross``; without ``dim``, the first dim of size 3 (deprecated, as in torch)."""
    if dim is None:
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
                      "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to agree "
                      "with that of linalg.cross in a future release.", UserWarning, stacklevel=4)
        shape = broadcast_shapes(self._sizes, other._sizes) if self.dim() == other.dim() else self._sizes
        dim = next((i for i, s in enumerate(shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return _cross(self, other, dim, "linalg.cross")


@kernel("CompositeImplicitAutograd")
def cdist(x1, x2, p=2.0, compute_mode=None):
    """p-norm distances between the rows of ``x1`` (…, P, M) and ``x2`` (…, R, M) (Note [cdist paths])."""
    for name, t in (("X1", x1), ("X2", x2)):
        if t.dim() < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {t.dim()}D")
    if x1._sizes[-1] != x2._sizes[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1._sizes[-1]} X2: "
                           f"{x2._sizes[-1]}")
    for name, t in (("X1", x1), ("X2", x2)):
        if not t.dtype.is_floating_point:
            word = type_name(t.dtype)
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {word}")
    p = float(p)
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if compute_mode not in (None, 0, 1, 2):
        raise RuntimeError(f"cdist: compute_mode must be None, 0, 1 or 2, got {compute_mode!r}")
    mode = compute_mode or 0
    rows, cols = x1._sizes[-2], x2._sizes[-2]
    if p == 2.0 and (mode == 1 or (mode == 0 and (rows > 25 or cols > 25))):
        return _euclidean_dist(x1, x2)
    if x1.dtype.itemsize == 2 and x1.device.type == "cpu" and x1.numel() and x2.numel():
        # torch's CPU distance kernel is float / double only (its matmul path above takes the half types)
        raise NotImplementedError(f"\"cdist\" not implemented for '{scalar_type_name(x1.dtype)}'")
    diff = ops.sub(ops.unsqueeze(x1, -2), ops.unsqueeze(x2, -3))
    return ops.norm(diff, p, [-1])


def _euclidean_dist(x1, x2):
    n1 = ops.sum(ops.mul(x1, x1), [-1], True)
    n2 = ops.sum(ops.mul(x2, x2), [-1], True)
    a = ops.cat([ops.mul(x1, -2), n1, ops.ones_like(n1)], -1)
    b = ops.cat([x2, ops.ones_like(n2), n2], -1)
    return ops.sqrt(ops.clamp_min(ops.matmul(a, ops.transpose(b, -1, -2)), 1e-30))
