"""nn.SyncBatchNorm in one process (Note [SyncBatchNorm in one process]): torch's values, running statistics,
conversion of a model's BatchNorm layers, and its input checks, against torch."""

from __future__ import annotations

import inspect
import re

import numpy as np
import pytest

import strided as st

torch = pytest.importorskip("torch")
# torch 2.14 added BatchNorm's bias= and shows it in the repr; an older torch (the GPU machine's 2.11) has neither
_TORCH_BIAS = "bias" in inspect.signature(torch.nn.BatchNorm1d.__init__).parameters


def _repr(m) -> str:
    return repr(m) if _TORCH_BIAS else re.sub(r", bias=(True|False)", "", repr(m))


def _model(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(),
                         nn.Sequential(nn.Flatten(), nn.Linear(4 * 6 * 6, 5), nn.BatchNorm1d(5, momentum=None)))


def _copy_weights(dst, src):
    dst.load_state_dict({k: st.from_numpy(v.detach().numpy().copy()) for k, v in src.state_dict().items()})


def test_converted_model_trains_and_evaluates_as_torchs():
    torch.manual_seed(0)
    tm = torch.nn.SyncBatchNorm.convert_sync_batchnorm(_model(torch))
    sm = _model(st)
    _copy_weights(sm, tm)
    bn = sm[1]
    sm = st.nn.SyncBatchNorm.convert_sync_batchnorm(sm)
    assert type(sm[1]) is st.nn.SyncBatchNorm and type(sm[3][2]) is st.nn.SyncBatchNorm
    assert sm[1].weight is bn.weight and sm[1].running_mean is bn.running_mean  # shared, not copied
    assert _repr(sm[1]) == repr(tm[1]) and _repr(sm[3][2]) == repr(tm[3][2])
    x = np.random.default_rng(1).standard_normal((6, 3, 8, 8)).astype(np.float32)
    for _ in range(2):  # training: batch statistics, running statistics updated (momentum=None: cumulative)
        out, want = sm(st.from_numpy(x)), tm(torch.from_numpy(x))
        out.sum().backward()
        want.sum().backward()
        np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=1e-4, atol=1e-5)
    for s_bn, t_bn in ((sm[1], tm[1]), (sm[3][2], tm[3][2])):
        np.testing.assert_allclose(s_bn.running_var.numpy(), t_bn.running_var.numpy(), rtol=1e-5)
        np.testing.assert_allclose(s_bn.weight.grad.numpy(), t_bn.weight.grad.numpy(), rtol=1e-3, atol=1e-4)
        assert s_bn.num_batches_tracked.item() == t_bn.num_batches_tracked.item() == 2
    sm.eval()
    tm.eval()
    np.testing.assert_allclose(sm(st.from_numpy(x)).detach().numpy(), tm(torch.from_numpy(x)).detach().numpy(),
                               rtol=1e-4, atol=1e-5)


def test_any_input_of_two_or_more_dims_and_torchs_checks():
    m = st.nn.SyncBatchNorm(3, affine=False, track_running_stats=False, process_group="kept")
    assert m.process_group == "kept" and m.weight is None and m.running_mean is None
    x = np.random.default_rng(2).standard_normal((4, 3, 2, 2, 2)).astype(np.float32)
    want = torch.nn.SyncBatchNorm(3, affine=False, track_running_stats=False)(torch.from_numpy(x))
    np.testing.assert_allclose(m(st.from_numpy(x)).numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match=r"expected at least 2D input \(got 1D input\)"):
        m(st.ones(3))
    with pytest.raises(ValueError, match="SyncBatchNorm number of input channels should be non-zero"):
        st.nn.SyncBatchNorm(0)(st.ones(2, 0))
    if _TORCH_BIAS:
        assert repr(st.nn.SyncBatchNorm(4, bias=False)) == repr(torch.nn.SyncBatchNorm(4, bias=False))
    assert st.nn.SyncBatchNorm(4, bias=False).bias is None


def test_converting_a_batchnorm_itself_returns_a_new_layer():
    bn = st.nn.BatchNorm1d(5, eps=1e-3, affine=False).eval()
    out = st.nn.SyncBatchNorm.convert_sync_batchnorm(bn)
    assert type(out) is st.nn.SyncBatchNorm and out is not bn and not out.training
    assert out.eps == 1e-3 and out.weight is None and out.running_var is bn.running_var
    lin = st.nn.Linear(2, 2)
    assert st.nn.SyncBatchNorm.convert_sync_batchnorm(lin) is lin  # nothing to convert


def test_converting_nonsense_is_refused():
    with pytest.raises(TypeError, match="convert_sync_batchnorm\\(\\): module must be an nn.Module, not int"):
        st.nn.SyncBatchNorm.convert_sync_batchnorm(3)
