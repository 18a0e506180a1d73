"""Derivative helpers of the fused recurrent cells (``_thnn_fused_lstm_cell``, ``_thnn_fused_gru_cell``).

As torch's formulas: while no graph is recorded, one fused backward op reads the workspace the forward
kept (Note [Fused cells] in backends/cuda/kernels/recurrent_ops.py); under ``create_graph`` the gates are
recomputed from the inputs with ordinary ops, so the gradient is itself differentiable
(torch's ``_thnn_differentiable_lstm_cell_backward`` / ``_thnn_differentiable_gru_cell_backward``).
"""

from __future__ import annotations

from ..dispatch.dispatcher import grad_mode
from ..ops import bound as ops

__all__ = ["fused_lstm_cell_backward", "fused_gru_cell_backward"]


def _summed(input_gates, hidden_gates, input_bias, hidden_bias):
    gates = ops.add(input_gates, hidden_gates)
    for b in (input_bias, hidden_bias):
        if b is not None:
            gates = ops.add(gates, b)
    return gates


def _bias_grads(grad_gates_in, grad_gates_hidden, input_bias, hidden_bias, mask):
    gib = ops.sum(grad_gates_in, [0]) if input_bias is not None and mask[0] else None
    ghb = ops.sum(grad_gates_hidden, [0]) if hidden_bias is not None and mask[1] else None
    return gib, ghb


def fused_lstm_cell_backward(grad_hy, grad_cy, input_gates, hidden_gates, cx, input_bias, hidden_bias, cy,
                             workspace, grad_input_mask):
    """Gradients for (input_gates, hidden_gates, cx, input_bias, hidden_bias): the gates' gradient serves
    both gate inputs; the biases' is its sum over the batch."""
    if not grad_mode.enabled:
        gg, gcx, _ = ops._thnn_fused_lstm_cell_backward_impl(grad_hy, grad_cy, cx, cy, workspace, False)
    else:
        i, f, g, o = ops.chunk(_summed(input_gates, hidden_gates, input_bias, hidden_bias), 4, 1)
        i, f, g, o = ops.sigmoid(i), ops.sigmoid(f), ops.tanh(g), ops.sigmoid(o)
        tc = ops.tanh(f * cx + i * g)
        gc = grad_hy * o * (1 - tc * tc) + grad_cy
        gg = ops.cat([gc * g * i * (1 - i), gc * cx * f * (1 - f), gc * i * (1 - g * g), grad_hy * tc * o * (1 - o)],
                     1)
        gcx = gc * f
    m_in, m_hidden, m_cx, m_ib, m_hb = grad_input_mask
    gib, ghb = _bias_grads(gg, gg, input_bias, hidden_bias, (m_ib, m_hb))
    return gg if m_in else None, gg if m_hidden else None, gcx if m_cx else None, gib, ghb


def fused_gru_cell_backward(grad_hy, input_gates, hidden_gates, hx, input_bias, hidden_bias, workspace,
                            grad_input_mask):
    """Gradients for (input_gates, hidden_gates, hx, input_bias, hidden_bias)."""
    if not grad_mode.enabled:
        gig, ghg, ghx, _, _ = ops._thnn_fused_gru_cell_backward(grad_hy, workspace, False)
    else:
        ig, hg = input_gates, hidden_gates
        if input_bias is not None:
            ig = ops.add(ig, input_bias)
        if hidden_bias is not None:
            hg = ops.add(hg, hidden_bias)
        ir, iz, i_n = ops.chunk(ig, 3, 1)
        hr, hz, hn = ops.chunk(hg, 3, 1)
        r, z = ops.sigmoid(ir + hr), ops.sigmoid(iz + hz)
        n = ops.tanh(i_n + r * hn)
        gn = grad_hy * (1 - z) * (1 - n * n)
        gz = grad_hy * (hx - n) * z * (1 - z)
        gr = gn * hn * r * (1 - r)
        gig, ghg, ghx = ops.cat([gr, gz, gn], 1), ops.cat([gr, gz, gn * r], 1), grad_hy * z
    m_in, m_hidden, m_hx, m_ib, m_hb = grad_input_mask
    gib, ghb = _bias_grads(gig, ghg, input_bias, hidden_bias, (m_ib, m_hb))
    return gig if m_in else None, ghg if m_hidden else None, ghx if m_hx else None, gib, ghb
