"""``Parameter``: a Tensor that a Module registers as a learnable parameter (torch.nn.Parameter)."""

from __future__ import annotations

from .. import factories
from ..tensor import Tensor

__all__ = ["Parameter", "is_parameter"]

# Tensor slots that describe the data (not autograd state): what ``_set_data`` replaces.
_DATA_SLOTS = ("_storage", "_offset", "_sizes", "_strides", "dtype", "device", "_key")


class Parameter(Tensor):
    """A Tensor that ``Module.__setattr__`` registers as a parameter; ``requires_grad=True`` by default.

    ``Parameter(data)`` shares ``data``'s storage (no copy) and is a leaf of the autograd graph.
    Results of operations on a Parameter are plain Tensors.
    """

    __slots__ = ()

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True):
        if data is None:
            data = factories.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter: data must be a Tensor, got {type(data).__name__}")
        t = data.detach()  # an alias of data's storage with no autograd history
        t.__class__ = cls
        t.requires_grad_(requires_grad)
        return t

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True):
        pass  # everything happens in __new__ (Tensor.__init__ refuses direct construction)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = Parameter(self.detach().clone(), self.requires_grad)
        memo[id(self)] = result
        return result


def is_parameter(x) -> bool:
    return isinstance(x, Parameter)


def _set_data(param: Tensor, new: Tensor) -> None:
    """Make ``param`` view ``new``'s data in place, keeping its identity and autograd leaf state
    (torch's ``param.data = new``: optimizers holding ``param`` see the new device/dtype)."""
    for name in _DATA_SLOTS:
        setattr(param, name, getattr(new, name))
