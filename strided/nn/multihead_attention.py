"""``F.multi_head_attention_forward``: torch's multi-head attention, the body of ``nn.MultiheadAttention``.

Note [MHA layout]
As torch, the function takes sequence-first (L, N, E) inputs (or unbatched (L, E)); the module
transposes batch-first inputs. Queries, keys and values are projected (one packed ``in_proj_weight``
of 3E rows, or three separate weights when key / value widths differ), split into heads as
(N * H, L, E / H), and attended with ``scaled_dot_product_attention`` (or written out when the
weights are returned). Masks follow torch's MHA convention, which is the opposite of SDPA's: a bool
``attn_mask`` or ``key_padding_mask`` is True where attention is *not* allowed; both become one
additive float mask (-inf there), ``attn_mask`` 2-D (L, S) or 3-D (N * H, L, S), ``key_padding_mask``
(N, S). ``is_causal`` is only a hint, as in torch: the causal ``attn_mask`` must be given. ``static_k`` /
``static_v`` (N * H, S', E / H) replace the projected and head-split keys / values (their masks then
refer to S').
"""

from __future__ import annotations

import math

from .. import dtypes as _dt
from ..ops import bound as ops
from ..tensor import Tensor

__all__ = ["multi_head_attention_forward"]


def _canonical_mask(mask, name: str, target_dtype):
    """A bool mask as an additive float mask (-inf where True); a float mask as it is."""
    if mask is None:
        return None
    if mask.dtype is _dt.bool:
        return ops.masked_fill(ops.zeros(mask.shape, dtype=target_dtype, device=mask.device), mask, float("-inf"))
    if not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {name} are supported")
    return mask


def _in_projection(query, key, value, in_proj_weight, in_proj_bias, separate, q_w, k_w, v_w):
    E = query.shape[-1]
    from . import functional as F

    if in_proj_bias is not None:
        b_q, b_k, b_v = in_proj_bias.chunk(3)
    else:
        b_q = b_k = b_v = None
    if separate:
        return F.linear(query, q_w, b_q), F.linear(key, k_w, b_k), F.linear(value, v_w, b_v)
    if key is value and query is key:  # self-attention: one GEMM for all three
        return F.linear(query, in_proj_weight, in_proj_bias).split(E, dim=-1)
    w_q, w_k, w_v = in_proj_weight.split(E)
    return F.linear(query, w_q, b_q), F.linear(key, w_k, b_k), F.linear(value, w_v, b_v)


def multi_head_attention_forward(
    query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int, in_proj_weight,
    in_proj_bias, bias_k, bias_v, add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor, out_proj_bias,
    training: bool = True, key_padding_mask=None, need_weights: bool = True, attn_mask=None,
    use_separate_proj_weight: bool = False, q_proj_weight=None, k_proj_weight=None, v_proj_weight=None,
    static_k=None, static_v=None, average_attn_weights: bool = True, is_causal: bool = False,
):
    """Multi-head attention over sequence-first inputs (Note [MHA layout]); returns ``(output, weights)``,
    ``weights`` None unless ``need_weights`` (averaged over heads when ``average_attn_weights``)."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, Tensor):
            raise TypeError(f"multi_head_attention_forward(): argument '{name}' must be Tensor, not {type(t).__name__}")
    batched = query.dim() == 3
    if not batched:
        if query.dim() != 2 or key.dim() != 2 or value.dim() != 2:
            raise AssertionError(f"For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    elif key.dim() != 3 or value.dim() != 3:
        raise AssertionError(f"For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                             f"{key.dim()}-D and {value.dim()}-D tensors respectively")
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if key.shape[:2] != value.shape[:2]:
        raise AssertionError(f"key shape {tuple(key.shape)} does not match value shape {tuple(value.shape)}")

    q, k, v = _in_projection(query, key, value, in_proj_weight, in_proj_bias, use_separate_proj_weight,
                             q_proj_weight, k_proj_weight, v_proj_weight)
    attn_mask = _canonical_mask(attn_mask, "attn_mask", q.dtype)
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", q.dtype)
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {tuple(attn_mask.shape)}, but should be "
                                   f"{(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {tuple(attn_mask.shape)}, but should be "
                                   f"{(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = ops.cat([k, bias_k.expand(1, bsz, embed_dim)])
        v = ops.cat([v, bias_v.expand(1, bsz, embed_dim)])
        attn_mask = _pad_last(attn_mask)
        key_padding_mask = _pad_last(key_padding_mask)
    elif (bias_k is None) != (bias_v is None):
        raise AssertionError("bias_k and bias_v must both be given or both be None")

    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = _static("k", static_k, bsz * num_heads, head_dim) if static_k is not None else k.reshape(
        k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    v = _static("v", static_v, bsz * num_heads, head_dim) if static_v is not None else v.reshape(
        v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    if add_zero_attn:
        k = ops.cat([k, ops.zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype, device=k.device)], 1)
        v = ops.cat([v, ops.zeros((bsz * num_heads, 1, head_dim), dtype=v.dtype, device=v.device)], 1)
        attn_mask = _pad_last(attn_mask)
        key_padding_mask = _pad_last(key_padding_mask)
    src_len = k.shape[1]
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
                                 f"{tuple(key_padding_mask.shape)}")
        kpm = key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1).reshape(
            bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if not training:
        dropout_p = 0.0

    from . import functional as F

    if need_weights:
        scores = ops.bmm(q * math.sqrt(1.0 / head_dim), k.transpose(-2, -1))
        if attn_mask is not None:
            scores = scores + attn_mask
        weights = F.softmax(scores, dim=-1)
        if dropout_p > 0.0:
            weights = F.dropout(weights, p=dropout_p)
        out = ops.bmm(weights, v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = F.linear(out, out_proj_weight, out_proj_bias).view(tgt_len, bsz, embed_dim)
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights
    if attn_mask is not None:  # (1 or N * H, L or 1, S) -> broadcastable against (N, H, L, S)
        attn_mask = attn_mask.view(1, 1, -1, src_len) if attn_mask.shape[0] == 1 else attn_mask.view(
            bsz, num_heads, -1, src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.reshape(bsz, num_heads, src_len, head_dim)  # a static_k / static_v may not be viewable
    v = v.reshape(bsz, num_heads, src_len, head_dim)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask, dropout_p)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = F.linear(out, out_proj_weight, out_proj_bias).view(tgt_len, bsz, embed_dim)
    return (out if batched else out.squeeze(1)), None


def _static(name: str, t: Tensor, heads: int, head_dim: int) -> Tensor:
    """A ``static_k`` / ``static_v`` (N * H, S, E / H) that replaces the projected keys / values (Note [MHA
    layout]: as torch, the projections are still computed, then dropped)."""
    if t.shape[0] != heads:
        raise AssertionError(f"expecting static_{name}.size(0) of {heads}, but got {t.shape[0]}")
    if t.dim() != 3 or t.shape[2] != head_dim:
        raise AssertionError(f"expecting static_{name}.size(2) of {head_dim}, but got "
                             f"{t.shape[2] if t.dim() == 3 else list(t.shape)}")
    return t


def _pad_last(mask):
    """``mask`` with one more (zero: allowed) column for an appended key, or None."""
    if mask is None:
        return None
    return ops.cat([mask, ops.zeros(mask.shape[:-1] + (1,), dtype=mask.dtype, device=mask.device)], -1)
