"""CUDA kernels of the complex ops (``conj_physical``, ``angle``, ``polar``, ``complex``) on the elementwise
engine, with the device complex type of ``complex.cuh`` (Note [Device complex type]).

The Meta functions (``backends/meta/complex_ops.py``) give the outputs, as for every CUDA kernel. The
complex arithmetic of the shared ops (add, sub, mul, div, neg, eq, ne, abs, exp) runs through their
``pointwise_ops`` kernels: a complex result computes in its own type (``_C4``). ``instantiations`` lists
every complex instantiation those kernels make, for the NVRTC null test and ``elementwise.precompile``.
"""

from __future__ import annotations

from .... import dtypes as dt
from ....dispatch.library import kernel
from ....tensor import make_tensor
from ...meta import complex_ops as meta
from ..copies import copy_ as _copy
from ..elementwise import opmath, run

__all__ = ["instantiations", "fill_complex", "as_real", "over_pairs", "scatter_whole_elements"]

# torch's angle of a real x: NaN stays NaN, pi below 0, else 0 (-0 too); integers and bool as the default float.
_ANGLE_REAL = "(x0 != x0 ? x0 : (x0 < C0(0) ? C0(3.14159265358979323846) : C0(0)))"


def as_real(t):
    """The (..., 2) real view of a complex tensor's (re, im) pairs (view_as_real's layout)."""
    return make_tensor(t._storage, 2 * t._offset, t._sizes + (2,), tuple(2 * s for s in t._strides) + (1,),
                       t.dtype.to_real())


# Note [Complex gathers]
# index_select, gather and cumsum move or add the real and imaginary parts apart, so a complex one is the
# real kernel over the (..., 2) real view of the pairs, the pair dim last and never the one indexed or
# scanned (gather's index is broadcast over it): the real instantiations serve, and their sources stay
# as they were. The Meta function still checks the complex call and gives its shape; a 0-dim input runs
# as one element.
def over_pairs(fn, out, self, dim, index=None):
    """``fn(real view, dim[, index])`` of complex ``self``, as a complex tensor of ``out``'s shape."""
    from ...meta.common import wrap_dim

    d = wrap_dim(dim, self.dim()) if self._sizes else 0
    src = as_real(self if self._sizes else self.reshape((1,)))
    if index is None:
        r = fn(src, d)
    else:
        if fn.__name__ == "gather":
            index = index if index._sizes else index.reshape((1,))
            index = index.unsqueeze(-1).expand(index._sizes + (2,))
        r = fn(src, d, index)
    return from_pairs(r, self.dtype if out is None else out.dtype, out._sizes)


def from_pairs(r, dtype, sizes):
    """The complex tensor of ``dtype`` whose (re, im) pairs are the real (..., 2) tensor ``r``, as ``sizes``."""
    z = make_tensor(r._storage, r._offset // 2, r._sizes[:-1], tuple(s // 2 for s in r._strides[:-1]), dtype)
    return z.reshape(sizes)


def _one_dim(t):
    return t if t._sizes else t.reshape((1,))


# index_add and scatter_add add the parts apart too (Note [Complex gathers]): the real kernels over the pairs'
# views, the pair dim last (scatter's index broadcast over it), a complex alpha applied to the source first.
def index_add_pairs(index_add, out, self, dim, index, source, alpha):
    """Complex ``index_add`` through the real kernel ``index_add``, as a tensor of ``out``'s shape."""
    from ...meta.common import wrap_dim

    d = wrap_dim(dim, self.dim()) if self._sizes else 0
    src = source if alpha == 1 else source * alpha
    r = index_add(as_real(_one_dim(self)), d, index, as_real(_one_dim(src)))
    return from_pairs(r, out.dtype, out._sizes)


def scatter_add_pairs(scatter_add, out, self, dim, index, src):
    """Complex ``scatter_add`` through the real kernel ``scatter_add``, as a tensor of ``out``'s shape."""
    from ...meta.common import wrap_dim

    d = wrap_dim(dim, self.dim()) if self._sizes else 0
    index = _one_dim(index)
    r = scatter_add(as_real(_one_dim(self)), d, index.unsqueeze(-1).expand(index._sizes + (2,)),
                    as_real(_one_dim(src)))
    return from_pairs(r, out.dtype, out._sizes)


# Note [Complex scatter]
# scatter writes, it does not add: at a duplicate index one source wins, and it must win whole. The real kernel
# over the pairs' views (as scatter_add uses) could take the real part from one source and the imaginary part
# from another, since each part is its own store. So a complex scatter scatters int64 *positions* instead:
# ``pos`` (-1 everywhere) gets, at each written element, the flat position of one source element, written by
# one 8-byte store; then ``where(pos >= 0, take(src, pos), self)`` copies whole elements. A Scalar ``value`` is
# the same at every duplicate, so only the mask matters: ``masked_fill(self, pos >= 0, value)``.
def scatter_whole_elements(scatter_real, self, dim, index, src):
    """Complex ``scatter`` (a Tensor ``src`` or a Scalar) through the int64 kernel ``scatter_real``."""
    from ....ops import bound as ops

    dev = self.device
    n = index.numel()
    positions = ops.reshape(ops.arange(0, n, 1, dtype=dt.int64, device=dev), index._sizes)
    pos = scatter_real(ops.full(self._sizes, -1, dtype=dt.int64, device=dev), dim, index, positions)
    written = ops.ge(pos, 0)
    if not hasattr(src, "_sizes"):
        return ops.masked_fill(self, written, src)
    vals = src
    for d, size in enumerate(index._sizes):  # the sources scatter reads: src's leading block of index's shape
        vals = ops.narrow(vals, d, 0, size)
    # index_select over the flat sources: its bounds check is deferred, so no host sync (take's is not)
    picked = ops.index_select(ops.reshape(vals, (-1,)), 0, ops.reshape(ops.clamp_min(pos, 0), (-1,)))
    return ops.where(written, ops.reshape(picked, self._sizes), self)


def fill_complex(self, value):
    """``fill_`` of a complex tensor (any layout): both parts of ``value`` ride one scalar operand
    (Note [Complex scalar arguments] in elementwise.py)."""
    return run("x0", self, (value,), (self.dtype,), dense=False)


@kernel("CUDA")
def conj_physical(self):
    out = meta.conj_physical(self)
    if self.dtype.is_complex:
        return run("ew_conj(x0)", out, (self,), (self.dtype,))
    return _copy(out, self)  # a real tensor is its own conjugate


@kernel("CUDA")
def angle(self):
    out = meta.angle(self)
    if self.dtype.is_complex:
        return run("ew_carg(x0)", out, (self,), (self.dtype,))
    return run(_ANGLE_REAL, out, (self,), (opmath(out.dtype),))


@kernel("CUDA")
def polar(abs, angle):  # noqa: A002 - torch's argument names
    out = meta.polar(abs, angle)
    r = out.dtype.to_real()
    return run("ew_polar(x0, x1)", out, (abs, angle), (r, r))


@kernel("CUDA")
def complex(real, imag):  # noqa: A001 - the op's name
    out = meta.complex(real, imag)
    r = out.dtype.to_real()
    return run("ew_complex(x0, x1)", out, (real, imag), (r, r))


_MATH_UNARY = ("sqrt", "rsqrt", "log", "log1p", "sin", "cos", "tan", "sinh", "cosh", "tanh", "sigmoid", "reciprocal",
               "log2", "log10", "exp2", "expm1", "asin", "acos", "atan", "asinh", "acosh", "atanh")


def _sample_calls(c: dt.dtype):
    """Calls that reach every complex instantiation of dtype ``c``: tensor, Python-scalar, 0-dim CPU and
    real operands of the binary ops, alpha, and the unary and complex ops."""
    from .... import factories as f
    from . import binary_math_ops as bm
    from . import pointwise_ops as pw

    r = c.to_real()

    def t(x=c):
        return f.ones(3, dtype=x)

    for fn in (pw.add, pw.sub, pw.mul, pw.div, pw.eq, pw.ne):
        for a, b in ((t(), t()), (t(), t(r)), (t(r), t()), (t(), 2), (t(), 2.5), (t(), 1.5 - 2j), (t(r), 1j),
                     (t(), f.tensor(2 + 1j)), (t(), t(dt.int64)), (t(), t(dt.bool)), (t(), t(dt.float64)),
                     (t(), t(dt.bfloat16))):
            yield fn, (a, b), {}
    for fn in (pw.add, pw.sub):
        yield fn, (t(), t()), {"alpha": 2 - 1j}
        yield fn, (t(), 1j), {"alpha": 2}
    for fn in (pw.neg, pw.abs, pw.exp, pw.silu, conj_physical, angle, pw.isnan, pw.isinf, pw.isfinite,
               *(getattr(pw, name) for name in _MATH_UNARY)):
        yield fn, (t(),), {}
    for e in (0, 1, 0.5, -0.5, -1, 2, 3, 2 + 0j, f.tensor(2 + 0j)):  # pow's fast paths (Note [CUDA pow fast paths])
        yield pw.pow, (t(), e), {}
    for a, b in ((t(), t()), (t(), t(r)), (t(r), t())):  # c10's complex log-add-exp (complex.cuh)
        yield bm.logaddexp, (a, b), {}
    for e in (2, 2.5, 1 + 1j, t(), t(r), t(dt.int64)):  # Note [Complex math] (complex.cuh)
        yield pw.pow, (t(), e), {}
    for b in (2, 1j, t(r)):
        yield (pw.pow_scalar_base, (b, t()), {}) if not hasattr(b, "_sizes") else (pw.pow, (b, t()), {})
    for v in (1, 0.5, 2 - 1j):  # addcmul, addcdiv: value 1 or a scalar; lerp: a scalar or tensor weight
        yield pw.addcmul, (t(), t(), t()), {"value": v}
        yield pw.addcdiv, (t(), t(), t()), {"value": v}
        yield pw.lerp, (t(), t(), v), {}
    yield pw.lerp, (t(), t(), t()), {}
    mask = t(dt.bool)
    for a, b in ((t(), t()), (t(), 2j), (t(), t(r)), (2, t()), (t(r), 1 - 1j)):
        yield pw.where, (mask, a, b), {}
    for v in (1 - 2j, 3, f.tensor(0.5j, dtype=c)):
        yield pw.masked_fill, (t(), mask, v), {}
    yield fill_complex, (t(), 1 - 2j), {}
    for fn in (polar, complex):
        yield fn, (t(r), t(r)), {}
        yield fn, (t(r), f.tensor(0.5, dtype=r)), {}


def _real_sample_calls():
    """conj_physical and angle of real inputs (angle makes new real instantiations)."""
    from .... import factories as f

    for d in dt.all_dtypes:
        yield angle, (f.ones(3, dtype=d),), {}


def instantiations(dtypes=dt.complex_dtypes, real: bool = True) -> list:
    """The ``(expr, out dtype, slots)`` the complex kernels instantiate for ``dtypes`` (and, with ``real``,
    real ``angle``); as ``pointwise_ops.instantiations``, a recording ``run`` on small CPU tensors."""
    from .. import elementwise
    from . import binary_math_ops as bm
    from . import pointwise_ops as pw

    found = {}

    def record(expr, out, args, computes, dense=True):
        slots = tuple((1, a.dtype, c) if elementwise.is_tensor_operand(a) else (2, None, c)
                      for a, c in zip(args, computes))
        found.setdefault((expr, out.dtype, slots), None)
        return out

    def binary(expr, meta_fn, a, b, computes):
        out = meta_fn(a, b)
        return record(expr, out, (a, b), computes[out.dtype])

    mod = globals()
    saved = pw.run, pw.binary, mod["run"], bm.run
    pw.run, pw.binary, mod["run"], bm.run = record, binary, record, record
    calls = [call for c in dtypes for call in _sample_calls(c)] + (list(_real_sample_calls()) if real else [])
    try:
        for fn, args, kwargs in calls:
            try:
                fn(*args, **kwargs)
            except (RuntimeError, NotImplementedError):
                pass  # the Meta function rejects this combination (complex - bool)
    finally:
        pw.run, pw.binary, mod["run"], bm.run = saved
    return list(found)
