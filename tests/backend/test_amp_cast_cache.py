"""The autocast cast cache (Note [Autocast cast cache]): a weight used twice in a region is cast once (one ToCopy
node, gradients as torch's), the cache lives until the outermost region exits, ``cache_enabled`` turns it off, and
its safety deviations from torch's hold (no history-less copy after ``no_grad``, a fresh cast after an in-place
change); the nesting and cache functions and torch's deprecated per-device functions as torch's."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import strided as st
from strided.testing import available_devices

W = (np.arange(16, dtype=np.float32).reshape(4, 4) - 7.5) / 8
X = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)


def _weight_cast_node(y):
    """The ToCopy node that cast the weight of ``F.linear(x, w)`` to the low dtype."""
    nodes = [n for n, _ in y.grad_fn.next_functions if n is not None and type(n).__name__ == "ToCopyBackward0"]
    assert len(nodes) == 1, y.grad_fn.next_functions
    return nodes[0]


def test_a_weight_used_twice_is_cast_once_and_its_gradient_is_torchs():
    torch = pytest.importorskip("torch")
    grads = []
    for lib in (torch, st):
        w = lib.tensor(W, requires_grad=True)
        x = lib.tensor(X)
        with lib.autocast("cpu", dtype=lib.bfloat16):
            a = lib.nn.functional.linear(x, w)
            b = lib.nn.functional.linear(x * 2, w)
        if lib is st:
            assert _weight_cast_node(a) is _weight_cast_node(b)
        (a.float().square().sum() + b.float().sum()).backward()
        grads.append(np.asarray(w.grad.detach().numpy() if lib is torch else w.grad.numpy()))
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-2, atol=1e-2)


def test_cache_off_casts_at_every_use():
    w = st.tensor(W, requires_grad=True)
    x = st.tensor(X)
    with st.autocast("cpu", cache_enabled=False):
        assert not st.is_autocast_cache_enabled()
        a, b = st.nn.functional.linear(x, w), st.nn.functional.linear(x, w)
    assert _weight_cast_node(a) is not _weight_cast_node(b)
    assert st.is_autocast_cache_enabled()  # restored on exit


def test_the_cache_lives_until_the_outermost_region_exits():
    w = st.tensor(W, requires_grad=True)
    x = st.tensor(X)
    with st.autocast("cpu"):
        a = st.nn.functional.linear(x, w)
        with st.autocast("cpu", enabled=False):
            pass
        with st.autocast("cpu"):
            b = st.nn.functional.linear(x, w)
        c = st.nn.functional.linear(x, w)
    with st.autocast("cpu"):
        d = st.nn.functional.linear(x, w)
    assert _weight_cast_node(a) is _weight_cast_node(b) is _weight_cast_node(c)
    assert _weight_cast_node(d) is not _weight_cast_node(a)


def test_only_float32_leaves_that_require_grad_are_cached():
    w = st.tensor(W, requires_grad=True)
    x = st.tensor(X)
    with st.autocast("cpu"):
        v = w[:, :]  # a view
        assert _weight_cast_node(st.nn.functional.linear(x, v)) is not _weight_cast_node(
            st.nn.functional.linear(x, v))
        nonleaf = w * 1
        assert _weight_cast_node(st.nn.functional.linear(x, nonleaf)) is not _weight_cast_node(
            st.nn.functional.linear(x, nonleaf))
        plain = st.tensor(W)  # requires no grad: cast at every use, and no node
        assert st.nn.functional.linear(x, plain).grad_fn is None


def test_a_cast_made_under_no_grad_is_not_handed_to_a_recording_use():
    w = st.tensor(W, requires_grad=True)
    x = st.tensor(X)
    with st.autocast("cpu"):
        with st.no_grad():
            st.nn.functional.linear(x, w)
        y = st.nn.functional.linear(x, w)
    y.float().sum().backward()
    assert w.grad is not None and float(w.grad.abs().sum()) > 0


def test_a_weight_changed_in_place_inside_the_region_is_cast_again():
    w = st.tensor(W, requires_grad=True)
    x = st.tensor(X)
    with st.autocast("cpu"):
        a = st.nn.functional.linear(x, w)
        with st.no_grad():
            w.add_(1.0)
        b = st.nn.functional.linear(x, w)
    want = st.nn.functional.linear(x.bfloat16(), w.detach().bfloat16())
    np.testing.assert_array_equal(b.detach().float().numpy(), want.float().numpy())
    assert not np.array_equal(a.detach().float().numpy(), b.detach().float().numpy())


def test_nesting_and_cache_functions_as_torchs():
    torch = pytest.importorskip("torch")
    for lib in (torch, st):
        assert lib.autocast_increment_nesting() == 1 and lib.autocast_increment_nesting() == 2
        assert lib.autocast_decrement_nesting() == 1 and lib.autocast_decrement_nesting() == 0
        assert lib.autocast_decrement_nesting() == -1  # no error below 0, as torch's
        assert lib.autocast_increment_nesting() == 0
        lib.set_autocast_cache_enabled(False)
        assert lib.is_autocast_cache_enabled() is False
        lib.set_autocast_cache_enabled(True)
        lib.clear_autocast_cache()


DEPRECATED = {
    "get_autocast_cpu_dtype": (), "get_autocast_gpu_dtype": (), "is_autocast_cpu_enabled": (),
    "set_autocast_cpu_enabled": (False,), "set_autocast_cpu_dtype": ("bfloat16",),
    "set_autocast_gpu_dtype": ("float16",),
}


@pytest.mark.parametrize("name", sorted(DEPRECATED))
def test_deprecated_per_device_functions_warn_as_torchs(name):
    torch = pytest.importorskip("torch")
    results, words = [], []
    for lib in (torch, st):
        args = [getattr(lib, a) if isinstance(a, str) else a for a in DEPRECATED[name]]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            results.append(str(getattr(lib, name)(*args)).split(".")[-1])
        assert [w.category for w in caught] == [DeprecationWarning]
        words.append(str(caught[0].message).split(" (Triggered")[0].replace(lib.__name__ + ".", "LIB."))
    assert results[0] == results[1] and words[0] == words[1]


def _casts_by_source(y):
    """How many ToCopy nodes of ``y``'s graph cast a leaf (AccumulateGrad) and how many anything else."""
    seen, stack, leaf, other = set(), [y.grad_fn], 0, 0
    while stack:
        f = stack.pop()
        if f is None or id(f) in seen:
            continue
        seen.add(id(f))
        if type(f).__name__ == "ToCopyBackward0":
            src = f.next_functions[0][0]
            leaf += type(src).__name__ == "AccumulateGrad"
            other += type(src).__name__ == "TBackward0"  # a transposed weight, cast again at a step
        stack.extend(g for g, _ in f.next_functions)
    return leaf, other


@pytest.mark.parametrize("device", [d for d in available_devices() if d in ("cpu", "cuda")])
@pytest.mark.parametrize("name", ["RNN", "GRU", "LSTM"])
def test_a_recurrent_layer_casts_each_weight_once(name, device):
    """Note [Cells under autocast]: twelve time steps, four weights, four casts (none of a per-step view)."""
    m = getattr(st.nn, name)(8, 8).to(device)
    with st.autocast(device, dtype=st.bfloat16):
        y = m(st.randn(12, 2, 8, device=device))[0]
    assert _casts_by_source(y) == (4, 0)
    y.float().sum().backward()
    assert all(p.grad is not None and p.grad.dtype is st.float32 for p in m.parameters())
