"""nn.DataParallel on GPUs: one device (inputs moved, the module called) and two (scatter, replicas in threads,
gather): outputs, gradients and a few optimizer steps equal one device's run of the whole batch."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
import strided.cuda as cuda

pytestmark = pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")
two_gpus = pytest.mark.skipif(not cuda.is_available() or cuda.device_count() < 2, reason="needs 2 GPUs")


def _model(seed=0):
    st.manual_seed(seed)
    return st.nn.Sequential(st.nn.Linear(16, 32), st.nn.GELU(), st.nn.Linear(32, 4))


def _batch(n=10):
    rng = np.random.default_rng(3)
    return rng.standard_normal((n, 16)).astype(np.float32), rng.integers(0, 4, n)


def test_one_gpu_moves_the_module_and_inputs():
    m = _model()
    dp = st.nn.DataParallel(m, device_ids=[0])
    assert m[0].weight.device == st.device("cuda", 0)
    x, _ = _batch()
    out = dp(st.from_numpy(x))  # a CPU batch goes to cuda:0
    assert out.device == st.device("cuda", 0)
    np.testing.assert_allclose(out.detach().cpu().numpy(), m(st.from_numpy(x).cuda()).detach().cpu().numpy(),
                               rtol=1e-6)
    m.cpu()
    with pytest.raises(RuntimeError, match=r"module must have its parameters and buffers on device cuda:0 "
                                           r"\(device_ids\[0\]\) but found one of them on device: cpu"):
        dp(st.from_numpy(x))


@two_gpus
@pytest.mark.parametrize("output_device", [0, 1])
def test_two_gpus_match_one_gpu_forward_backward_and_steps(output_device):
    x, y = _batch()
    ref, par = _model().cuda(), _model().cuda()
    dp = st.nn.DataParallel(par, device_ids=[0, 1], output_device=output_device)
    opts = [st.optim.AdamW(m.parameters(), lr=1e-2) for m in (ref, par)]
    for _ in range(3):
        outs = []
        for model, opt in zip((ref, dp), opts):
            opt.zero_grad()
            out = model(st.from_numpy(x).cuda())
            st.nn.functional.cross_entropy(out, st.from_numpy(y).to(out.device)).backward()
            opt.step()
            outs.append(out)
        assert outs[1].device == st.device("cuda", output_device)
        np.testing.assert_allclose(outs[1].detach().cpu().numpy(), outs[0].detach().cpu().numpy(), rtol=1e-4,
                                   atol=1e-5)
    for p, q in zip(ref.parameters(), par.parameters()):
        assert q.device == st.device("cuda", 0) and q.grad.device == st.device("cuda", 0)
        np.testing.assert_allclose(q.grad.cpu().numpy(), p.grad.cpu().numpy(), rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(q.detach().cpu().numpy(), p.detach().cpu().numpy(), rtol=1e-4, atol=1e-5)


@two_gpus
def test_two_gpus_no_grad_and_batch_norm_statistics():
    m = st.nn.Sequential(st.nn.Linear(16, 8), st.nn.BatchNorm1d(8)).cuda()
    dp = st.nn.DataParallel(m, device_ids=[0, 1])
    x, _ = _batch(8)
    dp(st.from_numpy(x))
    # as torch's: the running statistics are those of the replica on device_ids[0] (the first 4 rows)
    first = st.nn.Sequential(st.nn.Linear(16, 8), st.nn.BatchNorm1d(8)).cuda()
    first.load_state_dict({k: v for k, v in m.state_dict().items() if not k.startswith("1.")}, strict=False)
    first(st.from_numpy(x[:4]).cuda())
    np.testing.assert_allclose(m[1].running_mean.cpu().numpy(), first[1].running_mean.cpu().numpy(), rtol=1e-5,
                               atol=1e-6)
    with st.no_grad():
        out = dp(st.from_numpy(x))
    assert out.grad_fn is None and out.shape == (8, 8)


@two_gpus
def test_a_gemm_on_one_device_after_work_on_the_other():
    # Note [Library calls need the context]: cuBLASLt runs in the calling thread's current context
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((64, 48)).astype(np.float32), rng.standard_normal((48, 32)).astype(np.float32)
    a1, b1 = st.from_numpy(a).to("cuda:1"), st.from_numpy(b).to("cuda:1")
    (a1 @ b1).sum().item()  # the device-1 handle and plan exist
    for _ in range(3):
        st.ones(8, device="cuda:0").add_(1)  # device 0's context is current now
        out = a1 @ b1
        assert out.device == st.device("cuda", 1)
        np.testing.assert_allclose(out.cpu().numpy(), a @ b, rtol=1e-4, atol=1e-4)
    cuda.synchronize(0)
    cuda.synchronize(1)
