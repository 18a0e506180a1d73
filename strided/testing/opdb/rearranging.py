"""OpInfos: flip, roll, repeat, tile, outer, swapaxes, diagonal, diag, trace, argsort, clamp_min /
clamp_max / clip (``strided/ops/composite/rearranging.py``), against NumPy."""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ..opinfo import ALL_DTYPES, COMPLEX, FLOATING, INTEGRAL, OpInfo, SampleInput, make_arg
from .helpers import err

__all__ = ["OPS"]

NO_BOOL = FLOATING + INTEGRAL


def _a(shape, d, rng, nc=False, **kw):
    return make_arg(shape, d, rng=rng, noncontiguous=nc, **kw)


def _flip_samples(d, rng):
    yield SampleInput((_a((3, 4), d, rng), [0]), name="dim 0")
    yield SampleInput((_a((3, 4), d, rng), [0, -1]), name="both dims")
    yield SampleInput((_a((2, 3, 4), d, rng, nc=True), [1, 2]), name="noncontiguous")
    yield SampleInput((_a((), d, rng), []), name="0-dim, no dims")
    yield SampleInput((_a((0, 3), d, rng), [0, 1]), name="zero-size")


def _flip_errors(rng):
    x = _a((2, 3), dt.float32, rng)
    yield err((x, [0, 0]), RuntimeError, "dim 0 appears multiple times in the list of dims")
    yield err((x, [2]), IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got 2)")


def _roll_samples(d, rng):
    yield SampleInput((_a((3, 4), d, rng), 5), name="flattened")
    yield SampleInput((_a((3, 4), d, rng), [1, -2], [0, 1]), name="two dims")
    yield SampleInput((_a((2, 3, 4), d, rng, nc=True), 7, 2), name="noncontiguous, shift > size")
    yield SampleInput((_a((3, 4), d, rng), 3, 0), name="shift == size")
    yield SampleInput((_a((), d, rng), 1), name="0-dim")
    yield SampleInput((_a((0, 3), d, rng), 1, 1), name="zero-size")


def _roll_ref(a, shifts, dims=()):
    dims = tuple(np.atleast_1d(dims).tolist()) if np.size(dims) else None
    shifts = tuple(np.atleast_1d(shifts).tolist())
    return np.roll(a, shifts if dims else shifts[0], axis=dims)


def _roll_errors(rng):
    x = _a((2, 3), dt.float32, rng)
    yield err((x, [1, 2], [0]), RuntimeError, "shifts and dimensions must align. shifts: 2, dims:1")
    yield err((x, [1, 2]), RuntimeError, "shifts and dimensions must align. shifts: 2, dims:0")


def _repeat_samples(d, rng):
    yield SampleInput((_a((2, 3), d, rng), [2, 1]), name="rows")
    yield SampleInput((_a((2, 3), d, rng, nc=True), [2, 1, 3]), name="noncontiguous, new leading dim")
    yield SampleInput((_a((3,), d, rng), [1]), name="ones: still a copy")
    yield SampleInput((_a((), d, rng), [2, 2]), name="0-dim")
    yield SampleInput((_a((0, 3), d, rng), [2, 0]), name="zero-size")


def _repeat_errors(rng):
    x = _a((2, 3), dt.float32, rng)
    yield err((x, [2]), RuntimeError, "Number of dimensions of repeat dims can not be smaller than number of "
                                      "dimensions of tensor")
    yield err((x, [-1, 2]), RuntimeError, "Trying to create tensor with negative dimension -2: [-2, 6]")


def _tile_samples(d, rng):
    yield SampleInput((_a((2, 3), d, rng), [2]), name="fewer dims than the tensor")
    yield SampleInput((_a((2, 3), d, rng, nc=True), [2, 1, 2]), name="noncontiguous, more dims")
    yield SampleInput((_a((), d, rng), []), name="0-dim")


def _outer_samples(d, rng):
    yield SampleInput((_a((3,), d, rng), _a((4,), d, rng)), name="vectors")
    yield SampleInput((_a((3,), d, rng, nc=True), _a((2,), d, rng, nc=True)), name="noncontiguous")
    yield SampleInput((_a((0,), d, rng), _a((2,), d, rng)), name="zero-size")


def _outer_errors(rng):
    yield err((_a((2, 3), dt.float32, rng), _a((2,), dt.float32, rng)), RuntimeError,
              "outer: Expected 1-D argument self, but got 2-D")
    yield err((_a((2,), dt.float32, rng), _a((2, 2), dt.float32, rng)), RuntimeError,
              "outer: Expected 1-D argument vec2, but got 2-D")


def _swap_samples(d, rng):
    yield SampleInput((_a((2, 3, 4), d, rng), 0, 2), name="outer dims")
    yield SampleInput((_a((3, 4), d, rng, nc=True), -1, 0), name="noncontiguous")


def _diagonal_samples(d, rng):
    for off in (0, 1, -2, 5):
        yield SampleInput((_a((3, 4), d, rng), off), name=f"offset {off}")
    yield SampleInput((_a((2, 3, 4), d, rng, nc=True), 1, 2, 0), name="noncontiguous, dims (2, 0)")
    yield SampleInput((_a((2, 3, 4), d, rng), -1, -1, -2), name="negative dims")
    yield SampleInput((_a((0, 3), d, rng),), name="zero-size")


def _diagonal_errors(rng):
    yield err((_a((2, 3), dt.float32, rng), 0, 1, 1), RuntimeError, "diagonal dimensions cannot be identical 1, 1")


def _diag_samples(d, rng):
    for off in (0, 2, -1):
        yield SampleInput((_a((3,), d, rng), off), name=f"vector, offset {off}")
        yield SampleInput((_a((3, 4), d, rng), off), name=f"matrix, offset {off}")
    yield SampleInput((_a((3, 4), d, rng, nc=True),), name="noncontiguous matrix")
    yield SampleInput((_a((0,), d, rng),), name="empty vector")


def _diag_errors(rng):
    yield err((_a((2, 3, 4), dt.float32, rng),), RuntimeError, "diag(): Supports 1D or 2D tensors. Got 3D")


def _trace_samples(d, rng):
    yield SampleInput((_a((3, 4), d, rng),), name="wide")
    yield SampleInput((_a((4, 3), d, rng, nc=True),), name="tall, noncontiguous")
    yield SampleInput((_a((0, 2), d, rng),), name="empty")


def _trace_errors(rng):
    yield err((_a((2,), dt.float32, rng),), RuntimeError, "trace: expected a matrix, but got tensor with dim 1")


def _argsort_samples(d, rng):
    ties = {"low": 0, "high": 3} if d not in FLOATING else {}
    yield SampleInput((_a((3, 5), d, rng, **ties),), name="last dim")
    yield SampleInput((_a((4, 3), d, rng, **ties), 0, True), name="dim 0, descending")
    yield SampleInput((_a((2, 3, 4), d, rng, nc=True, **ties), 1), name="noncontiguous")
    yield SampleInput((_a((), d, rng),), name="0-dim")


def _argsort_stable_samples(d, rng):
    for s in _argsort_samples(d, rng):
        dim = s.args[1] if len(s.args) > 1 else -1
        descending = s.args[2] if len(s.args) > 2 else False
        yield SampleInput(s.args[:1], {"stable": True, "dim": dim, "descending": descending}, s.name)


def _stable_argsort(a, dim=-1, descending=False):
    """Stable ascending or descending argsort (equal values keep their index order)."""
    if a.ndim == 0:
        return np.zeros((), np.int64)
    if not descending:
        return np.argsort(a, axis=dim, kind="stable")
    n = a.shape[dim]
    return n - 1 - np.flip(np.argsort(np.flip(a, dim), axis=dim, kind="stable"), dim)


def _clamp_samples(names):
    def samples(d, rng):
        lo, hi = (-2, 3) if d is not dt.uint8 else (2, 5)
        values = {"min": lo, "max": hi}
        yield SampleInput((_a((3, 4), d, rng), *(values[n] for n in names)), name="contiguous")
        yield SampleInput((_a((2, 3, 4), d, rng, nc=True), *(values[n] for n in names)), name="noncontiguous")
        if d.is_floating_point:
            yield SampleInput((_a((3,), d, rng), *(values[n] + 0.5 for n in names)), name="float bounds")

    return samples


def _pad_samples(d, rng):
    def a(shape, **kw):
        return make_arg(shape, d, rng=rng, **kw)

    fill = 1 if not d.is_floating_point else 1.5
    yield SampleInput((a((3, 4)), [1, 2]), {}, "the last dim")
    yield SampleInput((a((2, 3, 4), noncontiguous=True), [1, -1, 2, 0], fill), {}, "pad and crop, a value")
    yield SampleInput((a((3, 4)), [-1, -2]), {}, "crop only")
    yield SampleInput((a((2, 1, 3)), [0, 0, 0, 0, 2, 1], fill), {}, "the first dim")
    yield SampleInput((a(()), []), {}, "0-dim, no pad")
    yield SampleInput((a((0, 3)), [1, 1, 2, 0]), {}, "zero-size")


def _pad_ref(a, pad, value=0):
    out = a
    for j in range(len(pad) // 2):
        axis = a.ndim - 1 - j
        lo, hi = pad[2 * j], pad[2 * j + 1]
        n = out.shape[axis]
        out = np.take(out, range(max(-lo, 0), n - max(-hi, 0)), axis=axis)
        widths = [(0, 0)] * a.ndim
        widths[axis] = (max(lo, 0), max(hi, 0))
        out = np.pad(out, widths, constant_values=np.asarray(value).astype(a.dtype))
    return out


def _pad_errors(rng):
    x = make_arg((2, 3), rng=rng)
    return [err((x, [1, 2, 3]), RuntimeError, "Length of pad must be even but instead it equals 3"),
            err((x, [1] * 6), RuntimeError, "Length of pad should be no more than twice the number of dimensions of "
                                            "the input. Pad length is 6while the input has 2dimensions."),
            err((x, [-2, -2]), RuntimeError, "narrow(): length must be non-negative."),
            err((make_arg((2,), dt.uint8, rng=rng), [1, 1], 300), RuntimeError,
                "value cannot be converted to type uint8_t without overflow")]


OPS = [
    OpInfo("flip", _flip_samples, ref=lambda a, dims: np.flip(a, tuple(dims)) if dims else a.copy(), dtypes=ALL_DTYPES,
           errors=_flip_errors),
    OpInfo("roll", _roll_samples, ref=_roll_ref, dtypes=ALL_DTYPES, errors=_roll_errors),
    OpInfo("repeat", _repeat_samples, op=lambda x, r: x.repeat(*r), ref=lambda a, r: np.tile(a, r),
           dtypes=ALL_DTYPES, errors=_repeat_errors),
    OpInfo("tile", _tile_samples, ref=lambda a, r: np.tile(a, r) if r else a.copy(), dtypes=ALL_DTYPES),
    OpInfo("outer", _outer_samples, ref=np.outer, dtypes=NO_BOOL, errors=_outer_errors),
    OpInfo("swapaxes", _swap_samples, ref=np.swapaxes, dtypes=ALL_DTYPES),
    OpInfo("swapdims", _swap_samples, ref=np.swapaxes, dtypes=ALL_DTYPES),
    OpInfo("diagonal", _diagonal_samples, ref=lambda a, off=0, d1=0, d2=1: np.diagonal(a, off, d1, d2),
           dtypes=ALL_DTYPES, errors=_diagonal_errors),
    OpInfo("diag", _diag_samples, ref=lambda a, k=0: np.diag(a, k), dtypes=ALL_DTYPES, errors=_diag_errors),
    OpInfo("trace", _trace_samples, ref=np.trace, dtypes=NO_BOOL, errors=_trace_errors),
    OpInfo("argsort", _argsort_samples, ref=_stable_argsort, dtypes=ALL_DTYPES),
    OpInfo("argsort.stable", _argsort_stable_samples,
           ref=lambda a, stable, dim=-1, descending=False: _stable_argsort(a, dim, descending), dtypes=ALL_DTYPES),
    OpInfo("clamp_min", _clamp_samples(("min",)), ref=np.maximum, dtypes=NO_BOOL),
    OpInfo("clamp_max", _clamp_samples(("max",)), ref=np.minimum, dtypes=NO_BOOL),
    OpInfo("clip", _clamp_samples(("min", "max")), ref=np.clip, dtypes=NO_BOOL),
    OpInfo("constant_pad_nd", _pad_samples, ref=_pad_ref, dtypes=ALL_DTYPES + COMPLEX, errors=_pad_errors),
]
