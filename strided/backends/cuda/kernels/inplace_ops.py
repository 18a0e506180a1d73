"""Direct in-place kernels on CUDA: ``x.clamp_(0, 1)`` as one launch that writes ``x``.

Note [Direct in-place kernels]
An in-place overload the YAML autogenerates (``clamp_``, ``addcmul_``, ``sqrt_``...) is the functional op
followed by ``copy_`` (``ops/registry.py``): two launches, a temporary, a second dispatch. On CUDA the
common case runs one kernel that writes ``self``: ``self`` has no internal overlap (not expanded), and
every tensor operand is on ``self``'s device (or a 0-dim CPU tensor), broadcasts to ``self`` and either
does not share its storage or is ``self``'s exact view (an element read before it is written, by the
same thread). ``add_`` / ``sub_`` / ``mul_`` / ``div_`` have their own kernels here; every other
pointwise op whose functional CUDA kernel is one Meta call and one ``run`` (the kernels of
``pointwise_ops.py``) runs that kernel with its output redirected to ``self`` (Note [In-place redirect]
in ``elementwise.py``); when the result would not fit ``self`` (another dtype or shape) nothing has
been written, and the autogen kernel runs, with torch's errors and casts. Complex operands keep the
autogen path (their kernels may call other ops first).
"""

from __future__ import annotations

import numpy as np

from .... import dtypes as dt
from ....dispatch.keys import DispatchKey
from ....dispatch.library import get_op, impl
from ....tensor import Tensor
from ...meta import pointwise as meta
from ...meta.common import call_redirected, result_dtype
from ..elementwise import opmath, run
from . import pointwise_ops

__all__ = ["register_inplace"]


def _fits(self, other) -> bool:
    """Whether operand ``other`` can be read while ``self`` is written in the same kernel."""
    if not isinstance(other, Tensor):
        return True
    if other.device.type == "cuda":
        if other.device != self.device:
            return False
    elif other._sizes:
        return False
    sizes = self._sizes
    osz = other._sizes
    if osz != sizes:
        off = len(sizes) - len(osz)
        if off < 0 or any(o != 1 and o != s for o, s in zip(osz, sizes[off:])):
            return False
    if other._storage is self._storage and other.device.type == "cuda":
        return other._offset == self._offset and osz == sizes and other._strides == self._strides
    return True


def _writable(self) -> bool:
    """``self`` is a real-valued CUDA tensor without repeated elements."""
    if self.device.type != "cuda" or self.dtype.is_complex:
        return False
    strides = self._strides
    return not (0 in strides and any(st == 0 and n > 1 for n, st in zip(self._sizes, strides)))


def _direct(self, other) -> bool:
    return _writable(self) and _fits(self, other)


def _arithmetic(name: str, overload: str, exprs, check=None):
    """``add_`` / ``sub_`` / ``mul_`` / ``div_``: their own one-launch kernels."""
    op = get_op(f"aten::{name}_.{overload}")
    fallback = []

    def direct(self, other, *args, **kwargs):
        d = self.dtype
        if not _direct(self, other) or result_dtype(self, other) is not d or (check and not check(d, other)):
            if not fallback:
                fallback.append(op.kernel(DispatchKey.CompositeExplicitAutograd))
            out = fallback[0](self, other, *args, **kwargs)
            self._storage._version -= 1  # its copy_ counted the write, and so does this kernel's wrapper
            return out
        alpha = kwargs.get("alpha", args[0] if args else 1)
        c4 = (opmath(d),) * 4
        if alpha == 1:
            return run(exprs[0], self, (self, other), c4, dense=False)
        meta._check_alpha(alpha, d)
        return run(exprs[1], self, (self, other, alpha), c4, dense=False)

    direct.__name__ = direct.__qualname__ = f"{name}_"
    impl(f"aten::{name}_.{overload}", "CUDA")(direct)


def _not_bool(d, other) -> bool:
    return d is not dt.bool and not (isinstance(other, Tensor) and other.dtype is dt.bool) and \
        not isinstance(other, (bool, np.bool_))


def _floating_result(d, other) -> bool:
    return d.category >= dt.FLOATING  # floating or complex


def _operands_fit(self, args, kwargs) -> bool:
    """Every tensor operand can be read while ``self`` is written (``_fits``), and none among ``args`` is complex
    (a loop, not ``all`` over generators: this runs on every redirected in-place call)."""
    for a in args:
        if isinstance(a, Tensor) and (a.dtype.is_complex or not _fits(self, a)):
            return False
    for v in kwargs.values():
        if isinstance(v, Tensor) and not _fits(self, v):
            return False
    return True


def _redirected(autogen, functional_kernel):
    """The direct kernel of an autogen in-place overload: ``functional_kernel`` (its functional op's CUDA kernel)
    run with the output redirected to ``self`` (Note [Direct in-place kernels])."""
    finish = autogen.finish

    def direct(self, *args, **kwargs):
        if not (_writable(self) and _operands_fit(self, args, kwargs)):
            out = autogen(self, *args, **kwargs)
        else:
            result = call_redirected(self, functional_kernel, args, kwargs)
            if result is self:
                return self
            out = finish(self, result)  # not written: another dtype or shape; torch's checks, then copy_
        self._storage._version -= 1  # copy_ counted the write, and so does this kernel's wrapper
        return out

    direct.__name__ = direct.__qualname__ = autogen.__name__
    return direct


def redirected_ops() -> list:
    """(in-place overload, its autogen kernel, the functional's CUDA kernel) for every autogen in-place overload
    whose functional op's CUDA kernel comes from ``pointwise_ops.py`` (one Meta call, one ``run``)."""
    from ....ops.registry import _NAMESPACES

    found = []
    for packet in _NAMESPACES["aten"]:
        if not packet.name.endswith("_") or packet.name in ("add_", "sub_", "mul_", "div_"):
            continue
        for op in packet.overloads.values():
            if op.has_kernel(DispatchKey.CUDA):
                continue
            autogen = op.kernel(DispatchKey.CompositeExplicitAutograd)
            functional = getattr(autogen, "functional", None)
            fn = None if functional is None else functional.kernel(DispatchKey.CUDA)
            if fn is not None and getattr(fn, "__module__", None) == pointwise_ops.__name__:
                found.append((op, autogen, fn))
    return found


def register_inplace() -> None:
    """Register the direct in-place kernels (called once by ``kernels/ops.py`` when a GPU is usable)."""
    for overload in ("Tensor", "Scalar"):
        _arithmetic("add", overload, ("x0 + x1", "x0 + x2 * x1"))
        _arithmetic("sub", overload, ("x0 - x1", "x0 - x2 * x1"), _not_bool)
        _arithmetic("mul", overload, ("x0 * x1", None))
        _arithmetic("div", overload, ("x0 / x1", None), _floating_result)
    for op, autogen, fn in redirected_ops():
        op.register(DispatchKey.CUDA, _redirected(autogen, fn))
