"""The demo's model and data (``python -m strided.demo``): its named configurations, the text as character ids
(``CharData``), and a character-level GPT built from ``strided.nn`` (pre-LayerNorm blocks of causal
self-attention and a GELU MLP)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from importlib import resources

import numpy as np

import strided as st
from strided import nn
from strided.nn import functional as F
from strided.utils.checkpoint import checkpoint

__all__ = ["Config", "CONFIGS", "load_text", "CharData", "Block", "GPT"]


@dataclass(frozen=True)
class Config:
    """Model and training sizes of one named configuration."""

    n_layer: int
    n_head: int
    n_embd: int
    block_size: int
    batch_size: int
    steps: int
    lr: float
    dropout: float = 0.0
    warmup: int = 20
    checkpoint: bool = False  # recompute each block's activations in backward (strided.utils.checkpoint)


CONFIGS = {
    # ~0.1M parameters: 200 steps on a 2-core CPU in well under a minute
    "tiny": Config(n_layer=2, n_head=4, n_embd=64, block_size=32, batch_size=16, steps=200, lr=5e-3),
    # ~3.2M parameters: for a GPU
    "small": Config(n_layer=4, n_head=8, n_embd=256, block_size=128, batch_size=64, steps=1500, lr=2e-3,
                    dropout=0.1, warmup=100),
}


# ------------------------------------------------------------------------------------- data
def load_text() -> str:
    return resources.files("strided.data").joinpath("shakespeare.txt").read_text(encoding="utf-8")


class CharData:
    """The text as integer ids (one per distinct character), split 90/10 into train and validation."""

    def __init__(self, text: str, device, seed: int):
        self.chars = sorted(set(text))
        self.stoi = {c: i for i, c in enumerate(self.chars)}
        ids = np.array([self.stoi[c] for c in text], dtype=np.int64)
        n = int(0.9 * len(ids))
        self.train, self.val = ids[:n], ids[n:]
        self.device = device
        self.rng = np.random.default_rng(seed)

    @property
    def vocab_size(self) -> int:
        return len(self.chars)

    def batch(self, split: str, batch_size: int, block_size: int):
        """Random windows: inputs (B, T) and the next characters as targets (B, T)."""
        data = self.train if split == "train" else self.val
        starts = self.rng.integers(0, len(data) - block_size - 1, batch_size)
        rows = starts[:, None] + np.arange(block_size + 1)
        window = data[rows]
        x = st.from_numpy(np.ascontiguousarray(window[:, :-1]))
        y = st.from_numpy(np.ascontiguousarray(window[:, 1:]))
        if self.device.type == "cuda":
            # from pinned memory, without waiting: a pageable copy would synchronize the stream
            return x.pin_memory().to(self.device, non_blocking=True), y.pin_memory().to(self.device, non_blocking=True)
        return x, y

    def decode(self, ids) -> str:
        return "".join(self.chars[i] for i in ids)


# ------------------------------------------------------------------------------------- model
class Block(nn.Module):
    """Pre-LayerNorm transformer block: ``x + attn(ln(x))``, then ``x + mlp(ln(x))``."""

    def __init__(self, cfg: Config, device):
        super().__init__()
        c = cfg.n_embd
        self.ln_1 = nn.LayerNorm(c, device=device)
        self.attn = nn.CausalSelfAttention(c, cfg.n_head, cfg.block_size, cfg.dropout, device=device)
        self.ln_2 = nn.LayerNorm(c, device=device)
        self.mlp = nn.Sequential(nn.Linear(c, 4 * c, device=device), nn.GELU(approximate="tanh"),
                                 nn.Linear(4 * c, c, device=device), nn.Dropout(cfg.dropout))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    """A character-level GPT: embeddings, ``n_layer`` blocks, a final LayerNorm and a vocabulary head."""

    def __init__(self, cfg: Config, vocab_size: int, device):
        super().__init__()
        self.cfg = cfg
        self.wte = nn.Embedding(vocab_size, cfg.n_embd, device=device)
        self.wpe = nn.Embedding(cfg.block_size, cfg.n_embd, device=device)
        self.drop = nn.Dropout(cfg.dropout)
        self.h = nn.ModuleList([Block(cfg, device) for _ in range(cfg.n_layer)])
        self.ln_f = nn.LayerNorm(cfg.n_embd, device=device)
        self.lm_head = nn.Linear(cfg.n_embd, vocab_size, bias=False, device=device)
        self.apply(self._init_weights)
        for block in self.h:  # GPT-2: residual projections scaled down by depth
            nn.init.normal_(block.attn.c_proj.weight, std=0.02 / math.sqrt(2 * cfg.n_layer))
        self.register_buffer("pos", st.arange(cfg.block_size, device=device), persistent=False)

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def forward(self, idx, targets=None):
        t = idx.shape[1]
        x = self.drop(self.wte(idx) + self.wpe(self.pos[:t]))
        for block in self.h:
            x = checkpoint(block, x, use_reentrant=False) if self.cfg.checkpoint else block(x)
        logits = self.lm_head(self.ln_f(x))
        if targets is None:
            return logits, None
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        return logits, loss

    def generate(self, idx, n_tokens: int, rng: np.random.Generator, temperature: float = 0.8):
        """Append ``n_tokens`` characters sampled from the model (on the host) to ``idx`` (1, T)."""
        out = list(idx.cpu().numpy()[0])
        with st.no_grad():
            for _ in range(n_tokens):
                ctx = st.tensor([out[-self.cfg.block_size:]], device=idx.device)
                logits, _ = self(ctx)
                last = logits[0, -1].float().cpu().numpy().astype(np.float64) / temperature
                p = np.exp(last - last.max())
                out.append(int(rng.choice(len(p), p=p / p.sum())))
        return out
