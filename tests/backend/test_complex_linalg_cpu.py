"""Complex matrices through the LU, triangular-solve, Cholesky, eigh and SVD families on the CPU (Note [Complex
linear algebra on the CPU]): values against NumPy's LAPACK, gradients by finite differences (strided.autograd.gradcheck,
complex inputs through Wirtinger derivatives, as torch's), torch's refusal of phase-dependent losses, and the
shapes on Meta (CUDA: tests/cuda/test_complex_linalg_cuda.py).
"""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
from strided.autograd import gradcheck

RNG = np.random.default_rng(7)


def _c(*shape, dtype=np.complex128):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


def _well_conditioned(n, batch=(), dtype=np.complex128):
    return (_c(*batch, n, n, dtype=dtype) + 3 * np.eye(n)).astype(dtype)


def _hpd(n, batch=(), dtype=np.complex128):
    a = _c(*batch, n, n, dtype=dtype)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dtype)


def _t(a, grad=False):
    return st.tensor(a, requires_grad=grad)


@pytest.mark.parametrize("dtype, tol", [(np.complex128, 1e-10), (np.complex64, 1e-4)])
def test_values_match_lapack(dtype, tol):
    A, B = _well_conditioned(5, (2,), dtype), _c(2, 5, 3, dtype=dtype)
    np.testing.assert_allclose(st.linalg.solve(_t(A), _t(B)).numpy(), np.linalg.solve(A, B), rtol=tol, atol=tol)
    np.testing.assert_allclose(st.linalg.inv(_t(A)).numpy(), np.linalg.inv(A), rtol=tol, atol=tol)
    np.testing.assert_allclose(st.linalg.det(_t(A)).numpy(), np.linalg.det(A), rtol=tol)
    sign, logabsdet = st.linalg.slogdet(_t(A))
    ref_sign, ref_log = np.linalg.slogdet(A)
    assert sign.dtype is getattr(st, np.dtype(dtype).name) and logabsdet.dtype.is_floating_point
    np.testing.assert_allclose(sign.numpy(), ref_sign, rtol=tol)
    np.testing.assert_allclose(logabsdet.numpy(), ref_log, rtol=tol)
    np.testing.assert_allclose(st.logdet(_t(A)).numpy(), np.log(ref_sign) + ref_log, rtol=tol)
    H = _hpd(5, (2,), dtype)
    np.testing.assert_allclose(st.linalg.cholesky(_t(H)).numpy(), np.linalg.cholesky(H), rtol=tol, atol=tol)
    U = st.linalg.cholesky(_t(H), upper=True).numpy()
    np.testing.assert_allclose(np.conj(np.swapaxes(U, -1, -2)) @ U, H, rtol=tol, atol=tol * 10)
    L = np.linalg.cholesky(H)
    np.testing.assert_allclose(st.cholesky_solve(_t(B), _t(L)).numpy(), np.linalg.solve(H, B), rtol=tol * 10,
                               atol=tol * 10)
    np.testing.assert_allclose(st.cholesky_inverse(_t(L[0])).numpy(), np.linalg.inv(H[0]), rtol=tol * 10,
                               atol=tol * 10)


def test_lu_pivots_compare_re_plus_im_as_lapack():
    """izamax picks the largest |re| + |im|: 2 + 2j (4) over 3 (3), where the modulus would keep 3."""
    A = np.array([[3, 1], [2 + 2j, 1j]], dtype=np.complex128)
    LU, pivots = st.linalg.lu_factor(_t(A))
    assert pivots.tolist() == [2, 2]
    P, L, U = st.linalg.lu(_t(A))
    np.testing.assert_allclose(P.numpy() @ L.numpy() @ U.numpy(), A, atol=1e-14)
    assert np.allclose(np.tril(L.numpy(), -1) + np.triu(U.numpy()), LU.numpy())


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_lu_solve_modes(left, adjoint):
    A = _well_conditioned(4)
    B = _c(4, 3) if left else _c(3, 4)
    op = np.conj(A.T) if adjoint else A
    expected = np.linalg.solve(op, B) if left else np.linalg.solve(op.T, B.T).T
    LU, pivots = st.linalg.lu_factor(_t(A))
    np.testing.assert_allclose(st.linalg.lu_solve(LU, pivots, _t(B), left=left, adjoint=adjoint).numpy(), expected,
                               atol=1e-12)


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("left", [True, False])
def test_solve_triangular_values(upper, left):
    A = _well_conditioned(4)
    A = np.triu(A) if upper else np.tril(A)
    B = _c(4, 2) if left else _c(2, 4)
    expected = np.linalg.solve(A, B) if left else np.linalg.solve(A.T, B.T).T
    np.testing.assert_allclose(st.linalg.solve_triangular(_t(A), _t(B), upper=upper, left=left).numpy(), expected,
                               atol=1e-12)


_GRADS = {
    "solve": (lambda a, b: st.linalg.solve(a, b), lambda: (_well_conditioned(3), _c(3, 2))),
    "solve_right": (lambda a, b: st.linalg.solve(a, b, left=False), lambda: (_well_conditioned(3), _c(2, 3))),
    "inv": (lambda a: st.linalg.inv(a), lambda: (_well_conditioned(3),)),
    "det": (lambda a: st.linalg.det(a), lambda: (_well_conditioned(3, (2,)),)),
    "slogdet": (lambda a: st.linalg.slogdet(a), lambda: (_well_conditioned(3),)),
    "logdet": (lambda a: st.logdet(a), lambda: (_well_conditioned(3),)),
    "matrix_power": (lambda a: st.linalg.matrix_power(a, -2), lambda: (_well_conditioned(3),)),
    "lu_factor": (lambda a: st.linalg.lu_factor(a)[0], lambda: (_well_conditioned(3),)),
    "lu_tall": (lambda a: st.linalg.lu(a)[1:], lambda: (_c(4, 3),)),
    "lu_wide": (lambda a: st.linalg.lu(a)[1:], lambda: (_c(3, 4),)),
    "lu_solve_adjoint": (lambda a, b: st.linalg.lu_solve(*st.linalg.lu_factor(a), b, adjoint=True),
                         lambda: (_well_conditioned(3), _c(3, 2))),
    "lu_solve_right_adjoint": (lambda a, b: st.linalg.lu_solve(*st.linalg.lu_factor(a), b, left=False, adjoint=True),
                               lambda: (_well_conditioned(3), _c(2, 3))),
    "solve_triangular": (lambda a, b: st.linalg.solve_triangular(a, b, upper=True),
                         lambda: (np.triu(_well_conditioned(3)), _c(3, 2))),
    "solve_triangular_right_unit": (lambda a, b: st.linalg.solve_triangular(a, b, upper=False, left=False,
                                                                            unitriangular=True),
                                    lambda: (np.tril(_well_conditioned(3)), _c(2, 3))),
    # Cholesky reads one triangle; torch's gradient is the symmetrized one, so the check goes through A + A^H
    "cholesky": (lambda a: st.linalg.cholesky(a + a.mH), lambda: (_hpd(3) / 2,)),
    "cholesky_upper": (lambda a: st.linalg.cholesky(a + a.mH, upper=True), lambda: (_hpd(3) / 2,)),
    "cholesky_solve": (lambda b, l: st.cholesky_solve(b, l), lambda: (_c(3, 2), np.linalg.cholesky(_hpd(3)))),
    "cholesky_inverse": (lambda l: st.cholesky_inverse(l, upper=True),
                         lambda: (np.conj(np.linalg.cholesky(_hpd(3))).T,)),
}


@pytest.mark.parametrize("name", sorted(_GRADS))
def test_complex_gradients(name):
    fn, make = _GRADS[name]
    inputs = tuple(_t(a, grad=True) for a in make())
    assert gradcheck(fn, inputs)


def test_real_inputs_unchanged():
    A = st.tensor([[2.0, 1.0], [1.0, 3.0]], dtype=st.float64)
    assert st.linalg.det(A).item() == pytest.approx(5.0)


# the shapes and dtypes of complex results on Meta (which used to refuse them) are the CPU's
_META_CALLS = {
    "solve": lambda a, b, h: st.linalg.solve(a, b), "inv": lambda a, b, h: st.linalg.inv(a),
    "det": lambda a, b, h: st.linalg.det(a), "slogdet": lambda a, b, h: st.linalg.slogdet(a),
    "lu_factor": lambda a, b, h: st.linalg.lu_factor(a), "cholesky": lambda a, b, h: st.linalg.cholesky(h),
    "eigh": lambda a, b, h: st.linalg.eigh(h), "eigvalsh": lambda a, b, h: st.linalg.eigvalsh(h),
    "svd": lambda a, b, h: st.linalg.svd(a), "svd_full": lambda a, b, h: st.linalg.svd(b),
    "svdvals": lambda a, b, h: st.linalg.svdvals(b), "qr": lambda a, b, h: st.linalg.qr(b),
    "qr_complete": lambda a, b, h: st.linalg.qr(b, mode="complete"), "qr_r": lambda a, b, h: st.linalg.qr(b, mode="r"),
    "geqrf": lambda a, b, h: st.geqrf(b), "pinv": lambda a, b, h: st.linalg.pinv(b),
    "lstsq": lambda a, b, h: st.linalg.lstsq(a, a), "matrix_rank": lambda a, b, h: st.linalg.matrix_rank(b),
    "cond": lambda a, b, h: st.linalg.cond(a), "cond_fro": lambda a, b, h: st.linalg.cond(a, "fro"),
    "norm_2": lambda a, b, h: st.linalg.matrix_norm(b, 2), "matrix_exp": lambda a, b, h: st.linalg.matrix_exp(a),
    "householder_product": lambda a, b, h: st.linalg.householder_product(*st.geqrf(b)),
    "solve_triangular": lambda a, b, h: st.linalg.solve_triangular(a, b, upper=True),
}


@pytest.mark.parametrize("name", sorted(_META_CALLS))
def test_meta_shapes_as_cpu(name):
    arrays = (_well_conditioned(4, (2,)), _c(2, 4, 3), _hpd(4, (2,)))
    cpu = _META_CALLS[name](*(st.tensor(x) for x in arrays))
    meta = _META_CALLS[name](*(st.tensor(x).to("meta") for x in arrays))
    cpu, meta = (cpu, meta) if isinstance(cpu, tuple) else ((cpu,), (meta,))
    assert [(tuple(t.shape), t.dtype) for t in meta] == [(tuple(t.shape), t.dtype) for t in cpu]
    assert all(t.device.type == "meta" for t in meta)


def test_cond_of_complex_matrices():
    """``norm(A) * norm(inv(A))`` for the non-SVD orders, real-valued; inf for a singular matrix (torch's values)."""
    A = _well_conditioned(4, (2,))
    A[1] = 0
    for p in ("fro", 1, -1, np.inf, -np.inf):
        got = st.linalg.cond(st.tensor(A), p)
        assert got.dtype is st.float64
        norm = "fro" if p == "fro" else p
        want = np.linalg.norm(A[0], norm) * np.linalg.norm(np.linalg.inv(A[0]), norm)
        assert got[0].item() == pytest.approx(want, rel=1e-10)
        assert got[1].item() == np.inf


# -- eigh and svd (zheevd, zgesdd) ---------------------------------------------------------------------------------
@pytest.mark.parametrize("upper", [False, True])
def test_eigh_values_and_reconstruction(upper):
    A = _c(2, 4, 4)
    w, V = st.linalg.eigh(_t(A), UPLO="U" if upper else "L")
    H = np.triu(A, 1) if upper else np.tril(A, -1)
    H = H + np.conj(np.swapaxes(H, -1, -2)) + np.real(np.diagonal(A, 0, -2, -1))[..., None] * np.eye(4)
    assert w.dtype is st.float64 and V.dtype is st.complex128
    np.testing.assert_allclose(w.numpy(), np.linalg.eigvalsh(H), atol=1e-12)
    np.testing.assert_allclose((V.numpy() * w.numpy()[..., None, :]) @ np.conj(np.swapaxes(V.numpy(), -1, -2)), H,
                               atol=1e-12)
    np.testing.assert_allclose(st.linalg.eigvalsh(_t(A), UPLO="U" if upper else "L").numpy(), w.numpy(), atol=1e-12)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 3)])
def test_svd_values_and_reconstruction(shape):
    A = _c(*shape)
    U, S, Vh = st.linalg.svd(_t(A), full_matrices=False)
    assert S.dtype is st.float64
    np.testing.assert_allclose(S.numpy(), np.linalg.svd(A, compute_uv=False), atol=1e-12)
    np.testing.assert_allclose((U.numpy() * S.numpy()[..., None, :]) @ Vh.numpy(), A, atol=1e-12)
    full = st.linalg.svd(_t(A))
    k = min(shape[-2:])
    gram = np.conj(np.swapaxes(full.U.numpy(), -1, -2)) @ full.U.numpy()
    np.testing.assert_allclose(gram, np.broadcast_to(np.eye(shape[-2]), gram.shape), atol=1e-12)
    np.testing.assert_allclose(full.S.numpy(), S.numpy(), atol=1e-12)
    np.testing.assert_allclose(np.abs(full.Vh.numpy()[..., :k, :]), np.abs(Vh.numpy()), atol=1e-12)


def test_svd_family_values():
    A = _c(4, 3)
    np.testing.assert_allclose(st.linalg.pinv(_t(A)).numpy(), np.linalg.pinv(A), atol=1e-12)
    np.testing.assert_allclose(st.pinverse(_t(A)).numpy(), np.linalg.pinv(A), atol=1e-12)
    Hm = A @ np.conj(A.T)  # rank 3 of 4
    np.testing.assert_allclose(st.linalg.pinv(_t(Hm), hermitian=True).numpy(), np.linalg.pinv(Hm), atol=1e-10)
    assert st.linalg.matrix_rank(_t(Hm)).item() == 3 and st.linalg.matrix_rank(_t(Hm), hermitian=True).item() == 3
    s = np.linalg.svd(A, compute_uv=False)
    assert st.linalg.matrix_norm(_t(A), "nuc").item() == pytest.approx(s.sum())
    assert st.linalg.matrix_norm(_t(A), 2).item() == pytest.approx(s[0])
    assert st.linalg.matrix_norm(_t(A), -2).item() == pytest.approx(s[-1])
    assert st.linalg.cond(_t(A)).item() == pytest.approx(s[0] / s[-1])


_SPECTRAL_GRADS = {
    # losses that do not see the vectors' phases (torch's gradients require it, as checked below)
    "eigh": (lambda a: st.linalg.eigh(a + a.mH)[0], lambda: (_c(3, 3),)),
    "eigh_projector": (lambda a: (lambda w, V: (V * w.unsqueeze(-2)) @ V.mH)(*st.linalg.eigh(a + a.mH)),
                       lambda: (_c(3, 3),)),
    "eigvalsh": (lambda a: st.linalg.eigvalsh(a + a.mH, UPLO="U"), lambda: (_c(2, 3, 3),)),
    "svdvals": (lambda a: st.linalg.svdvals(a), lambda: (_c(4, 3),)),
    "svd_product_tall": (lambda a: (lambda U, S, Vh: U @ Vh)(*st.linalg.svd(a, full_matrices=False)),
                         lambda: (_c(4, 3),)),
    "svd_product_wide": (lambda a: (lambda U, S, Vh: (U * S.unsqueeze(-2)) @ Vh)(*st.linalg.svd(a, False)),
                         lambda: (_c(2, 4),)),
    "pinv": (lambda a: st.linalg.pinv(a), lambda: (_c(4, 3),)),
    "nuclear_norm": (lambda a: st.linalg.matrix_norm(a, "nuc"), lambda: (_c(3, 3),)),
}


@pytest.mark.parametrize("name", sorted(_SPECTRAL_GRADS))
def test_spectral_gradients(name):
    fn, make = _SPECTRAL_GRADS[name]
    assert gradcheck(fn, tuple(_t(a, grad=True) for a in make()))


def test_phase_dependent_losses_are_refused_as_torch():
    a = _t(_c(3, 3), grad=True)
    w, V = st.linalg.eigh(a)
    with pytest.raises(RuntimeError, match="linalg_eigh_backward: The eigenvectors in the complex case are specified "
                                           "up to multiplication by e\\^\\{i phi\\}"):
        V.real.sum().backward()
    U, S, Vh = st.linalg.svd(_t(_c(3, 3), grad=True))
    with pytest.raises(RuntimeError, match="svd_backward: The singular vectors in the complex case are specified"):
        U.real.sum().backward()


def test_polar_lstsq_and_matrix_exp_values():
    A = _c(4, 3)
    U, H = st.linalg.polar(_t(A))
    np.testing.assert_allclose(U.numpy() @ H.numpy(), A, atol=1e-12)
    np.testing.assert_allclose(H.numpy(), np.conj(H.numpy().T), atol=1e-12)
    B = _c(4, 2)
    expected = np.linalg.lstsq(A, B, rcond=None)[0]
    for driver in ("gels", "gelsy", "gelsd", "gelss"):
        np.testing.assert_allclose(st.linalg.lstsq(_t(A), _t(B), driver=driver).solution.numpy(), expected,
                                   atol=1e-12)
    residuals = st.linalg.lstsq(_t(A), _t(B), driver="gelsd").residuals
    assert residuals.dtype is st.float64
    np.testing.assert_allclose(residuals.numpy(), np.linalg.lstsq(A, B, rcond=None)[1], rtol=1e-10)
    M = _c(3, 3)
    w, V = np.linalg.eig(M)
    np.testing.assert_allclose(st.linalg.matrix_exp(_t(M)).numpy(), (V * np.exp(w)) @ np.linalg.inv(V), atol=1e-10)


_MORE_GRADS = {
    "polar": (lambda a: st.linalg.polar(a), lambda: (_c(4, 3),)),
    "lstsq_gels": (lambda a, b: st.linalg.lstsq(a, b, driver="gels").solution, lambda: (_c(4, 3), _c(4, 2))),
    "lstsq_gelsd_residuals": (lambda a, b: st.linalg.lstsq(a, b, driver="gelsd")[:2], lambda: (_c(4, 3), _c(4, 2))),
    "matrix_exp": (lambda a: st.linalg.matrix_exp(a), lambda: (_c(3, 3),)),
}


@pytest.mark.parametrize("name", sorted(_MORE_GRADS))
def test_more_complex_gradients(name):
    fn, make = _MORE_GRADS[name]
    assert gradcheck(fn, tuple(_t(a, grad=True) for a in make()))


def test_matrix_sqrth_and_empty_slogdet():
    H = _hpd(3)
    X = st.linalg.matrix_sqrth(_t(H)).numpy()
    np.testing.assert_allclose(X @ X, H, atol=1e-12)
    np.testing.assert_allclose(X, np.conj(X.T), atol=1e-12)
    assert gradcheck(lambda a: st.linalg.matrix_sqrth(a + a.mH), (_t(_hpd(3) / 2, grad=True),))
    sign, logabsdet = st.linalg.slogdet(st.ones(0, 0, dtype=st.complex64))
    assert sign.dtype is st.complex64 and logabsdet.dtype is st.float32 and logabsdet.item() == 0.0


@pytest.mark.parametrize("driver", ["gels", "gelsy", "gelsd", "gelss"])
@pytest.mark.parametrize("shape", [(2, 3), (4, 3)])
def test_lstsq_real_outputs_of_complex_input(driver, shape):
    """residuals and singular_values are real for complex A, the empty ones too (torch's float32 for complex64)."""
    A = _c(*shape, dtype=np.complex64)
    out = st.linalg.lstsq(st.tensor(A), st.tensor(A), driver=driver)
    assert out.residuals.dtype is st.float32 and out.singular_values.dtype is st.float32
    if shape[0] > shape[1] and driver != "gelsy":
        want = np.sum(np.abs(A @ np.linalg.lstsq(A, A, rcond=None)[0] - A) ** 2, axis=0)
        np.testing.assert_allclose(out.residuals.numpy(), want, atol=1e-4)
