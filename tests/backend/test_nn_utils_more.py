"""torch.nn.utils's newer helpers against torch: get_total_norm / clip_grads_with_norm_ / clip_grad_norm_
(mixed dtypes, inf and 1 norms, the deprecated name, the empty-generator warning), BatchNorm folding into
Conv / ConvTranspose / Linear, skip_init, and the conv weight memory-format converters."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)


def _params(lib, arrays, dtypes):
    out = []
    for a, d in zip(arrays, dtypes):
        p = lib.nn.Parameter(lib.tensor(a).to(getattr(lib, d)))
        p.grad = lib.tensor(a * 3 - 1).to(getattr(lib, d))
        out.append(p)
    return out


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf"), 3.0])
@pytest.mark.parametrize("dtypes", [("float32", "float32"), ("bfloat16", "float32"), ("float64", "float32")])
def test_clip_grad_norm_matches_torch(norm_type, dtypes):
    arrays = [RNG.standard_normal((4, 5)).astype(np.float32), RNG.standard_normal(7).astype(np.float32)]
    ours, theirs = _params(st, arrays, dtypes), _params(torch, arrays, dtypes)
    tn_s = st.nn.utils.get_total_norm([p.grad for p in ours], norm_type)
    tn_t = torch.nn.utils.get_total_norm([p.grad for p in theirs], norm_type)
    assert tn_s.dtype.name == str(tn_t.dtype).replace("torch.", "")
    np.testing.assert_allclose(float(tn_s), float(tn_t), rtol=1e-6)
    n_s = st.nn.utils.clip_grad_norm_(ours, 1.5, norm_type)
    n_t = torch.nn.utils.clip_grad_norm_(theirs, 1.5, norm_type)
    np.testing.assert_allclose(float(n_s), float(n_t), rtol=1e-6)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.float().numpy(), b.grad.float().numpy(), rtol=1e-6, atol=1e-7)


def test_clip_helpers_and_words_as_torch():
    p = st.nn.Parameter(st.ones(3))
    p.grad = st.full((3,), 2.0)
    st.nn.utils.clip_grads_with_norm_([p], 1.0, st.tensor(4.0))
    assert p.grad.tolist() == pytest.approx([0.5] * 3, rel=1e-5)
    with pytest.warns(FutureWarning, match="`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                                           "`torch.nn.utils.clip_grad_norm_`."):
        st.nn.utils.clip_grad_norm([p], 1.0)
    with pytest.warns(UserWarning, match="`parameters` is an empty generator, no gradient clipping will occur."):
        st.nn.utils.clip_grad_norm_((q for q in []), 1.0)
    assert float(st.nn.utils.get_total_norm([])) == float(torch.nn.utils.get_total_norm([])) == 0.0
    p.grad = st.tensor([float("inf"), 1.0, 1.0])
    with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from `parameters` is "
                                           "non-finite"):
        st.nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)


def _bn(lib, n, seed):
    r = np.random.default_rng(seed)
    bn = lib.nn.BatchNorm2d(n) if seed < 100 else lib.nn.BatchNorm1d(n)
    bn.running_mean = lib.tensor(r.standard_normal(n).astype(np.float32))
    bn.running_var = lib.tensor(r.uniform(0.5, 2.0, n).astype(np.float32))
    with lib.no_grad():
        bn.weight.copy_(lib.tensor(r.standard_normal(n).astype(np.float32)))
        bn.bias.copy_(lib.tensor(r.standard_normal(n).astype(np.float32)))
    return bn.eval()


@pytest.mark.parametrize("kind", ["conv", "conv_nobias", "conv_transpose", "linear"])
def test_batchnorm_folding_matches_torch(kind):
    outs = []
    for lib in (st, torch):
        r = np.random.default_rng(1)
        if kind == "linear":
            layer, bn = lib.nn.Linear(5, 4), _bn(lib, 4, 101)
            x = r.standard_normal((3, 5)).astype(np.float32)
        elif kind == "conv_transpose":
            layer, bn = lib.nn.ConvTranspose2d(3, 4, 3), _bn(lib, 4, 2)
            x = r.standard_normal((2, 3, 5, 5)).astype(np.float32)
        else:
            layer, bn = lib.nn.Conv2d(3, 4, 3, bias=kind == "conv"), _bn(lib, 4, 2)
            x = r.standard_normal((2, 3, 6, 6)).astype(np.float32)
        sd = {k: np.random.default_rng(7).standard_normal(v.shape).astype(np.float32)
              for k, v in torch.nn.Module.state_dict(layer).items()} if lib is torch else None
        outs.append((lib, layer, bn, x, sd))
    (_, s_layer, s_bn, x, _), (_, t_layer, t_bn, _, sd) = outs
    t_layer.load_state_dict({k: torch.tensor(v) for k, v in sd.items()})
    s_layer.load_state_dict({k: st.tensor(v) for k, v in sd.items()})
    s_layer.eval(), t_layer.eval()
    if kind == "linear":
        s_f, t_f = st.nn.utils.fuse_linear_bn_eval(s_layer, s_bn), torch.nn.utils.fuse_linear_bn_eval(t_layer, t_bn)
    else:
        tr = kind == "conv_transpose"
        s_f = st.nn.utils.fuse_conv_bn_eval(s_layer, s_bn, transpose=tr)
        t_f = torch.nn.utils.fuse_conv_bn_eval(t_layer, t_bn, transpose=tr)
    np.testing.assert_allclose(s_f.weight.detach().numpy(), t_f.weight.detach().numpy(), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(s_f.bias.detach().numpy(), t_f.bias.detach().numpy(), rtol=1e-6, atol=1e-7)
    fused = s_f(st.tensor(x)).detach().numpy()
    unfused = s_bn(s_layer(st.tensor(x))).detach().numpy()
    np.testing.assert_allclose(fused, unfused, rtol=1e-4, atol=1e-5)
    assert isinstance(s_f.weight, st.nn.Parameter) and s_layer.weight is not s_f.weight  # a copy
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        st.nn.utils.fuse_linear_bn_eval(st.nn.Linear(2, 2), st.nn.BatchNorm1d(2))


def test_skip_init_and_memory_format_converters_as_torch():
    m = st.nn.utils.skip_init(st.nn.Linear, 4, 3)
    assert m.weight.device.type == "cpu" and tuple(m.weight.shape) == (3, 4)
    with pytest.raises(RuntimeError, match="Expected a Module; got"):
        st.nn.utils.skip_init(int)

    class NoDevice(st.nn.Module):
        def __init__(self, n):
            super().__init__()

    with pytest.raises(RuntimeError, match="Module must support a 'device' arg to skip initialization"):
        st.nn.utils.skip_init(NoDevice, 2)
    net = st.nn.Sequential(st.nn.Conv2d(3, 8, 3), st.nn.ReLU(), st.nn.Sequential(st.nn.ConvTranspose2d(8, 4, 2)))
    tnet = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU(),
                               torch.nn.Sequential(torch.nn.ConvTranspose2d(8, 4, 2)))
    st.nn.utils.convert_conv2d_weight_memory_format(net, st.channels_last)
    torch.nn.utils.convert_conv2d_weight_memory_format(tnet, torch.channels_last)
    assert net[0].weight.stride() == tnet[0].weight.stride()
    assert net[2][0].weight.stride() == tnet[2][0].weight.stride()
    c3 = st.nn.utils.convert_conv3d_weight_memory_format(st.nn.Conv3d(2, 3, 2), st.channels_last_3d)
    t3 = torch.nn.utils.convert_conv3d_weight_memory_format(torch.nn.Conv3d(2, 3, 2), torch.channels_last_3d)
    assert c3.weight.stride() == t3.weight.stride()


@pytest.mark.skipif(not st.cuda.is_available(), reason="no CUDA device")
def test_clip_and_fusion_on_cuda_match_cpu():
    arrays = [RNG.standard_normal((4, 5)).astype(np.float32), RNG.standard_normal(7).astype(np.float32)]
    results = []
    for device in ("cpu", "cuda"):
        ps = [p.to(device).detach().requires_grad_(True) for p in _params(st, arrays, ("bfloat16", "float32"))]
        for p, a in zip(ps, arrays):
            p.grad = st.tensor(a * 3 - 1, device=device).to(p.dtype)
        n = st.nn.utils.clip_grad_norm_(ps, 1.5)
        results.append((float(n), [p.grad.float().cpu().numpy() for p in ps]))
    assert results[0][0] == pytest.approx(results[1][0], rel=1e-2)  # bfloat16 norms, summed in other orders
    for a, b in zip(results[0][1], results[1][1]):
        np.testing.assert_allclose(a, b, rtol=2e-2, atol=1e-3)
    conv, bn = st.nn.Conv2d(3, 4, 3).eval(), _bn(st, 4, 2)
    x = st.tensor(RNG.standard_normal((2, 3, 6, 6)).astype(np.float32))
    cpu = st.nn.utils.fuse_conv_bn_eval(conv, bn)(x).detach().numpy()
    gpu = st.nn.utils.fuse_conv_bn_eval(conv.to("cuda"), bn.to("cuda"))(x.cuda()).detach().cpu().numpy()
    np.testing.assert_allclose(gpu, cpu, rtol=1e-4, atol=1e-5)


def test_clip_helpers_name_bad_arguments():
    p = st.nn.Parameter(st.ones(2))
    p.grad = st.ones(2)
    with pytest.raises(TypeError, match=r"clip_grads_with_norm_\(\): total_norm must be a Tensor .*got int"):
        st.nn.utils.clip_grads_with_norm_([p], 1.0, 3)
    with pytest.raises(TypeError, match=r"get_total_norm\(\): expected Tensors, got int"):
        st.nn.utils.get_total_norm([3])
