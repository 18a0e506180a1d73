"""addmm_ on CUDA updates its accumulator in place (Note [In-place addmm]): the CPU's values, the same memory,
no accumulator-sized temporary, the version bumped; aliased or strided accumulators take the general path."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
import strided.cuda as cuda

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]

TOL = {st.float32: 1e-4, st.bfloat16: 3e-2, st.float64: 1e-10}


@pytest.mark.parametrize("dtype", [st.float32, st.bfloat16, st.float64])
@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, 2.0), (0, 1)])
@pytest.mark.parametrize("transposed", [False, True])
def test_in_place_equals_the_cpu(dtype, beta, alpha, transposed):
    g = st.Generator().manual_seed(3)
    c, a, b = st.randn(96, 80, generator=g), st.randn(96, 40, generator=g), st.randn(40, 80, generator=g)
    if transposed:  # the shape of linear_cross_entropy's update: dlogits^T @ x
        a = st.randn(40, 96, generator=g).t()
    want = c.double().addmm_(a.double(), b.double(), beta=beta, alpha=alpha)
    cd = c.to("cuda", dtype)
    ptr, version = cd.data_ptr(), cd._version
    out = cd.addmm_(a.to("cuda", dtype), b.to("cuda", dtype), beta=beta, alpha=alpha)
    assert out is cd and cd.data_ptr() == ptr and cd._version == version + 1
    np.testing.assert_allclose(cd.cpu().double().numpy(), want.numpy(), rtol=TOL[dtype],
                               atol=TOL[dtype] * np.abs(want.numpy()).max())


def test_no_accumulator_sized_temporary():
    acc = st.zeros(4096, 4096, device="cuda")
    a, b = st.randn(4096, 16, device="cuda"), st.randn(16, 4096, device="cuda")
    acc.addmm_(a, b)
    cuda.synchronize()
    base = cuda.memory_allocated()
    cuda.reset_peak_memory_stats()
    acc.addmm_(a, b)
    cuda.synchronize()
    assert cuda.max_memory_allocated() - base < acc.numel() * 4 // 4  # the general path would add 64 MiB


def test_aliased_and_strided_accumulators_take_the_general_path():
    g = st.Generator().manual_seed(4)
    m = st.randn(32, 32, generator=g)
    want = m.clone().addmm_(m, m)
    md = m.cuda()
    md.addmm_(md, md)  # self is both factors
    np.testing.assert_allclose(md.cpu().numpy(), want.numpy(), rtol=1e-4, atol=1e-3)
    big = st.randn(32, 64, generator=g)
    view = big[:, ::2]
    want = view.clone().addmm_(m, m)
    bd = big.cuda()
    bd[:, ::2].addmm_(m.cuda(), m.cuda())
    np.testing.assert_allclose(bd[:, ::2].cpu().numpy(), want.numpy(), rtol=1e-4, atol=1e-3)
    np.testing.assert_array_equal(bd[:, 1::2].cpu().numpy(), big[:, 1::2].numpy())
    with pytest.raises(RuntimeError):
        st.zeros(3, 4, device="cuda").addmm_(st.ones(3, 5, device="cuda"), st.ones(4, 4, device="cuda"))
