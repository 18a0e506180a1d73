"""OpInfos: joining (cat, stack) and indexing along one dim (index_select, gather, scatter,
scatter_add, index_add, embedding). Advanced indexing, sorting, tril/triu and one_hot are in
``indexing_more``; ``OPS`` holds both.

Index tensors are built from explicit values so samples stay valid on every backend; samples of
ops whose result is unspecified for duplicate indices (scatter, index_put without accumulate)
use indices that are distinct where they could collide. Errors that depend on index *values*
(out of bounds) cannot be raised by meta tensors and are tested in tests/backend/test_indexing.py.
"""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ...tensor import Tensor
from ..opinfo import ALL_DTYPES, OpInfo, SampleInput, make_arg
from .indexing_common import error, index_tensor, inplace, scalar_for

__all__ = ["OPS"]


def _distinct_index(rng, self_shape, index_shape, dim) -> Tensor:
    """An index of ``index_shape`` whose entries along ``dim`` are distinct (scatter is then exact)."""
    full = list(index_shape)
    full[dim] = self_shape[dim]
    order = np.argsort(rng.random(full), axis=dim)
    return index_tensor(np.take(order, np.arange(index_shape[dim]), axis=dim))


# ---------------------------------------------------------------------------------------- cat / stack
def _ref_cat(tensors, dim=0):
    kept = [t for t in tensors if t.shape != (0,)]
    return np.concatenate(kept, axis=dim) if kept else np.zeros((0,))


def _cat_samples(dtype, rng):
    def a(shape, **kw):
        return make_arg(shape, dtype, rng=rng, **kw)

    yield SampleInput(([a((2, 3)), a((4, 3), noncontiguous=True), a((0, 3))],), {}, "dim 0")
    yield SampleInput(([a((2, 3), noncontiguous=True), a((2, 1))], -1), {}, "dim -1")
    yield SampleInput(((a((2, 3, 4)), a((2, 2, 4))), 1), {}, "tuple, 3-d")
    yield SampleInput(([a((5,))],), {}, "one tensor")
    yield SampleInput(([make_arg((0,), dt.float64), a((2, 3))], 1), {}, "legacy (0,) skipped, promotes")
    yield SampleInput(([a((0,)), a((0,))],), {}, "all skipped")
    cl = [make_arg((2, 4, 5, 3), dtype, rng=rng).permute(0, 3, 1, 2) for _ in range(2)]
    yield SampleInput((cl, 1), {}, "channels_last")
    other = dt.int32 if dtype is not dt.int32 else dt.float16
    yield SampleInput(([a((2, 3)), make_arg((1, 3), other, rng=rng)],), {}, "promotion")


def _check_cat(result, sample):
    tensors = sample.args[0]
    assert result.dtype is dt.result_type(*tensors), f"cat dtype {result.dtype}"
    kept = [t for t in tensors if t.shape != (0,)]
    if kept and all(t.dim() == 4 and not t.is_contiguous() and t.is_contiguous(memory_format="channels_last")
                    for t in kept):
        assert result.is_contiguous(memory_format="channels_last"), "cat of channels_last inputs must be channels_last"


def _cat_errors(rng):
    x = make_arg((2, 3), rng=rng)
    yield error(([],), ValueError, "torch.cat(): expected a non-empty list of Tensors")
    yield error(([x, make_arg((3, 3), rng=rng)], 1), RuntimeError,
                "Sizes of tensors must match except in dimension 1. Expected size 2 but got size 3 for "
                "tensor number 1 in the list.")
    yield error(([x, make_arg((2, 3, 1), rng=rng)],), RuntimeError,
                "Tensors must have same number of dimensions: got 2 and 3")
    yield error(([x, make_arg((), rng=rng)],), RuntimeError,
                "zero-dimensional tensor (at position 1) cannot be concatenated")
    yield error(([x], 2), IndexError,
                "Dimension out of range (expected to be in range of [-2, 1], but got 2)")


def _cat_out(tensors, dim=0):
    from ...factories import empty
    from ...ops import registry

    out = empty(0, dtype=dt.result_type(*tensors), device=tensors[0].device)
    result = registry.load().cat.out(tensors, dim, out=out)
    assert result is out
    return out


def _stack_samples(dtype, rng):
    def a(shape, **kw):
        return make_arg(shape, dtype, rng=rng, **kw)

    yield SampleInput(([a((2, 3)), a((2, 3), noncontiguous=True), a((2, 3))],), {}, "dim 0")
    yield SampleInput(([a((2, 3)), a((2, 3))], 2), {}, "last dim")
    yield SampleInput(((a((2, 3), noncontiguous=True), a((2, 3))), -2), {}, "dim -2")
    yield SampleInput(([a(()), a(())],), {}, "0-dim")
    yield SampleInput(([a((0, 2)), a((0, 2))], 1), {}, "zero-size")


def _stack_errors(rng):
    x = make_arg((2, 3), rng=rng)
    yield error(([x, make_arg((2, 4), rng=rng)],), RuntimeError,
                "stack expects each tensor to be equal size, but got [2, 3] at entry 0 and [2, 4] at entry 1")
    yield error(([],), RuntimeError, "stack expects a non-empty TensorList")
    yield error(([x, x], 3), IndexError,
                "Dimension out of range (expected to be in range of [-3, 2], but got 3)")


# ---------------------------------------------------------------------------------------- index_select
def _ref_index_select(a, dim, index):
    if a.ndim == 0:
        return a.reshape(1)[np.asarray(index).reshape(-1)].reshape(())
    return np.take(a, np.asarray(index).reshape(-1), axis=dim)


def _index_select_samples(dtype, rng):
    x = make_arg((4, 5), dtype, rng=rng, noncontiguous=True)
    yield SampleInput((x, 0, index_tensor([3, 0, 0, 2])), {}, "dim 0, repeats")
    yield SampleInput((x, -1, index_tensor([4, 1], dt.int32, noncontiguous=True)), {}, "int32, noncontig")
    yield SampleInput((make_arg((3,), dtype, rng=rng), 0, index_tensor(2)), {}, "0-dim index")
    yield SampleInput((make_arg((), dtype, rng=rng), 0, index_tensor([0])), {}, "0-dim self")
    yield SampleInput((x, 1, index_tensor(np.zeros(0, np.int64))), {}, "empty index")
    yield SampleInput((make_arg((0, 3), dtype, rng=rng), 1, index_tensor([2, 2])), {}, "zero-size self")


def _index_select_errors(rng):
    x = make_arg((3, 4), rng=rng)
    yield error((x, 0, index_tensor([[0]])), IndexError, "index_select(): Index is supposed to be a vector")
    yield error((x, 0, index_tensor([0.0], dt.float32)), RuntimeError,
                "index_select(): Expected dtype int32 or int64 for index")
    yield error((make_arg((), rng=rng), 0, index_tensor([0, 0])), RuntimeError,
                "index_select(): Index to scalar can have only 1 value, got 2 value(s)")
    yield error((make_arg((0, 2), rng=rng), 0, index_tensor([0])), RuntimeError,
                "index_select(): self indexing axis dim should be positive")


# ---------------------------------------------------------------------------------------- gather
def _ref_gather(a, dim, index, sparse_grad=False):
    a, index = np.atleast_1d(a), np.asarray(index)
    idx = np.atleast_1d(index)
    dim %= a.ndim
    sub = a[tuple(slice(None) if k == dim else slice(0, n) for k, n in enumerate(idx.shape))]
    return np.take_along_axis(sub, idx, dim).reshape(index.shape)


def _gather_samples(dtype, rng):
    x = make_arg((4, 5), dtype, rng=rng, noncontiguous=True)
    yield SampleInput((x, 0, index_tensor(rng.integers(0, 4, (6, 5)))), {}, "dim 0, longer index")
    yield SampleInput((x, 1, index_tensor(rng.integers(0, 5, (2, 3)), noncontiguous=True)), {}, "smaller")
    yield SampleInput((x, -1, index_tensor(rng.integers(0, 5, (4, 2)), dt.int32)), {"sparse_grad": False},
                      "int32")
    yield SampleInput((make_arg((), dtype, rng=rng), 0, index_tensor(0)), {}, "0-dim")
    yield SampleInput((x, 0, index_tensor(np.zeros((0, 5), np.int64))), {}, "empty index")


def _gather_errors(rng):
    x = make_arg((3, 4), rng=rng)
    yield error((x, 0, index_tensor([[0.0]], dt.float32)), RuntimeError,
                "gather(): Expected dtype int32/int64 for index")
    yield error((x, 0, index_tensor([0])), RuntimeError,
                "Index tensor must have the same number of dimensions as input tensor")
    yield error((x, 0, index_tensor([[0] * 5])), RuntimeError,
                "Size does not match at dimension 1 expected index [1, 5] to be no larger than self [3, 4] "
                "apart from dimension 0")


# ---------------------------------------------------------------------------------------- scatter
def _ref_scatter(a, dim, index, src=None, value=None):
    out = np.array(np.atleast_1d(a), copy=True)
    dim %= out.ndim
    idx = np.atleast_1d(np.asarray(index))
    if idx.size:
        dst = out[tuple(slice(None) if k == dim else slice(0, n) for k, n in enumerate(idx.shape))]
        if isinstance(src, np.ndarray):
            vals = np.atleast_1d(src)[tuple(slice(0, n) for n in idx.shape)]
        else:
            vals = np.asarray(src if value is None else value).astype(a.dtype)
        np.put_along_axis(dst, idx, vals, dim)
    return out.reshape(np.shape(a))


def _ref_scatter_add(a, dim, index, src):
    return _ref_scatter_legacy_reduce(a, dim, index, np.asarray(src), reduce="add")


def _scatter_samples(value: bool):
    def samples(dtype, rng):
        def src(shape):
            return scalar_for(dtype) if value else make_arg(shape, dtype, rng=rng)

        x = make_arg((4, 5), dtype, rng=rng, noncontiguous=True)
        yield SampleInput((x, 0, _distinct_index(rng, (4, 5), (3, 5), 0), src((3, 6))), {}, "dim 0")
        yield SampleInput((x, 1, _distinct_index(rng, (4, 5), (2, 3), 1), src((2, 3))), {}, "smaller index")
        yield SampleInput((x, -1, _distinct_index(rng, (4, 5), (4, 2), 1), src((5, 5))), {}, "dim -1")
        yield SampleInput((make_arg((), dtype, rng=rng), 0, index_tensor(0), src(())), {}, "0-dim")
        yield SampleInput((x, 0, index_tensor(np.zeros((0, 5), np.int64)), src((1, 5))), {}, "empty index")
    return samples


def _scatter_add_samples(dtype, rng):
    x = make_arg((4, 5), dtype, rng=rng, noncontiguous=True)
    yield SampleInput((x, 0, index_tensor(rng.integers(0, 4, (3, 5))), make_arg((3, 6), dtype, rng=rng)), {},
                      "dim 0, duplicates")
    yield SampleInput((x, 1, index_tensor(rng.integers(0, 5, (2, 3)), dt.int32),
                       make_arg((2, 4), dtype, rng=rng, noncontiguous=True)), {}, "int32, smaller")
    yield SampleInput((make_arg((), dtype, rng=rng), 0, index_tensor(0), make_arg((), dtype, rng=rng)), {},
                      "0-dim")
    yield SampleInput((x, 0, index_tensor(np.zeros((0, 5), np.int64)), make_arg((1, 5), dtype, rng=rng)), {},
                      "empty index")


def _ref_scatter_legacy_reduce(a, dim, index, src, *, reduce):
    """scatter(..., reduce="add" | "multiply"): np.add.at / np.multiply.at into a copy."""
    out = np.array(np.atleast_1d(a), copy=True)
    dim %= out.ndim
    idx = np.atleast_1d(np.asarray(index))
    if idx.size:
        where = list(np.ix_(*(np.arange(n) for n in idx.shape)))
        where[dim] = idx
        vals = (np.atleast_1d(src)[tuple(slice(0, n) for n in idx.shape)] if isinstance(src, np.ndarray)
                else np.full(idx.shape, src, out.dtype))
        (np.add if reduce == "add" else np.multiply).at(out, tuple(where), vals)
    return out.reshape(np.shape(a))


def _scatter_legacy_reduce_samples(value: bool):
    def samples(dtype, rng):
        def src(shape):
            return scalar_for(dtype) if value else make_arg(shape, dtype, rng=rng)

        x = make_arg((4, 5), dtype, rng=rng, noncontiguous=True)
        for reduce in ("add", "multiply"):
            # src of the index's shape: a larger src has no gradient (torch's scatter_add backward refuses it too)
            yield SampleInput((x, 0, index_tensor(rng.integers(0, 4, (3, 5))), src((3, 5))), {"reduce": reduce},
                              f"dim 0, duplicates, {reduce}")
            yield SampleInput((x, -1, index_tensor(rng.integers(0, 5, (2, 3))), src((2, 3))), {"reduce": reduce},
                              f"dim -1, smaller, {reduce}")
    return samples


def _scatter_legacy_reduce_errors(rng):
    x = make_arg((3, 4), rng=rng)
    yield error((x, 0, index_tensor([[0]]), make_arg((1, 1), rng=rng)), RuntimeError,
                "reduce argument must be either add or multiply.", kwargs={"reduce": "max"})


def _scatter_errors(rng):
    x = make_arg((3, 4), rng=rng)
    yield error((x, 0, index_tensor([[0]]), make_arg((1, 1), dt.float64, rng=rng)), RuntimeError,
                "scatter(): Expected self.dtype to be equal to src.dtype")
    yield error((x, 0, index_tensor([[0.0]], dt.float32), x), RuntimeError,
                "scatter(): Expected dtype int32/int64 for index")
    yield error((x, 0, index_tensor([[0, 1]]), make_arg((1, 1), rng=rng)), RuntimeError,
                "Expected index [1, 2] to be no larger than self [3, 4] apart from dimension 0 and to be no "
                "larger size than src [1, 1]")
    yield error((x, 0, index_tensor([0]), x), RuntimeError,
                "Index tensor must have the same number of dimensions as self tensor")


def _scatter_value_errors(rng):
    x = make_arg((3, 4), rng=rng)
    yield error((x, 0, index_tensor([[0] * 5]), 1.0), RuntimeError,
                "Expected index [1, 5] to be no larger than self [3, 4] apart from dimension 0")


# ---------------------------------------------------------------------------------------- index_add
def _ref_index_add(a, dim, index, source, *, alpha=1):
    out = np.array(np.atleast_1d(a), copy=True)
    dim %= out.ndim
    src = np.atleast_1d(source)
    if out.dtype == np.bool_:
        src = src & bool(alpha)
    else:
        src = src * (alpha if out.dtype.kind == "f" else int(alpha))
    np.add.at(out, (slice(None),) * dim + (np.atleast_1d(index),), src.astype(out.dtype))
    return out.reshape(np.shape(a))


def _index_add_samples(dtype, rng):
    x = make_arg((4, 5), dtype, rng=rng, noncontiguous=True)
    alpha = scalar_for(dtype) if dtype is not dt.bool else True
    yield SampleInput((x, 0, index_tensor([3, 0, 3]), make_arg((3, 5), dtype, rng=rng)), {}, "duplicates")
    source = make_arg((4, 2), dtype, rng=rng, noncontiguous=True)
    yield SampleInput((x, 1, index_tensor([4, 1], dt.int32), source), {"alpha": alpha}, "alpha, int32")
    yield SampleInput((make_arg((), dtype, rng=rng), 0, index_tensor(0), make_arg((), dtype, rng=rng)), {},
                      "0-dim")
    yield SampleInput((x, 0, index_tensor(np.zeros(0, np.int64)), make_arg((0, 5), dtype, rng=rng)), {},
                      "empty index")


def _index_add_errors(rng):
    x = make_arg((3, 4), rng=rng)
    idx = index_tensor([0, 1])
    yield error((x, 0, idx, make_arg((3, 4), rng=rng)), RuntimeError,
                "index_add_(): Number of indices (2) should be equal to source.size(dim): (3), for dim: 0")
    yield error((x, 0, idx, make_arg((2, 4), dt.float64, rng=rng)), RuntimeError,
                "index_add_(): self (Float) and source (Double) must have the same scalar type")
    yield error((x, 0, index_tensor([0.0, 1.0], dt.float32), make_arg((2, 4), rng=rng)), RuntimeError,
                "index_add_(): Expected dtype int32/int64 for index but got: Float")
    yield error((x, 0, index_tensor([[0, 1]]), make_arg((2, 4), rng=rng)), IndexError,
                "index_add_(): Index is supposed to be a vector, but got dim: 2 with type: Long and size: "
                "[1, 2]")
    yield error((x, 0, idx, make_arg((2, 3), rng=rng)), RuntimeError,
                "source tensor shape must match self tensor shape, excluding the specified dimension. Got "
                "self.shape = [3, 4] source.shape = [2, 3]")


# ---------------------------------------------------------------------------------------- embedding
def _ref_embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    return np.take(weight, np.asarray(indices), axis=0)


def _embedding_samples(dtype, rng):
    w = make_arg((5, 3), dtype, rng=rng, noncontiguous=True)
    yield SampleInput((w, index_tensor([[0, 4, 4], [2, 1, 0]])), {}, "2-d indices")
    yield SampleInput((w, index_tensor([3, 0], dt.int32, noncontiguous=True)), {}, "int32")
    yield SampleInput((w, index_tensor(2), 2), {}, "0-dim, padding_idx")
    yield SampleInput((w, index_tensor(np.zeros((0, 2), np.int64))), {}, "empty")


def _embedding_errors(rng):
    yield error((make_arg((5,), rng=rng), index_tensor([0])), RuntimeError, "'weight' must be 2-D")
    yield error((make_arg((5, 3), rng=rng), index_tensor([0.0], dt.float32)), RuntimeError,
                "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, "
                "Int; but got strided.FloatTensor instead (while checking arguments for embedding)")


_LEGACY_REDUCE_DTYPES = (dt.float32, dt.float64, dt.int32, dt.int64)

OPS = [
    OpInfo("cat", _cat_samples, ref=_ref_cat, dtypes=ALL_DTYPES, check=_check_cat, errors=_cat_errors),
    OpInfo("cat.out", _cat_samples, ref=_ref_cat, op=_cat_out, dtypes=ALL_DTYPES),
    OpInfo("stack", _stack_samples, ref=lambda tensors, dim=0: np.stack(tensors, dim), dtypes=ALL_DTYPES,
           errors=_stack_errors),
    OpInfo("index_select", _index_select_samples, ref=_ref_index_select, dtypes=ALL_DTYPES,
           errors=_index_select_errors),
    OpInfo("gather", _gather_samples, ref=_ref_gather, dtypes=ALL_DTYPES, errors=_gather_errors),
    OpInfo("scatter.src", _scatter_samples(False), ref=_ref_scatter, dtypes=ALL_DTYPES,
           errors=_scatter_errors),
    OpInfo("scatter.value", _scatter_samples(True), ref=_ref_scatter, dtypes=ALL_DTYPES,
           errors=_scatter_value_errors),
    OpInfo("scatter_.src", _scatter_samples(False), ref=_ref_scatter, op=inplace("scatter_"),
           dtypes=ALL_DTYPES),
    OpInfo("scatter_.value", _scatter_samples(True), ref=_ref_scatter, op=inplace("scatter_"),
           dtypes=ALL_DTYPES),
    OpInfo("scatter.reduce", _scatter_legacy_reduce_samples(False), ref=_ref_scatter_legacy_reduce,
           dtypes=_LEGACY_REDUCE_DTYPES, errors=_scatter_legacy_reduce_errors),
    OpInfo("scatter.value_reduce", _scatter_legacy_reduce_samples(True), ref=_ref_scatter_legacy_reduce,
           dtypes=_LEGACY_REDUCE_DTYPES),
    OpInfo("scatter_.reduce", _scatter_legacy_reduce_samples(False), ref=_ref_scatter_legacy_reduce,
           op=inplace("scatter_"), dtypes=_LEGACY_REDUCE_DTYPES),
    OpInfo("scatter_.value_reduce", _scatter_legacy_reduce_samples(True), ref=_ref_scatter_legacy_reduce,
           op=inplace("scatter_"), dtypes=_LEGACY_REDUCE_DTYPES),
    OpInfo("scatter_add", _scatter_add_samples, ref=_ref_scatter_add, dtypes=ALL_DTYPES),
    OpInfo("scatter_add_", _scatter_add_samples, ref=_ref_scatter_add, op=inplace("scatter_add_"),
           dtypes=ALL_DTYPES),
    OpInfo("index_add", _index_add_samples, ref=_ref_index_add, dtypes=ALL_DTYPES, errors=_index_add_errors),
    OpInfo("index_add_", _index_add_samples, ref=_ref_index_add, op=inplace("index_add_"), dtypes=ALL_DTYPES),
    OpInfo("embedding", _embedding_samples, ref=_ref_embedding, dtypes=ALL_DTYPES, errors=_embedding_errors),
]

from .indexing_more import OPS as _MORE  # noqa: E402

OPS += _MORE
