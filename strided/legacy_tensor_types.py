"""The legacy tensor types and constructors: ``strided.FloatTensor(2, 3)``, ``strided.Tensor([1, 2])``,
``isinstance(x, strided.cuda.LongTensor)``, ``x.type(strided.DoubleTensor)`` and ``set_default_tensor_type``.

Note [Legacy constructors]
Code written for older torch builds tensors with the type objects (``nn.Parameter(torch.Tensor(out, in))``, then an
init function, is the classic custom layer). torch's legacy constructor takes exactly one of: nothing (an empty
tensor), a storage (a tensor over all of it), a tensor (an alias of it, which must already have the type's dtype and
device), sizes (ints or a ``Size``: uninitialized memory), or a sequence of data; ``device=`` only names the type's
own device type. ``strided.Tensor`` constructs with the default dtype on the CPU (or on CUDA after
``set_default_tensor_type`` with a CUDA type), as torch's; the ``set_default_device`` context does not apply, as in
torch. The ten types are instances of :class:`tensortype`, whose ``isinstance`` test is "a tensor of this dtype on
this device type" -- a type check, not a class: constructing one returns a plain Tensor. Errors are torch's words.
"""

from __future__ import annotations

import numbers

import numpy as np

from . import dtypes as dt
from .backends.meta.pointwise import scalar_type_name, type_meta_name
from .device import device as _device
from .tensor import Size, Tensor

__all__ = ["tensortype", "CPU_TYPES", "CUDA_TYPES", "legacy_new", "set_default_tensor_type"]

_NAMES = {
    "DoubleTensor": dt.float64, "FloatTensor": dt.float32, "HalfTensor": dt.float16, "BFloat16Tensor": dt.bfloat16,
    "LongTensor": dt.int64, "IntTensor": dt.int32, "ShortTensor": dt.int16, "CharTensor": dt.int8,
    "ByteTensor": dt.uint8, "BoolTensor": dt.bool,
}
_SIGNATURES = (" * (*, strided.device device = None)\n * (strided.Storage storage)\n * (Tensor other)\n"
               " * (tuple of ints size, *, strided.device device = None)\n"
               " * (object data, *, strided.device device = None)\n")

# the type strided.Tensor(...) constructs (Note [Legacy constructors]); set_default_tensor_type changes its device
_default = {"device_type": "cpu"}


class tensortype(type):
    """The class of ``strided.FloatTensor`` and the other legacy types (torch's ``torch.tensortype``)."""

    dtype: dt.dtype
    is_cuda: bool

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.device.type == cls._device_type

    def __call__(cls, *args, **kwargs) -> Tensor:
        return legacy_new(cls.dtype, cls._device_type, args, kwargs)

    def __repr__(cls) -> str:
        return f"<class '{cls.__module__}.{cls.__name__}'>"


def _make_types(device_type: str, module: str) -> dict:
    out = {}
    for name, d in _NAMES.items():
        out[name] = tensortype(name, (), {"dtype": d, "is_cuda": device_type == "cuda", "is_sparse": False,
                                          "layout": "strided", "_device_type": device_type, "__module__": module,
                                          "__slots__": ()})
    return out


CPU_TYPES = _make_types("cpu", "strided")
CUDA_TYPES = _make_types("cuda", "strided.cuda")


def _options(d: dt.dtype, device_type: str) -> str:
    return (f"TensorOptions(dtype={type_meta_name(d)}, device={device_type}, layout=Strided, "
            "requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))")


def _type_name(v) -> str:
    cls = type(v)
    return cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__.split('.')[0]}.{cls.__name__}"


def _described(v) -> str:
    if isinstance(v, (list, tuple)):
        inner = {_type_name(x) for x in v}
        return f"{type(v).__name__} of [{', '.join(sorted(inner))}]" if inner else type(v).__name__
    return _type_name(v)


def _invalid(args, kwargs) -> TypeError:
    got = ", ".join([_described(a) for a in args] + [f"{k}={_type_name(v)}" for k, v in kwargs.items()])
    return TypeError(f"new() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                     f"{_SIGNATURES}")


def _is_size(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def legacy_new(d: dt.dtype | None, device_type: str | None, args: tuple, kwargs: dict) -> Tensor:
    """torch's legacy constructor for dtype ``d`` on ``device_type`` (None: ``strided.Tensor``'s defaults)."""
    from . import factories
    from .storage import UntypedStorage
    from .typed_storage import TypedStorage

    typed = d is not None  # strided.Tensor(other) aliases a tensor of any type, as torch.Tensor(other)
    if d is None:
        d = dt.get_default_dtype()
    if device_type is None:
        device_type = _default["device_type"]
    kwargs = dict(kwargs)
    device = kwargs.pop("device", None)
    if kwargs:
        raise _invalid(args, kwargs)
    if device is not None:
        dev = _device(device)
        if dev.type != device_type:
            raise RuntimeError(f"legacy constructor expects device type: {device_type} but device type: "
                               f"{dev.type} was passed")
    else:
        dev = _device(device_type)
    if not args:
        return factories.empty(0, dtype=d, device=dev)
    first = args[0]
    if len(args) == 1 and isinstance(first, Tensor):
        if device is not None:
            raise RuntimeError("Legacy tensor constructor of the form strided.Tensor(tensor, device=device) is not "
                               "supported.  Use strided.tensor(...) or strided.as_tensor(...) instead.")
        if typed and (first.dtype is not d or first.device.type != device_type):
            raise TypeError(f"expected {_options(d, device_type)} (got {_options(first.dtype, first.device.type)})")
        return first.view(first._sizes)  # an alias: torch's alias() (its node is a ViewBackward0 here)
    if len(args) == 1 and isinstance(first, (UntypedStorage, TypedStorage)):
        if isinstance(first, TypedStorage):
            if first.dtype is not d:
                raise RuntimeError(f"Expected a Storage of type {scalar_type_name(d)} or an UntypedStorage, "
                                   f"but got type {scalar_type_name(first.dtype)} for argument 1 "
                                   "'storage'")
            first = first.untyped()
        if first.device.type != device_type:
            raise RuntimeError(f"legacy constructor expects device type: {device_type} but device type: "
                               f"{first.device.type} was passed")
        n = first.nbytes() // d.itemsize
        return factories.empty(0, dtype=d, device=first.device).set_(first, 0, (n,), (1,))
    if all(_is_size(a) for a in args) or (len(args) == 1 and isinstance(first, Size)):
        sizes = tuple(int(s) for s in (first if isinstance(first, Size) else args))
        return factories.empty(sizes, dtype=d, device=dev)
    if len(args) == 1:
        if isinstance(first, str):
            raise TypeError("new(): invalid data type 'str'")
        if not isinstance(first, (list, tuple, np.ndarray)):
            raise TypeError(f"new(): data must be a sequence (got {type(first).__name__})")
        return factories.tensor(first, dtype=d, device=dev)
    if _is_size(first):
        bad = next(a for a in args if not _is_size(a))
        pos = args.index(bad) + 1
        raise TypeError(f"new(): argument 'size' failed to unpack the object at pos {pos} with error \"type must be "
                        f"tuple of ints,but got {type(bad).__name__}\"")
    raise _invalid(args, {})


def set_default_tensor_type(t) -> None:
    """Deprecated as in torch: the default floating dtype, and the device ``strided.Tensor(...)`` and the factories
    use, from a legacy type (``strided.cuda.FloatTensor``) or its name (``"torch.DoubleTensor"``)."""
    from .device import set_default_device
    from .warn_once import warn_once

    warn_once("set_default_tensor_type", "strided.set_default_tensor_type() is deprecated as of PyTorch 2.1, please "
              "use strided.set_default_dtype() and strided.set_default_device() as alternatives.", stacklevel=2)
    if isinstance(t, str):
        prefix, _, name = t.rpartition(".")
        table = CUDA_TYPES if prefix.endswith("cuda") else CPU_TYPES
        if prefix not in ("torch", "strided", "torch.cuda", "strided.cuda") or name not in table:
            raise AttributeError(f"module '{prefix or t}' has no attribute '{name}'")
        t = table[name]
    if not isinstance(t, tensortype):
        raise TypeError("invalid type object: only floating-point types are supported as the default type")
    if not t.dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    dt.set_default_dtype(t.dtype)
    _default["device_type"] = t._device_type
    set_default_device("cuda" if t.is_cuda else None)
