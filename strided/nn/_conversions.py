"""``Module.to`` and the other conversions: replace every parameter's and buffer's data in place."""

from __future__ import annotations

from collections.abc import Callable

from .. import dtypes as _dt
from ..autograd.grad_mode import no_grad
from ..device import device as _device
from ..tensor import Tensor
from .parameter import _set_data

__all__ = ["ConversionMixin"]


class ConversionMixin:
    """Device and dtype conversions of ``Module`` (kept apart from the attribute machinery)."""

    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> ConversionMixin:
        """Replace every parameter's data, its gradient and every buffer by ``fn`` of it; parameters
        keep their identity (so optimizers created earlier still hold them)."""
        if recurse:
            for module in self.children():
                module._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            with no_grad():
                new = fn(param)
            _set_data(param, new)
            grad = param.grad
            if grad is not None:
                with no_grad():
                    new_grad = fn(grad)
                if new_grad is not grad:
                    param.grad = new_grad.requires_grad_(grad.requires_grad)
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def to(self, *args, **kwargs) -> ConversionMixin:
        """Move and/or cast parameters and buffers: ``to(device)``, ``to(dtype)``,
        ``to(device, dtype)``, ``to(tensor)``, keyword ``device=``, ``dtype=``, ``non_blocking=``.
        Only floating tensors are cast to ``dtype``."""
        device, dtype, non_blocking = _parse_to(args, kwargs)
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got desired "
                            f"dtype={dtype}")

        def convert(t: Tensor) -> Tensor:
            want = dtype if (dtype is not None and t.is_floating_point()) else t.dtype
            if (device is None or t.device == device) and want is t.dtype:
                return t
            return t.to(device if device is not None else t.device, want, non_blocking=non_blocking)

        return self._apply(convert)

    def to_empty(self, *, device, recurse: bool = True) -> ConversionMixin:
        """Give every parameter and buffer fresh uninitialized storage on ``device`` (e.g. to
        materialize a model built on the meta device, then initialize it)."""
        from ..factories import empty_like

        device = _device(device if not isinstance(device, int) else f"cuda:{device}")
        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def share_memory(self) -> ConversionMixin:
        """Move every parameter and buffer into shared memory (``Tensor.share_memory_``), e.g. before forking
        Hogwild training processes."""
        return self._apply(lambda t: t.share_memory_())

    def cuda(self, device=None) -> ConversionMixin:
        return self.to(_device("cuda") if device is None else _device(device if not isinstance(device, int)
                                                                         else f"cuda:{device}"))

    def cpu(self) -> ConversionMixin:
        return self.to("cpu")

    def _cast_floating(self, dtype) -> ConversionMixin:
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def float(self) -> ConversionMixin:
        return self._cast_floating(_dt.float32)

    def double(self) -> ConversionMixin:
        return self._cast_floating(_dt.float64)

    def half(self) -> ConversionMixin:
        return self._cast_floating(_dt.float16)

    def bfloat16(self) -> ConversionMixin:
        return self._cast_floating(_dt.bfloat16)

    def type(self, dst_type) -> ConversionMixin:
        """Cast every parameter and buffer to ``dst_type`` (a dtype or a type name, as ``Tensor.type``)."""
        return self._apply(lambda t: t.type(dst_type))


def _parse_to(args, kwargs):
    """torch's ``_parse_to``: (device, dtype, non_blocking) from ``Module.to``'s call forms."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    non_blocking = kwargs.pop("non_blocking", False)
    if kwargs:
        raise TypeError(f"to() received an invalid keyword argument '{next(iter(kwargs))}'")
    for a in args:
        if isinstance(a, Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, _dt.dtype):
            dtype = a
        elif isinstance(a, bool):
            non_blocking = a
        elif isinstance(a, (str, int, _device)):
            device = a
        else:
            raise TypeError(f"to() received an invalid combination of arguments - got {type(a).__name__}")
    if device is not None:
        device = _device(device if not isinstance(device, int) else f"cuda:{device}")
    return device, dtype, non_blocking
