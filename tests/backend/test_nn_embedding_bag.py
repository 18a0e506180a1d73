"""``F.embedding_bag`` and ``nn.EmbeddingBag`` (strided/nn/embedding_bag.py) on every available backend: values
and the gradients of the weight and per_sample_weights against torch (when installed) for every mode, 1-D input
with offsets (empty bags, include_last_offset) and 2-D input, padding_idx, scale_grad_by_freq; a NumPy reference
without torch; torch's errors and reprs."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
from strided import nn
from strided.nn import functional as F
from strided.testing import available_devices

DEVICES = available_devices()
RNG = np.random.default_rng(41)
W = RNG.standard_normal((10, 4))
IDX = np.array([1, 2, 4, 5, 4, 3, 2, 9])
OFFSETS = np.array([0, 2, 2, 5])  # bags [1, 2], [], [4, 5, 4], [3, 2, 9]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("kw", [{}, {"padding_idx": 4}, {"padding_idx": -1}], ids=str)
def test_offsets_bags_match_torch(nn_oracle, device, mode, kw):
    nn_oracle(lambda F, w, i, o: F.embedding_bag(i, w, o, mode=mode, **kw), [W, IDX, OFFSETS], device, "float64")
    # the last offset closes the last bag (torch's backward reads past it when it is short of the input's end)
    last = np.array([0, 2, 2, 5, 8])
    nn_oracle(lambda F, w, i, o: F.embedding_bag(i, w, o, mode=mode, include_last_offset=True, **kw),
              [W, IDX, last], device, "float64")


@pytest.mark.parametrize("device", [d for d in DEVICES if d != "meta"])
@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_scale_grad_by_freq_with_offsets_follows_its_definition(device, mode):
    """Each row's gradient is divided by how often its index occurs in the batch. A NumPy reference, not
    torch: torch 2.14 agrees, torch 2.11's CPU and CUDA kernels give other values for 1-D input with offsets."""
    up = RNG.standard_normal((4, 4))
    w = st.tensor(W, device=device, requires_grad=True)
    out = F.embedding_bag(st.tensor(IDX, device=device), w, st.tensor(OFFSETS, device=device), mode=mode,
                          scale_grad_by_freq=True)
    out.backward(st.tensor(up, device=device))
    bag = np.searchsorted(OFFSETS, np.arange(len(IDX)), side="right") - 1
    size, freq = np.bincount(bag, minlength=4), np.bincount(IDX, minlength=10)
    want = np.zeros_like(W)
    for i, b in zip(IDX, bag):
        want[i] += up[b] / (size[b] if mode == "mean" else 1) / freq[i]
    np.testing.assert_allclose(w.grad.cpu().numpy(), want, rtol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 2])
def test_fixed_length_bags_match_torch(nn_oracle, device, mode, padding_idx):
    idx = np.array([[1, 2, 2, 7], [2, 2, 2, 2], [0, 9, 9, 3]])  # the second bag is all padding when padding_idx=2
    nn_oracle(lambda F, w, i: F.embedding_bag(i, w, mode=mode, padding_idx=padding_idx), [W, idx], device,
              "float32")


@pytest.mark.parametrize("device", DEVICES)
def test_per_sample_weights_match_torch(nn_oracle, device):
    psw = RNG.standard_normal(8)
    nn_oracle(lambda F, w, i, o, p: F.embedding_bag(i, w, o, mode="sum", per_sample_weights=p),
              [W, IDX, OFFSETS, psw], device, "float64", grad=(0, 3))
    nn_oracle(lambda F, w, i, p: F.embedding_bag(i, w, mode="sum", per_sample_weights=p, padding_idx=9),
              [W, IDX.reshape(2, 4), psw.reshape(2, 4)], device, "float64", grad=(0, 2))


@pytest.mark.parametrize("device", [d for d in DEVICES if d != "meta"])
def test_bags_without_torch(device):
    w = st.tensor(W, device=device)
    bags = [IDX[0:2], IDX[2:2], IDX[2:5], IDX[5:]]
    want = {"sum": [b and W[b].sum(0) for b in map(list, bags)], "mean": [b and W[b].mean(0) for b in map(list, bags)],
            "max": [b and W[b].max(0) for b in map(list, bags)]}
    for mode, rows in want.items():
        ref = np.stack([np.zeros(4) if isinstance(r, list) else r for r in rows])
        got = F.embedding_bag(st.tensor(IDX, device=device), w, st.tensor(OFFSETS, device=device), mode=mode)
        np.testing.assert_allclose(got.cpu().numpy(), ref, rtol=1e-12)
    m = nn.EmbeddingBag.from_pretrained(w, mode="sum", padding_idx=4)
    out = m(st.tensor(IDX, device=device), st.tensor(OFFSETS, device=device)).cpu().numpy()
    np.testing.assert_allclose(out[2], W[5], rtol=1e-12)  # the padding rows of bag [4, 5, 4] count for nothing
    assert not m.weight.requires_grad
    empty = F.embedding_bag(st.tensor(np.zeros(0, np.int64), device=device), w, st.tensor([0, 0], device=device),
                            mode="max")
    assert tuple(empty.shape) == (2, 4) and not empty.cpu().numpy().any()


def test_module_init_and_reprs():
    assert repr(nn.EmbeddingBag(10, 3)) == "EmbeddingBag(10, 3, mode='mean')"
    m = nn.EmbeddingBag(10, 3, max_norm=1.0, mode="sum", padding_idx=-10, include_last_offset=True)
    assert repr(m) == "EmbeddingBag(10, 3, max_norm=1.0, mode='sum', padding_idx=0)"
    assert not m.weight.detach().numpy()[0].any()
    out = m(st.tensor([1, 2, 3]), st.tensor([0, 1, 3]))
    assert tuple(out.shape) == (2, 3)
    norms = np.linalg.norm(m.weight.detach().numpy()[[1, 2]], axis=1)
    assert np.all(norms <= 1.0 + 1e-6)  # max_norm renormalizes the looked-up rows in place


def test_errors_in_torchs_words():
    w = st.tensor(W)
    with pytest.raises(RuntimeError, match="Expected tensor for argument #1 'indices' to have one of the following "
                       "scalar types: Long, Int; but got Float instead"):
        F.embedding_bag(st.tensor([1.0, 2.0]), w, st.tensor([0]))
    with pytest.raises(RuntimeError, match="offsets\\[0\\] has to be 0, i.e., the first sequence in the mini-batch "
                       "has to start from position 0. However, got 1"):
        F.embedding_bag(st.tensor([1, 2, 3]), w, st.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="offsets\\[-1\\] can not be greater than input's length 4 but got "
                       "offsets\\[-1\\] of 6"):
        F.embedding_bag(st.tensor([1, 2, 3, 4]), w, st.tensor([0, 6]))
    with pytest.raises(RuntimeError, match="offsets must be non-decreasing, but got offsets\\[1\\]=3 and "
                       "offsets\\[2\\]=1"):
        F.embedding_bag(st.tensor([1, 2, 3, 4]), w, st.tensor([0, 3, 1]))
    with pytest.raises(RuntimeError, match="Index 1 of input takes value 20 which is not in the valid range \\[0, "
                       "10\\)"):
        F.embedding_bag(st.tensor([1, 20, 3]), w, st.tensor([0, 2]))
    with pytest.raises(NotImplementedError, match="per_sample_weights is only supported for mode='sum' \\(got "
                       "mode='mean'\\)"):
        F.embedding_bag(st.tensor([1, 2]), w, st.tensor([0]), per_sample_weights=st.ones(2, dtype=st.float64))
    with pytest.raises(ValueError, match="mode has to be one of sum, mean or max"):
        F.embedding_bag(st.tensor([1, 2]), w, st.tensor([0]), mode="min")
    with pytest.raises(ValueError, match="max mode does not support scaling the gradient by the frequency"):
        F.embedding_bag(st.tensor([1, 2]), w, st.tensor([0]), mode="max", scale_grad_by_freq=True)
    with pytest.raises(RuntimeError, match="padding_idx must be within the number of embeddings, -10 through 9, but "
                       "got 12"):
        F.embedding_bag(st.tensor([[1, 2]]), w, padding_idx=12)
    with pytest.raises(ValueError, match="input has to be 1D or 2D Tensor, but got Tensor of dimension 3"):
        F.embedding_bag(st.tensor([[[1, 2]]]), w)
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        F.embedding_bag(st.tensor([1, 2]), w)
    with pytest.raises(ValueError, match="if input is 2D, then offsets has to be None"):
        F.embedding_bag(st.tensor([[1, 2]]), w, st.tensor([0]))
    with pytest.raises(ValueError, match="weight has to be a 2D Tensor, but got Tensor of dimension 1"):
        F.embedding_bag(st.tensor([1, 2]), st.ones(3), st.tensor([0]))
    with pytest.raises(ValueError, match="If per_sample_weights .* is not None, then it must have the same shape"):
        F.embedding_bag(st.tensor([1, 2]), w, st.tensor([0]), mode="sum", per_sample_weights=st.ones(3))
