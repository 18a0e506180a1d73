"""OpInfos: bitwise and / or / xor / not and the shifts, against NumPy.

The shift reference states torch's rule for counts outside [0, width) independently of the
kernels (Note [Shift counts] in ``strided/backends/cpu/bitwise.py``); the samples include such
counts, negative values and every integer width.
"""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ..opinfo import FLOATING, INTEGRAL, OpInfo, SampleInput, make_arg
from .helpers import err
from .pointwise_samples import binary_samples, inplace_variant, scalars_for, unary_samples

__all__ = ["OPS"]

BITWISE_DTYPES = INTEGRAL + (dt.bool,)


def _scalar_samples(d, rng):
    for s in scalars_for(d, ints=(3, -2, 6)):
        yield SampleInput((make_arg((3, 4), d, rng=rng), s), name=f"scalar {s}")
    yield SampleInput((make_arg((2, 3), d, rng=rng, noncontiguous=True), True), name="bool scalar")


def _shift_counts(d, rng, shape):
    """Counts in [-2, 2 * width), so both out-of-range rules are hit."""
    bits = d.itemsize * 8
    low = 0 if d is dt.uint8 else -2
    return make_arg(shape, d, rng=rng, low=low, high=min(2 * bits, int(np.iinfo(d.numpy_dtype).max)))


def _shift_samples(d, rng):
    values = {"low": -100, "high": 100} if d is not dt.uint8 else {"low": 0, "high": 256}
    yield SampleInput((make_arg((4, 5), d, rng=rng, **values), _shift_counts(d, rng, (4, 5))), name="counts")
    yield SampleInput((make_arg((2, 1, 4), d, rng=rng, **values), _shift_counts(d, rng, (3, 1))), name="broadcast")
    yield SampleInput((make_arg((3, 4), d, rng=rng, noncontiguous=True, **values),
                       _shift_counts(d, rng, (3, 4))), name="noncontiguous")
    yield SampleInput((make_arg((0, 3), d, rng=rng), _shift_counts(d, rng, (3,))), name="zero-size")


def _shift_scalar_samples(d, rng):
    values = {"low": -100, "high": 100} if d is not dt.uint8 else {"low": 0, "high": 256}
    for s in (1, 3, d.itemsize * 8, 70):
        yield SampleInput((make_arg((3, 4), d, rng=rng, **values), s), name=f"count {s}")


def _shift_ref(left: bool):
    def ref(a, b):
        a = np.asarray(a)
        d = a.dtype
        b = np.asarray(b).astype(np.int64)
        bits = d.itemsize * 8
        out = np.empty(np.broadcast(a, b).shape, d)
        for idx in np.ndindex(out.shape):
            x, n = int(np.broadcast_to(a, out.shape)[idx]), int(np.broadcast_to(b, out.shape)[idx])
            if left:
                v = 0 if not 0 <= n < bits else (x << n)
            else:
                v = (-1 if x < 0 else 0) if not 0 <= n < bits else (x >> n)
            out[idx] = np.array(v & ((1 << bits) - 1), dtype=np.uint64).astype(d)
        return out

    return ref


def _float_error(kernel_name, scalar=1):
    def errors(rng):
        x = make_arg((3,), dt.float32, rng=rng)
        yield err((x, scalar), NotImplementedError, f"\"{kernel_name}\" not implemented for 'Float'")

    return errors


def _bool_shift_error(name):
    def errors(rng):
        b = make_arg((3,), dt.bool, rng=rng)
        yield err((b, b), NotImplementedError, f"\"{name}\" not implemented for 'Bool'")
        yield err((make_arg((3,), dt.float32, rng=rng), 1), NotImplementedError,
                  f"\"{name}\" not implemented for 'Float'")

    return errors


def _scalar_first_samples(d, rng):
    """``op(scalar, tensor)``: the Scalar_Tensor overloads."""
    for s in scalars_for(d, ints=(3, -2, 6)):
        yield SampleInput((s, make_arg((3, 4), d, rng=rng)), name=f"scalar {s}")
        yield SampleInput((s, make_arg((2, 3), d, rng=rng, noncontiguous=True)), name=f"scalar {s} noncontiguous")
        yield SampleInput((s, make_arg((), d, rng=rng)), name=f"scalar {s} 0-dim")
    if d is not dt.bool:
        yield SampleInput((True, make_arg((2, 3), d, rng=rng)), name="bool scalar")


def _scalar_first_ref(ufunc):
    return lambda s, b: ufunc(np.asarray(s, b.dtype), b)


def _binary_infos(name: str, ufunc):
    tensor = OpInfo(f"bitwise_{name}.Tensor", lambda d, rng: binary_samples(d, rng), ref=ufunc,
                    dtypes=BITWISE_DTYPES, errors=_float_error(f"bitwise_{name}_cpu"))
    scalar = OpInfo(f"bitwise_{name}.Scalar", _scalar_samples, ref=lambda a, s: ufunc(a, np.asarray(s, a.dtype)),
                    dtypes=INTEGRAL)
    scalar_first = OpInfo(f"bitwise_{name}.Scalar_Tensor", _scalar_first_samples, ref=_scalar_first_ref(ufunc),
                          dtypes=BITWISE_DTYPES, errors=lambda rng: iter([err(
                              (2.5, make_arg((3,), dt.int64, rng=rng)), NotImplementedError,
                              f"\"bitwise_{name}_cpu\" not implemented for 'Float'")]))
    return [tensor, scalar, scalar_first, inplace_variant(tensor, f"bitwise_{name}_.Tensor", f"bitwise_{name}_"),
            inplace_variant(scalar, f"bitwise_{name}_.Scalar", f"bitwise_{name}_")]


def _shift_infos(side: str, kernel_name: str):
    left = side == "left"
    tensor = OpInfo(f"bitwise_{side}_shift.Tensor", _shift_samples, ref=_shift_ref(left), dtypes=INTEGRAL,
                    errors=_bool_shift_error(kernel_name))
    scalar = OpInfo(f"bitwise_{side}_shift.Tensor_Scalar", _shift_scalar_samples,
                    ref=lambda a, s: _shift_ref(left)(a, np.asarray(s)), dtypes=INTEGRAL)
    def scalar_first_samples(d, rng):
        for s in (1, 100) if d is dt.uint8 else (1, -3, 100):
            yield SampleInput((s, _shift_counts(d, rng, (3, 4))), name=f"value {s}")
            yield SampleInput((s, _shift_counts(d, rng, (2, 3)).t()), name=f"value {s} noncontiguous")

    scalar_first = OpInfo(f"bitwise_{side}_shift.Scalar_Tensor", scalar_first_samples,
                          ref=lambda s, b: _shift_ref(left)(np.asarray(s, b.dtype), b), dtypes=INTEGRAL)
    return [tensor, scalar, scalar_first,
            inplace_variant(tensor, f"bitwise_{side}_shift_.Tensor", f"bitwise_{side}_shift_"),
            inplace_variant(scalar, f"bitwise_{side}_shift_.Tensor_Scalar", f"bitwise_{side}_shift_")]


bitwise_not = OpInfo("bitwise_not", lambda d, rng: unary_samples(d, rng), ref=np.invert, dtypes=BITWISE_DTYPES,
                     errors=lambda rng: iter([err((make_arg((3,), FLOATING[0], rng=rng),), NotImplementedError,
                                                  "\"bitwise_not_cpu\" not implemented for 'Float'")]))

OPS = [
    *_binary_infos("and", np.bitwise_and),
    *_binary_infos("or", np.bitwise_or),
    *_binary_infos("xor", np.bitwise_xor),
    bitwise_not,
    inplace_variant(bitwise_not, "bitwise_not_", "bitwise_not_"),
    *_shift_infos("left", "lshift_cpu"),
    *_shift_infos("right", "rshift_cpu"),
]
