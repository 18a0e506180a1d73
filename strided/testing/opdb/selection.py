"""OpInfos: nonzero, masked_select (data-dependent shapes: meta raises), nan_to_num, count_nonzero."""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ..opinfo import ALL_DTYPES, OpInfo, SampleInput, make_arg
from .helpers import err
from .pointwise_samples import tensor_of

__all__ = ["OPS"]


def _sparse(shape, d, rng, nc=False):
    """Values with about half zeros (ints in [-1, 2), floats rounded)."""
    if d is dt.bool:
        return make_arg(shape, d, rng=rng, noncontiguous=nc)
    low, high = (0, 3) if d is dt.uint8 else (-1, 2)
    x = make_arg(shape, d, rng=rng, low=low, high=high, noncontiguous=nc)
    return x.round() if d.is_floating_point else x


def _nonzero_samples(d, rng):
    yield SampleInput((_sparse((3, 4), d, rng),), name="2-D")
    yield SampleInput((_sparse((2, 3, 4), d, rng, nc=True),), name="noncontiguous 3-D")
    yield SampleInput((_sparse((), d, rng),), name="0-dim")
    yield SampleInput((make_arg((0, 3), d, rng=rng),), name="zero-size")
    if d.is_floating_point:
        yield SampleInput((tensor_of([np.nan, 0.0, -0.0, np.inf], d),), name="nan and inf are nonzero")


def _masked_select_samples(d, rng):
    def mask(shape):
        return make_arg(shape, dt.bool, rng=rng)

    yield SampleInput((make_arg((3, 4), d, rng=rng), mask((3, 4))), name="same shape")
    yield SampleInput((make_arg((3, 4), d, rng=rng, noncontiguous=True), mask((4,))), name="broadcast mask")
    yield SampleInput((make_arg((4,), d, rng=rng), mask((2, 1, 4))), name="broadcast self")
    yield SampleInput((make_arg((0, 3), d, rng=rng), mask((3,))), name="zero-size")


def _masked_select_ref(a, m):
    a, m = np.broadcast_arrays(a, m)
    return a[m]


def _nan_to_num_samples(d, rng):
    if not d.is_floating_point:
        yield SampleInput((make_arg((3, 4), d, rng=rng),), name="integers and bool: an unchanged copy")
        return
    special = [np.nan, np.inf, -np.inf, 1.5, -2.0]
    yield SampleInput((tensor_of(special, d),), name="defaults")
    yield SampleInput((tensor_of(special, d),), {"nan": 2.0, "posinf": 10.0}, name="nan and posinf given")
    yield SampleInput((tensor_of(special, d),), {"neginf": -3.0}, name="neginf given")
    yield SampleInput((make_arg((2, 3), d, rng=rng, noncontiguous=True),), name="no special values")


def _nan_to_num_check(result, sample):
    from ...type_info import finfo

    x = sample.args[0]
    if not x.dtype.is_floating_point:
        assert result.dtype is x.dtype and np.array_equal(result.numpy(force=True), x.numpy())
        assert result.untyped_storage() is not x.untyped_storage(), "nan_to_num returns new memory"
        return
    info = finfo(x.dtype)
    kw = sample.kwargs
    expected = np.nan_to_num(x.double().numpy(), nan=kw.get("nan", 0.0), posinf=kw.get("posinf", info.max),
                             neginf=kw.get("neginf", info.min))
    got = result.double().numpy(force=True)
    np.testing.assert_allclose(got, expected, rtol=1e-2 if x.dtype.itemsize == 2 else 1e-6)
    assert result.dtype is x.dtype


def _count_samples(dims_kw):
    def samples(d, rng):
        x = _sparse((3, 4, 2), d, rng)
        if dims_kw:
            yield SampleInput((x, [0, 2]), name="dims [0, 2]")
            yield SampleInput((_sparse((3, 4), d, rng, nc=True), [-1]), name="noncontiguous, dim -1")
        else:
            yield SampleInput((x,), name="all")
            yield SampleInput((x,), {"dim": 1}, name="dim 1")
            yield SampleInput((_sparse((), d, rng),), name="0-dim")

    return samples


def _count_ref(a, dim=None):
    return np.count_nonzero(a, axis=None if dim is None else (tuple(dim) if isinstance(dim, list) else dim))


OPS = [
    OpInfo("nonzero", _nonzero_samples, ref=np.argwhere, dtypes=ALL_DTYPES, data_dependent=True),
    OpInfo("masked_select", _masked_select_samples, ref=_masked_select_ref, dtypes=ALL_DTYPES, data_dependent=True,
           errors=lambda rng: iter([err((make_arg((2,), dt.float32, rng=rng), make_arg((2,), dt.uint8, rng=rng)),
                                        RuntimeError, "masked_select: expected BoolTensor for mask")])),
    OpInfo("nan_to_num", _nan_to_num_samples, check=_nan_to_num_check, dtypes=ALL_DTYPES),
    OpInfo("count_nonzero", _count_samples(False), ref=_count_ref, dtypes=ALL_DTYPES),
    OpInfo("count_nonzero.dim_IntList", _count_samples(True), ref=_count_ref, dtypes=ALL_DTYPES),
]
