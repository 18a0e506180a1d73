"""The fixes found by running torch's OpInfo / ModuleInfo samples through strided (tests/backend/
test_opinfo_sample_fixes.py) hold on CUDA as on the CPU: the composites they changed run the same ops there; the
complex in-place forms and splits run on CUDA; complex LU / Cholesky stay CPU-only and CUDA refuses them in torch's
words (Note [Complex linear algebra on the CPU])."""

from __future__ import annotations

import math

import numpy as np
import pytest

import strided as st
import strided.cuda as cuda

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]

L = st.int64

CALLS = {
    "addmv float, complex-with-zero factor": lambda d: st.addmv(st.ones(2, device=d), st.ones(2, 2, device=d),
                                                                st.ones(2, device=d), beta=1 + 0j, alpha=1.5),
    "addbmm zero rows": lambda d: st.addbmm(st.ones(0, 10, device=d), st.ones(5, 0, 5, device=d),
                                            st.ones(5, 5, 10, device=d)),
    "addr bool": lambda d: st.addr(st.tensor([[True, False]], device=d), st.tensor([True, False], device=d),
                                   st.tensor([False, True], device=d), beta=0, alpha=5),
    "addr mixed": lambda d: st.addr(st.ones(2, 2, device=d), st.ones(2, dtype=L, device=d), st.ones(2, device=d)),
    "logit crossed eps": lambda d: st.logit(st.tensor([0.1, 0.5, 0.7, math.nan], device=d), eps=0.6),
    "circular pad": lambda d: st.nn.functional.pad(st.arange(12.0, device=d).reshape(1, 1, 3, 4), (-1, 1, 1, -1),
                                                   mode="circular"),
    "complex logspace": lambda d: st.logspace(-3, 2, 2, dtype=st.complex64, device=d),
    "quantile 0-dim keepdim": lambda d: st.quantile(st.tensor(1.5, device=d), 0.5, dim=0, keepdim=True),
    "vector_norm 0-dim keepdim": lambda d: st.linalg.vector_norm(st.tensor(1.5, device=d), 6, dim=0, keepdim=True),
    "masked_select 0-dim": lambda d: st.masked_select(st.tensor(1.5, device=d), st.tensor(True, device=d)),
    "tensordot size-1": lambda d: st.tensordot(st.arange(6.0, device=d).reshape(2, 3),
                                               st.arange(4.0, device=d).reshape(1, 4), dims=([0], [0])),
    "vander 0-dim": lambda d: st.linalg.vander(st.tensor(2.0, device=d), N=3),
    "sum_to_size int": lambda d: st.tensor(3, dtype=st.int8, device=d).sum_to_size(()),
    "flip(dims=)": lambda d: st.arange(6.0, device=d).reshape(2, 3).flip(dims=(0,)),
    "float(memory_format)": lambda d: st.ones(2, 3, 4, 5, dtype=L, device=d).float(memory_format=st.channels_last),
    "unsafe_chunk complex": lambda d: st.unsafe_chunk(st.tensor([1 + 2j, 3 - 1j, 2j], device=d), 2)[0],
    "combinations complex": lambda d: st.combinations(st.tensor([1 + 2j, 3 - 1j, 2j], device=d)),
    "index_add_ complex": lambda d: st.zeros(2, 3, dtype=st.complex64, device=d).index_add_(
        1, st.tensor([0, 2, 0], device=d), st.full((2, 3), 1 + 2j, dtype=st.complex64, device=d), alpha=2),
    "scatter_add_ complex": lambda d: st.zeros(2, 3, dtype=st.complex64, device=d).scatter_add_(
        1, st.tensor([[0, 0, 2], [1, 1, 1]], device=d), st.full((2, 3), 1 - 1j, dtype=st.complex64, device=d)),
    "renorm_ complex": lambda d: st.tensor([[1 + 2j, 3 - 1j], [0.5j, 2]], device=d).renorm_(2, 0, 1.5),
    "t_ complex": lambda d: st.tensor([[1 + 2j, 3 - 1j]], device=d).t_(),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_matches_the_cpu(name):
    want = CALLS[name]("cpu")
    got = CALLS[name]("cuda")
    assert got.device.type == "cuda" and got.dtype is want.dtype and tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(np.asarray(got.cpu()), np.asarray(want), rtol=1e-6, equal_nan=True)


def test_gradients_match_the_cpu():
    def grads(d):
        x = st.tensor([[0.0, 1.0, 2.0], [3.0, 1.0, 2.0]], dtype=st.float64, device=d, requires_grad=True)
        st.linalg.norm(x, -1, dim=1).sum().backward()
        a = st.tensor([[-2.23606797749979, -2.2360679774997894, -0.4472135954999579],
                       [0.2360679774997897, -2.449489742783178, -2.4494897427831783],
                       [0.0, 0.2134217652833884, 3.286335345030997]], dtype=st.float64, device=d, requires_grad=True)
        tau = st.tensor([1.8944271909999157, 1.912870929175277, 0.0], dtype=st.float64, device=d, requires_grad=True)
        st.ormqr(a, tau, st.eye(3, dtype=st.float64, device=d)).sum().backward()
        m = st.nn.BatchNorm1d(5).to(d)
        e = st.ones(0, 5, 9, device=d, requires_grad=True)
        m(e).sum().backward()
        return [x.grad, a.grad, tau.grad, m.running_mean, m.weight.grad]

    for got, want in zip(grads("cuda"), grads("cpu")):
        assert got.device.type == "cuda"
        np.testing.assert_allclose(np.asarray(got.cpu()), np.asarray(want), rtol=1e-10, atol=1e-12)


# Complex linear algebra ran on the CPU only and CUDA refused it in torch's words; it now runs on CUDA too (Note
# [Complex linear algebra on CUDA]): the calls that were refused give the CPU's values
_COMPLEX_LINALG = {
    "solve": lambda z: st.linalg.solve(z, z), "det": lambda z: st.linalg.det(z),
    "cholesky": lambda z: st.linalg.cholesky(z @ z.mH), "lu_factor": lambda z: st.linalg.lu_factor(z)[0],
    "solve_triangular": lambda z: st.linalg.solve_triangular(z, z, upper=True),
    "eigvalsh": lambda z: st.linalg.eigvalsh(z @ z.mH), "svdvals": lambda z: st.linalg.svdvals(z),
    "pinv": lambda z: st.linalg.pinv(z), "nuclear_norm": lambda z: st.linalg.matrix_norm(z, "nuc"),
    "polar": lambda z: st.linalg.polar(z)[1], "matrix_exp": lambda z: st.linalg.matrix_exp(z),
    "lstsq": lambda z: st.linalg.lstsq(z, z).solution,
}


@pytest.mark.parametrize("name", sorted(_COMPLEX_LINALG))
def test_complex_linear_algebra_runs_on_cuda_as_on_the_cpu(name):
    z = st.tensor([[2 + 1j, 0.5, 0], [0.25j, 3 - 1j, 1], [0, 1 + 1j, 4]], dtype=st.complex64)
    want = _COMPLEX_LINALG[name](z)
    got = _COMPLEX_LINALG[name](z.to("cuda"))
    assert got.device.type == "cuda" and got.dtype is want.dtype
    np.testing.assert_allclose(np.asarray(got.cpu()), np.asarray(want), rtol=1e-4, atol=1e-5)


def test_integer_gemm_refuses_on_cuda_as_torch():
    """torch's CUDA GEMMs have no integer kernels; the typed beta / alpha of the CPU test do not change that."""
    with pytest.raises(NotImplementedError, match="\"addmm_cuda\" not implemented for 'Long'"):
        st.addmv(st.ones(2, dtype=L, device="cuda"), st.ones(2, 2, dtype=L, device="cuda"),
                 st.ones(2, dtype=L, device="cuda"), beta=2.5, alpha=1.5)


@pytest.mark.parametrize("name", ["logical_and_", "logical_or_", "logical_xor_", "logical_not_"])
def test_inplace_truth_values_of_complex_tensors_match_the_cpu(name):
    zs = [1 + 1j, 0j, 2, complex(-0.0, 0.0)]
    for other in ([1, 0, 1, 0], [0j, 1j, 0, 0]):
        args = () if name == "logical_not_" else (st.tensor(other),)
        want = getattr(st.tensor(zs), name)(*args)
        got = getattr(st.tensor(zs, device="cuda"), name)(*(a.cuda() for a in args))
        assert got.device.type == "cuda" and got.dtype is st.complex64
        np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())


MASKED = {
    "sum": lambda x, m: st.masked.sum(x, 1, mask=m), "mean": lambda x, m: st.masked.mean(x, 0, mask=m),
    "amax": lambda x, m: st.masked.amax(x, 1, mask=m), "argmin": lambda x, m: st.masked.argmin(x, 1, mask=m),
    "median": lambda x, m: st.masked.median(x, 1, mask=m), "var": lambda x, m: st.masked.var(x, 1, mask=m),
    "softmax": lambda x, m: st.masked.softmax(x, 1, mask=m), "normalize": lambda x, m: st.masked.normalize(
        x, 2.0, 1, mask=m), "logsumexp": lambda x, m: st.masked.logsumexp(x, 1, mask=m),
    "cumprod": lambda x, m: st.masked.cumprod(x, 1, mask=m),
}


@pytest.mark.parametrize("name", list(MASKED))
def test_masked_functions_match_the_cpu(name):
    x = st.tensor([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]])
    m = st.tensor([[True, False, True], [False, False, True]])
    want = MASKED[name](x, m)
    got = MASKED[name](x.cuda(), m.cuda())
    assert got.device.type == "cuda" and got.dtype is want.dtype
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-6, equal_nan=True)
