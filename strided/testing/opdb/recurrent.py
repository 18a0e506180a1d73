"""OpInfos: the recurrent cells and layers (``ops/composite/recurrent.py``) and the packing ops
(``ops/composite/packing.py``), against a NumPy reference that runs each sequence of the batch on
its own, one time step at a time (so padding, packing and direction are checked independently of
how the ops batch them).

Packed samples carry ``batch_sizes`` / ``lengths`` as Python lists and the op wrappers turn them
into CPU int64 tensors, as torch keeps them: the runner moves every tensor of a sample to the
device under test.
"""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ...ops import bound
from ..opinfo import OpInfo, SampleInput, make_arg
from .helpers import err

__all__ = ["OPS"]

_F = dt.float32
_GATES = {"rnn_tanh": 1, "rnn_relu": 1, "lstm": 4, "gru": 3}
_TOL = {dt.float32: (2e-5, 2e-5), dt.float64: (1e-7, 1e-7)}


def _a(shape, d, rng, nc=False):
    return make_arg(shape, d, rng=rng, noncontiguous=nc, low=-1.0, high=1.0)


def _cpu_ints(values):
    from ...factories import tensor

    return tensor(np.asarray(values, dtype=np.int64))


# ---------------------------------------------------------------------------- NumPy reference
def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _np_step(mode, x, h, c, w):
    w_ih, w_hh, b_ih, b_hh, w_hr = w
    gi = x @ w_ih.T + (0 if b_ih is None else b_ih)
    gh = h @ w_hh.T + (0 if b_hh is None else b_hh)
    if mode == "rnn_tanh":
        return np.tanh(gi + gh), None
    if mode == "rnn_relu":
        return np.maximum(gi + gh, 0), None
    if mode == "gru":
        r, z, n = np.split(gi, 3, -1)
        hr, hz, hn = np.split(gh, 3, -1)
        r, z = _sigmoid(r + hr), _sigmoid(z + hz)
        n = np.tanh(n + r * hn)
        return (1 - z) * n + z * h, None
    i, f, g, o = np.split(gi + gh, 4, -1)
    c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
    h = _sigmoid(o) * np.tanh(c)
    return (h if w_hr is None else h @ w_hr.T), c


def _groups(params, has_biases, has_proj):
    per = 2 + 2 * has_biases + has_proj
    out = []
    for k in range(0, len(params), per):
        b = (params[k + 2], params[k + 3]) if has_biases else (None, None)
        out.append((params[k], params[k + 1], *b, params[k + per - 1] if has_proj else None))
    return out


def _np_sequences(mode, seqs, hx, params, has_biases, num_layers, bidirectional):
    """Each sequence (L_b, F) alone through every layer: the outputs and the final (h, c) stacks."""
    lstm = mode == "lstm"
    h0, c0 = hx[0], (hx[1] if lstm else None)
    has_proj = lstm and h0.shape[-1] != c0.shape[-1]
    weights = _groups(params, has_biases, has_proj)
    dirs = 2 if bidirectional else 1
    h_n, c_n = np.zeros_like(h0), (np.zeros_like(c0) if lstm else None)
    outs = []
    for b, x in enumerate(seqs):
        for layer in range(num_layers):
            per_dir = []
            for d in range(dirs):
                k = layer * dirs + d
                h, c = h0[k, b], (c0[k, b] if lstm else None)
                ys = [None] * len(x)
                for t in (range(len(x)) if d == 0 else reversed(range(len(x)))):
                    h, c = _np_step(mode, x[t], h, c, weights[k])
                    ys[t] = h
                h_n[k, b] = h
                if lstm:
                    c_n[k, b] = c
                per_dir.append(np.stack(ys))
            x = np.concatenate(per_dir, -1)
        outs.append(x)
    return outs, ((h_n, c_n) if lstm else (h_n,))


def _input_ref(mode):
    def ref(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
        x = input if batch_first else np.swapaxes(input, 0, 1)
        hx = hx if mode == "lstm" else [hx]
        outs, finals = _np_sequences(mode, list(x), hx, params, has_biases, num_layers, bidirectional)
        out = np.stack(outs, 0 if batch_first else 1)
        return (out, *finals)
    return ref


def _unpack(data, batch_sizes):
    """Packed rows -> the list of sequences."""
    lengths = [sum(1 for s in batch_sizes if s > b) for b in range(batch_sizes[0])]
    offsets = np.concatenate([[0], np.cumsum(batch_sizes)[:-1]])
    return [np.stack([data[offsets[t] + b] for t in range(n)]) for b, n in enumerate(lengths)]


def _pack(seqs):
    steps = max(len(s) for s in seqs)
    return np.stack([s[t] for t in range(steps) for s in seqs if len(s) > t])


def _data_ref(mode):
    def ref(data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional):
        hx = hx if mode == "lstm" else [hx]
        outs, finals = _np_sequences(mode, _unpack(data, batch_sizes), hx, params, has_biases, num_layers,
                                     bidirectional)
        return (_pack(outs), *finals)
    return ref


def _cell_ref(mode):
    def ref(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
        h, c = (hx[0], hx[1]) if mode == "lstm" else (hx, None)
        h, c = _np_step(mode, input, h, c, (w_ih, w_hh, b_ih, b_hh, None))
        return (h, c) if mode == "lstm" else h
    return ref


# ---------------------------------------------------------------------------- samples
def _params(mode, d, rng, input_size, hidden, num_layers, dirs, bias=True, proj=0):
    gates, real = _GATES[mode] * hidden, proj or hidden
    params = []
    for layer in range(num_layers):
        for _ in range(dirs):
            fan_in = input_size if layer == 0 else real * dirs
            params += [_a((gates, fan_in), d, rng), _a((gates, real), d, rng, nc=True)]
            if bias:
                params += [_a((gates,), d, rng), _a((gates,), d, rng)]
            if proj:
                params.append(_a((proj, hidden), d, rng))
    return params


def _hidden(mode, d, rng, layers_dirs, batch, hidden, proj=0):
    h = _a((layers_dirs, batch, proj or hidden), d, rng)
    return [h, _a((layers_dirs, batch, hidden), d, rng)] if mode == "lstm" else h


# (num_layers, bidirectional, bias, proj, batch_first, noncontiguous input, name)
_CONFIGS = [
    (1, False, True, 0, False, False, "one layer"),
    (2, True, False, 0, True, True, "two layers, bidirectional, no bias, batch_first, noncontig"),
    (2, True, True, 3, False, False, "two layers, bidirectional, projections"),
]


def _input_samples(mode):
    def samples(d, rng):
        for layers, bid, bias, proj, batch_first, nc, name in _CONFIGS:
            if proj and mode != "lstm":
                continue
            dirs = 2 if bid else 1
            shape = (3, 4, 5) if batch_first else (4, 3, 5)
            x = _a(shape, d, rng, nc=nc)
            yield SampleInput((x, _hidden(mode, d, rng, layers * dirs, 3, 4, proj),
                               _params(mode, d, rng, 5, 4, layers, dirs, bias, proj), bias, layers, 0.5, False, bid,
                               batch_first), name=name)
    return samples


def _data_samples(mode):
    def samples(d, rng):
        sizes = [4, 3, 3, 1]  # lengths 4, 3, 3, 1 (and 1 step where only one runs)
        for layers, bid, bias, proj, _, _, name in _CONFIGS:
            if proj and mode != "lstm":
                continue
            dirs = 2 if bid else 1
            yield SampleInput((_a((sum(sizes), 5), d, rng), sizes, _hidden(mode, d, rng, layers * dirs, 4, 4, proj),
                               _params(mode, d, rng, 5, 4, layers, dirs, bias, proj), bias, layers, 0.0, False, bid),
                              name=f"packed, {name}")
    return samples


def _cell_samples(mode):
    def samples(d, rng):
        gates = _GATES[mode] * 4
        for bias, nc in ((True, False), (False, True)):
            h = [_a((3, 4), d, rng, nc=nc), _a((3, 4), d, rng)] if mode == "lstm" else _a((3, 4), d, rng, nc=nc)
            b = (_a((gates,), d, rng), _a((gates,), d, rng)) if bias else ()
            yield SampleInput((_a((3, 5), d, rng), h, _a((gates, 5), d, rng), _a((gates, 4), d, rng), *b),
                              name="bias" if bias else "no bias, noncontig")
    return samples


# ---------------------------------------------------------------------------- op wrappers and errors
def _with_cpu_sizes(name: str):
    """``name`` called with its second argument (a list) as a CPU int64 tensor."""
    base, _, overload = name.partition(".")
    op = getattr(getattr(bound, base), overload or "default")

    def call(first, sizes, *args, **kwargs):
        result = op(first, _cpu_ints(sizes), *args, **kwargs)
        if name.startswith("_p"):  # (tensor, CPU int64 tensor): the second as a list, after checking it
            tensor, ints = result
            assert ints.device.type == "cpu" and ints.dtype is dt.int64, f"{name}: {ints.device} {ints.dtype}"
            return tensor, ints.tolist()
        return result

    call.__name__ = name
    call.overloads = {op.overload_name: op}
    return call


def _input_errors(mode):
    def errors(rng):
        x, h = _a((4, 3, 5), _F, rng), _hidden(mode, _F, rng, 1, 3, 4)
        params = _params(mode, _F, rng, 5, 4, 1, 1)
        yield err((x, h, params[:3], True, 1, 0.0, False, False, False), RuntimeError,
                  f"{mode}: expected 4 parameter tensors (4 per layer and direction, 1 layer(s), 1 direction(s)), "
                  "got 3")
        yield err((x[0], h, params, True, 1, 0.0, False, False, False), RuntimeError,
                  f"{mode}: Expected input to be 3-D (seq_len, batch, input_size), got 2-D")
        h2 = _hidden(mode, _F, rng, 2, 3, 4)
        yield err((x, h2, params, True, 1, 0.0, False, False, False), RuntimeError,
                  f"{mode}: Expected hidden state of shape (num_layers * num_directions = 1, batch, hidden), got "
                  "[2, 3, 4]")
    return errors


def _data_errors(mode):
    def errors(rng):
        h, params = _hidden(mode, _F, rng, 1, 3, 4), _params(mode, _F, rng, 5, 4, 1, 1)
        yield err((_a((6, 5), _F, rng), [1, 2, 3], h, params, True, 1, 0.0, False, False), RuntimeError,
                  f"{mode}: batch_sizes [1, 2, 3] do not describe a packed batch of 6 rows (positive, non-increasing, "
                  "summing to the number of rows)")
    return errors


def _cell_errors(mode):
    def errors(rng):
        gates = _GATES[mode] * 4
        h = [_a((2, 4), _F, rng), _a((2, 4), _F, rng)] if mode == "lstm" else _a((2, 4), _F, rng)
        w = (_a((gates, 5), _F, rng), _a((gates, 4), _F, rng))
        yield err((_a((3, 5), _F, rng), h, *w), RuntimeError, "Input batch size 3 doesn't match hidden0 batch size 2")
        yield err((_a((2, 6), _F, rng), h, *w), RuntimeError, "input has inconsistent input_size: got 6 expected 5")
    return errors


def _pack_samples(d, rng):
    yield SampleInput((_a((5, 3, 2), d, rng), [5, 3, 2], False), name="time-major")
    yield SampleInput((_a((3, 4, 2), d, rng, nc=True), [4, 4, 1], True), name="batch_first, noncontig")
    yield SampleInput((_a((2, 1), d, rng), [2], False), name="one sequence, no feature dims")


def _pack_ref(input, lengths, batch_first):
    x = np.swapaxes(input, 0, 1) if batch_first else input
    data = _pack([x[:n, b] for b, n in enumerate(lengths)])
    return data, [sum(1 for n in lengths if n > t) for t in range(lengths[0])]


def _pack_errors(rng):
    x = _a((5, 3, 2), _F, rng)
    yield err((x, [3, 5, 2], False), RuntimeError, "`lengths` array must be sorted in decreasing order")
    yield err((x, [5, 3, 0], False), RuntimeError, "Length of all samples has to be greater than 0")
    yield err((x, [5, 3], False), RuntimeError, "Expected `len(lengths)` to be equal to batch_size, but got 2 "
              "(batch_size=3)")
    yield err((x, [6, 3, 2], False), RuntimeError, "_pack_padded_sequence: the longest length 6 exceeds the padded "
              "sequence length 5")
    yield err((_a((0, 3, 2), _F, rng), [1, 1, 1], False), RuntimeError, "Cannot pack empty tensors.")


def _pad_samples(d, rng):
    yield SampleInput((_a((6, 2), d, rng), [3, 2, 1], False, 0.0, 3), name="time-major")
    yield SampleInput((_a((6, 2), d, rng), [3, 2, 1], True, -1.5, 5), name="batch_first, longer total_length")
    yield SampleInput((_a((4,), d, rng), [2, 2], False, 7.0, 2), name="no feature dims")


def _pad_ref(data, batch_sizes, batch_first, padding_value, total_length):
    seqs = _unpack(data, batch_sizes)
    out = np.full((total_length, len(seqs), *data.shape[1:]), padding_value, dtype=data.dtype)
    for b, s in enumerate(seqs):
        out[:len(s), b] = s
    return (np.swapaxes(out, 0, 1) if batch_first else out), [len(s) for s in seqs]


def _pad_errors(rng):
    yield err((_a((6, 2), _F, rng), [3, 2, 1], False, 0.0, 2), RuntimeError,
              "Expected total_length to be at least the length of the longest sequence in input, but got "
              "total_length=2 and max sequence length being 3")
    yield err((_a((5, 2), _F, rng), [3, 2, 1], False, 0.0, 3), RuntimeError,
              "_pad_packed_sequence: batch_sizes [3, 2, 1] do not describe a packed batch of 5 rows")


def _pad_sequence_samples(d, rng):
    seqs = [_a((3, 2), d, rng), _a((1, 2), d, rng, nc=True), _a((4, 2), d, rng)]
    yield SampleInput((seqs,), name="right, time-major")
    yield SampleInput((seqs, True, 2.5, "left"), name="left, batch_first")
    yield SampleInput(([_a((2,), d, rng), _a((0,), d, rng)], False, -1.0), name="1-D and empty sequences")


def _pad_sequence_ref(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    longest = max(len(s) for s in sequences)
    out = np.full((len(sequences), longest, *sequences[0].shape[1:]), padding_value, dtype=sequences[0].dtype)
    for b, s in enumerate(sequences):
        if len(s):
            out[b, slice(0, len(s)) if padding_side == "right" else slice(longest - len(s), None)] = s
    return out if batch_first else np.swapaxes(out, 0, 1)


def _pad_sequence_errors(rng):
    yield err(([],), RuntimeError, "received an empty list of sequences")
    yield err(([_a((2,), _F, rng)], False, 0.0, "middle"), RuntimeError,
              "Expected padding_side to be one of left or right, but got middle.")
    yield err(([_a((2, 3), _F, rng), _a((2, 4), _F, rng)],), RuntimeError,
              "pad_sequence: sequence 1 has trailing shape [4], but sequence 0 has [3]")


_FLOATS = (dt.float32, dt.float64)
OPS = []
for _mode in ("rnn_tanh", "rnn_relu", "lstm", "gru"):
    OPS.append(OpInfo(f"{_mode}.input", _input_samples(_mode), ref=_input_ref(_mode), dtypes=_FLOATS,
                      errors=_input_errors(_mode), tolerances=_TOL))
    OPS.append(OpInfo(f"{_mode}.data", _data_samples(_mode), ref=_data_ref(_mode), dtypes=_FLOATS,
                      op=_with_cpu_sizes(f"{_mode}.data"), errors=_data_errors(_mode), tolerances=_TOL))
    OPS.append(OpInfo(f"{_mode}_cell", _cell_samples(_mode), ref=_cell_ref(_mode), dtypes=_FLOATS,
                      errors=_cell_errors(_mode), tolerances=_TOL))
OPS += [
    OpInfo("_pack_padded_sequence", _pack_samples, ref=_pack_ref, op=_with_cpu_sizes("_pack_padded_sequence"),
           dtypes=_FLOATS + (dt.int64, dt.bool), errors=_pack_errors),
    OpInfo("_pad_packed_sequence", _pad_samples, ref=_pad_ref, op=_with_cpu_sizes("_pad_packed_sequence"),
           dtypes=_FLOATS + (dt.float16, dt.int64), errors=_pad_errors),
    OpInfo("pad_sequence", _pad_sequence_samples, ref=_pad_sequence_ref, dtypes=_FLOATS + (dt.bfloat16, dt.int32),
           errors=_pad_sequence_errors),
]
