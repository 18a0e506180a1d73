"""OpInfos: the complex ops (views over the (re, im) pairs, conjugation, ``angle``, ``polar``, ``complex``), the
other dtype-changing view (``view.dtype``) and the complex dtypes of the other ops listed in
``ops/complex_support.py`` (Note [Complex operators]).

Values are compared with NumPy's complex arithmetic at the tolerance of the real dtype (TOLERANCES).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ... import dtypes as dt
from ..opinfo import ALL_DTYPES, COMPLEX, FLOATING, INTEGRAL, OpInfo, SampleInput, make_arg
from .helpers import aliasing, err
from .pointwise_samples import (
    FLOAT_RESULT_TOL,
    binary_samples,
    inplace_variant,
    out_variant,
    quiet_ref,
    tensor_of,
    unary_samples,
)

PARTS = (dt.float32, dt.float64)  # the dtypes of a complex tensor's parts
# compare complex results of real inputs at the inputs' tolerance
_PART_TOL = {d: (1.3e-6, 1e-5) if d is dt.float32 else (1e-7, 1e-7) for d in PARTS}


def _z(shape, d, rng, nc=False, **kw):
    return make_arg(shape, d, rng=rng, noncontiguous=nc, **kw)


def _specials(d):
    """Complex values with zeros, signed zeros, nan and inf in either part."""
    return tensor_of([0j, complex(-0.0, 0.0), complex(0.0, -0.0), 1 + 0j, -1 + 0j, 1j, -1j,
                      complex(math.nan, 1), complex(1, math.inf), complex(-math.inf, 0)], d)


# ---------------------------------------------------------------------------- views
def _view_as_real_samples(d, rng):
    yield SampleInput((_z((3, 4), d, rng),), name="contiguous")
    yield SampleInput((_z((2, 3, 4), d, rng, nc=True),), name="noncontiguous")
    yield SampleInput((_z((4, 3), d, rng).t(),), name="transposed")
    yield SampleInput((_z((5,), d, rng)[2:],), name="storage offset")
    yield SampleInput((_z((1, 3), d, rng).expand(4, 3),), name="expanded")
    yield SampleInput((_z((), d, rng),), name="0-dim")
    yield SampleInput((_z((0, 3), d, rng),), name="zero-size")


def _view_as_real_ref(a):
    return np.stack([a.real, a.imag], axis=-1)


def _real_input_errors(message):
    def errors(rng):
        for d in (dt.float32, dt.int64):
            yield err((make_arg((2, 3), d, rng=rng),), RuntimeError, message)

    return errors


def _view_as_complex_samples(d, rng):
    yield SampleInput((_z((3, 2), d, rng),), name="contiguous")
    yield SampleInput((_z((2, 3, 2), d, rng),), name="3-d")
    yield SampleInput((_z((6, 2), d, rng)[::2],), name="every other row")
    yield SampleInput((_z((4, 2), d, rng)[1:],), name="even storage offset")
    yield SampleInput((_z((3, 4, 2), d, rng).transpose(0, 1),), name="permuted leading dims")
    yield SampleInput((_z((1, 2), d, rng).expand(3, 2),), name="expanded")
    yield SampleInput((_z((2,), d, rng),), name="to 0-dim")
    yield SampleInput((_zeros((0, 2), d),), name="zero-size")


def _zeros(shape, d):
    from ...factories import zeros

    return zeros(shape, dtype=d)


def _view_as_complex_ref(a):
    return a[..., 0] + 1j * a[..., 1]


def _view_as_complex_errors(rng):
    f = dt.float32
    yield err((make_arg((3, 2), dt.int32, rng=rng),), RuntimeError,
              "view_as_complex is only supported for half, float and double tensors, but got a tensor of scalar "
              "type: Int")
    yield err((make_arg((3, 2), dt.complex64, rng=rng),), RuntimeError,
              "view_as_complex is only supported for half, float and double tensors, but got a tensor of scalar "
              "type: ComplexFloat")
    yield err((make_arg((), f, rng=rng),), RuntimeError, "Input tensor must have one or more dimensions")
    yield err((make_arg((3, 3), f, rng=rng),), RuntimeError, "Tensor must have a last dimension of size 2")
    yield err((make_arg((2, 4), f, rng=rng)[:, ::2],), RuntimeError, "Tensor must have a last dimension with stride 1")
    yield err((make_arg((2, 3), f, rng=rng)[:, :2],), RuntimeError,
              "Tensor must have a stride divisible by 2 for all but last dimension")
    # (an odd storage offset is tested in tests/backend/test_complex.py: to_device keeps no offset)
    yield err((make_arg((3, 2), dt.float16, rng=rng),), TypeError, "strided has no complex dtype of float16 precision")


def _part_samples(d, rng):
    yield from _view_as_real_samples(d, rng)
    if d.is_complex:
        yield SampleInput((_specials(d),), name="special values")


def _identity_check(result, sample):
    # the sample holds the CPU argument; a CUDA run gets a copy of it, so identity is checkable on the CPU only
    if result.device == sample.args[0].device:
        assert result is sample.args[0], "expected the input itself"


# ---------------------------------------------------------------------------- conj, angle
def _unary(d, rng, **kw):
    yield from unary_samples(d, rng, **kw)
    if d.is_complex:
        yield SampleInput((_specials(d),), name="special values")


def _angle_ref(a):
    if np.iscomplexobj(a):
        return np.angle(a)
    a = np.asarray(a, dtype=np.float64)
    return np.where(np.isnan(a), a, np.where(a < 0, np.pi, 0.0))


def _angle_samples(d, rng):
    yield from _unary(d, rng, special=(math.nan, math.inf, -math.inf, -0.0, 0.0, -2.5, 2.5))


def _sgn_ref(a):
    magnitude = np.abs(a)
    return np.where(magnitude == 0, 0, a / np.where(magnitude == 0, 1, magnitude))


# ---------------------------------------------------------------------------- polar, complex
def _pair_samples(d, rng):
    yield from binary_samples(d, rng, rhs_dtype=d)
    if d is dt.float32:
        yield SampleInput((tensor_of([0.0, -0.0, math.inf, 1.0], d), tensor_of([0.0, 1.0, 0.0, math.nan], d)),
                          name="special values")


def _polar_ref(r, theta):
    return r * np.cos(theta) + 1j * (r * np.sin(theta))


def _pair_errors():
    def errors(rng):
        f, g = make_arg((2,), dt.float32, rng=rng), make_arg((2,), dt.float64, rng=rng)
        i, z = make_arg((2,), dt.int32, rng=rng), make_arg((2,), dt.complex64, rng=rng)
        yield err((f, g), RuntimeError, "Expected object of scalar type Float but got scalar type Double for second "
                                        "argument")
        yield err((g, f), RuntimeError, "Expected object of scalar type Double but got scalar type Float for second "
                                        "argument")
        yield err((i, i), RuntimeError, "Expected both inputs to be Half, Float or Double tensors but got Int and Int")
        yield err((z, z), RuntimeError,
                  "Expected both inputs to be Half, Float or Double tensors but got ComplexFloat and ComplexFloat")
        yield err((f, make_arg((3,), dt.float32, rng=rng)), RuntimeError, "must match the size")

    return errors


# ---------------------------------------------------------------------------- existing ops, complex dtypes
def _binary(d, rng):
    yield from binary_samples(d, rng)
    yield SampleInput((_z((3, 4), d, rng), make_arg((3, 4), d.to_real(), rng=rng)), name="real other")
    yield SampleInput((make_arg((2, 1), dt.int64, rng=rng), _z((3,), d, rng)), name="integer self, broadcast")


def _scalars(d, rng, kwargs=None):
    for s in (2 - 1.5j, 1j, 3, -0.5):
        yield SampleInput((_z((3, 4), d, rng), s), dict(kwargs or {}), "scalar")
        yield SampleInput((_z((3, 4), d, rng, nc=True), s), dict(kwargs or {}), "scalar noncontiguous")
    yield SampleInput((_z((), d, rng), 1 + 1j), dict(kwargs or {}), "scalar 0-dim")
    yield SampleInput((_z((0, 2), d, rng), 1j), dict(kwargs or {}), "scalar zero-size")


def _with_kwargs(samples, **kwargs):
    def gen(d, rng):
        for s in samples(d, rng):
            yield SampleInput(s.args, dict(kwargs), f"{s.name} {kwargs}")

    return gen


def _with_alpha(samples, alpha):
    return _with_kwargs(samples, alpha=alpha)


def _true_divide(a, b, rounding_mode=None):
    return np.true_divide(a, b)


def _divisor(samples):
    """Samples whose divisor has no zeros (a complex 0/0 is nan in NumPy and in torch alike, but the
    signs of infinities differ between the two's complex division algorithms)."""
    def gen(d, rng):
        for s in samples(d, rng):
            yield SampleInput((s.args[0], s.args[1] + 20 if hasattr(s.args[1], "_sizes") else s.args[1]),
                              s.kwargs, s.name)

    return gen


def _eq_samples(d, rng):
    x = _z((3, 4), d, rng)
    yield SampleInput((x, x.clone()), name="equal")
    yield from _binary(d, rng)
    yield SampleInput((tensor_of([1 + 2j, 1 + 0j, 2j], d), tensor_of([1 + 2j, 1 - 0j, 2j], d)[:1]), name="broadcast")


def _reduce_samples(d, rng, dims=True):
    yield SampleInput((_z((3, 4), d, rng),), name="all")
    yield SampleInput((_z((2, 3, 4), d, rng, nc=True),), name="noncontiguous")
    yield SampleInput((_z((), d, rng),), name="0-dim")
    if dims:
        yield SampleInput((_z((2, 3, 4), d, rng), [0, 2]), {"keepdim": True}, "dims keepdim")
        yield SampleInput((_z((3, 4), d, rng).t(), 1), name="transposed dim")
        yield SampleInput((_z((0, 3), d, rng), 0), name="zero-size")


def _reduce(fn):
    def ref(a, dim=None, keepdim=False, dtype=None):
        axis = None if dim is None or a.ndim == 0 else tuple([dim] if isinstance(dim, int) else dim)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # the mean of nothing is nan
            return quiet_ref(fn)(a, axis=axis, keepdims=keepdim)

    return ref


def _binary_errors(rng):
    f, z = make_arg((2,), dt.float32, rng=rng), make_arg((2,), dt.complex64, rng=rng)
    yield err((f, f), RuntimeError, "For non-complex input tensors, argument alpha must not be a complex number.",
              {"alpha": 1j})
    yield err((make_arg((2,), dt.int64, rng=rng), f.int()), RuntimeError,
              "For integral input tensors, argument alpha must not be a floating point number.", {"alpha": 1j})
    yield err((z, z), RuntimeError, "Boolean alpha only supported for Boolean results.", {"alpha": True})


def _div_errors(rng):
    z = make_arg((2,), dt.complex64, rng=rng)
    for mode in ("floor", "trunc"):
        yield err((z, z), NotImplementedError, f"\"div_{mode}_cpu\" not implemented for 'ComplexFloat'",
                  {"rounding_mode": mode})


def _layout(name, samples, ref, **kw):
    return OpInfo(name, samples, ref=ref, dtypes=COMPLEX, **kw)


def _copy_real_samples(d, rng):
    yield SampleInput((_z((3, 4), d, rng),), {"dtype": dt.complex128}, "to complex128")
    yield SampleInput((_z((3, 4), d, rng, nc=True),), {"dtype": dt.complex64}, "to complex64")


_BYTE_TYPES = (dt.uint8, dt.int16, dt.int32, dt.int64, dt.float16, dt.float32, dt.float64, dt.complex64)


def _view_dtype_samples(d, rng):
    """The same bytes as another dtype: each size at or below / above the input's, contiguous rows and a
    row-sliced (strided in the other dims) input."""
    x = make_arg((3, 8), d, rng=rng)
    for target in _BYTE_TYPES:
        if (8 * d.itemsize) % target.itemsize == 0:
            yield SampleInput((x, target), name=f"as {target.name}")
    yield SampleInput((make_arg((6, 8), d, rng=rng)[::2], dt.uint8), name="rows strided")


def _view_dtype_errors(rng):
    """The layout-free refusals (the tests copy inputs to each device, which makes them contiguous; the stride and
    offset refusals are compared with torch's in tests/backend/test_alias_and_refusal_parity.py)."""
    what = "to view Float as Double (different element sizes)"
    yield err((make_arg((3, 1), dt.float32, rng=rng), dt.float64), RuntimeError,
              f"self.size(-1) must be divisible by 2 {what}, but got 1")
    yield err((make_arg((), dt.float32, rng=rng), dt.float64), RuntimeError, f"self.dim() cannot be 0 {what}")


def _view_dtype_check(result, sample):
    x, target = sample.args
    want = np.ascontiguousarray(np.asarray(x.cpu())).view(target.numpy_dtype)
    got = np.asarray(result.cpu())
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape, got.dtype, want.dtype)
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))  # the same bytes


_view_as_real = OpInfo("view_as_real", _view_as_real_samples, ref=_view_as_real_ref, op=aliasing("view_as_real"),
                       dtypes=COMPLEX, errors=_real_input_errors("view_as_real is only supported for complex tensors"))
_view_as_complex = OpInfo("view_as_complex", _view_as_complex_samples, ref=_view_as_complex_ref,
                          op=aliasing("view_as_complex"), dtypes=PARTS, errors=_view_as_complex_errors)
_conj_physical = OpInfo("conj_physical", _unary, ref=np.conjugate, dtypes=COMPLEX + FLOATING + INTEGRAL)
_angle = OpInfo("angle", _angle_samples, ref=_angle_ref, dtypes=COMPLEX + ALL_DTYPES,
                tolerances={**FLOAT_RESULT_TOL})
_polar = OpInfo("polar", _pair_samples, ref=quiet_ref(_polar_ref), dtypes=PARTS, tolerances=_PART_TOL,
                errors=_pair_errors())
_complex = OpInfo("complex", _pair_samples, ref=lambda re, im: re + 1j * im, dtypes=PARTS, tolerances=_PART_TOL,
                  errors=_pair_errors())
_sgn = OpInfo("sgn", _unary, ref=quiet_ref(_sgn_ref), dtypes=COMPLEX)
_add = OpInfo("add.Tensor", _binary, ref=np.add, dtypes=COMPLEX, errors=_binary_errors)
_sub = OpInfo("sub.Tensor", _with_alpha(_binary, 2 - 1j), ref=lambda a, b, alpha=1: a - alpha * b, dtypes=COMPLEX)
_div = OpInfo("div.Tensor", _divisor(_binary), ref=np.true_divide, dtypes=COMPLEX)

OPS = [
    OpInfo("view.dtype", _view_dtype_samples, check=_view_dtype_check, op=aliasing("view.dtype"),
           dtypes=(dt.float32, dt.float64, dt.int32, dt.int64, dt.float16, dt.uint8), errors=_view_dtype_errors),
    _view_as_real,
    _view_as_complex,
    OpInfo("real", _part_samples, ref=np.real, op=aliasing("real"), dtypes=COMPLEX),
    OpInfo("real", unary_samples, ref=np.real, dtypes=FLOATING + INTEGRAL, check=_identity_check),
    OpInfo("imag", _part_samples, ref=np.imag, op=aliasing("imag"), dtypes=COMPLEX,
           errors=_real_input_errors("imag is not implemented for tensors with non-complex dtypes.")),
    OpInfo("conj", _unary, ref=np.conjugate, dtypes=COMPLEX),
    OpInfo("conj", unary_samples, ref=np.conjugate, dtypes=FLOATING + INTEGRAL, check=_identity_check),
    OpInfo("resolve_conj", _unary, ref=lambda a: a, dtypes=COMPLEX + FLOATING, check=_identity_check),
    OpInfo("resolve_neg", _unary, ref=lambda a: a, dtypes=COMPLEX + FLOATING, check=_identity_check),
    _conj_physical,
    out_variant(_conj_physical, "conj_physical.out"),
    inplace_variant(_conj_physical, "conj_physical_", "conj_physical_"),
    _angle,
    out_variant(_angle, "angle.out"),
    _polar,
    out_variant(_polar, "polar.out"),
    _complex,
    out_variant(_complex, "complex.out"),
    # the ops of complex_support._MATH that existed before complex dtypes, on complex inputs
    _add,
    OpInfo("add.Tensor", _with_alpha(_binary, 0.5 + 2j), ref=lambda a, b, alpha=1: a + alpha * b, dtypes=COMPLEX),
    OpInfo("add.Scalar", _scalars, ref=np.add, dtypes=COMPLEX),
    inplace_variant(_add, "add_.Tensor", "add_"),
    _sub,
    OpInfo("sub.Scalar", _scalars, ref=np.subtract, dtypes=COMPLEX),
    inplace_variant(_sub, "sub_.Tensor", "sub_"),
    OpInfo("mul.Tensor", _binary, ref=np.multiply, dtypes=COMPLEX),
    OpInfo("mul.Scalar", _scalars, ref=np.multiply, dtypes=COMPLEX),
    _div,
    OpInfo("div.Scalar", _scalars, ref=np.true_divide, dtypes=COMPLEX),
    OpInfo("div.Tensor_mode", _divisor(_with_kwargs(_binary, rounding_mode=None)), ref=_true_divide, dtypes=COMPLEX,
           errors=_div_errors),
    inplace_variant(_div, "div_.Tensor", "div_"),
    OpInfo("eq.Tensor", _eq_samples, ref=np.equal, dtypes=COMPLEX),
    OpInfo("eq.Scalar", _scalars, ref=np.equal, dtypes=COMPLEX),
    OpInfo("ne.Tensor", _eq_samples, ref=np.not_equal, dtypes=COMPLEX),
    OpInfo("ne.Scalar", _scalars, ref=np.not_equal, dtypes=COMPLEX),
    OpInfo("neg", _unary, ref=np.negative, dtypes=COMPLEX),
    OpInfo("abs", _unary, ref=np.absolute, dtypes=COMPLEX),
    _sgn,
    inplace_variant(_sgn, "sgn_", "sgn_"),
    OpInfo("exp", lambda d, rng: _unary(d, rng, low=-3, high=3), ref=quiet_ref(np.exp), dtypes=COMPLEX),
    OpInfo("sum", lambda d, rng: _reduce_samples(d, rng, dims=False), ref=_reduce(np.sum), dtypes=COMPLEX),
    OpInfo("sum.dim_IntList", _reduce_samples, ref=_reduce(np.sum), dtypes=COMPLEX),
    OpInfo("mean", lambda d, rng: _reduce_samples(d, rng, dims=False), ref=_reduce(np.mean), dtypes=COMPLEX),
    OpInfo("mean.dim", _reduce_samples, ref=_reduce(np.mean), dtypes=COMPLEX),
    # layout ops move complex elements whole
    _layout("cat", lambda d, rng: [SampleInput(([_z((2, 3), d, rng), _z((1, 3), d, rng, nc=True)],))],
            lambda ts: np.concatenate(ts)),
    _layout("stack", lambda d, rng: [SampleInput(([_z((2, 3), d, rng), _z((2, 3), d, rng).t().t()], 1))],
            lambda ts, dim: np.stack(ts, dim)),
    _layout("clone", lambda d, rng: [SampleInput((_z((3, 4), d, rng).t(),)), SampleInput((_z((), d, rng),))],
            lambda a: a),
    _layout("transpose.int", lambda d, rng: [SampleInput((_z((2, 3, 4), d, rng), 0, 2))],
            lambda a, d0, d1: np.swapaxes(a, d0, d1)),
    _layout("expand", lambda d, rng: [SampleInput((_z((3, 1), d, rng), (2, 3, 4)))],
            lambda a, size: np.broadcast_to(a, size)),
    _layout("_to_copy", _copy_real_samples, lambda a, dtype: a.astype(dtype.numpy_dtype)),
]
