"""Pointwise behaviour the OpInfos don't capture: type promotion, Python operators, in-place rules,
integer division by zero, torch's integer/rounding/NaN semantics, and the vectorized erf.

Expected values are torch 2.x's (checked against torch when these tests were written).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import strided as st
from strided.testing import available_devices

DEVICES = available_devices()
_SHAPE_MISMATCH = r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"
DTYPES = [st.uint8, st.int8, st.int16, st.int32, st.int64, st.float16, st.bfloat16, st.float32, st.float64,
          st.bool]


def _t(values, dtype=None, device="cpu"):
    return st.tensor(values, dtype=dtype, device=device)


def _vals(t):
    return t.to("cpu").tolist() if t.device.type != "meta" else None


@pytest.fixture
def default_float64():
    old = st.get_default_dtype()
    st.set_default_dtype(st.float64)
    yield
    st.set_default_dtype(old)


# ---------------------------------------------------------------------------- type promotion
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("a, b, expected", [
    (st.int32, 2.5, st.float32),            # a Python float promotes an integer tensor to the default float
    (st.int32, 5, st.int32),                # a Python int doesn't promote within the category
    (st.float16, 2.5, st.float16),
    (st.bool, 1, st.int64),
    (st.bool, True, st.bool),
    (st.uint8, st.int8, st.int16),
    (st.bfloat16, st.float16, st.float32),
    (st.uint8, st.bool, st.uint8),
    (st.int64, st.float16, st.float16),
    (st.int16, st.bfloat16, st.bfloat16),
])
def test_promotion_table(device, a, b, expected):
    x = st.ones(3, dtype=a, device=device)
    y = st.ones(3, dtype=b, device=device) if isinstance(b, st.dtype) else b
    assert (x + y).dtype is expected
    assert (x * y).dtype is expected
    assert st.where(st.ones(3, dtype=st.bool, device=device), x, y).dtype is expected


@pytest.mark.parametrize("device", DEVICES)
def test_zero_dim_tensors_promote_only_across_categories(device):
    i32 = st.ones(3, dtype=st.int32, device=device)
    assert (i32 + _t(5)).dtype is st.int32                        # 0-dim int64: same category
    assert (i32 + _t(2.5, st.float64)).dtype is st.float64         # 0-dim float64: higher category
    assert (st.ones(2, dtype=st.float16, device=device) + _t(2.5, st.float64)).dtype is st.float16
    assert (_t(2, st.int32) + _t(5, st.int64)).dtype is st.int64   # two 0-dim tensors promote normally
    assert (st.ones(2, dtype=st.uint8, device=device) + _t([1], st.int8, device)).dtype is st.int16


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("a", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("b", DTYPES, ids=lambda d: d.name)
def test_binary_result_is_promote_types(device, a, b):
    x, y = st.ones((2, 3), dtype=a, device=device), st.ones(3, dtype=b, device=device)
    expected = st.promote_types(a, b)
    assert st.maximum(x, y).dtype is expected
    assert (x == y).dtype is st.bool
    assert st.logical_xor(x, y).dtype is st.bool
    true_div = expected if expected.is_floating_point else st.get_default_dtype()
    assert (x / y).dtype is true_div


def test_int_to_float_follows_the_default_dtype(default_float64):
    i = _t([1, 2, 3])
    assert (i / 2).dtype is st.float64
    assert st.exp(i).dtype is st.float64
    assert st.sigmoid(_t([True])).dtype is st.float64
    assert (i + 0.5).dtype is st.float64


def test_unary_dtypes():
    i, b = _t([1, -2, 3]), _t([True, False])
    for fn in (st.neg, st.abs, st.sign, st.relu, st.floor, st.ceil, st.round, st.trunc):
        assert fn(i).dtype is st.int64, fn
    for fn in (st.exp, st.log, st.sqrt, st.rsqrt, st.reciprocal, st.sin, st.tanh, st.sigmoid):
        assert fn(i).dtype is st.float32 and fn(b).dtype is st.float32, fn
    assert st.sign(b).dtype is st.bool
    assert st.isnan(i).dtype is st.bool and st.isfinite(i).tolist() == [True] * 3


# ---------------------------------------------------------------------------- Python operators
def test_operators_dispatch():
    a = _t([1.0, 2.0, 4.0])
    i = _t([1, 2, 3])
    assert (a + 1).tolist() == [2.0, 3.0, 5.0]
    assert (1 + a).tolist() == [2.0, 3.0, 5.0]
    assert (1 - a).tolist() == [0.0, -1.0, -3.0]
    assert (a - 1).tolist() == [0.0, 1.0, 3.0]
    assert (2 * a).tolist() == [2.0, 4.0, 8.0]
    assert (2 / a).tolist() == [2.0, 1.0, 0.5]
    assert (a / 2).tolist() == [0.5, 1.0, 2.0]
    assert (7 // i).tolist() == [7, 3, 2]
    assert (7 % i).tolist() == [0, 1, 1]
    assert (i % 2).tolist() == [1, 0, 1]
    assert (2 ** i).tolist() == [2, 4, 8] and (2 ** i).dtype is st.int64
    assert (2.5 ** i).dtype is st.float32
    assert (i ** 2).tolist() == [1, 4, 9]
    assert (-i).tolist() == [-1, -2, -3] and abs(-i).tolist() == [1, 2, 3]
    assert (1 < i).tolist() == [False, True, True]
    assert (i == 2).tolist() == [False, True, False]
    m = st.ones(2, 3) @ st.ones(3, 4)
    assert m.shape == (2, 4) and m.tolist() == [[3.0] * 4] * 2
    b = _t([True, False])
    assert (~b).tolist() == [False, True]
    assert (b & _t([True, True])).tolist() == [True, False]
    assert (b | _t([False, False])).tolist() == [True, False]
    assert (b ^ _t([True, True])).tolist() == [False, True]


def test_inplace_operators():
    a = _t([1.0, 2.0, 3.0])
    ptr = a.data_ptr()
    a += 1
    a *= 2
    a -= _t([1.0, 1.0, 1.0])
    a /= 2
    assert a.tolist() == [1.5, 2.5, 3.5] and a.data_ptr() == ptr
    i = _t([7, 8, 9])
    i //= 2
    i %= 3
    i **= 2
    assert i.tolist() == [0, 1, 1] and i.dtype is st.int64


# ---------------------------------------------------------------------------- in-place rules
@pytest.mark.parametrize("device", DEVICES)
def test_inplace_on_broadcast_view_raises(device):
    a = st.zeros(3, device=device)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor refers to a "
                                           "single memory location"):
        a.expand(2, 3).add_(1)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        st.add(st.ones(2, 3, device=device), st.ones(3, device=device), out=a.expand(2, 3))


@pytest.mark.parametrize("device", DEVICES)
def test_inplace_downcast_and_shape_errors(device):
    i = st.ones(3, dtype=st.int64, device=device)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        i.add_(2.5)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        i.div_(2)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        i.pow_(0.5)
    with pytest.raises(RuntimeError, match=_SHAPE_MISMATCH):
        st.ones(3, device=device).add_(st.ones(2, 3, device=device))


def test_inplace_writes_through_views():
    base = st.zeros(2, 4)
    view = base[:, ::2]
    view.add_(_t([1.0, 2.0]))
    assert base.tolist() == [[1.0, 0.0, 2.0, 0.0], [1.0, 0.0, 2.0, 0.0]]
    h = st.ones(3, dtype=st.float16)
    h.mul_(_t([0.5, 1.5, 2.5], st.float64))  # a wider other is fine: cast back on the way in
    assert h.dtype is st.float16 and h.tolist() == [0.5, 1.5, 2.5]


# ---------------------------------------------------------------------------- integer semantics
@pytest.mark.parametrize("dtype", [st.int64, st.int32, st.int8, st.uint8], ids=lambda d: d.name)
def test_integer_division_by_zero_raises(dtype):
    a, z = _t([4, 5], dtype), _t([1, 0], dtype)
    for call in (lambda: st.div(a, z, rounding_mode="trunc"), lambda: st.div(a, z, rounding_mode="floor"),
                 lambda: st.floor_divide(a, z), lambda: st.remainder(a, z), lambda: a // 0, lambda: a % 0):
        with pytest.raises(RuntimeError, match="^ZeroDivisionError$"):
            call()
    assert (a / z).tolist() == [4.0, math.inf]  # true division is float: no error


def test_float_division_by_zero_and_invalid_ops_are_silent():
    a = _t([1.0, -1.0, 0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert (a / 0).tolist()[:2] == [math.inf, -math.inf]
        assert math.isnan((a // 0).tolist()[2]) and math.isnan(st.remainder(a, 0.0).tolist()[0])
        assert st.log(a).tolist()[2] == -math.inf
        assert st.exp(_t([1000.0])).tolist() == [math.inf]
        inf = _t([math.inf])
        assert math.isnan((inf - inf).item()) and math.isnan((inf * 0).item())
        assert st.sigmoid(_t([-1000.0])).tolist() == [0.0]
        h = _t([60000.0], st.float16)
        assert (h + h).tolist() == [math.inf] and st.exp(_t([20.0], st.float16)).tolist() == [math.inf]
        assert st.where(_t([True]), 1e6, h).tolist() == [math.inf]


def test_trunc_floor_and_remainder_signs():
    a, b = _t([-7, 7, -7, 7]), _t([2, -2, -2, 2])
    assert st.div(a, b, rounding_mode="trunc").tolist() == [-3, -3, 3, 3]
    assert st.div(a, b, rounding_mode="floor").tolist() == [-4, -4, 3, 3]
    assert st.remainder(a, b).tolist() == [1, -1, -1, 1]  # Python's sign rule, as torch
    f = _t([-7.5, 7.5])
    assert st.div(f, 2, rounding_mode="trunc").tolist() == [-3.0, 3.0]
    assert st.div(f, 2, rounding_mode="floor").tolist() == [-4.0, 3.0]
    assert st.remainder(f, -2).tolist() == [-1.5, -0.5]


def test_integer_pow():
    base, exp = _t([0, 1, -1, 2, -1]), _t([-1, -1, -1, -2, -2])
    assert st.pow(base, exp).tolist() == [0, 1, -1, 0, 1]
    assert st.pow(-1, _t([-1, -2, 3])).tolist() == [-1, 1, -1]
    assert st.pow(_t([True, False]), 2).tolist() == [1, 0]
    assert st.pow(_t([True, False]), True).tolist() == [True, False]
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed."):
        _t([2]) ** -1
    assert (_t([2]) ** -1.0).tolist() == [0.5]


def test_uint8_wraps_and_scalar_overflow_checks():
    u = _t([1, 2, 3], st.uint8)
    assert (u + -1).tolist() == [0, 1, 2]
    assert (u + 300).tolist() == [45, 46, 47]
    assert st.clamp(u, -1).tolist() == [255, 255, 255]  # the bound wraps to 255, as in torch
    assert st.masked_fill(u, _t([True, False, True]), -1).tolist() == [255, 2, 255]
    with pytest.raises(RuntimeError, match="value cannot be converted to type int8_t without overflow"):
        st.masked_fill(_t([1], st.int8), _t([True]), -129)
    with pytest.raises(RuntimeError, match="value cannot be converted to type c10::Half without overflow"):
        st.masked_fill(_t([1.0], st.float16), _t([True]), 1e6)
    with pytest.raises(RuntimeError, match="value cannot be converted to type int8_t without overflow"):
        st.clamp(_t([1], st.int8), 300)
    with pytest.raises(RuntimeError, match="value cannot be converted to type int8_t without overflow"):
        st.add(_t([1], st.int8), 1, alpha=300)
    assert st.where(_t([True, False]), _t([1.0, 2.0], st.float16), 1e6).tolist() == [1.0, math.inf]


# ---------------------------------------------------------------------------- float semantics
def test_scalar_comparisons_round_the_scalar_to_the_tensor_dtype():
    h = _t([0.1, 0.2], st.float16)
    assert (h == 0.1).tolist() == [True, False]
    assert (_t([0.1], st.bfloat16) == 0.1).tolist() == [True]
    assert (_t([1, 2]) == 2.5).tolist() == [False, False]


def test_nan_semantics():
    nan = math.nan
    a, b = _t([nan, 1.0, 2.0]), _t([0.0, nan, 1.0])
    assert [math.isnan(v) for v in st.maximum(a, b).tolist()] == [True, True, False]
    assert [math.isnan(v) for v in st.minimum(a, b).tolist()] == [True, True, False]
    assert st.sign(_t([nan, -0.0, -2.0, 3.0])).tolist() == [0.0, 0.0, -1.0, 1.0]
    assert math.isnan(st.relu(_t([nan])).item()) and st.relu(_t([-math.inf])).item() == 0.0
    assert math.isnan(st.clamp(_t([nan, 5.0]), 0, 1).tolist()[0])
    assert st.logical_not(_t([nan, 0.0])).tolist() == [False, True]


def test_clamp_min_greater_than_max_gives_max():
    assert st.clamp(_t([1, 5, 9]), 6, 2).tolist() == [2, 2, 2]
    assert st.clamp(_t([1.0, 5.0]), _t([6.0, 6.0]), _t([2.0, 2.0])).tolist() == [2.0, 2.0]
    assert st.clamp(_t([1, 2, 3]), min=1.5).dtype is st.float32


def test_round_half_to_even():
    assert st.round(_t([0.5, 1.5, 2.5, -0.5, -1.5])).tolist() == [0.0, 2.0, 2.0, -0.0, -2.0]
    assert st.round(_t([0.5, 2.5], st.float16)).tolist() == [0.0, 2.0]


def test_where_condition_must_be_bool():
    a = _t([1.0, 2.0])
    with pytest.raises(RuntimeError, match="where expected condition to be a boolean tensor, but got a "
                                           "tensor with dtype Float"):
        st.where(a, a, a)
    with pytest.warns(UserWarning, match="where received a uint8 condition tensor"):
        assert st.where(_t([1, 0], st.uint8), a, 0.0).tolist() == [1.0, 0.0]


def test_masked_fill_broadcasts_self_and_mask():
    r = st.masked_fill(_t([1.0, 2.0, 3.0]), _t([[True], [False]]), 0.0)
    assert r.tolist() == [[0.0, 0.0, 0.0], [1.0, 2.0, 3.0]]
    with pytest.raises(RuntimeError, match=_SHAPE_MISMATCH):
        _t([1.0, 2.0, 3.0]).masked_fill_(_t([[True], [False]]), 0.0)


# ---------------------------------------------------------------------------- layout and devices
@pytest.mark.parametrize("device", DEVICES)
def test_output_follows_input_layout(device):
    a = st.ones(3, 4, device=device).t()
    assert (a + 1).stride() == a.stride() == (1, 4)
    assert st.exp(a).stride() == (1, 4)
    assert (a + st.ones(4, 3, device=device)).stride() == (1, 4)
    assert (st.ones(4, 3, device=device) + a).stride() == (3, 1)


@pytest.mark.parametrize("device", DEVICES)
def test_cpu_zero_dim_tensor_joins_any_device(device):
    r = st.ones(2, device=device) * _t(3.0)
    assert r.device.type == device and r.shape == (2,)
    assert _vals(r) in (None, [3.0, 3.0])


# ---------------------------------------------------------------------------- erf
def test_vectorized_erf_matches_math():
    from strided.backends.cpu.special_functions import erf, erfc

    grid = np.concatenate([np.linspace(-30, 30, 100001), [0.0, -0.0, 1e-300, 2.5, -2.5, 26.0, -26.0, 1e6]])
    exact = np.array([math.erf(v) for v in grid])
    assert np.max(np.abs(erf(grid) - exact)) < 1e-13
    exact_c = np.array([math.erfc(v) for v in grid])
    normal = exact_c > 1e-290  # erfc's tail becomes subnormal past x = 26
    assert np.max(np.abs(erfc(grid) - exact_c)[normal] / exact_c[normal]) < 1e-10
    assert np.max(np.abs(erf(grid[:100]) - exact[:100])) == 0  # small arrays use math.erf directly
    assert erf(np.array([math.inf, -math.inf])).tolist() == [1.0, -1.0]
    assert erfc(np.array([math.inf, -math.inf] * 200))[:2].tolist() == [0.0, 2.0]
    assert math.isnan(erf(np.full(1000, math.nan))[0]) and math.isnan(erfc(np.full(1000, math.nan))[0])
    assert erf(grid.reshape(-1, 1)[:300]).shape == (300, 1)


def test_gelu_large_input_matches_exact_formula():
    x = np.linspace(-20, 8, 20001)
    got = st.gelu(st.from_numpy(x)).numpy()
    exact = np.array([0.5 * v * math.erfc(-v / math.sqrt(2)) for v in x])
    np.testing.assert_allclose(got, exact, rtol=1e-10, atol=0)


def test_float32_gelu_is_accurate_without_cancellation():
    # Note [Float32 GELU]: float32 inputs compute in float32, relative error <= 1e-6 for |x| < 5 and no
    # cancellation in the far negative tail (where 1 + erf(x / sqrt 2) would lose every digit).
    x = np.linspace(-16, 10, 100001).astype(np.float32)
    x64 = x.astype(np.float64)
    exact = np.array([0.5 * v * math.erfc(-v / math.sqrt(2)) for v in x64])
    got = st.gelu(st.from_numpy(x)).numpy()
    assert got.dtype == np.float32
    normal = np.abs(exact) > 1e-37
    rel = np.abs(got - exact)[normal] / np.abs(exact[normal])
    assert rel[np.abs(x[normal]) < 5].max() < 1e-6
    assert rel.max() < 1e-5
    xg = st.from_numpy(x).requires_grad_()
    st.gelu(xg).backward(st.ones(x.shape))
    d_exact = np.array([0.5 * math.erfc(-v / math.sqrt(2)) + v * math.exp(-v * v / 2) / math.sqrt(2 * math.pi)
                        for v in x64])
    assert np.abs(xg.grad.numpy() - d_exact).max() < 5e-7


@pytest.mark.parametrize("dtype", [st.float32, st.bfloat16, st.float16])
def test_gelu_special_values_as_torch(dtype):
    special = [math.inf, -math.inf, math.nan, 0.0, -0.0, 1e4, -1e4, 3e38, -3e38]
    if dtype is st.float16:
        special = special[:7]
    x = st.tensor(special, dtype=dtype)
    # torch: 0.5 * x * (1 + erf(x / sqrt 2)): gelu(inf) = inf, gelu(-inf) = -inf * 0 = nan
    expected = [math.inf, math.nan, math.nan, 0.0, 0.0, 1e4, 0.0, 3e38, 0.0][:len(special)]
    got = st.gelu(x).float().tolist()
    for g, e in zip(got, expected):
        assert (math.isnan(g) and math.isnan(e)) or g == pytest.approx(e, rel=1e-2), (got, expected)
    xg = st.tensor(special, dtype=dtype, requires_grad=True)
    st.gelu(xg).backward(st.ones(len(special), dtype=dtype))
    d_expected = [math.nan, math.nan, math.nan, 0.5, 0.5, 1.0, 0.0, 1.0, 0.0][:len(special)]
    for g, e in zip(xg.grad.float().tolist(), d_expected):
        assert (math.isnan(g) and math.isnan(e)) or g == pytest.approx(e, abs=1e-6), (xg.grad, d_expected)


@pytest.mark.parametrize("dtype", [st.float16, st.bfloat16], ids=lambda d: d.name)
def test_half_sinc_computes_in_float32(dtype):
    # torch's kernel computes in float: pi * x rounded to half would lose sin's every digit past |x| ~ 100
    x = np.array([0.0, 0.3, -0.75, 100.5, 1000.5, -3000.25], dtype=np.float32)
    xh = st.from_numpy(x).to(dtype)
    x32 = xh.float().numpy().astype(np.float64)
    safe = np.where(x32 == 0, 1.0, x32)
    expected = np.where(x32 == 0, 1.0, np.sin(np.pi * safe) / (np.pi * safe))
    got = xh.sinc()
    assert got.dtype is dtype
    np.testing.assert_allclose(got.float().numpy(), expected, rtol=1e-2, atol=1e-6)


@pytest.mark.parametrize("dtype", [st.float16, st.bfloat16], ids=lambda d: d.name)
def test_half_add_sub_remainder_fmod_round_a_scalar_operand_first(dtype):
    # torch's TensorIterator casts a Python scalar (or another dtype's 0-dim tensor) to the half type for these ops
    x = st.linspace(-6, 6, 4000).to(dtype)
    xf = x.float().numpy()
    s = np.float32(st.tensor(0.7001).to(dtype).item())  # 0.7001 rounded to the half type
    nd = dtype.numpy_dtype
    for got, expected in ((x + 0.7001, xf + s), (x - 0.7001, xf - s), (x + st.tensor(0.7001), xf + s),
                          (st.remainder(x, 0.7001), np.remainder(xf, s)), (st.fmod(x, 0.7001), np.fmod(xf, s))):
        np.testing.assert_array_equal(got.float().numpy(), expected.astype(nd).astype(np.float32))


@pytest.mark.parametrize("dtype", [st.float16, st.bfloat16], ids=lambda d: d.name)
def test_half_add_with_alpha_rounds_alpha_to_the_half_type(dtype):
    # torch's ufunc kernel reads alpha (and a scalar other) as the half type, then fmadd in float
    rng = np.random.default_rng(6)
    x, y = (st.from_numpy(rng.standard_normal(1000).astype(np.float32)).to(dtype) for _ in range(2))
    xf, yf = x.float().numpy(), y.float().numpy()
    nd = dtype.numpy_dtype
    alpha = np.float32(np.array(0.7001).astype(nd))
    scalar = np.float32(np.array(1.3001).astype(nd))
    def as_half(v):
        return v.astype(nd).astype(np.float32)

    np.testing.assert_array_equal(st.add(x, y, alpha=0.7001).float().numpy(), as_half(xf + yf * alpha))
    np.testing.assert_array_equal(st.sub(x, y, alpha=0.7001).float().numpy(), as_half(xf - yf * alpha))
    np.testing.assert_array_equal(st.add(x, 1.3001, alpha=0.7001).float().numpy(), as_half(xf + scalar * alpha))
