"""OpInfos: the fused recurrent cells ``_thnn_fused_lstm_cell`` / ``_thnn_fused_gru_cell`` and their backward
ops (Note [Fused cells]), against NumPy: the workspace layout is checked too, since the backward reads it."""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ..opinfo import FLOATING, OpInfo, SampleInput, make_arg
from .helpers import err

__all__ = ["OPS"]

_F = dt.float32
N, H = 3, 4


def _a(shape, d, rng, nc=False):
    return make_arg(shape, d, rng=rng, noncontiguous=nc, low=-2.0, high=2.0)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _cell_samples(factor):
    def samples(d, rng):
        g = factor * H
        yield SampleInput((_a((N, g), d, rng), _a((N, g), d, rng), _a((N, H), d, rng), _a((g,), d, rng),
                           _a((g,), d, rng)), name="biases")
        yield SampleInput((_a((N, g), d, rng, nc=True), _a((N, g), d, rng), _a((N, H), d, rng, nc=True)),
                          name="no biases, noncontig")
        yield SampleInput((_a((0, g), d, rng), _a((0, g), d, rng), _a((0, H), d, rng)), name="empty batch")
    return samples


def _gates(ig, hg, ib, hb, factor):
    ig = ig + (0 if ib is None else ib)
    hg = hg + (0 if hb is None else hb)
    return np.split(ig, factor, 1), np.split(hg, factor, 1)


def _lstm_ref(ig, hg, cx, ib=None, hb=None):
    (ii, fi, gi, oi), (ih, fh, gh, oh) = _gates(ig, hg, ib, hb, 4)
    i, f, g, o = _sigmoid(ii + ih), _sigmoid(fi + fh), np.tanh(gi + gh), _sigmoid(oi + oh)
    cy = f * cx + i * g
    return o * np.tanh(cy), cy, np.concatenate([i, f, g, o], 1)


def _gru_ref(ig, hg, hx, ib=None, hb=None):
    (ri, zi, ni), (rh, zh, hn) = _gates(ig, hg, ib, hb, 3)
    r, z = _sigmoid(ri + rh), _sigmoid(zi + zh)
    n = np.tanh(ni + r * hn)
    return n + z * (hx - n), np.concatenate([r, z, n, hx, hn], 1)


def _workspace(d, rng, factor):
    """A valid LSTM workspace (activated gates) / GRU workspace (r, z, n in range; h, hn anything)."""
    if factor == 4:
        ws = make_arg((N, 4 * H), d, rng=rng, low=0.05, high=0.95)
        return ws
    return make_arg((N, 5 * H), d, rng=rng, low=-0.9, high=0.9)


def _lstm_bwd_samples(d, rng):
    for has_bias, ghy, gcy in ((True, True, True), (False, True, False), (True, False, True)):
        yield SampleInput((_a((N, H), d, rng) if ghy else None, _a((N, H), d, rng) if gcy else None,
                           _a((N, H), d, rng), _a((N, H), d, rng), _workspace(d, rng, 4), has_bias),
                          name=f"bias={has_bias}, grad_hy={ghy}, grad_cy={gcy}")


def _lstm_bwd_ref(ghy, gcy, cx, cy, ws, has_bias):
    i, f, g, o = np.split(ws, 4, 1)
    tc = np.tanh(cy)
    gh = np.zeros_like(cy) if ghy is None else ghy
    gc = gh * o * (1 - tc * tc) + (0 if gcy is None else gcy)
    gg = np.concatenate([gc * g * i * (1 - i), gc * cx * f * (1 - f), gc * i * (1 - g * g), gh * tc * o * (1 - o)], 1)
    return gg, gc * f, (gg.sum(0) if has_bias else np.zeros((0,), gg.dtype))


def _gru_bwd_samples(d, rng):
    for has_bias in (True, False):
        yield SampleInput((_a((N, H), d, rng), _workspace(d, rng, 3), has_bias), name=f"bias={has_bias}")


def _gru_bwd_ref(ghy, ws, has_bias):
    r, z, n, h, hn = np.split(ws, 5, 1)
    gn = ghy * (1 - z) * (1 - n * n)
    gz = ghy * (h - n) * z * (1 - z)
    gr = gn * hn * r * (1 - r)
    gig, ghg = np.concatenate([gr, gz, gn], 1), np.concatenate([gr, gz, gn * r], 1)
    empty = np.zeros((0,), ghy.dtype)
    return gig, ghg, ghy * z, (gig.sum(0) if has_bias else empty), (ghg.sum(0) if has_bias else empty)


def _cell_errors(name, factor):
    def errors(rng):
        g = factor * H
        yield err((_a((N, g), _F, rng), _a((N, g + 1), _F, rng), _a((N, H), _F, rng)), RuntimeError,
                  f"{name}: Expected hidden_gates of the size of input_gates, [{N}, {g}], got [{N}, {g + 1}]")
        yield err((_a((N, g), _F, rng), _a((N, g), _F, rng), _a((N, H + 1), _F, rng)), RuntimeError,
                  f"{name}: Expected the previous state of size [{N}, {H}], got [{N}, {H + 1}]")
        yield err((_a((N, g), _F, rng), _a((N, g), _F, rng), _a((N, H), _F, rng), _a((g - 1,), _F, rng)),
                  RuntimeError, f"{name}: Expected input_bias of size [{g}], got [{g - 1}]")
        yield err((_a((N, g), _F, rng), _a((N, g), _F, rng), _a((N, H), dt.float64, rng)), RuntimeError,
                  f"{name}: expected every tensor to be strided.float32, got strided.float64")
        yield err((_a((N, g + 1), _F, rng), _a((N, g + 1), _F, rng), _a((N, H), _F, rng)), RuntimeError,
                  f"{name}: Expected the gate size to be a multiple of {factor}, got {g + 1}")
    return errors


_TOL = {dt.float32: (1e-5, 1e-6)}
OPS = [
    OpInfo("_thnn_fused_lstm_cell", _cell_samples(4), ref=_lstm_ref, dtypes=FLOATING, tolerances=_TOL,
           errors=_cell_errors("_thnn_fused_lstm_cell", 4)),
    OpInfo("_thnn_fused_gru_cell", _cell_samples(3), ref=_gru_ref, dtypes=FLOATING, tolerances=_TOL,
           errors=_cell_errors("_thnn_fused_gru_cell", 3)),
    OpInfo("_thnn_fused_lstm_cell_backward_impl", _lstm_bwd_samples, ref=_lstm_bwd_ref, dtypes=FLOATING,
           tolerances=_TOL),
    OpInfo("_thnn_fused_gru_cell_backward", _gru_bwd_samples, ref=_gru_bwd_ref, dtypes=FLOATING, tolerances=_TOL),
]
