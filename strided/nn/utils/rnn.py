"""``strided.nn.utils.rnn``: packed sequences for the recurrent layers, as ``torch.nn.utils.rnn``.

A :class:`PackedSequence` holds a batch of variable-length sequences without padding: the valid rows
in time-major order (``data``), how many sequences are still running at each step (``batch_sizes``,
always a CPU int64 tensor), and -- when the batch was not given sorted by decreasing length -- the
permutation that sorted it (``sorted_indices``) and its inverse (``unsorted_indices``).
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable
from typing import NamedTuple

from ... import dtypes as dt
from ... import factories
from ...ops import bound as ops
from ...tensor import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence"]


class _PackedSequenceBase(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(_PackedSequenceBase):
    """A packed batch of variable-length sequences (make one with :func:`pack_padded_sequence` or
    :func:`pack_sequence`); the recurrent layers take and return it."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # PackedSequence((data, batch_sizes)), as torch allows
            data, batch_sizes = data
        for name, t in (("data", data), ("batch_sizes", batch_sizes)):
            if not isinstance(t, Tensor):
                raise TypeError(f"PackedSequence(): argument '{name}' must be Tensor, not {type(t).__name__}")
        if batch_sizes.device.type != "cpu":
            raise ValueError(
                "batch_sizes should always be on CPU. Instances of PackedSequence should never be created manually. "
                "They should be instantiated by functions like pack_sequence and pack_padded_sequences in nn.utils.rnn."
                " "
                "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs) -> PackedSequence:
        """``data.to(*args, **kwargs)``; the index tensors follow data's device, batch_sizes stays on the CPU."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self

        def move(t):
            return None if t is None else t.to(data.device)

        return type(self)(data, self.batch_sizes, move(self.sorted_indices), move(self.unsorted_indices))

    def cuda(self, *args, **kwargs) -> PackedSequence:
        return self.to(self.data.cuda(*args, **kwargs).device)

    def cpu(self) -> PackedSequence:
        return self.to("cpu")

    def double(self) -> PackedSequence:
        return self.to(dtype=dt.float64)

    def float(self) -> PackedSequence:
        return self.to(dtype=dt.float32)

    def half(self) -> PackedSequence:
        return self.to(dtype=dt.float16)

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda

    def is_pinned(self) -> bool:
        return self.data.is_pinned()


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of a permutation of ``range(n)`` (None stays None)."""
    if permutation is None:
        return None
    out = factories.empty_like(permutation)
    return out.scatter_(0, permutation, factories.arange(permutation.numel(), device=permutation.device))


def _lengths_tensor(lengths, op: str) -> Tensor:
    if isinstance(lengths, Tensor):
        return lengths.to(dtype=dt.int64)
    if isinstance(lengths, (str, bytes)) or not isinstance(lengths, Iterable) or not all(
            isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in lengths):
        raise TypeError(f"{op}(): 'lengths' must be a 1-D CPU int64 tensor or a sequence of ints, got {lengths!r}")
    return factories.tensor([int(v) for v in lengths], dtype=dt.int64)


def pack_padded_sequence(input: Tensor, lengths, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch (T, N, *) (or (N, T, *) with ``batch_first``) of sequences of the given lengths.

    With ``enforce_sorted`` the lengths must be in decreasing order; otherwise the batch is sorted here
    and the permutation is kept, so padding back restores the original order.
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"pack_padded_sequence(): argument 'input' must be Tensor, not {type(input).__name__}")
    lengths = _lengths_tensor(lengths, "pack_padded_sequence")
    sorted_indices = None
    if not enforce_sorted:
        lengths, sorted_indices = ops.sort(lengths, descending=True, stable=True)
        sorted_indices = sorted_indices.to(input.device)
        input = ops.index_select(input, 0 if batch_first else 1, sorted_indices)
    data, batch_sizes = ops._pack_padded_sequence(input, lengths, batch_first)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """Unpack to a padded batch, in the original batch order: ``(padded, lengths)``.

    ``total_length`` pads to that many steps (at least the longest sequence), e.g. to match the input's.
    """
    if not isinstance(sequence, PackedSequence):
        raise TypeError(f"pad_packed_sequence(): argument 'sequence' must be PackedSequence, not "
                        f"{type(sequence).__name__}")
    max_seq_length = sequence.batch_sizes.shape[0]
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, but "
                             f"got total_length={total_length} and max sequence length being {max_seq_length}")
        max_seq_length = total_length
    padded, lengths = ops._pad_packed_sequence(sequence.data, sequence.batch_sizes, batch_first, padding_value,
                                               max_seq_length)
    unsorted = sequence.unsorted_indices
    if unsorted is not None:
        padded = ops.index_select(padded, 0 if batch_first else 1, unsorted)
        lengths = ops.index_select(lengths, 0, unsorted.cpu())
    return padded, lengths


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Pad sequences of shape (L_i, *) to the longest and stack them: (T, N, *), or (N, T, *)."""
    if isinstance(sequences, Tensor) or not isinstance(sequences, Iterable):
        raise RuntimeError(f"pad_sequence: Expected iterable for input sequences, but got arg of type: "
                           f"{type(sequences)}")
    sequences = list(sequences)
    for i, t in enumerate(sequences):
        if not isinstance(t, Tensor):
            raise TypeError(f"pad_sequence(): expected a sequence of Tensors, but element {i} is {type(t).__name__}")
    return ops.pad_sequence(sequences, batch_first, float(padding_value), padding_side)


def unpad_sequence(padded_sequences: Tensor, lengths: Tensor, batch_first: bool = False) -> list[Tensor]:
    """The inverse of :func:`pad_sequence` (right padding): the list of sequences, each its length long."""
    if not batch_first:
        padded_sequences = ops.transpose(padded_sequences, 0, 1)
    lengths = _lengths_tensor(lengths, "unpad_sequence").tolist()
    if len(lengths) != padded_sequences.shape[0]:
        raise RuntimeError(f"unpad_sequence: got {len(lengths)} lengths for a batch of {padded_sequences.shape[0]} "
                           "sequences")
    return [ops.narrow(seq, 0, 0, n) for seq, n in zip(padded_sequences, lengths)]


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences of shape (L_i, *) (decreasing lengths unless ``enforce_sorted=False``)."""
    sequences = list(sequences)
    lengths = factories.tensor([s.shape[0] for s in sequences], dtype=dt.int64)
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The inverse of :func:`pack_sequence`: the list of sequences."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
