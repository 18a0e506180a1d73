"""Direct in-place kernels on the CPU: ``x.clamp_(0, 1)`` without the second and third dispatch.

Note [CPU direct in-place kernels]
An autogen in-place overload (``ops/registry.py``) calls its functional op through the dispatcher and then
``self.copy_(result)`` through it again: on the CPU the two dispatches, ``copy_``'s Meta function and its
version-counter wrapper cost more than the arithmetic on small tensors (an AdamW step of a small model spent
a quarter of its time in them). Here each such overload gets a CPU kernel that calls the functional op's CPU
kernel directly and copies its result into ``self`` with NumPy when it fits (same dtype and sizes: NumPy's
copy is safe whatever ``self`` aliases); anything else goes through the autogen kernel's own checks and
``copy_``. Complex operands keep the autogen path, as on CUDA (Note [Direct in-place kernels]). This kernel
sits under the version-counter wrapper like any backend kernel, so one call counts one write.

Note [CPU output redirect]
The functional kernels named in ``_WRITE_ONCE`` write their output once, at the end: one NumPy ufunc into it (NumPy
reads operands that are the output itself, or overlap it, before writing) or one store of a value computed
entirely before. For those the direct kernel sets the Meta functions' output redirect (Note [Output redirect]), so
the functional kernel's output *is* ``self``: no output allocated, no copy back (an optimizer's ``addcmul_`` /
``lerp_`` / ``mul_`` on a 128 x 128 parameter measured about a fifth faster). When the result does not fit ``self``
(another dtype or shape) the redirect lapses and the copy path above runs. Kernels that write in steps, or read an
operand after writing, must not be in the set: ``self`` is among their operands.
"""

from __future__ import annotations

import numpy as np

from ...dispatch.keys import DispatchKey
from ...ops.memory_overlap import check_no_partial_overlap, has_internal_overlap
from ...tensor import Tensor
from ..meta.common import call_redirected
from . import pointwise, pointwise_unary
from .common import as_numpy

__all__ = ["register_inplace"]


def _plain(self, args) -> bool:
    """Real dtypes, CPU ``self`` without repeated elements: the cases the direct kernel takes."""
    if self.dtype.is_complex or self.device.type != "cpu" or has_internal_overlap(self):
        return False
    return not any(isinstance(a, Tensor) and a.dtype.is_complex for a in args)


def _shares_storage(self, args, kwargs) -> bool:
    """Whether a tensor operand is over ``self``'s storage: only then can it overlap ``self`` partially (the
    common call -- operands of their own -- skips the overlap check's work)."""
    storage = self._storage
    for a in args:
        if isinstance(a, Tensor) and a._storage is storage:
            return True
    return any(isinstance(v, Tensor) and v._storage is storage for v in kwargs.values()) if kwargs else False


# Note [CPU output redirect]: functional kernels that write their output once (audited: pointwise.py's arithmetic,
# lerp, addcmul / addcdiv, clamp; pointwise_unary.py's float functions, neg / abs / relu / sign and the roundings, a
# ufunc or one store each)
_WRITE_ONCE = {pointwise: ("add", "sub", "mul", "div", "lerp", "addcmul", "addcdiv", "clamp"),
               pointwise_unary: (*pointwise_unary._FLOAT_FNS, "neg", "abs", "relu", "sign", "floor", "ceil", "round",
                                 "trunc")}


def _writes_once(fn) -> bool:
    for module, names in _WRITE_ONCE.items():
        if getattr(module, fn.__name__, None) is fn and fn.__name__ in names:
            return True
    return False


def _direct(autogen, functional_kernel):
    finish, is_pointwise = autogen.finish, autogen.is_pointwise
    redirect = _writes_once(functional_kernel)

    def direct(self, *args, **kwargs):
        if not _plain(self, args):
            out = autogen(self, *args, **kwargs)
        else:
            if is_pointwise() and _shares_storage(self, args, kwargs):
                check_no_partial_overlap(self, args, kwargs)  # Note [Partial overlap]
            if redirect:  # Note [CPU output redirect]
                result = call_redirected(self, functional_kernel, args, kwargs)
                if result is self:
                    return self
            else:
                result = functional_kernel(self, *args, **kwargs)
            if result.dtype is self.dtype and result._sizes == self._sizes and result.device == self.device:
                dst = as_numpy(self)
                if dst.size:
                    np.copyto(dst, as_numpy(result))
                return self
            out = finish(self, result)  # another dtype or shape: torch's checks and casts, then copy_
        self._storage._version -= 1  # copy_ counted the write, and so does this kernel's wrapper
        return out

    direct.__name__ = direct.__qualname__ = autogen.__name__
    return direct


def register_inplace() -> None:
    """Give every autogen in-place overload whose functional op has a CPU kernel the direct kernel (called once,
    when the CPU backend loads)."""
    from ...dispatch.dispatcher import KERNEL_TABLES
    from ...ops.registry import _NAMESPACES

    # read the kernels without loading any table: this runs while strided.backends.cpu is being imported,
    # possibly inside the import of the composite kernels
    cpu_table = KERNEL_TABLES[DispatchKey.CPU]
    for packet in _NAMESPACES["aten"]:
        if not packet.name.endswith("_"):
            continue
        for op in packet.overloads.values():
            if op.has_kernel(DispatchKey.CPU):
                continue
            autogen = op._kernels.get(DispatchKey.CompositeExplicitAutograd)  # autogen kernels are registered
            functional = getattr(autogen, "functional", None)
            name = None if functional is None else functional._dispatch_names.get(DispatchKey.CPU)
            fn = None if name is None else cpu_table.get(name)
            if fn is not None:
                op.register(DispatchKey.CPU, _direct(autogen, fn))
