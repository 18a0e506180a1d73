"""complex64 / complex128 on the CUDA backend, against NumPy: copies and casts, fill, the elementwise ops
(complex.cuh), sum / mean (Note [Complex sum and mean]) and interop."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import strided as st
import strided.cuda as cuda

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]

DTYPES = ["complex64", "complex128"]
NP = {"complex64": np.complex64, "complex128": np.complex128}
TOL = {"complex64": {"rtol": 2e-5, "atol": 2e-5}, "complex128": {"rtol": 1e-12, "atol": 1e-12}}
LAYOUTS = {
    "contiguous": lambda t: t,
    "transposed": lambda t: t.t(),
    "sliced": lambda t: t[1:, ::2],
    "expanded": lambda t: t[:1].expand(t.shape[0], t.shape[1]),
}


def _rand(shape, dtype, seed=0, lo=0.5):
    """Complex values with magnitudes in [lo, 2) (safe divisors) and any phase."""
    rng = np.random.default_rng(seed)
    mag = rng.uniform(lo, 2.0, shape)
    return (mag * np.exp(1j * rng.uniform(-np.pi, np.pi, shape))).astype(NP[dtype])


def _cuda(a):
    return st.from_numpy(np.ascontiguousarray(a)).cuda()


def _host(t):
    return t.cpu().numpy()


def _close(t, ref, dtype, **kw):
    got = _host(t)
    assert got.dtype == np.asarray(ref).dtype, (got.dtype, np.asarray(ref).dtype)
    np.testing.assert_allclose(got, ref, **{**TOL[dtype], **kw})


# ---------------------------------------------------------------------------- copies and casts
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_round_trip_and_layout_copies(dtype, layout):
    a = _rand((37, 19), dtype)
    g = _cuda(a)
    assert g.dtype is getattr(st, dtype) and g.is_complex()
    view, ref = LAYOUTS[layout](g), LAYOUTS[layout](st.from_numpy(a)).numpy()
    np.testing.assert_array_equal(_host(view), ref)
    for t in (view.clone(), view.contiguous(), st.empty(view.shape, dtype=view.dtype, device="cuda").copy_(view)):
        np.testing.assert_array_equal(_host(t), ref)
    host = st.from_numpy(np.ascontiguousarray(ref))
    np.testing.assert_array_equal(_host(st.empty(ref.shape, dtype=view.dtype, device="cuda").t().copy_(host.t())),
                                  ref.T)


def test_transposed_copies():
    """Large transposed copies take the tiled transpose kernel, with and without a cast."""
    a = _rand((96, 80), "complex64")
    g = _cuda(a)
    np.testing.assert_array_equal(_host(g.t().contiguous()), a.T)
    np.testing.assert_array_equal(_host(st.empty((80, 96), dtype=st.complex128, device="cuda").copy_(g.t())),
                                  a.T.astype(np.complex128))
    r = np.random.default_rng(1).standard_normal((96, 80)).astype(np.float32)
    np.testing.assert_array_equal(_host(st.empty((80, 96), dtype=st.complex64, device="cuda").copy_(_cuda(r).t())),
                                  r.T.astype(np.complex64))
    with pytest.warns(UserWarning, match="Casting complex values to real discards the imaginary part"):
        out = st.empty((80, 96), dtype=st.float64, device="cuda").copy_(g.t())
    np.testing.assert_array_equal(_host(out), a.T.real.astype(np.float64))


@pytest.mark.parametrize("dtype", DTYPES)
def test_casts(dtype):
    a = _rand((5, 7), dtype)
    a[0, :3] = [0, 1j, 2.5]
    g = _cuda(a)
    other = "complex128" if dtype == "complex64" else "complex64"
    np.testing.assert_array_equal(_host(g.to(getattr(st, other))), a.astype(NP[other]))
    for real in ("float32", "float64", "float16", "int32", "int64", "uint8"):
        with pytest.warns(UserWarning, match="discards the imaginary part"):
            got = _host(g.to(getattr(st, real)) if real != "uint8" else (g * 10).to(st.uint8))
        src = a if real != "uint8" else a * 10
        np.testing.assert_array_equal(got, src.real.astype(np.dtype(real)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # complex -> bool does not warn (torch's copy_)
        np.testing.assert_array_equal(_host(g.to(st.bool)), a != 0)
    for real in ("float32", "float64", "int64", "int8", "bool", "float16", "bfloat16"):
        r = st.from_numpy(np.arange(-4, 8).reshape(3, 4) % 3).to(getattr(st, real))
        np.testing.assert_array_equal(_host(r.cuda().to(getattr(st, dtype))),
                                      r.to(st.float64).numpy().astype(NP[dtype]))
    # device-to-host and host-to-device copies with a cast
    np.testing.assert_array_equal(g.to(device="cpu", dtype=getattr(st, other)).numpy(), a.astype(NP[other]))
    r = np.linspace(-1, 1, 35).reshape(5, 7)
    np.testing.assert_array_equal(_host(st.from_numpy(r).to(device="cuda", dtype=getattr(st, dtype))),
                                  r.astype(NP[dtype]))


@pytest.mark.parametrize("dtype", DTYPES)
def test_cat_and_stack(dtype):
    parts = [_rand((3, n), dtype, seed=n) for n in (1, 4, 7)]
    gs = [_cuda(p) for p in parts]
    np.testing.assert_array_equal(_host(st.cat(gs, 1)), np.concatenate(parts, 1))
    np.testing.assert_array_equal(_host(st.cat([g.t() for g in gs], 0)), np.concatenate([p.T for p in parts], 0))
    np.testing.assert_array_equal(_host(st.stack([gs[1], gs[1] * 2])), np.stack([parts[1], parts[1] * 2]))
    r = np.ones((3, 2), np.float32)
    mixed = st.cat([gs[0], _cuda(r)], 1)
    assert mixed.dtype is getattr(st, dtype)
    np.testing.assert_array_equal(_host(mixed), np.concatenate([parts[0], r.astype(NP[dtype])], 1))
    big = _rand((1 << 20) + 3, dtype)
    np.testing.assert_array_equal(_host(st.cat([_cuda(big), _cuda(big[:5])])), np.concatenate([big, big[:5]]))


@pytest.mark.parametrize("dtype", DTYPES)
def test_fill_and_factories(dtype):
    d = getattr(st, dtype)
    np.testing.assert_array_equal(_host(st.zeros((3, 5), dtype=d, device="cuda")), np.zeros((3, 5), NP[dtype]))
    np.testing.assert_array_equal(_host(st.ones(7, dtype=d, device="cuda")), np.ones(7, NP[dtype]))
    f = st.full((4, 3), 1.5 - 2j, dtype=d, device="cuda")
    np.testing.assert_array_equal(_host(f), np.full((4, 3), 1.5 - 2j, NP[dtype]))
    g = _cuda(_rand((6, 8), dtype))
    ref = g.cpu().numpy()
    g[:, ::3].fill_(-3j)
    ref[:, ::3] = -3j
    np.testing.assert_array_equal(_host(g), ref)
    g.fill_(st.tensor(2 + 0.5j, dtype=d, device="cuda"))
    np.testing.assert_array_equal(_host(g), np.full((6, 8), 2 + 0.5j, NP[dtype]))
    g.zero_()
    assert not _host(g).any()
    assert st.full((2,), 1 + 2j, device="cuda").dtype is st.complex64
    assert _cuda(np.array([3 - 4j], NP[dtype]))[0].item() == 3 - 4j


# ---------------------------------------------------------------------------- elementwise
BINARY = {
    "add": (lambda x, y: x + y, lambda x, y: x + y),
    "sub": (lambda x, y: x - y, lambda x, y: x - y),
    "mul": (lambda x, y: x * y, lambda x, y: x * y),
    "div": (lambda x, y: x / y, lambda x, y: x / y),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", list(BINARY))
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_binary(dtype, op, layout):
    fs, fn = BINARY[op]
    a, b = _rand((33, 65), dtype, 1), _rand((33, 65), dtype, 2)
    ga, gb = LAYOUTS[layout](_cuda(a)), LAYOUTS[layout](_cuda(b))
    na, nb = LAYOUTS[layout](st.from_numpy(a)).numpy(), LAYOUTS[layout](st.from_numpy(b)).numpy()
    _close(fs(ga, gb), fn(na, nb), dtype)
    _close(fs(ga, gb[:1]), fn(na, nb[:1]), dtype)  # broadcast
    _close(fs(ga, 1.5 - 2j), fn(na, NP[dtype](1.5 - 2j)), dtype)  # complex Python scalar keeps the dtype
    _close(fs(2, ga), fn(NP[dtype](2), na), dtype)
    _close(fs(ga, st.tensor(0.5 + 1j)), fn(na, NP[dtype](0.5 + 1j)), dtype)  # a 0-dim CPU tensor
    _close(fs(ga, gb.cpu()[0, 0]), fn(na, nb[0, 0]), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", list(BINARY))
def test_mixed_real_and_complex(dtype, op):
    fs, fn = BINARY[op]
    real = "float32" if dtype == "complex64" else "float64"
    a = _rand(1029, dtype)  # vector path plus a tail
    r = np.random.default_rng(3).uniform(0.5, 2, 1029).astype(real)
    ga, gr = _cuda(a), _cuda(r)
    _close(fs(ga, gr), fn(a, r.astype(NP[dtype])), dtype)
    _close(fs(gr, ga), fn(r.astype(NP[dtype]), a), dtype)
    _close(fs(gr, 2 - 1j), fn(r.astype(NP[dtype]), NP[dtype](2 - 1j)), dtype)  # float32 * 1j is complex64
    i = _cuda(np.arange(1, 1030, dtype=np.int64))
    _close(fs(ga, i), fn(a, np.arange(1, 1030).astype(NP[dtype])), dtype)
    if dtype == "complex64":  # float64 with complex64 promotes to complex128
        r64 = r.astype(np.float64)
        _close(fs(ga, _cuda(r64)), fn(a.astype(np.complex128), r64.astype(np.complex128)), "complex128",
               rtol=2e-7, atol=2e-7)


@pytest.mark.parametrize("dtype", DTYPES)
def test_alpha_and_inplace(dtype):
    a, b = _rand((9, 17), dtype, 4), _rand((9, 17), dtype, 5)
    ga, gb = _cuda(a), _cuda(b)
    alpha = NP[dtype](2 - 0.5j)
    _close(st.add(ga, gb, alpha=2 - 0.5j), a + alpha * b, dtype)
    _close(st.sub(ga, gb, alpha=2 - 0.5j), a - alpha * b, dtype)
    _close(st.add(ga, 1j, alpha=3), a + NP[dtype](3j), dtype)
    for name, fn in (("add_", lambda x, y: x + y), ("sub_", lambda x, y: x - y), ("mul_", lambda x, y: x * y),
                     ("div_", lambda x, y: x / y)):
        g = _cuda(a)
        getattr(g, name)(gb)
        _close(g, fn(a, b), dtype)
        g = _cuda(a)[:, ::2]
        getattr(g, name)(gb[:1, ::2])
        _close(g, fn(a[:, ::2], b[:1, ::2]), dtype)
        g = _cuda(a)
        getattr(g, name)(0.5 + 2j)
        _close(g, fn(a, NP[dtype](0.5 + 2j)), dtype)
    g = _cuda(a)
    g.add_(gb, alpha=1 + 1j)
    _close(g, a + NP[dtype](1 + 1j) * b, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_unary(dtype, layout):
    a = _rand((21, 43), dtype, 6, lo=0.0)
    a[0, :4] = [0, 2, -3j, -1.5]
    g = LAYOUTS[layout](_cuda(a))
    na = LAYOUTS[layout](st.from_numpy(a)).numpy()
    real = np.float32 if dtype == "complex64" else np.float64
    _close(-g, -na, dtype)
    _close(st.neg(g), -na, dtype)
    _close(g.exp(), np.exp(na), dtype, rtol=TOL[dtype]["rtol"] * 4)
    _close(g.abs(), np.abs(na).astype(real), dtype)
    _close(st.angle(g), np.angle(na).astype(real), dtype)
    _close(st.conj_physical(g), np.conj(na), dtype)
    _close(g.conj(), np.conj(na), dtype)
    mag = np.abs(na)
    _close(st.sgn(g), np.where(mag == 0, 0, na / np.where(mag == 0, 1, mag)).astype(na.dtype), dtype)
    c = _cuda(a)
    c.exp_()
    _close(c, np.exp(a), dtype, rtol=TOL[dtype]["rtol"] * 4)
    c = _cuda(a)
    c.neg_()
    _close(c, -a, dtype)


def test_exp_on_the_real_axis():
    """exp(x + 0j) is e^x exactly with imag 0; e^inf stays inf (not inf * sin 0 = nan)."""
    a = np.array([0, 1, -2, np.inf, -np.inf, 30], np.complex128)
    np.testing.assert_array_equal(_host(_cuda(a).exp()), np.exp(a.real) + 0j)


@pytest.mark.parametrize("dtype", DTYPES)
def test_comparisons(dtype):
    a = _rand((11, 13), dtype, 7)
    b = a.copy()
    b[::3] += 1
    b[1::3] += 1j
    ga, gb = _cuda(a), _cuda(b)
    np.testing.assert_array_equal(_host(ga == gb), a == b)
    np.testing.assert_array_equal(_host(ga != gb), a != b)
    np.testing.assert_array_equal(_host(st.eq(ga.t(), gb.t())), (a == b).T)
    np.testing.assert_array_equal(_host(ga[:, :1] == gb[:1]), a[:, :1] == b[:1])
    z = _cuda(np.array([1 + 0j, 1 + 1j, 2], NP[dtype]))
    np.testing.assert_array_equal(_host(z == 1), [True, False, False])
    np.testing.assert_array_equal(_host(z != 1 + 1j), [True, False, True])
    np.testing.assert_array_equal(_host(z == _cuda(np.array([1.0, 1.0, 2.0]))), [True, False, True])


@pytest.mark.parametrize("real", ["float32", "float64"])
def test_polar_and_complex(real):
    rng = np.random.default_rng(8)
    r, t = rng.uniform(0, 2, (5, 6)).astype(real), rng.uniform(-4, 4, (5, 6)).astype(real)
    gr, gt = _cuda(r), _cuda(t)
    cd = "complex64" if real == "float32" else "complex128"
    _close(st.polar(gr, gt), (r * np.cos(t) + 1j * r * np.sin(t)).astype(NP[cd]), cd)
    _close(st.polar(gr.t(), gt[:1].t()), (r.T * np.cos(t[:1].T) + 1j * r.T * np.sin(t[:1].T)).astype(NP[cd]), cd)
    _close(st.complex(gr, gt), (r + 1j * t).astype(NP[cd]), cd)
    _close(st.complex(gr[:, :1], gt[:1]), (r[:, :1] + 1j * t[:1]).astype(NP[cd]), cd)


@pytest.mark.parametrize("real", ["float32", "float64", "float16", "int64", "uint8", "bool"])
def test_angle_of_real(real):
    """torch's angle of real x: NaN stays NaN, pi for x < 0, 0 otherwise; integers and bool give float32."""
    floating = real in ("float32", "float64", "float16")
    x = {"int64": [1, -2, 0, 3], "uint8": [1, 0, 255], "bool": [True, False]}.get(real, [1, -2, 0, 3, -0.0, np.nan])
    t = st.from_numpy(np.array(x)).to(getattr(st, real))
    got = st.angle(t.cuda())
    out = real if floating else "float32"
    assert got.dtype is getattr(st, out)
    xs = np.array(x, dtype=np.float64)
    np.testing.assert_array_equal(_host(got), np.where(np.isnan(xs), xs, np.where(xs < 0, np.pi, 0)).astype(out))
    np.testing.assert_array_equal(_host(st.conj_physical(t.cuda())), t.numpy())


# ---------------------------------------------------------------------------- reductions
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_sum_and_mean(dtype, layout):
    a = _rand((40, 70), dtype, 9)
    g = LAYOUTS[layout](_cuda(a))
    na = LAYOUTS[layout](st.from_numpy(a)).numpy()
    tol = {"rtol": 1e-5, "atol": 1e-4} if dtype == "complex64" else {"rtol": 1e-12, "atol": 1e-11}
    ref = na.astype(np.complex128)
    for kw, np_kw in (({}, {}), ({"dim": 0}, {"axis": 0}), ({"dim": 1}, {"axis": 1}),
                      ({"dim": 1, "keepdim": True}, {"axis": 1, "keepdims": True}), ({"dim": (0, 1)}, {})):
        _close(g.sum(**kw), ref.sum(**np_kw).astype(NP[dtype]), dtype, **tol)
        _close(g.mean(**kw), ref.mean(**np_kw).astype(NP[dtype]), dtype, **tol)


@pytest.mark.parametrize("dtype", DTYPES)
def test_sum_and_mean_edges(dtype):
    big = _rand(1 << 20, dtype, 10)  # split into partial sums and combined
    g = _cuda(big)
    tol = {"rtol": 1e-4, "atol": 1e-2} if dtype == "complex64" else {"rtol": 1e-10, "atol": 1e-8}
    _close(g.sum(), big.astype(np.complex128).sum().astype(NP[dtype]), dtype, **tol)
    _close(g.mean(), big.astype(np.complex128).mean().astype(NP[dtype]), dtype, **tol)
    empty = st.empty((0, 3), dtype=getattr(st, dtype), device="cuda")
    np.testing.assert_array_equal(_host(empty.sum(0)), np.zeros(3, NP[dtype]))
    m = _host(empty.mean(0))
    assert np.isnan(m.real).all() and np.isnan(m.imag).all()
    z = _cuda(np.array(1 - 2j, NP[dtype]))
    _close(z.sum(), np.array(1 - 2j, NP[dtype]), dtype)
    a = _rand((4, 5), dtype, 11)
    other = "complex128" if dtype == "complex64" else "complex64"
    _close(_cuda(a).sum(1, dtype=getattr(st, other)), a.astype(np.complex128).sum(1).astype(NP[other]), other,
           rtol=1e-5, atol=1e-5)
    r = np.arange(12.0).reshape(3, 4)
    _close(_cuda(r).sum(0, dtype=getattr(st, dtype)), r.sum(0).astype(NP[dtype]), dtype)
    _close(_cuda(r).mean(1, dtype=getattr(st, dtype)), r.mean(1).astype(NP[dtype]), dtype)


# ---------------------------------------------------------------------------- interop, guard
@pytest.mark.parametrize("dtype", DTYPES)
def test_interop(dtype):
    from strided.backends.cuda.interop import from_cuda_array_interface

    a = _rand((6, 4), dtype, 12)
    g = _cuda(a)
    cai = g.__cuda_array_interface__
    assert cai["typestr"] == np.dtype(NP[dtype]).str
    assert cai["typestr"] == ("<c8" if dtype == "complex64" else "<c16")
    back = from_cuda_array_interface(g)
    assert back.dtype is g.dtype and back.data_ptr() == g.data_ptr()
    v = g[:, 1:]
    d = st.from_dlpack(v)
    assert d.dtype is g.dtype and d.data_ptr() == v.data_ptr() and d.stride() == v.stride()
    np.testing.assert_array_equal(_host(d), a[:, 1:])


def test_ops_without_complex_kernels_refuse():
    g = _cuda(_rand(3, "complex64"))
    with pytest.raises(NotImplementedError, match='"erf_cuda" not implemented for \'ComplexFloat\''):
        st.erf(g)
    with pytest.raises(RuntimeError, match="^ Sort does not support complex dtypes on CPU$"):  # torch 2.11's CUDA words
        st.sort(g)
    with pytest.raises(NotImplementedError, match="ComplexDouble"):
        g.to(st.complex128).amax()

