"""Meta functions of the fused recurrent cells (``_thnn_fused_lstm_cell``, ``_thnn_fused_gru_cell`` and
their backwards): torch's size checks (``checkSizes`` in aten/src/ATen/native/cuda/RNN.cu) and the
outputs, shared by the CPU and CUDA kernels."""

from __future__ import annotations

from ...dispatch.library import kernel
from .common import check, new_output

__all__ = ["fused_cell_outputs", "lstm_backward_outputs", "gru_backward_outputs"]

_FLOATS = ("float16", "bfloat16", "float32", "float64")


def _check_cell(op: str, input_gates, hidden_gates, input_bias, hidden_bias, factor: int, prev):
    check(input_gates.dim() == 2, lambda: f"{op}: Expected input_gates to be 2-D (batch, {factor} * hidden_size), "
          f"got {input_gates.dim()}-D")
    check(hidden_gates._sizes == input_gates._sizes, lambda: f"{op}: Expected hidden_gates of the size of "
          f"input_gates, {list(input_gates._sizes)}, got {list(hidden_gates._sizes)}")
    gates = input_gates._sizes[1]
    check(gates % factor == 0, lambda: f"{op}: Expected the gate size to be a multiple of {factor}, got {gates}")
    hidden = gates // factor
    for name, b in (("input_bias", input_bias), ("hidden_bias", hidden_bias)):
        if b is not None and b._sizes != (gates,):
            raise RuntimeError(f"{op}: Expected {name} of size [{gates}], got {list(b._sizes)}")
    check(prev._sizes == (input_gates._sizes[0], hidden), lambda: f"{op}: Expected the previous state of size "
          f"[{input_gates._sizes[0]}, {hidden}], got {list(prev._sizes)}")
    d = input_gates.dtype
    check(d.name in _FLOATS, lambda: f"{op}: expected a floating point dtype, got {d}")
    for t in (hidden_gates, prev, input_bias, hidden_bias):
        if t is not None and t.dtype is not d:
            raise RuntimeError(f"{op}: expected every tensor to be {d}, got {t.dtype}")
        if t is not None and t.device != input_gates.device:
            raise RuntimeError(f"{op}: expected every tensor on {input_gates.device}, got one on {t.device}")
    return hidden


def fused_cell_outputs(op: str, input_gates, hidden_gates, input_bias, hidden_bias, factor: int, prev):
    """(hidden_size, new state, workspace): LSTM factor 4 (workspace N x 4H), GRU factor 3 (N x 5H)."""
    hidden = _check_cell(op, input_gates, hidden_gates, input_bias, hidden_bias, factor, prev)
    n, d, dev = input_gates._sizes[0], input_gates.dtype, input_gates.device
    ws = new_output((n, (4 if factor == 4 else 5) * hidden), d, dev)
    return hidden, new_output((n, hidden), d, dev), ws


def lstm_backward_outputs(grad_hy, grad_cy, cx, cy, workspace):
    """(grad_gates (N, 4H), grad_cx (N, H)) after checking the saved tensors agree."""
    n, hidden = cx._sizes
    for name, t in (("grad_hy", grad_hy), ("grad_cy", grad_cy), ("cy", cy)):
        if t is not None and t._sizes != cx._sizes:
            raise RuntimeError(f"_thnn_fused_lstm_cell_backward_impl: Expected {name} of size {list(cx._sizes)}, "
                               f"got {list(t._sizes)}")
    check(workspace._sizes == (n, 4 * hidden), lambda: "_thnn_fused_lstm_cell_backward_impl: Expected workspace of "
          f"size {[n, 4 * hidden]}, got {list(workspace._sizes)}")
    return new_output((n, 4 * hidden), cx.dtype, cx.device), new_output((n, hidden), cx.dtype, cx.device)


def gru_backward_outputs(grad_hy, workspace):
    """(grad_input_gates, grad_hidden_gates (N, 3H), grad_hx (N, H))."""
    check(grad_hy.dim() == 2 and workspace._sizes == (grad_hy._sizes[0], 5 * grad_hy._sizes[1]),
          lambda: f"_thnn_fused_gru_cell_backward: Expected workspace of size [N, 5 * H] for grad_hy of size "
          f"{list(grad_hy._sizes)}, got {list(workspace._sizes)}")
    n, hidden = grad_hy._sizes
    d, dev = grad_hy.dtype, grad_hy.device
    return new_output((n, 3 * hidden), d, dev), new_output((n, 3 * hidden), d, dev), new_output((n, hidden), d, dev)


def bias_grad(grad_gates, has_bias: bool):
    """The bias gradient: the gate gradient summed over the batch (an empty tensor without bias, as torch's
    undefined one)."""
    from ...ops import bound as ops

    if not has_bias:
        return new_output((0,), grad_gates.dtype, grad_gates.device)
    return ops.sum(grad_gates, [0])


@kernel("Meta")
def _thnn_fused_lstm_cell(input_gates, hidden_gates, cx, input_bias=None, hidden_bias=None):
    _, cy, ws = fused_cell_outputs("_thnn_fused_lstm_cell", input_gates, hidden_gates, input_bias, hidden_bias, 4, cx)
    return new_output(cy._sizes, cy.dtype, cy.device), cy, ws


@kernel("Meta")
def _thnn_fused_lstm_cell_backward_impl(grad_hy, grad_cy, cx, cy, workspace, has_bias):
    gg, gcx = lstm_backward_outputs(grad_hy, grad_cy, cx, cy, workspace)
    return gg, gcx, bias_grad(gg, has_bias)


@kernel("Meta")
def _thnn_fused_gru_cell(input_gates, hidden_gates, hx, input_bias=None, hidden_bias=None):
    _, hy, ws = fused_cell_outputs("_thnn_fused_gru_cell", input_gates, hidden_gates, input_bias, hidden_bias, 3, hx)
    return hy, ws


@kernel("Meta")
def _thnn_fused_gru_cell_backward(grad_hy, workspace, has_bias):
    gig, ghg, ghx = gru_backward_outputs(grad_hy, workspace)
    return gig, ghg, ghx, bias_grad(gig, has_bias), bias_grad(ghg, has_bias)
