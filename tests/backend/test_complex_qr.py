"""Complex QR on the CPU (``linalg.qr`` and ``geqrf`` through LAPACK's complex routines; the complex gradient of Note
[QR gradient] in ``strided/linalg/qr.py``): factors against NumPy's LAPACK, the gradient against central
differences, and both against torch where it is installed."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st

RNG = np.random.default_rng(5)
SHAPES = [(5, 3), (3, 5), (4, 4), (2, 5, 3), (2, 3, 5)]


def _complex(shape):
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_factors_are_lapacks(shape, mode):
    a = _complex(shape)
    Q, R = st.linalg.qr(st.tensor(a), mode=mode)
    if mode == "r":
        np.testing.assert_allclose(R.numpy(), np.linalg.qr(a, mode="r"), atol=1e-12)
        return
    q, r = np.linalg.qr(a, mode=mode)
    np.testing.assert_allclose(Q.numpy(), q, atol=1e-12)
    np.testing.assert_allclose(R.numpy(), r, atol=1e-12)
    np.testing.assert_allclose((Q @ R).numpy(), a, atol=1e-12)
    assert Q.dtype is st.complex128 and R.dtype is st.complex128


def test_geqrf_and_complex64():
    a = _complex((4, 3))
    h, tau = np.linalg.qr(a, mode="raw")
    out = st.geqrf(st.tensor(a))
    np.testing.assert_allclose(out.a.numpy(), h.T, atol=1e-12)
    np.testing.assert_allclose(out.tau.numpy(), tau, atol=1e-12)
    Q, R = st.linalg.qr(st.tensor(a, dtype=st.complex64))
    assert Q.dtype is st.complex64 and np.abs((Q @ R).numpy() - a).max() < 1e-5
    empty = st.linalg.qr(st.zeros(3, 0, dtype=st.complex64), mode="complete")
    assert empty.Q.tolist() == np.eye(3).tolist() and empty.R.shape == (3, 0) and empty.Q.dtype is st.complex64


def _loss(Q, R, W1, W2):
    return (Q.real * W1).sum() + (Q.imag * W1 * W1).sum() + (R.abs() * W2).sum() + (R.imag * W2).sum()


@pytest.mark.parametrize("shape", SHAPES)
def test_gradient_against_central_differences(shape):
    a = _complex(shape)
    k = min(shape[-2:])
    W1 = st.tensor(RNG.standard_normal(shape[:-1] + (k,)))
    W2 = st.tensor(RNG.standard_normal(shape[:-2] + (k, shape[-1])))
    A = st.tensor(a, requires_grad=True)
    _loss(*st.linalg.qr(A), W1, W2).backward()
    grad = A.grad.numpy()
    for _ in range(3):
        E = _complex(shape)
        h = 1e-6

        def loss_at(x):
            return _loss(*st.linalg.qr(st.tensor(x)), W1, W2).item()

        numeric = (loss_at(a + h * E) - loss_at(a - h * E)) / (2 * h)
        analytic = float(np.sum(grad.real * E.real + grad.imag * E.imag))  # torch's convention: dL/dRe + i dL/dIm
        assert abs(numeric - analytic) < 1e-6 * max(1.0, abs(analytic))


def test_against_torch():
    torch = pytest.importorskip("torch")
    for shape in SHAPES:
        a = _complex(shape)
        k = min(shape[-2:])
        w1, w2 = RNG.standard_normal(shape[:-1] + (k,)), RNG.standard_normal(shape[:-2] + (k, shape[-1]))
        mine, theirs = st.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
        Q, R = st.linalg.qr(mine)
        tQ, tR = torch.linalg.qr(theirs)
        np.testing.assert_allclose(Q.detach().numpy(), tQ.detach().numpy(), atol=1e-12)
        _loss(Q, R, st.tensor(w1), st.tensor(w2)).backward()
        _loss(tQ, tR, torch.tensor(w1), torch.tensor(w2)).backward()
        np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), atol=1e-12)


def _reflector_product(h, tau):
    """LAPACK's Q from geqrf's (h, tau), as the product of its reflectors, in NumPy."""
    m = h.shape[0]
    V = np.tril(h[:, :tau.shape[0]], -1) + np.eye(m, tau.shape[0])
    Q = np.eye(m, dtype=h.dtype)
    for i in range(tau.shape[0]):
        v = V[:, i:i + 1]
        Q = Q @ (np.eye(m) - tau[i] * v @ v.conj().T)
    return Q


def test_householder_product_and_ormqr():
    a = _complex((6, 4))
    g = st.geqrf(st.tensor(a))
    Q = _reflector_product(g.a.numpy(), g.tau.numpy())
    np.testing.assert_allclose(st.linalg.householder_product(g.a, g.tau).numpy(), Q[:, :4], atol=1e-12)
    np.testing.assert_allclose(st.orgqr(g.a, g.tau).numpy(), Q[:, :4], atol=1e-12)
    C, D = _complex((6, 3)), _complex((3, 6))
    for left, transpose, other, want in ((True, False, C, Q @ C), (True, True, C, Q.conj().T @ C),
                                         (False, False, D, D @ Q), (False, True, D, D @ Q.conj().T)):
        got = st.ormqr(g.a, g.tau, st.tensor(other), left=left, transpose=transpose).numpy()
        np.testing.assert_allclose(got, want, atol=1e-12, err_msg=f"left={left} transpose={transpose}")


def test_ormqr_gradient_against_central_differences():
    a = _complex((5, 3))
    g = st.geqrf(st.tensor(a))
    h0, tau0, C = g.a.numpy(), g.tau.numpy(), _complex((5, 2))
    W = st.tensor(RNG.standard_normal((5, 2)))

    def loss(h, tau):
        out = st.ormqr(h, tau, st.tensor(C), transpose=True)
        return (out.real * W).sum() + (out.imag * W * W).sum()

    H, T = st.tensor(h0, requires_grad=True), st.tensor(tau0, requires_grad=True)
    loss(H, T).backward()
    for _ in range(2):
        Eh, Et = _complex(h0.shape), _complex(tau0.shape)
        step = 1e-6
        numeric = (loss(st.tensor(h0 + step * Eh), st.tensor(tau0 + step * Et)).item()
                   - loss(st.tensor(h0 - step * Eh), st.tensor(tau0 - step * Et)).item()) / (2 * step)
        analytic = float(np.sum(H.grad.numpy().real * Eh.real + H.grad.numpy().imag * Eh.imag)
                         + np.sum(T.grad.numpy().real * Et.real + T.grad.numpy().imag * Et.imag))
        assert abs(numeric - analytic) < 1e-6 * max(1.0, abs(analytic))


def test_householder_family_against_torch():
    torch = pytest.importorskip("torch")
    a, C = _complex((6, 4)), _complex((6, 3))
    g, tg = st.geqrf(st.tensor(a)), torch.geqrf(torch.tensor(a))
    np.testing.assert_allclose(st.linalg.householder_product(g.a, g.tau).numpy(),
                               torch.linalg.householder_product(tg.a, tg.tau).numpy(), atol=1e-12)
    for transpose in (False, True):
        np.testing.assert_allclose(st.ormqr(g.a, g.tau, st.tensor(C), transpose=transpose).numpy(),
                                   torch.ormqr(tg.a, tg.tau, torch.tensor(C), transpose=transpose).numpy(), atol=1e-12)
