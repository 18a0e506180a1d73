"""RMSprop, Adagrad, Adamax, NAdam, RAdam, Adadelta, ASGD, Rprop, Adafactor and LBFGS against torch.optim (the oracle):
params and state after several steps, for-loop vs foreach, state_dict round trips, argument errors."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
from strided import optim

torch = pytest.importorskip("torch", reason="torch is the yardstick for these tests")

SHAPES = [(5, 3), (7,), (), (2, 3, 4)]
STEPS = 4
CONFIGS = {
    "RMSprop": [dict(lr=0.01), dict(lr=0.01, alpha=0.9, centered=True),
                dict(lr=0.01, momentum=0.9, weight_decay=0.1, maximize=True),
                dict(lr=0.01, centered=True, momentum=0.5, eps=1e-4)],
    "Adagrad": [dict(lr=0.1), dict(lr=0.1, lr_decay=0.05, initial_accumulator_value=0.3, weight_decay=0.1),
                dict(lr=0.1, maximize=True, eps=1e-6)],
    "Adamax": [dict(lr=0.05), dict(lr=0.05, betas=(0.8, 0.95), weight_decay=0.1),
               dict(lr=0.05, maximize=True), dict(lr=0.05, maximize=True, weight_decay=0.1)],
    "NAdam": [dict(lr=0.05), dict(lr=0.05, weight_decay=0.1, momentum_decay=0.01),
              dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)],
    "RAdam": [dict(lr=0.05), dict(lr=0.05, betas=(0.5, 0.6), weight_decay=0.1),  # rho_t > 5 from step 4 (rectified)
              dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)],
    "Adadelta": [dict(lr=1.0), dict(lr=0.5, rho=0.8, weight_decay=0.1), dict(lr=0.5, maximize=True, eps=1e-4)],
    "ASGD": [dict(lr=0.05), dict(lr=0.05, lambd=0.01, alpha=0.6, t0=2, weight_decay=0.1),
             dict(lr=0.05, lambd=0.01, t0=1, maximize=True)],
    "Rprop": [dict(lr=0.05), dict(lr=0.05, etas=(0.3, 1.7), step_sizes=(1e-3, 0.2)),
              dict(lr=0.05, maximize=True)],
    "Adafactor": [dict(lr=0.05), dict(lr=0.3, beta2_decay=-0.5, eps=(1e-6, 1e-2), d=1.5, weight_decay=0.1),
                  dict(lr=0.05, maximize=True, weight_decay=0.01), dict(lr=0.5, d=1.0)],  # lr 0.5: rho_t = 1/sqrt(t)
}
CASES = [pytest.param(name, kw, id=f"{name}-{i}") for name, kws in CONFIGS.items() for i, kw in enumerate(kws)]
TOL = {"float32": dict(rtol=2e-6, atol=2e-7), "float64": dict(rtol=1e-13, atol=1e-15)}


def _data(dtype):
    rng = np.random.default_rng(0)
    params = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    grads = [[np.sin(np.arange(int(np.prod(s))) * (k + 1.3) + i).reshape(s).astype(dtype) for i, s in
              enumerate(SHAPES)] for k in range(STEPS + 2)]
    grads[1][1][:3] = 0.0  # exact zeros: Rprop's sign == 0 branch
    return params, grads


def _run(lib, name, kwargs, dtype="float32", steps=STEPS, first=0, start=None, load=None):
    params_np, grads_np = _data(dtype)
    if start is not None:
        params_np = start
    if lib is torch:
        params = [torch.from_numpy(p.copy()) for p in params_np]
    else:
        params = [st.from_numpy(p.copy()) for p in params_np]
    opt = getattr(lib.optim, name)(params, **kwargs)
    if load is not None:
        opt.load_state_dict(load)
    for k in range(first, first + steps):
        for p, g in zip(params, grads_np[k]):
            p.grad = torch.from_numpy(g.copy()) if lib is torch else st.from_numpy(g.copy())
        opt.step()
    return params, opt


def _np(x):
    if isinstance(x, torch.Tensor):
        return x.detach().numpy()
    return x.detach().numpy() if isinstance(x, st.Tensor) else np.asarray(x)


def _assert_state_close(ours, theirs, tol):
    assert set(ours) == set(theirs)
    for i in theirs:
        assert set(ours[i]) == set(theirs[i])
        for key, value in theirs[i].items():
            mine = ours[i][key]
            if isinstance(value, torch.Tensor):
                assert mine.dtype.name == str(value.dtype).removeprefix("torch."), key
            np.testing.assert_allclose(_np(mine), _np(value), err_msg=key, **tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("foreach", [False, True])
@pytest.mark.parametrize("name,kwargs", CASES)
def test_against_torch(name, kwargs, foreach, dtype):
    ours, opt = _run(st, name, dict(kwargs, foreach=foreach), dtype)
    theirs, topt = _run(torch, name, dict(kwargs, foreach=foreach), dtype)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(_np(a), _np(b), **TOL[dtype])
    _assert_state_close(opt.state_dict()["state"], topt.state_dict()["state"], TOL[dtype])


@pytest.mark.parametrize("name,kwargs", CASES)
def test_foreach_matches_for_loop(name, kwargs):
    loop, _ = _run(st, name, dict(kwargs, foreach=False), "float64")
    fe, _ = _run(st, name, dict(kwargs, foreach=True), "float64")
    # ASGD's foreach path computes eta in float32 arithmetic, its for-loop in double (Note [ASGD's eta])
    tol = dict(rtol=1e-6, atol=1e-8) if name == "ASGD" else dict(rtol=1e-12, atol=1e-14)
    for a, b in zip(fe, loop):
        np.testing.assert_allclose(_np(a), _np(b), **tol)


@pytest.mark.parametrize("foreach", [False, True])
@pytest.mark.parametrize("name", list(CONFIGS))
def test_state_dict_round_trip_resumes_identically(name, foreach):
    kwargs = dict(CONFIGS[name][1], foreach=foreach)
    ref, _ = _run(st, name, kwargs, steps=STEPS + 2)
    first, opt = _run(st, name, kwargs, steps=2)
    sd = opt.state_dict()
    resumed, opt2 = _run(st, name, kwargs, steps=STEPS, first=2, start=[_np(p) for p in first], load=sd)
    for a, b in zip(resumed, ref):
        np.testing.assert_array_equal(_np(a), _np(b))
    assert opt2.state_dict()["param_groups"] == opt.state_dict()["param_groups"]


@pytest.mark.parametrize("name", list(CONFIGS))
def test_state_dict_layout_matches_torch(name):
    kwargs = CONFIGS[name][1]
    _, opt = _run(st, name, kwargs, steps=1)
    _, topt = _run(torch, name, kwargs, steps=1)
    ours, theirs = opt.state_dict(), topt.state_dict()
    assert ours["param_groups"][0] == theirs["param_groups"][0]  # capturable / differentiable / fused included
    assert {i: set(s) for i, s in ours["state"].items()} == {i: set(s) for i, s in theirs["state"].items()}


@pytest.mark.parametrize("name", [n for n in CONFIGS if n != "Adagrad"])
def test_params_without_grad_get_no_state(name):
    params = [st.zeros(3), st.ones(2)]
    opt = getattr(optim, name)(params, lr=0.1)
    params[0].grad = st.ones(3)
    opt.step()
    assert params[1] not in opt.state
    np.testing.assert_array_equal(params[1].numpy(), 1.0)


def test_adagrad_state_is_created_in_the_constructor_as_torch():
    opt = optim.Adagrad([st.zeros(3)], initial_accumulator_value=0.5)
    (state,) = opt.state.values()
    assert state["step"].item() == 0.0
    np.testing.assert_array_equal(state["sum"].numpy(), 0.5)


BAD_ARGS = [
    ("RMSprop", dict(lr=-1.0)), ("RMSprop", dict(eps=-1.0)), ("RMSprop", dict(momentum=-0.5)),
    ("RMSprop", dict(weight_decay=-1.0)), ("RMSprop", dict(alpha=-0.1)),
    ("Adagrad", dict(lr=-1.0)), ("Adagrad", dict(lr_decay=-1.0)), ("Adagrad", dict(weight_decay=-1e-3)),
    ("Adagrad", dict(initial_accumulator_value=-1.0)), ("Adagrad", dict(eps=-1.0)),
    ("Adamax", dict(lr=-1.0)), ("Adamax", dict(eps=-1.0)), ("Adamax", dict(betas=(1.0, 0.9))),
    ("Adamax", dict(betas=(0.9, -0.1))), ("Adamax", dict(weight_decay=-1.0)),
    ("NAdam", dict(lr=-1.0)), ("NAdam", dict(betas=(0.9, 1.0))), ("NAdam", dict(momentum_decay=-1.0)),
    ("NAdam", dict(eps=-1.0)), ("NAdam", dict(weight_decay=-1.0)),
    ("RAdam", dict(lr=-1.0)), ("RAdam", dict(betas=(-0.1, 0.9))), ("RAdam", dict(eps=-1.0)),
    ("RAdam", dict(weight_decay=-1.0)),
    ("Adadelta", dict(lr=-1.0)), ("Adadelta", dict(rho=1.5)), ("Adadelta", dict(eps=-1.0)),
    ("Adadelta", dict(weight_decay=-1.0)),
    ("ASGD", dict(lr=-1.0)), ("ASGD", dict(weight_decay=-1.0)),
    ("Rprop", dict(lr=-1.0)), ("Rprop", dict(etas=(1.2, 0.5))), ("Rprop", dict(etas=(0.0, 1.2))),
    ("LBFGS", dict(lr=-1.0)),
    ("Adafactor", dict(lr=-1.0)), ("Adafactor", dict(beta2_decay=0.5)), ("Adafactor", dict(eps=(-1.0, 1e-3))),
    ("Adafactor", dict(eps=(None, -1.0))), ("Adafactor", dict(d=0.5)), ("Adafactor", dict(weight_decay=-1.0)),
]


@pytest.mark.parametrize("name,kwargs", BAD_ARGS, ids=[f"{n}-{next(iter(k))}" for n, k in BAD_ARGS])
def test_bad_arguments_raise_torchs_message(name, kwargs):
    with pytest.raises(ValueError) as theirs:
        getattr(torch.optim, name)([torch.zeros(2)], **kwargs)
    with pytest.raises(ValueError) as ours:
        getattr(optim, name)([st.zeros(2)], **kwargs)
    assert str(ours.value) == str(theirs.value)


def test_rmsprop_flags_after_centered_are_keyword_only():
    # torch's 8th positional parameter is `capturable`; strided does not take it (Note [Keyword-only flags])
    with pytest.raises(TypeError):
        optim.RMSprop([st.zeros(2)], 0.01, 0.99, 1e-8, 0, 0, False, True)


# ------------------------------------------------------------------------------------------ LBFGS
_RNG = np.random.default_rng(1)
_A, _B, _X0, _W0 = (_RNG.standard_normal((6, 4)), _RNG.standard_normal(6), _RNG.standard_normal(4),
                    _RNG.standard_normal((2, 2)))


def _lbfgs(lib, dtype, kwargs, steps=3):
    if lib is torch:
        def conv(a):
            return torch.tensor(a, dtype=getattr(torch, dtype))
    else:
        def conv(a):
            return st.from_numpy(np.array(a)).to(getattr(st, dtype))
    x, w, a, b = conv(_X0), conv(_W0), conv(_A), conv(_B)
    x.requires_grad_(True)
    w.requires_grad_(True)
    opt = lib.optim.LBFGS([x, w], **kwargs)

    def closure():
        opt.zero_grad()
        r = (a @ x) - b
        loss = (r * r).sum() + 0.1 * (x * x * x * x).sum() + ((w * w).sum() - 1.0) ** 2
        loss = loss + (w * x[:2].reshape(1, 2)).sum()
        loss.backward()
        return loss

    losses = [float(opt.step(closure).detach()) for _ in range(steps)]
    flat = np.concatenate([_np(x).ravel(), _np(w).ravel()])
    state = opt.state[x]
    return losses, flat, state["func_evals"], state["n_iter"]


LBFGS_CASES = [dict(lr=1, max_iter=5), dict(lr=0.5, max_iter=7, history_size=3),
               dict(line_search_fn="strong_wolfe", max_iter=10),
               dict(line_search_fn="strong_wolfe", history_size=2, max_iter=6, maximize=False)]


@pytest.mark.parametrize("kwargs", LBFGS_CASES)
def test_lbfgs_against_torch(kwargs):
    for dtype, tol in (("float64", 1e-12), ("float32", 1e-3)):
        losses, flat, evals, iters = _lbfgs(st, dtype, kwargs)
        t_losses, t_flat, t_evals, t_iters = _lbfgs(torch, dtype, kwargs)
        np.testing.assert_allclose(flat, t_flat, rtol=tol, atol=tol, err_msg=dtype)
        np.testing.assert_allclose(losses, t_losses, rtol=tol, err_msg=dtype)
        if dtype == "float64":  # float32 reductions round differently, so the stopping tests may differ
            assert (evals, iters) == (t_evals, t_iters)


def test_lbfgs_errors():
    a, b = st.zeros(2), st.zeros(3)
    with pytest.raises(ValueError, match=r"LBFGS doesn't support per-parameter options \(parameter groups\)"):
        optim.LBFGS([{"params": [a]}, {"params": [b]}])
    p = st.ones(2, requires_grad=True)
    opt = optim.LBFGS([p], line_search_fn="wolfe")

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(closure)


def test_adafactor_keeps_factored_state_and_refuses_complex_as_torch():
    w, b = st.zeros(6, 4), st.zeros(4)
    opt = optim.Adafactor([w, b])
    w.grad, b.grad = st.ones(6, 4), st.ones(4)
    opt.step()
    assert [tuple(t.shape) for t in (opt.state[w]["row_var"], opt.state[w]["col_var"])] == [(6, 1), (1, 4)]
    assert set(opt.state[b]) == {"step", "variance"}  # a vector keeps a full second moment
    z = st.zeros(2, dtype=st.complex64)
    z.grad = st.ones(2, dtype=st.complex64)
    with pytest.raises(RuntimeError, match="Adafactor does not support complex parameters"):
        optim.Adafactor([z]).step()
