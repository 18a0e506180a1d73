"""OpInfos: view ops (this module also gathers ``views_squeeze``, ``views_split`` and ``views_copies`` into OPS).

Every view op runs through ``aliasing``: on every backend (meta included) the result must share
the input's storage and name the input's root as ``_base`` -- a view never moves data.
"""

from __future__ import annotations

import numpy as np

from ..opinfo import ALL_DTYPES, OpInfo, SampleInput
from .helpers import err
from .views_common import _a, _dim_error, _f, _info, _ints
from .views_copies import OPS as COPY_OPS
from .views_split import OPS as SPLIT_OPS
from .views_squeeze import OPS as SQUEEZE_OPS


# ---------------------------------------------------------------------------- view / reshape
def _view_samples(d, rng):
    x = _a((2, 3, 4), d, rng)
    for size in ((6, 4), (-1,), (4, -1, 2), (2, 12), 24):
        yield SampleInput((x, size), name=f"view {size}")
    yield SampleInput((_a((2, 6), d, rng, nc=True), (2, 3, 2)), name="split a strided dim")
    yield SampleInput((_a((), d, rng), (1, 1)), name="0-dim")
    yield SampleInput((_a((3,), d, rng).select(0, 1), ()), name="0-dim view of a view")
    yield SampleInput((_a((0, 3), d, rng), (3, -1)), name="zero-size")


def _view_ref(a, size):
    return np.reshape(a, _ints(size))


def _view_errors(rng):
    yield err(
        (_f((2, 3)).t(), (-1,)),
        RuntimeError,
        "view size is not compatible with input tensor's size and stride (at least one dimension "
        "spans across two contiguous subspaces). Use .reshape(...) instead.",
    )
    yield from _shape_errors(rng)


def _shape_errors(rng):
    yield err((_f((6,)), (2, 5)), RuntimeError, "shape '[2, 5]' is invalid for input of size 6")
    yield err((_f((6,)), (-1, -1)), RuntimeError, "only one dimension can be inferred")
    yield err((_f((6,)), (2, -2)), RuntimeError, "invalid shape dimension -2")
    yield err((_f((0,)), (0, -1)), RuntimeError, "cannot reshape tensor of 0 elements into shape [0, -1]")


def _reshape_samples(d, rng):
    yield from _view_samples(d, rng)
    yield SampleInput((_a((3, 4), d, rng).t(), (-1,)), name="transposed: copies")
    yield SampleInput((_a((3, 4), d, rng, nc=True), (12,)), name="strided: copies")


def _reshape_check(result, sample):
    from ...ops.composite.views import compute_stride, infer_size

    x, shape = sample.args
    if result.device != x.device:
        return  # the check gets the CPU sample: sharing is only checkable on the CPU
    viewable = compute_stride(x._sizes, x._strides, infer_size(_ints(shape), x.numel())) is not None
    shares = result.untyped_storage() is x.untyped_storage()
    assert shares == viewable, (
        f"reshape: shares storage {shares}, but a view {'is' if viewable else 'is not'} possible"
    )


# ---------------------------------------------------------------------------- as_strided
def _as_strided_samples(d, rng):
    # as_strided addresses the *storage*: contiguous inputs at offset 0, so the reference can too
    x = _a((3, 4), d, rng)
    yield SampleInput((x, (2, 2), (1, 2)), name="transposing window")
    yield SampleInput((x, (2, 3), (4, 1), 1), name="storage offset")
    yield SampleInput((x, (3, 3), (0, 1)), name="overlapping (stride 0)")
    yield SampleInput((x, (), (), 11), name="0-dim")
    yield SampleInput((x, (0, 2), (1, 1)), name="zero-size")


def _as_strided_ref(a, size, stride, storage_offset=None):
    flat = np.ascontiguousarray(a).reshape(-1)
    return np.lib.stride_tricks.as_strided(
        flat[storage_offset or 0 :], shape=size, strides=[s * flat.itemsize for s in stride]
    )


def _as_strided_errors(rng):
    x = _f((2, 3))
    yield err(
        (x, (3, 3), (3, 1)),
        RuntimeError,
        "setStorage: sizes [3, 3], strides [3, 1], storage offset 0, and itemsize 4 requiring a storage "
        "size of 36 are out of bounds for storage of size 24",
    )
    yield err((x, (3,), (-1,)), RuntimeError, "as_strided: Negative strides are not supported at the moment")
    yield err((x, (2,), (1,), -1), RuntimeError, "Tensor: invalid storage offset -1")
    yield err((x, (3, 3), (1,)), RuntimeError, "mismatch in length of strides and shape")


# ---------------------------------------------------------------------------- reordering dims
def _transpose_samples(d, rng):
    x = _a((2, 3, 4), d, rng)
    for dims in ((0, 2), (-1, 0), (1, 1)):
        yield SampleInput((x, *dims), name=f"transpose {dims}")
    yield SampleInput((_a((3, 4), d, rng, nc=True), 0, 1), name="noncontiguous")
    yield SampleInput((_a((), d, rng), 0, -1), name="0-dim")
    yield SampleInput((_a((0, 3), d, rng), 0, 1), name="zero-size")


def _t_samples(d, rng):
    yield SampleInput((_a((2, 3), d, rng),), name="2-d")
    yield SampleInput((_a((2, 3), d, rng, nc=True),), name="noncontiguous")
    yield SampleInput((_a((3,), d, rng),), name="1-d")
    yield SampleInput((_a((), d, rng),), name="0-dim")
    yield SampleInput((_a((0, 3), d, rng),), name="zero-size")


def _permute_samples(d, rng):
    x = _a((2, 3, 4), d, rng)
    yield SampleInput((x, (2, 0, 1)), name="permute")
    yield SampleInput((x, (-1, 0, 1)), name="negative dims")
    yield SampleInput((_a((3, 4), d, rng, nc=True), (1, 0)), name="noncontiguous")
    yield SampleInput((_a((5,), d, rng), 0), name="bare int")
    yield SampleInput((_a((), d, rng), ()), name="0-dim")
    yield SampleInput((_a((0, 3), d, rng), (1, 0)), name="zero-size")


def _permute_errors(rng):
    x = _f((2, 3))
    yield err(
        (x, (0, 1, 2)),
        RuntimeError,
        "number of dimensions in the tensor input does not match the length of the desired ordering of "
        "dimensions i.e. input.dim() = 2 is not equal to len(dims) = 3",
    )
    yield err((x, (0, 0)), RuntimeError, "permute(): duplicate dims are not allowed.")
    yield err(
        (x, (0, 2)), IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got 2)"
    )


def _movedim_samples(d, rng):
    x = _a((2, 3, 4), d, rng)
    for src, dst in (((0,), (2,)), ((0, 1), (2, 0)), (0, -1), ((), ())):
        yield SampleInput((x, src, dst), name=f"movedim {src}->{dst}")
    yield SampleInput((_a((3, 4), d, rng, nc=True), 1, 0), name="noncontiguous")
    yield SampleInput((_a((), d, rng), 0, 0), name="0-dim")
    yield SampleInput((_a((0, 3, 1), d, rng), 0, 2), name="zero-size")


def _movedim_errors(rng):
    x = _f((2, 3, 4))
    yield err(
        (x, (0, 1), (0,)),
        RuntimeError,
        "movedim: Invalid source or destination dims: source ([0, 1] dims) should contain the same number "
        "of dims as destination ([0] dims)",
    )
    yield err((x, (0, 0), (0, 1)), RuntimeError, "movedim: repeated dim in `source` ([0, 0])")
    yield err((x, (0, 1), (1, 1)), RuntimeError, "movedim: repeated dim in `destination` ([1, 1])")


# ---------------------------------------------------------------------------- broadcasting views
def _expand_samples(d, rng):
    yield SampleInput((_a((3, 1), d, rng), (2, 3, 4)), name="new and size-1 dims")
    yield SampleInput((_a((3,), d, rng, nc=True), (2, -1)), name="noncontiguous, -1 keeps")
    yield SampleInput((_a((1,), d, rng), (0,)), name="to zero-size")
    yield SampleInput((_a((), d, rng), (2, 3)), name="0-dim")
    yield SampleInput((_a((2,), d, rng), 2), name="same size (bare int)")


def _expand_ref(a, size, implicit=False):
    size = _ints(size)
    lead = len(size) - a.ndim
    return np.broadcast_to(a, tuple(a.shape[i - lead] if s == -1 else s for i, s in enumerate(size)))


def _expand_errors(rng):
    yield err(
        (_f((3,)), (2, 4)),
        RuntimeError,
        "The expanded size of the tensor (4) must match the existing size (3) at non-singleton dimension 1.  "
        "Target sizes: [2, 4].  Tensor sizes: [3]",
    )
    yield err(
        (_f((2, 3)), (3,)),
        RuntimeError,
        "the number of sizes provided (1) must be greater or equal to the number of dimensions in the "
        "tensor (2)",
    )
    yield err(
        (_f((3,)), (-1, 3)),
        RuntimeError,
        "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension 0",
    )


def _expand_as_samples(d, rng):
    yield SampleInput((_a((3, 1), d, rng), _a((2, 3, 4), d, rng)), name="expand_as")
    yield SampleInput((_a((4,), d, rng, nc=True), _a((2, 4), d, rng)), name="noncontiguous")
    yield SampleInput((_a((), d, rng), _a((0, 2), d, rng)), name="0-dim to zero-size")


def _view_as_samples(d, rng):
    yield SampleInput((_a((2, 6), d, rng), _a((3, 4), d, rng)), name="view_as")
    yield SampleInput((_a((12,), d, rng), _a((2, 2, 3), d, rng)), name="to 3-D")
    yield SampleInput((_a((0, 3), d, rng), _a((3, 0), d, rng)), name="zero-size")


def _reshape_as_samples(d, rng):
    yield from _view_as_samples(d, rng)
    yield SampleInput((_a((3, 4), d, rng, nc=True), _a((12,), d, rng)), name="noncontiguous (a copy)")


def _broadcast_to_samples(d, rng):
    yield SampleInput((_a((3, 1), d, rng), (2, 3, 4)), name="broadcast_to")
    yield SampleInput((_a((4,), d, rng, nc=True), (2, 4)), name="noncontiguous")
    yield SampleInput((_a((), d, rng), (0, 2)), name="0-dim to zero-size")


def _broadcast_errors(rng):
    yield err(
        (_f((3,)), (2, 4)),
        RuntimeError,
        "The expanded size of the tensor (4) must match the existing size (3) at non-singleton dimension 1.",
    )


OPS = (
    [
        _info("view", _view_samples, _view_ref, _view_errors),
        OpInfo(
            "reshape",
            _reshape_samples,
            ref=_view_ref,
            dtypes=ALL_DTYPES,
            check=_reshape_check,
            errors=_shape_errors,
        ),
        _info("as_strided", _as_strided_samples, _as_strided_ref, _as_strided_errors),
        _info(
            "transpose.int",
            _transpose_samples,
            lambda a, d0, d1: np.swapaxes(a, d0, d1) if a.ndim else a,
            _dim_error(_f((2, 3, 4)), 0, 3),
        ),
        _info(
            "t",
            _t_samples,
            lambda a: a.T,
            lambda rng: iter(
                [
                    err(
                        (_f((2, 3, 4)),),
                        RuntimeError,
                        "t() expects a tensor with <= 2 dimensions, but self is 3D",
                    )
                ]
            ),
        ),
        _info("permute", _permute_samples, lambda a, dims: np.transpose(a, _ints(dims)), _permute_errors),
        _info(
            "movedim.intlist",
            _movedim_samples,
            lambda a, s, t: np.moveaxis(a, s, t) if a.ndim else a,
            _movedim_errors,
        ),
        _info("expand", _expand_samples, _expand_ref, _expand_errors),
        _info(
            "view_as",
            _view_as_samples,
            lambda a, b: np.reshape(a, b.shape),
            lambda rng: iter([err((_f((2, 3)).t(), _f((6,))), RuntimeError, "view size is not compatible"),
                              err((_f((2, 3)), _f((4,))), RuntimeError, "shape '[4]' is invalid for input of size 6")]),
        ),
        OpInfo(
            "reshape_as",
            _reshape_as_samples,
            ref=lambda a, b: np.reshape(a, b.shape),
            dtypes=ALL_DTYPES,
            errors=lambda rng: iter([err((_f((2, 3)), _f((4,))), RuntimeError,
                                         "shape '[4]' is invalid for input of size 6")]),
        ),
        _info(
            "expand_as",
            _expand_as_samples,
            lambda a, b: np.broadcast_to(a, b.shape),
            lambda rng: iter([err((_f((3,)), _f((2, 4))), RuntimeError, "must match the existing size (3)")]),
        ),
        _info(
            "broadcast_to", _broadcast_to_samples, lambda a, size: np.broadcast_to(a, size), _broadcast_errors
        ),
    ]
    + SQUEEZE_OPS
    + SPLIT_OPS
    + COPY_OPS
)
