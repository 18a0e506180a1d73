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

Note [Sorted segments]
A gradient of ``index_select`` with sorted indices -- each linear interpolation step's backward -- adds into zeros
along one axis, each target's contributions at consecutive positions (runs). Then the runs are summed on their own,
one round per position in a run (``np.take`` of that position of every run long enough, added to the runs' sums: the
same additions in the same order), and the sums added to the zeros once: an accumulator of zeros changes a sum only
by its sign of zero, which adding it at the end gives too (IEEE: -0 + -0 is -0, any +0 makes +0, x + 0 is x). This
replaces the rounds' fancy-index updates of a view with the axis moved to the front, which gather and scatter
element by element across the axis; where the runs' positions fall in a few evenly spaced pieces (interpolation's
indices) every step is a strided slice. Only for a non-leading axis (along the leading one the rounds update whole
rows) and runs of two or more (distinct indices take one update anyway). ``np.add.reduceat`` would be one call, but
it adds a run's tail pairwise (a + (b + c)), not in order. (bench/RESULTS.md: bilinear upsampling's backward.)
"""

from __future__ import annotations

import math

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


_MAX_PIECES = 8  # evenly spaced pieces worth slicing one by one; more, and one np.take is cheaper


def _pieces(*arrays: np.ndarray) -> list | None:
    """Split positions ``0..n`` of equally long, strictly ascending ``arrays`` into pieces over which every array is
    evenly spaced: ``[(i, j)]``; None past ``_MAX_PIECES`` pieces. A piece from ``i`` runs to the first change of
    step after ``i``; the position after that change starts the next."""
    n = arrays[0].shape[0]
    if n <= 2:
        return [(0, n)]
    change = np.zeros(n - 2, dtype=bool)
    for a in arrays:
        d = np.diff(a)
        change |= d[1:] != d[:-1]
    breaks = np.flatnonzero(change) + 1  # k: the step from k to k + 1 differs from the step into k
    if breaks.shape[0] > 2 * _MAX_PIECES:
        return None
    pieces, i = [], 0
    while i < n:
        k = np.searchsorted(breaks, i, side="right")  # the first change of step after i
        j = int(breaks[k]) + 1 if k < breaks.shape[0] else n
        pieces.append((i, j))
        if len(pieces) > _MAX_PIECES:
            return None
        i = j
    return pieces


def _cut(a: np.ndarray, i: int, j: int) -> slice:
    """Positions ``a[i:j]`` (evenly spaced, ascending) as a slice."""
    step = int(a[i + 1] - a[i]) if j - i > 1 else 1
    return slice(int(a[i]), int(a[j - 1]) + 1, step)


def _gather(src: np.ndarray, axis: int, positions: np.ndarray) -> np.ndarray:
    """``np.take(src, positions, axis)``, by slices when the positions are a few evenly spaced pieces (a strided
    copy, where take indexes element by element)."""
    pieces = _pieces(positions)
    if pieces is None:
        return np.take(src, positions, axis=axis)
    lead = (slice(None),) * axis
    parts = [src[lead + (_cut(positions, i, j),)] for i, j in pieces]
    return parts[0].copy() if len(parts) == 1 else np.concatenate(parts, axis=axis)


def _add_at_runs(sums: np.ndarray, axis: int, runs: np.ndarray, src: np.ndarray, positions: np.ndarray) -> None:
    """``sums[..., runs[k], ...] += src[..., positions[k], ...]`` for every ``k`` (distinct ``runs``)."""
    lead = (slice(None),) * axis
    pieces = _pieces(runs, positions)
    if pieces is None:
        sums[lead + (runs,)] += np.take(src, positions, axis=axis)
        return
    for i, j in pieces:
        sums[lead + (_cut(runs, i, j),)] += src[lead + (_cut(positions, i, j),)]


def _add_sorted_runs(acc: np.ndarray, axis: int, idx: np.ndarray, src: np.ndarray) -> bool:
    """``add_rows`` for sorted ``idx`` into zeros, run by run (Note [Sorted segments]); False (nothing done) when
    the case does not apply."""
    n = idx.shape[0]
    if n < 2 or idx[0] > idx[-1]:
        return False
    step = np.diff(idx)
    if step.min() < 0:
        return False
    starts = np.flatnonzero(np.concatenate(([True], step != 0)))
    lengths = np.diff(np.append(starts, n))
    longest = int(lengths.max())
    if longest < 2 or longest > MAX_ROUNDS or acc.any():  # distinct indices: the rounds' one update is enough
        return False
    sums = _gather(src, axis, starts)
    for r in range(1, longest):
        longer = np.flatnonzero(lengths > r)
        _add_at_runs(sums, axis, longer, src, starts[longer] + r)
    targets = idx[starts]
    lead = (slice(None),) * axis
    if targets[-1] - targets[0] + 1 == targets.shape[0]:  # every index in a range: a slice, no fancy indexing
        window = lead + (slice(int(targets[0]), int(targets[-1]) + 1),)
        np.add(sums, acc[window], out=acc[window])
    else:
        window = lead + (targets,)
        acc[window] = sums + acc[window]
    return True


def add_rows(acc: np.ndarray, axis: int, idx: np.ndarray, src: np.ndarray) -> None:
    """``acc[..., idx[i], ...] += src[..., i, ...]`` along ``axis`` for every ``i``, in ``i`` order (Note
    [Accumulation in rounds]); ``idx`` is 1-d and inside ``[0, acc.shape[axis])``."""
    # Note [Sorted segments]: along a leading axis the rounds update whole rows, already as fast
    if (src.size >= MIN_ELEMENTS and axis > 0 and acc.dtype.kind in "fc" and math.prod(acc.shape[:axis]) > 1
            and _add_sorted_runs(acc, axis, idx, src)):
        return
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
