"""strided.linalg's decompositions on every available backend: qr and lstsq (``qr.py``), eigh and eigvalsh
(``eigh.py``), svd, svdvals, pinv, matrix_rank and cond (``svd.py``) and the singular-value matrix norms
(``norms.py``): values against NumPy (reconstructions, orthogonality, eigen / singular values, up-to-sign
vectors), shapes on meta, gradients against torch (when installed) for gauge-invariant losses and gradcheck,
non-finite input and torch's errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import strided as st
from strided.autograd import gradcheck
from strided.testing import available_devices

DEVICES = available_devices()
DATA_DEVICES = [d for d in DEVICES if d != "meta"]
RNG = np.random.default_rng(2024)


def _t(a, device="cpu", grad=False):
    return st.tensor(np.asarray(a), device=device, requires_grad=grad)


def _host(t):
    return t.detach().cpu().numpy().astype(np.float64)


def _sym(n, batch=(), seed=0):
    a = np.random.default_rng(seed).standard_normal((*batch, n, n))
    return a + np.swapaxes(a, -1, -2)


def _tol(dtype, device):
    """Absolute tolerance (times the matrix scale) for results accumulated over many rotations."""
    return 1e-12 if dtype == "float64" else (5e-5 if device == "cuda" else 2e-5)


def _eye(n):
    return np.eye(n) if n else np.zeros((0, 0))


def _orthonormal_columns(Q, tol):
    k = Q.shape[-1]
    np.testing.assert_allclose(np.swapaxes(Q, -1, -2) @ Q, np.broadcast_to(_eye(k), (*Q.shape[:-2], k, k)), atol=tol)


SHAPES = [(4, 3), (3, 5), (4, 4), (1, 1), (2, 5, 2), (2, 3, 2, 6), (7, 1), (1, 6)]


# -- qr ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_matches_lapack(device, shape, mode):
    a = RNG.standard_normal(shape)
    Q, R = st.linalg.qr(_t(a, device), mode=mode)
    m, n = shape[-2:]
    k = min(m, n)
    q_cols, r_rows = (m, m) if mode == "complete" else (k, k)
    assert type(st.linalg.qr(_t(a, device))).__name__ == "linalg_qr"
    assert tuple(R.shape) == (*shape[:-2], r_rows, n) and R.dtype is st.float64
    assert tuple(Q.shape) == ((0,) if mode == "r" else (*shape[:-2], m, q_cols))
    if device == "meta":
        return
    want = np.linalg.qr(a, mode="complete" if mode == "complete" else "reduced")
    # Householder with LAPACK's reflector choices: the same Q and R, signs included
    np.testing.assert_allclose(_host(R), want[1], atol=1e-12)
    if mode != "r":
        np.testing.assert_allclose(_host(Q), want[0], atol=1e-12)
        np.testing.assert_allclose(_host(Q) @ _host(R), a, atol=1e-12)
        _orthonormal_columns(_host(Q), 1e-12)
        assert np.all(np.tril(_host(R), -1) == 0)


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_qr_float32_and_empty(device):
    a = RNG.standard_normal((3, 6, 4)).astype(np.float32)
    Q, R = st.linalg.qr(_t(a, device))
    assert Q.dtype is st.float32
    np.testing.assert_allclose(_host(Q @ R), a, atol=2e-6)
    _orthonormal_columns(_host(Q), 2e-6)
    for shape, mode, qs, rs in [((2, 0, 3), "reduced", (2, 0, 0), (2, 0, 3)), ((3, 0), "complete", (3, 3), (3, 0)),
                                ((3, 0), "reduced", (3, 0), (0, 0)), ((0, 4, 2), "r", (0,), (0, 2, 2))]:
        Q, R = st.linalg.qr(st.zeros(*shape, device=device), mode=mode)
        assert (tuple(Q.shape), tuple(R.shape)) == (qs, rs)
    np.testing.assert_array_equal(_host(st.linalg.qr(st.zeros(3, 0, device=device), mode="complete")[0]), np.eye(3))


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_qr_non_finite(device):
    nan, inf = math.nan, math.inf
    # NaN / inf propagate exactly as in torch's (LAPACK's) result; nothing hangs
    q = np.array([[-1.0, -2.0], [-2.0, 1.0]]) / np.sqrt(5.0)
    for a, want_q, want_r in [([[1.0, 0.0], [nan, 3.0]], np.full((2, 2), nan), [[nan, nan], [0.0, nan]]),
                              ([[1.0, nan], [2.0, 3.0]], q, [[-np.sqrt(5.0), nan], [0.0, nan]]),
                              ([[1.0, inf], [2.0, 3.0]], q, [[-np.sqrt(5.0), nan], [0.0, -inf]])]:
        Q, R = st.linalg.qr(_t(a, device))
        np.testing.assert_allclose(_host(Q), want_q, rtol=1e-12)
        np.testing.assert_allclose(_host(R), want_r, rtol=1e-12)


@pytest.mark.parametrize("shape", [(5, 3), (3, 3), (3, 5), (2, 4, 2)])
def test_qr_gradient(shape):
    a = RNG.standard_normal(shape)
    k = min(shape[-2:])
    wq, wr = RNG.standard_normal((*shape[:-1], k)), RNG.standard_normal((*shape[:-2], k, shape[-1]))

    def loss(x, lib=st):
        Q, R = lib.linalg.qr(x)
        return (Q * lib.tensor(wq)).sum() + (R * lib.tensor(wr)).sum()

    assert gradcheck(lambda x: st.linalg.qr(x), (_t(a, grad=True),))
    torch = pytest.importorskip("torch")
    x, y = _t(a, grad=True), torch.tensor(a, requires_grad=True)
    loss(x).backward()
    loss(y, torch).backward()
    np.testing.assert_allclose(_host(x.grad), y.grad.numpy(), rtol=1e-9, atol=1e-11)


def test_second_derivatives():
    from strided.autograd import grad

    a = _sym(3, seed=7)
    weights = _t([1.0, -2.0, 0.5])
    for fn in (lambda x: (st.linalg.eigvalsh(x + x.mT) * weights).sum(),
               lambda x: (st.linalg.svdvals(x) * weights).sum(),
               lambda x: (st.linalg.qr(x).R * st.linalg.qr(x).Q).sum(),
               lambda x: (st.linalg.pinv(x) ** 2).sum()):
        assert gradcheck(lambda x, fn=fn: grad(fn(x), x, create_graph=True)[0], (_t(a, grad=True),))


@pytest.mark.parametrize("device", DEVICES)
def test_backward_shapes_on_every_device(device):
    for fn in (lambda x: st.linalg.eigh(x).eigenvectors.pow(2).sum() + st.linalg.eigvalsh(x).sum(),
               lambda x: st.linalg.svd(x).U.pow(2).sum() + st.linalg.svdvals(x).sum(),
               lambda x: st.linalg.qr(x).Q.sum() + st.linalg.qr(x).R.sum(), lambda x: st.linalg.pinv(x).sum(),
               lambda x: st.linalg.lstsq(x, x).solution.sum(), lambda x: st.linalg.cond(x, "fro"),
               lambda x: st.linalg.matrix_norm(x, "nuc")):
        x = _t(np.eye(3) + 0.1 * RNG.standard_normal((3, 3)), device, grad=True)
        fn(x).backward()
        assert tuple(x.grad.shape) == (3, 3) and x.grad.device.type == device


@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("dtype, scales", [("float64", (1e-300, 1e300)), ("float32", (1e-30, 1e30))])
def test_extreme_magnitudes(device, dtype, scales):
    a = RNG.standard_normal((5, 4))
    for scale in scales:  # squares of the entries would over- / underflow without the internal scaling
        x = _t((a * scale).astype(dtype), device)
        rel = 1e-12 if dtype == "float64" else 1e-5
        np.testing.assert_allclose(_host(st.linalg.svdvals(x)) / scale, np.linalg.svd(a, compute_uv=False), rtol=rel)
        np.testing.assert_allclose(_host(st.linalg.eigvalsh(x[:4])) / scale, np.linalg.eigvalsh(a[:4]), rtol=rel,
                                   atol=rel)
        np.testing.assert_allclose(np.abs(_host(st.linalg.qr(x).R)) / scale, np.abs(np.linalg.qr(a)[1]), rtol=rel,
                                   atol=rel)


def test_qr_errors():
    with pytest.raises(RuntimeError, match="linalg.qr: The input tensor A must have at least 2 dimensions."):
        st.linalg.qr(st.zeros(3))
    with pytest.raises(RuntimeError, match="linalg.qr: Expected a floating point or complex tensor as input. Got Long"):
        st.linalg.qr(st.zeros(2, 2, dtype=st.int64))
    with pytest.raises(NotImplementedError, match="\"geqrf_cpu\" not implemented for 'Half'"):
        st.linalg.qr(st.zeros(2, 2, dtype=st.float16))
    with pytest.raises(RuntimeError, match=r"qr received unrecognized mode 'foo' but expected one of 'reduced' "
                                           r"\(default\), 'r', or 'complete'"):
        st.linalg.qr(st.zeros(2, 2), mode="foo")
    with pytest.raises(TypeError, match=r"linalg_qr\(\): argument 'A' \(position 1\) must be Tensor, not int"):
        st.linalg.qr(3)
    x = _t(RNG.standard_normal((4, 3)), grad=True)
    with pytest.raises(RuntimeError, match="The derivative of linalg.qr depends on Q, which is not computed when "
                                           "mode='r'"):
        st.linalg.qr(x, mode="r").R.sum().backward()
    with pytest.raises(RuntimeError, match="The QR decomposition is not differentiable when mode='complete' and "
                                           "nrows > ncols."):
        st.linalg.qr(x, mode="complete").Q.sum().backward()
    st.linalg.qr(x.detach().mT.requires_grad_(), mode="complete").Q.sum().backward()  # m <= n: differentiable


# -- lstsq ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("driver", [None, "gels", "gelsy", "gelsd", "gelss"])
@pytest.mark.parametrize("shapes", [((6, 3), (6, 2)), ((3, 5), (3, 2)), ((2, 5, 3), (2, 5)), ((1, 5, 3), (4, 5, 2)),
                                    ((4, 4), (4, 1))])
def test_lstsq_full_rank(device, driver, shapes):
    (sa, sb) = shapes
    a, b = RNG.standard_normal(sa), RNG.standard_normal(sb)
    r = st.linalg.lstsq(_t(a, device), _t(b, device), driver=driver)
    assert type(r).__name__ == "linalg_lstsq"
    m, n = sa[-2:]
    vector = len(sb) == len(sa) - 1
    batch = np.broadcast_shapes(sa[:-2], (sb if vector else sb[:-1])[:-1])
    k = 1 if vector else sb[-1]
    assert tuple(r.solution.shape) == (*batch, n) + (() if vector else (k,))
    name = driver or "gelsy"
    want_res = (*batch, k) if m > n and name != "gelsy" else (0,)
    assert tuple(r.residuals.shape) == want_res and r.residuals.dtype is st.float64
    assert tuple(r.rank.shape) == ((0,) if name == "gels" else sa[:-2]) and r.rank.dtype is st.int64
    assert tuple(r.singular_values.shape) == ((*sa[:-2], min(m, n)) if name in ("gelsd", "gelss") else (0,))
    if device == "meta":
        return
    A, B = np.broadcast_to(a, (*batch, m, n)), np.broadcast_to(b[..., None] if vector else b, (*batch, m, k))
    want = np.linalg.pinv(A) @ B  # the (minimum-norm) least-squares solution
    np.testing.assert_allclose(_host(r.solution).reshape(want.shape), want, atol=1e-10)
    if want_res != (0,):
        np.testing.assert_allclose(_host(r.residuals), ((A @ want - B) ** 2).sum(-2), atol=1e-10)
    if name != "gels":
        assert np.all(_host(r.rank) == min(m, n))
    if name in ("gelsd", "gelss"):
        np.testing.assert_allclose(_host(r.singular_values), np.linalg.svd(a, compute_uv=False), atol=1e-12)


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_lstsq_rank_deficient_and_rcond(device):
    a = RNG.standard_normal((2, 7, 2)) @ RNG.standard_normal((2, 2, 4))  # rank 2, 7 x 4
    b = RNG.standard_normal((2, 7, 3))
    for driver in ("gelsy", "gelsd", "gelss"):
        r = st.linalg.lstsq(_t(a, device), _t(b, device), driver=driver)
        np.testing.assert_allclose(_host(r.solution), np.linalg.pinv(a) @ b, atol=1e-10)  # minimum norm
        np.testing.assert_array_equal(_host(r.rank), [2, 2])
        assert tuple(r.residuals.shape) == (0,)  # not every matrix has full rank: none, as torch
    d = np.diag([1.0, 1e-3, 1e-8])
    for rcond, rank, x in [(None, 3, [1, 1e3, 1e8]), (1e-5, 2, [1, 1e3, 0]), (1e-2, 1, [1, 0, 0]),
                           (-1.0, 3, [1, 1e3, 1e8])]:
        r = st.linalg.lstsq(_t(d, device), _t(np.ones((3, 1)), device), rcond=rcond)
        assert int(r.rank.item()) == rank
        np.testing.assert_allclose(_host(r.solution)[:, 0], x, rtol=1e-9)
    r32 = st.linalg.lstsq(_t(d.astype(np.float32), device), _t(np.ones((3, 1), np.float32), device))
    assert int(r32.rank.item()) == 2  # default rcond = eps(float32) * 3 drops 1e-8
    r = st.linalg.lstsq(st.zeros(5, 0, dtype=st.float64, device=device), _t(np.ones((5, 2)), device), driver="gelsd")
    assert tuple(r.solution.shape) == (0, 2) and int(r.rank.item()) == 0
    np.testing.assert_allclose(_host(r.residuals), [5.0, 5.0])
    r = st.linalg.lstsq(st.zeros(0, 3, device=device), st.zeros(0, 2, device=device))
    np.testing.assert_array_equal(_host(r.solution), np.zeros((3, 2)))


@pytest.mark.parametrize("driver", [None, "gels", "gelsd"])
def test_lstsq_gradient(driver):
    a, b = RNG.standard_normal((2, 5, 3)), RNG.standard_normal((2, 5, 2))
    w = RNG.standard_normal((2, 3, 2))

    def loss(x, y, lib=st):
        r = lib.linalg.lstsq(x, y, driver=driver)
        res = r.residuals.sum() if r.residuals.numel() else 0.0
        return (r.solution * lib.tensor(w)).sum() + res

    assert gradcheck(lambda x, y: st.linalg.lstsq(x, y, driver=driver).solution, (_t(a, grad=True), _t(b, grad=True)))
    torch = pytest.importorskip("torch")
    xs, ys = _t(a, grad=True), _t(b, grad=True)
    xt, yt = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    loss(xs, ys).backward()
    loss(xt, yt, torch).backward()
    np.testing.assert_allclose(_host(xs.grad), xt.grad.numpy(), rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(_host(ys.grad), yt.grad.numpy(), rtol=1e-9, atol=1e-10)


def test_lstsq_gradient_vector_and_broadcast():
    a, b = RNG.standard_normal((1, 6, 3)), RNG.standard_normal((4, 6))
    assert gradcheck(lambda x, y: st.linalg.lstsq(x, y).solution, (_t(a[0], grad=True), _t(b[0], grad=True)))
    x, y = _t(a, grad=True), _t(b, grad=True)
    st.linalg.lstsq(x, y.unsqueeze(-1)).solution.sum().backward()
    assert tuple(x.grad.shape) == (1, 6, 3) and tuple(y.grad.shape) == (4, 6)
    pinv = np.linalg.pinv(a[0])
    np.testing.assert_allclose(_host(y.grad), np.broadcast_to(pinv.T @ np.ones(3), (4, 6)), atol=1e-12)


def test_lstsq_errors():
    op = "torch.linalg.lstsq: "
    for args, kw, message in [
        ((st.zeros(3), st.zeros(3)), {}, "input must have at least 2 dimensions."),
        ((st.zeros(3, 2), st.tensor(1.0)), {}, "other must have at least 1 dimension."),
        ((st.zeros(3, 2), st.zeros(3, 1, dtype=st.float64)), {}, "Expected input and other to have the same dtype, but "
                                                                 "got input's dtype Float and other's dtype Double"),
        ((st.zeros(2, 3, 2), st.zeros(3)), {}, r"input.dim\(\) must be greater or equal to other.dim\(\) and "
                                               r"\(input.dim\(\) - other.dim\(\)\) <= 1"),
        ((st.zeros(3, 2), st.zeros(4, 1)), {}, r"input.size\(-2\) should match other.size\(-2\)"),
        ((st.zeros(3, 2), st.zeros(4)), {}, r"input.size\(-2\) should match other.size\(-1\)"),
        ((st.zeros(3, 2), st.zeros(3, 1)), {"driver": "foo"}, r"parameter `driver` should be one of \(gels, gelsy, "
                                                              r"gelsd, gelss\)"),
    ]:
        with pytest.raises(RuntimeError, match=op + message):
            st.linalg.lstsq(*args, **kw)
    with pytest.raises(RuntimeError, match="This function doesn't handle types other than float and double"):
        st.linalg.lstsq(st.zeros(3, 2, dtype=st.int64), st.zeros(3, 1, dtype=st.int64))
    with pytest.raises(TypeError, match=r"linalg_lstsq\(\): argument 'b' \(position 2\) must be Tensor, not int"):
        st.linalg.lstsq(st.zeros(3, 2), 3)


# -- eigh / eigvalsh ----------------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("n, batch", [(1, ()), (2, ()), (3, (2,)), (5, ()), (8, (2, 3)), (9, (1,))])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_eigh_matches_numpy(device, n, batch, dtype):
    a = RNG.standard_normal((*batch, n, n)).astype(dtype)  # not symmetric: only one triangle is read
    for uplo in ("L", "U"):
        w, V = st.linalg.eigh(_t(a, device), UPLO=uplo)
        assert tuple(w.shape) == (*batch, n) and tuple(V.shape) == (*batch, n, n)
        assert w.dtype.name == dtype and V.dtype.name == dtype
        values = st.linalg.eigvalsh(_t(a, device), UPLO=uplo.lower())
        if device == "meta":
            continue
        tol = _tol(dtype, device) * n
        want_w, want_V = np.linalg.eigh(a.astype(np.float64), UPLO=uplo)
        sym = want_V @ (want_w[..., None] * np.swapaxes(want_V, -1, -2))
        np.testing.assert_allclose(_host(w), want_w, atol=tol)
        np.testing.assert_allclose(_host(values), want_w, atol=tol)
        assert np.all(np.diff(_host(w), axis=-1) >= 0)
        Vh = _host(V)
        _orthonormal_columns(Vh, tol)
        np.testing.assert_allclose(Vh @ (_host(w)[..., None] * np.swapaxes(Vh, -1, -2)), sym, atol=tol)
        # eigenvectors up to sign (random spectra are well separated)
        np.testing.assert_allclose(np.abs(np.swapaxes(Vh, -1, -2) @ want_V), np.broadcast_to(np.eye(n), Vh.shape),
                                   atol=100 * tol)


@pytest.mark.parametrize("device", DEVICES)
def test_eigh_empty_and_repeated(device):
    for shape in [(0, 3, 3), (2, 0, 0)]:
        w, V = st.linalg.eigh(st.zeros(*shape, device=device))
        assert tuple(w.shape) == shape[:-1] and tuple(V.shape) == shape
    if device == "meta":
        return
    q, _ = np.linalg.qr(RNG.standard_normal((6, 6)))
    a = (q * np.array([1.0, 1.0, 1.0, 2.0, 2.0, -3.0])) @ q.T  # repeated eigenvalues
    w, V = st.linalg.eigh(_t(a, device))
    np.testing.assert_allclose(_host(w), [-3, 1, 1, 1, 2, 2], atol=1e-13)
    np.testing.assert_allclose(_host(V) @ np.diag(_host(w)) @ _host(V).T, a, atol=1e-13)
    w, V = st.linalg.eigh(st.eye(4, dtype=st.float64, device=device) * 2)
    np.testing.assert_array_equal(_host(w), [2, 2, 2, 2])
    np.testing.assert_array_equal(np.abs(_host(V)), np.eye(4))


@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("n", [64, 200])
def test_eigh_large_float64(device, n):
    a = _sym(n, seed=n)
    w, V = st.linalg.eigh(_t(a, device))
    scale = np.linalg.norm(a, 2)
    np.testing.assert_allclose(_host(w), np.linalg.eigvalsh(a), atol=2e-15 * n * scale)
    Vh = _host(V)
    np.testing.assert_allclose(a @ Vh - Vh * _host(w), 0, atol=2e-15 * n * scale)
    _orthonormal_columns(Vh, 1e-15 * n)


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_eigh_non_finite(device):
    for bad in (math.nan, math.inf):
        a = np.array([[[1.0, 0.0, 0.0], [bad, 3.0, 0.0], [0.0, 1.0, 2.0]], np.diag([1.0, 2.0, 3.0])])
        w, V = st.linalg.eigh(_t(a, device))  # torch: all-NaN eigenvalues and eigenvectors, no error
        assert np.isnan(_host(w)[0]).all() and np.isnan(_host(V)[0]).all()
        np.testing.assert_allclose(_host(w)[1], [1, 2, 3])
        w_upper = st.linalg.eigvalsh(_t(a, device), UPLO="U")  # the bad entry is not in the triangle read
        assert np.isfinite(_host(w_upper)).all()


def test_eigh_gradient():
    a = _sym(4, (2,), seed=3)
    wl = RNG.standard_normal((2, 4))
    wv = RNG.standard_normal((2, 4, 4))

    def loss(x, lib=st, uplo="L"):
        w, V = lib.linalg.eigh(x, UPLO=uplo)
        return (w * lib.tensor(wl)).sum() + (V * V * lib.tensor(wv)).sum()  # invariant under column signs

    sym = lambda x: (x + x.mT) / 2  # noqa: E731
    x = _t(a, grad=True)
    assert gradcheck(lambda x: (lambda r: (r[0], r[1] * r[1]))(st.linalg.eigh(sym(x))), (x,))
    assert gradcheck(lambda x: st.linalg.eigvalsh(sym(x), UPLO="U"), (x,))
    torch = pytest.importorskip("torch")
    for uplo in ("L", "U"):
        xs, xt = _t(a + np.triu(RNG.standard_normal((4, 4)), 1), grad=True), None
        xt = torch.tensor(_host(xs), requires_grad=True)
        loss(xs, uplo=uplo).backward()
        loss(xt, torch, uplo).backward()
        np.testing.assert_allclose(_host(xs.grad), xt.grad.numpy(), rtol=1e-9, atol=1e-11)
        xs.grad = None
        xt.grad = None
        (st.linalg.eigvalsh(xs, uplo) * _t(wl)).sum().backward()
        (torch.linalg.eigvalsh(xt, uplo) * torch.tensor(wl)).sum().backward()
        np.testing.assert_allclose(_host(xs.grad), xt.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_eigh_errors():
    with pytest.raises(RuntimeError, match="linalg.eigh: The input tensor A must have at least 2 dimensions."):
        st.linalg.eigh(st.zeros(3))
    with pytest.raises(RuntimeError, match="linalg.eigh: A must be batches of square matrices, but they are 2 by 3 "
                                           "matrices"):
        st.linalg.eigvalsh(st.zeros(2, 3))
    with pytest.raises(NotImplementedError, match="\"linalg_eigh_cpu\" not implemented for 'Long'"):
        st.linalg.eigh(st.zeros(2, 2, dtype=st.int64))
    with pytest.raises(RuntimeError, match="Expected UPLO argument to be 'L' or 'U', but got X"):
        st.linalg.eigh(st.zeros(2, 2), UPLO="X")
    with pytest.raises(TypeError, match=r"linalg_eigvalsh\(\): argument 'input' \(position 1\) must be Tensor, "
                                        "not int"):
        st.linalg.eigvalsh(3)


# -- svd / svdvals ------------------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", SHAPES + [(3, 0), (2, 0, 4)])
@pytest.mark.parametrize("full_matrices", [True, False])
def test_svd_matches_numpy(device, shape, full_matrices):
    a = RNG.standard_normal(shape)
    U, S, Vh = st.linalg.svd(_t(a, device), full_matrices=full_matrices)
    m, n = shape[-2:]
    k = min(m, n)
    batch = shape[:-2]
    assert type(st.linalg.svd(_t(a, device))).__name__ == "linalg_svd"
    assert tuple(U.shape) == (*batch, m, m if full_matrices else k)
    assert tuple(S.shape) == (*batch, k) and tuple(Vh.shape) == (*batch, n if full_matrices else k, n)
    assert tuple(st.linalg.svdvals(_t(a, device)).shape) == (*batch, k)
    if device == "meta":
        return
    Uh, Sh, Vhh = _host(U), _host(S), _host(Vh)
    np.testing.assert_allclose(Sh, np.linalg.svd(a, compute_uv=False), atol=1e-12)
    np.testing.assert_allclose(_host(st.linalg.svdvals(_t(a, device))), Sh, atol=1e-13)
    np.testing.assert_allclose((Uh[..., :k] * Sh[..., None, :]) @ Vhh[..., :k, :], a, atol=1e-12)
    _orthonormal_columns(Uh, 1e-12)
    _orthonormal_columns(np.swapaxes(Vhh, -1, -2), 1e-12)


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_svd_float32_and_vectors_up_to_sign(device):
    a = RNG.standard_normal((3, 7, 5))
    U, S, Vh = st.linalg.svd(_t(a.astype(np.float32), device), full_matrices=False)
    assert U.dtype is st.float32
    tol = _tol("float32", device) * 5
    np.testing.assert_allclose(_host(S), np.linalg.svd(a, compute_uv=False), atol=tol)
    np.testing.assert_allclose(_host(U) @ (_host(S)[..., None] * _host(Vh)), a, atol=tol)
    u, _, vh = np.linalg.svd(a, full_matrices=False)
    U, S, Vh = st.linalg.svd(_t(a, device), full_matrices=False)
    eye = np.broadcast_to(np.eye(5), (3, 5, 5))
    np.testing.assert_allclose(np.abs(np.swapaxes(_host(U), -1, -2) @ u), eye, atol=1e-10)
    np.testing.assert_allclose(np.abs(_host(Vh) @ np.swapaxes(vh, -1, -2)), eye, atol=1e-10)


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_svd_ill_conditioned_and_rank_deficient(device):
    n = 24
    q1, _ = np.linalg.qr(np.random.default_rng(1).standard_normal((n, n)))
    q2, _ = np.linalg.qr(np.random.default_rng(2).standard_normal((n, n)))
    s = np.logspace(0, -6, n)  # condition number 1e6
    a = (q1 * s) @ q2.T
    got = _host(st.linalg.svdvals(_t(a, device)))
    # one-sided Jacobi keeps the small ones accurate (the eigenvalues of A^T A would lose ~1e-4 relative here)
    np.testing.assert_allclose(got, s, rtol=1e-8)
    np.testing.assert_allclose(got, np.linalg.svd(a, compute_uv=False), rtol=1e-8, atol=1e-15)
    low = RNG.standard_normal((2, 7, 2)) @ RNG.standard_normal((2, 2, 5))  # rank 2
    U, S, Vh = st.linalg.svd(_t(low, device))
    _orthonormal_columns(_host(U), 1e-12)  # the null-space columns are an orthonormal completion
    _orthonormal_columns(np.swapaxes(_host(Vh), -1, -2), 1e-12)
    np.testing.assert_allclose((_host(U)[..., :5] * _host(S)[..., None, :]) @ _host(Vh), low, atol=1e-12)
    assert np.all(_host(S)[..., 2:] < 1e-13)
    U, S, Vh = st.linalg.svd(st.zeros(3, 2, dtype=st.float64, device=device))
    np.testing.assert_array_equal(_host(S), [0, 0])
    _orthonormal_columns(_host(U), 0)


@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("n", [64, 200])
def test_svd_large_float64(device, n):
    a = np.random.default_rng(n).standard_normal((n, n - 3))
    U, S, Vh = st.linalg.svd(_t(a, device), full_matrices=False)
    np.testing.assert_allclose(_host(S), np.linalg.svd(a, compute_uv=False), atol=2e-16 * n * _host(S)[0])
    np.testing.assert_allclose(_host(U) @ (_host(S)[:, None] * _host(Vh)), a, atol=1e-15 * n)
    _orthonormal_columns(_host(U), 1e-15 * n)
    _orthonormal_columns(_host(Vh).T, 1e-15 * n)


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_svd_non_finite(device):
    nan = _t([[1.0, math.nan], [0.0, 1.0]], device)
    message = "linalg.svd: The algorithm failed to converge because the input matrix contained non-finite values."
    for fn in (st.linalg.svd, st.linalg.svdvals, st.linalg.pinv, st.linalg.matrix_rank, st.linalg.cond,
               lambda x: st.linalg.matrix_norm(x, 2)):
        with pytest.raises(RuntimeError, match=message):  # torch's CPU svd raises for NaN
            fn(nan)
    U, S, Vh = st.linalg.svd(_t([[[1.0, math.inf], [0.0, 1.0]], [[2.0, 0.0], [0.0, 1.0]]], device))
    assert np.isnan(_host(S)[0]).all() and np.isnan(_host(U)[0]).all() and np.isnan(_host(Vh)[0]).all()  # inf: NaN
    np.testing.assert_allclose(_host(S)[1], [2, 1])


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (3, 3)])
def test_svd_gradient(shape):
    a = RNG.standard_normal((2, *shape))
    k = min(shape)
    wu, wv = RNG.standard_normal((2, shape[0], k)), RNG.standard_normal((2, k, shape[1]))
    ws, wa = RNG.standard_normal((2, k)), RNG.standard_normal((2, *shape))

    def loss(x, lib=st, full=False):
        U, S, Vh = lib.linalg.svd(x, full_matrices=full)
        U, Vh = U[..., :k], Vh[..., :k, :]
        recon = (U * S.unsqueeze(-2)) @ Vh
        return (S * lib.tensor(ws)).sum() + (U * U * lib.tensor(wu)).sum() + (Vh * Vh * lib.tensor(wv)).sum() + \
            (recon * lib.tensor(wa)).sum()

    x = _t(a[0], grad=True)
    assert gradcheck(lambda x: (lambda r: (r.S, r.U * r.U, r.Vh * r.Vh))(st.linalg.svd(x, full_matrices=False)), (x,))
    assert gradcheck(st.linalg.svdvals, (x,))
    torch = pytest.importorskip("torch")
    for full in (False, True):
        xs, xt = _t(a, grad=True), torch.tensor(a, requires_grad=True)
        loss(xs, full=full).backward()
        loss(xt, torch, full).backward()
        np.testing.assert_allclose(_host(xs.grad), xt.grad.numpy(), rtol=1e-9, atol=1e-10)
    xs, xt = _t(a, grad=True), torch.tensor(a, requires_grad=True)
    (st.linalg.svdvals(xs) * _t(ws)).sum().backward()
    (torch.linalg.svdvals(xt) * torch.tensor(ws)).sum().backward()
    np.testing.assert_allclose(_host(xs.grad), xt.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_svd_errors():
    with pytest.raises(RuntimeError, match="linalg.svd: The input tensor A must have at least 2 dimensions."):
        st.linalg.svdvals(st.zeros(3))
    with pytest.raises(RuntimeError, match="linalg.svd: Expected a floating point or complex tensor as input. Got "
                                           "Long"):
        st.linalg.svd(st.zeros(2, 2, dtype=st.int64))
    with pytest.raises(NotImplementedError, match="\"linalg_svd_cpu\" not implemented for 'BFloat16'"):
        st.linalg.svd(st.zeros(2, 2, dtype=st.bfloat16))
    with pytest.raises(RuntimeError, match="keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER"):
        st.linalg.svd(st.zeros(2, 2), driver="gesvd")
    with pytest.raises(TypeError, match=r"linalg_svdvals\(\): argument 'A' \(position 1\) must be Tensor, not int"):
        st.linalg.svdvals(3)


# -- pinv / matrix_rank -------------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
def test_pinv_and_matrix_rank(device):
    full = RNG.standard_normal((2, 5, 3))
    low = RNG.standard_normal((2, 6, 2)) @ RNG.standard_normal((2, 2, 4))
    sym_low = low[:, :4, :] @ np.swapaxes(low[:, :4, :], -1, -2)  # 4 x 4, rank 2, symmetric
    cases = [(full, {}), (low, {}), (np.swapaxes(low, -1, -2), {}), (sym_low, {"hermitian": True}), (sym_low, {})]
    for a, kw in cases:
        P = st.linalg.pinv(_t(a, device), **kw)
        rank = st.linalg.matrix_rank(_t(a, device), **kw)
        assert tuple(P.shape) == (2, a.shape[-1], a.shape[-2]) and tuple(rank.shape) == (2,) and rank.dtype is st.int64
        if device != "meta":
            np.testing.assert_allclose(_host(P), np.linalg.pinv(a, hermitian=bool(kw)), atol=1e-10)
            np.testing.assert_array_equal(_host(rank), np.linalg.matrix_rank(a, hermitian=bool(kw)))
    assert tuple(st.linalg.pinv(st.zeros(2, 3, 0, device=device)).shape) == (2, 0, 3)
    assert tuple(st.linalg.matrix_rank(st.zeros(2, 3, 0, device=device)).shape) == (2,)
    if device == "meta":
        return
    d = _t(np.diag([1.0, 0.1, 0.01]), device)
    for kw, want in [({"atol": 0.05}, 2), ({"rtol": 0.05}, 2), ({"atol": 0.5, "rtol": 0.05}, 1), ({"atol": 0.001}, 3),
                     ({"atol": -1.0}, 3), ({"rtol": 0.2}, 1)]:
        assert int(st.linalg.matrix_rank(d, **kw).item()) == want, kw
        assert np.count_nonzero(_host(st.linalg.pinv(d, **kw))) == want, kw
    assert int(st.linalg.matrix_rank(d, 0.05).item()) == 2  # torch's positional tol is atol
    np.testing.assert_allclose(_host(st.linalg.pinv(d, 0.05)), np.diag([1.0, 10.0, 0.0]))  # positional rcond is rtol
    batch = _t(np.stack([np.eye(3), 2 * np.eye(3)]), device)
    np.testing.assert_array_equal(_host(st.linalg.matrix_rank(batch, atol=_t([0.5, 2.5], device))), [3, 0])


def test_pinv_gradient():
    a = RNG.standard_normal((2, 4, 3))
    w = RNG.standard_normal((2, 3, 4))
    s = _sym(3, (2,), seed=5)
    assert gradcheck(st.linalg.pinv, (_t(a[0], grad=True),))
    assert gradcheck(lambda x: st.linalg.pinv(x.mT), (_t(a[0], grad=True),))
    assert gradcheck(lambda x: st.linalg.pinv(x + x.mT, hermitian=True), (_t(s[0], grad=True),))
    torch = pytest.importorskip("torch")
    for arr, weight, kw in [(a, w, {}), (s, w[:, :, :3], {"hermitian": True})]:
        xs, xt = _t(arr, grad=True), torch.tensor(arr, requires_grad=True)
        (st.linalg.pinv(xs, **kw) * _t(weight)).sum().backward()
        (torch.linalg.pinv(xt, **kw) * torch.tensor(weight)).sum().backward()
        np.testing.assert_allclose(_host(xs.grad), xt.grad.numpy(), rtol=1e-8, atol=1e-10)


def test_pinv_and_matrix_rank_errors():
    with pytest.raises(RuntimeError, match=r"linalg.pinv\(Long\{\[2, 2\]\}\): expected a tensor with 2 or more "
                                           "dimensions"):
        st.linalg.pinv(st.zeros(2, 2, dtype=st.int64))
    with pytest.raises(RuntimeError, match=r"linalg.pinv\(Float\{\[3\]\}\): expected a tensor with 2 or more dimensions"):
        st.linalg.pinv(st.zeros(3))
    with pytest.raises(RuntimeError, match="linalg.eigh: A must be batches of square matrices, but they are 2 by 3"):
        st.linalg.pinv(st.zeros(2, 3), hermitian=True)
    with pytest.raises(RuntimeError, match="torch.linalg.matrix_rank: The input tensor input must have at least 2 dim"):
        st.linalg.matrix_rank(st.zeros(3))
    with pytest.raises(RuntimeError, match="This function doesn't handle types other than float and double"):
        st.linalg.matrix_rank(st.zeros(2, 2, dtype=st.int64))
    with pytest.raises(RuntimeError, match="linalg.eigh: A must be batches of square matrices, but they are 2 by 3"):
        st.linalg.matrix_rank(st.zeros(2, 3), hermitian=True)


# -- cond ---------------------------------------------------------------------------------------------
ORDS = [None, 2, -2, 1, -1, math.inf, -math.inf, "fro", "nuc"]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("p", ORDS)
def test_cond_matches_numpy(device, p):
    a = RNG.standard_normal((2, 4, 4))
    got = st.linalg.cond(_t(a, device), p)
    assert tuple(got.shape) == (2,) and got.dtype is st.float64
    if device == "meta":
        return
    np.testing.assert_allclose(_host(got), np.linalg.cond(a, p), rtol=1e-10)
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    value = _host(st.linalg.cond(_t(singular, device), p))
    if p in (None, 2, "nuc"):
        assert value > 1e15  # s_min is rounding noise, as in torch
    elif p == -2:
        assert value < 1e-15
    else:
        assert value == math.inf  # the exactly zero pivot: torch's inf
    if p in (None, 2, -2):  # the 2-norm condition number of non-square matrices too
        np.testing.assert_allclose(_host(st.linalg.cond(_t(a[:, :, :3], device), p)), np.linalg.cond(a[:, :, :3], p),
                                   rtol=1e-10)
    assert tuple(st.linalg.cond(st.zeros(2, 0, 0, device=device), p).shape) == (2,)


def test_cond_gradient_and_errors():
    a = RNG.standard_normal((3, 3))
    for p in ORDS:
        assert gradcheck(lambda x, p=p: st.linalg.cond(x, p), (_t(a, grad=True),)), p
    torch = pytest.importorskip("torch")
    for p in (None, -2, "nuc"):
        xs, xt = _t(a, grad=True), torch.tensor(a, requires_grad=True)
        st.linalg.cond(xs, p).backward()
        torch.linalg.cond(xt, p).backward()
        np.testing.assert_allclose(_host(xs.grad), xt.grad.numpy(), rtol=1e-9)


def test_cond_errors():
    with pytest.raises(RuntimeError, match="linalg.cond: The input tensor must have at least 2 dimensions."):
        st.linalg.cond(st.zeros(3))
    for p in (3, "foo"):
        with pytest.raises(ValueError, match=f"linalg.cond got an invalid norm type: {p}"):
            st.linalg.cond(st.eye(2), p)
    for p, label in [("fro", "fro"), (1, "1"), (1.0, "1.000000"), (math.inf, "inf"), ("nuc", "nuc")]:
        with pytest.raises(RuntimeError, match=rf"linalg.cond\(ord={label}\): A must be batches of square matrices, "
                                               "but they are 2 by 3 matrices"):
            st.linalg.cond(st.zeros(2, 3), p)
    assert np.isnan(_host(st.linalg.cond(st.zeros(2, 3))))  # 0 / 0, as torch
    for p, op in [("fro", "linalg.inv"), (None, "linalg.svd")]:
        with pytest.raises(RuntimeError, match=f"{op}: Expected a floating point or complex tensor as input. Got Long"):
            st.linalg.cond(st.eye(2, dtype=st.int64), p)


# -- matrix norms 2, -2, nuc --------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("ord", [2, -2, "nuc"])
@pytest.mark.parametrize("dim, keepdim", [((-2, -1), False), ((0, 2), True), ((2, 0), False), ((3, 1), True)])
def test_matrix_norm_singular_value_ords(device, ord, dim, keepdim):
    a = RNG.standard_normal((2, 3, 4, 5))
    got = st.linalg.matrix_norm(_t(a, device), ord, dim=dim, keepdim=keepdim)
    moved = np.moveaxis(a, dim, (-2, -1))
    want = np.linalg.norm(moved, ord, axis=(-2, -1))
    if keepdim:
        want = np.expand_dims(want, tuple(sorted(d % 4 for d in dim)))
    assert tuple(got.shape) == want.shape
    if device != "meta":
        np.testing.assert_allclose(_host(got), want, rtol=1e-12)
        want = np.linalg.norm(a[0, 0], ord)
        np.testing.assert_allclose(_host(st.linalg.norm(_t(a[0, 0], device), ord)), want, rtol=1e-12)


def test_matrix_norm_gradient_and_errors():
    a = RNG.standard_normal((2, 4, 3))
    for ord in (2, -2, "nuc"):
        assert gradcheck(lambda x, ord=ord: st.linalg.matrix_norm(x, ord), (_t(a[0], grad=True),))
    with pytest.raises(RuntimeError, match="linalg.matrix_norm: Low precision dtypes not supported. Got Half"):
        st.linalg.matrix_norm(st.zeros(2, 2, dtype=st.float16), 2)
    with pytest.raises(RuntimeError, match="linalg.matrix_norm: Expected a floating point or complex tensor as input. "
                                           "Got Long"):
        st.linalg.matrix_norm(st.zeros(2, 2, dtype=st.int64), "nuc")
    np.testing.assert_array_equal(_host(st.linalg.matrix_norm(st.zeros(2, 3, 0), "nuc")), [0, 0])
    torch = pytest.importorskip("torch")
    for ord in (2, -2, "nuc"):
        xs, xt = _t(a, grad=True), torch.tensor(a, requires_grad=True)
        st.linalg.matrix_norm(xs, ord).sum().backward()
        torch.linalg.matrix_norm(xt, ord).sum().backward()
        np.testing.assert_allclose(_host(xs.grad), xt.grad.numpy(), rtol=1e-9, atol=1e-12)
