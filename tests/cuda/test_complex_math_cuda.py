"""The complex math on the CUDA backend (Note [Complex math] in complex.cuh), against NumPy and the CPU backend:
the unary math with its accuracy near |z| = 1 and overflow, special values, pow, where / masked_fill,
index_select / gather / cumsum / index_add / scatter_add over the pairs' real view, prod pairwise (Note [Complex
gathers]), and the matrix products on cuBLASLt's complex types (Note [Complex GEMM])."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
import strided.cuda as cuda

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]

DTYPES = ["complex64", "complex128"]
NP = {"complex64": np.complex64, "complex128": np.complex128}
TOL = {"complex64": {"rtol": 2e-5, "atol": 2e-5}, "complex128": {"rtol": 1e-12, "atol": 1e-12}}
LAYOUTS = {"contiguous": lambda t: t, "transposed": lambda t: t.t(), "sliced": lambda t: t[1:, ::2]}
NP_LAYOUTS = {"contiguous": lambda a: a, "transposed": lambda a: a.T, "sliced": lambda a: a[1:, ::2]}


def _rand(shape, dtype, seed=0, lo=0.5):
    """Complex values with magnitudes in [lo, 2) and any phase."""
    rng = np.random.default_rng(seed)
    mag = rng.uniform(lo, 2.0, shape)
    return (mag * np.exp(1j * rng.uniform(-np.pi, np.pi, shape))).astype(NP[dtype])


def _cuda(a):
    return st.from_numpy(np.ascontiguousarray(a)).cuda()


def _host(t):
    return t.cpu().numpy()


_MATH_TOL = {"complex64": {"rtol": 1e-5, "atol": 1e-5}, "complex128": {"rtol": 1e-12, "atol": 1e-12}}
_MATH = {"sqrt": np.sqrt, "rsqrt": lambda a: 1 / np.sqrt(a), "log": np.log, "sin": np.sin, "cos": np.cos,
         "tan": np.tan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "sigmoid": lambda a: 1 / (1 + np.exp(-a)),
         "reciprocal": np.reciprocal, "square": np.square, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
         "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh}


def _parts_close(got, want, dtype):
    for x, y in ((got.real, want.real), (got.imag, want.imag)):  # infinities compare as values
        np.testing.assert_allclose(x, y, equal_nan=True, **_MATH_TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(_MATH) + ["log1p"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_unary_math(dtype, name, layout):
    a = _rand((6, 8), dtype, seed=3, lo=0.05) * 3
    g = LAYOUTS[layout](_cuda(a))
    got = _host(getattr(st, name)(g))
    want = np.asarray(getattr(st, name)(LAYOUTS[layout](st.from_numpy(a))))  # the CPU backend
    _parts_close(got, want, dtype)
    if name in _MATH:
        _parts_close(got, _MATH[name](NP_LAYOUTS[layout](a)).astype(got.dtype), dtype)
    if layout == "contiguous":
        h = _cuda(a)
        assert getattr(h, f"{name}_")() is h
        _parts_close(_host(h), got, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_math_accuracy_near_one_and_large(dtype):
    """log near |z| = 1 (log1p form), sqrt near overflow (scaled), tanh past saturation, tiny log1p."""
    eps = 1e-3 if dtype == "complex64" else 1e-7
    big = 1e38 if dtype == "complex64" else 1e307
    a = np.array([1 + eps * 1j, 1 - eps + 0j, np.exp(1j * 0.3) * (1 + eps), big + big * 1j, -big + 1j,
                  30 + 1j, -30 - 2j, eps * (1 + 1j), -eps + 1e-20j], dtype=NP[dtype])
    for name, ref in (("log", np.log), ("sqrt", np.sqrt), ("tanh", np.tanh), ("log1p", np.log1p)):
        got = _host(getattr(st, name)(_cuda(a)))
        with np.errstate(all="ignore"):
            want = ref(a.astype(np.complex128)).astype(a.dtype)
        _parts_close(got, want, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_special_values(dtype):
    """C99 / NumPy special values: sqrt, log and exp of zeros, infinities and nan; the predicates."""
    inf, nan = np.inf, np.nan
    a = np.array([0j, complex(-0.0, -0.0), complex(inf, 1), complex(-inf, 1), complex(1, inf), complex(nan, 1),
                  complex(1, nan), complex(-4, 0), complex(-4, -0.0)], dtype=NP[dtype])
    g = _cuda(a)
    with np.errstate(all="ignore"):
        for name, ref in (("sqrt", np.sqrt), ("log", np.log)):
            _parts_close(_host(getattr(st, name)(g)), ref(a), dtype)
    np.testing.assert_array_equal(_host(st.isnan(g)), np.isnan(a))
    np.testing.assert_array_equal(_host(st.isinf(g)), np.isinf(a))
    np.testing.assert_array_equal(_host(st.isfinite(g)), np.isfinite(a))
    assert st.isnan(g).dtype is st.bool
    r = _host(st.reciprocal(_cuda(np.array([0j, complex(inf, 1), complex(nan, 0)], dtype=NP[dtype]))))
    assert np.isinf(r[0].real) and np.isnan(r[0].imag) and r[1] == 0 and np.isnan(r[2].real)


def _inverse_trig_arguments(dtype):
    """Branch points and their neighbourhoods, both sides of every cut (signed zeros), tiny, large and
    near-overflow moduli, infinities and nans: where the formulas of Note [Complex inverse trigonometry]
    change or lose accuracy."""
    inf, nan, big = np.inf, np.nan, float(np.finfo(NP[dtype]).max)
    eps = 1e-3 if dtype == "complex64" else 1e-7
    parts = [(0.0, 0.0), (-0.0, 0.0), (0.0, -0.0), (-0.0, -0.0), (1, 0), (-1, 0), (0, 1), (0, -1), (1, 0.0),
             (1 + eps, eps), (1 - eps, -eps), (-1 - eps, 0.0), (-1 + eps, -0.0), (eps, 1 + eps), (-eps, -1 + eps),
             (0.5, 1e-30), (1e-30, 0.5), (1e-20, -1e-20), (2.5, 0.0), (2.5, -0.0), (-2.5, 0.0), (-2.5, -0.0),
             (0.0, 2.5), (-0.0, 2.5), (0.0, -2.5), (-0.0, -2.5), (1, 1e-30), (1, -1e-25), (-1, 1e-30),
             (1e5, 1), (-1e5, 1e5), (3e9, -2), (1e30, 1e30), (-big, 1), (big / 2, big / 2), (1, big), (0.3, -big),
             (inf, 0), (-inf, 1), (1, inf), (-2, -inf), (inf, inf), (-inf, -inf), (inf, nan), (-inf, nan),
             (inf, -nan), (-inf, -nan), (nan, inf), (-nan, -inf), (nan, 0), (-nan, -0.0), (0, nan), (0, -nan),
             (nan, 2), (2, nan), (nan, nan)]
    a = np.empty(len(parts), NP[dtype])
    a.real, a.imag = np.array(parts).T  # parts set apart keep their signed zeros
    return a


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["asin", "acos", "atan", "asinh", "acosh", "atanh"])
def test_inverse_trig_at_cuts_branch_points_and_extremes(name, dtype):
    """NumPy's values (the CPU backend's) on the cuts with either sign of zero, near the branch points, for tiny,
    huge and non-finite arguments: same nans and infinities, same signs of zero and infinity, parts close."""
    a = _inverse_trig_arguments(dtype)
    got = _host(getattr(st, name)(_cuda(a)))
    with np.errstate(all="ignore"):
        want = getattr(np, "arc" + name[1:])(a.astype(np.complex128)).astype(a.dtype)
    for g, w in ((got.real, want.real), (got.imag, want.imag)):
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        np.testing.assert_array_equal(np.signbit(g[np.isinf(w) | (w == 0)]), np.signbit(w[np.isinf(w) | (w == 0)]))
    _parts_close(got, want, dtype)
    cpu = np.asarray(getattr(st, name)(st.from_numpy(a)))
    _parts_close(got, cpu, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_pow(dtype):
    a, b = _rand((4, 5), dtype, seed=4), _rand((4, 5), dtype, seed=5)
    real = np.random.default_rng(6).uniform(0.5, 2, (4, 5)).astype(np.float32 if dtype == "complex64" else np.float64)
    g, h, r = _cuda(a), _cuda(b), _cuda(real)
    tol = {"complex64": {"rtol": 1e-4, "atol": 1e-4}, "complex128": {"rtol": 1e-11, "atol": 1e-11}}[dtype]
    for got, want in ((g ** h, a ** b), (g ** 2, a * a), (g ** 2.5, a ** 2.5), (g ** (1 - 1j), a ** (1 - 1j)),
                      (g ** r, a ** real), (r ** g, real ** a), ((2 - 1j) ** g, (2 - 1j) ** a), (2 ** g, 2 ** a),
                      (st.square(g), a * a), (g ** 0.5, np.sqrt(a)), (g ** -1, 1 / a)):
        np.testing.assert_allclose(_host(got), want.astype(a.dtype), **tol)
    z = _host(_cuda(np.zeros(3, NP[dtype])) ** _cuda(np.array([0, 2, 1j], NP[dtype])))
    assert z[0] == 1 and z[1] == 0 and np.isnan(z[2].real)  # NumPy's cpow at 0, as the CPU backend


@pytest.mark.parametrize("dtype", DTYPES)
def test_where_and_masked_fill(dtype):
    a, b = _rand((4, 5), dtype, seed=7), _rand((4, 5), dtype, seed=8)
    mask = np.arange(20).reshape(4, 5) % 3 == 0
    g, h, m = _cuda(a), _cuda(b), _cuda(mask)
    np.testing.assert_array_equal(_host(st.where(m, g, h)), np.where(mask, a, b))
    np.testing.assert_array_equal(_host(st.where(m, g, 2 - 1j)), np.where(mask, a, np.asarray(2 - 1j, a.dtype)))
    np.testing.assert_array_equal(_host(st.where(m, g.real, h)), np.where(mask, a.real, b))
    np.testing.assert_array_equal(_host(g.masked_fill(m, 1 - 2j)), np.where(mask, np.asarray(1 - 2j, a.dtype), a))
    c = g.clone()
    assert c.masked_fill_(m, 3) is c
    np.testing.assert_array_equal(_host(c), np.where(mask, np.asarray(3, a.dtype), a))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_gathers_scans_and_products(dtype, layout):
    """Note [Complex gathers]: index_select / gather / cumsum over the pairs' real view; prod pairwise."""
    a = _rand((6, 8), dtype, seed=9)
    g, x = LAYOUTS[layout](_cuda(a)), NP_LAYOUTS[layout](a)
    idx = np.array([2, 0, 2])
    np.testing.assert_array_equal(_host(g.index_select(1, st.tensor(idx).cuda())), np.take(x, idx, 1))
    np.testing.assert_array_equal(_host(g.index_select(-2, st.tensor([1]).cuda())), x[[1]])
    gi = np.array([[0, 2], [1, 1]])
    np.testing.assert_array_equal(_host(g.gather(1, st.tensor(gi).cuda())), np.take_along_axis(x[:2], gi, 1))
    np.testing.assert_array_equal(_host(g.flip([0, 1])), x[::-1, ::-1])
    np.testing.assert_array_equal(_host(g.roll(2, 1)), np.roll(x, 2, 1))
    np.testing.assert_allclose(_host(g.cumsum(0)), np.cumsum(x, 0), **TOL[dtype])
    np.testing.assert_allclose(_host(g.cumsum(1)), np.cumsum(x, 1), **TOL[dtype])
    ptol = 1e-4 if dtype == "complex64" else 1e-11
    np.testing.assert_allclose(_host(g.prod(1)), np.prod(x, 1), rtol=ptol)
    np.testing.assert_allclose(_host(g[:3, :3].prod()), np.prod(x[:3, :3]), rtol=ptol)
    np.testing.assert_allclose(_host(g.prod(0, keepdim=True)), np.prod(x, 0, keepdims=True), rtol=ptol)
    z = _cuda(a[0, 0])
    assert _host(z.index_select(0, st.tensor([0]).cuda())) == a[0, 0] and _host(z.cumsum(0)) == a[0, 0]
    assert _host(z.prod()) == a[0, 0]
    np.testing.assert_array_equal(_host(_cuda(np.zeros((0, 3), NP[dtype])).prod(0)), np.ones(3, NP[dtype]))
    np.testing.assert_allclose(_host(_cuda(a.real.copy()).cumsum(0, dtype=getattr(st, dtype))), np.cumsum(a.real, 0),
                               **TOL[dtype])


def test_complex_gradients_on_cuda():
    a = _rand((3, 4), "complex128", seed=10)
    x = _cuda(a).requires_grad_()
    (st.view_as_real(st.sin(x) * st.sqrt(x) + x.prod(1, keepdim=True) + x.cumsum(0)).sum()).backward()
    y = st.from_numpy(a.copy()).requires_grad_()
    (st.view_as_real(st.sin(y) * st.sqrt(y) + y.prod(1, keepdim=True) + y.cumsum(0)).sum()).backward()
    np.testing.assert_allclose(_host(x.grad), np.asarray(y.grad), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("dtype", DTYPES)
def test_matrix_products_match_numpy(dtype):
    """Note [Complex GEMM]: mm, bmm, matmul (broadcast batches, vectors) and transposed / sliced operands."""
    tol = {"rtol": 2e-5, "atol": 2e-5} if dtype == "complex64" else {"rtol": 1e-12, "atol": 1e-12}
    a, b = _rand((5, 7), dtype, seed=20), _rand((7, 3), dtype, seed=21)
    np.testing.assert_allclose(_host(st.mm(_cuda(a), _cuda(b))), a @ b, **tol)
    np.testing.assert_allclose(_host(st.mm(_cuda(a.T.copy()).t(), _cuda(b))), a @ b, **tol)  # transposed operand
    np.testing.assert_allclose(_host(_cuda(a)[1:, ::2] @ _cuda(b)[::2]), a[1:, ::2] @ b[::2], **tol)
    x, y = _rand((4, 5, 7), dtype, seed=22), _rand((4, 7, 6), dtype, seed=23)
    np.testing.assert_allclose(_host(st.bmm(_cuda(x), _cuda(y))), x @ y, **tol)
    np.testing.assert_allclose(_host(st.matmul(_cuda(x), _cuda(b))), x @ b, **tol)  # a broadcast batch
    v = _rand((7,), dtype, seed=24)
    np.testing.assert_allclose(_host(st.matmul(_cuda(a), _cuda(v))), a @ v, **tol)
    np.testing.assert_allclose(_host(st.matmul(_cuda(v), _cuda(b))), v @ b, **tol)
    big = _rand((256, 512), dtype, seed=25)
    np.testing.assert_allclose(_host(_cuda(big) @ _cuda(big.T.copy())), big @ big.T, rtol=1e-4 if dtype ==
                               "complex64" else 1e-11, atol=1e-3 if dtype == "complex64" else 1e-10)
    np.testing.assert_array_equal(_host(st.mm(_cuda(a[:, :0]), _cuda(b[:0]))), np.zeros((5, 3), NP[dtype]))


@pytest.mark.parametrize("dtype", DTYPES)
def test_index_add_and_scatter_add(dtype):
    """Note [Complex gathers]: the real atomics over the pairs; a complex alpha; repeated indices accumulate."""
    a, src = _rand((5, 4), dtype, seed=30), _rand((3, 4), dtype, seed=31)
    idx = np.array([4, 0, 4])
    want = a.copy()
    np.add.at(want, idx, (1 - 2j) * src)
    got = _cuda(a).index_add(0, st.tensor(idx).cuda(), _cuda(src), alpha=1 - 2j)
    np.testing.assert_allclose(_host(got), want, **TOL[dtype])
    got = _cuda(a).t().index_add(-1, st.tensor(idx).cuda(), _cuda(src).t())  # transposed, a negative dim
    want = a.copy()
    np.add.at(want, idx, src)
    np.testing.assert_allclose(_host(got), want.T, **TOL[dtype])
    gi = np.array([[1, 3], [1, 0]])
    want = a.copy()
    for i in range(2):
        for j in range(2):
            want[i, gi[i, j]] += src[i, j]
    got = _cuda(a).scatter_add(1, st.tensor(gi).cuda(), _cuda(src))
    np.testing.assert_allclose(_host(got), want, **TOL[dtype])
    z = _cuda(a[0, 0])
    assert np.isclose(_host(z.index_add(0, st.tensor([0]).cuda(), _cuda(src[0, 0]))), a[0, 0] + src[0, 0])


def test_complex_matmul_and_gather_gradients_equal_the_cpu():
    a, b = _rand((4, 6), "complex128", seed=40), _rand((6, 3), "complex128", seed=41)
    idx = st.tensor([3, 0, 3, 1])
    grads = []
    for dev in ("cpu", "cuda"):
        x = st.from_numpy(a.copy()).to(dev).requires_grad_()
        w = st.from_numpy(b.copy()).to(dev).requires_grad_()
        y = (x @ w).index_select(0, idx.to(dev)) + x.gather(1, idx.to(dev).reshape(2, 2)).sum()
        st.view_as_real(y).pow(2).sum().backward()
        grads.append((x.grad.cpu().numpy(), w.grad.cpu().numpy()))
    for c, g in zip(grads[0], grads[1]):
        np.testing.assert_allclose(g, c, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("dtype", DTYPES)
def test_products_indexing_norms_and_sampling_on_cuda(dtype):
    """The composites over the complex kernels (einsum, tensordot, vdot, trace, ...) and the pairs' advanced
    indexing (Note [Complex gathers]) give the CPU backend's values."""
    a = _rand((3, 4), dtype, seed=50)
    cases = {
        "einsum": lambda x: st.einsum("ij,kj->ik", x, x), "tensordot": lambda x: st.tensordot(x, x.t(), 1),
        "vdot": lambda x: st.vdot(x[0], x[1]), "outer": lambda x: st.outer(x[0], x[1]),
        "trace": lambda x: st.trace(x[:, :3]), "diag": lambda x: st.diag(x[0], -1), "repeat": lambda x: x.repeat(2, 1),
        "index": lambda x: x[st.tensor([0, 2, 0]).to(x.device)], "mask": lambda x: x[x.abs() > 1],
        "index_put": lambda x: x.clone().index_put_((st.tensor([0, 0]).to(x.device),), x[:2], accumulate=True),
        "setitem": lambda x: (lambda y: (y.__setitem__((0, 1), 1 - 1j), y)[1])(x.clone()),
        "nonzero": lambda x: st.nonzero(x * (x.abs() > 1)), "count_nonzero": lambda x: st.count_nonzero(x),
        "norm": lambda x: st.linalg.vector_norm(x, 3, dim=1),
    }
    for name, f in cases.items():
        got, want = _host(f(_cuda(a))), np.asarray(f(st.from_numpy(a.copy())))
        np.testing.assert_allclose(got, want, err_msg=name, **TOL[dtype])
    z = st.randn(100_000, dtype=getattr(st, dtype), device="cuda")
    assert z.device.type == "cuda" and abs(float(z.real.var()) - 0.5) < 0.02 and abs(float(z.imag.var()) - 0.5) < 0.02
    r = st.rand_like(z)
    assert float(r.real.min()) >= 0 and float(r.imag.max()) < 1


_SPREADS = {
    "var": lambda x: x.var(), "std dim 0": lambda x: x.std(dim=0),
    "var correction 0 keepdim": lambda x: st.var(x, dim=1, correction=0, keepdim=True),
    "std unbiased=False": lambda x: x.std(1, unbiased=False), "var of one": lambda x: x[:1].var(dim=0),
    "norm": lambda x: x.norm(), "norm 1 dim": lambda x: st.norm(x, 1, dim=1),
    "norm inf": lambda x: x.norm(float("inf")),
    "norm 3 keepdim": lambda x: st.norm(x, 3, dim=0, keepdim=True), "norm 0": lambda x: x.norm(0),
    "tril": lambda x: x.tril(), "triu 1": lambda x: x.triu(1),
    "tril -1 batched": lambda x: x.expand(2, *x.shape).tril(-1),
    "tril_": lambda x: x.clone().tril_(1), "triu_": lambda x: x.clone().triu_(-1),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
@pytest.mark.parametrize("name", list(_SPREADS))
def test_var_std_norm_and_triangles_match_the_cpu(name, layout, dtype):
    """var / std (Note [Complex var]) and norm have real results; tril / triu run the real kernel over the pairs."""
    a = _rand((4, 5), dtype, seed=60)
    want = _SPREADS[name](LAYOUTS[layout](st.from_numpy(a.copy())))
    got = _SPREADS[name](LAYOUTS[layout](_cuda(a)))
    assert got.dtype is want.dtype and got.shape == want.shape and got.device.type == "cuda"
    np.testing.assert_allclose(_host(got), want.numpy(), **TOL[dtype])


def test_var_std_and_norm_gradients_on_cuda_equal_the_cpu():
    a = _rand((3, 4), "complex128", seed=61)
    grads = []
    for dev in ("cpu", "cuda"):
        x = st.from_numpy(a.copy()).to(dev).requires_grad_()
        (x.var(dim=1).sum() + x.std() + st.norm(x, 3, dim=0).sum() + x.norm() + st.view_as_real(x.tril()).sum()
         ).backward()
        grads.append(_host(x.grad))
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-10, atol=1e-12)


_MORE = {
    "log2": lambda x, y, w: st.log2(x), "log10": lambda x, y, w: st.log10(x), "exp2": lambda x, y, w: st.exp2(x),
    "expm1": lambda x, y, w: st.expm1(x), "expm1 near 0": lambda x, y, w: st.expm1(x * 1e-9),
    "cumprod": lambda x, y, w: st.cumprod(x, 1), "cumprod dim 0": lambda x, y, w: x.cumprod(0),
    "cumprod as complex128": lambda x, y, w: x.cumprod(-1, dtype=st.complex128),
    "cumprod_": lambda x, y, w: x.clone().cumprod_(1),
    "lerp": lambda x, y, w: st.lerp(x, y, 0.3), "lerp 0.7": lambda x, y, w: st.lerp(x, y, 0.7),
    "lerp complex weight": lambda x, y, w: st.lerp(x, y, 0.2 + 0.6j),
    "lerp tensor weight": lambda x, y, w: x.lerp(y, w),
    "addcmul": lambda x, y, w: st.addcmul(x, y, w), "addcmul value": lambda x, y, w: st.addcmul(x, y, w, value=-2j),
    "addcdiv": lambda x, y, w: st.addcdiv(x, y, w, value=2), "addcdiv_": lambda x, y, w: x.clone().addcdiv_(y, w),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
@pytest.mark.parametrize("name", list(_MORE))
def test_log2_exp2_expm1_cumprod_lerp_addcmul_match_the_cpu(name, layout, dtype):
    """complex.cuh's log2 / log10 / exp2 / expm1 / lerp, the elementwise addcmul / addcdiv and the doubling-step
    cumprod give the CPU backend's values (which test_complex_math.py compares with torch)."""
    arrays = [_rand((4, 5), dtype, seed=70 + i) for i in range(3)]
    want = _MORE[name](*(LAYOUTS[layout](st.from_numpy(a.copy())) for a in arrays))
    got = _MORE[name](*(LAYOUTS[layout](_cuda(a)) for a in arrays))
    assert got.dtype is want.dtype and got.shape == want.shape and got.device.type == "cuda"
    _parts_close(_host(got), want.numpy(), "complex64" if want.dtype is st.complex64 else "complex128")


def test_cumprod_edge_lengths_on_cuda():
    for shape, dim in (((1, 5), 0), ((0, 3), 1), ((), 0), ((2, 33), 1)):
        a = _rand(shape, "complex128", seed=75)
        np.testing.assert_allclose(_host(st.cumprod(_cuda(a), dim)), np.cumprod(a, axis=dim) if shape else a,
                                   rtol=1e-12, atol=1e-12)


def test_new_complex_gradients_on_cuda_equal_the_cpu():
    arrays = [_rand((3, 4), "complex128", seed=80 + i) for i in range(3)]
    grads = []
    for dev in ("cpu", "cuda"):
        x, y, w = (st.from_numpy(a.copy()).to(dev).requires_grad_() for a in arrays)
        loss = (st.log2(x) + st.exp2(y) + st.expm1(w) + x.cumprod(1) + st.lerp(x, y, w) + st.addcmul(x, y, w, value=1j)
                + st.addcdiv(w, x, y) + st.asin(x) + st.acos(y) + st.atan(w) + st.asinh(x) + st.acosh(y)
                + st.atanh(w))
        st.view_as_real(loss).pow(2).sum().backward()
        grads.append([_host(t.grad) for t in (x, y, w)])
    for c, g in zip(grads[0], grads[1]):
        np.testing.assert_allclose(g, c, rtol=1e-10, atol=1e-10)


_GEMMS = {
    "addmm": (lambda c, a, b: st.addmm(c, a, b, beta=0.5 - 1j, alpha=2j), "c a b"),
    "addmm row": (lambda r, a, b: st.addmm(r, a, b), "row a b"),
    "addmm_": (lambda c, a, b: c.clone().addmm_(a, b, alpha=1 + 1j), "c a b"),
    "baddbmm": (lambda c, a, b: st.baddbmm(c, a, b, beta=2, alpha=1 - 1j), "B3 B1 B2"),
    "addbmm": (lambda c, a, b: st.addbmm(c, a, b, alpha=1j), "c B1 B2"),
    "linear": (lambda x, w, bias: st.nn.functional.linear(x, w, bias), "a wt row"),
    "linear batched": (lambda x, w: st.nn.functional.linear(x, w), "B1 wt"),
    "addmv": (lambda u, a, v: st.addmv(u, a, v, beta=1j, alpha=2), "u a v"),
    "addr": (lambda c, u, r: st.addr(c, u, r, alpha=1 - 2j), "c u row"),
}


@pytest.mark.parametrize("dtype", DTYPES)
def test_gemms_with_c_operands_match_the_cpu(dtype):
    """addmm / baddbmm with complex alpha and beta on cuBLASLt's complex types (Note [CUDA GEMM lowering]) and the
    composites over them (linear, addmv, addr, addbmm) give the CPU backend's values and gradients."""
    operands = {k: _rand(shape, dtype, seed=90 + i) for i, (k, shape) in enumerate(
        (("c", (3, 5)), ("a", (3, 4)), ("b", (4, 5)), ("row", (5,)), ("v", (4,)), ("u", (3,)), ("B1", (2, 3, 4)),
         ("B2", (2, 4, 5)), ("B3", (2, 3, 5)), ("wt", (5, 4))))}
    tol = {"rtol": 1e-4, "atol": 1e-4} if dtype == "complex64" else {"rtol": 1e-11, "atol": 1e-11}
    for name, (f, keys) in _GEMMS.items():
        arrays = [operands[k] for k in keys.split()]
        results = []
        for dev in ("cpu", "cuda"):
            xs = [st.from_numpy(a.copy()).to(dev).requires_grad_() for a in arrays]
            y = f(*xs)
            st.view_as_real(y).pow(2).sum().backward()
            results.append([_host(y.detach())] + [_host(x.grad) for x in xs])
        for c, g in zip(*results):
            np.testing.assert_allclose(g, c, err_msg=name, **tol)


def _i(x, v):
    return st.tensor(v).to(x.device)


_COMPOSITES = {
    "fliplr": lambda x, y: st.fliplr(x), "flipud": lambda x, y: st.flipud(x), "rot90": lambda x, y: st.rot90(x),
    "tile": lambda x, y: st.tile(x, (2, 1)), "block_diag": lambda x, y: st.block_diag(x, y),
    "adjoint": lambda x, y: x.adjoint() * 1, "tensor_split": lambda x, y: st.tensor_split(x, 2)[1],
    "hsplit": lambda x, y: st.hsplit(x, 2)[0], "vsplit": lambda x, y: st.vsplit(x, [1])[1],
    "hstack": lambda x, y: st.hstack([x, y]), "vstack": lambda x, y: st.vstack([x, y]),
    "dstack": lambda x, y: st.dstack([x, y]), "column_stack": lambda x, y: st.column_stack([x, y]),
    "atleast_3d": lambda x, y: st.atleast_3d(x), "moveaxis": lambda x, y: st.moveaxis(x, 0, 1),
    "ravel": lambda x, y: st.ravel(x), "diag_embed": lambda x, y: st.diag_embed(x),
    "diagflat": lambda x, y: st.diagflat(x[0]), "kron": lambda x, y: st.kron(x, y),
    "diff": lambda x, y: st.diff(x, dim=1), "take": lambda x, y: st.take(x, _i(x, [0, 5, 11])),
    "take_along_dim": lambda x, y: st.take_along_dim(x, _i(x, [[0], [1], [2]]), 1),
    "index_fill": lambda x, y: x.index_fill(0, _i(x, [0, 2]), 1 - 1j),
    "index_copy": lambda x, y: x.index_copy(0, _i(x, [0, 2]), y[:2]),
    "masked_scatter": lambda x, y: x.masked_scatter(x.abs() > 1, y), "trapezoid": lambda x, y: st.trapezoid(x),
    "cross": lambda x, y: st.linalg.cross(x[:, :3], y[:, :3]), "dist": lambda x, y: st.dist(x, y, 3),
    "isreal": lambda x, y: st.isreal(x * (x.real > 1)), "std_mean": lambda x, y: st.std_mean(x, 1)[0],
    "sinc": lambda x, y: st.sinc(x * (x.real > 0)), "vander": lambda x, y: st.vander(x[0], 3),
}


def test_complex_composites_match_the_cpu():
    """The composites listed for complex tensors on every backend give the CPU backend's values and gradients
    on CUDA (their callees' complex kernels; tests/backend/test_complex_math.py compares the CPU with torch)."""
    arrays = [_rand((3, 4), "complex128", seed=95 + i) for i in range(2)]
    for name, f in _COMPOSITES.items():
        results = []
        for dev in ("cpu", "cuda"):
            xs = [st.from_numpy(a.copy()).to(dev).requires_grad_() for a in arrays]
            y = f(*xs)
            assert y.device.type == dev, name
            out = [_host(y.detach())]
            if y.requires_grad:
                (st.view_as_real(y) if y.dtype.is_complex else y).pow(2).sum().backward()
                out += [_host(x.grad) if x.grad is not None else None for x in xs]
            results.append(out)
        for c, g in zip(*results):
            assert (c is None) == (g is None), name
            if c is not None:
                np.testing.assert_allclose(g, c, rtol=1e-10, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("dtype", DTYPES)
def test_nan_to_num_of_complex_on_cuda(dtype):
    """Each part apart with the part dtype's limits, out of place and in place, as the CPU backend."""
    inf, nan = np.inf, np.nan
    a = np.empty(6, NP[dtype])
    a.real, a.imag = [1, nan, -inf, inf, nan, 0], [2, inf, nan, -inf, nan, 0]
    for kwargs in ({}, {"nan": 1.0, "posinf": 2.0, "neginf": -3.0}):
        want = st.nan_to_num(st.from_numpy(a), **kwargs).numpy()
        np.testing.assert_array_equal(_host(st.nan_to_num(_cuda(a), **kwargs)), want)
        g = _cuda(a)
        assert g.nan_to_num_(**kwargs) is g
        np.testing.assert_array_equal(_host(g), want)


@pytest.mark.parametrize("dtype", DTYPES)
def test_truth_values_of_complex_on_cuda(dtype):
    """any / all / logical_* of complex tensors: either part nonzero, as on the CPU."""
    a = _rand((3, 4), dtype, seed=99) * (np.arange(12).reshape(3, 4) % 3 != 0)
    a[0, 1] = 1j  # a purely imaginary value is true
    b = _rand((3, 4), dtype, seed=98) * (np.arange(12).reshape(3, 4) % 2 == 0)
    for name, f in {"any": lambda x, y: st.any(x), "all": lambda x, y: st.all(x), "any dim": lambda x, y: x.any(1),
                    "all dim": lambda x, y: x.all(0, keepdim=True), "not": lambda x, y: st.logical_not(x),
                    "and": lambda x, y: st.logical_and(x, y), "or": lambda x, y: st.logical_or(x, y),
                    "xor": lambda x, y: st.logical_xor(x, y),
                    "and real": lambda x, y: st.logical_and(x, y.real)}.items():
        got = f(_cuda(a), _cuda(b))
        want = f(st.from_numpy(a.copy()), st.from_numpy(b.copy()))
        assert got.dtype is st.bool and got.shape == want.shape, name
        np.testing.assert_array_equal(_host(got), want.numpy(), err_msg=name)


def _scatter_cases(dtype):
    a, b = _rand((3, 4), dtype, seed=60), _rand((4, 5), dtype, seed=61)  # src larger than the index
    perm = np.array([[2, 0, 1, 3], [1, 3, 0, 2], [3, 2, 0, 1]])  # no duplicate in a row: one answer
    return a, b, perm


@pytest.mark.parametrize("dtype", DTYPES)
def test_scatter_of_complex_matches_the_cpu(dtype):
    """Note [Complex scatter]: src (larger than the index), a Scalar value, in place, transposed, 0-dim, negative
    dims and an empty index give the CPU backend's elements exactly."""
    a, b, perm = _scatter_cases(dtype)
    cases = {
        "src": lambda x, i, s: x.scatter(1, i, s),
        "src dim 0": lambda x, i, s: x.scatter(0, st.tensor([[2, 0, 1], [0, 1, 2]]).to(x.device), s),
        "negative dim": lambda x, i, s: x.scatter(-1, i[:2], s),
        "value": lambda x, i, s: x.scatter(1, i[:2], 1.5 - 2j),
        "real value": lambda x, i, s: x.scatter(1, i[1:], 3),
        "in place": lambda x, i, s: x.clone().scatter_(1, i, s),
        "in place value": lambda x, i, s: x.clone().scatter_(0, i[:1] % 3, -1j),
        "transposed self": lambda x, i, s: x.t().scatter(0, i.t(), s),
        "0-dim": lambda x, i, s: x[0, 0].scatter(0, i[0, 0] * 0, s[0, 0]),
        "empty index": lambda x, i, s: x.scatter(1, i[:0], s),
    }
    for name, f in cases.items():
        want = f(st.from_numpy(a.copy()), st.from_numpy(perm), st.from_numpy(b.copy()))
        got = f(_cuda(a), st.from_numpy(perm).cuda(), _cuda(b))
        assert got.dtype == want.dtype and got.shape == want.shape, name
        np.testing.assert_array_equal(_host(got), want.numpy(), err_msg=name)


@pytest.mark.parametrize("dtype", DTYPES)
def test_scatter_of_complex_writes_whole_elements_at_duplicates(dtype):
    """At a duplicate index one source wins, and it wins whole: both parts of the written element are one source's
    (the real view of the pairs could mix the parts of two). Many sources race for few elements."""
    rng = np.random.default_rng(62)
    a = _rand((4, 8), dtype, seed=63)
    src = _rand((4, 4096), dtype, seed=64)
    idx = rng.integers(0, 8, (4, 4096))
    got = _host(_cuda(a).scatter(1, st.from_numpy(idx).cuda(), _cuda(src)))
    for r in range(4):
        for c in range(8):
            sources = src[r, idx[r] == c]
            if sources.size:
                assert got[r, c] in sources, (r, c)
            else:
                assert got[r, c] == a[r, c], (r, c)


def test_scatter_of_complex_gradients_and_errors_match_the_cpu():
    a, b, perm = _scatter_cases("complex128")
    grads = []
    for dev in ("cpu", "cuda"):
        x = st.from_numpy(a.copy()).to(dev).requires_grad_()
        s = st.from_numpy(b[:3, :4].copy()).to(dev).requires_grad_()  # src's gradient has the index's shape
        st.view_as_real(x.scatter(1, st.from_numpy(perm).to(dev), s)).pow(2).sum().backward()
        grads.append((_host(x.grad), _host(s.grad)))
    for c, g in zip(*grads):
        np.testing.assert_allclose(g, c, rtol=1e-12, atol=0)
    with pytest.raises(RuntimeError, match="Expected self.dtype to be equal to src.dtype"):
        _cuda(a).scatter(1, st.from_numpy(perm).cuda(), _cuda(b.real.copy()))
    with pytest.raises(RuntimeError, match="index 9 is out of bounds for dimension 1 with size 4"):
        _cuda(a).scatter(1, st.tensor([[9]]).cuda(), _cuda(b))
        cuda.synchronize()


@pytest.mark.parametrize("dtype", DTYPES)
def test_float_power_of_complex_matches_the_cpu(dtype):
    a, b = _rand((3, 4), dtype, seed=65), _rand((3, 4), dtype, seed=66)
    cases = [lambda x, y: st.float_power(x, y), lambda x, y: st.float_power(x, 2.5),
             lambda x, y: st.float_power(x.real.contiguous(), y)]
    if dtype == "complex128":  # in place needs a complex128 base, as torch's
        cases.append(lambda x, y: x.clone().float_power_(y))
    else:
        with pytest.raises(RuntimeError, match="has dtype ComplexFloat but the operation's result requires dtype"):
            _cuda(a).float_power_(_cuda(b))
    for f in cases:
        want = f(st.from_numpy(a.copy()), st.from_numpy(b.copy()))
        got = f(_cuda(a), _cuda(b))
        assert got.dtype == want.dtype == st.complex128
        np.testing.assert_allclose(_host(got), want.numpy(), rtol=1e-12, atol=1e-12)
