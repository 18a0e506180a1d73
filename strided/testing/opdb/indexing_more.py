"""OpInfos: advanced indexing (index.Tensor, index_put), sorting (sort, topk), tril/triu, one_hot.

Boolean-mask samples of ``index.Tensor`` are not here: a mask's result shape is data, which meta
tensors don't have; tests/backend/test_indexing.py covers masks (through ``x[mask]``).
"""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ..opinfo import ALL_DTYPES, FLOATING, INTEGRAL, OpInfo, SampleInput, make_arg
from .indexing_common import error, index_tensor, inplace

__all__ = ["OPS"]


# ---------------------------------------------------------------------------------------- index
def _key(indices):
    return tuple(slice(None) if i is None else np.asarray(i) for i in indices)


def _ref_index(a, indices):
    return a[_key(indices)]


def _index_samples(dtype, rng):
    x = make_arg((4, 5, 3), dtype, rng=rng, noncontiguous=True)
    yield SampleInput((x, [index_tensor([3, 0, -1, 3])]), {}, "dim 0, negative")
    yield SampleInput((x, [None, index_tensor([[4, 0], [1, 1]], dt.int32)]), {}, "2-d int32 index, dim 1")
    yield SampleInput((x, [index_tensor([0, 2]), index_tensor([[1], [4]], noncontiguous=True)]), {},
                      "broadcast, adjacent")
    yield SampleInput((x, [index_tensor([0, 2]), None, index_tensor([2, 1])]), {},
                      "separated: advanced first")
    yield SampleInput((x, [None, None, index_tensor(1)]), {}, "0-dim index")
    yield SampleInput((x, [None, index_tensor(np.zeros(0, np.int64))]), {}, "empty index")
    yield SampleInput((make_arg((0, 3), dtype, rng=rng), [None, index_tensor([2, 0])]), {}, "zero-size self")


def _index_errors(rng):
    x = make_arg((3, 4), rng=rng)
    yield error((x, [index_tensor([0]), None, None]), IndexError,
                "too many indices for tensor of dimension 2 (got 3)")
    yield error((x, [index_tensor([0.0], dt.float32)]), IndexError,
                "tensors used as indices must be long, int, byte or bool tensors")
    yield error((x, [index_tensor([0, 1]), index_tensor([0, 1, 2])]), IndexError,
                "shape mismatch: indexing tensors could not be broadcast together with shapes [2], [3]")
    yield error((x, [index_tensor([True, False], dt.bool)]), IndexError,
                "The shape of the mask [2] at index 0 does not match the shape of the indexed tensor [3, 4] "
                "at index 0")
    yield error((make_arg((0, 4), rng=rng), [index_tensor([1])]), IndexError,
                "index is out of bounds for dimension with size 0")


# ---------------------------------------------------------------------------------------- index_put
def _ref_index_put(a, indices, values, accumulate=False):
    out = np.array(a, copy=True)
    key = _key(indices)
    if accumulate:
        np.add.at(out, key, values)
    else:
        out[key] = values
    return out


def _index_put_samples(dtype, rng):
    def v(shape, **kw):
        return make_arg(shape, dtype, rng=rng, **kw)

    x = make_arg((4, 5), dtype, rng=rng, noncontiguous=True)
    yield SampleInput((x, [index_tensor([3, 0, -2])], v((3, 5))), {}, "rows")
    yield SampleInput((x, [None, index_tensor([4, 1], dt.int32)], v((2,))), {}, "broadcast value, int32")
    yield SampleInput((x, [index_tensor([0, 2]), index_tensor([[1], [4]])], v(())), {}, "0-dim value")
    yield SampleInput((x, [index_tensor(rng.random((4, 5)) < 0.5, dt.bool)], v(())), {}, "mask, 0-dim value")
    rows = index_tensor([True, False, True, True], dt.bool)
    yield SampleInput((x, [rows], v((5,), noncontiguous=True)), {}, "row mask, broadcast value")
    yield SampleInput((x, [index_tensor([3, 0, 3, 3])], v((4, 5))), {"accumulate": True},
                      "accumulate duplicates")
    yield SampleInput((x, [index_tensor([1, 1]), index_tensor([2, 2])], v((2,))), {"accumulate": True},
                      "accumulate, same element")
    yield SampleInput((make_arg((0, 3), dtype, rng=rng), [None, index_tensor([1])], v((1,))), {}, "zero-size")


def _index_put_errors(rng):
    x = make_arg((3, 4), rng=rng)
    idx = [index_tensor([0, 0])]
    yield error((x, idx, make_arg((), dt.float64, rng=rng)), RuntimeError,
                "Index put requires the source and destination dtypes match, got Float for the destination "
                "and Double for the source.")
    yield error((x, idx, make_arg((3,), rng=rng)), RuntimeError,
                "shape mismatch: value tensor of shape [3] cannot be broadcast to indexing result of shape "
                "[2, 4]")


# ---------------------------------------------------------------------------------------- sort / topk
def _ref_order(a, dim, descending):
    """Stable order, NaN greatest (torch): lexsort on (NaN last, value, position)."""
    a = np.moveaxis(np.atleast_1d(a).astype(np.float64), dim, -1)
    nan = np.isnan(a)
    value = np.where(nan, 0.0, a)
    pos = np.broadcast_to(np.arange(a.shape[-1]), a.shape)
    keys = (pos, -value, ~nan) if descending else (pos, value, nan)
    return np.moveaxis(np.lexsort(keys, axis=-1), -1, dim)


def _ref_sort(a, dim=-1, descending=False, stable=None):
    idx = _ref_order(a, dim, descending)
    values = np.take_along_axis(np.atleast_1d(a), idx, dim)
    return values.reshape(np.shape(a)), idx.reshape(np.shape(a))


def _ref_sort_stable(a, *, stable, dim=-1, descending=False):
    return _ref_sort(a, dim, descending)


def _sort_samples(stable: bool):
    def samples(dtype, rng):
        kw = {"stable": True} if stable else {}
        x = make_arg((4, 6), dtype, rng=rng, low=-3, high=3)  # ties
        yield SampleInput((make_arg((4, 6), dtype, rng=rng, noncontiguous=True),), dict(kw), "last dim")
        yield SampleInput((x,), dict(kw, dim=0, descending=True), "dim 0, descending, ties")
        yield SampleInput((x.t(),), dict(kw, dim=-1, descending=False), "transposed, ties")
        yield SampleInput((make_arg((), dtype, rng=rng),), dict(kw), "0-dim")
        yield SampleInput((make_arg((3, 0), dtype, rng=rng),), dict(kw, dim=1), "zero-size")
        if dtype.is_floating_point:
            v = index_tensor([3.0, np.nan, 1.0, 3.0, -0.0, 0.0, np.nan, 1.0], dtype)
            yield SampleInput((v,), dict(kw), "NaN last, -0 == 0")
            yield SampleInput((v,), dict(kw, descending=True), "NaN first descending")
    return samples


def _ref_topk(a, k, dim=-1, largest=True, sorted=True):
    idx = _ref_order(a, dim, largest)
    idx = np.take(idx, np.arange(k), axis=dim if np.ndim(a) else 0)
    values = np.take_along_axis(np.atleast_1d(a), idx, dim)
    shape = np.shape(values) if np.ndim(a) else ()
    return values.reshape(shape), idx.reshape(shape)


def _distinct(shape, dtype, rng, noncontiguous=False):
    """Distinct values (exact in every dtype), so topk's choice among ties never matters."""
    n = int(np.prod(shape))
    return index_tensor((rng.permutation(n) - n // 2).reshape(shape) if dtype.is_signed
                        else rng.permutation(n).reshape(shape), dtype, noncontiguous)


def _topk_samples(dtype, rng):
    x = _distinct((4, 6), dtype, rng, noncontiguous=True)
    yield SampleInput((x, 3), {}, "largest")
    yield SampleInput((x, 2, 0, False), {}, "smallest, dim 0")
    yield SampleInput((x.t(), 4), {"dim": 0, "sorted": True}, "transposed")
    yield SampleInput((x, 6), {}, "k = size")
    yield SampleInput((x, 0), {}, "k = 0")
    yield SampleInput((_distinct((), dtype, rng), 1), {}, "0-dim")
    yield SampleInput((make_arg((3, 0), dtype, rng=rng), 0), {}, "zero-size")
    if dtype.is_floating_point:
        v = index_tensor([3.0, np.nan, 1.0, 2.0, -4.0], dtype)
        yield SampleInput((v, 2), {}, "NaN is the largest")
        yield SampleInput((v, 2), {"largest": False}, "NaN is not the smallest")


def _topk_errors(rng):
    x = make_arg((3, 4), rng=rng)
    yield error((x, 5), RuntimeError, "selected index k out of range")
    yield error((x, -1), RuntimeError, "selected index k out of range")
    yield error((make_arg((), rng=rng), 2), RuntimeError, "selected index k out of range")
    yield error((x, 1, 2), IndexError,
                "Dimension out of range (expected to be in range of [-2, 1], but got 2)")


# ---------------------------------------------------------------------------------------- tril / triu
def _triangle_samples(dtype, rng):
    yield SampleInput((make_arg((3, 4), dtype, rng=rng),), {}, "default")
    yield SampleInput((make_arg((4, 3), dtype, rng=rng, noncontiguous=True), 1), {}, "noncontig, above")
    yield SampleInput((make_arg((2, 3, 4), dtype, rng=rng).permute(0, 2, 1), -1), {}, "batched, permuted")
    yield SampleInput((make_arg((3, 3), dtype, rng=rng), -10), {}, "far below")
    yield SampleInput((make_arg((0, 3), dtype, rng=rng), 2), {}, "zero-size")


def _triangle_errors(name):
    def errors(rng):
        yield error((make_arg((3,), rng=rng),), RuntimeError,
                    f"{name}: input tensor must have at least 2 dimensions")
    return errors


# ---------------------------------------------------------------------------------------- one_hot
def _ref_one_hot(a, num_classes=-1):
    n = int(a.max()) + 1 if num_classes == -1 else num_classes
    return (a[..., None] == np.arange(n)).astype(np.int64)


def _one_hot_samples(dtype, rng):
    yield SampleInput((index_tensor(rng.integers(0, 4, (2, 3)), noncontiguous=True), 5), {}, "2-d")
    yield SampleInput((index_tensor(rng.integers(0, 4, (6,))), 4), {}, "exact count")
    yield SampleInput((index_tensor(2), 3), {}, "0-dim")
    yield SampleInput((index_tensor(np.zeros((0, 2), np.int64)), 3), {}, "empty")


def _one_hot_errors(rng):
    yield error((index_tensor([0, 1], dt.int32), 3), RuntimeError,
                "one_hot is only applicable to index tensor of type LongTensor.")
    yield error((index_tensor(np.zeros(0, np.int64)),), RuntimeError,
                "Can not infer total number of classes from empty tensor.")
    yield error((index_tensor([1]), 0), RuntimeError, "Class values must be smaller than num_classes.")


NO_BOOL = FLOATING + INTEGRAL

OPS = [
    OpInfo("index.Tensor", _index_samples, ref=_ref_index, dtypes=ALL_DTYPES, errors=_index_errors),
    OpInfo("index_put", _index_put_samples, ref=_ref_index_put, dtypes=ALL_DTYPES, errors=_index_put_errors),
    OpInfo("index_put_", _index_put_samples, ref=_ref_index_put, op=inplace("index_put_"), dtypes=ALL_DTYPES),
    OpInfo("sort", _sort_samples(False), ref=_ref_sort, dtypes=ALL_DTYPES),
    OpInfo("sort.stable", _sort_samples(True), ref=_ref_sort_stable, dtypes=ALL_DTYPES),
    OpInfo("topk", _topk_samples, ref=_ref_topk, dtypes=NO_BOOL, errors=_topk_errors),
    OpInfo("tril", _triangle_samples, ref=lambda a, diagonal=0: np.tril(a, diagonal), dtypes=ALL_DTYPES,
           errors=_triangle_errors("tril")),
    OpInfo("triu", _triangle_samples, ref=lambda a, diagonal=0: np.triu(a, diagonal), dtypes=ALL_DTYPES,
           errors=_triangle_errors("triu")),
    OpInfo("tril_", _triangle_samples, ref=lambda a, diagonal=0: np.tril(a, diagonal), op=inplace("tril_"),
           dtypes=ALL_DTYPES),
    OpInfo("triu_", _triangle_samples, ref=lambda a, diagonal=0: np.triu(a, diagonal), op=inplace("triu_"),
           dtypes=ALL_DTYPES),
    OpInfo("one_hot", _one_hot_samples, ref=_ref_one_hot, dtypes=(dt.int64,), errors=_one_hot_errors),
]
