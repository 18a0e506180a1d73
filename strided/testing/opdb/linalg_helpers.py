"""OpInfos: the linear-algebra helpers (``ops/composite/linalg_helpers.py``) against NumPy."""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ..opinfo import OpInfo, SampleInput, make_arg
from .pointwise_samples import error, inplace_variant

__all__ = ["OPS"]

_F = (dt.float32, dt.float64)
_FI = (dt.float32, dt.float64, dt.int64)
_TOL = {dt.float32: (1e-5, 1e-4), dt.int64: (1e-5, 1e-4)}  # int64 inputs of cov / trapezoid: float32 results


def _a(shape, d, rng, **kw):
    return make_arg(shape, d, rng=rng, **kw)


def _vector_pairs(d, rng):
    yield SampleInput((_a((5,), d, rng), _a((5,), d, rng)), name="contiguous")
    yield SampleInput((_a((4,), d, rng, noncontiguous=True), _a((4,), d, rng)), name="noncontiguous")
    yield SampleInput((_a((0,), d, rng), _a((0,), d, rng)), name="zero-size")


def _dot_errors(rng):
    m, v = _a((2, 3), dt.float32, rng), _a((3,), dt.float32, rng)
    yield error((m, m), RuntimeError, "1D tensors expected, but got 2D and 2D tensors")
    yield error((v, _a((4,), dt.float32, rng)), RuntimeError, "inconsistent tensor size, expected tensor [3] and "
                "src [4] to have the same number of elements, but got 3 and 4 elements respectively")
    yield error((v, v.to(dt.float64)), RuntimeError,
                "dot : expected both vectors to have same dtype, but found Float and Double")


def _inner_samples(d, rng):
    yield SampleInput((_a((2, 3), d, rng), _a((4, 3), d, rng, noncontiguous=True)), name="matrices")
    yield SampleInput((_a((3,), d, rng), _a((2, 2, 3), d, rng)), name="vector, 3-D")
    yield SampleInput((_a((), d, rng), _a((2, 3), d, rng)), name="0-dim")
    yield SampleInput((_a((2, 0), d, rng), _a((3, 0), d, rng)), name="zero-size")


def _mv_samples(d, rng):
    yield SampleInput((_a((3, 4), d, rng), _a((4,), d, rng)), name="contiguous")
    yield SampleInput((_a((4, 3), d, rng).t(), _a((4,), d, rng, noncontiguous=True)), name="transposed")
    yield SampleInput((_a((0, 4), d, rng), _a((4,), d, rng)), name="zero rows")


def _mv_errors(rng):
    m = _a((2, 3), dt.float32, rng)
    yield error((m, _a((4,), dt.float32, rng)), RuntimeError, "size mismatch, got input (2), mat (2x3), vec (4)")
    yield error((m, m), RuntimeError, "vector + matrix @ vector expected, got 1, 2, 2")


def _addmv_samples(d, rng):
    for s in _mv_samples(d, rng):
        mat, vec = s.args
        yield SampleInput((_a((mat.shape[0],), d, rng), mat, vec), name=s.name)
    yield SampleInput((_a((1,), d, rng), _a((3, 2), d, rng), _a((2,), d, rng)), {"beta": 2, "alpha": 3},
                      name="broadcast self, beta, alpha")
    nan = _a((3,), d, rng) if not d.is_floating_point else make_arg((3,), d, rng=rng).fill_(float("nan"))
    yield SampleInput((nan, _a((3, 2), d, rng), _a((2,), d, rng)), {"beta": 0}, name="beta 0 ignores self")


def _axpby_ref(prod):
    def ref(self, a, b, beta=1, alpha=1):
        p = prod(np.asarray(a, np.float64), np.asarray(b, np.float64)) * alpha
        return p if beta == 0 else p + beta * self

    return ref


def _ger_samples(d, rng):
    yield SampleInput((_a((3,), d, rng), _a((4,), d, rng, noncontiguous=True)), name="vectors")
    yield SampleInput((_a((0,), d, rng), _a((2,), d, rng)), name="zero-size")


def _addr_samples(d, rng):
    yield SampleInput((_a((3, 4), d, rng), _a((3,), d, rng), _a((4,), d, rng)), name="contiguous")
    yield SampleInput((_a((4,), d, rng), _a((3,), d, rng), _a((4,), d, rng, noncontiguous=True)),
                      {"beta": 2, "alpha": 3}, name="broadcast self")


def _addbmm_samples(d, rng):
    yield SampleInput((_a((2, 4), d, rng), _a((3, 2, 5), d, rng), _a((3, 5, 4), d, rng)), name="contiguous")
    yield SampleInput((_a((4,), d, rng), _a((2, 2, 3), d, rng, noncontiguous=True), _a((2, 3, 4), d, rng)),
                      {"beta": 0.5, "alpha": 2}, name="broadcast self, noncontiguous")
    yield SampleInput((_a((2, 4), d, rng), _a((0, 2, 3), d, rng), _a((0, 3, 4), d, rng)), name="no batches")


def _addbmm_errors(rng):
    s = _a((2, 4), dt.float32, rng)
    yield error((s, _a((2, 2), dt.float32, rng), _a((2, 4, 3), dt.float32, rng)), RuntimeError,
                "batch1 must be a 3D tensor")
    yield error((s, _a((2, 2, 3), dt.float32, rng), _a((2, 4, 3), dt.float32, rng)), RuntimeError,
                "Incompatible matrix sizes for bmm (2x3 and 4x3)")


def _chain_samples(d, rng):
    yield SampleInput(([_a((2, 3), d, rng), _a((3, 4), d, rng), _a((4, 2), d, rng, noncontiguous=True)],),
                      name="three")
    yield SampleInput(([_a((2, 3), d, rng)],), name="one")


def _chain_ref(ms):
    out = np.asarray(ms[0], np.float64)
    for m in ms[1:]:
        out = out @ m
    return out


def _dist_samples(d, rng):
    for p in (2, 1, 3.5, float("inf"), 0):
        yield SampleInput((_a((3, 4), d, rng), _a((4,), d, rng)), {"p": p}, name=f"p={p}")
    yield SampleInput((_a((2, 3), d, rng, noncontiguous=True), _a((2, 3), d, rng)), name="noncontiguous")


def _dist_ref(a, b, p=2):
    x = np.abs(np.asarray(a, np.float64) - b).ravel()
    if p == 0:
        return np.float64(np.count_nonzero(x))
    if p == float("inf"):
        return x.max()
    return (x ** p).sum() ** (1 / p)


def _renorm_samples(d, rng):
    yield SampleInput((_a((3, 4), d, rng), 2, 0, 5.0), name="rows")
    yield SampleInput((_a((3, 4, 2), d, rng, noncontiguous=True), 1, 1, 8.0), name="noncontiguous, dim 1")
    yield SampleInput((_a((2, 3), d, rng), 3, -1, 100.0), name="none above")


def _renorm_ref(x, p, dim, maxnorm):
    x = np.asarray(x, np.float64)
    axes = tuple(i for i in range(x.ndim) if i != dim % x.ndim)
    norm = (np.abs(x) ** p).sum(axis=axes, keepdims=True) ** (1 / p)
    return x * np.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)


def _renorm_errors(rng):
    m = _a((2, 3), dt.float32, rng)
    yield error((m, -1, 0, 1), RuntimeError, "renorm: non-positive-norm not supported")
    yield error((m, 2, 0, -1), RuntimeError, "renorm: expected maxnorm to be >= 0 but got -1")
    yield error((_a((3,), dt.float32, rng), 2, 0, 1), RuntimeError,
                "renorm: input needs at least 2 dimensions, got 1 dimensions")


def _cov_samples(d, rng):
    yield SampleInput((_a((3, 5), d, rng),), name="matrix")
    yield SampleInput((_a((6,), d, rng, noncontiguous=True),), {"correction": 0}, name="vector, correction 0")
    yield SampleInput((_a((2, 4), d, rng),), {"fweights": make_arg((4,), dt.int64, low=0, high=4, rng=rng),
                                              "aweights": make_arg((4,), dt.float64, low=0.5, high=2, rng=rng)},
                      name="weights")


def _cov_ref(x, correction=1, fweights=None, aweights=None):
    return np.cov(np.asarray(x, np.float64), ddof=correction, fweights=fweights, aweights=aweights)


def _cov_errors(rng):
    m = _a((2, 3), dt.float32, rng)
    yield error((_a((2, 2, 2), dt.float32, rng),), RuntimeError,
                "cov(): expected input to have two or fewer dimensions but got an input with 3 dimensions")
    yield error((m,), RuntimeError, "cov(): expected fweights to have integral dtype but got fweights with Float dtype",
                {"fweights": _a((3,), dt.float32, rng)})
    yield error((m,), RuntimeError, "cov(): expected aweights to have the same numel as there are observations in "
                "the input but got 4 != 3", {"aweights": _a((4,), dt.float32, rng)})


def _corrcoef_samples(d, rng):
    yield SampleInput((_a((3, 6), d, rng),), name="matrix")
    yield SampleInput((_a((2, 5), d, rng, noncontiguous=True),), name="noncontiguous")


def _trap_y(d, rng):
    yield _a((3, 5), d, rng), -1, "last dim"
    yield _a((4, 3), d, rng, noncontiguous=True), 0, "dim 0, noncontiguous"
    yield _a((2, 1), d, rng), 1, "one sample"


def _trap_x_samples(d, rng):
    for y, dim, name in _trap_y(d, rng):
        n = y.shape[dim]
        yield SampleInput((y, make_arg((n,), d, rng=rng).cumsum(0) if d.is_floating_point else
                           make_arg((n,), d, rng=rng)), {"dim": dim}, name=name + ", 1-D x")
    yield SampleInput((_a((2, 4), d, rng), _a((2, 4), d, rng)), name="x like y")


def _trap_dx_samples(d, rng):
    for y, dim, name in _trap_y(d, rng):
        yield SampleInput((y,), {"dim": dim, "dx": 0.5}, name=name)
    yield SampleInput((_a((3, 0), d, rng),), name="no samples")


def _x_view(y, x, dim):
    y = np.asarray(y, np.float64)
    x = np.asarray(x, np.float64)
    if x.ndim == 1:
        shape = [1] * y.ndim
        shape[dim % y.ndim] = x.shape[0]
        x = x.reshape(shape)
    return np.diff(x, axis=dim)


def _pair_sum(y, dim):
    y = np.asarray(y, np.float64)
    n = y.shape[dim]
    return np.take(y, range(1, n), axis=dim) + np.take(y, range(0, n - 1), axis=dim)


def _trap_x_ref(y, x, dim=-1):
    return (_x_view(y, x, dim) * _pair_sum(y, dim)).sum(axis=dim) / 2


def _trap_dx_ref(y, dx=1, dim=-1):
    return (_pair_sum(y, dim) * dx).sum(axis=dim) / 2


def _ctrap_x_ref(y, x, dim=-1):
    return np.cumsum(_x_view(y, x, dim) / 2 * _pair_sum(y, dim), axis=dim)


def _ctrap_dx_ref(y, dx=1, dim=-1):
    return np.cumsum(_pair_sum(y, dim) * (dx / 2), axis=dim)


def _trap_errors(rng):
    yield error((_a((2, 3), dt.float32, rng), _a((2,), dt.float32, rng)), RuntimeError,
                "trapezoid: There must be one `x` value for each sample point")


def _f64(fn):
    return lambda *a, **k: fn(*(np.asarray(x, np.float64) for x in a), **k)


_dot = OpInfo("dot", _vector_pairs, ref=_f64(np.dot), dtypes=_FI, tolerances=_TOL, errors=_dot_errors)
_addmv = OpInfo("addmv", _addmv_samples, ref=_axpby_ref(np.matmul), dtypes=_FI, tolerances=_TOL)
_addr = OpInfo("addr", _addr_samples, ref=_axpby_ref(np.outer), dtypes=_FI, tolerances=_TOL)
_addbmm = OpInfo("addbmm", _addbmm_samples, ref=_axpby_ref(lambda a, b: np.einsum("bij,bjk->ik", a, b)),
                 dtypes=_F, tolerances=_TOL, errors=_addbmm_errors)
_renorm = OpInfo("renorm", _renorm_samples, ref=_renorm_ref, dtypes=_F, tolerances=_TOL, errors=_renorm_errors)

OPS = [
    _dot,
    OpInfo("vdot", _vector_pairs, ref=_f64(np.vdot), dtypes=_FI, tolerances=_TOL),
    OpInfo("inner", _inner_samples, ref=_f64(np.inner), dtypes=_FI, tolerances=_TOL),
    OpInfo("mv", _mv_samples, ref=_f64(np.matmul), dtypes=_FI, tolerances=_TOL, errors=_mv_errors),
    OpInfo("ger", _ger_samples, ref=_f64(np.outer), dtypes=_FI),
    _addmv, inplace_variant(_addmv, "addmv_", "addmv_"),
    _addr, inplace_variant(_addr, "addr_", "addr_"),
    _addbmm, inplace_variant(_addbmm, "addbmm_", "addbmm_"),
    OpInfo("chain_matmul", _chain_samples, ref=_chain_ref, dtypes=_F, tolerances=_TOL),
    OpInfo("dist", _dist_samples, ref=_dist_ref, dtypes=_F, tolerances=_TOL),
    _renorm, inplace_variant(_renorm, "renorm_", "renorm_"),
    OpInfo("cov", _cov_samples, ref=_cov_ref, dtypes=_FI, tolerances=_TOL, errors=_cov_errors),
    OpInfo("corrcoef", _corrcoef_samples, ref=lambda x: np.corrcoef(np.asarray(x, np.float64)), dtypes=_F,
           tolerances=_TOL),
    OpInfo("trapezoid.x", _trap_x_samples, ref=_trap_x_ref, dtypes=_FI, tolerances=_TOL, errors=_trap_errors),
    OpInfo("trapezoid.dx", _trap_dx_samples, ref=_trap_dx_ref, dtypes=_FI, tolerances=_TOL),
    OpInfo("trapz.x", _trap_x_samples, ref=_trap_x_ref, dtypes=_F, tolerances=_TOL),
    OpInfo("trapz.dx", _trap_dx_samples, ref=_trap_dx_ref, dtypes=_F, tolerances=_TOL),
    OpInfo("cumulative_trapezoid.x", _trap_x_samples, ref=_ctrap_x_ref, dtypes=_FI, tolerances=_TOL),
    OpInfo("cumulative_trapezoid.dx", _trap_dx_samples, ref=_ctrap_dx_ref, dtypes=_F, tolerances=_TOL),
]
