"""Convolutions over slices of the batch, so that their columns fit a memory budget.

Note [Convolution batch chunks]
Every convolution here is a GEMM over columns (Note [Convolution as a GEMM]): C * K rows (K the kernel's
elements; for a transposed convolution C_out * K) by L output positions per sample -- 9x the input for a 3x3
kernel, 27x for 3x3x3 -- made in the forward and again in the backward (Note [Convolution backward]). For a
whole batch they set a network's peak: a (128, 64, 56, 56) 3x3 layer's columns are 882 MiB against its 98 MiB
input, its forward and backward peaked at 1096 MiB where torch's cuDNN needs 394. Samples are independent, so
the op runs over slices of the batch whose columns fit ``COLUMN_BUDGET`` and writes each slice's result into its
rows of one output (the weight's gradient: the slices' partial sums added, in float32 for half types); that
layer peaks at 456 MiB in 4 slices. Each slice is the same batched GEMM with fewer batch entries, so the device
does the same work; a slice adds host time (its launches and a few ops), which is why the default is 256 MiB:
on the H200 hosts measured, a (32, 64, 56, 56) layer in 4 slices of 55 MiB took 2x the time of one batch, as
the slices' host work outlasted their device work. ``STRIDED_CONV_COLUMN_BUDGET_MB`` sets the budget (read at
import): lower trades time for memory. One sample is the smallest slice: its columns are not split further. A
double backward (grad mode on inside the backward) keeps the whole batch: the copies into an output's rows
would be recorded ops.
"""

from __future__ import annotations

import math
import os
import warnings

from .. import bound as ops

__all__ = ["COLUMN_BUDGET", "budget_from_env", "samples_per_chunk", "over_batch"]

DEFAULT_BUDGET_MB = 256


def budget_from_env() -> int:
    """``STRIDED_CONV_COLUMN_BUDGET_MB`` MiB in bytes, or the default's (a warning names a value that is not a
    positive integer)."""
    env = os.environ.get("STRIDED_CONV_COLUMN_BUDGET_MB")
    mb = DEFAULT_BUDGET_MB
    if env is not None:
        try:
            mb = int(env)
            if mb < 1:
                raise ValueError(env)
        except ValueError:
            warnings.warn(f"invalid STRIDED_CONV_COLUMN_BUDGET_MB={env!r} (a positive number of MiB), using the "
                          f"default of {DEFAULT_BUDGET_MB} MiB", UserWarning, stacklevel=2)
            mb = DEFAULT_BUDGET_MB
    return mb << 20


COLUMN_BUDGET = budget_from_env()  # bytes of columns one slice of the batch may make (Note [Convolution batch chunks])


def _column_bytes(input, weight, s, p, d, transposed: bool, groups: int) -> int:
    """Bytes of one sample's columns (0 when the convolution makes none: a 1x1 kernel of stride 1, unpadded)."""
    kernel = weight.shape[2:]
    k = math.prod(kernel)
    if transposed:
        rows, length = weight.shape[1] * groups * k, math.prod(input.shape[2:])
    else:
        if all(v == 1 for v in (*kernel, *s)) and not any(p):
            return 0
        if min(s) <= 0:
            return 0  # a bad geometry: the whole batch goes to the kernel, which raises torch's error
        outs = [(size + 2 * pp - dd * (kk - 1) - 1) // ss + 1
                for size, kk, ss, pp, dd in zip(input.shape[2:], kernel, s, p, d)]
        if min(outs) <= 0:
            return 0
        rows, length = input.shape[1] * k, math.prod(outs)
    return rows * length * input.dtype.itemsize


def samples_per_chunk(input, weight, s, p, d, transposed: bool, groups: int) -> int:
    """How many samples of ``input``'s batch one slice takes (the whole batch when its columns fit the budget)."""
    n = input.shape[0]
    if input.device.type == "meta":
        return n  # no memory to save
    per_sample = _column_bytes(input, weight, s, p, d, transposed, groups)
    if per_sample * n <= COLUMN_BUDGET:
        return n
    return max(1, COLUMN_BUDGET // per_sample)


def _empty_batch_of(part, n: int):
    """An uninitialized dense tensor of ``n`` samples shaped as the slice result ``part``, its other dims in
    ``part``'s memory order (a channels-last result stays channels-last), the batch outermost."""
    order = sorted(range(1, part.dim()), key=lambda i: (-part.stride(i), i))
    base = ops.empty([n, *(part.shape[i] for i in order)], dtype=part.dtype, device=part.device)
    perm = [0, *order]
    return ops.permute(base, [perm.index(i) for i in range(part.dim())])


def over_batch(step: int, n: int, run):
    """``run(lo, count)`` (a tensor, or None) for consecutive slices of ``step`` samples, assembled into one tensor
    of ``n`` samples: each slice's rows copied in, the slice freed before the next one runs."""
    out = None
    for lo in range(0, n, step):
        count = min(step, n - lo)
        part = run(lo, count)
        if part is None:
            return None
        if out is None:
            out = _empty_batch_of(part, n)
        ops.narrow(out, 0, lo, count).copy_(part)
        del part
    return out
