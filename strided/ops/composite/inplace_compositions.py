"""In-place forms of CompositeImplicitAutograd compositions (``addmv_``, ``index_fill_``, ``sinc_``...).

Note [In-place compositions]
``autogen: name_`` gives an in-place overload a CompositeExplicitAutograd kernel, which is differentiable
only through the functional op's formulas; these functional ops are compositions without formulas, so
their in-place forms are compositions too: the functional result, checked as autogen's kernel checks it
(its dtype castable to ``self``'s, its shape ``self``'s), copied into ``self`` with ``copy_`` (which
records the history of ``self`` for autograd).
"""

from __future__ import annotations

from ... import dtypes as dt
from ...backends.meta.pointwise import scalar_type_name
from ...dispatch.dispatcher import grad_mode
from ...dispatch.library import kernel
from ...tensor import Tensor
from .. import bound as ops

__all__ = []


def _assign(self, result):
    if not dt.can_cast(result.dtype, self.dtype):
        raise RuntimeError(f"result type {scalar_type_name(result.dtype)} can't be cast to the desired output type "
                           f"{scalar_type_name(self.dtype)}")
    if result._sizes != self._sizes:
        raise RuntimeError(f"output with shape {list(self._sizes)} doesn't match the broadcast shape "
                           f"{list(result._sizes)}")
    return ops.copy_(self, result)


# Note [In-place composition sources]
# An in-place composition computes the functional op from ``self`` and copies the result back into ``self``.
# When autograd records, the functional op's node may save its input ``self`` for backward, and the copy_
# then overwrites it: backward would fail with the version error ("modified by an inplace operation"),
# where torch, which saves the original self of an in-place op, differentiates. So while autograd records,
# the functional op reads a (recorded) copy of ``self`` instead.
def grad_safe_source(self, *others):
    """``self``, or a copy of it while autograd records the call (Note [In-place composition sources])."""
    if grad_mode.enabled and (self._requires_grad or any(isinstance(o, Tensor) and o._requires_grad
                                                          for o in others)):
        return ops.clone(self)
    return self


def _inplace(name: str):
    def inplace(self, *args, **kwargs):
        return _assign(self, getattr(ops, name)(grad_safe_source(self, *args, *kwargs.values()), *args, **kwargs))

    inplace.__name__ = inplace.__qualname__ = name + "_"
    inplace.__doc__ = f"In-place ``{name}`` (Note [In-place compositions])."
    return kernel("CompositeImplicitAutograd", name=name + "_")(inplace)


for _name in ("addmv", "addr", "addbmm", "renorm", "index_fill", "index_copy", "index_reduce", "masked_scatter", "put",
              "ldexp", "heaviside", "logit", "sinc", "deg2rad", "rad2deg", "gcd", "lcm"):
    globals()[_name + "_"] = _inplace(_name)
