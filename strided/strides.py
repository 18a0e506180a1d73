"""The dense strides of a shape: row-major (contiguous), channels-last (NHWC) and channels-last-3d (NDHWC),
and the row-major test. ``Tensor`` and the kernels lay out new tensors with them."""

from __future__ import annotations

__all__ = ["contiguous_strides", "channels_last_strides", "channels_last_3d_strides", "memory_format_strides",
           "is_row_major"]

_STRIDES_MEMO: dict = {}  # sizes tuple -> its row-major strides (bounded, as tensor.py's Note [Contiguity memo])


def contiguous_strides(sizes) -> tuple:
    """Row-major strides, in elements, for ``sizes`` (zero-size dims count as 1, as in torch)."""
    if sizes.__class__ is tuple:
        hit = _STRIDES_MEMO.get(sizes)
        if hit is None:
            if len(_STRIDES_MEMO) > 4096:
                _STRIDES_MEMO.clear()
            hit = _STRIDES_MEMO[sizes] = _compute_contiguous_strides(sizes)
        return hit
    return _compute_contiguous_strides(sizes)


def _compute_contiguous_strides(sizes) -> tuple:
    strides, acc = [], 1
    for s in reversed(sizes):
        strides.append(acc)
        acc *= s if s > 1 else 1
    return tuple(reversed(strides))


def channels_last_strides(sizes) -> tuple:
    """NHWC strides for a 4-d NCHW shape (torch.channels_last)."""
    if len(sizes) != 4:
        raise RuntimeError("required rank 4 tensor to use channels_last format")
    n, c, h, w = (max(s, 1) for s in sizes)
    return (h * w * c, 1, w * c, c)


def channels_last_3d_strides(sizes) -> tuple:
    """NDHWC strides for a 5-d NCDHW shape (torch.channels_last_3d)."""
    if len(sizes) != 5:
        raise RuntimeError("required rank 5 tensor to use channels_last_3d format")
    n, c, d, h, w = (max(s, 1) for s in sizes)
    return (d * h * w * c, 1, h * w * c, w * c, c)


def memory_format_strides(sizes, memory_format) -> tuple:
    """The dense strides of ``memory_format`` for ``sizes`` (contiguous for None / contiguous / preserve)."""
    if memory_format == "channels_last":
        return channels_last_strides(sizes)
    if memory_format == "channels_last_3d":
        return channels_last_3d_strides(sizes)
    return contiguous_strides(sizes)


def is_row_major(sizes, strides) -> bool:
    """True when ``strides`` are the row-major strides of ``sizes`` (size-1 dims ignored)."""
    expected = 1
    for size, stride in zip(reversed(sizes), reversed(strides)):
        if size == 0:
            return True
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True
