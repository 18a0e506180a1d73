"""Accumulating writes (``index_add``, ``scatter_add``, ``index_put_(accumulate=True)`` with one index array or
index arrays on the leading dims, as one flat row index).

Note [Accumulation in rounds]
``np.add.at(acc, idx, src)`` adds ``src[i]`` into ``acc[idx[i]]`` one element at a time, in ``i`` order -- torch's
CPU kernels' order, so the sums round as torch's do. On flat operands (1-d, contiguous, one dtype) NumPy >= 1.25
runs it on a fast path (~2 ns an element: a nearest-upsampling backward of a (8, 16, 64, 64) gradient in 0.8 ms,
float16 and bfloat16 in ~5 ms), so ``add_flat`` calls it directly. Along an axis of a matrix (``acc[..., idx[i],
...] += src[..., i, ...]``, index_add / an embedding backward) np.add.at has no fast path: there the indices are
split into rounds, round ``r`` holding each index's ``r``-th occurrence (a stable sort ranks them), so within a
round the indices are distinct and ``acc[idx[sel]] += src[sel]`` is one vectorized fancy-index update; doing the
rounds in order adds each target's contributions in ``i`` order, the same sums bit for bit. An embedding backward
over 8192 tokens of a 1000-word vocabulary takes about 20 rounds (2.5 ms instead of 9.5). ``np.add.at`` is kept
there where it is cheaper: under ``MIN_ELEMENTS`` additions (the ranking costs ~60 µs) and past one round per 1000
additions (a histogram-like scatter; at most ``MAX_ROUNDS``). (An earlier ``add_flat`` split flat indices into rounds
too: 20x slower than the fast path it bypassed.)
"""

from __future__ import annotations

import numpy as np

__all__ = ["add_rows", "add_flat", "MAX_ROUNDS"]

MAX_ROUNDS = 256
MIN_ELEMENTS = 8192  # below, np.add.at's loop is cheaper than the ranking's fixed cost (~60 µs)


def _rounds(idx: np.ndarray, size: int, max_rounds: int = MAX_ROUNDS):
    """The positions of each round (Note [Accumulation in rounds]): a list of index arrays, round ``r`` holding
    the ``r``-th occurrence of each index in ascending position; None when every index is distinct, and an empty
    list past ``max_rounds`` rounds (known from the counts before any sort). ``idx`` lies in ``[0, size)``."""
    n = idx.shape[0]
    if n < 2:
        return None
    rounds = int(np.bincount(idx, minlength=size).max())
    if rounds == 1:
        return None
    if rounds > max_rounds:
        return []
    order = np.argsort(idx, kind="stable")
    s = idx[order]
    new = np.empty(n, dtype=bool)
    new[0] = True
    np.not_equal(s[1:], s[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    rank = np.empty(n, dtype=np.intp)
    rank[order] = np.arange(n) - np.repeat(starts, np.diff(np.append(starts, n)))
    by_round = np.argsort(rank, kind="stable")  # each round's positions stay ascending
    ends = np.cumsum(np.bincount(rank, minlength=rounds))
    return np.split(by_round, ends[:-1])


def _round_budget(elements: int) -> int:
    """The most rounds worth taking for ``elements`` additions: each round costs a few µs of NumPy calls, the
    scalar loop ~10 ns per element."""
    return min(MAX_ROUNDS, max(1, elements // 1000))


def add_rows(acc: np.ndarray, axis: int, idx: np.ndarray, src: np.ndarray) -> None:
    """``acc[..., idx[i], ...] += src[..., i, ...]`` along ``axis`` for every ``i``, in ``i`` order (Note
    [Accumulation in rounds]); ``idx`` is 1-d and inside ``[0, acc.shape[axis])``."""
    rounds = _rounds(idx, acc.shape[axis], _round_budget(src.size)) if src.size >= MIN_ELEMENTS else []
    if rounds == []:
        np.add.at(acc, (slice(None),) * axis + (idx,), src)
        return
    a, b = np.moveaxis(acc, axis, 0), np.moveaxis(src, axis, 0)
    if rounds is None:
        a[idx] += b
    else:
        for sel in rounds:
            a[idx[sel]] += b[sel]


def add_flat(acc: np.ndarray, lin: np.ndarray, values: np.ndarray) -> None:
    """``acc.flat[lin[i]] += values[i]`` for every ``i``, in ``i`` order; ``acc`` contiguous, ``lin`` and
    ``values`` 1-d (Note [Accumulation in rounds]: NumPy's fast path of np.add.at, given contiguous values of
    ``acc``'s dtype)."""
    flat = acc.reshape(-1)
    np.add.at(flat, lin, np.ascontiguousarray(values, dtype=acc.dtype))
