"""OpInfos: the complex dtypes of the common math ops (Note [Complex math ops] in backends/cpu/complex_math.py):
unary math, pow, the predicates, where / masked_fill, prod / cumsum, flip / roll / index_select / gather and
(CPU) the matrix products, against NumPy's complex functions and torch's rules where they differ."""

from __future__ import annotations

import math

import numpy as np

from ... import dtypes as dt
from ...backends.cpu import complex_math as cm
from ..opinfo import COMPLEX, OpInfo, SampleInput, make_arg
from .complex_ops import _reduce, _reduce_samples, _unary, _z
from .pointwise_samples import inplace_variant, quiet_ref, tensor_of, unary_samples


def _finite(low=-2, high=2):
    def gen(d, rng):
        yield from unary_samples(d, rng, low=low, high=high)

    return gen


def _sigmoid(a):
    return 1 / (1 + np.exp(-a))


# name -> (samples, ref): finite values (the comparison of complex infinities is nan; the special values are
# checked against torch in tests/backend/test_complex_math.py)
_UNARY = {
    "sqrt": (_finite(), np.sqrt), "rsqrt": (_finite(), lambda a: 1 / np.sqrt(a)), "log": (_finite(), np.log),
    "log1p": (_finite(), cm.log1p), "sin": (_finite(), np.sin), "cos": (_finite(), np.cos), "tan": (_finite(), np.tan),
    "sinh": (_finite(), np.sinh), "cosh": (_finite(), np.cosh), "tanh": (_finite(), np.tanh),
    "sigmoid": (_finite(), _sigmoid), "reciprocal": (_finite(), cm.reciprocal), "square": (_finite(), np.square),
}


def _predicate_samples(d, rng):
    yield from _unary(d, rng)
    yield SampleInput((tensor_of([complex(math.nan, math.inf), complex(math.inf, math.nan), complex(0, -math.inf),
                                  complex(-math.inf, 0), complex(math.nan, 0), complex(0, math.nan)], d),),
                      name="inf and nan parts")


def _pow_scalar_samples(d, rng):
    for e in (2, 3, -2, 0.5, -0.5, -1, 2.5, 1.5 - 0.5j, 0):
        yield SampleInput((_z((3, 4), d, rng), e), name=f"exponent {e}")
    yield SampleInput((_z((2, 3, 4), d, rng, nc=True), 1j), name="noncontiguous")
    yield SampleInput((_z((), d, rng), 2 - 1j), name="0-dim")
    yield SampleInput((_z((0, 2), d, rng), 2), name="zero-size")


def _pow_tensor_samples(d, rng):
    yield SampleInput((_z((3, 4), d, rng), _z((3, 4), d, rng)), name="complex ** complex")
    yield SampleInput((_z((2, 3, 4), d, rng, nc=True), _z((4,), d, rng)), name="broadcast noncontiguous")
    yield SampleInput((_z((3, 4), d, rng), make_arg((3, 4), d.to_real(), rng=rng)), name="complex ** real")
    yield SampleInput((make_arg((3, 4), d.to_real(), rng=rng, low=0.5, high=2), _z((3, 4), d, rng)),
                      name="real ** complex")


def _pow_base_samples(d, rng):
    for b in (2, 1.5 - 0.5j, 1j):
        yield SampleInput((b, _z((3, 4), d, rng)), name=f"base {b}")


def _pow_scalar_ref(a, e):
    return cm.pow(a, np.asarray(e, a.dtype)[()]) if isinstance(a, np.ndarray) and a.ndim else np.power(a, e)


def _where_samples(d, rng):
    mask = make_arg((3, 4), dt.bool, rng=rng)
    yield SampleInput((mask, _z((3, 4), d, rng), _z((3, 4), d, rng)), name="complex")
    yield SampleInput((mask, _z((4,), d, rng), make_arg((3, 1), d.to_real(), rng=rng)), name="complex, real")
    yield SampleInput((mask, _z((3, 4), d, rng, nc=True), 2 - 1j), name="complex scalar other")


def _masked_fill_samples(d, rng):
    mask = make_arg((3, 4), dt.bool, rng=rng)
    yield SampleInput((_z((3, 4), d, rng), mask, 1 - 2j), name="complex value")
    yield SampleInput((_z((2, 3, 4), d, rng, nc=True), mask, 3), name="real value, noncontiguous")
    yield SampleInput((_z((3, 4), d, rng), mask, tensor_of(0.5j, d)), name="0-dim tensor value")


def _masked_fill_ref(a, mask, value):
    return np.where(mask, np.asarray(value, a.dtype), a)


def _cumsum_samples(d, rng):
    yield SampleInput((_z((3, 4), d, rng), 1), name="last dim")
    yield SampleInput((_z((2, 3, 4), d, rng, nc=True), 0), name="noncontiguous")
    yield SampleInput((_z((), d, rng), 0), name="0-dim")
    yield SampleInput((_z((0, 3), d, rng), 1), name="zero-size")
    yield SampleInput((make_arg((3, 4), dt.float32, rng=rng), 0), {"dtype": d}, "real input, complex dtype")


def _cumsum_ref(a, dim, dtype=None):
    a = a.astype(dtype.numpy_dtype) if dtype is not None else a
    return np.cumsum(a, axis=dim) if a.ndim else a


def _index_samples(d, rng):
    from ...factories import tensor

    yield SampleInput((_z((3, 4), d, rng), 1, tensor([2, 0, 2])), name="dim 1")
    yield SampleInput((_z((2, 3, 4), d, rng, nc=True), 0, tensor([1])), name="noncontiguous")
    yield SampleInput((_z((), d, rng), 0, tensor([0])), name="0-dim")


def _gather_samples(d, rng):
    from ...factories import tensor

    yield SampleInput((_z((3, 4), d, rng), 1, tensor([[0, 3], [1, 1], [2, 0]])), name="dim 1")
    yield SampleInput((_z((3, 4), d, rng).t(), 0, tensor([[3, 0, 1], [0, 0, 2]])), name="transposed")
    yield SampleInput((_z((), d, rng), 0, tensor(0)), name="0-dim")


def _matmul_samples(d, rng):
    for s1, s2 in (((3, 4), (4, 2)), ((4,), (4,)), ((3, 4), (4,)), ((2, 3, 4), (4, 5)), ((2, 1, 3, 4), (3, 4, 2))):
        yield SampleInput((_z(s1, d, rng), _z(s2, d, rng)), name=f"{s1} @ {s2}")


def _unary_info(name):
    samples, ref = _UNARY[name]
    return OpInfo(name, samples, ref=quiet_ref(ref), dtypes=COMPLEX)


_unaries = [_unary_info(name) for name in _UNARY]
_pow_scalar = OpInfo("pow.Tensor_Scalar", _pow_scalar_samples, ref=quiet_ref(_pow_scalar_ref), dtypes=COMPLEX,
                     tolerances={dt.complex64: (1e-4, 1e-4), dt.complex128: (1e-10, 1e-10)})
_pow_tensor = OpInfo("pow.Tensor_Tensor", _pow_tensor_samples, ref=quiet_ref(np.power), dtypes=COMPLEX,
                     tolerances={dt.complex64: (1e-4, 1e-4), dt.complex128: (1e-10, 1e-10)})
_masked_fill = OpInfo("masked_fill.Scalar", _masked_fill_samples, ref=_masked_fill_ref, dtypes=COMPLEX)
_cumsum = OpInfo("cumsum", _cumsum_samples, ref=_cumsum_ref, dtypes=COMPLEX)

OPS = [
    *_unaries,
    *[inplace_variant(info, f"{info.name}_", f"{info.name}_") for info in _unaries],
    _pow_scalar,
    _pow_tensor,
    inplace_variant(_pow_scalar, "pow_.Scalar", "pow_"),
    OpInfo("pow.Scalar", _pow_base_samples, ref=quiet_ref(np.power), dtypes=COMPLEX,
           tolerances={dt.complex64: (1e-4, 1e-4), dt.complex128: (1e-10, 1e-10)}),
    OpInfo("isnan", _predicate_samples, ref=np.isnan, dtypes=COMPLEX),
    OpInfo("isinf", _predicate_samples, ref=np.isinf, dtypes=COMPLEX),
    OpInfo("isfinite", _predicate_samples, ref=np.isfinite, dtypes=COMPLEX),
    OpInfo("where.self", _where_samples, ref=np.where, dtypes=COMPLEX),
    _masked_fill,
    inplace_variant(_masked_fill, "masked_fill_.Scalar", "masked_fill_"),
    OpInfo("prod", lambda d, rng: _reduce_samples(d, rng, dims=False), ref=_reduce(np.prod), dtypes=COMPLEX),
    OpInfo("prod.dim_int", lambda d, rng: [SampleInput((_z((3, 4), d, rng), 1)),
                                           SampleInput((_z((2, 3, 4), d, rng, nc=True), 0), {"keepdim": True})],
           ref=_reduce(np.prod), dtypes=COMPLEX),
    _cumsum,
    OpInfo("flip", lambda d, rng: [SampleInput((_z((3, 4), d, rng), [0, 1])),
                                   SampleInput((_z((2, 3, 4), d, rng, nc=True), [-1]))],
           ref=lambda a, dims: np.flip(a, dims), dtypes=COMPLEX),
    OpInfo("roll", lambda d, rng: [SampleInput((_z((3, 4), d, rng), [1, -2], [0, 1])),
                                   SampleInput((_z((3, 4), d, rng), 5))],
           ref=lambda a, shifts, dims=None: np.roll(a, shifts, dims or None), dtypes=COMPLEX),
    OpInfo("index_select", _index_samples, ref=lambda a, dim, idx: np.take(a, idx, dim) if a.ndim else a,
           dtypes=COMPLEX),
    OpInfo("gather", _gather_samples, ref=lambda a, dim, idx: np.take_along_axis(a, idx, dim) if a.ndim else a,
           dtypes=COMPLEX),
    OpInfo("matmul", _matmul_samples, ref=np.matmul, dtypes=COMPLEX),
    OpInfo("mm", lambda d, rng: [SampleInput((_z((3, 4), d, rng), _z((4, 2), d, rng, nc=True)))], ref=np.matmul,
           dtypes=COMPLEX),
    OpInfo("bmm", lambda d, rng: [SampleInput((_z((2, 3, 4), d, rng), _z((2, 4, 2), d, rng)))], ref=np.matmul,
           dtypes=COMPLEX),
]
