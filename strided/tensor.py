"""``Tensor``: a strided view (storage, storage_offset, sizes, strides, dtype, device).

Every operation goes through the dispatcher; this class holds metadata, the Python protocol
(operators, indexing, iteration) and conversions. Methods named in the operator YAML
(``variants: method``) are bound onto this class by ``strided.ops.registry`` at import time.

Note [Autograd meta]
``_requires_grad`` is a slot because the dispatcher reads it for every tensor argument of every call; the public
``requires_grad`` is a property over it whose setter refuses what torch's refuses (a non-bool, a non-leaf, an integer
dtype). Internal hot paths read the slot (57 ns less a read). Everything else autograd keeps (grad, grad_fn, output
number, hooks, retain_grad) lives in one ``_autograd`` object (``strided.autograd.graph.AutogradMeta``), None for
tensors that never took part in autograd, so ``make_tensor`` sets three slots instead of eight; the properties over it
are the ``TensorAutograd`` mixin (``tensor_autograd.py``). The version counter is the storage's (shared by a tensor
and all its views, as torch's VariableVersion).

Note [Tensor metadata]
Sizes and strides are tuples of Python ints, in elements, as in torch. ``_key`` caches the
backend dispatch key of the device so the dispatcher reads one attribute per argument.
"""

from __future__ import annotations

import math

from . import dtypes as _dt
from .layouts import strided as _STRIDED_LAYOUT
from .strides import (  # noqa: F401 - re-exported: kernels import them from here
    channels_last_3d_strides,
    channels_last_strides,
    contiguous_strides,
    is_row_major,
    memory_format_strides,
)
from .tensor_autograd import TensorAutograd
from .tensor_conversions import TensorConversions
from .tensor_extras import TensorExtras
from .tensor_linalg import TensorLinalg
from .tensor_operators import TensorOperators

__all__ = ["Tensor", "contiguous_strides", "channels_last_strides", "channels_last_3d_strides", "memory_format_strides",
           "is_row_major"]


class Tensor(TensorAutograd, TensorConversions, TensorOperators, TensorLinalg, TensorExtras):
    """A multi-dimensional strided view of a storage (see ``strided.empty_strided``)."""

    __slots__ = (
        "_storage", "_offset", "_sizes", "_strides", "dtype", "device", "_key",
        "_requires_grad", "_base", "_autograd", "_np", "__weakref__",
    )
    __array_priority__ = 1000  # so ndarray <op> Tensor defers to Tensor's reflected operators

    def __init__(self, *args, **kwargs):
        """torch's legacy constructor (Note [Legacy constructors]): ``Tensor(2, 3)``, ``Tensor([1, 2])``,
        ``Tensor(other)``, ``Tensor(storage)``; prefer ``strided.tensor`` / ``strided.empty``."""
        from .legacy_tensor_types import legacy_new

        made = legacy_new(None, None, args, kwargs)
        for name in _LEGACY_SLOTS:
            setattr(self, name, getattr(made, name))

    # ------------------------------------------------------------------ metadata
    @property
    def shape(self) -> Size:
        return Size(self._sizes)

    def size(self, dim: int | None = None):
        """The shape, or the size of one dimension (negative dims count from the end)."""
        if dim is None:
            return Size(self._sizes)
        return self._sizes[_wrap_dim(dim, len(self._sizes), "size")]

    def stride(self, dim: int | None = None):
        """Strides in elements, or the stride of one dimension."""
        if dim is None:
            return self._strides
        return self._strides[_wrap_dim(dim, len(self._sizes), "stride")]

    def dim(self) -> int:
        return len(self._sizes)

    ndim = property(dim)

    def ndimension(self) -> int:
        return len(self._sizes)

    def numel(self) -> int:
        return math.prod(self._sizes)

    nelement = numel

    def element_size(self) -> int:
        return self.dtype.itemsize

    itemsize = property(element_size)

    @property
    def nbytes(self) -> int:
        return math.prod(self._sizes) * self.dtype.itemsize

    def storage_offset(self) -> int:
        return self._offset

    def untyped_storage(self):
        return self._storage

    def storage(self):
        """torch's deprecated ``TypedStorage`` over this tensor's storage (warns once; prefer ``untyped_storage``)."""
        from .typed_storage import TypedStorage, warn_typed_storage_removal

        warn_typed_storage_removal()
        return TypedStorage(wrap_storage=self._storage, dtype=self.dtype)

    def data_ptr(self) -> int:
        """Address of the first element (0 for meta tensors)."""
        base = self._storage.data_ptr()
        return base + self._offset * self.dtype.itemsize if base else 0

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    @property
    def is_meta(self) -> bool:
        return self.device.type == "meta"

    @property
    def is_cpu(self) -> bool:
        return self.device.type == "cpu"

    @property
    def layout(self) -> str:
        """``strided.strided``, the one layout (equal to the string "strided")."""
        return _STRIDED_LAYOUT

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def is_complex(self) -> bool:
        return self.dtype.is_complex

    def is_pinned(self) -> bool:
        return self._storage.allocator == "pinned"

    def pin_memory(self) -> Tensor:
        """A copy of this CPU tensor in pinned (page-locked) host memory (self if already pinned)."""
        if self._storage.allocator == "pinned":
            return self
        if self.device.type != "cpu":
            raise RuntimeError(f"cannot pin '{self.device}' memory: only dense CPU tensors can be pinned")
        from .backends.cuda_loader import pinned_allocate

        out = make_tensor(pinned_allocate(self.numel() * self.dtype.itemsize), 0, self._sizes,
                          contiguous_strides(self._sizes), self.dtype)
        return out.copy_(self)

    def record_stream(self, stream) -> None:
        """Mark this CUDA tensor's memory as used by ``stream`` (reused only after its work so far)."""
        if self.device.type != "cuda":
            raise RuntimeError("record_stream: expected a CUDA tensor")
        from .backends.cuda import record_stream

        record_stream(self._storage, stream)

    def get_device(self) -> int:
        return -1 if self.device.type == "cpu" else (self.device.index or 0)

    def is_contiguous(self, *, memory_format="contiguous_format") -> bool:
        """True when the strides are the dense strides of ``memory_format`` (size-1 dims ignored)."""
        if memory_format == "contiguous_format" or memory_format is None:
            key = (self._sizes, self._strides)  # Note [Contiguity memo]
            try:
                hit = _CONTIGUOUS.get(key)
            except TypeError:  # list metadata: not hashable
                return is_row_major(self._sizes, self._strides)
            if hit is None:
                hit = is_row_major(self._sizes, self._strides)
                if len(_CONTIGUOUS) > 4096:
                    _CONTIGUOUS.clear()
                _CONTIGUOUS[key] = hit
            return hit
        if memory_format == "channels_last" or memory_format == "channels_last_3d":
            if len(self._sizes) != (4 if memory_format == "channels_last" else 5):
                return False
            if 0 in self._sizes:
                return True
            want = memory_format_strides(self._sizes, memory_format)
            return all(s == 1 or a == b for s, a, b in zip(self._sizes, self._strides, want))
        if memory_format == "preserve_format":
            raise RuntimeError("is_contiguous(): preserve_format is not a valid memory format to check")
        raise RuntimeError(f"is_contiguous(): unknown memory_format {memory_format!r}")

    def _is_non_overlapping_and_dense(self) -> bool:
        dims = sorted((st, sz) for sz, st in zip(self._sizes, self._strides) if sz != 1)
        expected = 1
        for st, sz in dims:
            if sz == 0:
                return True
            if st != expected:
                return False
            expected *= sz
        return True

    # ------------------------------------------------------------------ Python protocol
    def __repr__(self) -> str:
        from ._tensor_str import tensor_repr

        return tensor_repr(self)

    def __len__(self) -> int:
        if not self._sizes:
            raise TypeError("len() of a 0-d tensor")
        return self._sizes[0]

    def __iter__(self):
        if not self._sizes:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise RuntimeError(
                f"Boolean value of Tensor with {'no values' if self.numel() == 0 else 'more than one value'}"
                " is ambiguous"
            )
        return bool(self.item())

    def __float__(self) -> float:
        if self.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return float(self.item())

    def __int__(self) -> int:
        if self.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return int(self.item())

    def __complex__(self) -> complex:
        if self.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return complex(self.item())

    def __index__(self) -> int:
        if self.dtype.category != _dt.INTEGRAL or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __hash__(self) -> int:
        return id(self)

    def __getitem__(self, index):
        from .indexing import getitem

        return getitem(self, index)

    def __setitem__(self, index, value):
        from .indexing import setitem

        setitem(self, index, value)

    def __reduce_ex__(self, protocol):
        raise TypeError("strided tensors are not picklable; save state with strided.nn.save (safetensors)")

    @property
    def T(self) -> Tensor:  # noqa: N802 - torch's name
        n = len(self._sizes)
        if n not in (0, 2):  # torch 2.x still reverses the dims, with this warning
            import warnings

            warnings.warn(
                "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and it "
                "will throw an error in a future release. Consider `x.mT` to transpose batches of matrices or "
                "`x.permute(*strided.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.",
                UserWarning, stacklevel=2)
            return self.permute(tuple(range(n - 1, -1, -1)))
        return self if n == 0 else self.t()

    @property
    def mT(self) -> Tensor:  # noqa: N802
        if len(self._sizes) < 2:
            raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor."
                               if self._sizes else
                               "tensor.mT is only supported on matrices or batches of matrices. Got 0-D tensor.")
        return self.transpose(-2, -1)

    @property
    def data(self) -> Tensor:
        return self.detach()

    @data.setter
    def data(self, value) -> None:
        """``t.data = other``: ``t`` takes ``other``'s storage, offset, sizes, strides, dtype and device
        (torch's ``set_data``); its autograd history, ``requires_grad`` and ``.grad`` stay."""
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        if self._requires_grad and not (value.dtype.is_floating_point or value.dtype.is_complex):
            raise RuntimeError("data set to a tensor that requires gradients must be floating point or complex dtype")
        self._storage, self._offset = value._storage, value._offset
        self._sizes, self._strides = value._sizes, value._strides
        self._np = None  # Note [NumPy view memo]
        self.dtype, self.device, self._key = value.dtype, value.device, value._key

    def __format__(self, spec):
        if not self._sizes:
            return self.item().__format__(spec)
        return object.__format__(self, spec)


class Size(tuple):
    """``tensor.shape``: a tuple of ints that prints as torch's ``Size([2, 3])``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"strided.Size([{', '.join(map(str, self))}])"

    def numel(self) -> int:
        return math.prod(self)


def _wrap_dim(dim: int, ndim: int, op: str = "") -> int:
    """Wrap a possibly negative dim into [0, ndim); torch's IndexError wording on failure."""
    n = ndim if ndim > 0 else 1
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim + n if dim < 0 else dim


# Note [Contiguity memo]
# ``is_contiguous()`` runs several times per op (kernels pick their paths with it), and a model sees
# the same few hundred (sizes, strides) pairs every step: the answer is kept per pair. Bounded:
# cleared past 4096 pairs.
_CONTIGUOUS: dict = {}


_LEGACY_SLOTS = ("_storage", "_offset", "_sizes", "_strides", "dtype", "device", "_key", "_requires_grad", "_base",
                 "_autograd", "_np")


def make_tensor(storage, offset: int, sizes: tuple, strides: tuple, dtype, requires_grad: bool = False) -> Tensor:
    """Build a Tensor object over ``storage`` without validation (kernels only; see set_ for checks)."""
    t = object.__new__(Tensor)
    t._storage = storage
    t._offset = offset
    t._sizes = sizes
    t._strides = strides
    t.dtype = dtype
    dev = storage.device
    t.device = dev
    t._key = _BACKEND_KEYS[dev.type] | dtype._key_bit  # Note [Complex operators]
    t._requires_grad = requires_grad
    t._base = None
    t._autograd = None
    t._np = None  # Note [NumPy view memo]
    return t


from .dispatch.keys import BACKEND_KEYS as _BACKEND_KEYS  # noqa: E402
