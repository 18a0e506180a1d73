"""``profile(with_flops=True)``: the FLOP estimate of an op call from its arguments, by torch's formulas.

torch's profiler (torch/csrc/profiler/util.cpp, ``computeFlops``) estimates seven ops and counts 0 for the
rest: ``aten::mm`` and ``aten::addmm`` (2 x m x k x n, whatever alpha and beta are), ``aten::bmm`` and
``aten::baddbmm`` (2 x b x m x k x n), ``aten::mul`` and ``aten::add`` (the first operand's element count), and
``aten::conv2d``. strided uses the same formulas on the same ops, so its "Total FLOPs" column reads as torch's
does; its conv2d is a composite of ``mm`` / ``bmm`` calls (Note [Convolution as a GEMM]) rather than an
operator, so a convolution's FLOPs are counted on those GEMMs' rows.
"""

from __future__ import annotations

from math import prod

from ..tensor import Tensor

__all__ = ["flops_of", "FLOP_OPS"]


def _sizes(x):
    return x._sizes if isinstance(x, Tensor) else None


def _gemm(a, b) -> int:
    sa, sb = _sizes(a), _sizes(b)
    if sa is None or sb is None or not sa or sa[-1] == 0:
        return 0
    return 2 * prod(sa) // sa[-1] * prod(sb)


def _batched_gemm(a, b) -> int:
    sa, sb = _sizes(a), _sizes(b)
    if sa is None or sb is None or not sa or sa[0] == 0 or sa[-1] == 0:
        return 0
    return 2 * prod(sa) // sa[-1] // sa[0] * prod(sb)


def _first_numel(args, kwargs) -> int:
    s = _sizes(args[0] if args else kwargs.get("input", kwargs.get("self")))
    return 0 if s is None else prod(s)


FLOP_OPS = {
    "aten::mm": lambda a, k: _gemm(*a[:2]) if len(a) >= 2 else 0,
    "aten::addmm": lambda a, k: _gemm(*a[1:3]) if len(a) >= 3 else 0,
    "aten::bmm": lambda a, k: _batched_gemm(*a[:2]) if len(a) >= 2 else 0,
    "aten::baddbmm": lambda a, k: _batched_gemm(*a[1:3]) if len(a) >= 3 else 0,
    "aten::mul": _first_numel,
    "aten::add": _first_numel,
}


def flops_of(name: str, args, kwargs) -> int:
    """torch's FLOP estimate of one call of ``name`` (0 for ops it does not estimate)."""
    fn = FLOP_OPS.get(name)
    return 0 if fn is None else int(fn(args, kwargs))
