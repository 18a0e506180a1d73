"""``Variable``: torch's pre-0.4 wrapper, kept for old code as torch keeps it (torch.autograd.variable).

Every tensor is a Variable (``isinstance(t, Variable)``), and ``Variable(t, requires_grad=...)`` is a new leaf over
``t``'s data (``t.detach()`` with ``requires_grad`` set); ``volatile`` is gone and only warns, in torch's words.
"""

from __future__ import annotations

import warnings

from ..tensor import Tensor

__all__ = ["Variable"]


class _VariableMeta(type):
    def __instancecheck__(cls, other) -> bool:
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(data, requires_grad=False)``: a leaf tensor over ``data``'s memory (as torch's)."""

    def __new__(cls, data=None, requires_grad: bool = False, volatile: bool = False):
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                          UserWarning, stacklevel=2)
        if data is None:
            from .. import empty

            data = empty(0)
        elif not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return data.detach().requires_grad_(requires_grad)
