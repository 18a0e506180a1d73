"""The complex math ops against torch on the CPU (Note [Complex math ops]): values over a grid of special
values (signed zeros, inf and nan in either part, huge and tiny parts), result dtypes, pow's overloads and
fast paths, the in-place forms, and the matrix products."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import strided as st

torch = pytest.importorskip("torch")

_PARTS = (0.0, -0.0, 1.5, -2.0, math.inf, -math.inf, math.nan, 1e30, -1e-30)
_GRID = [complex(a, b) for a in _PARTS for b in (0.0, -0.0, 0.7, -3.0, math.inf, -math.inf, math.nan)]
_FINITE = [z for z in _GRID if math.isfinite(z.real) and math.isfinite(z.imag)]
_DTYPES = ["complex64", "complex128"]


def _pair(values, dtype):
    a = np.array(values, dtype=dtype)
    return st.from_numpy(a.copy()), torch.from_numpy(a.copy())


def _same(ours, theirs, tol=1e-5):
    a, b = np.asarray(ours), theirs.numpy()
    assert a.dtype == b.dtype and a.shape == b.shape
    if a.dtype.kind != "c":
        np.testing.assert_array_equal(a, b)
        return
    for x, y in ((a.real, b.real), (a.imag, b.imag)):  # part by part: infinities compare as values
        np.testing.assert_allclose(x, y, rtol=tol, atol=tol, equal_nan=True)


# torch's CPU log1p is vectorized (Sleef) and gives nan where an infinite part meets a nan or a tiny real
# part; strided computes c10's scalar formula there (inf, as NumPy).
_INF, _NAN = math.inf, math.nan
_LOG1P_DIFFERS = {repr(z) for z in (complex(_INF, _NAN), complex(-_INF, _NAN), complex(_NAN, _INF),
                                    complex(_NAN, -_INF), complex(-1e-30, _INF), complex(-1e-30, -_INF))}


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("name", ["sqrt", "rsqrt", "log", "log1p", "sin", "cos", "tan", "sinh", "cosh", "tanh",
                                  "sigmoid", "reciprocal", "square", "isnan", "isinf", "isfinite"])
def test_unary_special_values(name, dtype):
    values = [z for z in _GRID if not (name == "log1p" and repr(z) in _LOG1P_DIFFERS)]
    if name == "square" and dtype == "complex64":  # torch's vectorized float product keeps -inf past overflow
        values = [z for z in values if abs(z.real) != 1e30]
    x, t = _pair(values, dtype)
    _same(getattr(st, name)(x), getattr(torch, name)(t))


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("name", ["sqrt", "log", "sin", "tanh", "sigmoid", "reciprocal", "square"])
def test_inplace_forms(name, dtype):
    x, t = _pair(_FINITE, dtype)
    assert getattr(x, f"{name}_")() is x
    getattr(t, f"{name}_")()
    _same(x, t)


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("exponent", [2, 3, -2, -1, 0.5, -0.5, 2.5, 0, 1.5 - 0.5j, 1j])
def test_pow_scalar_exponent(exponent, dtype):
    """torch's fast paths: 0.5 / -0.5 / -1 as sqrt / rsqrt / reciprocal, 2 / 3 / -2 as products."""
    values = _GRID if exponent in (2, 3, -2, -1, 0.5, -0.5, 0) else _FINITE
    if dtype == "complex64" and exponent in (2, 3, -2):
        values = [z for z in values if abs(z.real) != 1e30]
    x, t = _pair(values, dtype)
    _same(x ** exponent, t ** exponent, tol=1e-4)
    y, u = x.clone().pow_(exponent), t.clone().pow_(exponent)
    _same(y, u, tol=1e-4)


@pytest.mark.parametrize("dtype", _DTYPES)
def test_pow_tensor_and_scalar_base(dtype):
    rng = np.random.default_rng(0)
    a = (rng.uniform(-2, 2, 12) + 1j * rng.uniform(-2, 2, 12)).astype(dtype)
    b = (rng.uniform(-2, 2, 12) + 1j * rng.uniform(-2, 2, 12)).astype(dtype)
    real = rng.uniform(0.5, 2, 12).astype("float32" if dtype == "complex64" else "float64")
    x, y, r = st.from_numpy(a), st.from_numpy(b), st.from_numpy(real)
    t, u, s = torch.from_numpy(a), torch.from_numpy(b), torch.from_numpy(real)
    _same(x ** y, t ** u, tol=1e-4)
    _same(r ** x, s ** t, tol=1e-4)
    _same(x ** r, t ** s, tol=1e-4)
    _same((2 - 1j) ** x, (2 - 1j) ** t, tol=1e-4)
    _same(2 ** x, 2 ** t, tol=1e-4)
    _same(r ** (1 + 1j), s ** (1 + 1j), tol=1e-4)
    _same(st.tensor([1, 2, 3]) ** (0.5 + 1j), torch.tensor([1, 2, 3]) ** (0.5 + 1j), tol=1e-4)


@pytest.mark.parametrize("dtype", _DTYPES)
def test_meta_dtypes(dtype):
    z = st.empty((2, 3), dtype=getattr(st, dtype), device="meta")
    for name in ("sqrt", "log", "sin", "tanh", "sigmoid", "reciprocal", "square"):
        assert getattr(st, name)(z).dtype is z.dtype, name
    for name in ("isnan", "isinf", "isfinite"):
        assert getattr(st, name)(z).dtype is st.bool, name
    assert (z ** 2).dtype is z.dtype and (2 ** z).dtype is z.dtype
    assert (st.empty(3, device="meta") ** (1 + 1j)).dtype is st.complex64
    assert st.where(st.empty(3, dtype=st.bool, device="meta"), z[0], 1.0).dtype is z.dtype
    assert z.prod().dtype is z.dtype and z.cumsum(1).dtype is z.dtype
    assert st.matmul(z, z.t()).shape == (2, 2)


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_selection_and_reductions(dtype):
    x, t = _pair(_FINITE[:24], dtype)
    x, t = x.reshape(4, 6), t.reshape(4, 6)
    mask = np.arange(24).reshape(4, 6) % 5 == 0
    m, mt = st.from_numpy(mask), torch.from_numpy(mask)
    _same(st.where(m, x, x.flip(0)), torch.where(mt, t, t.flip(0)))
    _same(st.where(m, x, 2j), torch.where(mt, t, 2j))
    _same(x.masked_fill(m, 1 - 2j), t.masked_fill(mt, 1 - 2j))
    _same(x.clone().masked_fill_(m, 3), t.clone().masked_fill_(mt, 3))
    _same(x.prod(1), t.prod(1), tol=1e-4)
    _same(x[:2, :3].prod(), t[:2, :3].prod(), tol=1e-4)
    _same(x.cumsum(0), t.cumsum(0))
    _same(x.clone().cumsum_(1), t.clone().cumsum_(1))
    _same(x.roll((1, -2), (0, 1)), t.roll((1, -2), (0, 1)))
    _same(x.index_select(1, st.tensor([5, 0, 5])), t.index_select(1, torch.tensor([5, 0, 5])))
    _same(x.gather(0, st.tensor([[3, 0], [1, 2]])), t.gather(0, torch.tensor([[3, 0], [1, 2]])))


@pytest.mark.parametrize("dtype", _DTYPES)
def test_matrix_products(dtype):
    rng = np.random.default_rng(1)

    def arr(*shape):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)

    for a, b in ((arr(3, 4), arr(4, 2)), (arr(4), arr(4)), (arr(3, 4), arr(4)), (arr(2, 3, 4), arr(4, 5)),
                 (arr(2, 1, 3, 4), arr(3, 4, 2))):
        _same(st.matmul(st.from_numpy(a), st.from_numpy(b)), torch.matmul(torch.from_numpy(a), torch.from_numpy(b)),
              tol=1e-4)
    a, b = arr(2, 3, 4), arr(2, 4, 2)
    _same(st.bmm(st.from_numpy(a), st.from_numpy(b)), torch.bmm(torch.from_numpy(a), torch.from_numpy(b)), tol=1e-4)
    _same(st.mm(st.from_numpy(a[0]), st.from_numpy(b[0])), torch.mm(torch.from_numpy(a[0]), torch.from_numpy(b[0])),
          tol=1e-4)


@pytest.mark.parametrize("equal_nan", [False, True])
@pytest.mark.parametrize("tolerances", [{}, {"rtol": 1e-3, "atol": 0.0}])
def test_isclose_and_allclose_take_the_modulus_of_complex_differences(equal_nan, tolerances):
    nan, inf = float("nan"), float("inf")
    a = np.array([1 + 1j, 1 + 1e-7j, complex(nan, 0), complex(inf, 1), complex(inf, 0), 1e-9j, 2 + 2j])
    b = np.array([1 + 1j, 1 + 0j, complex(nan, 0), complex(inf, 1), complex(inf, 1), 0j, 2 + 2.001j])
    for dtype in ("complex64", "complex128"):
        x, y = a.astype(dtype), b.astype(dtype)
        got = st.isclose(st.from_numpy(x), st.from_numpy(y), equal_nan=equal_nan, **tolerances).tolist()
        want = torch.isclose(torch.from_numpy(x), torch.from_numpy(y), equal_nan=equal_nan, **tolerances).tolist()
        assert got == want
    assert st.allclose(st.from_numpy(a[:2]), st.from_numpy(b[:2])) is torch.allclose(torch.from_numpy(a[:2]),
                                                                                       torch.from_numpy(b[:2]))


@pytest.mark.parametrize("dtype", _DTYPES)
def test_index_add_takes_a_complex_alpha(dtype):
    a = np.array([[1 + 2j, 3 - 1j], [0.5j, -2 + 0j], [4 + 0j, 1j]], dtype=dtype)
    src = np.array([[1 - 1j, 2 + 0j], [0.25j, -1 + 3j]], dtype=dtype)
    x, tx = _pair(a, dtype)
    s, ts = _pair(src, dtype)
    _same(x.index_add(0, st.tensor([2, 2]), s, alpha=1 - 2j), tx.index_add(0, torch.tensor([2, 2]), ts, alpha=1 - 2j))


@pytest.mark.parametrize("dtype,name", [("float32", "float"), ("float64", "double"), ("int64", "int64_t"),
                                        ("float16", "c10::Half")])
def test_a_complex_alpha_for_a_real_tensor_needs_a_zero_imaginary_part(dtype, name):
    x = st.ones(3, dtype=getattr(st, dtype))
    with pytest.raises(RuntimeError, match=f"value cannot be converted to type {re.escape(name)} without overflow"):
        x.index_add(0, st.tensor([0]), st.ones(1, dtype=x.dtype), alpha=1j)
    got = x.index_add(0, st.tensor([0]), st.ones(1, dtype=x.dtype), alpha=2 + 0j)
    want = torch.ones(3, dtype=getattr(torch, dtype)).index_add(0, torch.tensor([0]), torch.ones(1, dtype=getattr(
        torch, dtype)), alpha=2 + 0j)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


_PRODUCTS = {
    "outer": lambda m, x: m.outer(x[0], x[1]),
    "einsum ij,kj->ik": lambda m, x: m.einsum("ij,kj->ik", x, x),
    "einsum bij,bjk->bik": lambda m, x: m.einsum("bij,bjk->bik", x.reshape(2, 3, 2), x.reshape(2, 2, 3)),
    "tensordot": lambda m, x: m.tensordot(x, x.T, 1),
    "dot": lambda m, x: m.dot(x[0], x[1]),
    "vdot conjugates the first": lambda m, x: m.vdot(x[0], x[1]),
    "inner": lambda m, x: m.inner(x, x),
    "trace": lambda m, x: m.trace(x[:, :3]),
    "diag": lambda m, x: m.diag(x[:, :3]),
    "diag of a vector": lambda m, x: m.diag(x[0], 1),
    "diagonal": lambda m, x: x[:, :3].diagonal(1),
    "repeat": lambda m, x: x.repeat(2, 1),
    "count_nonzero": lambda m, x: m.count_nonzero(x * (x.abs() > 1)),
    "masked_select": lambda m, x: m.masked_select(x, x.abs() > 1),
    "index": lambda m, x: x[m.tensor([0, 2, 0])],
    "index two dims": lambda m, x: x[m.tensor([0, 2]), m.tensor([1, 3])],
    "index by mask": lambda m, x: x[x.abs() > 1],
    "index_put": lambda m, x: x.clone().index_put_((m.tensor([0, 2]),), x[1]),
    "index_put accumulate": lambda m, x: x.clone().index_put_((m.tensor([0, 0]),), x[:2], accumulate=True),
    "setitem": lambda m, x: (lambda y: (y.__setitem__((0, 1), 1 - 1j), y)[1])(x.clone()),
    "nonzero": lambda m, x: m.nonzero(x * (x.abs() > 1)),
    "tril": lambda m, x: x.tril(),
    "triu_": lambda m, x: x.clone().triu_(1),
    "linalg.vector_norm": lambda m, x: m.linalg.vector_norm(x, 3, dim=1),
    "linalg.norm": lambda m, x: m.linalg.norm(x),
}


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("name", list(_PRODUCTS))
def test_products_indexing_and_norms(name, dtype):
    rng = np.random.default_rng(7)
    a = (rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))).astype(dtype)
    z, tz = _pair(a, dtype)
    got, want = _PRODUCTS[name](st, z), _PRODUCTS[name](torch, tz)
    tol = 1e-5 if dtype == "complex64" else 1e-12
    if want.dtype.is_floating_point:  # the norms' real results
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=tol)
    else:
        _same(got, want, tol=tol)


def test_complex_gradients_through_einsum_index_and_norm():
    a = np.random.default_rng(8).standard_normal((3, 4)) + 1j * np.random.default_rng(9).standard_normal((3, 4))
    x, tx = st.from_numpy(a.copy()).requires_grad_(), torch.from_numpy(a.copy()).requires_grad_()
    for m, t in ((st, x), (torch, tx)):
        y = m.einsum("ij,kj->ik", t, t)[m.tensor([0, 2])]
        (m.view_as_real(y).sum() + m.linalg.vector_norm(t) + m.vdot(t[0], t[1]).real).backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), atol=1e-12)


@pytest.mark.parametrize("dtype", _DTYPES)
def test_random_complex_samples_as_torch(dtype):
    """Each part uniform on [0, 1) (rand) or normal with variance 1/2 (randn), so that E|z|^2 = 1."""
    z = st.randn(200_000, dtype=getattr(st, dtype))
    assert z.dtype is getattr(st, dtype)
    assert abs(float(z.real.var()) - 0.5) < 0.01 and abs(float(z.imag.var()) - 0.5) < 0.01
    assert abs(float((z.abs() ** 2).mean()) - 1.0) < 0.01
    r = st.rand(100_000, dtype=getattr(st, dtype))
    assert 0 <= float(r.real.min()) and float(r.imag.max()) < 1 and abs(float(r.imag.mean()) - 0.5) < 0.01
    assert st.randn_like(z[:3]).dtype is z.dtype and st.rand_like(r[:2]).shape == (2,)
    g = st.Generator().manual_seed(3)
    assert st.equal(st.randn(4, dtype=z.dtype, generator=g), st.randn(4, dtype=z.dtype,
                                                                      generator=st.Generator().manual_seed(3)))


@pytest.mark.parametrize("p", [2, 1, 3, math.inf, -1])
def test_norm_of_complex_is_the_norm_of_the_moduli_with_torchs_gradient(p):
    """The norm op takes complex tensors on the CPU (real results); its gradient uses sgn (z / |z|)."""
    a = np.random.default_rng(11).standard_normal((3, 4)) + 1j * np.random.default_rng(12).standard_normal((3, 4))
    x, tx = st.from_numpy(a.copy()).requires_grad_(), torch.from_numpy(a.copy()).requires_grad_()
    r, tr = x.norm(p), tx.norm(p)
    r2, tr2 = st.norm(x, p, dim=1, keepdim=True), torch.norm(tx, p, dim=1, keepdim=True)
    assert r.dtype is st.float64 and tuple(r2.shape) == (3, 1)
    np.testing.assert_allclose(r2.detach().numpy(), tr2.detach().numpy(), rtol=1e-12)
    (r + r2.sum()).backward()
    (tr + tr2.sum()).backward()
    np.testing.assert_allclose(float(r), float(tr), rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), atol=1e-12)
    assert st.from_numpy(a.astype(np.complex64)).to("meta").norm().dtype is st.float32


_SPREADS = {
    "var": lambda m, x: x.var(),
    "std dim": lambda m, x: x.std(dim=0),
    "var correction 0 keepdim": lambda m, x: m.var(x, dim=1, correction=0, keepdim=True),
    "std unbiased=False": lambda m, x: x.std(1, unbiased=False),
}


@pytest.mark.parametrize("name", list(_SPREADS))
def test_var_and_std_of_complex_as_torch(name):
    """E|z - mean|^2 (real results) on the CPU, with torch's gradients."""
    a = np.random.default_rng(13).standard_normal((3, 4)) + 1j * np.random.default_rng(14).standard_normal((3, 4))
    x, tx = st.from_numpy(a.copy()).requires_grad_(), torch.from_numpy(a.copy()).requires_grad_()
    r, tr = _SPREADS[name](st, x), _SPREADS[name](torch, tx)
    assert r.dtype is st.float64
    np.testing.assert_allclose(r.detach().numpy(), tr.detach().numpy(), rtol=1e-12)
    r.sum().backward()
    tr.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), atol=1e-12)


_MORE_MATH = {
    "log2": lambda m, x, y, w: m.log2(x), "log10": lambda m, x, y, w: m.log10(x), "exp2": lambda m, x, y, w: m.exp2(x),
    "expm1": lambda m, x, y, w: m.expm1(x), "expm1 near 0": lambda m, x, y, w: m.expm1(x * 1e-9),
    "asin": lambda m, x, y, w: m.asin(x), "acos": lambda m, x, y, w: m.acos(x), "atan": lambda m, x, y, w: m.atan(x),
    "asinh": lambda m, x, y, w: m.asinh(x), "acosh": lambda m, x, y, w: m.acosh(x),
    "atanh": lambda m, x, y, w: m.atanh(x), "log2_": lambda m, x, y, w: x.clone().log2_(),
    "cumprod": lambda m, x, y, w: m.cumprod(x, 1), "cumprod dim 0": lambda m, x, y, w: x.cumprod(0),
    "lerp": lambda m, x, y, w: m.lerp(x, y, 0.3), "lerp 0.7": lambda m, x, y, w: m.lerp(x, y, 0.7),
    "lerp complex weight": lambda m, x, y, w: m.lerp(x, y, 0.2 + 0.6j),
    "lerp tensor weight": lambda m, x, y, w: m.lerp(x, y, w), "lerp_": lambda m, x, y, w: x.clone().lerp_(y, 0.6),
    "addcmul": lambda m, x, y, w: m.addcmul(x, y, w), "addcmul value": lambda m, x, y, w: m.addcmul(x, y, w, value=-2j),
    "addcmul real tensor1": lambda m, x, y, w: m.addcmul(x, y.real, w, value=0.5),
    "addcdiv": lambda m, x, y, w: m.addcdiv(x, y, w, value=2),
    "addcdiv_": lambda m, x, y, w: x.clone().addcdiv_(y, w, value=1 + 1j),
}


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("name", list(_MORE_MATH))
def test_log2_exp2_inverse_trig_cumprod_lerp_addcmul_as_torch(name, dtype):
    """Values and dtypes as torch's; complex128 gradients through the conjugated formulas (Note [Complex
    gradients]) as torch's."""
    rng = np.random.default_rng(21)
    a, b, c = ((rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))).astype(dtype) for _ in range(3))
    args, targs = zip(*(_pair(v, dtype) for v in (a, b, c)))
    got, want = _MORE_MATH[name](st, *args), _MORE_MATH[name](torch, *targs)
    _same(got, want, tol=2e-5 if dtype == "complex64" else 1e-12)
    if dtype == "complex128" and not name.endswith("_"):
        xs = [st.from_numpy(v.copy()).requires_grad_() for v in (a, b, c)]
        ts = [torch.from_numpy(v.copy()).requires_grad_() for v in (a, b, c)]
        st.view_as_real(_MORE_MATH[name](st, *xs)).pow(2).sum().backward()
        torch.view_as_real(_MORE_MATH[name](torch, *ts)).pow(2).sum().backward()
        for x, t in zip(xs, ts):
            assert (x.grad is None) == (t.grad is None)
            if t.grad is not None:
                np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)


_SCATTERS = {
    "scatter src": lambda m, x, i, s: m.scatter(x, 1, i, s),
    "scatter value": lambda m, x, i, s: m.scatter(x, 1, i, 1.5 - 2j),
    "scatter real value": lambda m, x, i, s: x.scatter(0, i[:1] % 3, 3),
    "scatter_ src": lambda m, x, i, s: x.clone().scatter_(1, i, s),
    "scatter_ value": lambda m, x, i, s: x.clone().scatter_(0, i[:1] % 3, -1j),
    "scatter 0-dim": lambda m, x, i, s: m.scatter(x[0, 0], 0, i[0, 0] * 0, s[0, 0]),
}


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("name", list(_SCATTERS))
def test_scatter_of_complex_as_torch(name, dtype):
    """scatter with a complex src or value (both parts written), in place and 0-dim, with torch's gradients."""
    rng = np.random.default_rng(41)
    a, b = ((rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))).astype(dtype) for _ in range(2))
    i = np.array([[2, 0, 1, 3], [1, 1, 0, 2], [3, 2, 2, 0]])
    got = _SCATTERS[name](st, st.from_numpy(a.copy()), st.from_numpy(i), st.from_numpy(b.copy()))
    want = _SCATTERS[name](torch, torch.from_numpy(a.copy()), torch.from_numpy(i), torch.from_numpy(b.copy()))
    _same(got, want)
    if dtype == "complex128" and name == "scatter src":
        x, s_ = (st.from_numpy(v.copy()).requires_grad_() for v in (a, b))
        tx, ts = (torch.from_numpy(v.copy()).requires_grad_() for v in (a, b))
        st.view_as_real(st.scatter(x, 1, st.from_numpy(i), s_)).pow(2).sum().backward()
        torch.view_as_real(torch.scatter(tx, 1, torch.from_numpy(i), ts)).pow(2).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
        np.testing.assert_allclose(s_.grad.numpy(), ts.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("dtype", _DTYPES)
def test_nan_to_num_of_complex_as_torch(dtype):
    """Each part apart with the part dtype's limits (torch's), out of place and in place."""
    inf, nan = float("inf"), float("nan")
    vals = [complex(1, 2), complex(nan, inf), complex(-inf, nan), complex(inf, -inf), complex(nan, nan), 0j]
    a = np.empty(len(vals), dtype)
    a.real, a.imag = [v.real for v in vals], [v.imag for v in vals]
    x, t = st.from_numpy(a.copy()), torch.from_numpy(a.copy())
    _same(st.nan_to_num(x), torch.nan_to_num(t))
    _same(x.nan_to_num(nan=1.0, posinf=2.0, neginf=-3.0), t.nan_to_num(nan=1.0, posinf=2.0, neginf=-3.0))
    y = x.clone()
    assert y.nan_to_num_(posinf=7.0) is y
    _same(y, t.clone().nan_to_num_(posinf=7.0))


def _gemm_operands(dtype):
    rng = np.random.default_rng(31)

    def z(*shape):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)

    return {"c": z(3, 5), "a": z(3, 4), "b": z(4, 5), "row": z(5), "v": z(4), "u": z(3), "B1": z(2, 3, 4),
            "B2": z(2, 4, 5), "B3": z(2, 3, 5), "wt": z(5, 4)}


GEMMS = {
    "addmm": (lambda m, c, a, b: m.addmm(c, a, b), "c a b"),
    "addmm beta alpha": (lambda m, c, a, b: m.addmm(c, a, b, beta=0.5 - 1j, alpha=2j), "c a b"),
    "addmm row": (lambda m, r, a, b: m.addmm(r, a, b), "row a b"),
    "addmm_": (lambda m, c, a, b: c.clone().addmm_(a, b, alpha=1 + 1j), "c a b"),
    "baddbmm": (lambda m, c, a, b: m.baddbmm(c, a, b, beta=2, alpha=1 - 1j), "B3 B1 B2"),
    "addbmm": (lambda m, c, a, b: m.addbmm(c, a, b, alpha=1j), "c B1 B2"),
    "linear": (lambda m, x, w, bias: m.nn.functional.linear(x, w, bias), "a wt row"),
    "linear batched": (lambda m, x, w: m.nn.functional.linear(x, w), "B1 wt"),
    "linear vector weight": (lambda m, x, w: m.nn.functional.linear(x, w), "a v"),
    "mv": (lambda m, a, v: m.mv(a, v), "a v"),
    "addmv": (lambda m, u, a, v: m.addmv(u, a, v, beta=1j, alpha=2), "u a v"),
    "addr": (lambda m, c, u, r: m.addr(c, u, r, alpha=1 - 2j), "c u row"),
    "ger": (lambda m, u, r: m.ger(u, r), "u row"),
}


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("name", list(GEMMS))
def test_gemms_with_c_operands_and_their_gradients_as_torch(name, dtype):
    """addmm / baddbmm / linear and the composites over them: complex alpha and beta, torch's values, and (for
    complex128) torch's gradients through the conjugated formulas."""
    f, keys = GEMMS[name]
    ops_ = _gemm_operands(dtype)
    arrays = [ops_[k] for k in keys.split()]
    tol = 2e-5 if dtype == "complex64" else 1e-12
    xs = [st.from_numpy(a.copy()).requires_grad_(dtype == "complex128") for a in arrays]
    ts = [torch.from_numpy(a.copy()).requires_grad_(dtype == "complex128") for a in arrays]
    got, want = f(st, *xs), f(torch, *ts)
    _same(got.detach(), want.detach(), tol=tol * 10)
    if dtype == "complex128":
        st.view_as_real(got).pow(2).sum().backward()
        torch.view_as_real(want).pow(2).sum().backward()
        for x, t in zip(xs, ts):
            np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-10)


def _idx(m, v):
    return m.tensor(v)


COMPOSITES = {
    "fliplr": lambda m, x, y: m.fliplr(x), "flipud": lambda m, x, y: m.flipud(x),
    "rot90": lambda m, x, y: m.rot90(x, 1, [0, 1]), "tile": lambda m, x, y: m.tile(x, (2, 1)),
    "block_diag": lambda m, x, y: m.block_diag(x, y), "adjoint": lambda m, x, y: x.adjoint() * 1,
    "tensor_split": lambda m, x, y: m.tensor_split(x, 2)[1], "hsplit": lambda m, x, y: m.hsplit(x, 2)[0],
    "vsplit": lambda m, x, y: m.vsplit(x, [1])[1], "hstack": lambda m, x, y: m.hstack([x, y]),
    "vstack": lambda m, x, y: m.vstack([x, y]), "dstack": lambda m, x, y: m.dstack([x, y]),
    "column_stack": lambda m, x, y: m.column_stack([x, y]), "atleast_3d": lambda m, x, y: m.atleast_3d(x),
    "moveaxis": lambda m, x, y: m.moveaxis(x, 0, 1), "ravel": lambda m, x, y: m.ravel(x),
    "diag_embed": lambda m, x, y: m.diag_embed(x), "diagflat": lambda m, x, y: m.diagflat(x[0]),
    "kron": lambda m, x, y: m.kron(x, y), "diff": lambda m, x, y: m.diff(x, dim=1),
    "diff n2": lambda m, x, y: m.diff(x, n=2, dim=0), "take": lambda m, x, y: m.take(x, _idx(m, [0, 5, 11])),
    "take_along_dim": lambda m, x, y: m.take_along_dim(x, _idx(m, [[0], [1], [2]]), 1),
    "index_fill": lambda m, x, y: x.index_fill(0, _idx(m, [0, 2]), 1 - 1j),
    "index_copy": lambda m, x, y: x.index_copy(0, _idx(m, [0, 2]), y[:2]),
    "masked_scatter": lambda m, x, y: x.masked_scatter(x.abs() > 1, y), "trapezoid": lambda m, x, y: m.trapezoid(x),
    "cross": lambda m, x, y: m.linalg.cross(x[:, :3], y[:, :3]), "dist": lambda m, x, y: m.dist(x, y),
    "dist 3": lambda m, x, y: m.dist(x, y, 3), "isreal": lambda m, x, y: m.isreal(x * (x.real > 0)),
    "std_mean": lambda m, x, y: m.std_mean(x, 1)[0], "sinc": lambda m, x, y: m.sinc(x),
    "sinc at 0": lambda m, x, y: m.sinc(x * (x.real > 0)), "vander": lambda m, x, y: m.vander(x[0], 3),
    "vander increasing": lambda m, x, y: m.vander(x[1], increasing=True),
}
TRUTH = {
    "any": lambda m, x, y: m.any(x * (x.real > 0)), "all dim": lambda m, x, y: (x * (x.real > 0)).all(1),
    "logical_not": lambda m, x, y: m.logical_not(x * (x.real > 0)),
    "logical_and": lambda m, x, y: m.logical_and(x * (x.real > 0), y),
    "logical_xor": lambda m, x, y: m.logical_xor(x * (x.real > 0), y),
}


@pytest.mark.parametrize("name", list(COMPOSITES) + list(TRUTH))
def test_composites_and_truth_values_of_complex_as_torch(name):
    """Composites listed once their callees take complex tensors: torch's values and complex128 gradients;
    truth values are "nonzero" (either part)."""
    f = COMPOSITES.get(name) or TRUTH[name]
    rng = np.random.default_rng(41)
    a, b = (rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4)) for _ in range(2))
    xs = [st.from_numpy(v.copy()).requires_grad_() for v in (a, b)]
    ts = [torch.from_numpy(v.copy()).requires_grad_() for v in (a, b)]
    got, want = f(st, *xs), f(torch, *ts)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1] and tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12, atol=1e-12)
    if want.requires_grad:
        (st.view_as_real(got) if got.dtype.is_complex else got).pow(2).sum().backward()
        if name.startswith("vander"):  # torch's own complex vander backward fails (an in-place cumprod):
            v = st.from_numpy(a[0].copy()).requires_grad_()  # strided's against finite differences instead
            assert st.autograd.gradcheck(lambda t: st.vander(t, 3), (v,))
            return
        (torch.view_as_real(want) if want.is_complex() else want).pow(2).sum().backward()
        for x, t in zip(xs, ts):
            assert (x.grad is None) == (t.grad is None)
            if t.grad is not None:
                np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)


_LOG_SUM_EXPS = {
    "logsumexp": lambda m, x: m.logsumexp(x, 1),
    "logsumexp dims keepdim": lambda m, x: x.logsumexp((0, 1), keepdim=True),
    "logsumexp 0-dim": lambda m, x: m.logsumexp(x[1, 2], 0),
    "special.logsumexp": lambda m, x: m.special.logsumexp(x, 0),
    "logcumsumexp": lambda m, x: m.logcumsumexp(x, 1),
    "logcumsumexp dim 0": lambda m, x: x.logcumsumexp(0),
    "logcumsumexp 0-dim": lambda m, x: m.logcumsumexp(x[0, 1], 0),
}


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("name", list(_LOG_SUM_EXPS))
def test_logsumexp_and_logcumsumexp_of_complex_as_torch(name, dtype):
    """Note [Complex log-sum-exp]: values and dtype as torch's; complex128 gradients as torch's, and gradcheck."""
    rng = np.random.default_rng(31)
    a = (rng.standard_normal((3, 5)) + 3j * rng.standard_normal((3, 5))).astype(dtype)
    x, t = st.from_numpy(a.copy()), torch.from_numpy(a.copy())
    _same(_LOG_SUM_EXPS[name](st, x), _LOG_SUM_EXPS[name](torch, t), tol=2e-5 if dtype == "complex64" else 1e-12)
    if dtype == "complex128":
        x, t = st.from_numpy(a.copy()).requires_grad_(), torch.from_numpy(a.copy()).requires_grad_()
        st.view_as_real(_LOG_SUM_EXPS[name](st, x)).pow(2).sum().backward()
        torch.view_as_real(_LOG_SUM_EXPS[name](torch, t)).pow(2).sum().backward()
        np.testing.assert_allclose(x.grad.resolve_conj().numpy(), t.grad.resolve_conj().numpy(), rtol=1e-10,
                                   atol=1e-12)
        small = st.from_numpy(a[:2, :3].copy()).requires_grad_()
        assert st.autograd.gradcheck(lambda v: _LOG_SUM_EXPS[name](st, v), (small,))


def test_complex_logcumsumexp_and_logsumexp_special_values_as_torch():
    """c10's helper: -inf real parts give -inf + 0i, a NaN in either part NaN + NaN i, +inf meeting +inf the
    log of the sum; logsumexp shifts by the largest real part with an infinite one replaced by 0."""
    inf, nan = math.inf, math.nan
    rows = [[complex(-inf, 2), 1 + 1j, complex(-inf, -1), complex(inf, 1), complex(inf, -2), 3j, complex(nan, 0), 1],
            [complex(-inf, 2), complex(-inf, 3), 1, 500 + 1j, 2, complex(inf, 0), 1, 2],
            [1, complex(0, nan), 2, 3, 4, 5, 6, 7]]
    x, t = _pair(rows, "complex128")
    _same(st.logcumsumexp(x, 1), torch.logcumsumexp(t, 1))
    pairs = [[complex(-inf, 2), complex(-inf, 1)], [complex(inf, 1), complex(inf, 2)], [complex(inf, 1), 2],
             [complex(nan, 1), 3], [700 + 1j, 701 - 1j]]
    x, t = _pair(pairs, "complex128")
    _same(st.logsumexp(x, 1), torch.logsumexp(t, 1))
    _same(st.logsumexp(st.zeros(0, 3, dtype=st.complex64), 0),
          torch.logsumexp(torch.zeros(0, 3, dtype=torch.complex64), 0))
    assert st.empty(2, 3, dtype=st.complex64, device="meta").logsumexp(1).dtype is st.complex64
    assert st.empty(2, 3, dtype=st.complex128, device="meta").logcumsumexp(1).dtype is st.complex128


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("reduce", ["sum", "prod", "mean"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_of_complex_as_torch(reduce, include_self, dtype):
    """torch's CPU reduces complex sums, products and means (the functional and in-place forms); the in-place
    form's gradients are torch's formula's."""
    rng = np.random.default_rng(43)
    a, b = ((rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))).astype(dtype) for _ in range(2))
    i = np.array([[2, 0, 1, 3], [1, 1, 0, 2], [0, 2, 2, 0]])
    for dim in (0, 1):
        got = st.from_numpy(a.copy()).scatter_reduce(dim, st.from_numpy(i % 3 if dim == 0 else i),
                                                     st.from_numpy(b.copy()), reduce, include_self=include_self)
        want = torch.from_numpy(a.copy()).scatter_reduce(dim, torch.from_numpy(i % 3 if dim == 0 else i),
                                                         torch.from_numpy(b.copy()), reduce, include_self=include_self)
        _same(got, want, tol=1e-5 if dtype == "complex64" else 1e-12)
    if dtype == "complex128":
        grads = []
        for lib in (st, torch):
            x, s_ = lib.from_numpy(a.copy()).requires_grad_(), lib.from_numpy(b.copy()).requires_grad_()
            z = x.clone()
            z.scatter_reduce_(1, lib.from_numpy(i), s_, reduce, include_self=include_self)
            lib.view_as_real(z).pow(2).sum().backward()
            grads.append([g.resolve_conj().numpy() for g in (x.grad, s_.grad)])
        for g, w in zip(*grads):
            np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


def test_complex_scatter_reduce_refusals_as_torch():
    """amax / amin of complex values, and the functional form's gradient, are refused in torch's words."""
    i = st.tensor([[0, 1]])
    for reduce in ("amax", "amin"):
        with pytest.raises(NotImplementedError, match=re.escape(
                f"\"scatter_gather_tensor_cpu_reduce_{reduce}\" not implemented for 'ComplexFloat'")):
            st.zeros(1, 2, dtype=st.complex64).scatter_reduce(1, i, st.ones(1, 2, dtype=st.complex64), reduce)
    x = st.zeros(1, 2, dtype=st.complex128).requires_grad_()
    with pytest.raises(RuntimeError, match="scatter_reduce does not support automatic differentiation for outputs "
                                           "with complex dtype"):
        x.scatter_reduce(1, i, st.ones(1, 2, dtype=st.complex128), "sum")
    with st.no_grad():
        x.scatter_reduce(1, i, st.ones(1, 2, dtype=st.complex128), "sum")  # nothing recorded: no refusal
    with pytest.raises(NotImplementedError, match=re.escape("\"index_func_\" not implemented for 'ComplexFloat'")):
        st.zeros(3, dtype=st.complex64).index_reduce(0, st.tensor([0, 0]), st.tensor([1j, 2 + 0j]), "prod")


@pytest.mark.parametrize("accumulate", [False, True])
def test_put_of_complex_as_torch(accumulate):
    a = np.arange(6).reshape(2, 3) * (1 - 0.5j)
    src = np.array([1 + 1j, 2j, 3, -1j])
    idx = np.array([1, 1, 4, -1])
    got = st.from_numpy(a.copy()).put(st.from_numpy(idx), st.from_numpy(src.copy()), accumulate)
    want = torch.from_numpy(a.copy()).put(torch.from_numpy(idx), torch.from_numpy(src.copy()), accumulate)
    if accumulate:
        _same(got, want, tol=1e-12)
    else:  # duplicate index 1: either source may land there (as torch documents); the rest must agree
        np.testing.assert_array_equal(np.delete(got.numpy().ravel(), 1), np.delete(want.numpy().ravel(), 1))
    x, s_ = st.from_numpy(a.copy()), st.from_numpy(src.copy())
    x.put_(st.from_numpy(idx), s_, accumulate=accumulate)
    np.testing.assert_array_equal(np.delete(x.numpy().ravel(), 1), np.delete(got.numpy().ravel(), 1))
    grads = []
    for lib in (st, torch):
        x, s_ = lib.from_numpy(a.copy()).requires_grad_(), lib.from_numpy(src.copy()).requires_grad_()
        lib.view_as_real(x.put(lib.from_numpy(idx), s_, True)).pow(2).sum().backward()
        grads.append([g.resolve_conj().numpy() for g in (x.grad, s_.grad)])
    for g, w in zip(*grads):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", _DTYPES)
def test_logaddexp_and_silu_of_complex_as_torch(dtype):
    """logaddexp through c10's complex helper, special values included, with torch's conjugated gradients;
    silu's values, and its gradient refused as torch refuses it (CUDA:
    tests/cuda/test_complex_logaddexp_silu_cuda.py)."""
    rng = np.random.default_rng(7)
    a, b = ((rng.standard_normal((3, 4)) + 3j * rng.standard_normal((3, 4))).astype(dtype) for _ in range(2))
    tol = 2e-5 if dtype == "complex64" else 1e-12
    for f in (lambda m, x, y: m.logaddexp(x, y), lambda m, x, y: m.logaddexp(x, y.real),
              lambda m, x, y: m.logaddexp(x[:, :1], y), lambda m, x, y: m.nn.functional.silu(x)):
        _same(f(st, st.from_numpy(a.copy()), st.from_numpy(b.copy())),
              f(torch, torch.from_numpy(a.copy()), torch.from_numpy(b.copy())), tol=tol)
    inf, nan = math.inf, math.nan
    x, t = _pair([complex(-inf, 2), complex(inf, 1), complex(nan, 0), 1 + 1j, complex(-inf, 0), 3], dtype)
    y, u = _pair([complex(-inf, 1), complex(inf, -2), 1, complex(0, nan), 2, complex(-inf, 5)], dtype)
    _same(st.logaddexp(x, y), torch.logaddexp(t, u))
    if dtype == "complex128":
        xs = [st.from_numpy(v.copy()).requires_grad_() for v in (a, b)]
        ts = [torch.from_numpy(v.copy()).requires_grad_() for v in (a, b)]
        st.view_as_real(st.logaddexp(*xs)).pow(2).sum().backward()
        torch.view_as_real(torch.logaddexp(*ts)).pow(2).sum().backward()
        for g, w in zip(xs, ts):
            np.testing.assert_allclose(g.grad.numpy(), w.grad.resolve_conj().numpy(), rtol=1e-10, atol=1e-12)
        with pytest.raises(RuntimeError, match="silu does not support automatic differentiation for outputs with "
                                               "complex dtype"):
            st.nn.functional.silu(xs[0])


@pytest.mark.parametrize("dtype", _DTYPES)
def test_cov_and_corrcoef_of_complex_as_torch(dtype):
    """torch's Correlation.cpp: the centered product with the conjugate transpose; corrcoef divides by the square
    roots of the diagonal's real parts and clips the real and imaginary parts to [-1, 1] apart; weights and
    corrections as for real input; gradients through the composition (CUDA: test_complex_cov_norms_cuda.py)."""
    rng = np.random.default_rng(11)
    a = (rng.standard_normal((3, 5)) + 1j * rng.standard_normal((3, 5))).astype(dtype)
    tol = 2e-5 if dtype == "complex64" else 1e-12
    fw, aw = [1, 2, 1, 3, 1], [0.5, 1.0, 2.0, 1.0, 0.25]
    for f in (lambda m, x: m.cov(x), lambda m, x: m.corrcoef(x), lambda m, x: m.cov(x[0]),
              lambda m, x: m.corrcoef(x[1]), lambda m, x: m.cov(x, correction=0),
              lambda m, x: m.cov(x.t(), fweights=m.tensor(fw[:3]), aweights=m.tensor(aw[:3])),
              lambda m, x: m.cov(x, fweights=m.tensor(fw), aweights=m.tensor(aw))):
        _same(f(st, st.from_numpy(a.copy())), f(torch, torch.from_numpy(a.copy())), tol=tol)
    c = st.corrcoef(st.from_numpy(np.array([[1, 1j, -1], [1j, -1, 1]], dtype)))
    assert np.all(np.abs(c.numpy().real) <= 1) and np.all(np.abs(c.numpy().imag) <= 1)
    if dtype == "complex128":
        for name in ("cov", "corrcoef"):
            x, t = st.from_numpy(a.copy()).requires_grad_(), torch.from_numpy(a.copy()).requires_grad_()
            st.view_as_real(getattr(st, name)(x)).pow(2).sum().backward()
            torch.view_as_real(getattr(torch, name)(t)).pow(2).sum().backward()
            np.testing.assert_allclose(x.grad.numpy(), t.grad.resolve_conj().numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", _DTYPES)
def test_rms_norm_renorm_ldexp_fold_and_embedding_of_complex_as_torch(dtype):
    """On the CPU (CUDA: test_complex_cov_norms_cuda.py): rms_norm's complex square and real epsilon (a zero row stays
    zero), renorm by the slices' real norms, ldexp, fold's sums, embedding's rows; gradients through the
    compositions, and embedding's complex gradient refused in torch's words."""
    rng = np.random.default_rng(5)

    def c(*shape):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)

    a, w, cols, cols2 = c(2, 4, 3), c(3), c(1, 4, 4), c(2, 8, 9)
    idx = np.array([[0, 2], [1, 1]])
    cases = [
        (lambda m, x: m.nn.functional.rms_norm(x, (3,)), a),
        (lambda m, x: m.nn.functional.rms_norm(x, (4, 3), eps=1e-3), a),
        (lambda m, x: m.nn.functional.rms_norm(x, (3,), m.from_numpy(w.copy())), a),
        (lambda m, x: m.nn.functional.rms_norm(x, (3,)), np.zeros((1, 3), dtype)),
        (lambda m, x: m.renorm(x, 2, 0, 1.0), a), (lambda m, x: m.renorm(x, 1, 2, 0.5), a),
        (lambda m, x: m.ldexp(x, m.from_numpy(np.array([1, -2, 3]))), a),
        (lambda m, x: m.nn.functional.fold(x, (3, 3), (2, 2)), cols),
        (lambda m, x: m.nn.functional.fold(x, (4, 5), (2, 2), padding=1, stride=2), cols2),
        (lambda m, x: m.nn.functional.embedding(m.from_numpy(idx), x), a[0]),
    ]
    tol = 2e-5 if dtype == "complex64" else 1e-12
    for f, x in cases:
        _same(f(st, st.from_numpy(x.copy())), f(torch, torch.from_numpy(x.copy())), tol=tol)
    if dtype == "complex128":
        for f, x in cases[:-1]:
            xs, ts = st.from_numpy(x.copy()).requires_grad_(), torch.from_numpy(x.copy()).requires_grad_()
            st.view_as_real(f(st, xs)).pow(2).sum().backward()
            torch.view_as_real(f(torch, ts)).pow(2).sum().backward()
            np.testing.assert_allclose(xs.grad.numpy(), ts.grad.resolve_conj().numpy(), rtol=1e-9, atol=1e-12)
        for f, x in cases[:2] + cases[3:4] + cases[7:9]:  # rms_norm and fold also take meta tensors (shapes only)
            assert f(st, st.from_numpy(x.copy()).to("meta")).shape == f(st, st.from_numpy(x.copy())).shape
        with pytest.raises(RuntimeError, match="embedding does not support automatic differentiation for outputs "
                                               "with complex dtype"):
            st.nn.functional.embedding(st.from_numpy(idx), st.from_numpy(a[0].copy()).requires_grad_())


@pytest.mark.parametrize("name", ["logical_and_", "logical_or_", "logical_xor_"])
def test_inplace_truth_values_of_complex_tensors_are_torchs(name):
    # the functional op's bools written into the complex tensor, as torch's (was a NotImplementedError)
    zs = [1 + 1j, 0j, 2, complex(-0.0, 0.0)]
    for other in ([1, 0, 1, 0], [0j, 1j, 0, 0]):
        got = getattr(st.tensor(zs), name)(st.tensor(other))
        want = getattr(torch.tensor(zs), name)(torch.tensor(other))
        assert got.dtype == st.complex64
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    np.testing.assert_array_equal(st.tensor(zs).logical_not_().numpy(), torch.tensor(zs).logical_not_().numpy())
