"""``Parameter``: a Tensor that a Module registers as a learnable parameter (torch.nn.Parameter); and
``UninitializedParameter`` / ``UninitializedBuffer``, the placeholders of the lazy layers until their first
forward gives them a shape (``materialize``)."""

from __future__ import annotations

from .. import factories
from ..tensor import Tensor

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "is_parameter", "is_lazy"]

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
        if requires_grad and not (data.dtype.is_floating_point or data.dtype.is_complex):  # torch's Parameter words
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
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


_NO_SHAPE = ("Can't access the shape of an uninitialized parameter or buffer. This error usually happens in "
             "`load_state_dict` when trying to load an uninitialized parameter into an initialized one. Call "
             "`forward` to initialize the parameters before accessing their attributes.")


class _Uninitialized:
    """What the two placeholders share: no shape until :meth:`materialize`, which gives them storage of the
    asked shape (uninitialized memory, as ``empty``) and turns them into their ``cls_to_become`` in place, so
    the module, and an optimizer built before, keep the same object."""

    __slots__ = ()
    cls_to_become: type = Tensor

    @classmethod
    def _placeholder(cls, requires_grad: bool, device, dtype):
        t = factories.empty(0, device=device, dtype=dtype)
        t.__class__ = cls
        t.requires_grad_(requires_grad)
        return t

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Give this placeholder ``shape`` (and optionally another device or dtype)."""
        device = self.device if device is None else device
        dtype = self.dtype if dtype is None else dtype
        _set_data(self, factories.empty(tuple(shape), device=device, dtype=dtype))
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(_NO_SHAPE)

    def size(self, dim: int | None = None):
        raise RuntimeError(_NO_SHAPE)

    def share_memory_(self):
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call `forward` to initialize "
                           "the parameters before calling `module.share_memory()`.")

    def __repr__(self) -> str:
        return f"<{self.__class__.__name__}>"


class UninitializedParameter(_Uninitialized, Parameter):
    """A :class:`Parameter` of unknown shape, made real by ``materialize(shape)`` (lazy layers)."""

    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device=None, dtype=None):
        return cls._placeholder(requires_grad, device, dtype)

    def __init__(self, requires_grad: bool = True, device=None, dtype=None):
        pass

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.requires_grad, self.device, self.dtype)
        memo[id(self)] = result
        return result


class UninitializedBuffer(_Uninitialized, Tensor):
    """A buffer of unknown shape, made real by ``materialize(shape)`` (lazy layers' running statistics)."""

    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad: bool = False, device=None, dtype=None):
        return cls._placeholder(requires_grad, device, dtype)

    def __init__(self, requires_grad: bool = False, device=None, dtype=None):
        pass


def is_lazy(x) -> bool:
    """True for an :class:`UninitializedParameter` or :class:`UninitializedBuffer`."""
    return isinstance(x, _Uninitialized)


class Buffer(Tensor):
    """A Tensor that ``Module.__setattr__`` registers as a buffer (torch.nn.Buffer): ``self.x = Buffer(t)``
    is ``self.register_buffer("x", t)``; ``persistent=False`` keeps it out of the state dict. Once registered
    it is a plain Tensor again, as in torch."""

    __slots__ = ()
    persistent = True

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True):
        if data is None:
            data = factories.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Buffer: data must be a Tensor, got {type(data).__name__}")
        t = data.detach().requires_grad_(data.requires_grad)
        t.__class__ = Buffer if persistent else _NonPersistentBuffer
        return t

    def __init__(self, data: Tensor | None = None, *, persistent: bool = True):
        pass


class _NonPersistentBuffer(Buffer):
    """A :class:`Buffer` made with ``persistent=False`` (the flag lives in the class: Tensor has no ``__dict__``)."""

    __slots__ = ()
    persistent = False


def is_parameter(x) -> bool:
    return isinstance(x, Parameter)


def _set_data(param: Tensor, new: Tensor) -> None:
    """Make ``param`` view ``new``'s data in place, keeping its identity and autograd leaf state
    (torch's ``param.data = new``: optimizers holding ``param`` see the new device/dtype)."""
    for name in _DATA_SLOTS:
        setattr(param, name, getattr(new, name))
