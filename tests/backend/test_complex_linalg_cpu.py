"""Complex matrices through the LU, triangular-solve and Cholesky families on the CPU (Note [Complex linear algebra
on the CPU]): values against NumPy's LAPACK, gradients by finite differences (strided.autograd.gradcheck, complex
inputs through Wirtinger derivatives, as torch's), and the CUDA-side refusal where the kernels are real.
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


def test_real_inputs_unchanged_and_other_devices_refuse():
    A = st.tensor([[2.0, 1.0], [1.0, 3.0]], dtype=st.float64)
    assert st.linalg.det(A).item() == pytest.approx(5.0)
    z = st.eye(3, dtype=st.complex128, device="meta")
    with pytest.raises(NotImplementedError, match="\"linalg_solve_meta\" not implemented for 'ComplexDouble'"):
        st.linalg.solve(z, z)
    with pytest.raises(NotImplementedError, match="\"lu_meta\" not implemented for 'ComplexDouble'"):
        st.linalg.lu_factor(z)
