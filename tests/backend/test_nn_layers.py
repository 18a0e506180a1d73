"""The torch.nn layers added over the composed functionals: activation and loss modules, Flatten /
Unflatten, RMSNorm, CosineSimilarity / PairwiseDistance, ParameterList / ParameterDict. Reprs are
torch's text, state-dict keys torch's, ``.to()`` moves their buffers; forwards equal the functionals
(and torch's modules, when torch is installed) on every available backend."""

from __future__ import annotations

import re
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import strided as st
from strided import nn
from strided.nn import functional as F
from strided.testing import available_devices

DEVICES = available_devices()
RNG = np.random.default_rng(7)


def host(t):
    return np.asarray(t.detach().cpu().numpy(), dtype=np.float64)


# torch 2.13's reprs of these constructions (checked against torch itself below when it is installed)
REPRS = [
    (lambda nn: nn.NLLLoss(), "NLLLoss()"),
    (lambda nn: nn.BCELoss(), "BCELoss()"),
    (lambda nn: nn.BCEWithLogitsLoss(), "BCEWithLogitsLoss()"),
    (lambda nn: nn.L1Loss(), "L1Loss()"),
    (lambda nn: nn.SmoothL1Loss(beta=0.5), "SmoothL1Loss()"),
    (lambda nn: nn.HuberLoss(delta=2.0), "HuberLoss()"),
    (lambda nn: nn.KLDivLoss(), "KLDivLoss()"),
    (lambda nn: nn.MarginRankingLoss(), "MarginRankingLoss()"),
    (lambda nn: nn.CosineSimilarity(), "CosineSimilarity()"),
    (lambda nn: nn.PairwiseDistance(), "PairwiseDistance()"),
    (lambda nn: nn.Sigmoid(), "Sigmoid()"),
    (lambda nn: nn.Softplus(), "Softplus(beta=1.0, threshold=20.0)"),
    (lambda nn: nn.LeakyReLU(), "LeakyReLU(negative_slope=0.01)"),
    (lambda nn: nn.LeakyReLU(0.2, True), "LeakyReLU(negative_slope=0.2, inplace=True)"),
    (lambda nn: nn.ELU(), "ELU(alpha=1.0)"),
    (lambda nn: nn.ELU(0.5, True), "ELU(alpha=0.5, inplace=True)"),
    (lambda nn: nn.SELU(), "SELU()"),
    (lambda nn: nn.SELU(True), "SELU(inplace=True)"),
    (lambda nn: nn.CELU(), "CELU(alpha=1.0)"),
    (lambda nn: nn.CELU(2.0, True), "CELU(alpha=2.0, inplace=True)"),
    (lambda nn: nn.LogSigmoid(), "LogSigmoid()"),
    (lambda nn: nn.Hardtanh(), "Hardtanh(min_val=-1.0, max_val=1.0)"),
    (lambda nn: nn.Hardtanh(-2, 3, True), "Hardtanh(min_val=-2, max_val=3, inplace=True)"),
    (lambda nn: nn.ReLU6(), "ReLU6()"),
    (lambda nn: nn.ReLU6(True), "ReLU6(inplace=True)"),
    (lambda nn: nn.Hardsigmoid(True), "Hardsigmoid()"),
    (lambda nn: nn.Hardswish(True), "Hardswish()"),
    (lambda nn: nn.Mish(), "Mish()"),
    (lambda nn: nn.Mish(True), "Mish(inplace=True)"),
    (lambda nn: nn.Softsign(), "Softsign()"),
    (lambda nn: nn.Tanhshrink(), "Tanhshrink()"),
    (lambda nn: nn.GLU(), "GLU(dim=-1)"),
    (lambda nn: nn.Softmin(1), "Softmin(dim=1)"),
    (lambda nn: nn.Softmin(), "Softmin(dim=None)"),
    (lambda nn: nn.LogSoftmax(), "LogSoftmax(dim=None)"),
    (lambda nn: nn.LogSoftmax(1), "LogSoftmax(dim=1)"),
    (lambda nn: nn.Threshold(0.1, 20), "Threshold(threshold=0.1, value=20)"),
    (lambda nn: nn.Threshold(0.1, 20, True), "Threshold(threshold=0.1, value=20, inplace=True)"),
    (lambda nn: nn.Flatten(), "Flatten(start_dim=1, end_dim=-1)"),
    (lambda nn: nn.Unflatten(1, (2, 3)), "Unflatten(dim=1, unflattened_size=(2, 3))"),
    (lambda nn: nn.Unflatten(-1, [2, 3]), "Unflatten(dim=-1, unflattened_size=[2, 3])"),
    (lambda nn: nn.RMSNorm(4), "RMSNorm((4,), eps=None, elementwise_affine=True)"),
    (
        lambda nn: nn.RMSNorm([2, 3], eps=1e-5, elementwise_affine=False),
        "RMSNorm((2, 3), eps=1e-05, elementwise_affine=False)",
    ),
    (
        lambda nn: nn.Sequential(nn.Flatten(), nn.ReLU6(), nn.Softmin(1)),
        "Sequential(\n  (0): Flatten(start_dim=1, end_dim=-1)\n  (1): ReLU6()\n  (2): Softmin(dim=1)\n)",
    ),
]


@pytest.mark.parametrize("make,text", REPRS, ids=[t.split("(")[0] + str(i) for i, (_, t) in enumerate(REPRS)])
def test_module_reprs_are_torchs(make, text):
    assert repr(make(nn)) == text


def test_the_expected_reprs_are_torchs_own():
    torch = pytest.importorskip("torch")
    for make, text in REPRS:
        assert repr(make(torch.nn)) == text


def _params(lib, device="cpu"):
    return [
        lib.nn.Parameter(lib.ones(2, 3, device=device)),
        lib.zeros(4, dtype=lib.float64, device=device),
        "abc",
        lib.ones((), device=device),
    ]


@pytest.mark.parametrize("device", DEVICES)
def test_parameter_containers_repr_and_state_dict_like_torch(device):
    torch = pytest.importorskip("torch")
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("the reprs show the device: torch needs CUDA too")
    tdev = device
    sl, tl = nn.ParameterList(_params(st, device)), torch.nn.ParameterList(_params(torch, tdev))
    assert repr(sl) == repr(tl).replace("torch.", "strided.")
    assert list(sl.state_dict()) == list(tl.state_dict()) == ["0", "1", "3"]
    values = dict(zip("badc", _params(st, device), strict=True))
    sd, td = nn.ParameterDict(values), torch.nn.ParameterDict(dict(zip("badc", _params(torch, tdev), strict=True)))
    assert repr(sd) == repr(td).replace("torch.", "strided.")
    assert list(sd.state_dict()) == list(td.state_dict()) == ["a", "b", "c"]  # a plain dict is taken sorted
    assert repr(nn.ParameterList()) == "ParameterList()" and repr(nn.ParameterDict()) == "ParameterDict()"


def test_parameter_container_reprs_without_torch():
    pl = nn.ParameterList([nn.Parameter(st.ones(2, 3)), st.zeros(4, dtype=st.float64), "abc"])
    assert repr(pl) == (
        "ParameterList(\n    (0): Parameter containing: [strided.float32 of size 2x3]\n"
        "    (1): Parameter containing: [strided.float64 of size 4]\n    (2): Object of type: str\n)"
    )
    pd = nn.ParameterDict({"w": st.ones(2, 3), "m": st.ones(2, device="meta", dtype=st.float16)})
    assert repr(pd) == (
        "ParameterDict(\n    (m): Parameter containing: [strided.meta.HalfTensor of size 2]\n"
        "    (w): Parameter containing: [strided.FloatTensor of size 2x3]\n)"
    )


def test_parameter_list_behaves_like_torchs():
    t = st.ones(3)
    pl = nn.ParameterList([t, nn.Parameter(st.zeros(2))])
    assert isinstance(pl[0], nn.Parameter) and pl[0].requires_grad and pl[0].data_ptr() == t.data_ptr()
    assert len(pl) == 2 and pl[-1] is pl[1] and [p.shape for p in pl] == [(3,), (2,)]
    pl.append(st.full((1,), 5.0)).extend([st.ones(4)])
    pl += [st.ones(5)]
    assert len(pl) == 5 and len(list(pl.parameters())) == 5 and list(pl.state_dict()) == ["0", "1", "2", "3", "4"]
    sub = pl[1:4:2]
    assert isinstance(sub, nn.ParameterList) and len(sub) == 2 and sub[0] is pl[1] and sub[1] is pl[3]
    pl[0] = st.zeros(7)
    assert pl[0].shape == (7,) and isinstance(pl[0], nn.Parameter)
    pl.append("not a tensor")
    assert pl[5] == "not a tensor" and len(list(pl.parameters())) == 5
    with pytest.raises(IndexError, match="index 6 is out of range"):
        pl[6]  # noqa: B018
    with pytest.raises(TypeError, match="ParameterList.extend should be called with an iterable, but got Tensor"):
        pl.extend(st.ones(2))
    with pytest.raises(RuntimeError, match="ParameterList should not be called."):
        pl(st.ones(1))
    model = nn.Module()
    model.params = nn.ParameterList([st.ones(2), st.ones(3)])
    assert [n for n, _ in model.named_parameters()] == ["params.0", "params.1"]
    model.to(st.float64)
    assert all(p.dtype is st.float64 and isinstance(p, nn.Parameter) for p in model.params)


def test_parameter_dict_behaves_like_torchs():
    pd = nn.ParameterDict(OrderedDict([("z", st.ones(2)), ("a", st.zeros(3))]))  # an OrderedDict keeps its order
    assert list(pd) == ["z", "a"] and isinstance(pd["z"], nn.Parameter) and "a" in pd and len(pd) == 2
    pd.update([("m", st.ones(1)), ("b", 3)])
    assert list(pd.keys()) == ["z", "a", "m", "b"] and pd["b"] == 3 and len(list(pd.parameters())) == 3
    assert list(pd.state_dict()) == ["z", "a", "m"]
    assert pd.get("nope", 1) == 1 and pd.setdefault("q", st.ones(4)).shape == (4,)
    assert [k for k, _ in pd.items()] == list(pd) and len(list(pd.values())) == 5 and list(reversed(pd))[0] == "q"
    assert pd.pop("q").shape == (4,) and "q" not in pd
    k, v = pd.popitem()
    assert k == "b" and v == 3 and list(pd) == ["z", "a", "m"]
    copy = pd.copy()
    assert list(copy) == list(pd) and copy["z"] is pd["z"]
    merged = pd | nn.ParameterDict({"n": st.ones(1)})
    assert list(merged) == ["z", "a", "m", "n"] and list(pd) == ["z", "a", "m"]
    pd |= nn.ParameterDict({"n": st.ones(1)})
    assert list(pd) == ["z", "a", "m", "n"]
    del pd["z"]
    assert "z" not in pd and "z" not in dict(pd.named_parameters())
    assert list(pd.fromkeys(["x", "y"], st.ones(1))) == ["x", "y"]
    pd.clear()
    assert len(pd) == 0 and list(pd.parameters()) == []
    with pytest.raises(
        TypeError,
        match=re.escape("Index given to ParameterDict cannot be used as a key as it is not a string (type is 'int')"),
    ):
        pd[1] = st.ones(1)
    with pytest.raises(
        TypeError, match="ParametersDict.update should be called with an iterable of key/value pairs, but got int"
    ):
        pd.update(3)
    with pytest.raises(ValueError, match="ParameterDict update sequence element #0 has length 3; 2 is required"):
        pd.update([("a", 1, 2)])
    with pytest.raises(RuntimeError, match="ParameterDict should not be called."):
        pd(st.ones(1))


@pytest.mark.parametrize("device", DEVICES)
def test_module_state_dicts_and_to_move_buffers(device):
    loss = nn.BCEWithLogitsLoss(weight=st.ones(3), pos_weight=st.full((3,), 2.0))
    assert list(loss.state_dict()) == ["weight", "pos_weight"]
    loss.to(device, st.float64)
    assert loss.weight.dtype is st.float64 and loss.pos_weight.dtype is st.float64
    assert loss.pos_weight.device.type == device
    nll = nn.NLLLoss(weight=st.ones(3)).to(device)
    assert list(nll.state_dict()) == ["weight"] and nll.weight.device.type == device
    assert list(nn.BCELoss(weight=st.ones(2)).state_dict()) == ["weight"] and list(nn.L1Loss().state_dict()) == []
    norm = nn.RMSNorm((2, 3), device=device, dtype=st.float64)
    assert list(norm.state_dict()) == ["weight"] and norm.weight.shape == (2, 3)
    assert norm.weight.dtype is st.float64 and norm.weight.device.type == device
    assert (
        nn.RMSNorm(3, elementwise_affine=False).weight is None
        and list(nn.RMSNorm(3, elementwise_affine=False).state_dict()) == []
    )
    torch = pytest.importorskip("torch")
    for make in (
        lambda nn, lib: nn.BCEWithLogitsLoss(weight=lib.ones(3), pos_weight=lib.ones(3)),
        lambda nn, lib: nn.NLLLoss(weight=lib.ones(3)),
        lambda nn, lib: nn.RMSNorm([2, 3]),
        lambda nn, lib: nn.Sequential(nn.Linear(2, 2), nn.RMSNorm(2), nn.GLU()),
    ):
        assert list(make(nn, st).state_dict()) == list(make(torch.nn, torch).state_dict())


def test_rms_norm_module_parameters_and_torch_parity():
    m = nn.RMSNorm([4])
    np.testing.assert_array_equal(host(m.weight), np.ones(4))
    with st.no_grad():
        m.weight.mul_(3.0)
    m.reset_parameters()
    np.testing.assert_array_equal(host(m.weight), np.ones(4))
    assert m.weight.requires_grad and isinstance(m.weight, nn.Parameter)
    torch = pytest.importorskip("torch")
    w = RNG.standard_normal(4).astype(np.float32)
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    tm = torch.nn.RMSNorm([4], eps=1e-6)
    with torch.no_grad():
        tm.weight.copy_(torch.tensor(w))
    sm = nn.RMSNorm([4], eps=1e-6)
    sm.load_state_dict({"weight": st.tensor(w)})
    np.testing.assert_allclose(host(sm(st.tensor(x))), tm(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_activation_modules_equal_the_functionals(device):
    x = st.tensor(RNG.standard_normal((3, 4, 6)) * 3, dtype=st.float32, device=device)
    cases = [
        (nn.Sigmoid(), lambda x: F.sigmoid(x)),
        (nn.Softplus(2.0, 5.0), lambda x: F.softplus(x, 2.0, 5.0)),
        (nn.LeakyReLU(0.3), lambda x: F.leaky_relu(x, 0.3)),
        (nn.ELU(0.4), lambda x: F.elu(x, 0.4)),
        (nn.SELU(), F.selu),
        (nn.CELU(0.8), lambda x: F.celu(x, 0.8)),
        (nn.LogSigmoid(), F.logsigmoid),
        (nn.Hardtanh(-0.5, 2.0), lambda x: F.hardtanh(x, -0.5, 2.0)),
        (nn.ReLU6(), F.relu6),
        (nn.Hardsigmoid(), F.hardsigmoid),
        (nn.Hardswish(), F.hardswish),
        (nn.Mish(), F.mish),
        (nn.Softsign(), F.softsign),
        (nn.Tanhshrink(), F.tanhshrink),
        (nn.GLU(1), lambda x: F.glu(x, 1)),
        (nn.GLU(), F.glu),
        (nn.Softmin(2), lambda x: F.softmin(x, 2)),
        (nn.LogSoftmax(1), lambda x: F.log_softmax(x, 1)),
        (nn.Threshold(0.5, -1.0), lambda x: F.threshold(x, 0.5, -1)),
    ]
    for module, fn in cases:
        got, want = module(x), fn(x)
        assert got.shape == want.shape and got.dtype is want.dtype, module
        if device != "meta":
            np.testing.assert_array_equal(host(got), host(want), err_msg=repr(module))
    y = x * 1.0
    assert nn.Hardswish(inplace=True)(y) is y and nn.ReLU6(True)(y) is y and nn.Threshold(0, 0, True)(y) is y


def test_activation_module_constructor_rules_are_torchs():
    with pytest.raises(AssertionError, match=re.escape("max_val (1.0) must be greater than min_val (1.0)")):
        nn.Hardtanh(1.0, 1.0)
    with pytest.warns(FutureWarning, match="keyword argument `min_value` is deprecated and renamed to `min_val`"):
        m = nn.Hardtanh(min_value=-2.0)
    assert m.min_val == -2.0 and isinstance(nn.ReLU6(), nn.Hardtanh) and not isinstance(nn.CELU(), nn.ELU)
    with pytest.warns(UserWarning, match="Implicit dimension choice for log_softmax has been deprecated"):
        nn.LogSoftmax()(st.randn(2, 3))


@pytest.mark.parametrize("device", DEVICES)
def test_flatten_unflatten(device):
    x = st.randn(2, 3, 4, 5, device=device)
    assert nn.Flatten()(x).shape == (2, 60) and nn.Flatten(0, 2)(x).shape == (24, 5)
    assert nn.Unflatten(1, (3, 1))(x).shape == (2, 3, 1, 4, 5) and nn.Unflatten(-1, [5, -1])(x).shape == (2, 3, 4, 5, 1)
    seq = nn.Sequential(nn.Flatten(), nn.Unflatten(1, (3, 20)))
    assert seq(x).shape == (2, 3, 20)
    with pytest.raises(
        TypeError, match="unflattened_size must be tuple of ints, but found element of type float at pos 1"
    ):
        nn.Unflatten(1, (2, 1.5))
    with pytest.raises(TypeError, match="unflattened_size must be a tuple of ints, but found type int"):
        nn.Unflatten(1, 3)


# (strided/torch module factory, input arrays, integer target?) for the loss modules
LOSSES = [
    (lambda nn, lib: nn.NLLLoss(weight=lib.tensor([1.0, 2.0, 0.5]), ignore_index=1), "class"),
    (lambda nn, lib: nn.NLLLoss(reduction="sum"), "class"),
    (lambda nn, lib: nn.BCELoss(weight=lib.tensor([1.0, 2.0, 0.5])), "prob"),
    (lambda nn, lib: nn.BCEWithLogitsLoss(pos_weight=lib.tensor([1.0, 2.0, 0.5]), reduction="none"), "prob"),
    (lambda nn, lib: nn.L1Loss(reduction="sum"), "real"),
    (lambda nn, lib: nn.SmoothL1Loss(beta=0.3), "real"),
    (lambda nn, lib: nn.HuberLoss(delta=0.4, reduction="none"), "real"),
    (lambda nn, lib: nn.KLDivLoss(reduction="batchmean", log_target=True), "real"),
    (lambda nn, lib: nn.CosineSimilarity(dim=0), "real"),
    (lambda nn, lib: nn.PairwiseDistance(p=1.0, keepdim=True), "real"),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("index", range(len(LOSSES)))
def test_loss_modules_match_torchs(device, index):
    torch = pytest.importorskip("torch")
    make, kind = LOSSES[index]
    x = RNG.standard_normal((4, 3))
    if kind == "class":
        target = RNG.integers(0, 3, 4)
    elif kind == "prob":
        x, target = RNG.uniform(0.05, 0.95, (4, 3)), RNG.uniform(0, 1, (4, 3))
    else:
        target = RNG.standard_normal((4, 3))
    sm, tm = make(nn, st).to(device), make(torch.nn, torch)
    sx = st.tensor(x, dtype=st.float32, device=device, requires_grad=True)
    tx = torch.tensor(x, dtype=torch.float32, requires_grad=True)
    st_t = st.tensor(target, dtype=None if kind == "class" else st.float32, device=device)
    th_t = torch.tensor(target, dtype=None if kind == "class" else torch.float32)
    got, want = sm(sx, st_t), tm(tx, th_t)
    assert tuple(got.shape) == tuple(want.shape)
    got.sum().backward()
    want.sum().backward()
    assert sx.grad.shape == tuple(tx.grad.shape)
    if device != "meta":
        np.testing.assert_allclose(host(got), want.detach().numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(host(sx.grad), tx.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_loss_module_reductions_follow_torch():
    with pytest.warns(
        UserWarning, match="size_average and reduce args will be deprecated, please use reduction='sum' instead."
    ):
        assert nn.L1Loss(size_average=False).reduction == "sum"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert nn.NLLLoss(reduce=False).reduction == "none" and nn.BCELoss(size_average=True).reduction == "mean"
    bad = nn.L1Loss(reduction="bad")  # as torch, a bad name fails when the loss is computed
    with pytest.raises(ValueError, match="bad is not a valid value for reduction"):
        bad(st.ones(2), st.ones(2))
    with pytest.raises(TypeError, match="delta must be a float or int, got: <class 'str'>"):
        nn.HuberLoss(delta="1")
    loss = nn.MarginRankingLoss(margin=0.5)
    assert loss(st.tensor([1.0, 0.0]), st.tensor([0.0, 0.0]), st.tensor([1.0, -1.0])).item() == pytest.approx(0.25)
