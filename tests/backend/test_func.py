"""strided.func (functional_call, grad, grad_and_value) and nn.utils.stateless.functional_call, compared
with torch.func: results, gradients, argnums / has_aux, tied weights, strict and the errors."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
from strided import func as sfunc
from strided import nn
from strided.nn.utils import parametrizations as PS

torch = pytest.importorskip("torch")


def host(t):
    return np.asarray(t.detach().cpu().numpy(), dtype=np.float64)


def close(s, t, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(host(s), t.detach().double().numpy(), rtol=rtol, atol=atol)


def twins():
    t = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    s = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    s.load_state_dict({k: st.tensor(v.numpy()) for k, v in t.state_dict().items()})
    return s, t


X = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)


# ------------------------------------------------------------------------------- functional_call
def test_functional_call_output_and_grads_match_torch():
    s, t = twins()
    rng = np.random.default_rng(1)
    new = {k: rng.standard_normal(tuple(v.shape)).astype(np.float32) for k, v in t.state_dict().items()}
    sp = {k: st.tensor(v, requires_grad=True) for k, v in new.items()}
    tp = {k: torch.tensor(v, requires_grad=True) for k, v in new.items()}
    ys = sfunc.functional_call(s, sp, (st.tensor(X),))
    yt = torch.func.functional_call(t, tp, (torch.tensor(X),))
    close(ys, yt)
    ys.square().sum().backward()
    yt.square().sum().backward()
    for k in new:
        close(sp[k].grad, tp[k].grad, rtol=1e-4, atol=1e-5)
    assert all(p.grad is None for p in s.parameters())  # the module's own parameters were not used
    close(s(st.tensor(X)), t(torch.tensor(X)))  # and are back in place
    assert isinstance(s[0].weight, nn.Parameter)


def test_functional_call_partial_dicts_kwargs_and_errors():
    s, t = twins()
    w = np.zeros((2, 4), np.float32)
    ys = sfunc.functional_call(s, ({"2.weight": st.tensor(w)}, {}), st.tensor(X))
    yt = torch.func.functional_call(t, ({"2.weight": torch.tensor(w)}, {}), torch.tensor(X))
    close(ys, yt)
    with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
        sfunc.functional_call(s, ({"2.bias": st.zeros(2)}, {"2.bias": st.zeros(2)}), st.tensor(X))
    with pytest.raises(ValueError, match="Expected parameter_and_buffer_dicts to be a dict"):
        sfunc.functional_call(s, 3, st.tensor(X))
    with pytest.raises(RuntimeError, match=r"Error\(s\) in reparametrizing for Sequential:") as e:
        sfunc.functional_call(s, {"2.bias": st.zeros(2), "nope": st.zeros(1)}, st.tensor(X), strict=True)
    assert "Unexpected key(s): 'nope'." in str(e.value) and "Missing key(s): '0.bias'" in str(e.value)

    class Kw(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(st.ones(1))

        def forward(self, x, *, shift):
            return x * self.scale + shift

    out = sfunc.functional_call(Kw(), {"scale": st.full((1,), 3.0)}, (st.ones(2),), {"shift": 1.0})
    np.testing.assert_allclose(host(out), [4.0, 4.0])


def test_functional_call_tied_weights_and_buffers():
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(2, 2, bias=False)
            self.b = nn.Linear(2, 2, bias=False)
            self.b.weight = self.a.weight
            self.register_buffer("count", st.zeros(()))

        def forward(self, x):
            return self.b(self.a(x)) + self.count

    m = Tied()
    eye = st.eye(2)
    out = sfunc.functional_call(m, {"a.weight": eye * 2, "count": st.tensor(1.0)}, st.ones(1, 2))
    np.testing.assert_allclose(host(out), [[5.0, 5.0]])  # b.weight follows a.weight (tie_weights)
    out = sfunc.functional_call(m, {"a.weight": eye * 2}, st.ones(1, 2), tie_weights=False)
    assert host(out).shape == (1, 2)
    with pytest.raises(ValueError, match="which are tied. Consider using tie_weights=False"):
        sfunc.functional_call(m, {"a.weight": eye, "b.weight": eye * 3}, st.ones(1, 2))
    assert float(m.count) == 0.0 and m.b.weight is m.a.weight


def test_stateless_functional_call_is_deprecated_and_works_on_parametrized():
    s, t = twins()
    PS.weight_norm(s[0])
    torch.nn.utils.parametrizations.weight_norm(t[0])
    sp = {k: v.detach().clone().requires_grad_() for k, v in s.named_parameters()}
    tp = {k: v.detach().clone().requires_grad_() for k, v in t.named_parameters()}
    assert list(sp) == list(tp)
    with pytest.warns(FutureWarning, match="Please use `torch.func.functional_call`"):
        ys = nn.utils.stateless.functional_call(s, sp, (st.tensor(X),))
    yt = torch.func.functional_call(t, tp, (torch.tensor(X),))
    close(ys, yt)
    ys.sum().backward()
    yt.sum().backward()
    for k in sp:
        close(sp[k].grad, tp[k].grad, rtol=1e-4, atol=1e-5)


# ------------------------------------------------------------------------------- grad / grad_and_value
def test_grad_of_a_loss_over_params_matches_torch():
    s, t = twins()
    y = np.random.default_rng(2).standard_normal((5, 2)).astype(np.float32)

    def loss(lib, func, mod):
        def f(params, x, target):
            return ((func.functional_call(mod, params, (x,)) - target) ** 2).mean()
        return f

    sp = {k: v.detach() for k, v in s.named_parameters()}
    tp = {k: v.detach() for k, v in t.named_parameters()}
    gs, vs = sfunc.grad_and_value(loss(st, sfunc, s))(sp, st.tensor(X), st.tensor(y))
    gt, vt = torch.func.grad_and_value(loss(torch, torch.func, t))(tp, torch.tensor(X), torch.tensor(y))
    close(vs, vt)
    assert list(gs) == list(gt)
    for k in gt:
        close(gs[k], gt[k], rtol=1e-4, atol=1e-6)
        assert not gs[k].requires_grad


def test_grad_argnums_has_aux_nested():
    a, b = np.array([1.0, 2.0, 3.0], np.float32), np.array([0.5, -1.0, 2.0], np.float32)

    def f(x, y):
        return (x.sin() * y).sum(), {"prod": x * y}

    for argnums in (0, 1, (0, 1), (1, 0), -1):
        gs, aux_s = sfunc.grad(f, argnums=argnums, has_aux=True)(st.tensor(a), st.tensor(b))
        gt, aux_t = torch.func.grad(f, argnums=argnums, has_aux=True)(torch.tensor(a), torch.tensor(b))
        close(aux_s["prod"], aux_t["prod"])
        if isinstance(argnums, tuple):
            assert isinstance(gs, tuple) and len(gs) == len(gt)
            for g1, g2 in zip(gs, gt):
                close(g1, g2)
        else:
            close(gs, gt)
    g = sfunc.grad_and_value(lambda x: (x ** 3).sum(), has_aux=False)(st.tensor(a))
    np.testing.assert_allclose(host(g[0]), 3 * a ** 2, rtol=1e-6)
    # nested: d2/dx2 x^3 = 6x; no perturbation confusion with a captured x
    second = sfunc.grad(sfunc.grad(lambda x: x ** 3))(st.tensor(2.0))
    assert float(second) == pytest.approx(12.0)
    mixed = sfunc.grad(lambda x: sfunc.grad(lambda y: x * y)(x))(st.tensor(2.0))
    assert float(mixed) == float(torch.func.grad(lambda x: torch.func.grad(lambda y: x * y)(x))(torch.tensor(2.0)))
    # an input that already requires grad: the result stays differentiable w.r.t. it
    x = st.tensor(a, requires_grad=True)
    gx = sfunc.grad(lambda v: (v ** 2).sum())(x)
    gx.sum().backward()
    np.testing.assert_allclose(host(x.grad), [2.0, 2.0, 2.0])
    zero = sfunc.grad(lambda v, w: (w * 2).sum(), argnums=0)(st.tensor(a), st.tensor(b))
    np.testing.assert_array_equal(host(zero), 0.0)


def test_grad_errors_match_torch():
    cases = [
        (lambda x: x * 2, {}, (np.ones(3, np.float32),)),
        (lambda x: x.sum(), {"has_aux": True}, (np.ones(3, np.float32),)),
        (lambda x: x.sum(), {"argnums": 2}, (np.ones(3, np.float32),)),
        (lambda x, y: x.sum(), {"argnums": (0, 0)}, (np.ones(3, np.float32), np.ones(3, np.float32))),
        (lambda x: x.sum(), {"argnums": ()}, (np.ones(3, np.float32),)),
        (lambda x: x.sum(), {"argnums": [0]}, (np.ones(3, np.float32),)),
        (lambda x: 3.0, {}, (np.ones(3, np.float32),)),
    ]
    for fn, kw, arrays in cases:
        with pytest.raises(Exception) as es:
            sfunc.grad(fn, **kw)(*[st.tensor(a) for a in arrays])
        with pytest.raises(Exception) as et:
            torch.func.grad(fn, **kw)(*[torch.tensor(a) for a in arrays])
        assert type(es.value) is type(et.value)
        assert str(es.value).replace("strided", "torch") == str(et.value)
