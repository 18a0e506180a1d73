"""strided.optim.swa_utils against torch.optim.swa_utils: SWA and EMA averages over a short training run
(parameters, buffers with use_buffers, a custom avg_fn), SWALR's learning rates, update_bn's statistics."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st

torch = pytest.importorskip("torch")


def _twins():
    t = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 1))
    s = st.nn.Sequential(st.nn.Linear(3, 4), st.nn.BatchNorm1d(4), st.nn.Linear(4, 1))
    s.load_state_dict({k: st.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    return s, t


BATCHES = [np.random.default_rng(i).standard_normal((8, 3)).astype(np.float32) for i in range(5)]


def _train(lib, model, averaged, sched=None):
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    if sched is not None:
        sched = sched(opt)
    lrs = []
    for x in BATCHES:
        opt.zero_grad()
        model(lib.tensor(x)).pow(2).mean().backward()
        opt.step()
        averaged.update_parameters(model)
        if sched is not None:
            sched.step()
            lrs.append(opt.param_groups[0]["lr"])
    return lrs


def _state(sd):
    return {k: (v.detach().numpy() if hasattr(v, "detach") else v) for k, v in sd.items()}


@pytest.mark.parametrize("kind", ["swa", "ema", "ema_buffers", "avg_fn"])
def test_averages_match_torch(kind):
    s, t = _twins()
    made = {}
    for lib, model in ((st, s), (torch, t)):
        su = lib.optim.swa_utils
        if kind == "swa":
            made[lib] = su.AveragedModel(model)
        elif kind == "ema":
            made[lib] = su.AveragedModel(model, multi_avg_fn=su.get_ema_multi_avg_fn(0.9))
        elif kind == "ema_buffers":
            made[lib] = su.AveragedModel(model, multi_avg_fn=su.get_ema_multi_avg_fn(0.8), use_buffers=True)
        else:
            made[lib] = su.AveragedModel(model, avg_fn=su.get_ema_avg_fn(0.7))
        _train(lib, model, made[lib])
    ours, theirs = _state(made[st].state_dict()), _state(made[torch].state_dict())
    assert sorted(ours) == sorted(theirs)
    for k in theirs:
        np.testing.assert_allclose(ours[k], theirs[k], rtol=1e-5, atol=1e-6, err_msg=k)
    x = BATCHES[0]
    made[st].eval(), made[torch].eval()
    np.testing.assert_allclose(made[st](st.tensor(x)).detach().numpy(), made[torch](torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("strategy,epochs", [("cos", 3), ("linear", 2), ("cos", 0)])
def test_swalr_matches_torch(strategy, epochs):
    s, t = _twins()
    lrs = []
    for lib, model in ((st, s), (torch, t)):
        su = lib.optim.swa_utils
        lrs.append(_train(lib, model, su.AveragedModel(model),
                          lambda opt, su=su: su.SWALR(opt, swa_lr=0.05, anneal_epochs=epochs,
                                                      anneal_strategy=strategy)))
    np.testing.assert_allclose(lrs[0], lrs[1], rtol=1e-12)


def test_update_bn_matches_torch():
    s, t = _twins()
    st.optim.swa_utils.update_bn([(st.tensor(x), 0) for x in BATCHES], s)
    torch.optim.swa_utils.update_bn([(torch.tensor(x), 0) for x in BATCHES], t)
    ours, theirs = _state(s.state_dict()), _state(t.state_dict())
    for k in ("1.running_mean", "1.running_var", "1.num_batches_tracked"):
        np.testing.assert_allclose(ours[k], theirs[k], rtol=1e-5, atol=1e-6, err_msg=k)
    assert s[1].momentum == 0.1 and s.training


def test_bad_arguments_in_torchs_words():
    su = st.optim.swa_utils
    with pytest.raises(ValueError, match=r"Invalid decay value 1.5 provided. Please provide a value in \[0,1\] range"):
        su.get_ema_multi_avg_fn(1.5)
    m = st.nn.Linear(2, 2)
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn should be provided"):
        su.AveragedModel(m, avg_fn=su.get_swa_avg_fn(), multi_avg_fn=su.get_swa_multi_avg_fn())
    opt = st.optim.SGD(m.parameters(), lr=0.1)
    with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear', instead got exp"):
        su.SWALR(opt, 0.05, anneal_strategy="exp")
    with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0, got -1"):
        su.SWALR(opt, 0.05, anneal_epochs=-1)
    with pytest.raises(ValueError, match="swa_lr must have the same length as optimizer.param_groups"):
        su.SWALR(opt, [0.1, 0.2])
    with pytest.raises(TypeError, match=r"update_parameters\(\): model must be a Module, got int"):
        su.AveragedModel(m).update_parameters(3)


@pytest.mark.skipif(not st.cuda.is_available(), reason="no CUDA device")
def test_cuda_averages_match_cpu():
    m = st.nn.Linear(3, 2)
    cpu = st.optim.swa_utils.AveragedModel(m)
    gpu = st.optim.swa_utils.AveragedModel(m, device="cuda")
    for x in BATCHES:
        with st.no_grad():
            m.weight.add_(st.tensor(x[:2]))
        cpu.update_parameters(m)
        gpu.update_parameters(m)  # the _foreach_lerp_ path, as torch's on CUDA
    np.testing.assert_allclose(gpu.module.weight.detach().cpu().numpy(), cpu.module.weight.detach().numpy(),
                               rtol=1e-6, atol=1e-6)
    assert int(gpu.n_averaged) == 5 and gpu.n_averaged.device.type == "cuda"
