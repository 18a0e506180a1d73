"""View ops: new Tensors over the *same* storage (sizes, strides and offset change, data never moves).

They are CompositeExplicitAutograd (or CompositeImplicitAutograd when written with other ops), so
one kernel serves every backend: CPU, Meta and CUDA views are the same metadata arithmetic.
Narrowing views (slice, select, narrow, split, chunk, unbind) live in ``views_split``, the broadcasting
ones (expand, expand_as, broadcast_to) in ``views_expand``.

Note [View base]
As in torch, a view remembers the tensor whose storage it aliases in ``_base`` (always the
*root*: a view of a view points at the original tensor), which autograd uses to rebase in-place
updates. The view shares its base's version counter (the storage's).
"""

from __future__ import annotations

import math
import operator

from ...autograd.graph import AutogradMeta
from ...backends.meta.common import exact_ints, wrap_dim
from ...backends.meta.factories import check_storage_bounds
from ...dispatch.dispatcher import grad_mode
from ...dispatch.library import kernel
from ...tensor import Tensor, make_tensor
from .. import bound as ops

__all__ = ["alias", "mark_view", "infer_size", "compute_stride", "int_list"]

_VIEW_ERROR = (
    "view size is not compatible with input tensor's size and stride (at least one dimension spans "
    "across two contiguous subspaces). Use .reshape(...) instead."
)


def alias(self: Tensor, sizes: tuple, strides: tuple, offset: int | None = None) -> Tensor:
    """A view of ``self`` with new metadata (Note [View base])."""
    t = make_tensor(self._storage, self._offset if offset is None else offset, sizes, strides, self.dtype)
    base = self._base
    root = t._base = self if base is None else base
    if root._requires_grad:
        mark_view(self, t)
    return t


def mark_view(self: Tensor, t: Tensor) -> None:
    """Mark a new view ``t`` of ``self`` (its base requires grad) that autograd must refuse to write in
    place: one made under no_grad (Note [No-grad views]), and a view of a view so marked or of a multi-output
    view (Note [Multi-output views]), which carries its marks."""
    meta = self._autograd
    if not grad_mode.enabled:
        t._autograd = new = AutogradMeta()  # made under no_grad: never differentiable
        new.no_grad_view = True
        new.multi_output = meta is not None and meta.multi_output
    elif meta is not None and (meta.no_grad_view or meta.multi_output):
        t._autograd = new = AutogradMeta()
        new.no_grad_view, new.multi_output = meta.no_grad_view, meta.multi_output


def int_list(values, op: str = "", arg: str = "size") -> tuple:
    """An ``int[]`` argument as a tuple of ints (a bare int is a list of one, as torch allows).

    ``op``/``arg`` name the operator and argument in the error, as torch's argument parser does."""
    if type(values) is int:
        return (values,)
    if isinstance(values, Tensor):
        return (operator.index(values),)
    where = f"{op}(): argument '{arg}' " if op else ""
    try:
        out = tuple(map(operator.index, values))
    except TypeError:
        raise TypeError(f"{where}must be tuple of ints, got {values!r}" if op
                        else f"expected a sequence of ints, got {values!r}") from None
    if bool in map(type, values):  # operator.index accepts True; torch's int[] arguments do not
        pos = [type(v) for v in values].index(bool)
        raise TypeError(f"{where}must be tuple of ints, but found element of type bool at pos {pos}: {values!r}")
    return out


def _type_name(t: Tensor) -> str:
    """torch's legacy type string, e.g. ``strided.FloatTensor`` (used in expand's message)."""
    from ...backends.meta.indexing import type_string

    return type_string(t)


# ---------------------------------------------------------------------- view / reshape
def infer_size(shape: tuple, numel: int) -> tuple:
    """Resolve one ``-1`` in ``shape`` for a tensor of ``numel`` elements (torch's infer_size)."""
    newsize, infer_dim = 1, None
    for i, s in enumerate(shape):
        if s == -1:
            if infer_dim is not None:
                raise RuntimeError("only one dimension can be inferred")
            infer_dim = i
        elif s >= 0:
            newsize *= s
        else:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {list(shape)}")
    if numel == newsize or (infer_dim is not None and newsize > 0 and numel % newsize == 0):
        if infer_dim is None:
            return shape
        if newsize == 0:
            raise RuntimeError(
                f"cannot reshape tensor of 0 elements into shape {list(shape)} because the unspecified "
                "dimension size -1 can be any value and is ambiguous"
            )
        out = list(shape)
        out[infer_dim] = numel // newsize
        return tuple(out)
    raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")


def compute_stride(oldshape: tuple, oldstride: tuple, newshape: tuple):
    """Strides that view ``oldshape``/``oldstride`` as ``newshape``, or None (torch's computeStride).

    A view exists iff every run of dims of the new shape splits or merges a run of old dims that
    is contiguous *within itself* (each dim's stride = next stride * next size).
    """
    if not oldshape:
        return (1,) * len(newshape)
    numel = math.prod(oldshape)
    if numel == 0:
        if oldshape == newshape:
            return oldstride
        from ...tensor import contiguous_strides

        return contiguous_strides(newshape)
    newstride = [0] * len(newshape)
    view_d = len(newshape) - 1
    chunk_base_stride = oldstride[-1]
    tensor_numel = view_numel = 1
    for tensor_d in range(len(oldshape) - 1, -1, -1):
        tensor_numel *= oldshape[tensor_d]
        if tensor_d == 0 or (oldshape[tensor_d - 1] != 1
                             and oldstride[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or newshape[view_d] == 1):
                newstride[view_d] = view_numel * chunk_base_stride
                view_numel *= newshape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = oldstride[tensor_d - 1]
                tensor_numel = view_numel = 1
    if view_d != -1:
        return None
    return tuple(newstride)


# Note [View memo]
# A model views the same shapes every step (GPT-2: about 500 views a step). The result geometry of
# a valid view depends only on (sizes, strides, requested size), so it is memoized; the key is
# used only when the request is a tuple of exact ints (2.0 == 2 and True == 1 would otherwise find
# the entry of a valid request that int_list rejects or reads differently). Bounded: cleared past
# 4096 entries. A size that is invalid raises before anything is stored; "no view exists" (strides
# None) is stored too, as reshape copies then.
_VIEW_MEMO: dict = {}


def _view_geometry(self: Tensor, size, op: str) -> tuple:
    """``(sizes, strides)`` of ``self`` viewed as ``size`` (one -1 allowed); strides None when no view
    exists (Note [View memo])."""
    key = None
    if size.__class__ is tuple and exact_ints(map(type, size)):
        key = (self._sizes, self._strides, size)
        hit = _VIEW_MEMO.get(key)
        if hit is not None:
            return hit
    sizes = infer_size(int_list(size, op, "size" if op == "view" else "shape"), self.numel())
    strides = self._strides if sizes == self._sizes else compute_stride(self._sizes, self._strides, sizes)
    if key is not None:
        if len(_VIEW_MEMO) > 4096:
            _VIEW_MEMO.clear()
        _VIEW_MEMO[key] = (sizes, strides)
    return sizes, strides


@kernel("CompositeExplicitAutograd")
def view(self, size):
    sizes, strides = _view_geometry(self, size, "view")
    if strides is None:
        raise RuntimeError(_VIEW_ERROR)
    return alias(self, sizes, strides)


@kernel("CompositeImplicitAutograd")
def reshape(self, shape):
    """A view when the strides allow one (see ``compute_stride``), else a contiguous copy."""
    sizes, strides = _view_geometry(self, shape, "reshape")
    if strides is not None:
        return ops.view.default(self, sizes)
    return ops.view.default(ops.clone(self, memory_format="contiguous_format"), sizes)


@kernel("CompositeExplicitAutograd")
def as_strided(self, size, stride, storage_offset=None):
    sizes, strides = int_list(size, "as_strided"), int_list(stride, "as_strided", "stride")
    offset = self._offset if storage_offset is None else operator.index(storage_offset)
    check_storage_bounds(sizes, strides, offset, self.dtype.itemsize, self._storage.nbytes())
    return alias(self, sizes, strides, offset)


# ---------------------------------------------------------------------- dim reordering
@kernel("CompositeExplicitAutograd")
def transpose(self, dim0, dim1):
    n = len(self._sizes)
    d0, d1 = wrap_dim(dim0, n), wrap_dim(dim1, n)
    if d0 == d1:
        return alias(self, self._sizes, self._strides)
    sizes, strides = list(self._sizes), list(self._strides)
    sizes[d0], sizes[d1] = sizes[d1], sizes[d0]
    strides[d0], strides[d1] = strides[d1], strides[d0]
    return alias(self, tuple(sizes), tuple(strides))


@kernel("CompositeExplicitAutograd")
def t(self):
    n = len(self._sizes)
    if n > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {n}D")
    return transpose(self, 0, 0 if n < 2 else 1)


@kernel("CompositeExplicitAutograd")
def permute(self, dims):
    dims = int_list(dims, "permute", "dims")
    n = len(self._sizes)
    if len(dims) != n:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the length of "
            f"the desired ordering of dimensions i.e. input.dim() = {n} is not equal to "
            f"len(dims) = {len(dims)}"
        )
    wrapped = tuple(wrap_dim(d, n) for d in dims)
    if len(set(wrapped)) != n:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    sizes, strides = self._sizes, self._strides
    return alias(self, tuple(sizes[d] for d in wrapped), tuple(strides[d] for d in wrapped))


@kernel("CompositeImplicitAutograd")
def movedim(self, source, destination):
    given_src, given_dst = int_list(source), int_list(destination)
    n = len(self._sizes)
    if len(given_src) != len(given_dst):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({list(given_src)} dims) should contain "
            f"the same number of dims as destination ({list(given_dst)} dims)"
        )
    src = tuple(wrap_dim(d, n) for d in given_src)
    dst = tuple(wrap_dim(d, n) for d in given_dst)
    if len(set(src)) != len(src):
        raise RuntimeError(f"movedim: repeated dim in `source` ({list(given_src)})")
    if len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({list(given_dst)})")
    if n == 0:
        return ops.permute(self, ())  # dims were checked: only 0 and -1 name a 0-dim tensor's dim
    order = [-1] * n
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(n) if d not in src)
    order = [next(rest) if o == -1 else o for o in order]
    return ops.permute(self, order)


# ---------------------------------------------------------------------- adding / removing dims
@kernel("CompositeExplicitAutograd")
def squeeze(self):
    keep = [i for i, s in enumerate(self._sizes) if s != 1]
    return alias(self, tuple(self._sizes[i] for i in keep), tuple(self._strides[i] for i in keep))


@kernel("CompositeExplicitAutograd")
def squeeze_dims(self, dim):
    dims = int_list(dim, "squeeze", "dim")
    n = len(self._sizes)
    wrapped = set()
    for d in dims:
        w = wrap_dim(d, n)
        if w in wrapped:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        wrapped.add(w)
    keep = [i for i, s in enumerate(self._sizes) if s != 1 or i not in wrapped]
    return alias(self, tuple(self._sizes[i] for i in keep), tuple(self._strides[i] for i in keep))


@kernel("CompositeExplicitAutograd")
def unsqueeze(self, dim):
    n = len(self._sizes)
    d = wrap_dim(dim, n + 1)
    stride = 1 if d >= n else self._sizes[d] * self._strides[d]
    return alias(self, self._sizes[:d] + (1,) + self._sizes[d:],
                 self._strides[:d] + (stride,) + self._strides[d:])


@kernel("CompositeImplicitAutograd")
def flatten(self, start_dim=0, end_dim=-1):
    n = len(self._sizes)
    start, end = wrap_dim(start_dim, n), wrap_dim(end_dim, n)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if n == 0:
        return ops.reshape(self, (1,))
    if start == end:
        return self
    sizes = self._sizes
    return ops.reshape(self, sizes[:start] + (math.prod(sizes[start:end + 1]),) + sizes[end + 1:])


@kernel("CompositeImplicitAutograd")
def unflatten(self, dim, sizes):
    n = len(self._sizes)
    if n == 0:
        raise RuntimeError(
            "unflatten got an unexpected error:\nDimension specified as 0 but tensor has no dimensions"
        )
    d = wrap_dim(dim, n)
    given = int_list(sizes, "unflatten", "sizes")
    if not given:
        raise RuntimeError("unflatten: sizes must be non-empty")
    try:
        new = infer_size(given, self._sizes[d])
    except RuntimeError as e:
        if "is invalid for input of size" not in str(e):
            raise RuntimeError(f"unflatten got an unexpected error:\n{e}") from None
        raise RuntimeError(
            f"unflatten: Provided sizes {list(given)} don't multiply up to the size of dim {dim} "
            f"({self._sizes[d]}) in the input tensor"
        ) from None
    return ops.view.default(self, self._sizes[:d] + new + self._sizes[d + 1:])


# ---------------------------------------------------------------------- layout
@kernel("CompositeImplicitAutograd")
def contiguous(self, *, memory_format="contiguous_format"):
    if self.is_contiguous(memory_format="contiguous_format" if memory_format == "preserve_format" else memory_format):
        return self
    if memory_format == "preserve_format":
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    return ops.clone(self, memory_format=memory_format)
