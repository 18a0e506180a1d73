"""strided.nn.utils.prune against torch.nn.utils.prune: masks of the deterministic methods (L1, Ln structured,
custom, global), successive pruning combined in a container, the forward pass, remove, is_pruned; the random
methods prune the requested count; the errors in torch's words."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
import strided.nn.utils.prune as sprune

torch = pytest.importorskip("torch")
import torch.nn.utils.prune as tprune  # noqa: E402


def _twins():
    t = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.ReLU(), torch.nn.Linear(5, 3))
    s = st.nn.Sequential(st.nn.Linear(6, 5), st.nn.ReLU(), st.nn.Linear(5, 3))
    s.load_state_dict({k: st.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    return s, t


X = np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32)


def _same(s, t):
    ss, ts = s.state_dict(), t.state_dict()
    assert sorted(ss) == sorted(ts)
    for k in ts:
        np.testing.assert_allclose(ss[k].detach().numpy(), ts[k].detach().numpy(), rtol=1e-6, err_msg=k)
    np.testing.assert_allclose(s(st.tensor(X)).detach().numpy(), t(torch.tensor(X)).detach().numpy(), rtol=1e-5,
                               atol=1e-6)


@pytest.mark.parametrize("steps", [
    [("l1_unstructured", dict(name="weight", amount=0.3))],
    [("l1_unstructured", dict(name="weight", amount=7)), ("l1_unstructured", dict(name="weight", amount=0.25))],
    [("ln_structured", dict(name="weight", amount=2, n=2, dim=0))],
    [("ln_structured", dict(name="weight", amount=0.4, n=1, dim=1)),
     ("l1_unstructured", dict(name="weight", amount=3))],
    [("l1_unstructured", dict(name="weight", amount=4)), ("ln_structured", dict(name="weight", amount=1, n="fro",
                                                                               dim=0))],
    [("l1_unstructured", dict(name="bias", amount=2))],
])
def test_masks_and_forward_match_torch(steps):
    s, t = _twins()
    for fn, kw in steps:
        getattr(sprune, fn)(s[0], **kw)
        getattr(tprune, fn)(t[0], **kw)
    _same(s, t)
    assert sprune.is_pruned(s) and tprune.is_pruned(t)
    hook = next(h for h in s[0]._forward_pre_hooks.values() if isinstance(h, sprune.BasePruningMethod))
    assert isinstance(hook, sprune.PruningContainer) == (len(steps) > 1)
    name = steps[0][1]["name"]
    sprune.remove(s[0], name)
    tprune.remove(t[0], name)
    _same(s, t)
    assert not sprune.is_pruned(s) and isinstance(s[0]._parameters[name], st.nn.Parameter)


def test_global_and_custom_masks_match_torch():
    s, t = _twins()
    sprune.global_unstructured([(s[0], "weight"), (s[2], "weight")], pruning_method=sprune.L1Unstructured,
                               amount=0.5)
    tprune.global_unstructured([(t[0], "weight"), (t[2], "weight")], pruning_method=tprune.L1Unstructured,
                               amount=0.5)
    _same(s, t)
    mask = (np.arange(3) % 2).astype(np.float32)
    sprune.custom_from_mask(s[2], "bias", st.tensor(mask))
    tprune.custom_from_mask(t[2], "bias", torch.tensor(mask))
    _same(s, t)


def test_pruned_weights_train_and_the_mask_holds():
    s, _ = _twins()
    sprune.l1_unstructured(s[0], "weight", amount=0.5)
    opt = st.optim.SGD(s.parameters(), lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        s(st.tensor(X)).sum().backward()
        opt.step()
    w, m = s[0].weight.detach().numpy(), s[0].weight_mask.numpy()
    assert (w[m == 0] == 0).all() and (m == 0).sum() == 15
    assert s[0].weight_orig.grad is not None


def test_random_methods_prune_the_requested_count():
    lin = st.nn.Linear(10, 8)
    sprune.random_unstructured(lin, "weight", amount=0.25)
    assert int((lin.weight_mask == 0).sum()) == 20
    lin2 = st.nn.Linear(10, 8)
    sprune.random_structured(lin2, "weight", amount=3, dim=0)
    rows = lin2.weight_mask.numpy().sum(1)
    assert sorted(rows.tolist()) == [0.0] * 3 + [10.0] * 5


def test_errors_in_torchs_words():
    for lib, prune in ((st, sprune), (torch, tprune)):
        lin = lib.nn.Linear(3, 2)
        with pytest.raises(ValueError, match=r"amount=1.5 should either be a float in the range \[0, 1\] or a "
                                             r"non-negative integer"):
            prune.l1_unstructured(lin, "weight", amount=1.5)
        with pytest.raises(ValueError, match="amount=7 should be smaller than the number of parameters to prune=6"):
            prune.l1_unstructured(lin, "weight", amount=7)
        assert "weight" in lin._parameters  # the failed pruning was undone
        with pytest.raises(ValueError, match="Structured pruning can only be applied to multidimensional tensors"):
            prune.ln_structured(lin, "bias", amount=1, n=2, dim=0)
        with pytest.raises(ValueError, match="Parameter 'weight' of module .* has to be pruned before pruning can be "
                                             "removed"):
            prune.remove(lin, "weight")
        with pytest.raises(TypeError, match='Only "unstructured" PRUNING_TYPE supported for the `pruning_method`'):
            prune.global_unstructured([(lin, "weight")], pruning_method=prune.RandomStructured, amount=1)
