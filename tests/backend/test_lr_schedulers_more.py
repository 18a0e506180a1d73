"""ReduceLROnPlateau, CosineAnnealingWarmRestarts, ChainedScheduler, CyclicLR and MultiplicativeLR against
torch.optim.lr_scheduler (the oracle): lr (and momentum) sequences, state_dict, errors."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
from strided import optim

torch = pytest.importorskip("torch", reason="torch is the yardstick for these tests")


def test_every_torch_scheduler_exists():
    assert set(torch.optim.lr_scheduler.__all__) <= set(optim.lr_scheduler.__all__)
    for name in torch.optim.lr_scheduler.__all__:
        assert hasattr(optim.lr_scheduler, name), name


def _opt(lib, kind="sgd"):
    groups = [{"params": [lib.zeros(2)], "lr": 1.0}, {"params": [lib.zeros(3)], "lr": 0.5}]
    if kind == "adam":
        return lib.optim.Adam(groups, lr=1.0)
    return lib.optim.SGD(groups, lr=1.0, momentum=0.9)


def _lrs(lib, make, steps=40, kind="sgd", step_args=None):
    opt = _opt(lib, kind)
    sched = make(lib.optim.lr_scheduler, opt)

    def record():
        momentum = [g["momentum"] if kind == "sgd" else g["betas"][0] for g in opt.param_groups]
        seen.append([g["lr"] for g in opt.param_groups] + momentum + sched.get_last_lr())

    seen = []
    record()
    for k in range(steps):
        opt.step()
        if step_args is None:
            sched.step()
        else:
            sched.step(step_args[k])
        record()
    return seen


SEQUENCES = {
    "warm-restarts": lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=3, eta_min=0.01),
    "warm-restarts-T_mult=2": lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2, eta_min=0.001),
    "chained": lambda s, o: s.ChainedScheduler([s.ConstantLR(o, factor=0.1, total_iters=3),
                                                s.ExponentialLR(o, gamma=0.9)]),
    "chained-step-cosine": lambda s, o: s.ChainedScheduler([s.StepLR(o, step_size=4, gamma=0.5),
                                                           s.CosineAnnealingLR(o, T_max=6)]),
    "multiplicative": lambda s, o: s.MultiplicativeLR(o, lambda e: 0.95 if e % 2 else 0.9),
    "cyclic-triangular": lambda s, o: s.CyclicLR(o, base_lr=0.01, max_lr=[0.1, 0.2], step_size_up=4,
                                                 step_size_down=6),
    "cyclic-triangular2": lambda s, o: s.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=3, mode="triangular2"),
    "cyclic-exp_range": lambda s, o: s.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=5, mode="exp_range",
                                                gamma=0.97, base_momentum=0.7, max_momentum=0.95),
    "cyclic-custom": lambda s, o: s.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=2,
                                             scale_fn=lambda x: 1 / (1 + x), scale_mode="iterations"),
}


@pytest.mark.parametrize("make", list(SEQUENCES.values()), ids=list(SEQUENCES))
def test_lr_sequence_matches_torch(make):
    np.testing.assert_allclose(_lrs(st, make), _lrs(torch, make), rtol=1e-13, atol=1e-15)


def test_cyclic_lr_cycles_adam_beta1_as_torch():
    def make(s, o):
        return s.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=3)

    np.testing.assert_allclose(_lrs(st, make, kind="adam"), _lrs(torch, make, kind="adam"), rtol=1e-13)


@pytest.mark.parametrize("T_mult", [1, 2, 3])
def test_warm_restarts_fractional_epochs_match_torch(T_mult):  # noqa: N803
    epochs = [e + i / 5 for e in range(20) for i in range(5)] + [7.5, 3.25, 0.0, 30.0, 14.0]

    def run(lib):
        opt = _opt(lib)
        sched = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=T_mult, eta_min=0.05)
        out = []
        for epoch in epochs:
            sched.step(epoch)
            out.append([g["lr"] for g in opt.param_groups] + [sched.T_cur, sched.T_i, sched.last_epoch])
        return out

    np.testing.assert_allclose(run(st), run(torch), rtol=1e-12, atol=1e-15)


METRICS = [1.0, 0.9, 0.95, 0.96, 0.97, 0.97, 0.9, 0.89999, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 0.4, 0.41, 0.41,
           0.41, 0.41, 0.41, 0.41, 0.41, 0.41, 0.41, 0.41, 0.3, 0.3, 0.3, 0.3]
PLATEAU = {
    "min-rel": dict(patience=2),
    "min-abs-cooldown": dict(patience=1, threshold=0.05, threshold_mode="abs", cooldown=2, factor=0.5),
    "max-rel": dict(mode="max", patience=1, factor=0.3),
    "max-abs-min_lr": dict(mode="max", patience=0, threshold_mode="abs", min_lr=[0.2, 0.01], factor=0.5),
    "eps": dict(patience=0, factor=0.9, min_lr=0.3, eps=0.05),
}


@pytest.mark.parametrize("kwargs", list(PLATEAU.values()), ids=list(PLATEAU))
def test_reduce_lr_on_plateau_matches_torch(kwargs):
    def make(s, o):
        return s.ReduceLROnPlateau(o, **kwargs)

    ours = _lrs(st, make, steps=len(METRICS), step_args=METRICS)
    np.testing.assert_allclose(ours, _lrs(torch, make, steps=len(METRICS), step_args=METRICS), rtol=1e-15)


def test_reduce_lr_on_plateau_state_dict_matches_torch_and_resumes():
    def run(lib, metrics, sd=None):
        opt = _opt(lib)
        sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=1, cooldown=1, factor=0.5)
        if sd is not None:
            sched.load_state_dict(sd)
            for g, lr in zip(opt.param_groups, sd["_last_lr"]):
                g["lr"] = lr
        for m in metrics:
            sched.step(m)
        return sched, [g["lr"] for g in opt.param_groups]

    half = len(METRICS) // 2
    ours, _ = run(st, METRICS[:half])
    theirs, _ = run(torch, METRICS[:half])
    assert ours.state_dict() == theirs.state_dict()
    _, resumed = run(st, METRICS[half:], sd=ours.state_dict())
    _, straight = run(st, METRICS)
    assert resumed == straight


def test_chained_and_warm_restart_state_dicts_resume():
    def make(s, o):
        return s.ChainedScheduler([s.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2), s.ExponentialLR(o, 0.9)])

    opt = _opt(st)
    sched = make(optim.lr_scheduler, opt)
    for _ in range(5):
        sched.step()
    sd = sched.state_dict()
    assert "optimizer" not in sd and len(sd["_schedulers"]) == 2
    opt2 = _opt(st)
    sched2 = make(optim.lr_scheduler, opt2)
    sched2.load_state_dict(sd)
    for g, lr in zip(opt2.param_groups, sched.get_last_lr()):
        g["lr"] = lr
    for _ in range(6):
        sched.step()
        sched2.step()
        assert sched2.get_last_lr() == sched.get_last_lr()


def test_cyclic_and_multiplicative_state_dicts_drop_functions_as_torch():
    for lib in (st, torch):
        opt = _opt(lib)
        cyc = lib.optim.lr_scheduler.CyclicLR(opt, 0.01, 0.1, scale_fn=lambda x: 1.0)
        assert cyc.state_dict()["_scale_fn_custom"] is None
        mult = lib.optim.lr_scheduler.MultiplicativeLR(_opt(lib), lambda e: 0.9)
        assert mult.state_dict()["lr_lambdas"] == [None, None]


ERRORS = [
    (lambda s, o: s.ReduceLROnPlateau(o, factor=1.0), ValueError),
    (lambda s, o: s.ReduceLROnPlateau(o, mode="up"), ValueError),
    (lambda s, o: s.ReduceLROnPlateau(o, threshold_mode="ratio"), ValueError),
    (lambda s, o: s.ReduceLROnPlateau(o, min_lr=[0.1]), ValueError),
    (lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=0), ValueError),
    (lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=1.5), ValueError),
    (lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=2, eta_min="0"), ValueError),
    (lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=2).step(-1), ValueError),
    (lambda s, o: s.ChainedScheduler([]), ValueError),
    (lambda s, o: s.ChainedScheduler([s.ReduceLROnPlateau(o)]), ValueError),
    (lambda s, o: s.CyclicLR(o, 0.01, 0.1, mode="saw"), ValueError),
    (lambda s, o: s.CyclicLR(o, [0.01], 0.1), ValueError),
    (lambda s, o: s.MultiplicativeLR(o, [lambda e: 1.0]), ValueError),
    (lambda s, o: s.MultiplicativeLR(o, 3), TypeError),
]


@pytest.mark.parametrize("make,exc", ERRORS)
def test_errors_match_torch(make, exc):
    with pytest.raises(exc) as theirs:
        make(torch.optim.lr_scheduler, _opt(torch))
    with pytest.raises(exc) as ours:
        make(optim.lr_scheduler, _opt(st))
    assert str(ours.value) == str(theirs.value)


def test_cyclic_lr_needs_momentum():
    opt = optim.Adagrad([st.zeros(2)])
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1 with `cycle_momentum`"):
        optim.lr_scheduler.CyclicLR(opt, 0.01, 0.1)
    optim.lr_scheduler.CyclicLR(opt, 0.01, 0.1, cycle_momentum=False)
