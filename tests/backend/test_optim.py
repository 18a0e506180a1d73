"""strided.optim: for-loop, foreach and fused agree; against torch.optim when torch is importable;
LR schedulers; state_dict; zero_grad; the multi-tensor launch planning and its NVRTC compile."""

from __future__ import annotations

import itertools
import math
import struct

import numpy as np
import pytest

import strided as st
from strided import optim
from strided.testing import available_devices

SHAPES = [(5, 3), (7,), (), (2, 3, 4), (1,)]
IMPLS = {"for-loop": dict(foreach=False), "foreach": dict(foreach=True), "fused": dict(fused=True)}


def _params(dtype=st.float32, seed=0):
    rng = np.random.default_rng(seed)
    return [st.from_numpy(rng.standard_normal(s).astype(np.float32)).to(dtype) for s in SHAPES]


def _grads(step, dtype=st.float32):
    out = []
    for i, s in enumerate(SHAPES):
        n = int(np.prod(s))
        g = np.sin(np.arange(n) * (step + 1.3) + i).reshape(s).astype(np.float32)
        out.append(st.from_numpy(g).to(dtype))
    return out


def _run(cls, kwargs, steps=4, dtype=st.float32, skip_grad=None):
    params = _params(dtype)
    opt = cls(params, **kwargs)
    for k in range(steps):
        for i, (p, g) in enumerate(zip(params, _grads(k, dtype))):
            p.grad = None if skip_grad == i else g
        opt.step()
    return [p.numpy().astype(np.float64) for p in params], opt


def _flag_sets(cls):
    if cls is optim.SGD:
        for momentum, dampening, nesterov, wd, maximize in itertools.product(
                (0.0, 0.9), (0.0, 0.2), (False, True), (0.0, 0.1), (False, True)):
            if nesterov and (momentum == 0 or dampening != 0):
                continue
            yield dict(lr=0.1, momentum=momentum, dampening=dampening, nesterov=nesterov, weight_decay=wd,
                       maximize=maximize)
    else:
        for amsgrad, maximize, wd in itertools.product((False, True), (False, True), (0.0, 0.1)):
            yield dict(lr=0.05, betas=(0.8, 0.95), eps=1e-6, amsgrad=amsgrad, maximize=maximize, weight_decay=wd)


CASES = [pytest.param(cls, kw, id=f"{cls.__name__}-" + "-".join(f"{k}={v}" for k, v in kw.items() if k != "lr"))
         for cls in (optim.SGD, optim.Adam, optim.AdamW) for kw in _flag_sets(cls)]


@pytest.mark.parametrize("cls,kwargs", CASES)
def test_implementations_agree(cls, kwargs):
    ref, _ = _run(cls, dict(kwargs, **IMPLS["for-loop"]))
    for name in ("foreach", "fused"):
        got, _ = _run(cls, dict(kwargs, **IMPLS[name]))
        for a, b in zip(got, ref):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6, err_msg=name)


@pytest.mark.parametrize("cls", [optim.SGD, optim.Adam, optim.AdamW])
@pytest.mark.parametrize("impl", list(IMPLS))
def test_params_without_grad_are_skipped(cls, impl):
    params = _params()
    before = params[2].numpy().copy()
    opt = cls(params, lr=0.1, **IMPLS[impl])
    for i, (p, g) in enumerate(zip(params, _grads(0))):
        p.grad = None if i == 2 else g
    opt.step()
    np.testing.assert_array_equal(params[2].numpy(), before)
    assert params[2] not in opt.state


@pytest.mark.parametrize("dtype", [st.bfloat16, st.float16, st.float64])
@pytest.mark.parametrize("cls", [optim.SGD, optim.AdamW])
def test_implementations_agree_other_dtypes(cls, dtype):
    # eps=1e-3: 1e-8 rounds to 0 in float16, and 0/0 at a zero grad is NaN in torch's for-loop too
    kw = dict(lr=0.05, weight_decay=0.1, eps=1e-3) if cls is optim.AdamW else dict(lr=0.05, momentum=0.9)
    ref, _ = _run(cls, dict(kw, foreach=False), dtype=dtype)
    got, _ = _run(cls, dict(kw, fused=True), dtype=dtype)
    tol = {st.bfloat16: 2e-2, st.float16: 2e-3, st.float64: 1e-12}[dtype]
    for a, b in zip(got, ref):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


# ------------------------------------------------------------------------------------------ torch
def _torch():
    return pytest.importorskip("torch", reason="torch is not installed (it is only a yardstick)")


@pytest.mark.parametrize("cls,kwargs", CASES)
def test_against_torch(cls, kwargs):
    torch = _torch()
    tcls = getattr(torch.optim, cls.__name__)
    ours, _ = _run(cls, dict(kwargs, foreach=False))
    params = [torch.from_numpy(p.numpy().copy()) for p in _params()]
    opt = tcls(params, **kwargs, foreach=False)
    for k in range(4):
        for p, g in zip(params, _grads(k)):
            p.grad = torch.from_numpy(g.numpy().copy())
        opt.step()
    for a, b in zip(ours, params):
        np.testing.assert_allclose(a, b.numpy(), rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("cls", [optim.SGD, optim.Adam, optim.AdamW])
def test_state_dict_matches_torch_layout(cls):
    torch = _torch()
    kw = dict(lr=0.1, momentum=0.9) if cls is optim.SGD else dict(lr=0.1, amsgrad=True)
    _, ours = _run(cls, dict(kw, foreach=False), steps=2)
    params = [torch.from_numpy(p.numpy().copy()) for p in _params()]
    theirs = getattr(torch.optim, cls.__name__)(params, **kw, foreach=False)
    for p, g in zip(params, _grads(0)):
        p.grad = torch.from_numpy(g.numpy().copy())
    theirs.step()
    a, b = ours.state_dict(), theirs.state_dict()
    assert set(a["param_groups"][0]) == set(b["param_groups"][0])
    assert {k: v for k, v in a["param_groups"][0].items()} == {
        k: (v if k != "betas" else tuple(v)) for k, v in b["param_groups"][0].items()}
    assert sorted(a["state"]) == sorted(b["state"])
    assert set(a["state"][0]) == set(b["state"][0])


def test_schedulers_match_torch():
    torch = _torch()

    def run(lib, make):
        p = [lib.zeros(2)] if lib is st else [torch.zeros(2)]
        opt = lib.optim.SGD([{"params": p, "lr": 1.0}], lr=1.0)
        sched = make(lib, opt)
        lrs = []
        for _ in range(25):
            opt.step()
            sched.step()
            lrs.append(sched.get_last_lr()[0])
        return lrs

    makers = [
        lambda lib, o: lib.optim.lr_scheduler.StepLR(o, step_size=3, gamma=0.5),
        lambda lib, o: lib.optim.lr_scheduler.CosineAnnealingLR(o, T_max=7, eta_min=0.01),
        lambda lib, o: lib.optim.lr_scheduler.LambdaLR(o, lambda e: 0.9 ** e),
        lambda lib, o: lib.optim.lr_scheduler.MultiStepLR(o, milestones=[3, 7, 7, 12], gamma=0.5),
        lambda lib, o: lib.optim.lr_scheduler.ExponentialLR(o, gamma=0.8),
        lambda lib, o: lib.optim.lr_scheduler.LinearLR(o, start_factor=0.1, end_factor=0.9, total_iters=6),
        lambda lib, o: lib.optim.lr_scheduler.ConstantLR(o, factor=0.25, total_iters=4),
        lambda lib, o: lib.optim.lr_scheduler.PolynomialLR(o, total_iters=10, power=2.0),
        lambda lib, o: lib.optim.lr_scheduler.SequentialLR(
            o, [lib.optim.lr_scheduler.LinearLR(o, start_factor=0.01, total_iters=5),
                lib.optim.lr_scheduler.CosineAnnealingLR(o, T_max=15, eta_min=0.001)], milestones=[5]),
        lambda lib, o: lib.optim.lr_scheduler.SequentialLR(
            o, [lib.optim.lr_scheduler.ConstantLR(o, factor=0.5, total_iters=3),
                lib.optim.lr_scheduler.ExponentialLR(o, gamma=0.9),
                lib.optim.lr_scheduler.StepLR(o, step_size=2)], milestones=[4, 10]),
        lambda lib, o: lib.optim.lr_scheduler.OneCycleLR(o, max_lr=0.5, total_steps=26),
        lambda lib, o: lib.optim.lr_scheduler.OneCycleLR(o, max_lr=0.5, total_steps=30, anneal_strategy="linear",
                                                         three_phase=True, pct_start=0.25),
    ]
    for make in makers:
        np.testing.assert_allclose(run(st, make), run(torch, make), rtol=1e-12)


def test_one_cycle_cycles_momentum_and_beta1_as_torch():
    torch = _torch()

    def run(lib, opt_name):
        p = [lib.zeros(2)]
        opt = (lib.optim.SGD(p, lr=0.1, momentum=0.9) if opt_name == "sgd" else lib.optim.AdamW(p, lr=0.1))
        sched = lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=[1.0], epochs=2, steps_per_epoch=6)
        seen = []
        for _ in range(12):
            opt.step()
            sched.step() if len(seen) < 11 else None
            g = opt.param_groups[0]
            seen.append((g["lr"], g["momentum"] if opt_name == "sgd" else g["betas"][0]))
        return seen

    for name in ("sgd", "adamw"):
        np.testing.assert_allclose(run(st, name), run(torch, name), rtol=1e-12)


def test_new_scheduler_errors_match_torch():
    opt = _sgd()
    sched = optim.lr_scheduler
    with pytest.raises(ValueError, match="Starting multiplicative factor expected to be greater than 0"):
        sched.LinearLR(opt, start_factor=0)
    with pytest.raises(ValueError, match="Constant multiplicative factor expected to be between 0 and 1."):
        sched.ConstantLR(opt, factor=2)
    with pytest.raises(ValueError, match="You must define either total_steps OR"):
        sched.OneCycleLR(opt, max_lr=1.0)
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        sched.OneCycleLR(_NoMomentum(), max_lr=1.0, total_steps=3)
    with pytest.raises(ValueError, match="expects number of schedulers provided to be one more"):
        sched.SequentialLR(opt, [sched.StepLR(opt, 2)], milestones=[3])
    one = sched.OneCycleLR(_sgd_momentum(), max_lr=1.0, total_steps=2)
    one.step()
    with pytest.raises(ValueError, match="Tried to step 3 times. The specified number of total steps is 2"):
        one.step()
        one.step()


def _sgd_momentum():
    return optim.SGD([st.zeros(3)], lr=1.0, momentum=0.9)


class _NoMomentum(optim.Optimizer):
    def __init__(self):
        super().__init__([st.zeros(1)], {"lr": 0.1})

    def step(self, closure=None):
        return None


# ------------------------------------------------------------------------------------------ schedulers
def _sgd(lr=1.0):
    return optim.SGD([st.zeros(3)], lr=lr)


def test_step_lr_closed_form():
    opt = _sgd(2.0)
    s = optim.lr_scheduler.StepLR(opt, step_size=4, gamma=0.3)
    for epoch in range(1, 20):
        opt.step()
        s.step()
        assert opt.param_groups[0]["lr"] == pytest.approx(2.0 * 0.3 ** (epoch // 4), rel=1e-12)
        assert s.get_last_lr() == [opt.param_groups[0]["lr"]]


def test_cosine_closed_form():
    opt = _sgd(1.0)
    s = optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10, eta_min=0.1)
    for epoch in range(1, 11):
        s.step()
        want = 0.1 + 0.9 * (1 + math.cos(math.pi * epoch / 10)) / 2
        assert opt.param_groups[0]["lr"] == pytest.approx(want, rel=1e-9, abs=1e-12)


def test_lambda_lr_and_state_dict():
    opt = _sgd(0.5)
    s = optim.lr_scheduler.LambdaLR(opt, lambda e: 1.0 / (e + 1))
    for _ in range(3):
        s.step()
    assert opt.param_groups[0]["lr"] == pytest.approx(0.5 / 4)
    sd = s.state_dict()
    assert sd["last_epoch"] == 3 and sd["lr_lambdas"] == [None] and "optimizer" not in sd
    opt2 = _sgd(0.5)
    s2 = optim.lr_scheduler.LambdaLR(opt2, lambda e: 1.0 / (e + 1))
    s2.load_state_dict(sd)
    assert s2.last_epoch == 3 and s2.base_lrs == [0.5]


def test_step_lr_state_dict_round_trip():
    opt = _sgd()
    s = optim.lr_scheduler.StepLR(opt, step_size=2)
    s.step()
    s2 = optim.lr_scheduler.StepLR(_sgd(), step_size=5)
    s2.load_state_dict(s.state_dict())
    assert (s2.step_size, s2.last_epoch, s2.base_lrs) == (2, 1, [1.0])


# ------------------------------------------------------------------------------------------ Optimizer API
@pytest.mark.parametrize("impl", list(IMPLS))
def test_state_dict_round_trip_resumes_identically(impl):
    kw = dict(lr=0.05, amsgrad=True, weight_decay=0.1, **IMPLS[impl])
    ref, _ = _run(optim.AdamW, kw, steps=5)
    params = _params()
    opt = optim.AdamW(params, **kw)
    for k in range(2):
        for p, g in zip(params, _grads(k)):
            p.grad = g
        opt.step()
    sd = opt.state_dict()
    params2 = [p.clone() for p in params]
    opt2 = optim.AdamW(params2, **kw)
    opt2.load_state_dict(sd)
    assert opt2.state[params2[0]]["exp_avg"] is not sd["state"][0]["exp_avg"]
    for k in range(2, 5):
        for p, g in zip(params2, _grads(k)):
            p.grad = g
        opt2.step()
    for a, b in zip(params2, ref):
        np.testing.assert_allclose(a.numpy(), b, rtol=1e-6, atol=1e-7)


def test_zero_grad():
    params = _params()
    opt = optim.SGD(params, lr=0.1)
    for p, g in zip(params, _grads(0)):
        p.grad = g
    opt.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.numpy().any() for p in params)
    opt.zero_grad()
    assert all(p.grad is None for p in params)
    opt_fe = optim.Adam(params, foreach=True)
    for p, g in zip(params, _grads(1)):
        p.grad = g
    opt_fe.zero_grad(set_to_none=False)
    assert all(not p.grad.numpy().any() for p in params)


def test_param_groups_and_errors():
    a, b = st.zeros(2), st.zeros(3)
    opt = optim.SGD([{"params": [a]}, {"params": b, "lr": 0.5}], lr=0.1, momentum=0.9)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert opt.param_groups[1]["momentum"] == 0.9
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        opt.add_param_group({"params": [a]})
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum and zero dampening"):
        optim.SGD([a], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        optim.Adam([a], lr=-1)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1: 1.0"):
        optim.AdamW([a], betas=(0.9, 1.0))
    with pytest.raises(RuntimeError, match="`fused` and `foreach` cannot be `True` together."):
        optim.Adam([a], fused=True, foreach=True)
    with pytest.raises(RuntimeError, match="`fused=True` requires all the params to be floating point"):
        optim.Adam([st.zeros(2, dtype=st.int64)], fused=True)
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        optim.SGD([], lr=0.1)


def test_closure_and_defaults_selection():
    p = st.ones(3)
    opt = optim.SGD([p], lr=0.5)
    assert opt.defaults["foreach"] is None

    def closure():
        p.grad = st.ones(3)
        return 7.0

    assert opt.step(closure) == 7.0
    np.testing.assert_allclose(p.numpy(), 0.5)
    from strided.optim.optimizer import default_to_fused_or_foreach

    assert default_to_fused_or_foreach([p]) == (False, False)  # CPU: the for-loop
    assert default_to_fused_or_foreach([p], use_fused=True) == (True, False)


@pytest.mark.parametrize("cls", [optim.Adam, optim.AdamW, optim.SGD])
def test_fused_grad_scale_and_found_inf(cls):
    kw = dict(lr=0.1, momentum=0.9) if cls is optim.SGD else dict(lr=0.1)
    ref, _ = _run(cls, dict(kw, foreach=False), steps=1)
    params = _params()
    opt = cls(params, **kw, fused=True)
    scale = 8.0
    for p, g in zip(params, _grads(0)):
        p.grad = g * scale
    opt.grad_scale, opt.found_inf = st.tensor(scale), st.tensor(0.0)
    opt.step()
    for a, b in zip(params, ref):
        np.testing.assert_allclose(a.numpy(), b, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(params[0].grad.numpy(), _grads(0)[0].numpy(), rtol=1e-6)  # unscaled in place
    before = [p.numpy().copy() for p in params]
    opt.found_inf = st.tensor(1.0)
    opt.step()
    for a, b in zip(params, before):
        np.testing.assert_array_equal(a.numpy(), b)
    if cls is not optim.SGD:
        assert opt.state[params[0]]["step"].item() == 1.0  # the skipped step is not counted


def test_fused_state_steps_are_float32_on_param_device():
    params = _params()
    opt = optim.AdamW(params, fused=True)
    for p, g in zip(params, _grads(0)):
        p.grad = g
    opt.step()
    s = opt.state[params[0]]["step"]
    assert s.dtype is st.float32 and s.device == params[0].device and s.item() == 1.0


# ------------------------------------------------------------------------------------------ multi-tensor glue
def test_plan_and_pack_multi_tensor_launches():
    from strided.backends.cuda.kernels import optim_ops as mt

    numels = [70000, 0, 5, 65536, 65537, 1]
    launches = list(mt.plan_launches(numels, 3))
    assert launches == [[0, 2, 3], [4, 5]]
    m = 8
    ptrs = [[16 * (i + 1) for i in range(len(numels))], [32 * (i + 1) for i in range(len(numels))]]
    chunk = mt.chunk_elements("float32")
    for name, per_vector in (("float32", 4), ("float16", 8), ("bfloat16", 8), ("float64", 2)):
        # one 16-byte vector per thread and ILP step
        assert mt.chunk_elements(name) == mt.BLOCK * mt.ILP[name] * per_vector
    grid, values = mt.pack([0, 2, 3], ptrs, numels, m, chunk, scalars=[1.5] * 6, hyper=(0.1,) * 8, op=2)
    chunks = [-(-n // chunk) for n in (70000, 5, 65536)]  # blocks per tensor
    assert grid == sum(chunks)
    fmt = struct.Struct(mt.mt_format(m))
    raw = fmt.unpack(fmt.pack(*values))
    off = 0
    ptr0 = raw[off:off + m]
    assert ptr0[:3] == (16, 48, 64) and ptr0[3:] == (0,) * 5
    off = 5 * m + m + m
    assert raw[off:off + 3] == (70000, 5, 65536)
    off += m + 2 + 8
    starts = (0, chunks[0], chunks[0] + chunks[1], grid)
    assert raw[off:off + 4] == starts and raw[off + m] == grid
    assert raw[-3:] == (3, 2, mt.ALIGNED)
    _, values = mt.pack([0], [[8]], numels, m, chunk)
    assert values[-1] == 0  # a pointer that is not 16-byte aligned disables the vector path


def test_multi_tensor_kernels_compile():
    pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings is not installed")
    from strided.backends.cuda import compiler
    from strided.backends.cuda.kernels import optim_ops as mt

    for dtype in ("float32", "float16", "bfloat16", "float64"):
        for m in mt.MT_SIZES:  # one source holds fused_adam, fused_adam_plain, fused_sgd and foreach_apply
            cubin = compiler._compile(mt.mt_source(dtype, m), "multi_tensor", "sm_90", ())
            assert cubin[:4] == b"\x7fELF"
            for name in (b"fused_adam", b"fused_adam_plain", b"fused_sgd", b"foreach_apply"):
                assert name in cubin, (dtype, m, name)


@pytest.mark.parametrize("amsgrad,scaled,name", [(False, False, "fused_adam_plain"), (True, False, "fused_adam"),
                                                  (False, True, "fused_adam"), (True, True, "fused_adam")])
def test_fused_adam_takes_the_plain_kernel_without_amsgrad_or_grad_scale(monkeypatch, amsgrad, scaled, name):
    """Note [Plain Adam kernel]: the kernel without amsgrad and the grad scale runs only when neither is asked
    for; maximize, weight decay and found_inf stay runtime flags of both."""
    from strided.backends.cuda.kernels import optim_ops as mt

    seen = []
    monkeypatch.setattr(mt, "mt_launch", lambda dtype, kname, *a, **kw: seen.append((kname, kw["flags"])))
    ts = [[st.zeros(3), st.zeros(2, 2)] for _ in range(5)]
    steps = [st.zeros(()), st.zeros(())]
    found_inf = st.zeros(1)
    mt.fused_adam_launches(*ts[:4], ts[4] if amsgrad else [], steps, 1e-3, 0.9, 0.999, 0.01, 1e-8, amsgrad, True,
                           st.ones(1) if scaled else None, found_inf, True)
    assert seen == [(name, (mt.AMSGRAD if amsgrad else 0) | mt.MAXIMIZE | mt.ADAMW)]


def test_prepacked_launches_match_a_fresh_pack(monkeypatch):
    """The cached struct with hyperparameters and scalars written in place equals packing anew."""
    from strided.backends.cuda.kernels import optim_ops as mt

    class FakeKernel:
        device_index, name, func = 0, "k", 0

    seen = []
    monkeypatch.setattr(mt, "get_kernel", lambda *a: FakeKernel())
    monkeypatch.setattr(mt, "_raw_launch", lambda k, pre, stream: seen.append((pre.grid, pre.buf.raw)))
    monkeypatch.setitem(mt._state, "max", 32)
    numels = [70000, 3, 0, 65536] * 10
    ptrs = [[64 * (i + 1) + 4096 * j for i in range(len(numels))] for j in range(4)]
    steps = [16 * i for i in range(len(numels))]
    for lr, scalars in ((0.1, [float(i) for i in range(40)]), (0.05, [2.0 * i for i in range(40)])):
        seen.clear()
        hyper = (lr, 0.9, 0.99, 0.01, 1e-8, 0.0, 0.0, 0.0)
        mt.mt_launch(st.float32, "fused_adam", 0, 0, numels, ptrs, steps=steps, scalars=scalars, grad_scale=1234,
                   found_inf=5678, hyper=hyper, flags=mt.AMSGRAD)
        fmt = struct.Struct(mt.mt_format(32))
        want = []
        for idx in mt.plan_launches(numels, 32):
            grid, values = mt.pack(idx, ptrs, numels, 32, mt.chunk_elements("float32"), steps=steps,
                                   scalars=scalars, grad_scale=1234, found_inf=5678, hyper=hyper, flags=mt.AMSGRAD)
            want.append((grid, fmt.pack(*values)))
        assert seen == want


@pytest.mark.parametrize("batch_bytes", [1, 1 << 20])
def test_non_contiguous_members_run_in_batches_of_copies(monkeypatch, batch_bytes):
    """Indices with a non-contiguous member run on contiguous copies (in batches), written lists are
    copied back, the rest run in place in one launch."""
    from strided.backends.cuda.kernels import optim_ops as mt

    monkeypatch.setattr(mt, "BATCH_BYTES", batch_bytes)
    rng = np.random.default_rng(3)
    shapes = [(3, 4), (5,), (4, 6), (2, 2), (7, 3)]
    params = [st.from_numpy(rng.standard_normal(s).astype(np.float32)) for s in shapes]
    grads = []
    for i, s in enumerate(shapes):
        g = rng.standard_normal(s[::-1]).astype(np.float32)
        grads.append(st.from_numpy(g).t() if i in (0, 2) and len(s) == 2 else st.from_numpy(g.reshape(s)))
    want = [p.numpy() + 2 * g.numpy() for p, g in zip(params, grads)]
    grads_before = [g.numpy().copy() for g in grads]
    calls = []

    def launch(sub, sel, cached):
        calls.append((sel, cached))
        for p, g in zip(*sub):
            assert p.is_contiguous() and g.is_contiguous()
            p.numpy()[...] += 2 * g.numpy()
            g.numpy()[...] = -1.0  # written by the "kernel" but not in `written`: must not leak back

    mt.run_in_batches([params, grads], [0], launch)
    for p, w in zip(params, want):
        np.testing.assert_allclose(p.numpy(), w, rtol=1e-6)
    for g, b, i in zip(grads, grads_before, range(5)):
        if i in (0, 2):
            np.testing.assert_array_equal(g.numpy(), b)
    assert calls[0] == ([1, 3, 4], True)
    assert [c for c in calls[1:]] == ([([0], False), ([2], False)] if batch_bytes == 1 else [([0, 2], False)])


def test_capturable_needs_the_fused_step():
    p = st.zeros(3, requires_grad=True)
    with pytest.raises(ValueError, match="capturable=True is supported with fused=True"):
        optim.AdamW([p], capturable=True)


@pytest.mark.parametrize("device", [d for d in available_devices() if d != "meta"])
def test_fused_kernels_skip_only_when_found_inf_is_one(device):
    # torch's CPU and CUDA fused kernels test *found_inf == 1 (GradScaler writes 0 or 1): any other value updates
    for found, expected in ((0.5, 0.9), (1.0, 1.0), (2.0, 0.9)):
        p = st.ones(3, device=device)
        st._fused_sgd_([p], [st.ones(3, device=device)], [], weight_decay=0.0, momentum=0.0, lr=0.1, dampening=0.0,
                       nesterov=False, maximize=False, is_first_step=True, found_inf=st.tensor(found, device=device))
        np.testing.assert_allclose(p.cpu().numpy(), expected, rtol=1e-6)
