"""CUDA kernels of the fused recurrent cells (``rnn.cu``): ``_thnn_fused_lstm_cell``,
``_thnn_fused_gru_cell`` and their backwards, as torch's (aten/src/ATen/native/cuda/RNN.cu).

Note [Fused cells]
An LSTM step is a GEMM for the hidden-to-hidden product and then ten pointwise ops (adds, three
sigmoids, two tanhs, products); its backward about fifteen more. On a GPU each is a launch and a pass
over the gates, so a sequence of T steps costs ~25 T launches. The fused cell does the pointwise
part in one launch forward and one backward, keeping the activated gates in a workspace for the
backward -- what torch's native CUDA path does (``_thnn_fused_lstm_cell``). The GRU's is the same
with its r, z, n gates (workspace r, z, n, h and the hidden n-gate).
"""

from __future__ import annotations

from functools import cache

from .... import dtypes as dt
from ....dispatch.library import kernel
from ...meta import recurrent as meta
from ...meta.common import new_output
from ..launch import get_kernel
from ..reduction import acc_ctype, kernel_source
from ..streams import current_stream_handle
from . import CTYPES, launch_config

__all__ = ["rnn_sources"]

LSTM_FWD_FMT = "<QQQQQQQQqq"
LSTM_BWD_FMT = "<QQQQQQQqq"
GRU_FWD_FMT = "<QQQQQQQqq"
GRU_BWD_FMT = "<QQQQQqq"


@cache
def _source(name: str) -> str:
    return kernel_source("rnn.cu", RNN_T=CTYPES[name], ACC_T=acc_ctype(dt.to_dtype(name)))


def rnn_sources():
    """(file, kernel names, source) of every rnn.cu instantiation (NVRTC null test)."""
    for name in ("float32", "float64", "float16", "bfloat16"):
        yield "rnn.cu", ("lstm_cell_fwd", "lstm_cell_bwd", "gru_cell_fwd", "gru_cell_bwd"), _source(name)


def _ptr(t):
    if t is None:
        return 0
    return (t if t.is_contiguous() else t.contiguous()).data_ptr()


def _launch(name: str, fmt: str, like, total: int, *args) -> None:
    if total:
        dev = like.device.index
        grid, block = launch_config(total)
        get_kernel(_source(like.dtype.name), name, fmt, dev)(grid, block, current_stream_handle(dev), *args)


def _contig(*ts):
    """The tensors made contiguous (kept alive by the caller until the launch is queued)."""
    return [t if t is None or t.is_contiguous() else t.contiguous() for t in ts]


@kernel("CUDA")
def _thnn_fused_lstm_cell(input_gates, hidden_gates, cx, input_bias=None, hidden_bias=None):
    hidden, cy, ws = meta.fused_cell_outputs("_thnn_fused_lstm_cell", input_gates, hidden_gates, input_bias,
                                             hidden_bias, 4, cx)
    hy = new_output(cy._sizes, cy.dtype, cy.device)
    ts = _contig(input_gates, hidden_gates, input_bias, hidden_bias, cx)
    _launch("lstm_cell_fwd", LSTM_FWD_FMT, cx, cy.numel(), *map(_ptr, ts), hy.data_ptr(), cy.data_ptr(),
            ws.data_ptr(), cy.numel(), hidden)
    return hy, cy, ws


@kernel("CUDA")
def _thnn_fused_lstm_cell_backward_impl(grad_hy, grad_cy, cx, cy, workspace, has_bias):
    gg, gcx = meta.lstm_backward_outputs(grad_hy, grad_cy, cx, cy, workspace)
    ts = _contig(grad_hy, grad_cy, cx, cy, workspace)
    _launch("lstm_cell_bwd", LSTM_BWD_FMT, cx, gcx.numel(), *map(_ptr, ts), gg.data_ptr(), gcx.data_ptr(),
            gcx.numel(), cx._sizes[1])
    return gg, gcx, meta.bias_grad(gg, has_bias)


@kernel("CUDA")
def _thnn_fused_gru_cell(input_gates, hidden_gates, hx, input_bias=None, hidden_bias=None):
    hidden, hy, ws = meta.fused_cell_outputs("_thnn_fused_gru_cell", input_gates, hidden_gates, input_bias,
                                             hidden_bias, 3, hx)
    ts = _contig(input_gates, hidden_gates, input_bias, hidden_bias, hx)
    _launch("gru_cell_fwd", GRU_FWD_FMT, hx, hy.numel(), *map(_ptr, ts), hy.data_ptr(), ws.data_ptr(), hy.numel(),
            hidden)
    return hy, ws


@kernel("CUDA")
def _thnn_fused_gru_cell_backward(grad_hy, workspace, has_bias):
    gig, ghg, ghx = meta.gru_backward_outputs(grad_hy, workspace)
    ts = _contig(grad_hy, workspace)
    _launch("gru_cell_bwd", GRU_BWD_FMT, grad_hy, ghx.numel(), *map(_ptr, ts), gig.data_ptr(), ghg.data_ptr(),
            ghx.data_ptr(), ghx.numel(), grad_hy._sizes[1])
    return gig, ghg, ghx, meta.bias_grad(gig, has_bias), meta.bias_grad(ghg, has_bias)
