"""``Tensor.to``: torch's three call forms, resolved to one ``_to_copy`` (or to ``self``).

::

    x.to(dtype, non_blocking=False, copy=False, memory_format=None)
    x.to(device=None, dtype=None, non_blocking=False, copy=False, memory_format=None)
    x.to(other, non_blocking=False, copy=False)        # other's dtype and device

Note [to() aliasing]
As torch's ``to_will_alias``: when the dtype and device already match, ``copy`` is false and the
memory format is ``preserve_format`` (or the one the tensor already suggests), ``to`` returns
``self`` itself, not a copy and not a view.
"""

from __future__ import annotations

from . import dtypes as dt
from .device import device as _device
from .ops import bound as ops
from .tensor import Tensor

__all__ = ["tensor_to", "suggest_memory_format"]

_SIGNATURES = (
    " * (device device = None, dtype dtype = None, bool non_blocking = False, bool copy = False, *, "
    "memory_format memory_format = None)\n"
    " * (dtype dtype, bool non_blocking = False, bool copy = False, *, memory_format memory_format = None)\n"
    " * (Tensor tensor, bool non_blocking = False, bool copy = False, *, memory_format memory_format = None)"
)
_KWARGS = frozenset({"device", "dtype", "non_blocking", "copy", "memory_format"})


def _invalid(args, kwargs) -> TypeError:
    got = [type(a).__name__ for a in args] + [f"{k}={type(v).__name__}" for k, v in kwargs.items()]
    return TypeError(
        f"to() received an invalid combination of arguments - got ({', '.join(got)}), but expected one "
        f"of:\n{_SIGNATURES}"
    )


def _is_device(x) -> bool:
    return isinstance(x, (str, _device)) or (isinstance(x, int) and not isinstance(x, bool))


def _parse(args: tuple, kwargs: dict):
    """(device, dtype, non_blocking, copy, memory_format) from the call, or TypeError."""
    if set(kwargs) - _KWARGS:
        raise _invalid(args, kwargs)
    device = dtype = None
    rest = list(args)
    if rest and isinstance(rest[0], Tensor):
        other = rest.pop(0)
        if "device" in kwargs or "dtype" in kwargs:
            raise _invalid(args, kwargs)
        device, dtype = other.device, other.dtype
    elif rest and isinstance(rest[0], dt.dtype):
        if "dtype" in kwargs or "device" in kwargs:
            raise _invalid(args, kwargs)
        dtype = rest.pop(0)
    else:
        if rest and (_is_device(rest[0]) or rest[0] is None):
            device = rest.pop(0)
            if rest and (isinstance(rest[0], dt.dtype) or rest[0] is None):
                dtype = rest.pop(0)
        device = kwargs.get("device", device)
        dtype = kwargs.get("dtype", dtype)
    if len(rest) > 2 or not all(isinstance(v, bool) for v in rest):
        raise _invalid(args, kwargs)
    non_blocking = rest[0] if rest else kwargs.get("non_blocking", False)
    copy = rest[1] if len(rest) > 1 else kwargs.get("copy", False)
    if (rest and "non_blocking" in kwargs) or (len(rest) > 1 and "copy" in kwargs):
        raise _invalid(args, kwargs)
    if dtype is not None and not isinstance(dtype, dt.dtype):
        raise _invalid(args, kwargs)
    return device, dtype, non_blocking, copy, kwargs.get("memory_format")


def suggest_memory_format(t: Tensor) -> str:
    """``channels_last`` for a 4-d tensor laid out NHWC, ``channels_last_3d`` for a 5-d one laid out NDHWC (and
    not plainly contiguous), else contiguous."""
    n = len(t._sizes)
    if n == 4 or n == 5:
        mf = "channels_last" if n == 4 else "channels_last_3d"
        if not t.is_contiguous() and t.is_contiguous(memory_format=mf):
            return mf
    return "contiguous_format"


def _same_device(target, current) -> bool:
    if target.type != current.type:
        return False
    return target.index is None or target.index == (current.index or 0) or target.index == current.index


def tensor_to(self: Tensor, *args, **kwargs) -> Tensor:
    """Implementation of ``Tensor.to`` (see the module docstring for the accepted forms)."""
    device, dtype, non_blocking, copy, memory_format = _parse(args, kwargs)
    target = _device(device) if device is not None else self.device
    if target.type == "cuda" and target.index is None and self.device.type != "cuda":
        from .backends.cuda_loader import _backend

        target = _device("cuda", _backend().current_device())
    d = self.dtype if dtype is None else dtype
    mf = memory_format or "preserve_format"
    if (not copy and d is self.dtype and _same_device(target, self.device)
            and (mf == "preserve_format" or mf == suggest_memory_format(self))):
        return self
    return ops._to_copy(self, dtype=d, device=target, non_blocking=non_blocking,
                        memory_format=memory_format)
