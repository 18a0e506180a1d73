"""Sample builders shared by the pointwise OpInfos, and the in-place / out= variants of an OpInfo.

Every generator yields small tensors covering: contiguous, non-contiguous, broadcast (both
sides), 0-dim (alone and joining a bigger tensor), zero-size, and a 0-dim operand of another
dtype (type promotion: 0-dim tensors don't promote within a category).
"""

from __future__ import annotations

import re

import numpy as np

from ... import dtypes as dt
from ...tensor import Tensor
from ..opinfo import ALL_DTYPES, FLOATING, INTEGRAL, TOLERANCES, ErrorInput, OpInfo, SampleInput, make_arg

__all__ = ["tensor_of", "binary_samples", "scalar_samples", "unary_samples", "inplace_variant",
           "out_variant", "quiet_ref", "error", "scalars_for", "FLOAT_RESULT_TOL", "NO_BOOL",
           "SIGNED", "ALL_DTYPES", "FLOATING", "INTEGRAL"]

NO_BOOL = FLOATING + INTEGRAL
SIGNED = tuple(d for d in ALL_DTYPES if d.is_signed)
# Ops whose result is the default float even for integer inputs: compare those like float32.
FLOAT_RESULT_TOL = {d: TOLERANCES[dt.float32] for d in INTEGRAL + (dt.bool,)}


def tensor_of(values, dtype: dt.dtype) -> Tensor:
    """A CPU tensor holding ``values`` converted to ``dtype``."""
    from ...factories import from_numpy

    return from_numpy(np.array(np.asarray(values).astype(dtype.numpy_dtype), order="C"))


def quiet_ref(fn):
    """A NumPy reference run with floating-point warnings off (x/0, inf-inf are expected)."""

    def ref(*args, **kwargs):
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)

    return ref


def error(args, exc, message, kwargs=None, *, regex=False) -> ErrorInput:
    """An ErrorInput matching ``message`` literally (or as a regex)."""
    return ErrorInput(SampleInput(tuple(args), kwargs or {}), exc, message if regex else re.escape(message))


def _other_dtype_scalar_tensor(dtype, rng, low=None, high=None):
    wide = dt.bool if dtype is dt.bool else (dt.float64 if dtype.is_floating_point else dt.int64)
    if dtype is dt.uint8 and low is None:
        low = 0  # a negative int64 would wrap when cast to uint8 (as torch does; NumPy promotes instead)
    return make_arg((), wide, low=low, high=high, rng=rng)


def binary_samples(dtype, rng, *, lhs=None, rhs=None, kwargs=None, rhs_dtype=None):
    """Tensor-Tensor samples; ``lhs``/``rhs`` are make_arg keyword ranges (``dict(low=1)``)."""
    lhs, rhs, kwargs = lhs or {}, rhs or {}, kwargs or {}
    rd = rhs_dtype or dtype

    def a(shape, **kw):
        return make_arg(shape, dtype, rng=rng, **lhs, **kw)

    def b(shape, **kw):
        return make_arg(shape, rd, rng=rng, **rhs, **kw)

    yield SampleInput((a((3, 4)), b((3, 4))), dict(kwargs), "same shape")
    yield SampleInput((a((3, 4), noncontiguous=True), b((3, 4), noncontiguous=True)), dict(kwargs),
                      "noncontiguous")
    yield SampleInput((a((2, 1, 4)), b((3, 1))), dict(kwargs), "broadcast both")
    yield SampleInput((a(()), b(())), dict(kwargs), "0-dim")
    yield SampleInput((a((5,)), b(())), dict(kwargs), "0-dim other")
    yield SampleInput((a(()), b((2, 3))), dict(kwargs), "0-dim self")
    yield SampleInput((a((0, 3)), b((3,))), dict(kwargs), "zero-size")
    if rhs_dtype is None:
        other = _other_dtype_scalar_tensor(dtype, rng, **rhs)
        yield SampleInput((a((2, 3)), other), dict(kwargs), "0-dim of another dtype")


def scalars_for(dtype, floats=(2.5, -1.25), ints=(3, -2), bools=(True,)):
    """Python scalars of ``dtype``'s kind (no negative ones for uint8)."""
    if dtype is dt.bool:
        return bools
    if dtype.is_floating_point:
        return floats
    return tuple(s for s in ints if s >= 0) if dtype is dt.uint8 else ints


def scalar_samples(dtype, rng, scalars, *, lhs=None, kwargs=None):
    """Tensor-Scalar samples, one per scalar and layout."""
    lhs, kwargs = lhs or {}, kwargs or {}
    for s in scalars:
        yield SampleInput((make_arg((3, 4), dtype, rng=rng, **lhs), s), dict(kwargs), "scalar")
        yield SampleInput((make_arg((3, 4), dtype, rng=rng, noncontiguous=True, **lhs), s), dict(kwargs),
                          "scalar noncontiguous")
        yield SampleInput((make_arg((), dtype, rng=rng, **lhs), s), dict(kwargs), "scalar 0-dim")
    yield SampleInput((make_arg((0, 2), dtype, rng=rng, **lhs), scalars[0]), dict(kwargs), "scalar zero-size")


def unary_samples(dtype, rng, *, low=None, high=None, kwargs=None, special=()):
    """Unary samples; ``special`` values (nan, inf, .5 ties) are added for floating dtypes."""
    kwargs = kwargs or {}

    def a(shape, **kw):
        return make_arg(shape, dtype, low=low, high=high, rng=rng, **kw)

    yield SampleInput((a((3, 4)),), dict(kwargs), "contiguous")
    yield SampleInput((a((2, 3, 4), noncontiguous=True),), dict(kwargs), "noncontiguous")
    yield SampleInput((a(()),), dict(kwargs), "0-dim")
    yield SampleInput((a((0, 3)),), dict(kwargs), "zero-size")
    if special and dtype.is_floating_point:
        yield SampleInput((tensor_of(special, dtype),), dict(kwargs), "special values")


def _writable_copy(t: Tensor) -> Tensor:
    """A copy of ``t`` with the same sizes and strides (in-place ops then write a strided view)."""
    from ...factories import empty_strided

    return empty_strided(t.shape, t.stride(), dtype=t.dtype, device=t.device).copy_(t)


def inplace_variant(base: OpInfo, name: str, method: str | None, dtypes=None, keep=None) -> OpInfo:
    """An OpInfo calling ``self.<method>(...)`` (or, with no method, ``strided.ops.aten.<name>``) on a copy of
    ``self`` for ``base``'s samples whose result keeps ``self``'s shape and can be cast to its dtype (what in-place
    ops accept), and that ``keep(sample)`` accepts when given."""
    functional = base.get_op()

    def op(self, *args, **kwargs):
        if method is None:
            from ...ops import aten

            return getattr(aten, name.partition(".")[0])(_writable_copy(self), *args, **kwargs)
        return getattr(_writable_copy(self), method)(*args, **kwargs)

    def samples(dtype, rng):
        for s in base.samples(dtype, rng):
            self = s.args[0]
            r = functional(*s.args, **s.kwargs)
            if r.shape == self.shape and dt.can_cast(r.dtype, self.dtype) and (keep is None or keep(s)):
                yield s

    return OpInfo(name, samples, ref=base.ref, op=op, dtypes=dtypes or base.dtypes,
                  tolerances=base.tolerances)


def out_variant(base: OpInfo, name: str) -> OpInfo:
    """An OpInfo calling the ``out=`` overload ``name`` with an empty ``out`` (resized by the op)."""
    from ...factories import empty
    from ...ops import registry

    functional = base.get_op()

    def op(*args, **kwargs):
        expected = functional(*args, **kwargs)
        out = empty((0,), dtype=expected.dtype, device=expected.device)
        packet_name, _, overload = name.partition(".")
        result = getattr(registry.load()._get(packet_name), overload)(*args, **kwargs, out=out)
        assert result is out, f"{name} must return its out= tensor"
        return result

    return OpInfo(name, base.samples, ref=base.ref, op=op, dtypes=base.dtypes, tolerances=base.tolerances)
