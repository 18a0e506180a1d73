"""strided.nn.utils.parametrize / parametrizations and the hook forms of weight_norm / spectral_norm,
compared with torch: values, gradients w.r.t. the originals, state-dict keys, removal, errors."""

from __future__ import annotations

import copy
import pickle
import warnings

import numpy as np
import pytest

import strided as st
from strided import nn
from strided.nn.utils import parametrizations as PS
from strided.nn.utils import parametrize as P
from strided.testing import available_devices

torch = pytest.importorskip("torch")

DEVICES = [d for d in available_devices() if d != "meta"]


def host(t):
    return np.asarray(t.detach().cpu().numpy(), dtype=np.float64)


def close(s, t, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(host(s), t.detach().double().numpy(), rtol=rtol, atol=atol)


def twin_linear(n_in, n_out, device="cpu"):
    t = torch.nn.Linear(n_in, n_out)
    s = nn.Linear(n_in, n_out, device=device)
    s.load_state_dict({k: st.tensor(v.numpy(), device=device) for k, v in t.state_dict().items()})
    return s, t


def twin_conv(device="cpu"):
    t = torch.nn.Conv2d(2, 3, 3)
    s = nn.Conv2d(2, 3, 3, device=device)
    s.load_state_dict({k: st.tensor(v.numpy(), device=device) for k, v in t.state_dict().items()})
    return s, t


def make_sym(lib):
    class Symmetric(lib.nn.Module):
        def forward(self, X):  # noqa: N803
            return X.triu() + X.triu(1).mT

        def right_inverse(self, A):  # noqa: N803
            return A.triu()

    return Symmetric()


def make_scale(lib):
    class Scale(lib.nn.Module):
        def forward(self, X):  # noqa: N803
            return X * 2.0

        def right_inverse(self, A):  # noqa: N803
            return A / 2.0

    return Scale()


def make_rank_one(lib):
    class RankOne(lib.nn.Module):
        def forward(self, x, y):
            return x.unsqueeze(-1) @ y.unsqueeze(-2)

        def right_inverse(self, Z):  # noqa: N803
            return Z[:, 0].clone(), Z[0, :].clone()

    return RankOne()


# ------------------------------------------------------------------------------- register_parametrization
def test_register_forward_backward_state_dict_match_torch():
    s, t = twin_linear(4, 4)
    P.register_parametrization(s, "weight", make_sym(st))
    torch.nn.utils.parametrize.register_parametrization(t, "weight", make_sym(torch))
    assert type(s).__name__ == type(t).__name__ == "ParametrizedLinear"
    assert P.type_before_parametrizations(s) is nn.Linear and P.is_parametrized(s) and P.is_parametrized(s, "weight")
    assert not P.is_parametrized(s, "bias")
    assert list(s.state_dict()) == list(t.state_dict())
    for k, v in t.state_dict().items():
        close(s.state_dict()[k], v)
    assert [n for n, _ in s.named_parameters()] == [n for n, _ in t.named_parameters()]
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    s(st.tensor(x)).pow(2).sum().backward()
    t(torch.tensor(x)).pow(2).sum().backward()
    close(s.weight, t.weight)
    close(s.parametrizations.weight.original.grad, t.parametrizations.weight.original.grad)
    close(s.bias.grad, t.bias.grad)


def test_chained_parametrizations_and_assignment():
    s, t = twin_linear(3, 3)
    P.register_parametrization(s, "weight", make_sym(st))
    torch.nn.utils.parametrize.register_parametrization(t, "weight", make_sym(torch))
    P.register_parametrization(s, "weight", make_scale(st))
    torch.nn.utils.parametrize.register_parametrization(t, "weight", make_scale(torch))
    assert len(s.parametrizations.weight) == 2
    close(s.weight, t.weight)
    a = np.arange(9, dtype=np.float32).reshape(3, 3)
    a = a + a.T
    s.weight = st.tensor(a)
    t.weight = torch.tensor(a)
    close(s.weight, t.weight)
    close(s.parametrizations.weight.original, t.parametrizations.weight.original)
    np.testing.assert_allclose(host(s.weight), a, rtol=1e-6)


def test_several_originals_and_optimizer_sees_them():
    s, t = twin_linear(3, 3)
    P.register_parametrization(s, "weight", make_rank_one(st))
    torch.nn.utils.parametrize.register_parametrization(t, "weight", make_rank_one(torch))
    assert list(s.state_dict()) == list(t.state_dict())
    assert not hasattr(s.parametrizations.weight, "original")
    close(s.weight, t.weight)
    so = st.optim.SGD(s.parameters(), lr=0.1)
    to = torch.optim.SGD(t.parameters(), lr=0.1)
    x = np.ones((2, 3), np.float32)
    s(st.tensor(x)).sum().backward()
    t(torch.tensor(x)).sum().backward()
    so.step()
    to.step()
    for k, v in t.state_dict().items():
        close(s.state_dict()[k], v)
    with pytest.raises(ValueError, match="Cannot leave unparametrized"):
        P.remove_parametrizations(s, "weight", leave_parametrized=False)
    P.remove_parametrizations(s, "weight")
    torch.nn.utils.parametrize.remove_parametrizations(t, "weight")
    assert isinstance(s.weight, nn.Parameter)
    close(s.weight, t.weight)


def test_original_keeps_identity_for_optimizers_and_to():
    s = nn.Linear(3, 3)
    w = s.weight
    opt = st.optim.SGD(s.parameters(), lr=1.0)
    P.register_parametrization(s, "weight", make_scale(st))
    assert s.parametrizations.weight.original is w  # an optimizer built before still updates it
    s(st.ones(1, 3)).sum().backward()
    opt.step()
    assert w.grad is not None
    s.to(st.float64)
    assert s.parametrizations.weight.original is w and w.dtype == st.float64 and s.weight.dtype == st.float64


@pytest.mark.parametrize("leave", [True, False])
def test_remove_parametrizations_matches_torch(leave):
    s, t = twin_linear(3, 3)
    P.register_parametrization(s, "weight", make_scale(st))
    torch.nn.utils.parametrize.register_parametrization(t, "weight", make_scale(torch))
    P.remove_parametrizations(s, "weight", leave_parametrized=leave)
    torch.nn.utils.parametrize.remove_parametrizations(t, "weight", leave_parametrized=leave)
    assert type(s) is nn.Linear and not P.is_parametrized(s) and "parametrizations" not in s._modules
    assert isinstance(s.weight, nn.Parameter)
    assert list(s.state_dict()) == list(t.state_dict())
    close(s.weight, t.weight)


def test_load_state_dict_round_trip_and_buffer():
    s, _ = twin_linear(4, 4)
    P.register_parametrization(s, "weight", make_sym(st))
    s2 = nn.Linear(4, 4)
    P.register_parametrization(s2, "weight", make_sym(st))
    s2.load_state_dict(s.state_dict())
    np.testing.assert_allclose(host(s2.weight), host(s.weight))
    with pytest.raises(RuntimeError, match="Unexpected key"):
        nn.Linear(4, 4).load_state_dict(s.state_dict())
    m = nn.Module()
    m.register_buffer("b", st.arange(3.0))
    P.register_parametrization(m, "b", make_scale(st))
    assert list(m.state_dict()) == ["parametrizations.b.original"]
    np.testing.assert_allclose(host(m.b), [0.0, 1.0, 2.0])  # forward(right_inverse(b)) == b
    np.testing.assert_allclose(host(m.parametrizations.b.original), [0.0, 0.5, 1.0])


def test_cached():
    calls = []

    class Count(nn.Module):
        def forward(self, x):
            calls.append(1)
            return x * 1.0

    m = nn.Linear(2, 2)
    P.register_parametrization(m, "weight", Count())
    calls.clear()
    with P.cached():
        a, b = m.weight, m.weight
        assert a is b
    assert len(calls) == 1
    assert m.weight is not a


def test_errors_match_torch():
    def both(fn):
        msgs = []
        for lib, mod in ((st, P), (torch, torch.nn.utils.parametrize)):
            with pytest.raises(Exception) as e:
                fn(lib, mod)
            msgs.append((type(e.value), str(e.value).replace("torch", "strided")))
        return msgs

    class Shape(nn.Module):
        def forward(self, x):
            return x[0]

    class TShape(torch.nn.Module):
        def forward(self, x):
            return x[0]

    (se, sm), (te, tm) = both(lambda lib, mod: mod.register_parametrization(
        lib.nn.Linear(2, 3), "weight", Shape() if lib is st else TShape()))
    assert se is te and sm == tm
    (se, sm), (te, tm) = both(lambda lib, mod: mod.remove_parametrizations(lib.nn.Linear(2, 2), "weight"))
    assert se is te is ValueError and sm.split(" does not")[1] == tm.split(" does not")[1]
    (se, sm), (te, tm) = both(lambda lib, mod: mod.register_parametrization(lib.nn.Linear(2, 2), "foo",
                                                                            make_scale(lib)))
    assert se is te is ValueError and sm.endswith("with name 'foo'") and tm.endswith("with name 'foo'")
    m = P.register_parametrization(nn.Linear(2, 2), "weight", make_scale(st))
    with pytest.raises(RuntimeError, match="only supported through state_dict"):
        pickle.dumps(m)
    assert type(copy.deepcopy(m)).__name__ == "ParametrizedLinear"


# ------------------------------------------------------------------------------- parametrizations
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_matches_torch(device, dim):
    s, t = twin_linear(3, 5, device)
    PS.weight_norm(s, dim=dim)
    torch.nn.utils.parametrizations.weight_norm(t, dim=dim)
    assert list(s.state_dict()) == list(t.state_dict())
    for k, v in t.state_dict().items():
        close(s.state_dict()[k], v)
    x = np.random.default_rng(1).standard_normal((2, 3)).astype(np.float32)
    close(s(st.tensor(x, device=device)), t(torch.tensor(x)))
    s(st.tensor(x, device=device)).square().sum().backward()
    t(torch.tensor(x)).square().sum().backward()
    for i in (0, 1):
        close(getattr(s.parametrizations.weight, f"original{i}").grad,
              getattr(t.parametrizations.weight, f"original{i}").grad, rtol=1e-4, atol=1e-5)


def test_weight_norm_conv_and_old_checkpoint():
    s, t = twin_conv()
    PS.weight_norm(s)
    torch.nn.utils.parametrizations.weight_norm(t)
    x = np.random.default_rng(2).standard_normal((1, 2, 5, 5)).astype(np.float32)
    close(s(st.tensor(x)), t(torch.tensor(x)), atol=1e-5)
    old = nn.Linear(3, 4)
    with pytest.warns(FutureWarning, match="parametrizations.weight_norm"):
        nn.utils.weight_norm(old)
    new = PS.weight_norm(nn.Linear(3, 4))
    new.load_state_dict(old.state_dict())  # weight_g / weight_v are renamed to original0 / original1
    np.testing.assert_allclose(host(new.weight), host(old.weight), rtol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("conv", [False, True])
def test_spectral_norm_matches_torch(device, conv):
    s, t = twin_conv(device) if conv else twin_linear(4, 3, device)
    PS.spectral_norm(s, n_power_iterations=2)
    torch.nn.utils.parametrizations.spectral_norm(t, n_power_iterations=2)
    assert list(s.state_dict()) == list(t.state_dict())
    sn_s, sn_t = s.parametrizations.weight[0], t.parametrizations.weight[0]
    with st.no_grad():  # same u, v start (the random init differs)
        sn_s._u.copy_(st.tensor(sn_t._u.numpy(), device=device))
        sn_s._v.copy_(st.tensor(sn_t._v.numpy(), device=device))
    shape = (2, 2, 5, 5) if conv else (2, 4)
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    # torch's CPU float32 is the reference: a CUDA convolution runs without TF32 here (test_conv_precision
    # checks its TF32 default)
    with st.backends.cudnn.flags(enabled=True, allow_tf32=False):
        for _ in range(2):  # training mode: each forward runs the power iteration
            ys, yt = s(st.tensor(x, device=device)), t(torch.tensor(x))
            close(ys, yt, atol=1e-5)
        ys.square().sum().backward()
    yt.square().sum().backward()
    close(s.parametrizations.weight.original.grad, t.parametrizations.weight.original.grad, rtol=1e-4, atol=1e-5)
    for k, v in t.state_dict().items():
        close(s.state_dict()[k], v, atol=1e-5)
    s.eval()
    t.eval()
    u = host(sn_s._u)
    close(s.weight, t.weight, atol=1e-5)
    np.testing.assert_array_equal(host(sn_s._u), u)  # eval: no update


def test_spectral_norm_errors():
    with pytest.raises(ValueError, match="has no parameter or buffer with name 'foo'"):
        PS.spectral_norm(nn.Linear(2, 2), "foo")
    with pytest.raises(IndexError, match="Dimension out of range"):
        PS.spectral_norm(nn.Linear(2, 2), dim=2)
    m = nn.ConvTranspose2d(2, 3, 3)
    PS.spectral_norm(m)
    assert m.parametrizations.weight[0].dim == 1


@pytest.mark.parametrize("omap", ["matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 3)])
def test_orthogonal(omap, shape):
    m = PS.orthogonal(nn.Linear(shape[1], shape[0]), orthogonal_map=omap)
    w = host(m.weight)
    small = min(shape)
    gram = w @ w.T if shape[0] <= shape[1] else w.T @ w
    np.testing.assert_allclose(gram, np.eye(small), atol=1e-5)
    m(st.ones(2, shape[1])).sum().backward()
    assert m.parametrizations.weight.original.grad is not None
    q = np.linalg.qr(np.random.default_rng(4).standard_normal((max(shape), max(shape))))[0][: shape[0], : shape[1]]
    m.weight = st.tensor(q.astype(np.float32))
    np.testing.assert_allclose(host(m.weight), q, atol=1e-5)


def test_orthogonal_matches_torch_forward():
    s, t = twin_linear(4, 4)
    PS.orthogonal(s, orthogonal_map="cayley", use_trivialization=False)
    torch.nn.utils.parametrizations.orthogonal(t, orthogonal_map="cayley", use_trivialization=False)
    close(s.weight, t.weight, atol=1e-5)
    with pytest.raises(ValueError, match='orthogonal_map has to be one of'):
        PS.orthogonal(nn.Linear(2, 2), orthogonal_map="nope")


# ------------------------------------------------------------------------------- hook forms
def test_hook_weight_norm_matches_torch():
    s, t = twin_linear(3, 4)
    with pytest.warns(FutureWarning, match="is deprecated in favor of"):
        nn.utils.weight_norm(s, dim=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.nn.utils.weight_norm(t, dim=1)
    assert sorted(s.state_dict()) == sorted(t.state_dict())
    x = np.random.default_rng(5).standard_normal((2, 3)).astype(np.float32)
    s(st.tensor(x)).sum().backward()
    t(torch.tensor(x)).sum().backward()
    close(s.weight_g.grad, t.weight_g.grad, rtol=1e-4, atol=1e-5)
    close(s.weight_v.grad, t.weight_v.grad, rtol=1e-4, atol=1e-5)
    with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"), pytest.warns(FutureWarning):
        nn.utils.weight_norm(s, dim=1)
    nn.utils.remove_weight_norm(s)
    torch.nn.utils.remove_weight_norm(t)
    assert list(s.state_dict()) == list(t.state_dict()) == ["bias", "weight"]
    close(s.weight, t.weight)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found in"):
        nn.utils.remove_weight_norm(s)


def test_hook_spectral_norm_matches_torch():
    s, t = twin_conv()
    nn.utils.spectral_norm(s)
    torch.nn.utils.spectral_norm(t)
    assert list(s.state_dict()) == list(t.state_dict())
    with st.no_grad():
        s.weight_u.copy_(st.tensor(t.weight_u.numpy()))
        s.weight_v.copy_(st.tensor(t.weight_v.numpy()))
    x = np.random.default_rng(6).standard_normal((1, 2, 5, 5)).astype(np.float32)
    ys, yt = s(st.tensor(x)), t(torch.tensor(x))
    close(ys, yt, atol=1e-5)
    ys.sum().backward()
    yt.sum().backward()
    close(s.weight_orig.grad, t.weight_orig.grad, rtol=1e-4, atol=1e-5)
    close(s.weight_u, t.weight_u, atol=1e-5)
    s2 = nn.utils.spectral_norm(nn.Conv2d(2, 3, 3))
    s2.load_state_dict(s.state_dict())
    nn.utils.remove_spectral_norm(s)
    torch.nn.utils.remove_spectral_norm(t)
    assert list(s.state_dict()) == list(t.state_dict())
    close(s.weight, t.weight, atol=1e-5)
    assert not s.__dict__["_load_state_dict_pre_hooks"]
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found in"):
        nn.utils.remove_spectral_norm(s)
