"""CompositeImplicitAutograd recurrent ops: the cells ``rnn_tanh_cell``, ``rnn_relu_cell``,
``lstm_cell``, ``gru_cell`` and the multi-layer ``rnn_tanh``, ``rnn_relu``, ``lstm``, ``gru`` over
padded (``.input``) or packed (``.data``) sequences -- what ``nn.RNN`` / ``nn.LSTM`` / ``nn.GRU`` call.

They follow aten/src/ATen/native/RNN.cpp (torch's path without cuDNN), step for step, so results and
gradients agree with torch's to rounding: every backend and autograd follow from the parts
(``linear``, pointwise ops, ``cat`` / ``stack``, and for LSTM and GRU the fused cell ops
``_thnn_fused_lstm_cell`` / ``_thnn_fused_gru_cell``, Note [Fused cells] in
backends/cuda/kernels/recurrent_ops.py, which torch's CUDA path uses too).

Note [Input projection once per layer]
As torch's CPU path (``pre_compute_input``), a layer multiplies its whole input sequence by ``w_ih``
in one GEMM (``linear`` over (T, N, F), or over the packed (sum of lengths, F) rows) and only the
hidden-to-hidden product runs per time step. The per-step slices come from ``unbind`` /
``split_with_sizes``, whose backward is one ``stack`` / ``cat`` -- not one zero-filled copy of the whole
sequence per step, as per-step ``select`` would give.

Note [Packed sequences]
A packed batch is sorted by decreasing length: step t holds the first ``batch_sizes[t]`` sequences.
Forward in time, when the batch shrinks, the hidden rows of the sequences that just ended are put
aside (they are those sequences' final states) and the rest go on; at the end the rows are put back
in batch order. Backward in time, the walk starts with the shortest batch, taking each sequence's
initial state from ``hx`` as the sequence joins (``PackedLayer`` / ``ReversedPackedLayer`` in RNN.cpp).
"""

from __future__ import annotations

from ... import dtypes as dt
from ...dispatch.dispatcher import autocast_state
from ...dispatch.library import kernel
from .. import bound as ops

__all__: list[str] = []


# -- one time step: the input gates gi and the previous state; w_hh_t is w_hh.T (one view per layer) ----------
# Note [Recurrent step]: gi holds x @ w_ih.T + b_ih, computed for the whole sequence at once (Note [Input
# projection once per layer]). For the Elman and LSTM cells, whose gates are plain sums, it holds b_hh too:
# an Elman step is one addmm and the nonlinearity, an LSTM step one mm and one fused cell op, and b_hh's
# gradient is one sum over the sequence instead of a sum per step. The GRU's n-gate multiplies the hidden
# part (with its bias) by r, so its fused cell adds b_hh itself.
def _tanh_step(gi, h, w_hh_t, b_hh, w_hr):
    return ops.tanh(ops.addmm(gi, h, w_hh_t))


def _relu_step(gi, h, w_hh_t, b_hh, w_hr):
    return ops.relu(ops.addmm(gi, h, w_hh_t))


def _common_dtype(*tensors):
    """The tensors (None kept) in their promoted dtype, when they differ (Note [Cells under autocast])."""
    d = None
    for t in tensors:
        if t is not None:
            d = t.dtype if d is None else dt.promote_types(d, t.dtype)
    return tuple(t if t is None or t.dtype is d else ops._to_copy(t, dtype=d) for t in tensors)


# Note [Cells under autocast]
# Under CPU autocast torch's cells are composites (RNN.cpp): their linears run in bfloat16, and the gates meet
# the float32 previous state in promoting pointwise ops, so an LSTM / GRU cell (and torch's CPU GRU layer)
# returns float32 for float32 inputs. The fused cell ops here want one dtype, so the step promotes its operands
# first. (On CUDA the fused cells are on torch's lower-precision list: the Autocast kernel casts every operand to
# the low dtype and the operands already agree; torch's CPU LSTM layer is one oneDNN op on that list, so the
# ``lstm`` op is listed for the CPU.) torch's per-step ``linear_hh`` casts w_hh and b_hh with its operands, through
# the region's cast cache (Note [Autocast cast cache]) -- once per region; here the layer casts them once, before
# its steps, since a step multiplies by the transposed view ``w_hh.T``, which no cache would keep.
def _lstm_step(gi, state, w_hh_t, b_hh, w_hr):
    h, c = state  # Note [Fused cells]: the pointwise part is one op (one launch on CUDA)
    hh = ops.mm(h, w_hh_t)
    if gi.dtype is not hh.dtype or hh.dtype is not c.dtype:
        gi, hh, c = _common_dtype(gi, hh, c)
    h, c, _ = ops._thnn_fused_lstm_cell(gi, hh, c, None, b_hh)
    if w_hr is not None:
        h = ops.matmul(h, ops.t(w_hr))
    return h, c


def _gru_step(gi, h, w_hh_t, b_hh, w_hr):
    hh = ops.mm(h, w_hh_t)
    if gi.dtype is not h.dtype or hh.dtype is not h.dtype or (b_hh is not None and b_hh.dtype is not h.dtype):
        gi, hh, h, b_hh = _common_dtype(gi, hh, h, b_hh)  # Note [Cells under autocast]
    return ops._thnn_fused_gru_cell(gi, hh, h, None, b_hh)[0]


_SUMMED_GATES = (_tanh_step, _relu_step, _lstm_step)


def _input_gates(step, x, w):
    """(gi for every row of x, w_hh.T, the b_hh the step still adds) (Note [Recurrent step])."""
    w_ih, w_hh, b_ih, b_hh, _ = w
    gi = ops.linear(x, w_ih, b_ih)
    if autocast_state.tls.mask:
        w_hh, b_hh = _autocast_weights(gi, w_hh, b_hh)
    if step in _SUMMED_GATES:
        if b_hh is not None:
            gi = ops.add(gi, b_hh)
        b_hh = None
    return gi, ops.t(w_hh), b_hh


def _autocast_weights(gi, *weights):
    """Under autocast, the hidden-to-hidden weights in the gates' low dtype, from the region's cast cache: cast
    once per layer, as torch's per-step ``linear_hh`` does through that cache (Note [Cells under autocast])."""
    from ...amp.autocast_mode import _DEVICE_BITS, _local
    from ...amp.policies import _cast

    device_type = gi.device.type
    low = _local.dtype.get(device_type)
    if gi.dtype is not low or not autocast_state.tls.mask & _DEVICE_BITS.get(device_type, 0):
        return weights
    return tuple(w if w is None else _cast(w, low, device_type) for w in weights)


# -- cells -------------------------------------------------------------------------------------------
def _check_cell(op, input, hx, w_ih, w_hh, labels):
    if input.dim() != 2:
        raise RuntimeError(f"{op}: Expected input to be 2-D (batch, input_size), got {input.dim()}-D")
    if input._sizes[1] != w_ih._sizes[1]:
        raise RuntimeError(f"input has inconsistent input_size: got {input._sizes[1]} expected {w_ih._sizes[1]}")
    for h, label in zip(hx, labels):
        if h.dim() != 2:
            raise RuntimeError(f"{op}: Expected hidden{label} to be 2-D (batch, hidden_size), got {h.dim()}-D")
        if h._sizes[0] != input._sizes[0]:
            raise RuntimeError(f"Input batch size {input._sizes[0]} doesn't match hidden{label} batch size "
                               f"{h._sizes[0]}")
    if hx[0]._sizes[1] != w_hh._sizes[1]:
        raise RuntimeError(f"hidden{labels[0]} has inconsistent hidden_size: got {hx[0]._sizes[1]}, expected "
                           f"{w_hh._sizes[1]}")


@kernel("CompositeImplicitAutograd")
def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """``tanh(input @ w_ih.T + b_ih + hx @ w_hh.T + b_hh)``."""
    _check_cell("rnn_tanh_cell", input, (hx,), w_ih, w_hh, ("0",))
    gi, w_hh_t, b_hh = _input_gates(_tanh_step, input, (w_ih, w_hh, b_ih, b_hh, None))
    return _tanh_step(gi, hx, w_hh_t, b_hh, None)


@kernel("CompositeImplicitAutograd")
def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """``relu(input @ w_ih.T + b_ih + hx @ w_hh.T + b_hh)``."""
    _check_cell("rnn_relu_cell", input, (hx,), w_ih, w_hh, ("0",))
    gi, w_hh_t, b_hh = _input_gates(_relu_step, input, (w_ih, w_hh, b_ih, b_hh, None))
    return _relu_step(gi, hx, w_hh_t, b_hh, None)


@kernel("CompositeImplicitAutograd")
def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One LSTM step: ``(h, c)`` from the input and ``hx = [h, c]`` (gates i, f, g, o in that order)."""
    hx = list(hx)
    if len(hx) != 2:
        raise RuntimeError(f"lstm_cell: Expected hx to hold 2 tensors (h, c), got {len(hx)}")
    _check_cell("lstm_cell", input, hx, w_ih, w_hh, ("0", "1"))
    gi, w_hh_t, b_hh = _input_gates(_lstm_step, input, (w_ih, w_hh, b_ih, b_hh, None))
    return _lstm_step(gi, hx, w_hh_t, b_hh, None)


@kernel("CompositeImplicitAutograd")
def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One GRU step (gates r, z, n in that order; ``h' = (1 - z) * n + z * h``)."""
    _check_cell("gru_cell", input, (hx,), w_ih, w_hh, ("0",))
    gi, w_hh_t, b_hh = _input_gates(_gru_step, input, (w_ih, w_hh, b_ih, b_hh, None))
    return _gru_step(gi, hx, w_hh_t, b_hh, None)


# -- one layer, one direction ------------------------------------------------------------------------
def _slice(state, start, length):
    if isinstance(state, tuple):
        return tuple(ops.narrow(s, 0, start, length) for s in state)
    return ops.narrow(state, 0, start, length)


def _concat(states):
    if isinstance(states[0], tuple):
        return tuple(ops.cat([s[k] for s in states], 0) for k in range(len(states[0])))
    return ops.cat(states, 0)


def _output(state):
    return state[0] if isinstance(state, tuple) else state


def _padded_layer(step, x, state, w, reverse):
    """Run one direction over x (T, N, F): the output (T, N, H) and the final state."""
    gi, w_hh_t, b_hh = _input_gates(step, x, w)
    gates = ops.unbind(gi, 0)  # Note [Input projection once per layer]
    w_hr = w[4]
    outputs = []
    for gi in (reversed(gates) if reverse else gates):
        state = step(gi, state, w_hh_t, b_hh, w_hr)
        outputs.append(_output(state))
    if reverse:
        outputs.reverse()
    return ops.stack(outputs, 0), state


def _packed_layer(step, data, batch_sizes, state, w, reverse):
    """Run one direction over packed rows (Note [Packed sequences]): packed output and final state."""
    gi, w_hh_t, b_hh = _input_gates(step, data, w)
    gates = ops.split_with_sizes(gi, batch_sizes, 0)
    w_hr = w[4]
    outputs = []
    if not reverse:
        ended, last = [], batch_sizes[0]
        for gi, bs in zip(gates, batch_sizes):
            if bs < last:
                ended.append(_slice(state, bs, last - bs))
                state = _slice(state, 0, bs)
                last = bs
            state = step(gi, state, w_hh_t, b_hh, w_hr)
            outputs.append(_output(state))
        ended.append(state)
        ended.reverse()
        return ops.cat(outputs, 0), (_concat(ended) if len(ended) > 1 else state)
    initial, last = state, batch_sizes[-1]
    state = _slice(initial, 0, last)
    for gi, bs in zip(reversed(gates), reversed(batch_sizes)):
        if bs > last:
            state = _concat([state, _slice(initial, last, bs - last)])
            last = bs
        state = step(gi, state, w_hh_t, b_hh, w_hr)
        outputs.append(_output(state))
    outputs.reverse()
    return ops.cat(outputs, 0), state


# -- the stack of layers -----------------------------------------------------------------------------
def _check_attributes(op, input, hx, params):
    device = input.device
    for p in params:
        if p.device != device:
            raise RuntimeError(f"Input and parameter tensors are not at the same device, found input tensor at "
                               f"{device} and parameter tensor at {p.device}")
    for h in hx:
        if h.device != device:
            raise RuntimeError(f"Input and hidden tensors are not at the same device, found input tensor at "
                               f"{device} and hidden tensor at {h.device}")


def _group_params(op, params, has_biases, has_proj, num_layers, directions):
    """Per (layer, direction): (w_ih, w_hh, b_ih, b_hh, w_hr) with None for the absent ones."""
    params = list(params)
    per = 2 + 2 * bool(has_biases) + bool(has_proj)
    if num_layers < 1:
        raise RuntimeError(f"{op}: num_layers must be at least 1, got {num_layers}")
    if len(params) != per * num_layers * directions:
        raise RuntimeError(f"{op}: expected {per * num_layers * directions} parameter tensors ({per} per layer "
                           f"and direction, {num_layers} layer(s), {directions} direction(s)), got {len(params)}")
    out = []
    for k in range(0, len(params), per):
        w_ih, w_hh = params[k], params[k + 1]
        b_ih, b_hh = (params[k + 2], params[k + 3]) if has_biases else (None, None)
        out.append((w_ih, w_hh, b_ih, b_hh, params[k + per - 1] if has_proj else None))
    return out


def _layers(op, step, x, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional):
    """Every layer over x (padded (T, N, F), or packed rows when batch_sizes is a list): output and the
    final states, one tensor per entry of hx, stacked as (num_layers * directions, N, H)."""
    directions = 2 if bidirectional else 1
    _check_attributes(op, x, hx, params)
    has_proj = len(hx) == 2 and hx[0]._sizes[-1] != hx[1]._sizes[-1]
    weights = _group_params(op, params, has_biases, has_proj, num_layers, directions)
    for h in hx:
        if h.dim() != 3 or h._sizes[0] != num_layers * directions:
            raise RuntimeError(f"{op}: Expected hidden state of shape (num_layers * num_directions = "
                               f"{num_layers * directions}, batch, hidden), got {list(h._sizes)}")
    finals = []
    for layer in range(num_layers):
        outs = []
        for d in range(directions):
            k = layer * directions + d
            state = tuple(h[k] for h in hx) if len(hx) == 2 else hx[0][k]
            if batch_sizes is None:
                out, state = _padded_layer(step, x, state, weights[k], d == 1)
            else:
                out, state = _packed_layer(step, x, batch_sizes, state, weights[k], d == 1)
            outs.append(out)
            finals.append(state if isinstance(state, tuple) else (state,))
        x = ops.cat(outs, -1) if directions == 2 else outs[0]
        if dropout > 0 and train and layer < num_layers - 1:
            x = ops.dropout(x, dropout, True)
    return x, tuple(ops.stack([f[j] for f in finals], 0) for j in range(len(hx)))


def _padded(op, step, input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    if input.dim() != 3:
        raise RuntimeError(f"{op}: Expected input to be 3-D (seq_len, batch, input_size), got {input.dim()}-D")
    if input._sizes[0 if not batch_first else 1] == 0:
        raise RuntimeError(f"{op}: Expected a sequence length of at least 1, got input of shape "
                           f"{list(input._sizes)} (batch_first={batch_first})")
    x = ops.transpose(input, 0, 1) if batch_first else input
    out, finals = _layers(op, step, x, None, hx, params, has_biases, num_layers, dropout, train, bidirectional)
    return (ops.transpose(out, 0, 1) if batch_first else out), finals


def _packed(op, step, data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional):
    if batch_sizes.dim() != 1 or batch_sizes.device.type != "cpu" or batch_sizes.dtype.is_floating_point:
        raise RuntimeError(f"{op}: batch_sizes should be a 1-D CPU int64 tensor, got {batch_sizes.dim()}-D "
                           f"{batch_sizes.dtype} on {batch_sizes.device}")
    sizes = [int(v) for v in batch_sizes.tolist()]
    if not sizes or sum(sizes) != data._sizes[0] or any(b < a for a, b in zip(sizes[1:], sizes)) or sizes[-1] < 1:
        raise RuntimeError(f"{op}: batch_sizes {sizes} do not describe a packed batch of {data._sizes[0]} rows "
                           "(positive, non-increasing, summing to the number of rows)")
    return _layers(op, step, data, sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional)


@kernel("CompositeImplicitAutograd")
def rnn_tanh_input(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    """Elman RNN with tanh over a padded batch: ``(output, h_n)``."""
    out, (h,) = _padded("rnn_tanh", _tanh_step, input, (hx,), params, has_biases, num_layers, dropout, train,
                        bidirectional, batch_first)
    return out, h


@kernel("CompositeImplicitAutograd")
def rnn_relu_input(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    """Elman RNN with relu over a padded batch: ``(output, h_n)``."""
    out, (h,) = _padded("rnn_relu", _relu_step, input, (hx,), params, has_biases, num_layers, dropout, train,
                        bidirectional, batch_first)
    return out, h


@kernel("CompositeImplicitAutograd")
def gru_input(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    """GRU over a padded batch: ``(output, h_n)``."""
    out, (h,) = _padded("gru", _gru_step, input, (hx,), params, has_biases, num_layers, dropout, train,
                        bidirectional, batch_first)
    return out, h


@kernel("CompositeImplicitAutograd")
def lstm_input(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    """LSTM over a padded batch, ``hx = [h_0, c_0]``: ``(output, h_n, c_n)``; ``w_hr`` projections when
    h_0's last size differs from c_0's (``proj_size``)."""
    hx = _lstm_hx(hx)
    out, (h, c) = _padded("lstm", _lstm_step, input, hx, params, has_biases, num_layers, dropout, train,
                          bidirectional, batch_first)
    return out, h, c


@kernel("CompositeImplicitAutograd")
def rnn_tanh_data(data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional):
    """Elman RNN with tanh over a packed batch: ``(packed output, h_n)``."""
    out, (h,) = _packed("rnn_tanh", _tanh_step, data, batch_sizes, (hx,), params, has_biases, num_layers,
                        dropout, train, bidirectional)
    return out, h


@kernel("CompositeImplicitAutograd")
def rnn_relu_data(data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional):
    """Elman RNN with relu over a packed batch: ``(packed output, h_n)``."""
    out, (h,) = _packed("rnn_relu", _relu_step, data, batch_sizes, (hx,), params, has_biases, num_layers,
                        dropout, train, bidirectional)
    return out, h


@kernel("CompositeImplicitAutograd")
def gru_data(data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional):
    """GRU over a packed batch: ``(packed output, h_n)``."""
    out, (h,) = _packed("gru", _gru_step, data, batch_sizes, (hx,), params, has_biases, num_layers, dropout,
                        train, bidirectional)
    return out, h


@kernel("CompositeImplicitAutograd")
def lstm_data(data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional):
    """LSTM over a packed batch, ``hx = [h_0, c_0]``: ``(packed output, h_n, c_n)``."""
    hx = _lstm_hx(hx)
    out, (h, c) = _packed("lstm", _lstm_step, data, batch_sizes, hx, params, has_biases, num_layers, dropout,
                          train, bidirectional)
    return out, h, c


def _lstm_hx(hx):
    hx = tuple(hx)
    if len(hx) != 2:
        raise RuntimeError(f"lstm expects two hidden states (h_0, c_0), got {len(hx)}")
    return hx
