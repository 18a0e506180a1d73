"""OpInfos: copies and storage ops (contiguous, clone, copy_, _to_copy, detach, resize_, set_, item)."""

from __future__ import annotations

import itertools

import numpy as np

from ... import dtypes as dt
from ...ops import bound
from ...tensor import channels_last_strides, contiguous_strides
from ..opinfo import ALL_DTYPES, OpInfo, SampleInput, make_arg
from .helpers import err

__all__ = ["OPS"]


def _a(shape, d, rng, nc=False, low=None):
    return make_arg(shape, d, rng=rng, noncontiguous=nc, low=low)


def _f(shape=(2, 3)):
    return make_arg(shape, dt.float32)


def _same(a, *args, **kwargs):
    return a


def _shares(result, x) -> bool:
    return result.untyped_storage() is x.untyped_storage()


# ---------------------------------------------------------------------------- contiguous / clone
def _contiguous_samples(d, rng):
    yield SampleInput((_a((2, 3), d, rng),), name="already contiguous: self")
    yield SampleInput((_a((2, 3), d, rng, nc=True),), name="noncontiguous")
    yield SampleInput((_a((3, 4), d, rng).t(),), name="transposed")
    yield SampleInput((_a((2, 3, 2, 2), d, rng),), {"memory_format": "channels_last"}, "channels_last")
    yield SampleInput((_a((), d, rng),), name="0-dim")
    yield SampleInput((_a((0, 3), d, rng).t(),), name="zero-size")


def _contiguous_check(result, sample):
    x = sample.args[0]
    fmt = sample.kwargs.get("memory_format", "contiguous_format")
    assert result.is_contiguous(memory_format=fmt), f"contiguous({fmt}) returned strides {result.stride()}"
    if result.device != x.device:
        return  # the check gets the CPU sample: identity is only checkable on the CPU
    if x.is_contiguous(memory_format=fmt):
        assert result is x, "contiguous() of a contiguous tensor must return the tensor itself"
    else:
        assert not _shares(result, x), "contiguous() of a non-contiguous tensor must copy"


def _contiguous_errors(rng):
    yield err(
        (_f((2, 3, 4)),),
        RuntimeError,
        "required rank 4 tensor to use channels_last format",
        {"memory_format": "channels_last"},
    )
    yield err(
        (_f((2, 3)).t(),),
        RuntimeError,
        "preserve memory format is unsupported by the contiguous operator",
        {"memory_format": "preserve_format"},
    )


def _clone_samples(d, rng):
    yield SampleInput((_a((2, 3), d, rng),), name="contiguous")
    yield SampleInput((_a((2, 3), d, rng, nc=True),), name="noncontiguous")
    yield SampleInput((_a((3, 4), d, rng).t(),), {"memory_format": "preserve_format"}, "transposed, preserve")
    yield SampleInput(
        (_a((3, 4), d, rng).t(),), {"memory_format": "contiguous_format"}, "transposed, contiguous"
    )
    yield SampleInput((_a((2, 3, 2, 2), d, rng),), {"memory_format": "channels_last"}, "channels_last")
    yield SampleInput((_a((), d, rng),), name="0-dim")
    yield SampleInput((_a((0, 3), d, rng),), name="zero-size")


def _clone_check(result, sample):
    x = sample.args[0]
    assert not _shares(result, x), "clone() must not share storage with its input"
    fmt = sample.kwargs.get("memory_format") or "preserve_format"
    if fmt == "channels_last":
        assert result.stride() == channels_last_strides(x.shape)
    elif fmt == "contiguous_format" or not x._is_non_overlapping_and_dense():
        assert result.stride() == contiguous_strides(x.shape)
    else:
        assert result.stride() == x.stride(), "clone(preserve_format) keeps a dense input's strides"


# ---------------------------------------------------------------------------- copy_ / _to_copy / detach
def _copy_samples(d, rng):
    def dst(shape):
        return bound.zeros(shape, dtype=d)

    yield SampleInput((dst((2, 3)), _a((2, 3), d, rng, nc=True)), name="noncontiguous source")
    yield SampleInput((dst((3, 2)), _a((2, 3), d, rng).t()), name="transposed source")
    yield SampleInput((dst((2, 3)).t(), _a((3, 2), d, rng)), name="transposed destination")
    yield SampleInput((dst((2, 3)), _a((3,), d, rng)), name="broadcast source")
    yield SampleInput((dst((2, 3)), _a((2, 3), dt.int64, rng, low=0)), name="cast from int64")
    yield SampleInput((dst(()), _a((), d, rng)), name="0-dim")
    yield SampleInput((dst((0, 3)), _a((3,), d, rng)), name="zero-size")


def _copy_ref(dst, src, non_blocking=False):
    return np.broadcast_to(src, dst.shape)


def _copy_errors(rng):
    yield err(
        (_f((3,)), _f((4,))),
        RuntimeError,
        "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 0",
    )
    yield err(
        (_f((2,)), _f((2, 2))), RuntimeError, "output with shape [2] doesn't match the broadcast shape [2, 2]"
    )


def _to_copy_samples(d, rng):
    yield SampleInput((_a((2, 3), d, rng),), name="same dtype")
    yield SampleInput((_a((2, 3), d, rng, nc=True),), {"dtype": dt.float64}, "to float64")
    yield SampleInput((_a((2, 3), d, rng, low=0),), {"dtype": dt.int32}, "to int32")
    yield SampleInput((_a((2, 3), d, rng),), {"dtype": dt.bool}, "to bool")
    yield SampleInput((_a((3, 4), d, rng).t(),), {"memory_format": "contiguous_format"}, "contiguous copy")
    yield SampleInput((_a((), d, rng),), {"dtype": dt.float64}, "0-dim")
    yield SampleInput((_a((0, 3), d, rng),), {"dtype": dt.int64}, "zero-size")


def _to_copy_check(result, sample):
    x = sample.args[0]
    assert not _shares(result, x), "_to_copy must copy"
    assert result.dtype is sample.kwargs.get("dtype", x.dtype)
    if sample.kwargs.get("memory_format") == "contiguous_format":
        assert result.is_contiguous()


def _detach_samples(d, rng):
    yield SampleInput((_a((2, 3), d, rng),), name="contiguous")
    yield SampleInput((_a((2, 3), d, rng, nc=True),), name="noncontiguous")
    yield SampleInput((_a((), d, rng),), name="0-dim")
    yield SampleInput((_a((0, 3), d, rng),), name="zero-size")


def _detach(x):
    out = bound.detach(x)
    assert _shares(out, x) and out.stride() == x.stride() and out.storage_offset() == x.storage_offset()
    assert not out.requires_grad and out.grad_fn is None
    return out


# ---------------------------------------------------------------------------- resize_ / set_ / item
def _resize(x, size, **kwargs):
    """resize_ on a copy, so the sample (reused for every backend) keeps its shape."""
    return bound.clone(x, memory_format="contiguous_format").resize_(size, **kwargs)


def _resize_samples(d, rng):
    yield SampleInput((_a((2, 3), d, rng), (4, 5)), name="grow")
    yield SampleInput((_a((2, 3), d, rng, nc=True), (5,)), name="shrink")
    yield SampleInput((_a((2, 3), d, rng), (3, 2)), name="same numel")
    yield SampleInput(
        (_a((2, 3, 2, 2), d, rng), (2, 3, 2, 2)), {"memory_format": "channels_last"}, "channels_last"
    )
    yield SampleInput((_a((), d, rng), (3,)), name="0-dim")
    yield SampleInput((_a((0, 3), d, rng), (2, 2)), name="from zero-size")


def _resize_check(result, sample):
    x, size = sample.args
    fmt = sample.kwargs.get("memory_format")
    assert tuple(result.shape) == tuple(size)
    assert result.stride() == (
        channels_last_strides(size) if fmt == "channels_last" else contiguous_strides(size)
    )
    if fmt is None:
        keep = min(x.numel(), result.numel())  # resize_ keeps the leading elements of the storage
        got, want = result.numpy(force=True).reshape(-1)[:keep], x.numpy().reshape(-1)[:keep]
        np.testing.assert_array_equal(got, want, err_msg="resize_ must keep the existing elements")


def _set(x, storage_offset, size, stride=()):
    """A fresh tensor set_ onto ``x``'s storage."""
    out = bound.empty((0,), dtype=x.dtype, device=x.device).set_(
        x.untyped_storage(), storage_offset, size, stride
    )
    assert _shares(out, x), "set_ must make the tensor use the given storage"
    return out


def _set_samples(d, rng):
    x = _a((3, 4), d, rng)  # contiguous at offset 0: the reference addresses the storage as x's data
    yield SampleInput((x, 0, (3, 4), (4, 1)), name="same layout")
    yield SampleInput((x, 2, (2, 3), (1, 2)), name="offset, transposed")
    yield SampleInput((x, 1, (5,)), name="default strides")
    yield SampleInput((x, 11, ()), name="0-dim")
    yield SampleInput((x, 0, (0, 2)), name="zero-size")


def _set_ref(a, storage_offset, size, stride=()):
    flat = np.ascontiguousarray(a).reshape(-1)
    stride = stride or contiguous_strides(size)
    return np.lib.stride_tricks.as_strided(
        flat[storage_offset:], shape=size, strides=[s * flat.itemsize for s in stride]
    )


def _set_errors(rng):
    x = _f((2, 3))
    yield err(
        (x, 0, (3, 3), (3, 1)), RuntimeError, "setStorage: sizes [3, 3], strides [3, 1], storage offset 0"
    )
    yield err((x, -1, (2,), (1,)), RuntimeError, "Tensor: invalid storage offset -1")
    yield err((x, 0, (2,), (-1,)), RuntimeError, "Negative strides are not supported")


def _set_storage(x):
    """``t.set_(storage)``: a fresh tensor over ``x``'s whole storage, flat."""
    out = bound.empty((0,), dtype=x.dtype, device=x.device).set_(x.untyped_storage())
    assert _shares(out, x), "set_ must make the tensor use the given storage"
    return out


def _set_tensor(x):
    """``t.set_(other)``: a fresh tensor viewing ``x`` (its storage, offset, sizes and strides)."""
    out = bound.empty((0,), dtype=x.dtype, device=x.device).set_(x)
    assert _shares(out, x) and out.stride() == x.stride() and out.storage_offset() == x.storage_offset()
    return out


def _set_empty(x):
    """``t.set_()``: ``x``'s copy given an empty storage of its own."""
    out = bound.clone(x).set_()
    assert out.untyped_storage().nbytes() == 0
    return out


def _set_views_samples(d, rng):
    x = _a((3, 4), d, rng)
    yield SampleInput((x,), name="contiguous")
    yield SampleInput((x.t(),), name="transposed")
    yield SampleInput((x[1:, ::2],), name="offset, strided")


def _item(x):
    """``_local_scalar_dense`` (Tensor.item): meta tensors hold no value, so the op must refuse them."""
    if x.device.type == "meta":
        try:
            bound._local_scalar_dense(x)
        except NotImplementedError:
            return None
        raise AssertionError("_local_scalar_dense of a meta tensor must fail: it has no data")
    return bound._local_scalar_dense(x)


def _item_samples(d, rng):
    yield SampleInput((_a((), d, rng),), name="0-dim")
    yield SampleInput((_a((1, 1), d, rng),), name="one element")
    yield SampleInput((_a((3, 4), d, rng, nc=True).select(1, 2).select(0, 1),), name="view with an offset")


def _item_check(result, sample):
    d = sample.args[0].dtype
    assert type(result) is (bool if d is dt.bool else float if d.is_floating_point else int)


OPS = [
    OpInfo(
        "contiguous",
        _contiguous_samples,
        ref=_same,
        dtypes=ALL_DTYPES,
        check=_contiguous_check,
        errors=_contiguous_errors,
    ),
    OpInfo("clone", _clone_samples, ref=_same, dtypes=ALL_DTYPES, check=_clone_check),
    OpInfo("copy_", _copy_samples, ref=_copy_ref, dtypes=ALL_DTYPES, errors=_copy_errors),
    OpInfo("_to_copy", _to_copy_samples, ref=_same, dtypes=ALL_DTYPES, check=_to_copy_check),
    OpInfo("detach", _detach_samples, ref=_same, op=_detach, dtypes=ALL_DTYPES),
    OpInfo(
        "resize_",
        _resize_samples,
        op=_resize,
        dtypes=ALL_DTYPES,
        check=_resize_check,
        errors=lambda rng: iter(
            [
                err(
                    (_f((2,)), (-1, 2)),
                    RuntimeError,
                    "Trying to create tensor with negative dimension -1: [-1, 2]",
                )
            ]
        ),
    ),
    OpInfo(
        "set_.source_Storage_storage_offset",
        _set_samples,
        ref=_set_ref,
        op=_set,
        dtypes=ALL_DTYPES,
        errors=_set_errors,
    ),
    # (their refusals: tests/backend/test_factories.py::test_set_overloads)
    OpInfo("set_.source_Storage", lambda d, rng: itertools.islice(_set_views_samples(d, rng), 1),
           ref=lambda a: np.ascontiguousarray(a).reshape(-1), op=_set_storage, dtypes=ALL_DTYPES),
    OpInfo("set_.source_Tensor", _set_views_samples, ref=lambda a: a, op=_set_tensor, dtypes=ALL_DTYPES),
    OpInfo("set_", lambda d, rng: itertools.islice(_set_views_samples(d, rng), 1), ref=lambda a: np.zeros(0, a.dtype),
           op=_set_empty, dtypes=ALL_DTYPES),
    OpInfo(
        "_local_scalar_dense",
        _item_samples,
        ref=lambda a: a.reshape(-1)[0].item(),
        op=_item,
        dtypes=ALL_DTYPES,
        check=_item_check,
    ),
]
