"""CompositeImplicitAutograd ops behind ``nn.utils.rnn``: ``_pack_padded_sequence``,
``_pad_packed_sequence`` and ``pad_sequence``.

A packed batch (Note [Packed sequences] in recurrent.py) holds the valid rows of a padded
(T, N, *) batch in time-major order -- step 0 of every sequence, then step 1 of those still running,
and so on -- with ``batch_sizes[t]`` rows at step t. Packing is one ``index_select`` of those rows from
the (T * N, *) view, and padding back is one ``index_select`` from the packed rows plus one row of
padding, so each is a single gather whose backward is a single scatter-add; the index is computed on
the host from the lengths (which, as in torch, live on the CPU).
"""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ...dispatch.library import kernel
from .. import bound as ops
from .rearranging import _index_tensor

__all__: list[str] = []

_UNSORTED = ("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass "
             "`enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement if "
             "you do not need ONNX exportability.")


def _host_ints(t, what: str) -> np.ndarray:
    if t.dim() != 1 or t.device.type != "cpu" or t.dtype is not dt.int64:
        raise RuntimeError(f"'{what}' argument should be a 1D CPU int64 tensor, but got {t.dim()}D "
                           f"{t.device} {t.dtype} tensor")
    return np.asarray(t.numpy(), dtype=np.int64)


def _valid_rows(lengths: np.ndarray, steps: int) -> np.ndarray:
    """(steps, N) mask of the padded positions that hold data."""
    return np.arange(steps)[:, None] < lengths[None, :]


@kernel("CompositeImplicitAutograd")
def _pack_padded_sequence(input, lengths, batch_first):
    """The valid rows of a padded batch, time-major, and the per-step batch sizes (a CPU int64 tensor)."""
    lens = _host_ints(lengths, "lengths")
    if batch_first:
        input = ops.transpose(input, 0, 1)
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    steps, batch = input._sizes[0], input._sizes[1]
    if len(lens) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(lens)} "
                           f"(batch_size={batch})")
    if lens[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' that "
                           "is <= 0")
    if (np.diff(lens) > 0).any():
        raise RuntimeError(_UNSORTED)
    if lens[0] > steps:
        raise RuntimeError(f"_pack_padded_sequence: the longest length {int(lens[0])} exceeds the padded sequence "
                           f"length {steps}")
    mask = _valid_rows(lens, int(lens[0]))
    index = np.flatnonzero(mask)  # time-major: row t * N + b
    flat = ops.reshape(input, (steps * batch, *input._sizes[2:]))
    data = ops.index_select(flat, 0, _index_tensor(index, input.device))
    return data, _index_tensor(mask.sum(1), "cpu")


@kernel("CompositeImplicitAutograd")
def _pad_packed_sequence(data, batch_sizes, batch_first, padding_value, total_length):
    """A packed batch back to (T, N, *) (or (N, T, *)) filled with ``padding_value``, and the lengths."""
    sizes = _host_ints(batch_sizes, "batch_sizes")
    if len(sizes) == 0 or sizes[0] <= 0 or (np.diff(sizes) > 0).any() or sizes.sum() != data._sizes[0]:
        raise RuntimeError(f"_pad_packed_sequence: batch_sizes {sizes.tolist()} do not describe a packed batch of "
                           f"{data._sizes[0]} rows (positive, non-increasing, summing to the number of rows)")
    steps, batch = len(sizes), int(sizes[0])
    if total_length < steps:
        raise RuntimeError(f"Expected total_length to be at least the length of the longest sequence in input, but "
                           f"got total_length={total_length} and max sequence length being {steps}")
    lengths = (np.arange(batch)[None, :] < sizes[:, None]).sum(0)
    mask = _valid_rows(lengths, total_length)
    index = np.full(mask.shape, data._sizes[0], dtype=np.int64)  # the padding row by default
    index[mask] = np.arange(data._sizes[0])
    rest = tuple(data._sizes[1:])
    pad = ops.full((1, *rest), padding_value, dtype=data.dtype, device=data.device)
    rows = ops.index_select(ops.cat([data, pad], 0), 0, _index_tensor(index.ravel(), data.device))
    out = ops.reshape(rows, (total_length, batch, *rest))
    return (ops.transpose(out, 0, 1) if batch_first else out), _index_tensor(lengths, "cpu")


@kernel("CompositeImplicitAutograd")
def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Sequences of shape (L_i, *) padded to the longest and stacked: (T, N, *), or (N, T, *)."""
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    first = sequences[0]
    for i, s in enumerate(sequences):
        if s.dim() == 0:
            raise RuntimeError(f"pad_sequence: sequence {i} is 0-dim; each sequence must have a leading length dim")
        if s._sizes[1:] != first._sizes[1:]:
            raise RuntimeError(f"pad_sequence: sequence {i} has trailing shape {list(s._sizes[1:])}, but sequence 0 "
                               f"has {list(first._sizes[1:])}")
    longest = max(s._sizes[0] for s in sequences)
    rest = tuple(first._sizes[1:])
    padded = []
    for s in sequences:
        s = s.to(first.dtype)
        missing = longest - s._sizes[0]
        if missing:
            fill = ops.full((missing, *rest), padding_value, dtype=first.dtype, device=first.device)
            s = ops.cat([s, fill] if padding_side == "right" else [fill, s], 0)
        padded.append(s)
    return ops.stack(padded, 0 if batch_first else 1)
