"""strided.linalg's derived functions (``derived.py``: multi_dot, vander, matrix_exp, householder_product, tensorinv,
tensorsolve) and the torch.* forms (``legacy.py``: det, logdet, slogdet, inverse, svd, cholesky_solve,
cholesky_inverse, pinverse, matrix_power, matrix_exp, lu_unpack, triangular_solve) with their Tensor methods, on every
available backend: values against NumPy, gradients against torch (when installed) and gradcheck, torch's errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import strided as st
from strided.autograd import gradcheck
from strided.testing import available_devices

DEVICES = available_devices()
DATA_DEVICES = [d for d in DEVICES if d != "meta"]
RNG = np.random.default_rng(41)


def _t(a, device="cpu", grad=False):
    return st.tensor(np.asarray(a), device=device, requires_grad=grad)


def _host(t):
    return t.detach().cpu().numpy()


def _spd(n, batch=(), seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((*batch, n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def _expm(a):
    """exp(A) by eigendecomposition of a diagonalizable A, in NumPy (complex arithmetic, real result)."""
    w, v = np.linalg.eig(a)
    return np.real(v @ np.diag(np.exp(w)) @ np.linalg.inv(v))


# -- multi_dot -------------------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shapes", [[(3, 4), (4, 5)], [(4,), (4, 6), (6, 2), (2,)],
                                    [(2, 30), (30, 3), (3, 40), (40, 1)], [(5,), (5,)],
                                    [(1, 7), (7, 9), (9, 3), (3, 8), (8,)]])
def test_multi_dot_matches_numpy(device, shapes):
    arrays = [RNG.standard_normal(s) for s in shapes]
    got = st.linalg.multi_dot([_t(a, device) for a in arrays])
    want = np.linalg.multi_dot(arrays)
    assert tuple(got.shape) == np.shape(want)
    if device != "meta":
        np.testing.assert_allclose(_host(got), want, rtol=1e-10, atol=1e-10)


def test_multi_dot_gradient():
    arrays = [RNG.standard_normal(s) for s in [(3,), (3, 4), (4, 2)]]
    assert gradcheck(lambda *ts: st.linalg.multi_dot(list(ts)), tuple(_t(a, grad=True) for a in arrays))


@pytest.mark.parametrize("tensors, message", [
    ([(2, 3)], "expected at least 2 tensors but got 1"),
    ([(2, 3), (4, 5)], r"tensors 0 and 1 with shapes \[2, 3\] and \[4, 5\] cannot be multiplied"),
    ([(2, 2, 3), (3, 5)], "the first tensor must be 1D or 2D but got 3D"),
    ([(2, 3), (3, 3, 3), (3,)], "tensor 1 must be 2D but got 3D"),
    ([(2, 3), (3, 2, 2)], "the last tensor must be 1D or 2D but got 3D"),
])
def test_multi_dot_errors(tensors, message):
    with pytest.raises(RuntimeError, match=message):
        st.linalg.multi_dot([st.zeros(s) for s in tensors])
    message = "all tensors must have be the same dtype but tensor 0 is float and tensor 1 double"
    with pytest.raises(RuntimeError, match=message):
        st.linalg.multi_dot([st.zeros(2, 3), st.zeros(3, 2, dtype=st.float64)])


# -- vander ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
def test_vander(device):
    x = np.array([[1.0, 2.0, -3.0], [0.5, 0.0, 4.0]])
    got = st.linalg.vander(_t(x, device))
    assert tuple(got.shape) == (2, 3, 3)
    if device != "meta":
        np.testing.assert_allclose(_host(got), np.stack([np.vander(r, increasing=True) for r in x]))
        ints = st.linalg.vander(_t(np.array([1, 2, 3]), device), N=4)
        assert ints.dtype is st.int64
        np.testing.assert_array_equal(_host(ints), np.vander([1, 2, 3], 4, increasing=True))
    with pytest.raises(RuntimeError, match="N must be greater than 1."):
        st.linalg.vander(_t(x, device), N=1)
    with pytest.raises(RuntimeError, match="but got Bool"):
        st.linalg.vander(st.tensor([True, False], device=device))


def test_vander_gradient():
    assert gradcheck(lambda x: st.linalg.vander(x, N=4), (_t(RNG.standard_normal(3), grad=True),))


# -- matrix_exp ------------------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("scale", [0.1, 1.0, 20.0])  # no squaring, a few, many
def test_matrix_exp_matches_eigendecomposition(device, scale):
    a = RNG.standard_normal((3, 5, 5)) * scale / 5
    got = st.linalg.matrix_exp(_t(a, device))
    assert tuple(got.shape) == (3, 5, 5)
    if device != "meta":
        want = np.stack([_expm(m) for m in a])
        np.testing.assert_allclose(_host(got), want, rtol=1e-9 * max(1.0, scale), atol=1e-10 * np.abs(want).max())
        f32 = st.linalg.matrix_exp(_t(a.astype(np.float32), device))
        np.testing.assert_allclose(_host(f32), want, rtol=2e-4 * max(1.0, scale), atol=1e-5 * np.abs(want).max())


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_matrix_exp_special_cases(device):
    np.testing.assert_allclose(_host(st.linalg.matrix_exp(st.zeros(2, 3, 3, dtype=st.float64, device=device))),
                               np.broadcast_to(np.eye(3), (2, 3, 3)))
    np.testing.assert_allclose(_host(st.matrix_exp(_t([[2.0]], device))), [[np.exp(2.0)]])
    rot = np.array([[0.0, -np.pi], [np.pi, 0.0]])  # exp of a rotation generator: -I
    np.testing.assert_allclose(_host(_t(rot, device).matrix_exp()), -np.eye(2), atol=1e-12)
    assert st.linalg.matrix_exp(st.zeros(0, 3, 3, device=device)).shape == (0, 3, 3)


def test_matrix_exp_gradient_and_errors():
    a = _t(RNG.standard_normal((2, 3, 3)), grad=True)
    assert gradcheck(st.linalg.matrix_exp, (a,))
    with pytest.raises(RuntimeError, match="matrix_exp: A must be batches of square matrices, but they are 2 by 3"):
        st.linalg.matrix_exp(st.zeros(2, 3))
    with pytest.raises(RuntimeError, match="linalg.matrix_exp: The input tensor A must have at least 2 dimensions."):
        st.linalg.matrix_exp(st.tensor(1.0))
    with pytest.raises(RuntimeError, match="matrix_exp: Expected a floating point or complex tensor as input. Got L"):
        st.linalg.matrix_exp(st.tensor([[1, 2], [3, 4]]))


def test_matrix_exp_gradient_matches_torch():
    torch = pytest.importorskip("torch")
    a = RNG.standard_normal((4, 4)) * 2
    g = RNG.standard_normal((4, 4))
    s = _t(a, grad=True)
    st.linalg.matrix_exp(s).backward(_t(g))
    t = torch.tensor(a, requires_grad=True)
    torch.linalg.matrix_exp(t).backward(torch.tensor(g))
    np.testing.assert_allclose(_host(s.grad), t.grad.numpy(), rtol=1e-9, atol=1e-10)


# -- householder_product ---------------------------------------------------------------------------
def _orgqr(a, tau):
    m, n = a.shape
    q = np.eye(m)
    for i in range(len(tau)):
        v = np.zeros(m)
        v[i] = 1.0
        v[i + 1:] = a[i + 1:, i]
        q = q @ (np.eye(m) - tau[i] * np.outer(v, v))
    return q[:, :n]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("m, n, k", [(5, 3, 3), (4, 4, 2), (6, 2, 0), (1, 1, 1)])
def test_householder_product(device, m, n, k):
    a, tau = RNG.standard_normal((2, m, n)), RNG.standard_normal((2, k))
    got = st.linalg.householder_product(_t(a, device), _t(tau, device))
    assert tuple(got.shape) == (2, m, n)
    if device != "meta":
        want = np.stack([_orgqr(a[i], tau[i]) for i in range(2)])
        np.testing.assert_allclose(_host(got), want, rtol=1e-10, atol=1e-12)


def test_householder_product_gradient_and_errors():
    a, tau = _t(RNG.standard_normal((4, 3)), grad=True), _t(RNG.standard_normal(2), grad=True)
    assert gradcheck(st.linalg.householder_product, (a, tau))
    op = "torch.linalg.householder_product: "
    for args, message in [
        ((st.zeros(3), st.zeros(1)), "input must have at least 2 dimensions."),
        ((st.zeros(2, 3), st.zeros(1)), r"input.shape\[-2\] must be greater than or equal to input.shape\[-1\]"),
        ((st.zeros(3, 2), st.zeros(3)), r"input.shape\[-1\] must be greater than or equal to tau.shape\[-1\]"),
        ((st.zeros(3, 2), st.zeros(2, 1)), "Expected tau to have one dimension less than input, but got tau.ndim equal "
                                           "to 2 and input.ndim is equal to 2"),
        ((st.zeros(2, 3, 2), st.zeros(3, 2)),
         r"Expected batch dimensions of tau to be equal to input.shape\[:-2\], but got \[3\]"),
        ((st.zeros(3, 2), st.zeros(2, dtype=st.float64)), "tau dtype Double does not match input dtype Float"),
    ]:
        with pytest.raises(RuntimeError, match=op + message):
            st.linalg.householder_product(*args)


# -- tensorinv / tensorsolve -----------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
def test_tensorinv_and_tensorsolve(device):
    a = RNG.standard_normal((4, 6, 8, 3)) + 0.0
    a.reshape(24, 24)[np.diag_indices(24)] += 8.0
    inv = st.linalg.tensorinv(_t(a, device), ind=2)
    assert tuple(inv.shape) == (8, 3, 4, 6)
    b = RNG.standard_normal((2, 3, 6)) + 0.0
    b.reshape(6, 6)[np.diag_indices(6)] += 4.0
    rhs = RNG.standard_normal((2, 3))
    x = st.linalg.tensorsolve(_t(b, device), _t(rhs, device))
    assert tuple(x.shape) == (6,)
    moved = st.linalg.tensorsolve(_t(np.moveaxis(b, 2, 0), device), _t(rhs, device), dims=(0,))
    if device != "meta":
        np.testing.assert_allclose(_host(inv), np.linalg.tensorinv(a, ind=2), rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(_host(x), np.linalg.tensorsolve(b, rhs), rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(_host(moved), _host(x), rtol=1e-9, atol=1e-12)
    with pytest.raises(RuntimeError, match=r"prod\(self.shape\[ind:\]\) == prod\(self.shape\[:ind\]\), but got 5 != 6"):
        st.linalg.tensorinv(st.zeros(2, 3, 5, device=device), ind=2)
    with pytest.raises(RuntimeError, match="Expected a strictly positive integer for 'ind', but got 0"):
        st.linalg.tensorinv(st.zeros(2, 3, 6, device=device), ind=0)
    with pytest.raises(RuntimeError, match=r"prod\(self.shape\[other.ndim:\]\) == prod\(self.shape\[:other.ndim\]\), "
                                           "but got 5 != 6"):
        st.linalg.tensorsolve(st.zeros(2, 3, 5, device=device), st.zeros(2, 3, device=device))


# -- torch.* forms and Tensor methods --------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
def test_det_logdet_slogdet_inverse(device):
    a = RNG.standard_normal((3, 4, 4)) + 0.0
    a[2] = np.diag([-1.0, 2.0, 3.0, 0.5])  # negative determinant: logdet is nan
    t = _t(a, device)
    results = [st.det(t), t.det(), st.logdet(t), t.logdet(), st.inverse(t), t.inverse(), *st.slogdet(t)]
    assert type(st.slogdet(t)).__name__ == "slogdet" and st.slogdet(t)._fields == ("sign", "logabsdet")
    assert [tuple(r.shape) for r in results] == [(3,)] * 4 + [(3, 4, 4)] * 2 + [(3,)] * 2
    if device == "meta":
        return
    det = np.linalg.det(a)
    np.testing.assert_allclose(_host(st.det(t)), det, rtol=1e-10)
    np.testing.assert_allclose(_host(t.det()), det, rtol=1e-10)
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(_host(st.logdet(t)), np.log(det), rtol=1e-10)
    assert np.isnan(_host(t.logdet())[2])
    sign, logabs = st.slogdet(t)
    np.testing.assert_allclose(_host(sign), np.sign(det))
    np.testing.assert_allclose(_host(logabs), np.log(np.abs(det)), rtol=1e-10)
    np.testing.assert_allclose(_host(t.inverse()), np.linalg.inv(a), rtol=1e-9, atol=1e-12)
    assert _host(st.logdet(st.zeros(2, 2, dtype=st.float64, device=device))) == -np.inf


def test_logdet_errors_and_gradient():
    with pytest.raises(RuntimeError, match="logdet: A must be batches of square matrices, but they are 2 by 3"):
        st.logdet(st.zeros(2, 3))
    with pytest.raises(RuntimeError, match="logdet: Expected a floating point or complex tensor as input. Got Long"):
        st.logdet(st.tensor([[1, 2], [3, 4]]))
    assert gradcheck(st.logdet, (_t(_spd(3), grad=True),))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
def test_svd_legacy_form(device, shape):
    a = RNG.standard_normal(shape)
    U, S, V = st.svd(_t(a, device))
    k = min(shape[-2:])
    assert tuple(U.shape) == (*shape[:-1], k) and tuple(V.shape) == (*shape[:-2], shape[-1], k)
    Uf, _, Vf = _t(a, device).svd(some=False)
    assert tuple(Uf.shape[-2:]) == (shape[-2],) * 2 and tuple(Vf.shape[-2:]) == (shape[-1],) * 2
    Uz, Sz, Vz = st.svd(_t(a, device), compute_uv=False)
    assert tuple(Uz.shape[-2:]) == (shape[-2],) * 2 and tuple(Vz.shape[-2:]) == (shape[-1],) * 2
    if device == "meta":
        return
    np.testing.assert_allclose(_host(U) @ (_host(S)[..., None] * np.swapaxes(_host(V), -1, -2)), a, atol=1e-10)
    np.testing.assert_allclose(_host(S), np.linalg.svd(a, compute_uv=False), rtol=1e-10)
    np.testing.assert_allclose(_host(Sz), _host(S), rtol=1e-10)
    assert not _host(Uz).any() and not _host(Vz).any()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_and_inverse(device, upper):
    a = _spd(4, (2,), seed=3)
    L = np.linalg.cholesky(a)
    factor = np.swapaxes(L, -1, -2) if upper else L
    b = RNG.standard_normal((2, 4, 3))
    x = st.cholesky_solve(_t(b, device), _t(factor, device), upper=upper)
    inv = _t(factor, device).cholesky_inverse(upper)
    assert tuple(x.shape) == (2, 4, 3) and tuple(inv.shape) == (2, 4, 4)
    if device != "meta":
        np.testing.assert_allclose(_host(x), np.linalg.solve(a, b), rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(_host(inv), np.linalg.inv(a), rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(_host(_t(b, device).cholesky_solve(_t(factor, device), upper)), _host(x))


def test_cholesky_solve_errors_and_gradient():
    L = np.linalg.cholesky(_spd(3))
    with pytest.raises(RuntimeError, match="Incompatible matrix sizes for cholesky_solve: each A matrix is 3 by 3 "
                                           "but each b matrix is 2 by 2"):
        st.cholesky_solve(st.zeros(2, 2, dtype=st.float64), _t(L))
    with pytest.raises(RuntimeError, match="Expected b and A to have the same dtype, but found b of type Float and "
                                           "A of type Double instead."):
        st.cholesky_solve(st.zeros(3, 2), _t(L))
    with pytest.raises(RuntimeError, match="b should have at least 2 dimensions, but has 1 dimensions instead"):
        st.cholesky_solve(st.zeros(3, dtype=st.float64), _t(L))
    with pytest.raises(RuntimeError, match="cholesky_inverse: A must be batches of square matrices, but they are 3"):
        st.cholesky_inverse(st.zeros(3, 2))
    assert gradcheck(lambda b, f: st.cholesky_solve(b, f.tril()), (_t(RNG.standard_normal((3, 2)), grad=True),
                                                                   _t(L, grad=True)))


@pytest.mark.parametrize("device", DEVICES)
def test_pinverse_matrix_power_lu_unpack(device):
    a = RNG.standard_normal((5, 3))
    p = st.pinverse(_t(a, device))
    sq = RNG.standard_normal((2, 3, 3)) + 3 * np.eye(3)
    powers = [_t(sq, device).matrix_power(n) for n in (0, 1, 3, -2)]
    LU, piv = st.linalg.lu_factor(_t(sq, device))
    P, L, U = st.lu_unpack(LU, piv)
    assert tuple(p.shape) == (3, 5) and type(st.lu_unpack(LU, piv)).__name__ == "lu_unpack"
    assert [tuple(t.shape) for t in (P, L, U)] == [(2, 3, 3)] * 3
    if device == "meta":
        return
    np.testing.assert_allclose(_host(p), np.linalg.pinv(a), rtol=1e-9, atol=1e-12)
    for n, got in zip((0, 1, 3, -2), powers):
        np.testing.assert_allclose(_host(got), np.linalg.matrix_power(sq, n), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(_host(P) @ _host(L) @ _host(U), sq, rtol=1e-10, atol=1e-12)
    assert np.allclose(np.triu(_host(L), 1), 0) and np.allclose(np.tril(_host(U), -1), 0)
    np.testing.assert_array_equal(np.sort(_host(P).sum(-1)), np.ones((2, 3)))  # a permutation matrix


def test_lu_unpack_matches_torch_and_errors():
    torch = pytest.importorskip("torch")
    a = RNG.standard_normal((2, 5, 3))
    LU, piv = torch.linalg.lu_factor(torch.tensor(a))
    got = st.lu_unpack(st.tensor(LU.numpy()), st.tensor(piv.numpy()))
    for g, w in zip(got, torch.lu_unpack(LU, piv)):
        np.testing.assert_allclose(_host(g), w.numpy(), rtol=1e-12, atol=1e-14)
    P, L, U = st.lu_unpack(st.tensor(LU.numpy()), st.tensor(piv.numpy()), unpack_data=False)
    assert L.numel() == 0 and U.numel() == 0 and P.shape == (2, 5, 5)
    with pytest.raises(RuntimeError, match="LU_pivots is expected to be a contiguous tensor of torch.int32 dtype"):
        st.lu_unpack(st.zeros(3, 3), st.tensor([1, 2, 3]))


def test_triangular_solve_is_deprecated_and_solves():
    a = np.triu(RNG.standard_normal((4, 4))) + 4 * np.eye(4)
    b = RNG.standard_normal((4, 2))
    st.set_warn_always(True)  # an earlier test may have had the once-per-process warning
    with pytest.warns(UserWarning, match="triangular_solve is deprecated in favor of torch.linalg.solve_triangular"):
        x, coefficient = st.triangular_solve(_t(b), _t(a))
    st.set_warn_always(False)
    np.testing.assert_allclose(_host(x), np.linalg.solve(a, b), rtol=1e-10)
    np.testing.assert_array_equal(_host(coefficient), a)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once per process, as torch's TORCH_WARN_ONCE
        xt, _ = _t(b).triangular_solve(_t(a), transpose=True)
    np.testing.assert_allclose(_host(xt), np.linalg.solve(a.T, b), rtol=1e-10)
    xl, _ = st.triangular_solve(_t(b), _t(a.T), upper=False, unitriangular=True)
    np.testing.assert_allclose(_host(xl), np.linalg.solve(np.tril(a.T, -1) + np.eye(4), b), rtol=1e-10)


def test_matrix_sqrth_values_gradient_and_errors_match_torch():
    """Note [matrix_sqrth]: X X = A, torch's values and symmetrized gradient, and a gradient at repeated eigenvalues
    (the identity), where one composed from eigh's would divide by zero."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 5, 5))
    a = a @ np.swapaxes(a, -1, -2) + np.eye(5)
    g = rng.standard_normal((2, 5, 5))
    A, T = st.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    X, tX = st.linalg.matrix_sqrth(A), torch.linalg.matrix_sqrth(T)
    np.testing.assert_allclose(X.detach().numpy(), tX.detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose((X @ X).detach().numpy(), a, rtol=1e-12, atol=1e-12)
    X.backward(st.tensor(g))
    tX.backward(torch.tensor(g))
    np.testing.assert_allclose(A.grad.numpy(), T.grad.numpy(), rtol=1e-10, atol=1e-12)
    eye = st.eye(3, dtype=st.float64, requires_grad=True)
    st.linalg.matrix_sqrth(eye * 4).sum().backward()
    np.testing.assert_allclose(eye.grad.numpy(), np.ones((3, 3)))  # torch's too: d sqrt(4 I) / dA = 1 / (2 + 2) * 4
    assert st.autograd.gradcheck(lambda v: st.linalg.matrix_sqrth(v @ v.mT + st.eye(3, dtype=st.float64)),
                                 (st.tensor(rng.standard_normal((3, 3)), requires_grad=True),))
    lower = a[0].copy()
    lower[0, 4] = 100.0  # only the lower triangle is read
    np.testing.assert_allclose(st.linalg.matrix_sqrth(st.tensor(lower)).numpy(),
                               torch.linalg.matrix_sqrth(torch.tensor(lower)).numpy(), rtol=1e-12, atol=1e-12)
    assert st.linalg.matrix_sqrth(st.tensor([[1.0, 0.0], [0.0, -4.0]])).tolist() == [[1.0, 0.0], [0.0, 0.0]]
    for bad, exc, words in ((st.ones(3, 4), RuntimeError, "A must be batches of square matrices, but they are 3 by 4"),
                            (st.ones(3), RuntimeError, "The input tensor A must have at least 2 dimensions"),
                            (st.ones(3, 3, dtype=st.int64), RuntimeError,
                             "Expected a floating point or complex tensor as input. Got Long"),
                            (st.ones(3, 3, dtype=st.float16), RuntimeError,
                             "Low precision dtypes not supported. Got Half")):
        with pytest.raises(exc, match=f"linalg.matrix_sqrth: {words}"):
            st.linalg.matrix_sqrth(bad)


@pytest.mark.parametrize("device", DEVICES)
def test_matrix_sqrth_on_every_backend(device):
    a = np.random.default_rng(1).standard_normal((3, 4, 4))
    a = a @ np.swapaxes(a, -1, -2) + np.eye(4)
    X = st.linalg.matrix_sqrth(st.tensor(a, device=device))
    assert X.device.type == device and X.shape == (3, 4, 4)
    if device != "meta":
        np.testing.assert_allclose((X @ X).cpu().numpy(), a, rtol=1e-10, atol=1e-10)


def test_polar_values_gradients_and_errors_match_torch():
    """Note [Polar decomposition]: A = U H, torch's values and gradients, also at an orthogonal A (repeated singular
    values, where svd's gradient divides by zero)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    orthogonal = np.linalg.qr(rng.standard_normal((3, 3)))[0]
    for a in (rng.standard_normal((5, 3)), rng.standard_normal((2, 4, 4)), orthogonal):
        A, T = st.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
        (U, H), (tU, tH) = st.linalg.polar(A), torch.linalg.polar(T)
        np.testing.assert_allclose(U.detach().numpy(), tU.detach().numpy(), atol=1e-12)
        np.testing.assert_allclose(H.detach().numpy(), tH.detach().numpy(), atol=1e-12)
        np.testing.assert_allclose((U @ H).detach().numpy(), a, atol=1e-12)
        gu, gh = rng.standard_normal(U.shape), rng.standard_normal(H.shape)
        ((U * st.tensor(gu)).sum() + (H * st.tensor(gh)).sum()).backward()
        ((tU * torch.tensor(gu)).sum() + (tH * torch.tensor(gh)).sum()).backward()
        np.testing.assert_allclose(A.grad.numpy(), T.grad.numpy(), rtol=1e-9, atol=1e-11)
    assert gradcheck(lambda x: st.linalg.polar(x), (st.tensor(rng.standard_normal((4, 3)), requires_grad=True),))
    assert gradcheck(lambda x: st.linalg.polar(x).H, (st.tensor(rng.standard_normal((3, 3)), requires_grad=True),))
    out = (st.empty(0, dtype=st.float64), st.empty(0, dtype=st.float64))
    assert st.linalg.polar(st.tensor(rng.standard_normal((3, 2))), out=out)[0] is out[0] and out[1].shape == (2, 2)
    for bad, exc, words in ((st.ones(3, 4), RuntimeError,
                             "input must have at least as many rows as columns, but got 3 by 4 matrices"),
                            (st.ones(3), RuntimeError, "The input tensor A must have at least 2 dimensions"),
                            (st.ones(3, 3, dtype=st.int64), RuntimeError,
                             "Expected a floating point or complex tensor as input. Got Long")):
        with pytest.raises(exc, match=f"linalg.polar: {words}"):
            st.linalg.polar(bad)
    with pytest.raises(NotImplementedError, match="\"linalg_svd_cpu\" not implemented for 'Half'"):
        st.linalg.polar(st.ones(3, 3, dtype=st.float16))


@pytest.mark.parametrize("device", DEVICES)
def test_polar_on_every_backend(device):
    a = np.random.default_rng(3).standard_normal((2, 5, 3))
    U, H = st.linalg.polar(st.tensor(a, device=device))
    assert U.device.type == device and U.shape == (2, 5, 3) and H.shape == (2, 3, 3)
    if device != "meta":
        np.testing.assert_allclose((U @ H).cpu().numpy(), a, atol=1e-10)
        np.testing.assert_allclose((U.mT @ U).cpu().numpy(), np.broadcast_to(np.eye(3), (2, 3, 3)), atol=1e-10)
