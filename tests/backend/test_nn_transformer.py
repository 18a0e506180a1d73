"""nn.MultiheadAttention and the Transformer layers: torch's results from torch's weights (state dicts
load as they are), gradients, masks in torch's MHA convention, errors."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import strided as st
import strided.nn as nn

E, H, L, S, N = 8, 2, 5, 6, 3


def _x(*shape, seed=0):
    return st.tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def test_shapes_weights_and_gradients():
    m = nn.MultiheadAttention(E, H, batch_first=True)
    q, kv = _x(N, L, E).requires_grad_(), _x(N, S, E, seed=1)
    out, w = m(q, kv, kv)
    assert tuple(out.shape) == (N, L, E) and tuple(w.shape) == (N, L, S)
    np.testing.assert_allclose(w.sum(-1).detach().numpy(), np.ones((N, L)), rtol=1e-5)
    _, w_heads = m(q, kv, kv, average_attn_weights=False)
    assert tuple(w_heads.shape) == (N, H, L, S)
    out2, none = m(q, kv, kv, need_weights=False)
    assert none is None
    np.testing.assert_allclose(out2.detach().numpy(), out.detach().numpy(), rtol=1e-5, atol=1e-6)
    out.sum().backward()
    assert q.grad is not None and all(p.grad is not None for p in m.parameters())


def test_bool_masks_block_attention():
    m = nn.MultiheadAttention(E, H)
    q, kv = _x(L, N, E), _x(S, N, E, seed=1)
    kpm = st.zeros(N, S, dtype=st.bool)
    kpm[:, -2:] = True  # the last two keys of every batch are padding
    with st.no_grad():
        _, w = m(q, kv, kv, key_padding_mask=kpm)
        assert float(w[:, :, -2:].abs().max()) == 0.0
        causal = nn.Transformer.generate_square_subsequent_mask(L)
        _, w = m(q, q, q, attn_mask=causal)
        assert float(w.triu(1).abs().max()) == 0.0
        _, wb = m(q, q, q, attn_mask=st.ones(L, L, dtype=st.bool).triu(1))
    np.testing.assert_allclose(wb.numpy(), w.numpy(), rtol=1e-6)


def test_errors():
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(10, 3)
    m = nn.MultiheadAttention(E, H)
    q = _x(L, N, E)
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        m(q, q, q, is_causal=True)
    with pytest.raises(AssertionError, match="only bool and floating types of attn_mask are supported"):
        m(q, q, q, attn_mask=st.zeros(L, L, dtype=st.int64))
    with pytest.raises(RuntimeError, match=r"The shape of the 2D attn_mask is \(4, 4\), but should be \(5, 5\)"):
        m(q, q, q, attn_mask=st.zeros(4, 4))
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(E, H, activation="tanh")


def test_encoder_layers_are_independent_copies_and_dropout_only_trains():
    layer = nn.TransformerEncoderLayer(E, H, 16, dropout=0.5)
    enc = nn.TransformerEncoder(layer, 2)
    p0, p1 = enc.layers[0].linear1.weight, enc.layers[1].linear1.weight
    assert p0 is not p1
    with st.no_grad():
        p0.add_(1.0)
    assert not np.allclose(p0.detach().numpy(), p1.detach().numpy())
    x = _x(L, N, E)
    enc.eval()
    np.testing.assert_array_equal(enc(x).detach().numpy(), enc(x).detach().numpy())
    enc.train()
    assert not np.allclose(enc(x).detach().numpy(), enc(x).detach().numpy())
    assert copy.deepcopy(enc).layers[0].linear1.weight is not p0


def _load(sm, tm):
    sm.load_state_dict({k: st.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})


@pytest.mark.parametrize("kw", [{}, {"batch_first": True}, {"kdim": 4, "vdim": 6}, {"add_bias_kv": True,
                                "add_zero_attn": True}, {"bias": False}])
def test_multihead_attention_matches_torch(kw):
    torch = pytest.importorskip("torch")
    tm, sm = torch.nn.MultiheadAttention(E, H, **kw), nn.MultiheadAttention(E, H, **kw)
    _load(sm, tm)
    rng = np.random.default_rng(1)
    bf = kw.get("batch_first", False)
    shapes = [(L, E), (S, kw.get("kdim", E)), (S, kw.get("vdim", E))]
    q, k, v = (rng.standard_normal((N, *s) if bf else (s[0], N, s[1])).astype(np.float32) for s in shapes)
    masks = {"attn_mask": rng.random((L, S)) < 0.3, "key_padding_mask": rng.random((N, S)) < 0.2}
    for need in (True, False):
        for chosen in ({}, {"attn_mask"}, {"key_padding_mask"}, {"attn_mask", "key_padding_mask"}):
            t_out = tm(torch.tensor(q), torch.tensor(k), torch.tensor(v), need_weights=need,
                       **{n: torch.tensor(masks[n]) for n in chosen})
            s_out = sm(st.tensor(q), st.tensor(k), st.tensor(v), need_weights=need,
                       **{n: st.tensor(masks[n]) for n in chosen})
            np.testing.assert_allclose(s_out[0].detach().numpy(), t_out[0].detach().numpy(), rtol=1e-5, atol=1e-5)
            if need:
                np.testing.assert_allclose(s_out[1].detach().numpy(), t_out[1].detach().numpy(), rtol=1e-5,
                                           atol=1e-6)


@pytest.mark.parametrize("kw", [{}, {"norm_first": True, "activation": "gelu", "batch_first": True}])
def test_transformer_matches_torch_and_shares_its_state_dict_names(kw):
    torch = pytest.importorskip("torch")
    tt = torch.nn.Transformer(E, H, 2, 2, 16, dropout=0.0, **kw)
    stt = nn.Transformer(E, H, 2, 2, 16, dropout=0.0, **kw)
    assert sorted(stt.state_dict()) == sorted(tt.state_dict())
    _load(stt, tt)
    rng = np.random.default_rng(2)
    bf = kw.get("batch_first", False)
    src = rng.standard_normal((N, L, E) if bf else (L, N, E)).astype(np.float32)
    tgt = rng.standard_normal((N, 4, E) if bf else (4, N, E)).astype(np.float32)
    t_mask = torch.nn.Transformer.generate_square_subsequent_mask(4)
    s_mask = nn.Transformer.generate_square_subsequent_mask(4)
    np.testing.assert_array_equal(s_mask.numpy(), t_mask.numpy())
    t_out = tt(torch.tensor(src), torch.tensor(tgt), tgt_mask=t_mask)
    s_out = stt(st.tensor(src), st.tensor(tgt), tgt_mask=s_mask)
    np.testing.assert_allclose(s_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-5, atol=1e-5)
    s_out.sum().backward()
    t_out.sum().backward()
    for (name, sp), (_, tp) in zip(stt.named_parameters(), tt.named_parameters()):
        np.testing.assert_allclose(sp.grad.numpy(), tp.grad.numpy(), rtol=1e-4, atol=1e-5, err_msg=name)


def test_non_tensor_inputs_are_named():
    m = nn.MultiheadAttention(E, H)
    with pytest.raises(TypeError, match="MultiheadAttention.forward\\(\\): argument 'query' must be Tensor, not list"):
        m([1.0], _x(L, N, E), _x(L, N, E))
    with pytest.raises(TypeError, match="argument 'value' must be Tensor, not int"):
        nn.functional.multi_head_attention_forward(_x(L, N, E), _x(L, N, E), 3, E, H, None, None, None, None,
                                                   False, 0.0, m.out_proj.weight, None)


def _mha_args(m):
    return (E, H, m.in_proj_weight, m.in_proj_bias, m.bias_k, m.bias_v, m.add_zero_attn, 0.0, m.out_proj.weight,
            m.out_proj.bias)


def test_static_k_and_v_replace_the_projected_keys_and_values():
    F = nn.functional
    m = nn.MultiheadAttention(E, H)
    q, k, v = _x(L, N, E, seed=2), _x(S, N, E, seed=3), _x(S, N, E, seed=4)
    w_k, w_v = m.in_proj_weight[E:2 * E], m.in_proj_weight[2 * E:]
    b_k, b_v = m.in_proj_bias[E:2 * E], m.in_proj_bias[2 * E:]
    # the keys / values split into heads, as the function would make them: passing them as statics changes nothing
    sk = F.linear(k, w_k, b_k).reshape(S, N * H, E // H).transpose(0, 1)
    sv = F.linear(v, w_v, b_v).reshape(S, N * H, E // H).transpose(0, 1)
    want, want_w = F.multi_head_attention_forward(q, k, v, *_mha_args(m))
    got, got_w = F.multi_head_attention_forward(q, k, v, *_mha_args(m), static_k=sk, static_v=sv)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_w.detach().numpy(), want_w.detach().numpy(), rtol=1e-5, atol=1e-6)
    fast, _ = F.multi_head_attention_forward(q, k, v, *_mha_args(m), static_k=sk.mT.mT, static_v=sv,
                                             need_weights=False)  # the SDPA path, non-contiguous statics
    np.testing.assert_allclose(fast.detach().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-6)
    # statics of another length S' = 4: the key padding mask then has S' columns
    sk4, sv4 = _x(N * H, 4, E // H, seed=5).requires_grad_(), _x(N * H, 4, E // H, seed=6)
    out, w = F.multi_head_attention_forward(q, k, v, *_mha_args(m), static_k=sk4, static_v=sv4,
                                            key_padding_mask=st.tensor([[False, False, False, True]] * N))
    assert out.shape == (L, N, E) and w.shape == (N, L, 4)
    assert np.all(w.detach().numpy()[..., 3] == 0.0)
    out.sum().backward()
    assert sk4.grad is not None and sk4.grad.shape == sk4.shape
    with pytest.raises(AssertionError, match="expecting static_k.size\\(0\\) of 6, but got 2"):
        F.multi_head_attention_forward(q, k, v, *_mha_args(m), static_k=_x(2, S, E // H))
    with pytest.raises(AssertionError, match="expecting static_v.size\\(2\\) of 4, but got 3"):
        F.multi_head_attention_forward(q, k, v, *_mha_args(m), static_v=_x(N * H, S, 3))
    biased = nn.MultiheadAttention(E, H, add_bias_kv=True)
    with pytest.raises(AssertionError, match="bias cannot be added to static key."):
        F.multi_head_attention_forward(q, k, v, *_mha_args(biased), static_k=sk)


def test_static_k_and_v_match_torch():
    torch = pytest.importorskip("torch")
    tm, sm = torch.nn.MultiheadAttention(E, H), nn.MultiheadAttention(E, H)
    _load(sm, tm)
    rng = np.random.default_rng(7)
    q, k, v = (rng.standard_normal(s).astype(np.float32) for s in [(L, N, E), (S, N, E), (S, N, E)])
    sk, sv = (rng.standard_normal((N * H, 4, E // H)).astype(np.float32) for _ in range(2))
    t_args = (E, H, tm.in_proj_weight, tm.in_proj_bias, None, None, False, 0.0, tm.out_proj.weight, tm.out_proj.bias)
    t_out, t_w = torch.nn.functional.multi_head_attention_forward(
        *(torch.tensor(a) for a in (q, k, v)), *t_args, static_k=torch.tensor(sk), static_v=torch.tensor(sv))
    s_out, s_w = nn.functional.multi_head_attention_forward(
        *(st.tensor(a) for a in (q, k, v)), *_mha_args(sm), static_k=st.tensor(sk), static_v=st.tensor(sv))
    np.testing.assert_allclose(s_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(s_w.detach().numpy(), t_w.detach().numpy(), rtol=1e-5, atol=1e-6)
