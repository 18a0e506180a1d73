"""CPU kernels of the fused recurrent cells (NumPy; half types computed in float32): the same math as
``backends/cuda/kernels/rnn.cu``, so a model's forward and backward take the same steps on either device."""

from __future__ import annotations

import numpy as np

from ...dispatch.library import kernel
from ..meta import recurrent as meta
from ..meta.common import new_output
from .common import as_numpy, compute_dtype, store

__all__: list[str] = []


def _a(t, cd):
    return None if t is None else as_numpy(t).astype(cd)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _gates(input_gates, hidden_gates, input_bias, hidden_bias, cd, factor):
    """The summed gates as ``factor`` (N, H) arrays, and the hidden gates' own split (the GRU needs it)."""
    ig, hg = _a(input_gates, cd), _a(hidden_gates, cd)
    if input_bias is not None:
        ig = ig + _a(input_bias, cd)
    if hidden_bias is not None:
        hg = hg + _a(hidden_bias, cd)
    return np.split(ig, factor, 1), np.split(hg, factor, 1)


@kernel("CPU")
def _thnn_fused_lstm_cell(input_gates, hidden_gates, cx, input_bias=None, hidden_bias=None):
    _, cy_out, ws = meta.fused_cell_outputs("_thnn_fused_lstm_cell", input_gates, hidden_gates, input_bias,
                                            hidden_bias, 4, cx)
    hy_out = new_output(cy_out._sizes, cy_out.dtype, cy_out.device)
    cd = compute_dtype(cx.dtype)
    (ii, fi, gi, oi), (ih, fh, gh, oh) = _gates(input_gates, hidden_gates, input_bias, hidden_bias, cd, 4)
    i, f, g, o = _sigmoid(ii + ih), _sigmoid(fi + fh), np.tanh(gi + gh), _sigmoid(oi + oh)
    cy = f * _a(cx, cd) + i * g
    store(ws, np.concatenate([i, f, g, o], 1))
    store(cy_out, cy)
    return store(hy_out, o * np.tanh(cy)), cy_out, ws


@kernel("CPU")
def _thnn_fused_lstm_cell_backward_impl(grad_hy, grad_cy, cx, cy, workspace, has_bias):
    gg_out, gcx_out = meta.lstm_backward_outputs(grad_hy, grad_cy, cx, cy, workspace)
    cd = compute_dtype(cx.dtype)
    i, f, g, o = np.split(_a(workspace, cd), 4, 1)
    tc = np.tanh(_a(cy, cd))
    gh = _a(grad_hy, cd) if grad_hy is not None else np.zeros_like(tc)
    gc = gh * o * (1 - tc * tc) + (_a(grad_cy, cd) if grad_cy is not None else 0)
    store(gg_out, np.concatenate([gc * g * i * (1 - i), gc * _a(cx, cd) * f * (1 - f), gc * i * (1 - g * g),
                                  gh * tc * o * (1 - o)], 1))
    store(gcx_out, gc * f)
    return gg_out, gcx_out, meta.bias_grad(gg_out, has_bias)


@kernel("CPU")
def _thnn_fused_gru_cell(input_gates, hidden_gates, hx, input_bias=None, hidden_bias=None):
    _, hy_out, ws = meta.fused_cell_outputs("_thnn_fused_gru_cell", input_gates, hidden_gates, input_bias,
                                            hidden_bias, 3, hx)
    cd = compute_dtype(hx.dtype)
    (ri, zi, ni), (rh, zh, hn) = _gates(input_gates, hidden_gates, input_bias, hidden_bias, cd, 3)
    r, z = _sigmoid(ri + rh), _sigmoid(zi + zh)
    n = np.tanh(ni + r * hn)
    h = _a(hx, cd)
    store(ws, np.concatenate([r, z, n, h, hn], 1))
    return store(hy_out, n + z * (h - n)), ws


@kernel("CPU")
def _thnn_fused_gru_cell_backward(grad_hy, workspace, has_bias):
    gig_out, ghg_out, ghx_out = meta.gru_backward_outputs(grad_hy, workspace)
    cd = compute_dtype(grad_hy.dtype)
    r, z, n, h, hn = np.split(_a(workspace, cd), 5, 1)
    gh = _a(grad_hy, cd)
    gn = gh * (1 - z) * (1 - n * n)
    gz = gh * (h - n) * z * (1 - z)
    gr = gn * hn * r * (1 - r)
    store(gig_out, np.concatenate([gr, gz, gn], 1))
    store(ghg_out, np.concatenate([gr, gz, gn * r], 1))
    store(ghx_out, gh * z)
    return gig_out, ghg_out, ghx_out, meta.bias_grad(gig_out, has_bias), meta.bias_grad(ghg_out, has_bias)
