"""``CausalSelfAttention``: the multi-head masked self-attention block of GPT models."""

from __future__ import annotations

import math

from ... import dtypes as _dt
from ... import factories
from ...tensor import Tensor
from .. import functional as F
from ..module import Module
from .dropout import Dropout
from .linear import Linear

__all__ = ["CausalSelfAttention"]


class CausalSelfAttention(Module):
    """Multi-head self-attention where position ``t`` attends to positions ``<= t``.

    One fused Linear projects the input (B, T, C) to queries, keys and values; each of
    ``num_heads`` heads computes ``softmax(q k^T / sqrt(C / num_heads))`` with future positions
    masked to -inf, dropout on the weights, the weighted sum of values; the heads are concatenated
    and projected back to C, then dropped out (residual dropout).

    Parameters
    ----------
    embed_dim : int
        C, divisible by ``num_heads``.
    num_heads : int
        Attention heads.
    max_seq_len : int
        Longest sequence; the causal mask is a (non-persistent) buffer of this size.
    dropout : float
        Dropout probability on the attention weights and on the output.
    bias : bool
        Biases in the two Linear layers.
    """

    def __init__(self, embed_dim: int, num_heads: int, max_seq_len: int, dropout: float = 0.0, bias: bool = True,
                 device=None, dtype=None) -> None:
        super().__init__()
        if embed_dim % num_heads:
            raise ValueError(f"embed_dim ({embed_dim}) must be divisible by num_heads ({num_heads})")
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.max_seq_len = max_seq_len
        self.c_attn = Linear(embed_dim, 3 * embed_dim, bias=bias, device=device, dtype=dtype)
        self.c_proj = Linear(embed_dim, embed_dim, bias=bias, device=device, dtype=dtype)
        self.attn_dropout = Dropout(dropout)
        self.resid_dropout = Dropout(dropout)
        # True above the diagonal: the future positions each query must not see.
        future = factories.ones((max_seq_len, max_seq_len), dtype=_dt.bool, device=device).triu(1)
        self.register_buffer("mask", future, persistent=False)

    def forward(self, x: Tensor) -> Tensor:
        B, T, C = x.shape
        if T > self.max_seq_len:
            raise ValueError(f"CausalSelfAttention: sequence length {T} exceeds max_seq_len {self.max_seq_len}")
        H = self.num_heads
        D = C // H
        q, k, v = self.c_attn(x).split(C, dim=2)
        q = q.view(B, T, H, D).transpose(1, 2)  # (B, H, T, D)
        k = k.view(B, T, H, D).transpose(1, 2)
        v = v.view(B, T, H, D).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(D))
        att = att.masked_fill(self.mask[:T, :T], float("-inf"))
        att = F.softmax(att, dim=-1)
        att = self.attn_dropout(att)
        y = att @ v  # (B, H, T, D)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))

    def extra_repr(self) -> str:
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, max_seq_len={self.max_seq_len}"
