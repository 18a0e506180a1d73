"""strided.nn on every available backend: Module registration and iteration, state dicts and their
errors, ``to``/``apply``/``zero_grad``, torch's reprs, layers and functional ops against NumPy,
and the initializers' fan rules."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import strided as st
from strided import nn
from strided.nn import functional as F
from strided.testing import available_devices

DEVICES = available_devices()
DATA_DEVICES = [d for d in DEVICES if d != "meta"]


def host(t):
    return np.asarray(t.detach().cpu().float().numpy(), dtype=np.float64)


class Block(nn.Module):
    def __init__(self, device=None):
        super().__init__()
        self.fc = nn.Linear(4, 3, device=device)
        self.norm = nn.LayerNorm(3, device=device)
        self.register_buffer("steps", st.zeros(1, device=device))
        self.register_buffer("cache", st.ones(2, device=device), persistent=False)

    def forward(self, x):
        return self.norm(self.fc(x))


# ------------------------------------------------------------------------------- registration
def test_setattr_registers_parameters_modules_buffers():
    b = Block()
    assert list(b._parameters) == [] and list(b._modules) == ["fc", "norm"]
    assert [n for n, _ in b.named_parameters()] == ["fc.weight", "fc.bias", "norm.weight", "norm.bias"]
    assert [n for n, _ in b.named_buffers()] == ["steps", "cache"]
    assert [n for n, _ in b.named_modules()] == ["", "fc", "norm"]
    assert [n for n, _ in b.named_children()] == ["fc", "norm"]
    assert len(list(b.parameters())) == 4 and len(list(b.parameters(recurse=False))) == 0
    b.extra = nn.Parameter(st.ones(2))
    assert "extra" in b._parameters and b.extra is b._parameters["extra"]
    b.extra = None
    assert b._parameters["extra"] is None and "extra" not in dict(b.named_parameters())
    del b.extra
    assert "extra" not in b._parameters
    b.steps = st.full((1,), 5.0)
    assert b._buffers["steps"].item() == 5.0


def test_shared_parameters_are_listed_once():
    a = nn.Linear(2, 2)
    seq = nn.Sequential(a, a)
    assert len(list(seq.parameters())) == 2
    assert len(list(seq.named_parameters(remove_duplicate=False))) == 4
    assert list(seq.state_dict()) == ["0.weight", "0.bias", "1.weight", "1.bias"]


def test_registration_errors():
    m = nn.Module()
    with pytest.raises(TypeError, match=re.escape("cannot assign 'strided.FloatTensor' as parameter 'w'")):  # torch's
        m.w = nn.Parameter(st.ones(1))
        m.w = st.ones(1)
    with pytest.raises(KeyError, match="parameter name can.+t contain"):
        m.register_parameter("a.b", None)
    with pytest.raises(KeyError, match="attribute 'training' already exists"):
        m.register_buffer("training", st.ones(1))
    with pytest.raises(TypeError, match=re.escape("cannot assign 'int' object to buffer 'b'")):
        m.register_buffer("b", 3)
    with pytest.raises(TypeError, match="is not a Module subclass"):
        m.add_module("x", 3)
    with pytest.raises(AttributeError, match="'Module' object has no attribute 'nope'"):
        m.nope  # noqa: B018

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(st.ones(1))

    with pytest.raises(AttributeError, match=re.escape("cannot assign parameters before Module.__init__() call")):
        Early()
    with pytest.raises(NotImplementedError, match='missing the required "forward" function'):
        m(1)


def test_parameter_is_a_leaf_sharing_storage():
    t = st.randn(3)
    p = nn.Parameter(t)
    assert isinstance(p, st.Tensor) and p.requires_grad and p.is_leaf
    assert p.data_ptr() == t.data_ptr()
    assert type(p * 2) is st.Tensor
    assert repr(p).startswith("Parameter containing:\ntensor([")
    assert not nn.Parameter(t, requires_grad=False).requires_grad


# ------------------------------------------------------------------------------- modes, apply, to
def test_train_eval_and_dropout():
    m = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    assert m.training and m[1].training
    m.eval()
    assert not m.training and not m[1].training
    x = st.randn(8, 4)
    y = m[1](x)
    np.testing.assert_array_equal(host(y), host(x))
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        m.train("yes")
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        nn.Dropout(1.5)


def test_dropout_training_zeroes_and_scales():
    x = st.ones(4000)
    y = host(F.dropout(x, 0.25, training=True))
    kept = y != 0
    assert 0.65 < kept.mean() < 0.85
    np.testing.assert_allclose(y[kept], 1 / 0.75, rtol=1e-6)


def test_apply_visits_children_first():
    seen = []
    nn.Sequential(nn.Linear(1, 1), nn.ReLU()).apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["Linear", "ReLU", "Sequential"]


@pytest.mark.parametrize("device", DEVICES)
def test_to_keeps_parameter_identity(device):
    b = Block()
    w = b.fc.weight
    b.to(device, st.float64)
    assert b.fc.weight is w and w.dtype is st.float64 and w.device.type == device
    assert isinstance(b.fc.weight, nn.Parameter) and w.requires_grad
    assert b.steps.dtype is st.float64 and b.cache.device.type == device
    b.float()
    assert w.dtype is st.float32
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point or complex dtypes"):
        b.to(st.int64)


def test_zero_grad_set_to_none_and_zeros():
    m = nn.Linear(2, 2)
    m.weight.grad = st.ones(2, 2)
    m.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(host(m.weight.grad), np.zeros((2, 2)))
    m.zero_grad()
    assert m.weight.grad is None


# ------------------------------------------------------------------------------- state dicts
def test_state_dict_round_trip_and_persistence():
    a, b = Block(), Block()
    sd = a.state_dict()
    assert list(sd) == ["steps", "fc.weight", "fc.bias", "norm.weight", "norm.bias"]  # own state first
    assert not sd["fc.weight"].requires_grad and sd["fc.weight"].data_ptr() == a.fc.weight.data_ptr()
    result = b.load_state_dict(sd)
    assert repr(result) == "<All keys matched successfully>"
    np.testing.assert_array_equal(host(b.fc.weight), host(a.fc.weight))
    assert a.state_dict(keep_vars=True)["fc.weight"] is a.fc.weight


def test_load_state_dict_strict_errors():
    b = Block()
    sd = b.state_dict()
    del sd["fc.bias"]
    sd["fc.extra"] = st.ones(1)
    sd["other.weight"] = st.ones(1)
    expected = ('Error(s) in loading state_dict for Block:\n\tMissing key(s) in state_dict: "fc.bias". \n\t'
                'Unexpected key(s) in state_dict: "other.weight", "fc.extra". ')
    with pytest.raises(RuntimeError) as e:
        b.load_state_dict(sd)
    assert str(e.value) == expected
    missing, unexpected = b.load_state_dict(sd, strict=False)
    assert missing == ["fc.bias"] and unexpected == ["other.weight", "fc.extra"]


def test_load_state_dict_size_mismatch_and_assign():
    b = Block()
    sd = b.state_dict()
    sd["fc.weight"] = st.ones(2, 2)
    with pytest.raises(RuntimeError, match=re.escape(
            "size mismatch for fc.weight: copying a param with shape strided.Size([2, 2]) from checkpoint, "
            "the shape in current model is strided.Size([3, 4]).")):
        b.load_state_dict(sd)
    new = {k: v.clone() for k, v in b.state_dict().items()}
    b.load_state_dict(new, assign=True)
    assert b.fc.weight.data_ptr() == new["fc.weight"].data_ptr() and isinstance(b.fc.weight, nn.Parameter)
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        b.load_state_dict([1, 2])


# ------------------------------------------------------------------------------- reprs (torch's text)
def test_reprs_match_torch():
    assert repr(nn.Linear(4, 3, bias=False)) == "Linear(in_features=4, out_features=3, bias=False)"
    assert repr(nn.Embedding(10, 3)) == "Embedding(10, 3)"
    assert repr(nn.LayerNorm(8)) == "LayerNorm((8,), eps=1e-05, elementwise_affine=True, bias=True)"
    assert repr(nn.GELU(approximate="tanh")) == "GELU(approximate='tanh')"
    assert repr(nn.ReLU()) == "ReLU()" and repr(nn.SiLU(inplace=True)) == "SiLU(inplace=True)"
    assert repr(nn.ModuleList()) == "ModuleList()"
    expected = ("Sequential(\n  (0): Linear(in_features=2, out_features=2, bias=True)\n"
                "  (1): ModuleList(\n    (0-1): 2 x ReLU()\n  )\n)")
    assert repr(nn.Sequential(nn.Linear(2, 2), nn.ModuleList([nn.ReLU(), nn.ReLU()]))) == expected


# ------------------------------------------------------------------------------- containers
def test_containers():
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert len(seq) == 3 and isinstance(seq[-1], nn.Linear) and len(seq[:2]) == 2
    del seq[1]
    assert list(seq._modules) == ["0", "1"]
    ml = nn.ModuleList([nn.ReLU()])
    ml.append(nn.GELU())
    ml.insert(0, nn.SiLU())
    assert [type(m).__name__ for m in ml] == ["SiLU", "ReLU", "GELU"]
    with pytest.raises(IndexError, match="index 3 is out of range"):
        ml[3]
    md = nn.ModuleDict({"a": nn.Linear(1, 1)})
    md["b"] = nn.ReLU()
    assert list(md) == ["a", "b"] and "a" in md and len(md) == 2
    assert [n for n, _ in md.named_parameters()] == ["a.weight", "a.bias"]


# ------------------------------------------------------------------------------- layers vs NumPy
@pytest.mark.parametrize("device", DEVICES)
def test_linear_layernorm_embedding(device):
    lin = nn.Linear(4, 3, device=device)
    x = st.randn(2, 5, 4, device=device)
    y = lin(x)
    assert y.shape == (2, 5, 3) and y.device.type == device
    emb = nn.Embedding(7, 4, padding_idx=-1, device=device)
    assert emb.padding_idx == 6
    idx = st.tensor([[0, 6], [3, 1]], device=device)
    e = emb(idx)
    assert e.shape == (2, 2, 4)
    ln = nn.LayerNorm(4, device=device)
    out = ln(x)
    if device == "meta":
        return
    np.testing.assert_allclose(host(y), host(x) @ host(lin.weight).T + host(lin.bias), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(host(e)[0, 1], np.zeros(4))
    np.testing.assert_array_equal(host(e)[1, 0], host(emb.weight)[3])
    xn = host(x)
    ref = (xn - xn.mean(-1, keepdims=True)) / np.sqrt(xn.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(host(out), ref, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_causal_self_attention_matches_numpy(device):
    st.manual_seed(0)
    attn = nn.CausalSelfAttention(8, 2, max_seq_len=6, device=device)
    x = st.randn(2, 5, 8, device=device)
    y = host(attn(x))
    W, b = host(attn.c_attn.weight), host(attn.c_attn.bias)
    qkv = host(x) @ W.T + b
    q, k, v = (qkv[..., i * 8:(i + 1) * 8].reshape(2, 5, 2, 4).transpose(0, 2, 1, 3) for i in range(3))
    s = q @ k.transpose(0, 1, 3, 2) / 2.0
    s = np.where(np.triu(np.ones((5, 5), bool), 1), -np.inf, s)
    w = np.exp(s - s.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    o = (w @ v).transpose(0, 2, 1, 3).reshape(2, 5, 8)
    ref = o @ host(attn.c_proj.weight).T + host(attn.c_proj.bias)
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-5)
    sdpa = F.scaled_dot_product_attention(*(st.tensor(a.astype(np.float32), device=device) for a in (q, k, v)),
                                          is_causal=True)
    np.testing.assert_allclose(host(sdpa), w @ v, rtol=1e-4, atol=1e-5)
    assert "mask" not in attn.state_dict()


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_sdpa_grouped_query_attention_is_torchs(device):
    # enable_gqa: fewer key / value heads than query heads, each serving a group (torch's repeat_interleave)
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    cases = [(((1, 6, 3, 8), (1, 2, 3, 8), (1, 3, 3, 8)), {}),
             (((2, 8, 5, 4), (2, 2, 5, 4), (2, 2, 5, 4)), {"is_causal": True}),
             (((6, 3, 8), (2, 3, 8), (2, 3, 8)), {})]
    for shapes, kw in cases:
        q, k, v = (rng.standard_normal(s).astype(np.float32) for s in shapes)
        ours = [st.tensor(a, device=device, requires_grad=True) for a in (q, k, v)]
        theirs = [torch.from_numpy(a).requires_grad_() for a in (q, k, v)]
        out = F.scaled_dot_product_attention(*ours, enable_gqa=True, **kw)
        want = torch.nn.functional.scaled_dot_product_attention(*theirs, enable_gqa=True, **kw)
        out.sum().backward()
        want.sum().backward()
        np.testing.assert_allclose(host(out), want.detach().numpy(), rtol=1e-4, atol=1e-5)
        for o, t in zip(ours, theirs):
            np.testing.assert_allclose(host(o.grad), t.grad.numpy(), rtol=1e-4, atol=1e-5)
    with pytest.raises(RuntimeError, match="Number of heads in key and value must divide the number of heads in"):
        F.scaled_dot_product_attention(*(st.randn(1, h, 3, 8, device=device) for h in (6, 4, 4)), enable_gqa=True)
    with pytest.raises(RuntimeError, match="must match the size"):  # without enable_gqa the heads must agree
        F.scaled_dot_product_attention(*(st.randn(1, h, 3, 8, device=device) for h in (6, 2, 2)))


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_functional_losses(device):
    logits = st.randn(6, 5, device=device)
    target = st.tensor([0, 4, 2, -100, 1, 3], device=device)
    lg, tg = host(logits), np.array([0, 4, 2, -100, 1, 3])
    logp = lg - np.log(np.exp(lg).sum(1, keepdims=True))
    valid = tg != -100
    per = np.where(valid, -logp[np.arange(6), np.where(valid, tg, 0)], 0.0)
    np.testing.assert_allclose(host(F.cross_entropy(logits, target)), per.sum() / valid.sum(), rtol=1e-5)
    np.testing.assert_allclose(host(F.cross_entropy(logits, target, reduction="sum")), per.sum(), rtol=1e-5)
    np.testing.assert_allclose(host(F.cross_entropy(logits, target, reduction="none")), per, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="avg is not a valid value for reduction"):
        F.cross_entropy(logits, target, reduction="avg")
    a, b = st.randn(3, 4, device=device), st.randn(3, 4, device=device)
    d = host(a) - host(b)
    np.testing.assert_allclose(host(F.mse_loss(a, b)), (d * d).mean(), rtol=1e-5)
    np.testing.assert_allclose(host(F.mse_loss(a, b, reduction="sum")), (d * d).sum(), rtol=1e-5)
    with pytest.warns(UserWarning, match="Using a target size"):
        F.mse_loss(a, b[:1])


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_mse_loss_is_one_node_and_broadcasts_as_torch(device):
    """F.mse_loss's op (Note [Functional operators]): torch's MseLossBackward0 saving the two operands, gradients
    2 (x - t) / n; a broadcast target is expanded first, so the mean counts the broadcast elements, as torch's."""
    x = st.randn(3, 1, dtype=st.float64, device=device, requires_grad=True)
    t = st.randn(3, 4, dtype=st.float64, device=device, requires_grad=True)
    with pytest.warns(UserWarning, match="Using a target size"):
        loss = F.mse_loss(x, t)
    assert type(loss.grad_fn).__name__ == "MseLossBackward0"
    loss.backward()

    def f64(v):  # (host() goes through float32)
        return v.detach().cpu().numpy()

    d = f64(x) - f64(t)
    np.testing.assert_allclose(f64(loss), (d * d).mean(), rtol=1e-12)
    np.testing.assert_allclose(f64(x.grad), (2 * d / 12).sum(1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(f64(t.grad), -2 * d / 12, rtol=1e-12)
    y = st.randn(5, device=device, requires_grad=True)
    node = F.mse_loss(y, st.zeros(5, device=device), reduction="sum").grad_fn
    assert len([v for v in node.saved if isinstance(v, st.autograd.graph.SavedTensor)]) == 2


@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("name, node, fn, slope", [
    ("smooth_l1", "SmoothL1LossBackward0", lambda x, t: F.smooth_l1_loss(x, t, beta=0.5),
     lambda d: np.where(np.abs(d) < 0.5, d / 0.5, np.sign(d))),
    ("huber", "HuberLossBackward0", lambda x, t: F.huber_loss(x, t, delta=0.5),
     lambda d: np.where(np.abs(d) < 0.5, d, 0.5 * np.sign(d))),
])
def test_piecewise_losses_are_one_node_as_torch(device, name, node, fn, slope):
    """Note [Functional operators]: torch's node; gradients of both operands, a broadcast target expanded first."""
    x = st.randn(3, 1, dtype=st.float64, device=device, requires_grad=True)
    t = st.randn(3, 4, dtype=st.float64, device=device, requires_grad=True)
    with pytest.warns(UserWarning, match="Using a target size"):
        loss = fn(x, t)
    assert type(loss.grad_fn).__name__ == node
    loss.backward()
    d = x.detach().cpu().numpy() - t.detach().cpu().numpy()
    np.testing.assert_allclose(x.grad.cpu().numpy(), (slope(d) / 12).sum(1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(t.grad.cpu().numpy(), -slope(d) / 12, rtol=1e-12)


def test_activations():
    x = st.tensor([-2.0, -0.5, 0.0, 1.5])
    xn = host(x)
    np.testing.assert_allclose(host(nn.ReLU()(x)), np.maximum(xn, 0))
    np.testing.assert_allclose(host(nn.SiLU()(x)), xn / (1 + np.exp(-xn)), rtol=1e-6)
    erf = np.vectorize(math.erf)
    np.testing.assert_allclose(host(nn.GELU()(x)), 0.5 * xn * (1 + erf(xn / math.sqrt(2))), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(host(F.softmax(x, dim=0)), np.exp(xn) / np.exp(xn).sum(), rtol=1e-6)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        F.softmax(x)


# ------------------------------------------------------------------------------- init
def test_init_fans_and_bounds():
    w = st.empty(300, 200)
    nn.init.xavier_uniform_(w)
    bound = math.sqrt(6 / 500)
    assert host(w).max() <= bound and host(w).min() >= -bound and host(w).std() > 0.9 * bound / math.sqrt(3)
    nn.init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
    assert abs(host(w).std() - math.sqrt(2 / 300)) < 0.05 * math.sqrt(2 / 300)
    nn.init.trunc_normal_(w, std=0.5, a=-0.5, b=0.5)
    assert host(w).max() <= 0.5 and host(w).min() >= -0.5
    conv = st.empty(8, 4, 3, 3)
    assert nn.init._calculate_fan_in_and_fan_out(conv) == (36, 72)
    assert nn.init.calculate_gain("leaky_relu", 0.2) == math.sqrt(2 / 1.04)
    assert nn.init.calculate_gain("tanh") == 5 / 3
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        nn.init.xavier_uniform_(st.empty(3))
    with pytest.raises(ValueError, match="Unsupported nonlinearity foo"):
        nn.init.calculate_gain("foo")
    g = st.Generator().manual_seed(3)
    a = host(nn.init.normal_(st.empty(5), generator=g))
    g.manual_seed(3)
    np.testing.assert_array_equal(a, host(nn.init.normal_(st.empty(5), generator=g)))
    assert (host(nn.init.zeros_(st.empty(3))) == 0).all() and (host(nn.init.ones_(st.empty(3))) == 1).all()
    np.testing.assert_array_equal(host(nn.init.eye_(st.empty(2, 3))), np.eye(2, 3))


def test_linear_default_init_bound():
    lin = nn.Linear(64, 32)
    bound = 1 / math.sqrt(64)
    assert np.abs(host(lin.weight)).max() <= bound and np.abs(host(lin.bias)).max() <= bound
    assert np.abs(host(lin.weight)).max() > 0.8 * bound


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_embedding_max_norm_renormalizes_referenced_rows(device):
    e = nn.Embedding(5, 3, max_norm=1.0, device=device)
    with st.no_grad():
        e.weight.copy_(st.tensor([[3.0, 4.0, 0.0], [0.6, 0.0, 0.0], [0.0, 0.0, 2.0], [1.0, 1.0, 1.0],
                                  [0.0, 0.1, 0.0]], device=device))
    out = e(st.tensor([0, 1, 0], device=device))
    norms = np.linalg.norm(host(e.weight), axis=1)
    np.testing.assert_allclose(norms, [1.0, 0.6, 2.0, math.sqrt(3), 0.1], rtol=1e-6)  # rows 2, 3 not referenced
    np.testing.assert_allclose(host(out)[0], [0.6, 0.8, 0.0], rtol=1e-6)
    assert repr(e) == "Embedding(5, 3, max_norm=1.0)"


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_clip_grad(device):
    a, b = nn.Parameter(st.zeros(3, device=device)), nn.Parameter(st.zeros(2, device=device))
    a.grad, b.grad = st.tensor([3.0, 0.0, 0.0], device=device), st.tensor([0.0, 4.0], device=device)
    total = nn.utils.clip_grad_norm_([a, b], max_norm=1.0)
    assert total.item() == pytest.approx(5.0)
    np.testing.assert_allclose(np.concatenate([host(a.grad), host(b.grad)]), [0.6, 0, 0, 0, 0.8], rtol=1e-5)
    a.grad = st.tensor([3.0, -7.0, 0.0], device=device)
    assert nn.utils.clip_grad_norm_(a, 10.0, norm_type=float("inf")).item() == 7.0
    np.testing.assert_array_equal(host(a.grad), [3.0, -7.0, 0.0])  # under max_norm: unchanged
    nn.utils.clip_grad_value_([a], 2.0)
    np.testing.assert_array_equal(host(a.grad), [2.0, -2.0, 0.0])
    a.grad = st.tensor([float("nan"), 1.0, 0.0], device=device)
    with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from `parameters` is non-finite"):
        nn.utils.clip_grad_norm_([a], 1.0, error_if_nonfinite=True)
    assert nn.utils.clip_grad_norm_([nn.Parameter(st.zeros(1))], 1.0).item() == 0.0


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_to_empty_materializes_a_meta_model(device):
    m = nn.Sequential(nn.Linear(3, 4, device="meta"), nn.LayerNorm(4, device="meta"))
    w = m[0].weight
    m.to_empty(device=device)
    assert m[0].weight is w and w.device.type == device and w.shape == (4, 3)
    m[1].reset_parameters()
    np.testing.assert_array_equal(host(m[1].weight), np.ones(4))
    assert m(st.randn(2, 3, device=device)).shape == (2, 4)


def test_forward_hooks():
    lin = nn.Linear(2, 2)
    calls = []
    pre = lin.register_forward_pre_hook(lambda m, args: (args[0] * 0,))
    post = lin.register_forward_hook(lambda m, args, out: calls.append(out.shape) or out + 1)
    first = lin.register_forward_hook(lambda m, args, out: calls.append("first"), prepend=True)
    out = lin(st.ones(3, 2))
    assert calls == ["first", (3, 2)]
    np.testing.assert_allclose(host(out), np.broadcast_to(host(lin.bias) + 1, (3, 2)), rtol=1e-6)
    pre.remove()
    post.remove()
    first.remove()
    np.testing.assert_allclose(host(lin(st.zeros(1, 2))), host(lin.bias)[None], rtol=1e-6)
    with lin.register_forward_pre_hook(lambda m, args: calls.append("ctx")):
        lin(st.zeros(1, 2))
    lin(st.zeros(1, 2))
    assert calls.count("ctx") == 1
