"""nn.RNN / LSTM / GRU, their cells and nn.utils.rnn: torch's results and gradients from torch's weights
(state dicts load as they are), padded, batch_first, unbatched and packed input, dropout between
layers, shapes on meta, and torch's argument errors."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
import strided.nn as nn
from strided.nn.utils import rnn as rnn_utils
from strided.testing import available_devices

pytestmark = pytest.mark.filterwarnings("ignore:LSTM with projections is not supported with oneDNN")
DEVICES = [d for d in available_devices() if d != "meta"]
T, N, F, H = 5, 3, 4, 6

MODULES = [
    ("RNN", {}),
    ("RNN", {"nonlinearity": "relu", "num_layers": 2, "bidirectional": True}),
    ("LSTM", {"num_layers": 2, "batch_first": True}),
    ("LSTM", {"num_layers": 2, "bidirectional": True, "proj_size": 3}),
    ("GRU", {"bias": False}),
    ("GRU", {"num_layers": 2, "bidirectional": True, "batch_first": True}),
]


def _np(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _pair(torch, name, kw, device):
    torch.manual_seed(0)
    tm = getattr(torch.nn, name)(F, H, **kw)
    sm = getattr(nn, name)(F, H, **kw)
    sm.load_state_dict({k: st.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    return tm, sm.to(device)


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [out.data if hasattr(out, "batch_sizes") else out]


def _backward_and_compare(torch, s_out, t_out, s_leaves, t_leaves, rtol=1e-4, atol=1e-5):
    s_flat, t_flat = _flat(s_out), _flat(t_out)
    assert len(s_flat) == len(t_flat)
    for i, (s, t) in enumerate(zip(s_flat, t_flat)):
        assert tuple(s.shape) == tuple(t.shape), i
        np.testing.assert_allclose(s.detach().numpy(force=True), t.detach().numpy(), rtol=rtol, atol=atol,
                                   err_msg=f"output {i}")
    ups = [_np(*t.shape, seed=10 + i) for i, t in enumerate(t_flat)]
    sum((s * st.tensor(u, device=s.device)).sum() for s, u in zip(s_flat, ups)).backward()
    sum((t * torch.tensor(u)).sum() for t, u in zip(t_flat, ups)).backward()
    for i, (s, t) in enumerate(zip(s_leaves, t_leaves)):
        np.testing.assert_allclose(s.grad.numpy(force=True), t.grad.numpy(), rtol=rtol, atol=10 * atol,
                                   err_msg=f"gradient {i}")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,kw", MODULES, ids=[f"{n}-{'-'.join(kw)}" for n, kw in MODULES])
def test_padded_input_matches_torch(name, kw, device):
    torch = pytest.importorskip("torch")
    tm, sm = _pair(torch, name, kw, device)
    assert [k for k, _ in sm.named_parameters()] == [k for k, _ in tm.named_parameters()]
    x = _np(N, T, F) if kw.get("batch_first") else _np(T, N, F)
    sx, tx = st.tensor(x, device=device).requires_grad_(), torch.tensor(x).requires_grad_()
    dirs, layers = 2 if kw.get("bidirectional") else 1, kw.get("num_layers", 1)
    h0 = _np(layers * dirs, N, kw.get("proj_size") or H, seed=1)
    if name == "LSTM":
        c0 = _np(layers * dirs, N, H, seed=2)
        s_hx, t_hx = (st.tensor(h0, device=device), st.tensor(c0, device=device)), (torch.tensor(h0),
                                                                                    torch.tensor(c0))
    else:
        s_hx, t_hx = st.tensor(h0, device=device), torch.tensor(h0)
    _backward_and_compare(torch, sm(sx, s_hx), tm(tx, t_hx), [sx, *sm.parameters()], [tx, *tm.parameters()])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,kw", MODULES[1::2], ids=[n for n, _ in MODULES[1::2]])
def test_packed_unsorted_input_matches_torch(name, kw, device):
    torch = pytest.importorskip("torch")
    tm, sm = _pair(torch, name, kw, device)
    lengths = [3, 5, 1]  # not sorted: enforce_sorted=False sorts and unsorts
    x = _np(N, T, F) if kw.get("batch_first") else _np(T, N, F)
    sx, tx = st.tensor(x, device=device).requires_grad_(), torch.tensor(x).requires_grad_()
    bf = kw.get("batch_first", False)
    s_packed = rnn_utils.pack_padded_sequence(sx, lengths, batch_first=bf, enforce_sorted=False)
    t_packed = torch.nn.utils.rnn.pack_padded_sequence(tx, lengths, batch_first=bf, enforce_sorted=False)
    assert s_packed.batch_sizes.tolist() == t_packed.batch_sizes.tolist()
    assert s_packed.sorted_indices.tolist() == t_packed.sorted_indices.tolist()
    s_out, s_h = sm(s_packed)
    t_out, t_h = tm(t_packed)
    assert isinstance(s_out, rnn_utils.PackedSequence) and s_out.data.device.type == device
    s_pad, s_len = rnn_utils.pad_packed_sequence(s_out, batch_first=bf, total_length=T)
    t_pad, t_len = torch.nn.utils.rnn.pad_packed_sequence(t_out, batch_first=bf, total_length=T)
    assert s_len.tolist() == t_len.tolist() == lengths
    _backward_and_compare(torch, (s_pad, s_h), (t_pad, t_h), [sx, *sm.parameters()], [tx, *tm.parameters()])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_unbatched_input_and_default_state_match_torch(name, device):
    torch = pytest.importorskip("torch")
    tm, sm = _pair(torch, name, {"num_layers": 2}, device)
    x = _np(T, F)
    sx, tx = st.tensor(x, device=device).requires_grad_(), torch.tensor(x).requires_grad_()
    s_out, t_out = sm(sx), tm(tx)
    assert tuple(s_out[0].shape) == (T, H)
    _backward_and_compare(torch, s_out, t_out, [sx, *sm.parameters()], [tx, *tm.parameters()])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,kw", [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu", "bias": False}),
                                     ("LSTMCell", {}), ("GRUCell", {})])
def test_cells_match_torch(name, kw, device):
    torch = pytest.importorskip("torch")
    tm, sm = _pair(torch, name, kw, device)
    x, h = _np(N, F), _np(N, H, seed=1)
    sx, tx = st.tensor(x, device=device).requires_grad_(), torch.tensor(x).requires_grad_()
    if name == "LSTMCell":
        c = _np(N, H, seed=2)
        s_hx, t_hx = (st.tensor(h, device=device), st.tensor(c, device=device)), (torch.tensor(h), torch.tensor(c))
    else:
        s_hx, t_hx = st.tensor(h, device=device), torch.tensor(h)
    _backward_and_compare(torch, sm(sx, s_hx), tm(tx, t_hx), [sx, *sm.parameters()], [tx, *tm.parameters()])
    # unbatched, default state
    np.testing.assert_allclose(_flat(sm(sx[0]))[0].detach().numpy(force=True), _flat(tm(tx[0]))[0].detach().numpy(),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_sequence_utilities_match_torch(device):
    torch = pytest.importorskip("torch")
    seqs = [_np(3, 2), _np(5, 2, seed=1), _np(1, 2, seed=2)]
    s_seqs = [st.tensor(s, device=device).requires_grad_() for s in seqs]
    t_seqs = [torch.tensor(s).requires_grad_() for s in seqs]
    for kw in ({}, {"batch_first": True, "padding_value": -2.0}, {"padding_side": "left"}):
        np.testing.assert_array_equal(rnn_utils.pad_sequence(s_seqs, **kw).detach().numpy(force=True),
                                      torch.nn.utils.rnn.pad_sequence(t_seqs, **kw).detach().numpy())
    s_packed = rnn_utils.pack_sequence(s_seqs, enforce_sorted=False)
    t_packed = torch.nn.utils.rnn.pack_sequence(t_seqs, enforce_sorted=False)
    np.testing.assert_array_equal(s_packed.data.detach().numpy(force=True), t_packed.data.detach().numpy())
    assert s_packed.batch_sizes.device.type == "cpu"
    assert s_packed.unsorted_indices.tolist() == t_packed.unsorted_indices.tolist()
    back = rnn_utils.unpack_sequence(s_packed)
    for b, s in zip(back, seqs):
        np.testing.assert_array_equal(b.detach().numpy(force=True), s)
    # gradients flow through pack -> pad -> unpad to each sequence
    s_total = sum((t * (i + 1)).sum() for i, t in enumerate(back))
    s_total.backward()
    for i, s in enumerate(s_seqs):
        np.testing.assert_array_equal(s.grad.numpy(force=True), np.full(seqs[i].shape, i + 1.0, np.float32))
    with pytest.raises(RuntimeError, match="pad_sequence: Expected iterable for input sequences"):
        rnn_utils.pad_sequence(s_seqs[0])
    with pytest.raises(ValueError, match="Expected total_length to be at least"):
        rnn_utils.pad_packed_sequence(s_packed, total_length=2)


def test_state_dict_names_shapes_and_init_without_torch():
    m = nn.LSTM(F, H, num_layers=2, bidirectional=True, proj_size=2)
    shapes = {k: tuple(v.shape) for k, v in m.state_dict().items()}
    assert shapes["weight_ih_l0"] == (4 * H, F) and shapes["weight_hh_l0_reverse"] == (4 * H, 2)
    assert shapes["weight_ih_l1"] == (4 * H, 4) and shapes["weight_hr_l1_reverse"] == (2, H)
    assert len(shapes) == 20 and len(m.all_weights) == 4
    bound = 1 / np.sqrt(H)
    assert all(float(p.detach().abs().max()) <= bound for p in m.parameters())
    assert repr(m) == "LSTM(4, 6, proj_size=2, num_layers=2, bidirectional=True)"
    m = m.double()
    assert m._flat_weights[0].dtype is st.float64
    out, (h, c) = m(st.zeros(T, N, F, dtype=st.float64))
    assert tuple(out.shape) == (T, N, 4) and tuple(h.shape) == (4, N, 2) and tuple(c.shape) == (4, N, H)


def test_meta_device_gives_shapes():
    m = nn.GRU(F, H, num_layers=2, bidirectional=True, batch_first=True, device="meta")
    out, h = m(st.empty(N, T, F, device="meta"))
    assert out.device.type == "meta" and tuple(out.shape) == (N, T, 2 * H) and tuple(h.shape) == (4, N, H)
    packed = rnn_utils.pack_padded_sequence(st.empty(T, N, F, device="meta"), [5, 4, 2])
    out, h = m(packed)
    assert tuple(out.data.shape) == (11, 2 * H)


def test_dropout_between_layers_only_in_training():
    st.manual_seed(0)
    m = nn.LSTM(F, H, num_layers=2, dropout=0.5)
    x = st.tensor(_np(T, N, F))
    m.eval()
    np.testing.assert_array_equal(m(x)[0].detach().numpy(), m(x)[0].detach().numpy())
    m.train()
    assert not np.allclose(m(x)[0].detach().numpy(), m(x)[0].detach().numpy())
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.GRU(F, H, dropout=0.2)


def test_errors_in_torchs_words():
    with pytest.raises(ValueError, match=r"dropout should be a number in range \[0, 1\]"):
        nn.LSTM(F, H, dropout=1.5)
    with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM, not RNN or GRU"):
        nn.GRU(F, H, proj_size=2)
    with pytest.raises(ValueError, match="proj_size has to be smaller than hidden_size"):
        nn.LSTM(F, H, proj_size=H)
    with pytest.raises(ValueError, match="Unknown nonlinearity 'gelu'. Select from 'tanh' or 'relu'."):
        nn.RNN(F, H, nonlinearity="gelu")
    with pytest.raises(TypeError, match="hidden_size should be of type int, got: float"):
        nn.RNN(F, 2.0)
    with pytest.raises(ValueError, match="num_layers must be greater than zero"):
        nn.GRU(F, H, num_layers=0)
    m = nn.LSTM(F, H)
    with pytest.raises(ValueError, match="LSTM: Expected input to be 2D or 3D, got 4D instead"):
        m(st.zeros(1, T, N, F))
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size. Expected 4, got 3"):
        m(st.zeros(T, N, 3))
    with pytest.raises(RuntimeError, match=r"Expected hidden\[0\] size \(1, 3, 6\), got \[1, 2, 6\]"):
        m(st.zeros(T, N, F), (st.zeros(1, 2, H), st.zeros(1, 2, H)))
    with pytest.raises(RuntimeError, match="For batched 3-D input, hx and cx should also be 3-D but got"):
        m(st.zeros(T, N, F), (st.zeros(N, H), st.zeros(N, H)))
    with pytest.raises(ValueError, match=r"RNN input dtype \(strided.float64\) does not match weight dtype"):
        m(st.zeros(T, N, F, dtype=st.float64))
    g = nn.GRU(F, H)
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(1, 3, 6\), got \[1, 3, 5\]"):
        g(st.zeros(T, N, F), st.zeros(1, N, 5))
    with pytest.raises(RuntimeError, match="For unbatched 2-D input, hx should also be 2-D but got 3-D tensor"):
        g(st.zeros(T, F), st.zeros(1, 1, H))
    with pytest.raises(ValueError, match="GRUCell: Expected input to be 1D or 2D, got 3D instead"):
        nn.GRUCell(F, H)(st.zeros(1, N, F))
    with pytest.raises(RuntimeError, match="Input batch size 3 doesn't match hidden0 batch size 2"):
        nn.RNNCell(F, H)(st.zeros(N, F), st.zeros(2, H))
    with pytest.raises(ValueError, match="batch_sizes should always be on CPU"):
        rnn_utils.PackedSequence(st.zeros(3, F), st.tensor([2, 1], device="meta"))


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_fused_cell_gradients_are_differentiable(cell):
    """create_graph=True takes the recomputed path of the fused cells' formulas: its gradient is checked
    against finite differences of the first gradient."""
    from strided.autograd import gradcheck

    rng = np.random.default_rng(0)
    g = 4 if cell == "lstm" else 3

    def t(*shape):
        return st.tensor(rng.uniform(-1, 1, shape)).requires_grad_()

    x, h, c, w_ih, w_hh, b_ih, b_hh = t(2, 3), t(2, 2), t(2, 2), t(g * 2, 3), t(g * 2, 2), t(g * 2), t(g * 2)

    def first_grad(x, h, c, b_hh, create_graph=True):
        if cell == "lstm":
            hy, cy = st.lstm_cell(x, [h, c], w_ih, w_hh, b_ih, b_hh)
            loss = (hy * hy).sum() + (cy * cy * cy).sum()
        else:
            loss = (st.gru_cell(x, h, w_ih, w_hh, b_ih, b_hh) ** 3).sum() + (c * 0).sum()
        return st.autograd.grad(loss, (x, h, c, b_hh), create_graph=create_graph, allow_unused=True)

    # the recomputed gradients equal the fused backward op's, and are themselves differentiable
    for a, b in zip(first_grad(x, h, c, b_hh), first_grad(x, h, c, b_hh, create_graph=False)):
        np.testing.assert_allclose(a.detach().numpy(), b.numpy(), rtol=1e-12, atol=1e-14)
    assert gradcheck(first_grad, (x, h, c, b_hh))


def test_non_tensor_arguments_are_named():
    with pytest.raises(TypeError, match=r"pad_packed_sequence\(\): argument 'sequence' must be PackedSequence"):
        rnn_utils.pad_packed_sequence("x")
    with pytest.raises(TypeError, match="pack_padded_sequence\\(\\): argument 'input' must be Tensor, not list"):
        rnn_utils.pack_padded_sequence([[1.0]], [1])
    with pytest.raises(TypeError, match="'lengths' must be a 1-D CPU int64 tensor or a sequence of ints, got 'ab'"):
        rnn_utils.pack_padded_sequence(st.zeros(3, 2, 1), "ab")
    with pytest.raises(TypeError, match="pad_sequence\\(\\): expected a sequence of Tensors, but element 1 is int"):
        rnn_utils.pad_sequence([st.zeros(2), 2])
    with pytest.raises(RuntimeError, match="unpad_sequence: got 1 lengths for a batch of 2 sequences"):
        rnn_utils.unpad_sequence(st.zeros(3, 2, 1), [3])
    with pytest.raises(TypeError, match="PackedSequence\\(\\): argument 'data' must be Tensor, not str"):
        rnn_utils.PackedSequence("x", st.tensor([1]))
    with pytest.raises(TypeError, match=r"LSTM: Expected hx to be a tuple of two Tensors \(h_0, c_0\), got Tensor"):
        nn.LSTM(2, 3)(st.zeros(4, 1, 2), st.zeros(1, 1, 3))
    with pytest.raises(TypeError, match="GRU: Expected hx to be a Tensor, got tuple"):
        nn.GRU(2, 3)(st.zeros(4, 1, 2), (st.zeros(1, 1, 3),))
    with pytest.raises(TypeError, match="GRUCell: input must be a Tensor, got str"):
        nn.GRUCell(2, 3)("x")
    # numpy integers are lengths too, as in torch
    packed = rnn_utils.pack_padded_sequence(st.zeros(3, 2, 1), [np.int64(3), np.int64(1)])
    assert packed.batch_sizes.tolist() == [2, 1, 1]
