"""nn.AdaptiveLogSoftmaxWithLoss (``strided/nn/modules/adaptive.py``) on every available backend: output, loss,
log_prob, predict and gradients against a NumPy reference of the head + tail factorization (and against torch,
parameters copied, when installed); unbatched input, empty clusters, initialization, repr and torch's errors."""

from __future__ import annotations

import re

import numpy as np
import pytest

import strided as st
from strided import nn
from strided.autograd import gradcheck
from strided.testing import available_devices

DEVICES = available_devices()
DATA_DEVICES = [d for d in DEVICES if d != "meta"]

# (in_features, n_classes, cutoffs, div_value, head_bias)
CONFIGS = [
    (16, 20, [4, 9, 15], 2.0, True),
    (12, 10, [3], 4.0, False),
    (9, 13, [2, 5, 6], 1.5, False),
]
CONFIG_IDS = [f"{c[0]}-{c[1]}-{c[2]}-{c[3]}-{c[4]}" for c in CONFIGS]


def _log_softmax(z):
    z = z - z.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


def _numpy_log_prob(params, x, cutoffs, n_classes):
    """The full (N, n_classes) log-distribution: shortlist classes from the head, cluster i's classes as the
    head's log-probability of the cluster plus the tail's log-softmax."""
    head = x @ params["head.weight"].T + params.get("head.bias", 0.0)
    head = _log_softmax(head)
    shortlist = cutoffs[0]
    bounds = list(cutoffs) + [n_classes]
    parts = [head[:, :shortlist]]
    for i in range(len(bounds) - 1):
        tail = (x @ params[f"tail.{i}.0.weight"].T) @ params[f"tail.{i}.1.weight"].T
        parts.append(_log_softmax(tail) + head[:, shortlist + i:shortlist + i + 1])
    return np.concatenate(parts, axis=1)


def _params(module):
    return {name: p.detach().numpy(force=True).astype(np.float64) for name, p in module.named_parameters()}


def _module(config, device, dtype=st.float64, seed=0):
    in_features, n_classes, cutoffs, div_value, head_bias = config
    st.manual_seed(seed)
    return nn.AdaptiveLogSoftmaxWithLoss(in_features, n_classes, cutoffs, div_value=div_value, head_bias=head_bias,
                                         device=device, dtype=dtype)


def _data(config, batch, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, config[0]))
    target = rng.integers(0, config[1], batch)
    target[: config[1]] = np.arange(min(batch, config[1]))  # every class, so every cluster, has rows
    return x, rng.permutation(target)


def _check_close(actual, desired, device):
    np.testing.assert_allclose(actual.detach().numpy(force=True), desired, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("config", CONFIGS, ids=CONFIG_IDS)
def test_forward_log_prob_and_gradients_numpy_reference(device, config):
    """output = log_prob at the target, loss = -mean(output), rows of exp(log_prob) sum to one; the input's
    gradient matches the NumPy gradient of the reference (meta: shapes and dtypes)."""
    m = _module(config, device)
    x, target = _data(config, 30, seed=1)
    sx = st.tensor(x, device=device).requires_grad_()
    out = m(sx, st.tensor(target, device=device))
    assert out._fields == ("output", "loss")
    assert tuple(out.output.shape) == (30,) and tuple(out.loss.shape) == ()
    assert out.output.dtype is st.float64 and out.output.device.type == device
    log_prob = m.log_prob(sx)
    assert tuple(log_prob.shape) == (30, config[1]) and log_prob.dtype is st.float64
    predicted = m.predict(sx)
    assert tuple(predicted.shape) == (30,) and predicted.dtype is st.int64
    out.loss.backward()
    assert tuple(sx.grad.shape) == x.shape
    assert all(p.grad is not None and p.grad.shape == p.shape for p in m.parameters())
    if device == "meta":
        return
    ref = _numpy_log_prob(_params(m), x, config[2], config[1])
    _check_close(log_prob, ref, device)
    np.testing.assert_allclose(np.exp(log_prob.detach().numpy(force=True)).sum(axis=1), 1.0, rtol=1e-12)
    ref_out = ref[np.arange(30), target]
    _check_close(out.output, ref_out, device)
    _check_close(out.loss, -ref_out.mean(), device)
    np.testing.assert_array_equal(predicted.numpy(force=True), ref.argmax(axis=1))
    # d(-mean(log p[target]))/dx through the reference, by central differences of the NumPy function
    eps, numeric = 1e-6, np.zeros_like(x)
    params = _params(m)
    for idx in np.ndindex(*x.shape):
        for sign in (1, -1):
            xp = x.copy()
            xp[idx] += sign * eps
            numeric[idx] -= sign * _numpy_log_prob(params, xp, config[2], config[1])[np.arange(30), target].mean()
    np.testing.assert_allclose(sx.grad.numpy(force=True), numeric / (2 * eps), rtol=1e-5, atol=1e-8)


def _torch_pair(config, device, torch):
    in_features, n_classes, cutoffs, div_value, head_bias = config
    tm = torch.nn.AdaptiveLogSoftmaxWithLoss(in_features, n_classes, cutoffs, div_value=div_value,
                                             head_bias=head_bias).double()
    sm = _module(config, device)
    s_params, t_params = dict(sm.named_parameters()), dict(tm.named_parameters())
    assert list(s_params) == list(t_params)
    with st.no_grad():
        for name, p in s_params.items():
            assert tuple(p.shape) == tuple(t_params[name].shape), name
            p.copy_(st.tensor(t_params[name].detach().numpy(), device=device))
    return sm, tm


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("config", CONFIGS, ids=CONFIG_IDS)
def test_matches_torch(device, config):
    torch = pytest.importorskip("torch")
    sm, tm = _torch_pair(config, device, torch)
    x, target = _data(config, 40, seed=2)
    sx = st.tensor(x, device=device).requires_grad_()
    tx = torch.tensor(x, requires_grad=True)
    s_out, t_out = sm(sx, st.tensor(target, device=device)), tm(tx, torch.tensor(target))
    upstream = np.random.default_rng(3).standard_normal(40)
    (s_out.output * st.tensor(upstream, device=device)).sum().add(s_out.loss).backward()
    (t_out.output * torch.tensor(upstream)).sum().add(t_out.loss).backward()
    s_lp, t_lp = sm.log_prob(sx), tm.log_prob(tx)
    s_pred, t_pred = sm.predict(sx), tm.predict(tx)
    assert tuple(s_lp.shape) == tuple(t_lp.shape) and tuple(s_pred.shape) == tuple(t_pred.shape)
    if device == "meta":
        return
    _check_close(s_out.output, t_out.output.detach().numpy(), device)
    _check_close(s_out.loss, t_out.loss.detach().numpy(), device)
    _check_close(s_lp, t_lp.detach().numpy(), device)
    np.testing.assert_array_equal(s_pred.numpy(force=True), t_pred.numpy())
    _check_close(sx.grad, tx.grad.numpy(), device)
    for (name, p), q in zip(sm.named_parameters(), tm.parameters()):
        np.testing.assert_allclose(p.grad.numpy(force=True), q.grad.numpy(), rtol=1e-9, atol=1e-12, err_msg=name)


def _predict_module(device, mode):
    """A module whose head argmax is controlled by the sign of input column 0: ``mode`` "shortlist" (every row
    in the shortlist), "clusters" (every row in a cluster) or "mixed" (rows with x0 > 0 in cluster 1)."""
    m = _module((6, 12, [3, 7], 2.0, True), device, seed=5)
    with st.no_grad():
        weight = np.zeros((5, 6))
        bias = np.zeros(5)
        if mode == "mixed":
            weight[4, 0] = 20.0
        elif mode == "clusters":
            bias[3] = 20.0
        m.head.weight.copy_(st.tensor(weight, device=device))
        m.head.bias.copy_(st.tensor(bias, device=device))
    return m


@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("mode", ["shortlist", "clusters", "mixed"])
def test_predict_branches(device, mode):
    """predict takes torch's three branches (every row in the shortlist, none, some); all equal the argmax of
    log_prob, and torch's predict when installed."""
    m = _predict_module(device, mode)
    x = np.random.default_rng(4).standard_normal((16, 6))
    x[:, 0] = np.where(np.arange(16) % 3 == 0, 1.0, -1.0)
    sx = st.tensor(x, device=device)
    predicted = m.predict(sx).numpy(force=True)
    ref = _numpy_log_prob(_params(m), x, [3, 7], 12).argmax(axis=1)
    np.testing.assert_array_equal(predicted, ref)
    in_shortlist = predicted < 3
    assert {"shortlist": in_shortlist.all(), "clusters": not in_shortlist.any(),
            "mixed": 0 < in_shortlist.sum() < 16}[mode]
    try:
        import torch
    except ImportError:
        return
    tm = torch.nn.AdaptiveLogSoftmaxWithLoss(6, 12, [3, 7], div_value=2.0, head_bias=True).double()
    with torch.no_grad():
        for (_, p), q in zip(m.named_parameters(), tm.parameters()):
            q.copy_(torch.tensor(p.numpy(force=True)))
    np.testing.assert_array_equal(predicted, tm.predict(torch.tensor(x)).numpy())


@pytest.mark.parametrize("device", DEVICES)
def test_unbatched_input(device):
    m = _module(CONFIGS[0], device)
    x, target = _data(CONFIGS[0], 5, seed=6)
    batched = m(st.tensor(x, device=device), st.tensor(target, device=device))
    for i in range(5):
        single = m(st.tensor(x[i], device=device), st.tensor(int(target[i]), device=device))
        assert tuple(single.output.shape) == () and tuple(single.loss.shape) == ()
        if device != "meta":
            _check_close(single.output, batched.output.numpy(force=True)[i], device)
            _check_close(single.loss, -batched.output.numpy(force=True)[i], device)


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_empty_clusters_get_no_gradient(device):
    """A cluster no target falls in is not run (torch's): its tail's parameters get no gradient."""
    m = _module(CONFIGS[0], device)
    x = np.random.default_rng(7).standard_normal((6, 16))
    target = np.array([0, 3, 12, 1, 14, 2])  # shortlist and cluster 2 only ([9, 15))
    out = m(st.tensor(x, device=device), st.tensor(target, device=device))
    out.loss.backward()
    grads = {name: p.grad for name, p in m.named_parameters()}
    assert grads["tail.0.0.weight"] is None and grads["tail.2.1.weight"] is None
    assert grads["tail.1.0.weight"] is not None and grads["head.weight"] is not None
    ref = _numpy_log_prob(_params(m), x, [4, 9, 15], 20)[np.arange(6), target]
    _check_close(out.output, ref, device)


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_int32_targets_and_empty_batch(device):
    m = _module(CONFIGS[1], device)
    x, target = _data(CONFIGS[1], 8, seed=8)
    a = m(st.tensor(x, device=device), st.tensor(target, device=device))
    b = m(st.tensor(x, device=device), st.tensor(target, dtype=st.int32, device=device))
    np.testing.assert_array_equal(a.output.detach().numpy(force=True), b.output.detach().numpy(force=True))
    empty = m(st.zeros((0, 12), dtype=st.float64, device=device), st.zeros(0, dtype=st.int64, device=device))
    assert tuple(empty.output.shape) == (0,) and np.isnan(empty.loss.item())


def test_gradcheck_without_torch():
    m = _module(CONFIGS[2], "cpu")
    x, target = _data(CONFIGS[2], 14, seed=9)
    sx = st.tensor(x).requires_grad_()
    t = st.tensor(target)
    assert gradcheck(lambda x: m(x, t).output, (sx,))
    assert gradcheck(lambda x: m.log_prob(x), (sx,))


def test_attributes_initialization_and_repr():
    m = _module((16, 20, [4, 9, 15], 2.0, True), "cpu", dtype=None)
    assert (m.in_features, m.n_classes, m.cutoffs, m.div_value, m.head_bias) == (16, 20, [4, 9, 15, 20], 2.0, True)
    assert (m.shortlist_size, m.n_clusters, m.head_size) == (4, 3, 7)
    assert isinstance(m.tail, nn.ModuleList) and all(isinstance(t, nn.Sequential) for t in m.tail)
    assert [(t[0].out_features, t[1].out_features) for t in m.tail] == [(8, 5), (4, 6), (2, 5)]
    assert m.head.weight.dtype is st.float32 and m.tail[0][0].bias is None
    # Linear's default: U(-1/sqrt(fan_in), 1/sqrt(fan_in))
    for name, p in m.named_parameters():
        fan_in = p.shape[1] if p.dim() == 2 else 16
        assert np.abs(p.detach().numpy()).max() <= 1 / np.sqrt(fan_in), name
    before = _params(m)
    st.manual_seed(3)
    m.reset_parameters()
    after = _params(m)
    assert all(not np.array_equal(before[k], after[k]) for k in before)
    st.manual_seed(3)
    m.reset_parameters()
    assert all(np.array_equal(after[k], v) for k, v in _params(m).items())
    expected = """AdaptiveLogSoftmaxWithLoss(
  (head): Linear(in_features=16, out_features=7, bias=True)
  (tail): ModuleList(
    (0): Sequential(
      (0): Linear(in_features=16, out_features=8, bias=False)
      (1): Linear(in_features=8, out_features=5, bias=False)
    )
    (1): Sequential(
      (0): Linear(in_features=16, out_features=4, bias=False)
      (1): Linear(in_features=4, out_features=6, bias=False)
    )
    (2): Sequential(
      (0): Linear(in_features=16, out_features=2, bias=False)
      (1): Linear(in_features=2, out_features=5, bias=False)
    )
  )
)"""
    assert repr(m) == expected
    try:
        import torch
    except ImportError:
        return
    assert repr(torch.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [4, 9, 15], div_value=2.0, head_bias=True)) == expected


@pytest.mark.parametrize("cutoffs,message", [
    ([], "cutoffs should be a sequence of length larger than 0"),
    ([3, 3], "cutoffs should be a sequence of unique, positive integers sorted in an increasing order, where each "
             "value is between 1 and n_classes-1"),
    ([0, 3], "cutoffs should be a sequence of unique"),
    ([3, 10], "cutoffs should be a sequence of unique"),
    ([5, 3], "cutoffs should be a sequence of unique"),
    ([3.5], "cutoffs should be a sequence of unique"),
])
def test_cutoff_errors(cutoffs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs)


@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("target,message", [
    ([0, 1, 2, 10], "Target values should be in [0, 9], but values in range [0, 10] were found. "),
    ([0, 1, -1, 3], "Target values should be in [0, 9], but values in range [-1, 3] were found. "),
    ([12, 11, 10, 13], "Target values should be in [0, 9], but values in range [10, 13] were found. "),
])
def test_target_out_of_range(device, target, message):
    m = nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], device=device)
    with pytest.raises(RuntimeError, match=f"^{re.escape(message)}$"):
        m(st.zeros((4, 8), device=device), st.tensor(target, device=device))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("input_shape,target,message", [
    ((4, 8), [[0]], "0D or 1D target tensor expected, multi-target not supported"),
    ((4, 8), [0, 1, 2], "Input and target should have the same size in the batch dimension."),
    ((1, 4, 8), [0, 1, 2, 4], "Input and target should have the same size in the batch dimension."),
    ((4, 4, 8), [0, 1, 2, 4], "1D target tensor expects 2D input tensors, but found inputs with size "),
    ((4, 8), 3, "0D target tensor expects 1D input tensors, but found inputs with size "),
    ((4, 8), [0.0, 1.0, 2.0, 3.0], "gather(): Expected dtype int32/int64 for index"),
])
def test_shape_errors(device, input_shape, target, message):
    m = nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], device=device)
    with pytest.raises(RuntimeError, match=re.escape(message)):
        m(st.zeros(input_shape, device=device), st.tensor(target, device=device))
