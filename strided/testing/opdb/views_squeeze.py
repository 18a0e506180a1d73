"""OpInfos: squeeze / unsqueeze / flatten / unflatten (gathered into ``views.OPS``); each runs through
``aliasing``, as every view op (see ``views``)."""

from __future__ import annotations

import numpy as np

from ..opinfo import ALL_DTYPES, OpInfo, SampleInput
from .helpers import err
from .views_common import _a, _dim_error, _f, _info, _ints

__all__ = ["OPS"]


def _squeeze_samples(d, rng):
    yield SampleInput((_a((1, 3, 1), d, rng),), name="squeeze")
    yield SampleInput((_a((1, 4), d, rng, nc=True),), name="noncontiguous")
    yield SampleInput((_a((), d, rng),), name="0-dim")
    yield SampleInput((_a((0, 1), d, rng),), name="zero-size")


def _squeeze_dims_samples(d, rng):
    x = _a((1, 3, 1), d, rng)
    for dims in ((0,), (0, 2), (-1,), (1,), 0, ()):
        yield SampleInput((x, dims), name=f"dims {dims}")
    yield SampleInput((_a((1, 4), d, rng, nc=True), (0,)), name="noncontiguous")
    yield SampleInput((_a((), d, rng), (0,)), name="0-dim")
    yield SampleInput((_a((0, 1), d, rng), (0, 1)), name="zero-size")


def _squeeze_dims_ref(a, dim):
    n = max(a.ndim, 1)
    dims = {d % n for d in _ints(dim)}
    return np.squeeze(a, axis=tuple(d for d in sorted(dims) if a.ndim and a.shape[d] == 1))


def _squeeze_dims_errors(rng):
    yield err(
        (_f((1, 3)), (2,)),
        IndexError,
        "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
    )
    yield err((_f((1, 3)), (0, 0)), RuntimeError, "dim 0 appears multiple times in the list of dims")


def _unsqueeze_samples(d, rng):
    x = _a((2, 3), d, rng)
    for dim in (0, 2, -1, -3):
        yield SampleInput((x, dim), name=f"dim {dim}")
    yield SampleInput((_a((2, 3), d, rng, nc=True), 1), name="noncontiguous")
    yield SampleInput((_a((), d, rng), -1), name="0-dim")
    yield SampleInput((_a((0, 3), d, rng), 1), name="zero-size")


def _unsqueeze_ref(a, dim):
    return np.expand_dims(a, dim if dim >= 0 else dim + a.ndim + 1)


def _flatten_samples(d, rng):
    x = _a((2, 3, 4), d, rng)
    for dims in ((), (1,), (0, 1), (-2, -1), (2, 2)):
        yield SampleInput((x, *dims), name=f"flatten {dims}")
    yield SampleInput((_a((2, 3, 4), d, rng, nc=True), 1), name="noncontiguous: copies")
    yield SampleInput((_a((), d, rng),), name="0-dim")
    yield SampleInput((_a((0, 3), d, rng),), name="zero-size")


def _flatten_ref(a, start_dim=0, end_dim=-1):
    if a.ndim == 0:
        return a.reshape(1)
    s, e = start_dim % a.ndim, end_dim % a.ndim
    return a.reshape(a.shape[:s] + (int(np.prod(a.shape[s : e + 1])),) + a.shape[e + 1 :])


def _unflatten_samples(d, rng):
    x = _a((2, 12), d, rng)
    for dim, sizes in ((1, (3, 4)), (1, (-1, 4)), (-1, (2, 2, 3)), (0, (2, 1))):
        yield SampleInput((x, dim, sizes), name=f"unflatten {dim} {sizes}")
    yield SampleInput((_a((2, 6), d, rng, nc=True), 1, (3, 2)), name="noncontiguous")
    yield SampleInput((_a((0, 4), d, rng), 1, (2, 2)), name="zero-size")


def _unflatten_ref(a, dim, sizes):
    dim %= a.ndim
    return a.reshape(a.shape[:dim] + tuple(sizes) + a.shape[dim + 1 :])


def _unflatten_errors(rng):
    x = _f((2, 3))
    yield err(
        (x, 1, (2, 2)),
        RuntimeError,
        "unflatten: Provided sizes [2, 2] don't multiply up to the size of dim 1 (3) in the input tensor",
    )
    yield err((x, 1, ()), RuntimeError, "unflatten: sizes must be non-empty")
    yield err((x, 1, (-1, -1)), RuntimeError, "only one dimension can be inferred")


OPS = [
        _info("squeeze", _squeeze_samples, np.squeeze),
        _info("squeeze.dims", _squeeze_dims_samples, _squeeze_dims_ref, _squeeze_dims_errors),
        _info("unsqueeze", _unsqueeze_samples, _unsqueeze_ref, _dim_error(_f((2, 3)), 3)),
        OpInfo(
            "flatten.using_ints",
            _flatten_samples,
            ref=_flatten_ref,
            dtypes=ALL_DTYPES,
            errors=lambda rng: iter(
                [
                    err(
                        (_f((2, 3, 4)), 2, 1),
                        RuntimeError,
                        "flatten() has invalid args: start_dim cannot come after end_dim",
                    )
                ]
            ),
        ),
        _info("unflatten.int", _unflatten_samples, _unflatten_ref, _unflatten_errors),
]
