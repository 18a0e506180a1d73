"""Instance norm (``F.instance_norm``, ``nn.InstanceNorm1d/2d/3d``) on every available backend: values,
gradients and running statistics against torch (when installed), gradcheck without it, torch's reprs,
state-dict keys, warnings and errors."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import strided as st
from strided import nn
from strided.autograd import gradcheck
from strided.nn import functional as F
from strided.testing import available_devices

DEVICES = available_devices()
RNG = np.random.default_rng(5)
X4 = RNG.standard_normal((2, 3, 5, 4))


def _like(x, values):
    return st.tensor(values, dtype=x.dtype, device=x.device) if isinstance(x, st.Tensor) else _torch_like(x, values)


def _torch_like(x, values):
    import torch

    return torch.tensor(values, dtype=x.dtype)


@pytest.mark.parametrize("device", DEVICES)
def test_instance_norm_matches_torch(nn_oracle, device):
    nn_oracle(
        lambda F, x, w, b: F.instance_norm(x, weight=w, bias=b, eps=1e-3),
        [X4, RNG.standard_normal(3), RNG.standard_normal(3)],
        device,
        "float32",
        grad=(0, 1, 2),
    )
    rm, rv = RNG.standard_normal(3), RNG.random(3) + 0.5
    for use_input_stats in (True, False):  # running statistics: updated in training, used in evaluation
        nn_oracle(
            lambda F, x, u=use_input_stats: F.instance_norm(x, _like(x, rm), _like(x, rv), None, None, u, 0.3),
            [RNG.standard_normal((4, 3, 6))],
            device,
            "float32",
        )


@pytest.mark.parametrize("device", [d for d in DEVICES if d != "meta"])
@pytest.mark.parametrize("cls,shape", [("InstanceNorm1d", (4, 3, 6)), ("InstanceNorm2d", (2, 3, 5, 4)),
                                       ("InstanceNorm3d", (2, 3, 4, 3, 2))])
@pytest.mark.parametrize("kw", [{}, {"affine": True}, {"track_running_stats": True},
                                {"affine": True, "track_running_stats": True, "momentum": None}], ids=str)
def test_instance_norm_modules_match_torch(device, cls, shape, kw):
    torch = pytest.importorskip("torch")
    t, m = getattr(torch.nn, cls)(3, **kw).double(), getattr(nn, cls)(3, **kw).double().to(device)
    if kw.get("affine"):
        w, b = RNG.standard_normal(3), RNG.standard_normal(3)
        with torch.no_grad():
            t.weight.copy_(torch.tensor(w))
            t.bias.copy_(torch.tensor(b))
        m.load_state_dict({**m.state_dict(), "weight": st.tensor(w), "bias": st.tensor(b)})
    for mode in ("train", "train", "eval", "train"):
        getattr(t, mode)()
        getattr(m, mode)()
        for x in (RNG.standard_normal(shape) * 2 + 1, RNG.standard_normal(shape[1:])):  # batched and unbatched
            np.testing.assert_allclose(m(st.tensor(x, device=device)).detach().cpu().numpy(),
                                       t(torch.tensor(x)).detach().numpy(), rtol=1e-9, atol=1e-9)
    if kw.get("track_running_stats"):
        for name in ("running_mean", "running_var"):
            np.testing.assert_allclose(getattr(m, name).cpu().numpy(), getattr(t, name).numpy(), rtol=1e-12)


def test_instance_norm_reprs_and_state_dicts():
    made = [(lambda nn: nn.InstanceNorm2d(3),
             "InstanceNorm2d(3, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=False)"),
            (lambda nn: nn.InstanceNorm1d(4, affine=True, track_running_stats=True),
             "InstanceNorm1d(4, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)")]
    for make, text in made:
        assert repr(make(nn)) == text
    assert list(nn.InstanceNorm2d(3).state_dict()) == []
    assert list(made[1][0](nn).state_dict()) == ["weight", "bias", "running_mean", "running_var",
                                                 "num_batches_tracked"]
    try:
        import torch
    except ImportError:
        return
    for make, text in made:
        if "bias" not in inspect.signature(torch.nn.InstanceNorm2d).parameters:
            text = text.replace(" bias=True,", "").replace(" bias=False,", "")  # torch < 2.13 prints no bias=
        assert repr(make(torch.nn)) == text
        assert list(make(nn).state_dict()) == list(make(torch.nn).state_dict())


def test_instance_norm_gradcheck_and_errors():
    x = st.tensor(RNG.standard_normal((2, 3, 4)), dtype=st.float64, requires_grad=True)
    w = st.tensor(RNG.standard_normal(3), dtype=st.float64, requires_grad=True)
    assert gradcheck(lambda x, w: F.instance_norm(x, weight=w), (x, w))
    with pytest.raises(ValueError, match=r"Expected more than 1 spatial element when training, got input size"):
        F.instance_norm(st.ones(2, 3, 1))
    with pytest.raises(RuntimeError, match="Expected running_mean and running_var to be defined when "
                                           "use_input_stats is false"):
        F.instance_norm(st.ones(2, 3, 4), use_input_stats=False)
    with pytest.raises(TypeError, match=r"instance_norm\(\): argument 'input' must be Tensor, not list"):
        F.instance_norm([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"instance_norm\(\): weight should be a tensor of 3 elements \(one per "
                                           r"channel of input \[2, 3, 4\]\), got 4 elements"):
        F.instance_norm(st.ones(2, 3, 4), weight=st.ones(4))
    with pytest.raises(RuntimeError, match=r"instance_norm\(\): running_mean should be a tensor of 3 elements"):
        F.instance_norm(st.ones(2, 3, 4), running_mean=[0.0] * 3, running_var=st.ones(3))
    for f in (F.instance_norm, lambda x: F.batch_norm(x, None, None, training=True)):
        with pytest.raises(NotImplementedError, match="\"batch_norm\" not implemented for 'Long'"):
            f(st.ones(2, 3, 4, dtype=st.int64))  # torch's words for both
    with pytest.raises(ValueError, match=r"expected 3D or 4D input \(got 2D input\)"):
        nn.InstanceNorm2d(3)(st.ones(3, 4))
    with pytest.raises(ValueError, match=r"expected input's size at dim=1 to match num_features \(3\), but got: 4"):
        nn.InstanceNorm1d(3, affine=True)(st.ones(2, 4, 5))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = nn.InstanceNorm2d(3)(st.randn(2, 3, 4))  # unbatched (C, H, W) = (2, 3, 4): dim 0 is 2, not 3
    assert out.shape == (2, 3, 4)
    assert any("input's size at dim=0 does not match num_features" in str(w.message) for w in caught)
