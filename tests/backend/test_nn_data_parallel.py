"""nn.DataParallel and nn.parallel's parts (scatter, replicate, parallel_apply, gather) on the CPU: without a GPU
DataParallel calls its module as torch's does; the parts take CPU devices too, so their logic -- splitting,
replicas whose gradients reach the original parameters, threads, gathering -- is checked here against one call
of the whole module. The multi-GPU runs are in tests/cuda/test_data_parallel_cuda.py."""

from __future__ import annotations

import collections
import threading

import numpy as np
import pytest

import strided as st
import strided.cuda
from strided.nn.parallel import gather, parallel_apply, replicate, scatter, scatter_kwargs

torch = pytest.importorskip("torch")

CPUS = ["cpu", "cpu", "cpu"]


def _mlp():
    st.manual_seed(0)
    return st.nn.Sequential(st.nn.Linear(4, 8), st.nn.ReLU(), st.nn.Linear(8, 2))


@pytest.mark.skipif(st.cuda.is_available(), reason="a GPU is present: this checks the no-GPU behaviour")
def test_without_a_gpu_the_module_is_called_as_it_is():
    m = _mlp()
    dp = st.nn.DataParallel(m)
    assert dp.device_ids == [] and dp.module is m
    x = st.randn(5, 4)
    np.testing.assert_array_equal(dp(x).detach().numpy(), m(x).detach().numpy())
    tdp = torch.nn.DataParallel(torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2)))
    assert list(dp.state_dict()) == list(tdp.state_dict())  # 'module.0.weight', ...
    assert repr(dp).splitlines()[:2] == repr(tdp).splitlines()[:2]
    with pytest.raises(RuntimeError, match="device type could not be determined"):
        st.nn.parallel.data_parallel(m, x)


def test_replicas_compute_the_whole_batch_and_grads_reach_the_original():
    m = _mlp()
    x_np = np.random.default_rng(1).standard_normal((7, 4)).astype(np.float32)
    ref_x = st.from_numpy(x_np.copy()).requires_grad_()
    m(ref_x).pow(2).sum().backward()
    ref_grads = [p.grad.numpy().copy() for p in m.parameters()]
    m.zero_grad()

    x = st.from_numpy(x_np.copy()).requires_grad_()
    inputs, kwargs = scatter_kwargs((x,), {}, CPUS)
    assert [i[0].shape[0] for i in inputs] == [3, 3, 1] and kwargs == ({}, {}, {})
    replicas = replicate(m, CPUS)
    assert all(list(r.parameters()) == [] for r in replicas)  # a replica's weights are copies, not Parameters
    assert replicas[1][0].weight.grad_fn is not None and replicas[1][0] is not m[0]
    out = gather(parallel_apply(replicas, inputs, kwargs, CPUS), "cpu")
    np.testing.assert_allclose(out.detach().numpy(), m(st.from_numpy(x_np)).detach().numpy(), rtol=1e-6)
    out.pow(2).sum().backward()
    for p, g in zip(m.parameters(), ref_grads):
        np.testing.assert_allclose(p.grad.numpy(), g, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), ref_x.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_replicate_shares_tied_weights_and_the_first_replicas_buffers():
    m = st.nn.Sequential(st.nn.Embedding(5, 3), st.nn.Linear(3, 5, bias=False), st.nn.BatchNorm1d(5))
    m[1].weight = m[0].weight
    reps = replicate(m, CPUS[:2])
    assert reps[1][0].weight is reps[1][1].weight  # one copy per device of a weight two layers share
    # as torch's broadcast: the first device's buffers are the module's own memory, so its replica's running
    # statistics are the ones kept
    reps[0](st.tensor([0, 1, 2, 3]))
    assert m[2].running_mean.abs().sum().item() > 0
    assert m[2].num_batches_tracked.item() == 1
    with st.no_grad():
        detached = replicate(m, CPUS[:2], detach=True)
    assert detached[1][1].weight.grad_fn is None and not detached[1][1].weight.requires_grad


def test_scatter_and_gather_keep_structures():
    Pair = collections.namedtuple("Pair", "a b")
    x = st.arange(6.0).view(3, 2)
    pieces = scatter((x, [x, 7], {"k": x}, Pair(x, "s")), CPUS[:2])
    assert len(pieces) == 2
    first = pieces[0]
    assert first[0].tolist() == [[0.0, 1.0], [2.0, 3.0]] and first[1][1] == 7 and isinstance(first[1], list)
    assert first[2]["k"].shape == (2, 2) and type(first[3]) is Pair and first[3].b == "s"
    assert len(scatter(st.ones(1, 2), CPUS)) == 1  # one row: one piece, one replica used
    ins, kws = scatter_kwargs((), {"x": x}, CPUS[:2])
    assert ins == ((), ()) and [k["x"].shape[0] for k in kws] == [2, 1]
    outs = [{"y": st.ones(2), "n": None, "t": (st.zeros(1), st.ones(1))}, {"y": st.zeros(3), "n": None,
                                                                          "t": (st.ones(1), st.zeros(1))}]
    g = gather(outs, "cpu")
    assert g["y"].tolist() == [1, 1, 0, 0, 0] and g["n"] is None and g["t"][0].tolist() == [0, 1]
    with pytest.raises(ValueError, match="All dicts must have the same number of keys"):
        gather([{"a": st.ones(1)}, {"a": st.ones(1), "b": st.ones(1)}], "cpu")
    with pytest.warns(UserWarning, match="all input tensors were scalars; will instead unsqueeze"):
        assert gather([st.tensor(1.0), st.tensor(2.0)], "cpu").tolist() == [1.0, 2.0]


def test_parallel_apply_runs_threads_with_the_callers_modes_and_reraises():
    seen = []

    class Probe(st.nn.Module):
        def __init__(self, fail=False):
            super().__init__()
            self.fail = fail

        def forward(self, x):
            seen.append((threading.get_ident(), st.is_grad_enabled(), st.is_autocast_enabled("cpu"),
                         st.get_autocast_dtype("cpu")))
            if self.fail:
                raise KeyError("boom")
            return x * 2

    with st.no_grad(), st.autocast("cpu", dtype=st.bfloat16):
        outs = parallel_apply([Probe(), Probe()], [(st.ones(1),), st.ones(1)], None, CPUS[:2])
    assert [o.tolist() for o in outs] == [[2.0], [2.0]]
    main = threading.get_ident()  # (a finished thread's ident may be reused)
    assert len(seen) == 2 and all(s[0] != main for s in seen) and all(s[1:] == (False, True, st.bfloat16) for s in seen)
    with pytest.raises(KeyError, match="Caught KeyError in replica 1 on device cpu"):
        parallel_apply([Probe(), Probe(fail=True)], [(st.ones(1),), (st.ones(1),)], None, CPUS[:2])
    with pytest.raises(AssertionError, match="number of modules 2 is not equal to the number of inputs 1"):
        parallel_apply([Probe(), Probe()], [(st.ones(1),)])


def test_data_parallel_device_ids_are_cuda_devices():
    from strided.nn.parallel.data_parallel import _index

    assert _index(1) == 1 and _index("cuda:2") == 2 and _index(st.device("cuda", 0)) == 0
    with pytest.raises(ValueError, match="Expected a non cpu device, but got: cpu"):
        _index("cpu")
    with pytest.raises(ValueError, match="Expected a cuda device, but got: meta"):
        _index("meta")
    with pytest.raises(TypeError, match="Expected a device index or a device, but got: True"):
        _index(True)


def test_nonsense_is_refused_by_type():
    with pytest.raises(TypeError, match="replicate\\(\\): network must be an nn.Module, not int"):
        replicate(3, CPUS)
    with pytest.raises(TypeError, match="DataParallel: module must be an nn.Module, not int"):
        st.nn.DataParallel(3)
    with pytest.raises(TypeError, match="Expected a device index or a device, but got: object"):
        scatter(st.ones(4, 2), [object()])
    with pytest.raises(IndexError, match="Dimension out of range"):
        scatter(st.ones(4, 2), CPUS, dim=5)
