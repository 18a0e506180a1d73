"""Complex matrices through strided.linalg on CUDA (Note [Complex linear algebra on CUDA]): the LU, triangular-solve
and Cholesky composites on the device, eigh / svd / QR on a host copy. Values and gradients against the CPU backend
(tests/backend/test_complex_linalg_cpu.py checks the CPU against LAPACK and finite differences), results on the
device, and real inputs still on the fused real kernels."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
import strided.cuda as cuda

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]

RNG = np.random.default_rng(3)
TOL = {np.complex64: 2e-4, np.complex128: 1e-10}


def _c(*shape, dtype=np.complex128):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


def _inputs(dtype):
    a = (_c(2, 5, 5, dtype=dtype) + 3 * np.eye(5)).astype(dtype)  # well conditioned
    b = _c(2, 5, 3, dtype=dtype)
    h = a @ np.conj(np.swapaxes(a, -1, -2)) + 5 * np.eye(5)  # Hermitian positive-definite
    return a, b, h.astype(dtype)


# each call's outputs are compared elementwise, so those with a phase freedom (eigenvectors, singular vectors, Q)
# are compared through what does not depend on it: those run on a host copy of the same LAPACK, which gives the
# same phases on both devices, and they are also compared directly
CALLS = {
    "solve": lambda a, b, h: st.linalg.solve(a, b),
    "solve_left_false": lambda a, b, h: st.linalg.solve(a, b.mT, left=False),
    "inv": lambda a, b, h: st.linalg.inv(a),
    "det": lambda a, b, h: st.linalg.det(a),
    "slogdet": lambda a, b, h: tuple(st.linalg.slogdet(a)),
    "logdet": lambda a, b, h: st.logdet(h),
    "lu_factor": lambda a, b, h: tuple(st.linalg.lu_factor(a)),
    "lu": lambda a, b, h: tuple(st.linalg.lu(a)),
    "lu_solve": lambda a, b, h: st.linalg.lu_solve(*st.linalg.lu_factor(a), b),
    "cholesky": lambda a, b, h: st.linalg.cholesky(h),
    "cholesky_upper": lambda a, b, h: st.linalg.cholesky(h, upper=True),
    "cholesky_solve": lambda a, b, h: st.cholesky_solve(b, st.linalg.cholesky(h)),
    "cholesky_inverse": lambda a, b, h: st.cholesky_inverse(st.linalg.cholesky(h)),
    "solve_triangular": lambda a, b, h: st.linalg.solve_triangular(a, b, upper=True),
    "solve_triangular_unit": lambda a, b, h: st.linalg.solve_triangular(a, b, upper=False, unitriangular=True),
    "eigh": lambda a, b, h: tuple(st.linalg.eigh(h)),
    "eigvalsh": lambda a, b, h: st.linalg.eigvalsh(h),
    "svd": lambda a, b, h: tuple(st.linalg.svd(b, full_matrices=False)),
    "svdvals": lambda a, b, h: st.linalg.svdvals(a),
    "qr": lambda a, b, h: tuple(st.linalg.qr(b)),
    "qr_complete": lambda a, b, h: tuple(st.linalg.qr(b, mode="complete")),
    "geqrf": lambda a, b, h: tuple(st.geqrf(b)),
    "householder_product": lambda a, b, h: st.linalg.householder_product(*st.geqrf(b)),
    "ormqr": lambda a, b, h: st.ormqr(*st.geqrf(a), b),
    "pinv": lambda a, b, h: st.linalg.pinv(b),
    "pinv_hermitian": lambda a, b, h: st.linalg.pinv(h, hermitian=True),
    "lstsq": lambda a, b, h: st.linalg.lstsq(a, b).solution,
    "matrix_rank": lambda a, b, h: st.linalg.matrix_rank(b),
    "cond": lambda a, b, h: st.linalg.cond(a),
    "cond_fro": lambda a, b, h: st.linalg.cond(a, "fro"),
    "matrix_norm_2": lambda a, b, h: st.linalg.matrix_norm(a, 2),
    "matrix_norm_nuc": lambda a, b, h: st.linalg.matrix_norm(a, "nuc"),
    "matrix_exp": lambda a, b, h: st.linalg.matrix_exp(a * 0.3),
    "matrix_power_neg": lambda a, b, h: st.linalg.matrix_power(a, -2),
    "eig": lambda a, b, h: st.linalg.eigvals(a),
}


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("name", sorted(CALLS))
def test_values_as_the_cpu(name, dtype):
    arrays = _inputs(dtype)
    cpu = CALLS[name](*(st.tensor(x) for x in arrays))
    gpu = CALLS[name](*(st.tensor(x, device="cuda") for x in arrays))
    cpu, gpu = (cpu, gpu) if isinstance(cpu, tuple) else ((cpu,), (gpu,))
    assert len(cpu) == len(gpu)
    for c, g in zip(cpu, gpu):
        assert g.device.type == "cuda"
        assert (tuple(g.shape), g.dtype) == (tuple(c.shape), c.dtype)
        want, got = c.numpy(), g.cpu().numpy()
        if want.dtype.kind in "iub":
            np.testing.assert_array_equal(got, want)
        else:
            tol = TOL[dtype]
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(1.0, float(np.abs(want).max(initial=0))))


@pytest.mark.parametrize("name", ["solve", "det", "inv", "svdvals", "eigvalsh", "qr", "cholesky", "pinv", "lstsq"])
def test_gradients_as_the_cpu(name):
    a, b, h = _inputs(np.complex128)
    losses = {
        "solve": lambda x: st.linalg.solve(x, st.tensor(b, device=x.device)).abs().sum(),
        "det": lambda x: st.linalg.det(x).abs().sum(),
        "inv": lambda x: (st.linalg.inv(x) * st.linalg.inv(x).conj()).real.sum(),
        "svdvals": lambda x: st.linalg.svdvals(x).sum(),
        "eigvalsh": lambda x: st.linalg.eigvalsh(x @ x.mH).pow(2).sum(),
        "qr": lambda x: st.linalg.qr(x)[1].abs().sum(),
        "cholesky": lambda x: st.linalg.cholesky(x @ x.mH + 5 * st.eye(5, device=x.device)).abs().sum(),
        "pinv": lambda x: st.linalg.pinv(x).abs().sum(),
        "lstsq": lambda x: st.linalg.lstsq(x, st.tensor(b, device=x.device)).solution.abs().sum(),
    }
    grads = []
    for device in ("cpu", "cuda"):
        x = st.tensor(a, device=device, requires_grad=True)
        losses[name](x).backward()
        assert x.grad.device.type == device
        grads.append(x.grad.cpu().numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-9, atol=1e-9)


def test_real_input_keeps_the_real_kernels():
    a = st.tensor(np.eye(4) * 2 + 0.1, device="cuda")
    np.testing.assert_allclose(st.linalg.inv(a).cpu().numpy(), np.linalg.inv(np.eye(4) * 2 + 0.1), rtol=1e-12)
    w, v = st.linalg.eigh(a)
    assert w.dtype is st.float64 and v.dtype is st.float64


def test_failures_reported_as_on_the_cpu():
    singular = np.zeros((2, 3, 3), np.complex128)
    singular[0] = np.eye(3)
    not_pd = -np.eye(3, dtype=np.complex128)
    for device in ("cpu", "cuda"):
        info = st.linalg.inv_ex(st.tensor(singular, device=device)).info
        np.testing.assert_array_equal(info.cpu().numpy(), [0, 1])
        with pytest.raises(st.linalg.LinAlgError, match="not positive-definite"):
            st.linalg.cholesky(st.tensor(not_pd, device=device))
