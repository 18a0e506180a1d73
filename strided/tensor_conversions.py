"""Conversions of ``Tensor``: to Python values, NumPy and DLPack, ``to``/``cpu``/``cuda``/dtype
casts, and the ``new_*`` factories. A mixin so that tensor.py holds metadata and protocol only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import dtypes as _dt
from .device import device as _device
from .dispatch.state import grad_mode
from .ops import bound as _ops
from .tensor_extras import cast

if TYPE_CHECKING:
    from .tensor import Tensor

__all__ = ["TensorConversions"]


class TensorConversions:
    """Conversion methods shared by ``Tensor`` (no state of its own)."""

    __slots__ = ()

    def item(self):
        """The value of a one-element tensor as a Python number."""
        if self.numel() != 1:
            raise RuntimeError(
                f"a Tensor with {self.numel()} elements cannot be converted to Scalar"
            )
        return _ops._local_scalar_dense(self)

    def tolist(self):
        """The data as (nested) Python lists of Python numbers."""
        return self.numpy(force=True).tolist() if self._sizes else self.item()

    def numpy(self, *, force: bool = False):
        """A NumPy array sharing memory with this CPU tensor (``force=True`` copies from CUDA)."""
        from .interop import tensor_to_numpy

        return tensor_to_numpy(self, force=force)

    def __array__(self, dtype=None, copy=None):
        from .interop import tensor_to_numpy

        arr = tensor_to_numpy(self, force=False)
        return arr.astype(dtype, copy=False) if dtype is not None else arr

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        from .interop import to_dlpack

        return to_dlpack(self, stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)

    def __dlpack_device__(self):
        from .interop import dlpack_device

        return dlpack_device(self)

    @property
    def __cuda_array_interface__(self) -> dict:
        """CUDA Array Interface v3 of a CUDA tensor (AttributeError elsewhere, so ``hasattr`` is False)."""
        if self.device.type != "cuda":
            raise AttributeError(
                f"Can't get __cuda_array_interface__ on non-CUDA tensor type: {self.type()} If CUDA data is "
                "required use tensor.cuda() to copy tensor to device memory."
            )
        from .backends.cuda.interop import cuda_array_interface

        return cuda_array_interface(self)

    def to(self, *args, **kwargs) -> Tensor:
        """``to(dtype)``, ``to(device, dtype=None, non_blocking=False, copy=False)``, ``to(other)``."""
        from .conversion import tensor_to

        return tensor_to(self, *args, **kwargs)

    def type(self, dtype=None, non_blocking: bool = False):
        """The legacy type name (``strided.FloatTensor``, ``strided.cuda.FloatTensor``) without ``dtype``; else a
        cast to ``dtype`` (a dtype, or a legacy name such as ``"strided.DoubleTensor"``)."""
        from .backends.meta.indexing import TYPE_WORDS as words

        cuda = "cuda." if self.device.type == "cuda" else ""
        if dtype is None:
            return f"strided.{cuda}{words[self.dtype]}Tensor"
        if isinstance(dtype, type) and hasattr(dtype, "_device_type"):  # strided.FloatTensor, strided.cuda.LongTensor
            if self.dtype is dtype.dtype and self.device.type == dtype._device_type:
                return self  # the same type (any device index), as torch's
            return self.to(device=dtype._device_type, dtype=dtype.dtype, non_blocking=non_blocking)
        if isinstance(dtype, str) and dtype.endswith("Tensor"):
            name = dtype.rsplit(".", 1)[-1][: -len("Tensor")]
            match = next((d for d, w in words.items() if w == name), None)
            if match is None or not (dtype.startswith("strided.") or dtype.startswith("torch.")):
                raise ValueError(f"invalid type: '{dtype}'")
            target = "cuda" if ".cuda." in dtype else "cpu"
            return self.to(device=target, dtype=match, non_blocking=non_blocking)
        return self.to(dtype, non_blocking=non_blocking)

    def cpu(self) -> Tensor:
        return self if self.device.type == "cpu" else self.to("cpu")

    def cuda(self, device=None, non_blocking: bool = False) -> Tensor:
        target = _device("cuda") if device is None else _device(device)
        return self.to(target, non_blocking=non_blocking)

    def float(self, memory_format=None) -> Tensor:
        return cast(self, _dt.float32, memory_format)

    def double(self, memory_format=None) -> Tensor:
        return cast(self, _dt.float64, memory_format)

    def half(self, memory_format=None) -> Tensor:
        return cast(self, _dt.float16, memory_format)

    def bfloat16(self, memory_format=None) -> Tensor:
        return cast(self, _dt.bfloat16, memory_format)

    def long(self, memory_format=None) -> Tensor:
        return cast(self, _dt.int64, memory_format)

    def int(self, memory_format=None) -> Tensor:
        return cast(self, _dt.int32, memory_format)

    def bool(self, memory_format=None) -> Tensor:
        return cast(self, _dt.bool, memory_format)

    # torch's Python-level varargs forms: x.view(2, 3) as well as x.view((2, 3))
    def view(self, *shape, dtype=None, **size) -> Tensor:
        """A view with another shape, or (``view(dtype)``) the same bytes read as another dtype."""
        if size:
            shape = (_keyword(shape, size, "view", "size"),)
        if dtype is None and len(shape) == 1 and isinstance(shape[0], _dt.dtype):
            dtype = shape[0]
        if dtype is not None:
            return _ops.view.dtype(self, dtype)
        return _ops.view.default(self, _varargs(shape))  # the size overload: its own words for bad sizes

    def resize_(self, *sizes, memory_format=None) -> Tensor:
        """Resize in place (torch's varargs form too: ``x.resize_(2, 3)``)."""
        return _ops.resize_(self, _varargs(sizes, "resize_"), memory_format=memory_format)

    def reshape(self, *shape, **kwargs) -> Tensor:
        return _ops.reshape(self, _varargs(shape, "reshape", "shape", kwargs))

    def permute(self, *dims, **kwargs) -> Tensor:
        return _ops.permute(self, _varargs(dims, "permute", "dims", kwargs))

    def expand(self, *sizes, **kwargs) -> Tensor:
        return _ops.expand(self, _varargs(sizes, "expand", "size", kwargs))

    def repeat(self, *repeats, **kwargs) -> Tensor:
        return _ops.repeat(self, _varargs(repeats, "repeat", "repeats", kwargs))

    def tile(self, *dims, **kwargs) -> Tensor:
        return _ops.tile(self, _varargs(dims, "tile", "dims", kwargs))

    def flip(self, *dims, **kwargs) -> Tensor:
        return _ops.flip(self, _varargs(dims, "flip", "dims", kwargs))

    def nonzero(self, *, as_tuple: bool = False):
        from .functional import nonzero

        return nonzero(self, as_tuple=as_tuple)

    def unique(self, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,  # noqa: A002
               dim=None):
        from .functional import unique

        return unique(self, sorted, return_inverse, return_counts, dim)

    def unique_consecutive(self, return_inverse: bool = False, return_counts: bool = False, dim=None):
        from .functional import unique_consecutive

        return unique_consecutive(self, return_inverse, return_counts, dim)

    def argwhere(self) -> Tensor:
        return _ops.nonzero(self)

    def isclose(self, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
        from .comparison import isclose

        return isclose(self, other, rtol, atol, equal_nan)

    def allclose(self, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
        from .comparison import allclose

        return allclose(self, other, rtol, atol, equal_nan)

    def equal(self, other) -> bool:
        from .comparison import equal

        return equal(self, other)

    def split(self, split_size, dim: int = 0) -> tuple:
        """``split(int)`` cuts equal pieces; ``split([sizes])`` calls split_with_sizes, as torch (a tuple:
        Note [Tensor lists as tuples] in ops/registry.py)."""
        if isinstance(split_size, (list, tuple)):
            return tuple(_ops.split_with_sizes(self, split_size, dim))
        return tuple(_ops.split(self, split_size, dim))

    @property
    def requires_grad(self) -> bool:
        """Whether autograd records operations on this tensor (Note [Autograd meta])."""
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value) -> None:
        if value.__class__ is not bool:
            raise RuntimeError("requires_grad must be a bool")
        if self._autograd is not None and self._autograd.grad_fn is not None:
            raise RuntimeError("you can only change requires_grad flags of leaf variables." + (
                "" if value else " If you want to use a computed variable in a subgraph that doesn't require "
                "differentiation use var_no_grad = var.detach()."))
        if value:
            if not (self.dtype.is_floating_point or self.dtype.is_complex):
                raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
            if self._storage.inference and not grad_mode.inference:
                raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not "
                                   "allowed.")
        self._requires_grad = value

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if not self.is_leaf:
            if requires_grad:
                return self
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach()."
            )
        if requires_grad and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if requires_grad and self._storage.inference and not grad_mode.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
        self._requires_grad = requires_grad
        return self

    def is_inference(self) -> bool:
        """Whether this is an inference tensor: made inside ``inference_mode`` (or a view of one)."""
        return self._storage.inference

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False) -> Tensor:
        """An uninitialized tensor of ``size`` (ints or one sequence), this tensor's dtype and device."""
        from .factories import empty

        return empty(_varargs(size, "new_empty"), dtype=dtype or self.dtype, device=device or self.device,
                     requires_grad=requires_grad)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False) -> Tensor:
        """Zeros of ``size`` (ints or one sequence), this tensor's dtype and device."""
        from .factories import zeros

        return zeros(_varargs(size, "new_zeros"), dtype=dtype or self.dtype, device=device or self.device,
                     requires_grad=requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False) -> Tensor:
        """Ones of ``size`` (ints or one sequence), this tensor's dtype and device."""
        from .factories import ones

        return ones(_varargs(size, "new_ones"), dtype=dtype or self.dtype, device=device or self.device,
                     requires_grad=requires_grad)

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False) -> Tensor:
        from .factories import full

        return full(size, fill_value, dtype=dtype or self.dtype, device=device or self.device,
                    requires_grad=requires_grad)

    def where(self, condition, y) -> Tensor:
        """``strided.where(condition, self, y)`` (torch's ``Tensor.where`` argument order)."""
        return _ops.where(condition, self, y)

    def __deepcopy__(self, memo) -> Tensor:
        """A copy of a leaf tensor (data, requires_grad, a copy of .grad); torch refuses non-leaves."""
        if not self.is_leaf:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                               "protocol at the moment.  If you were attempting to deepcopy a module, this may be "
                               "because of a torch.nn.utils.weight_norm usage, see "
                               "https://github.com/pytorch/pytorch/pull/103001")
        out = memo.get(id(self))
        if out is None:
            from .autograd import no_grad

            with no_grad():
                out = self.clone()
            out.requires_grad = self._requires_grad
            if self.grad is not None:
                out.grad = self.grad.__deepcopy__(memo)
            memo[id(self)] = out
        return out

    def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False) -> Tensor:
        from .factories import tensor

        return tensor(data, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)


def _keyword(args: tuple, kwargs: dict, method: str, name: str):
    """The ``name=`` form of a varargs method (``x.flip(dims=(0,))``), torch's only keyword for it."""
    for key in kwargs:
        if key != name or args:
            raise TypeError(f"{method}() got an unexpected keyword argument '{key}'" if key != name else
                            f"{method}() got multiple values for argument '{name}'")
    return kwargs[name]


def _varargs(args: tuple, method: str | None = None, name: str = "size", kwargs: dict | None = None):
    """``(2, 3)`` or ``((2, 3),)`` -> the shape/dims sequence (a single list/tuple is unpacked); no arguments at
    all for ``method`` (whose ``name`` argument torch requires) is torch's binding error; ``kwargs``: the
    ``name=`` keyword form."""
    if kwargs:
        return _keyword(args, kwargs, method, name)
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        return args[0]
    if not args and method is not None:
        raise TypeError(f'{method}() missing 1 required positional arguments: "{name}"')
    return args
