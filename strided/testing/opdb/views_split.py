"""OpInfos: narrowing views (narrow, select, slice) and the ops that cut a tensor into views."""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ..opinfo import ALL_DTYPES, OpInfo, SampleInput, make_arg
from .helpers import aliasing, err

__all__ = ["OPS"]


def _a(shape, d, rng, nc=False):
    return make_arg(shape, d, rng=rng, noncontiguous=nc)


def _f(shape=(2, 3)):
    return make_arg(shape, dt.float32)


def _take(a, dim, sl):
    return a[(slice(None),) * (dim % a.ndim) + (sl,)]


def _info(name, samples, ref, errors):
    return OpInfo(name, samples, ref=ref, op=aliasing(name), dtypes=ALL_DTYPES, errors=errors)


def _zero_dim_error(args, message, exc=RuntimeError):
    def errors(rng):
        yield err(args, exc, message)

    return errors


# ---------------------------------------------------------------------------- narrow / select / slice
def _narrow_samples(d, rng):
    x = _a((4, 5), d, rng)
    for dim, start, length in ((0, 1, 2), (-1, -3, 2), (1, 5, 0), (1, 0, 5)):
        yield SampleInput((x, dim, start, length), name=f"narrow {dim} {start} {length}")
    yield SampleInput((_a((4, 5), d, rng, nc=True), 1, 1, 3), name="noncontiguous")
    yield SampleInput((_a((0, 3), d, rng), 1, 1, 2), name="zero-size")


def _narrow_ref(a, dim, start, length):
    if start < 0:
        start += a.shape[dim]
    return _take(a, dim, slice(start, start + length))


def _narrow_errors(rng):
    x = _f((2, 3))
    yield err((x, 1, 0, -1), RuntimeError, "narrow(): length must be non-negative.")
    yield err((x, 1, 4, 1), IndexError, "start out of range (expected to be in range of [-3, 3], but got 4)")
    yield err((x, 1, 2, 2), RuntimeError, "start (2) + length (2) exceeds dimension size (3).")
    yield err((_f(()), 0, 0, 1), RuntimeError, "narrow() cannot be applied to a 0-dim tensor.")


def _select_samples(d, rng):
    x = _a((3, 4), d, rng)
    for dim, index in ((0, 1), (1, -1), (-1, 0)):
        yield SampleInput((x, dim, index), name=f"select {dim} {index}")
    yield SampleInput((_a((3, 4), d, rng, nc=True), 1, 2), name="noncontiguous")
    yield SampleInput((_a((3,), d, rng), 0, 2), name="to 0-dim")
    yield SampleInput((_a((0, 3), d, rng), 1, 0), name="zero-size")


def _select_errors(rng):
    yield err(
        (_f((3, 4)), 0, 5),
        IndexError,
        "select(): index 5 out of range for tensor of size [3, 4] at dimension 0",
    )
    yield err((_f(()), 0, 0), IndexError, "select() cannot be applied to a 0-dim tensor.")


def _slice_samples(d, rng):
    x = _a((5, 4), d, rng)
    for args in (
        (0, 1, 4, 2),
        (0, None, None),
        (0, -3, None),
        (1, 1, 100),
        (0, 4, 2),
        (1, None, None, 3),
        (),
    ):
        yield SampleInput((x, *args), name=f"slice {args}")
    yield SampleInput((_a((5, 4), d, rng, nc=True), 1, 1, None, 2), name="noncontiguous")
    yield SampleInput((_a((0, 3), d, rng), 0, 0, 2), name="zero-size")


def _slice_ref(a, dim=0, start=None, end=None, step=1):
    return _take(a, dim, slice(start, end, step))


def _slice_errors(rng):
    yield err((_f((3,)), 0, 0, 3, 0), RuntimeError, "slice step must be positive")
    yield err((_f(()), 0, 0, 1), RuntimeError, "slice() cannot be applied to a 0-dim tensor.")


# ---------------------------------------------------------------------------- split / chunk / unbind
def _pieces(a, dim, sizes):
    out, start = [], 0
    for s in sizes:
        out.append(_take(a, dim, slice(start, start + s)))
        start += s
    return out


def _split_samples(d, rng):
    x = _a((5, 4), d, rng)
    for split_size, dim in ((2, 0), (4, 1), (10, 0), (1, -1)):
        yield SampleInput((x, split_size, dim), name=f"split {split_size} dim {dim}")
    yield SampleInput((_a((5, 4), d, rng, nc=True), 3, 1), name="noncontiguous")
    yield SampleInput((_a((0, 4), d, rng), 2, 0), name="zero-size")
    yield SampleInput((_a((0, 4), d, rng), 0, 0), name="split size 0 of an empty dim")


def _split_ref(a, split_size, dim=0):
    n = a.shape[dim]
    if split_size == 0:
        return [a]
    count = max(-(-n // split_size), 1)
    return _pieces(a, dim, [split_size] * (count - 1) + [n - split_size * (count - 1)])


def _split_errors(rng):
    x = _f((2, 3))
    yield err((x, -1), RuntimeError, "split expects split_size be non-negative, but got split_size=-1")
    yield err(
        (x, 0), RuntimeError, "split_size can only be 0 if dimension size is 0, but got dimension size of 2"
    )
    yield err((_f(()), 1), RuntimeError, "split expects at least a 1-dimensional tensor")


def _split_with_sizes_samples(d, rng):
    x = _a((5, 4), d, rng)
    yield SampleInput((x, (2, 3)), name="dim 0")
    yield SampleInput((x, (1, 0, 3), -1), name="with an empty piece")
    yield SampleInput((_a((5, 4), d, rng, nc=True), (4,), 1), name="noncontiguous")
    yield SampleInput((_a((0, 4), d, rng), (0, 0)), name="zero-size")


def _split_with_sizes_ref(a, split_sizes, dim=0):
    return _pieces(a, dim, split_sizes)


def _split_with_sizes_errors(rng):
    x = _f((2, 3))
    yield err(
        (x, (1, 1), 1),
        RuntimeError,
        "split_with_sizes expects split_sizes to sum exactly to 3 (input tensor's size at dimension 1), but "
        "got split_sizes=[1, 1]",
    )
    yield err(
        (x, (-1, 4), 1),
        RuntimeError,
        "split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes=[-1, 4]",
    )


def _chunk_samples(d, rng):
    x = _a((5, 4), d, rng)
    for chunks, dim in ((2, 0), (3, 1), (10, 0), (1, -1)):
        yield SampleInput((x, chunks, dim), name=f"chunk {chunks} dim {dim}")
    yield SampleInput((_a((5, 4), d, rng, nc=True), 2, 1), name="noncontiguous")
    yield SampleInput((_a((0, 4), d, rng), 3, 0), name="zero-size: `chunks` empty pieces")


def _chunk_ref(a, chunks, dim=0):
    n = a.shape[dim]
    size = -(-n // chunks)
    if size == 0 and n == 0:
        return _pieces(a, dim, [0] * chunks)
    return _split_ref(a, size, dim)


def _chunk_errors(rng):
    yield err((_f((2, 3)), 0), RuntimeError, "chunk expects `chunks` to be greater than 0, got: 0")
    yield err((_f(()), 1), RuntimeError, "chunk expects at least a 1-dimensional tensor")


def _unbind_samples(d, rng):
    x = _a((3, 4), d, rng)
    yield SampleInput((x,), name="dim 0")
    yield SampleInput((x, -1), name="dim -1")
    yield SampleInput((_a((3, 4), d, rng, nc=True), 1), name="noncontiguous")
    yield SampleInput((_a((0, 3), d, rng), 0), name="zero-size: no pieces")
    yield SampleInput((_a((2, 0), d, rng), 0), name="empty pieces")


def _unbind_ref(a, dim=0):
    return [np.take(a, i, axis=dim) for i in range(a.shape[dim])]


OPS = [
    _info("narrow", _narrow_samples, _narrow_ref, _narrow_errors),
    _info("select.int", _select_samples, lambda a, dim, i: np.take(a, i, axis=dim), _select_errors),
    _info("slice.Tensor", _slice_samples, _slice_ref, _slice_errors),
    _info("split.Tensor", _split_samples, _split_ref, _split_errors),
    _info("split_with_sizes", _split_with_sizes_samples, _split_with_sizes_ref, _split_with_sizes_errors),
    _info("chunk", _chunk_samples, _chunk_ref, _chunk_errors),
    _info(
        "unbind.int",
        _unbind_samples,
        _unbind_ref,
        _zero_dim_error((_f(()), 0), "Dimension specified as 0 but tensor has no dimensions", IndexError),
    ),
]
