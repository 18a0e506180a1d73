"""Formula helpers for views, indexing and joining (scatter a view's gradient back into its input)."""

from __future__ import annotations

from ..backends.meta.common import wrap_dim
from ..dispatch.dispatcher import grad_mode
from ..ops import bound as ops
from ..ops.composite.views import int_list
from ..tensor import contiguous_strides, make_tensor

__all__ = [
    "sizes",
    "geometry",
    "reshape_backward",
    "transpose_backward",
    "flat_view",
    "matrix_transpose",
    "cat_backward",
    "select_backward",
    "slice_backward",
    "as_strided_backward",
    "permute_backward",
    "index_backward",
    "gather_backward",
    "index_select_backward",
    "index_select_source",
    "embedding_backward",
    "sort_backward",
]


def _zeros(like, shape):
    return ops.zeros(tuple(shape), dtype=like.dtype, device=like.device)


# Note [Untracked views in backward]
# While backward records no graph (no create_graph), the views a formula takes of its gradients and
# saved tensors are only read by the ops that follow: no autograd node, view base or version check
# needs them. Built with make_tensor they cost one object instead of a dispatch (keyset, autograd
# kernel, geometry, view tracking) each. They always cover their whole storage, as the views they
# replace do, so AccumulateGrad's stealing rules see the same sharing (Note [Accumulation]). Under
# create_graph the formulas call the differentiable ops.
def flat_view(t, shape):
    """``t.reshape(shape)`` (``shape`` fully given) inside a backward formula: a contiguous ``t``
    is viewed without dispatch while no graph is recorded (Note [Untracked views in backward])."""
    if not grad_mode.enabled and t.is_contiguous():
        shape = tuple(shape)
        return make_tensor(t._storage, t._offset, shape, contiguous_strides(shape), t.dtype)
    return ops.reshape.default(t, shape)


def matrix_transpose(t):
    """``t.mT`` inside a backward formula (Note [Untracked views in backward])."""
    if not grad_mode.enabled and t.dim() >= 2:
        sz, sd = t._sizes, t._strides
        return make_tensor(t._storage, t._offset, sz[:-2] + (sz[-1], sz[-2]), sd[:-2] + (sd[-1], sd[-2]), t.dtype)
    return t.mT


def transpose_backward(grad, dim0, dim1):
    """``grad.transpose(dim0, dim1)`` (Note [Untracked views in backward])."""
    if grad_mode.enabled:
        return grad.transpose(dim0, dim1)
    n = grad.dim()
    if n == 0:  # a 0-dim tensor's transpose(0, -1) is itself
        return grad
    a, b = wrap_dim(dim0, n), wrap_dim(dim1, n)
    sz, sd = list(grad._sizes), list(grad._strides)
    sz[a], sz[b] = sz[b], sz[a]
    sd[a], sd[b] = sd[b], sd[a]
    return make_tensor(grad._storage, grad._offset, tuple(sz), tuple(sd), grad.dtype)


def reshape_backward(grad, shape):
    """``grad.reshape(shape)`` (the gradient of view/reshape/squeeze/unsqueeze): a contiguous
    ``grad`` is viewed directly (Note [Untracked views in backward])."""
    if not grad_mode.enabled:
        return flat_view(grad, shape)
    return ops.view.default(grad, shape) if grad.is_contiguous() else ops.reshape.default(grad, shape)


def sizes(tensors):
    """Shapes of a tensor list (a formula that reads only this saves no tensors)."""
    return [t.shape for t in tensors]


def geometry(t):
    """A tensor's metadata (sizes, strides, offset, storage size), which is all a formula that reads only this
    saves: a later in-place write to the tensor does not break its backward (as_strided's, in CopySlices)."""
    from .saving import Geometry

    return t if isinstance(t, Geometry) else Geometry(t)


def cat_backward(grad, shapes, dim):
    """Slices of ``grad``, one per input of cat (legacy empty 1-D inputs get an empty gradient)."""
    out, start = [], 0
    ndim = grad.dim()
    d = wrap_dim(dim, ndim) if ndim else 0
    for shape in shapes:
        if len(shape) == 1 and shape[0] == 0 and ndim != 1:
            out.append(ops.zeros(shape, dtype=grad.dtype, device=grad.device))
            continue
        n = shape[d]
        out.append(ops.narrow(grad, d, start, n))
        start += n
    return out


def select_backward(grad, shape, dim, index):
    out = _zeros(grad, shape)
    ops.select(out, dim, index).copy_(grad)
    return out


def slice_backward(grad, shape, dim, start, end, step):
    out = _zeros(grad, shape)
    ops.slice(out, dim, start, end, step).copy_(grad)
    return out


def as_strided_backward(grad, self, size, stride, storage_offset):
    """Scatter-add into the input's storage layout (overlapping views add up, as torch)."""
    n_storage = geometry(self).storage_elements
    offset = self._offset if storage_offset is None else storage_offset
    positions = ops.as_strided(ops.arange(0, n_storage, device=grad.device), int_list(size),
                               int_list(stride), offset)
    flat = ops.index_add(ops.zeros((n_storage,), dtype=grad.dtype, device=grad.device), 0,
                         ops.reshape(positions, (-1,)), ops.reshape(grad, (-1,)))
    return ops.as_strided(flat, self._sizes, self._strides, self._offset)


def permute_backward(grad, dims):
    dims = int_list(dims)
    n = len(dims)
    inv = [0] * n
    for i, d in enumerate(dims):
        inv[wrap_dim(d, n)] = i
    return ops.permute(grad, inv)


def index_backward(grad, shape, indices):
    return ops.index_put(_zeros(grad, shape), indices, grad, True)


def gather_backward(grad, shape, dim, index):
    return ops.scatter_add(_zeros(grad, shape), dim, index, grad)


def index_select_backward(grad, shape, dim, index):
    if len(shape) == 0:
        return ops.reshape(grad, ())
    return ops.index_add(_zeros(grad, shape), dim, ops.reshape(index, (-1,)), grad)


def index_select_source(grad, dim, index, source_shape):
    """index_add's gradient for ``source``: the rows of ``grad`` it was added to."""
    if grad.dim() == 0:
        return ops.reshape(grad, tuple(source_shape))
    return ops.reshape(ops.index_select(grad, dim, ops.reshape(index, (-1,))), tuple(source_shape))


def embedding_backward(grad, weight_shape, indices, padding_idx, scale_grad_by_freq):
    num, dim = weight_shape
    flat_idx = ops.reshape(indices, (-1,))
    g = ops.reshape(grad, (-1, dim))
    if padding_idx is not None and padding_idx >= 0:
        keep = ops.ne(flat_idx, padding_idx).to(grad.dtype)
        g = g * ops.unsqueeze(keep, 1)
    if scale_grad_by_freq:
        counts = ops.index_add(ops.zeros((num,), dtype=grad.dtype, device=grad.device), 0, flat_idx,
                               ops.ones(flat_idx._sizes, dtype=grad.dtype, device=grad.device))
        g = g / ops.unsqueeze(ops.index_select(counts, 0, flat_idx), 1)
    return ops.index_add(ops.zeros((num, dim), dtype=grad.dtype, device=grad.device), 0, flat_idx, g)


def sort_backward(grad, shape, dim, indices):
    if len(shape) == 0:
        return grad
    return ops.scatter(_zeros(grad, shape), dim, indices, grad)
