"""OpInfos: the indexing compositions (``ops/composite/indexing_more.py``, scatter_reduce's kernels).

Errors here are the ones metadata decides (they raise on meta too); out-of-range indices and mask counts
are data, checked in tests/backend/test_math_indexing_counting.py."""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ..opinfo import ALL_DTYPES, OpInfo, SampleInput, make_arg
from .indexing_common import inplace
from .pointwise_samples import error, tensor_of

__all__ = ["OPS"]

_NO_BOOL = tuple(d for d in ALL_DTYPES if d is not dt.bool)
_SR_DTYPES = (dt.float32, dt.float64, dt.int64, dt.int32)


def _idx(values):
    return tensor_of(values, dt.int64)


def _a(shape, d, rng, **kw):
    return make_arg(shape, d, rng=rng, **kw)


def _index_fill_samples(tensor_value):
    def samples(d, rng):
        def v(x):
            return tensor_of(x, d) if tensor_value else (bool(x) if d is dt.bool else x)

        yield SampleInput((_a((3, 4), d, rng), 1, _idx([0, 3, -1]), v(1)), name="dim 1, negative index")
        yield SampleInput((_a((4, 3), d, rng, noncontiguous=True), 0, _idx(2), v(0)), name="0-dim index")
        yield SampleInput((_a((), d, rng), 0, _idx([0]), v(1)), name="0-dim self")
        yield SampleInput((_a((0, 3), d, rng), 1, _idx([1]), v(1)), name="zero-size")

    return samples


def _index_fill_ref(x, dim, index, value):
    out = np.array(x, copy=True)
    if out.ndim == 0:
        return np.asarray(value, out.dtype) + 0 * out
    idx = [slice(None)] * out.ndim
    idx[dim] = np.asarray(index).reshape(-1)
    out[tuple(idx)] = value
    return out


def _index_fill_errors(rng):
    x = _a((2, 3), dt.float32, rng)
    yield error((x, 1, tensor_of([1], dt.int32), 1.0), IndexError, "index_fill_(): Expected dtype int64 for index.")
    yield error((x, 1, _idx([[1]]), 1.0), RuntimeError, "Index has to be a vector/scalar")


def _index_copy_samples(d, rng):
    yield SampleInput((_a((3, 5), d, rng), 1, _idx([4, 0]), _a((3, 2), d, rng)), name="dim 1")
    yield SampleInput((_a((4, 2), d, rng, noncontiguous=True), 0, _idx([3, 1, 2]),
                       _a((3, 2), d, rng, noncontiguous=True)), name="noncontiguous")
    yield SampleInput((_a((3, 2), d, rng), 0, _idx(1), _a((1, 2), d, rng)), name="0-dim index")
    yield SampleInput((_a((0, 3), d, rng), 1, _idx([2]), _a((0, 1), d, rng)), name="zero-size")


def _index_copy_ref(x, dim, index, source):
    out = np.array(x, copy=True)
    idx = [slice(None)] * out.ndim
    idx[dim] = np.asarray(index).reshape(-1)
    out[tuple(idx)] = source
    return out


def _index_copy_errors(rng):
    x = _a((2, 3), dt.float32, rng)
    yield error((x, 1, _idx([1]), _a((2, 2), dt.float32, rng)), IndexError,
                "index_copy_(): Number of indices (1) should be equal to source.size(dim) (2)")
    yield error((x, 1, _idx([1]), _a((2, 1), dt.float64, rng)), RuntimeError,
                "index_copy_(): self and source expected to have the same dtype, but got (self) Float and (source) "
                "Double")


def _sr_samples(d, rng):
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            kw = {"include_self": include_self}
            yield SampleInput((_a((3, 4), d, rng, low=1, high=4), 0, make_arg((4, 4), dt.int64, low=0, high=3,
                                                                                rng=rng)[:2],
                               _a((2, 4), d, rng, low=1, high=4), reduce), kw, name=f"{reduce}, self {include_self}")
        yield SampleInput((_a((2, 5), d, rng, noncontiguous=True), 1, _idx([[4, 4, 0], [1, 1, 1]]),
                           _a((2, 3), d, rng), reduce), name=f"{reduce} dim 1, noncontiguous")
    yield SampleInput((_a((3,), d, rng), 0, _idx(np.zeros((0,), np.int64)), _a((0,), d, rng), "prod"),
                      name="empty index")
    if d.is_floating_point:
        yield SampleInput((tensor_of([1.0, 2.0], d), 0, _idx([0, 0, 1]), tensor_of([np.nan, 5.0, 1.0], d), "amax"),
                          name="NaN propagates")


def _sr_ref(x, dim, index, src, reduce, include_self=True):
    x = np.asarray(x)
    out = x.astype(np.float64)
    idx = np.asarray(index)
    src = np.asarray(src, np.float64)[tuple(slice(0, n) for n in idx.shape)]
    where = list(np.ix_(*(np.arange(n) for n in idx.shape)))
    where[dim] = idx
    where = tuple(where)
    if not include_self:
        out[where] = {"sum": 0, "mean": 0, "prod": 1, "amax": -np.inf, "amin": np.inf}[reduce]
    {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}[reduce].at(
        out, where, src)
    if reduce == "mean":
        count = np.full(out.shape, 1 if include_self else 0)
        np.add.at(count, where, 1)
        count = np.maximum(count, 1)
        out = out / count if x.dtype.kind == "f" else np.floor(out / count)
    return out


def _sr_errors(rng):
    s, src = _a((3,), dt.float32, rng), _a((4,), dt.float32, rng)
    yield error((s, 0, _idx([0, 1, 0]), src, "foo"), RuntimeError,
                "reduce argument must be either sum, prod, mean, amax or amin, got foo")
    yield error((s, 0, _idx([0, 1, 0]), src.to(dt.float64), "sum"), RuntimeError,
                "scatter(): Expected self.dtype to be equal to src.dtype")


def _ir_samples(d, rng):
    for reduce in ("prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            yield SampleInput((_a((3, 4), d, rng, low=1, high=4), 1, _idx([3, 0, 3]), _a((3, 3), d, rng, low=1, high=4),
                               reduce), {"include_self": include_self}, name=f"{reduce}, self {include_self}")
    yield SampleInput((_a((4, 2), d, rng, noncontiguous=True), 0, _idx([1]), _a((1, 2), d, rng), "amax"),
                      name="noncontiguous")


def _ir_ref(x, dim, index, source, reduce, include_self=True):
    x = np.asarray(x)
    source = np.asarray(source)
    shape = [1] * x.ndim
    shape[dim] = -1
    idx = np.broadcast_to(np.asarray(index).reshape(shape), source.shape)
    return _sr_ref(x, dim, idx, source, reduce, include_self)


def _ir_errors(rng):
    x = _a((2, 3), dt.float32, rng)
    yield error((x, 1, _idx([0]), _a((2, 1), dt.float32, rng), "sum"), RuntimeError,
                "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got sum.")


def _ms_samples(d, rng):
    mask = make_arg((3, 4), dt.bool, rng=rng)
    yield SampleInput((_a((3, 4), d, rng), mask, _a((12,), d, rng)), name="contiguous")
    yield SampleInput((_a((3, 4), d, rng, noncontiguous=True), make_arg((4,), dt.bool, rng=rng),
                       _a((4, 4), d, rng)), name="broadcast mask, 2-D source")
    yield SampleInput((_a((2, 3), d, rng), make_arg((2, 3), dt.bool, rng=rng).fill_(False), _a((0,), d, rng)),
                      name="no ones")
    yield SampleInput((_a((), d, rng), tensor_of(True, dt.bool), _a((2,), d, rng)), name="0-dim")


def _ms_ref(x, mask, source):
    x, mask = np.broadcast_arrays(np.asarray(x), np.asarray(mask))
    out = np.array(x, copy=True)
    out[mask] = np.asarray(source).reshape(-1)[:mask.sum()]
    return out


def _ms_errors(rng):
    x = _a((2, 3), dt.float32, rng)
    yield error((x, make_arg((3,), dt.uint8, rng=rng), _a((9,), dt.float32, rng)), RuntimeError,
                "masked_scatter_ only supports boolean masks, but got mask with dtype Byte")


def _take_samples(d, rng):
    yield SampleInput((_a((3, 4), d, rng), _idx([[0, 11], [-1, 5]])), name="2-D index, negative")
    yield SampleInput((_a((3, 4), d, rng, noncontiguous=True), _idx(7)), name="0-dim index")
    yield SampleInput((_a((3, 4), d, rng), _idx(np.zeros((0, 2), np.int64))), name="empty index")


def _take_errors(rng):
    x = _a((2, 3), dt.float32, rng)
    yield error((x, tensor_of([1], dt.int32)), RuntimeError, "take(): Expected a long tensor for index, but got Int")


def _put_samples(d, rng):
    yield SampleInput((_a((3, 4), d, rng), _idx([[0, 10], [-1, 5]]), _a((2, 2), d, rng)), name="2-D index")
    yield SampleInput((_a((3, 4), d, rng, noncontiguous=True), _idx([1, 1, 2]), _a((3,), d, rng), True),
                      name="accumulate duplicates")
    yield SampleInput((_a((2, 2), d, rng), _idx(np.zeros((0,), np.int64)), _a((0,), d, rng)), name="empty index")


def _put_ref(x, index, source, accumulate=False):
    out = np.array(x, copy=True).reshape(-1)
    idx, src = np.asarray(index).reshape(-1), np.asarray(source).reshape(-1)
    if accumulate:
        np.add.at(out, idx, src)
    else:
        out[idx] = src
    return out.reshape(np.shape(x))


def _put_errors(rng):
    x = _a((2, 3), dt.float32, rng)
    yield error((x, _idx([1, 2]), _a((3,), dt.float32, rng)), IndexError, "put_(): Expected source and index to have "
                "the same number of elements, but got source.numel() = 3, index.numel() = 2")


def _fill_diag_samples(d, rng):
    v = True if d is dt.bool else 2
    yield SampleInput((_a((3, 4), d, rng), v), name="wide")
    yield SampleInput((_a((7, 3), d, rng), v, True), name="tall, wrap")
    yield SampleInput((_a((7, 3), d, rng, noncontiguous=True), v), name="tall, noncontiguous")
    yield SampleInput((_a((3, 3, 3), d, rng), v), name="3-D")


def _fill_diag_ref(x, value, wrap=False):
    out = np.array(x, copy=True)
    np.fill_diagonal(out, value, wrap=wrap)
    return out


def _fill_diag_errors(rng):
    yield error((_a((3,), dt.float32, rng), 1), RuntimeError, "dimensions must larger than 1")
    yield error((_a((2, 3, 3), dt.float32, rng), 1), RuntimeError, "all dimensions of input must be of equal length")


def _fill_diagonal(self, *args):
    dst = self.clone()
    assert dst.fill_diagonal_(*args) is dst
    return dst


def _in_place(base: OpInfo, name: str, method: str) -> OpInfo:
    return OpInfo(name, base.samples, ref=base.ref, op=inplace(method), dtypes=base.dtypes, tolerances=base.tolerances)


_FILL_S = OpInfo("index_fill.int_Scalar", _index_fill_samples(False), ref=_index_fill_ref, dtypes=ALL_DTYPES,
                 errors=_index_fill_errors)
_FILL_T = OpInfo("index_fill.int_Tensor", _index_fill_samples(True), ref=_index_fill_ref, dtypes=ALL_DTYPES)
_COPY = OpInfo("index_copy", _index_copy_samples, ref=_index_copy_ref, dtypes=ALL_DTYPES, errors=_index_copy_errors)
_SR = OpInfo("scatter_reduce.two", _sr_samples, ref=_sr_ref, dtypes=_SR_DTYPES, errors=_sr_errors,
             covers=("_scatter_reduce_backward",), tolerances={dt.float32: (1e-5, 1e-4)})
_IR = OpInfo("index_reduce", _ir_samples, ref=_ir_ref, dtypes=_SR_DTYPES, errors=_ir_errors,
             tolerances={dt.float32: (1e-5, 1e-4)})
_MS = OpInfo("masked_scatter", _ms_samples, ref=_ms_ref, dtypes=ALL_DTYPES, errors=_ms_errors)
_PUT = OpInfo("put", _put_samples, ref=_put_ref, dtypes=_NO_BOOL, errors=_put_errors)

def _range_samples(d, rng):
    """Indices inside the range: the op returns nothing (tests/backend/test_index_range_checks.py raises)."""
    yield SampleInput((_idx([0, 2, -3, 1]), -3, 3, "index {index} out of range", "take"), name="negatives allowed")
    yield SampleInput((_idx([[0, 4], [1, 2]]), 0, 5, "index {index} out of range", "index_copy_", False), name="2-d")
    yield SampleInput((_idx([]), 0, 0, "never raised", "put_"), name="empty")


def _range_check(result, sample):
    assert result is None


OPS = [
    OpInfo("_check_index_range", _range_samples, check=_range_check, dtypes=(dt.int64,)),
    _FILL_S, _in_place(_FILL_S, "index_fill_.int_Scalar", "index_fill_"),
    _FILL_T, _in_place(_FILL_T, "index_fill_.int_Tensor", "index_fill_"),
    _COPY, _in_place(_COPY, "index_copy_", "index_copy_"),
    _SR, _in_place(_SR, "scatter_reduce_.two", "scatter_reduce_"),
    _IR, _in_place(_IR, "index_reduce_", "index_reduce_"),
    _MS, OpInfo("masked_scatter_", lambda d, rng: (s for s in _ms_samples(d, rng) if s.name != "0-dim"
                                                   and s.args[0].shape == s.args[1].shape), ref=_ms_ref,
                op=inplace("masked_scatter_"), dtypes=ALL_DTYPES),
    _PUT, _in_place(_PUT, "put_", "put_"),
    OpInfo("take", _take_samples, ref=lambda x, i: np.asarray(x).reshape(-1)[np.asarray(i)], dtypes=ALL_DTYPES,
           errors=_take_errors),
    OpInfo("fill_diagonal_", _fill_diag_samples, ref=_fill_diag_ref, op=_fill_diagonal, dtypes=ALL_DTYPES,
           errors=_fill_diag_errors),
]
