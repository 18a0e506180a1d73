"""OpInfos: factories, fills and *_like (random ones in ``factories_random``).

Factory samples start with a probe tensor that carries the backend (Note [Factory probes] in
``helpers``); ``empty*`` results are checked for shape, strides and dtype only.
"""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ...ops import bound
from ...tensor import channels_last_strides, contiguous_strides
from ..opinfo import ALL_DTYPES, FLOATING, INTEGRAL, OpInfo, SampleInput, make_arg
from .factories_random import OPS as RANDOM_OPS
from .helpers import err, on_probe_device, probe

__all__ = ["OPS"]

NO_BOOL = FLOATING + INTEGRAL


def _skip_probe(ref):
    """A NumPy reference that ignores the leading probe (Note [Factory probes])."""

    def call(_, *args, **kwargs):
        return ref(*args, **kwargs)

    return call


def _fill(d):
    return True if d is dt.bool else (2.5 if d.is_floating_point else 7)


def _layout_check(result, sample):
    """empty*: only the metadata is defined (shape, strides, dtype)."""
    size = sample.args[1]
    fmt = sample.kwargs.get("memory_format")
    assert tuple(result.shape) == tuple(size)
    assert result.dtype is sample.kwargs["dtype"]
    want = channels_last_strides(size) if fmt == "channels_last" else contiguous_strides(size)
    if len(sample.args) > 2:
        want = tuple(sample.args[2])
    assert result.stride() == want, f"strides {result.stride()} != {want}"


# ---------------------------------------------------------------------------- sized factories
def _sized_samples(extra=lambda d: ()):
    def samples(d, rng):
        for size in ((2, 3), (4,), (), (0, 3)):
            yield SampleInput((probe(), size, *extra(d)), {"dtype": d}, f"size {size}")

    return samples


def _empty_samples(d, rng):
    yield from _sized_samples()(d, rng)
    yield SampleInput(
        (probe(), (2, 3, 2, 2)), {"dtype": d, "memory_format": "channels_last"}, "channels_last"
    )


def _empty_strided_samples(d, rng):
    for size, stride in (((2, 3), (1, 2)), ((2, 3), (4, 1)), ((3,), (0,)), ((), ()), ((0, 3), (3, 1))):
        yield SampleInput((probe(), size, stride), {"dtype": d}, f"strides {stride}")


def _size_errors(*extra, message="Trying to create tensor with negative dimension -1: [-1, 2]"):
    def errors(rng):
        yield err((probe(), (-1, 2), *extra), RuntimeError, message)

    return errors


def _full_samples(d, rng):
    yield from _sized_samples(lambda d: (_fill(d),))(d, rng)
    yield SampleInput((probe(), (2,), _fill(d)), {}, "dtype inferred from the fill value")


def _arange_samples(d, rng):
    yield SampleInput((probe(), 0, 10, 1), {"dtype": d}, "0..10")
    yield SampleInput((probe(), 10, 0, -3), {"dtype": d}, "descending")
    yield SampleInput((probe(), 3, 3, 1), {"dtype": d}, "empty")
    if d.is_floating_point:
        yield SampleInput((probe(), 1, 2.5, 0.5), {"dtype": d}, "fractional step")
    yield SampleInput((probe(), 0, 5, 1), {}, "dtype inferred: int64")


def _arange_ref(start, end, step=1, **kwargs):
    n = max(0, int(np.ceil((end - start) / step)))
    return start + np.arange(n, dtype=np.float64) * step


def _arange_errors(rng):
    yield err((probe(), 0, 10, 0), RuntimeError, "step must be nonzero")
    yield err((probe(), 0, 10, -1), RuntimeError, "upper bound and lower bound inconsistent with step sign")


def _linspace_samples(d, rng):
    for args in ((0, 1, 5), (-2, 3, 1), (0, 1, 0), (3, -1, 4)):
        yield SampleInput((probe(), *args), {"dtype": d}, f"linspace {args}")


def _eye_samples(d, rng):
    for n, m in ((3, 3), (2, 4), (4, 2), (0, 3)):
        yield SampleInput((probe(), n, m), {"dtype": d}, f"eye {n}x{m}")


# ---------------------------------------------------------------------------- fills and *_like
def _fill_samples(d, rng):
    yield SampleInput((make_arg((2, 3), d, rng=rng), _fill(d)), {}, "fill")
    yield SampleInput((make_arg((2, 3), d, rng=rng, noncontiguous=True), _fill(d)), {}, "noncontiguous")
    yield SampleInput((make_arg((3, 4), d, rng=rng).t(), 0), {}, "transposed")
    yield SampleInput((make_arg((), d, rng=rng), 1), {}, "0-dim")
    yield SampleInput((make_arg((0, 3), d, rng=rng), _fill(d)), {}, "zero-size")


def _like_samples(with_fill=False):
    def samples(d, rng):
        extra = (_fill(d),) if with_fill else ()
        yield SampleInput((make_arg((2, 3), d, rng=rng), *extra), {}, "contiguous")
        yield SampleInput((make_arg((2, 3), d, rng=rng, noncontiguous=True), *extra), {}, "noncontiguous")
        yield SampleInput((make_arg((3, 4), d, rng=rng).t(), *extra), {}, "transposed: layout kept")
        yield SampleInput(
            (make_arg((2, 3, 2, 2), d, rng=rng), *extra), {"memory_format": "channels_last"}, "channels_last"
        )
        yield SampleInput((make_arg((), d, rng=rng), *extra), {"dtype": dt.float64}, "0-dim, dtype=")
        yield SampleInput((make_arg((0, 3), d, rng=rng), *extra), {}, "zero-size")

    return samples


def _like_check(result, sample):
    x = sample.args[0]
    fmt = sample.kwargs.get("memory_format")
    assert tuple(result.shape) == tuple(x.shape)
    assert result.dtype is sample.kwargs.get("dtype", x.dtype)
    assert result.untyped_storage() is not x.untyped_storage()
    if fmt == "channels_last":
        assert result.stride() == channels_last_strides(x.shape)
    elif x._is_non_overlapping_and_dense():
        assert result.stride() == x.stride(), "*_like keeps a dense input's strides"
    else:
        assert result.stride() == contiguous_strides(x.shape)


def _fill_errors(rng):
    yield err(
        (make_arg((2,), dt.float32), make_arg((2,), dt.float32)),
        RuntimeError,
        "fill_ only supports 0-dimension value tensor but got tensor with 1 dimensions.",
    )


OPS = [
    OpInfo(
        "empty.memory_format",
        _empty_samples,
        op=on_probe_device("empty.memory_format"),
        dtypes=ALL_DTYPES,
        check=_layout_check,
        errors=_size_errors(),
    ),
    OpInfo(
        "empty_strided",
        _empty_strided_samples,
        op=on_probe_device("empty_strided"),
        dtypes=ALL_DTYPES,
        check=_layout_check,
        errors=lambda rng: iter(
            [err((probe(), (2, 3), (1,)), RuntimeError, "mismatch in length of strides and shape")]
        ),
    ),
    OpInfo(
        "zeros",
        _sized_samples(),
        ref=_skip_probe(lambda size, **kw: np.zeros(size)),
        op=on_probe_device("zeros"),
        dtypes=ALL_DTYPES,
        errors=_size_errors(message="zeros: Dimension size must be non-negative."),  # torch's zeros words
    ),
    OpInfo(
        "ones",
        _sized_samples(),
        ref=_skip_probe(lambda size, **kw: np.ones(size)),
        op=on_probe_device("ones"),
        dtypes=ALL_DTYPES,
        errors=_size_errors(),
    ),
    OpInfo(
        "full",
        _full_samples,
        ref=_skip_probe(lambda size, v, **kw: np.full(size, v, dtype=np.float64)),
        op=on_probe_device("full"),
        dtypes=ALL_DTYPES,
        errors=_size_errors(1.5),
    ),
    OpInfo(
        "arange.start_step",
        _arange_samples,
        ref=_skip_probe(_arange_ref),
        op=on_probe_device("arange.start_step"),
        dtypes=NO_BOOL,
        errors=_arange_errors,
    ),
    OpInfo(
        "linspace",
        _linspace_samples,
        ref=_skip_probe(lambda start, end, steps, **kw: np.linspace(start, end, steps)),
        op=on_probe_device("linspace"),
        dtypes=FLOATING,
        errors=lambda rng: iter(
            [err((probe(), 0, 1, -1), RuntimeError, "number of steps must be non-negative")]
        ),
    ),
    OpInfo(
        "eye.m",
        _eye_samples,
        ref=_skip_probe(lambda n, m, **kw: np.eye(n, m)),
        op=on_probe_device("eye.m"),
        dtypes=ALL_DTYPES,
        errors=lambda rng: iter(
            [err((probe(), -1, 2), RuntimeError, "n must be greater or equal to 0, got -1")]
        ),
    ),
    OpInfo(
        "fill_.Scalar",
        _fill_samples,
        ref=lambda x, v: np.full(x.shape, v, dtype=np.float64),
        dtypes=ALL_DTYPES,
        errors=_fill_errors,
    ),
    OpInfo(
        "zero_",
        _fill_samples,
        op=lambda x, v: bound.zero_(x),
        ref=lambda x, v: np.zeros(x.shape),
        dtypes=ALL_DTYPES,
    ),
    OpInfo("empty_like", _like_samples(), dtypes=ALL_DTYPES, check=_like_check),
    OpInfo(
        "zeros_like",
        _like_samples(),
        ref=lambda x, **kw: np.zeros(x.shape),
        dtypes=ALL_DTYPES,
        check=_like_check,
    ),
    OpInfo(
        "ones_like",
        _like_samples(),
        ref=lambda x, **kw: np.ones(x.shape),
        dtypes=ALL_DTYPES,
        check=_like_check,
    ),
    OpInfo(
        "full_like",
        _like_samples(True),
        ref=lambda x, v, **kw: np.full(x.shape, v, dtype=np.float64),
        dtypes=ALL_DTYPES,
        check=_like_check,
    ),
] + RANDOM_OPS
