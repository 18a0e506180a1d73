"""linalg.eig / eigvals on CUDA tensors (Note [eig on the host]): the CPU's results on the device, torch's layout,
gradients equal to the CPU's, torch's errors naming the device."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
import strided.cuda as cuda

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]

DTYPES = [st.float32, st.float64, st.complex64, st.complex128]


def _matrix(shape, d, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if d.is_complex:
        a = a + 1j * rng.standard_normal(shape)
    return st.from_numpy(np.ascontiguousarray(a.astype(d.numpy_dtype)))


@pytest.mark.parametrize("d", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("shape", [(5, 5), (2, 3, 4, 4), (0, 2, 2), (1, 1)])
def test_eig_on_cuda_equals_cpu(d, shape):
    A = _matrix(shape, d)
    w, V = st.linalg.eig(A)
    cw, cV = st.linalg.eig(A.cuda())
    assert cw.device.type == "cuda" and cV.device.type == "cuda"
    assert (cw.dtype, cV.dtype, cV.shape, cV.stride()) == (w.dtype, V.dtype, V.shape, V.stride())
    # the same host routine on the same values: equal, phases included
    np.testing.assert_array_equal(cw.cpu().numpy(), w.numpy())
    np.testing.assert_array_equal(cV.cpu().numpy(), V.numpy())
    np.testing.assert_array_equal(st.linalg.eigvals(A.cuda()).cpu().numpy(), st.linalg.eigvals(A).numpy())


def test_noncontiguous_input():
    A = _matrix((3, 6, 6), st.float64).mT
    np.testing.assert_array_equal(st.linalg.eig(A.cuda())[1].cpu().numpy(), st.linalg.eig(A)[1].numpy())


@pytest.mark.parametrize("d", [st.float64, st.complex128], ids=lambda d: d.name)
def test_gradient_on_cuda_equals_cpu(d):
    A = _matrix((2, 4, 4), d, seed=4)
    grads = []
    for x in (A.clone(), A.cuda()):
        x.requires_grad_()
        w, V = st.linalg.eig(x)
        (w.abs().sum() + V.abs().sum()).backward()
        assert x.grad.device == x.device and x.grad.dtype is d
        grads.append(x.grad.cpu().numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-10, atol=1e-10)


def test_errors_name_the_device():
    with pytest.raises(NotImplementedError, match="\"linalg_eig_out_cuda\" not implemented for 'Half'"):
        st.linalg.eig(st.eye(3, dtype=st.float16, device="cuda"))
    with pytest.raises(RuntimeError, match="Unknown Complex ScalarType for Long"):
        st.linalg.eigvals(st.eye(3, dtype=st.int64, device="cuda"))
    with pytest.raises(RuntimeError, match="should not contain infs or NaNs"):
        st.linalg.eig(st.full((2, 2), float("nan"), device="cuda"))
