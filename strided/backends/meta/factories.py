"""Meta functions for factories, copies and storage ops."""

from __future__ import annotations

import math

from ... import dtypes as dt
from ...device import CPU as _CPU
from ...device import DEFAULT as _DEFAULT_DEVICE
from ...device import device as _device
from ...dispatch.library import kernel
from ...storage import UntypedStorage
from ...tensor import Tensor, contiguous_strides, make_tensor, memory_format_strides
from .. import allocate
from .common import MAX_STORAGE_BYTES, check, exact_ints, is_scalar, new_output, normalize_size, storage_overflow
from .pointwise import check_scalar_fits

__all__ = ["empty", "empty_strided", "resolve_options", "arange_length"]


def resolve_options(dtype, device, default_dtype=None):
    """TensorOptions: the dtype (default float dtype) and device (default cpu) of a factory."""
    d = dt.to_dtype(dtype) if dtype is not None else (default_dtype or dt.get_default_dtype())
    dev = _device(device) if device is not None else (_DEFAULT_DEVICE[0] or _CPU)  # Note [Default device]
    if dev.type == "cuda" and dev.index is None:
        from ..cuda_loader import _backend

        dev = _device("cuda", _backend().current_device())
    return d, dev


# Note [Factory metadata memo]
# `empty` is on the path of nearly every op (outputs come from it or from new_output). Its metadata
# (sizes tuple, strides, nbytes, dtype, device) depends only on the arguments, so the first call
# with a given (size, dtype, device, memory_format) validates and computes it, and later calls
# reuse it: one dict lookup instead of normalizing sizes, options and strides again. Index-less
# "cuda" means the current device and the default dtype can change, so both are part of the key.
# Bounded: cleared when it grows past 4096 keys.
_EMPTY_MEMO: dict = {}


_CUDA_CURRENT_DEVICE = None  # strided.backends.cuda.current_device once the backend is loaded


def _current_cuda_index(device):
    """The current CUDA device when ``device`` is an index-less "cuda", else None (memo key part)."""
    global _CUDA_CURRENT_DEVICE
    cls = device.__class__
    if cls is _device:
        if device.index is not None or device.type != "cuda":
            return None
    elif cls is not str or device != "cuda":
        return None
    if _CUDA_CURRENT_DEVICE is None:
        from ..cuda_loader import _backend

        _CUDA_CURRENT_DEVICE = _backend().current_device
    return _CUDA_CURRENT_DEVICE()


@kernel("CPU", "Meta")
def empty(size, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    key = None
    # exact ints only: True == 1 and 2.0 == 2 would find the entry of a valid size (torch rejects them)
    if layout is None and not pin_memory and size.__class__ is tuple and exact_ints(map(type, size)):
        key = (size, dtype, device, memory_format, dt._default_dtype, _DEFAULT_DEVICE[0],
               _current_cuda_index(device if device is not None else _DEFAULT_DEVICE[0]))
        spec = _EMPTY_MEMO.get(key)
        if spec is not None:
            sizes, strides, nbytes, d, dev = spec
            return make_tensor(allocate(nbytes, dev), 0, sizes, strides, d)
    sizes = normalize_size(size, "empty")
    d, dev = resolve_options(dtype, device)
    _check_layout(layout, "empty")
    if memory_format in (None, "contiguous_format", "preserve_format"):
        strides = contiguous_strides(sizes)
    elif memory_format in ("channels_last", "channels_last_3d"):
        strides = memory_format_strides(sizes, memory_format)
    else:
        raise RuntimeError(f"empty(): unsupported memory_format {memory_format!r}")
    nbytes = math.prod(sizes) * d.itemsize
    if nbytes > MAX_STORAGE_BYTES:
        storage_overflow(sizes)
    if key is not None:
        if len(_EMPTY_MEMO) > 4096:
            _EMPTY_MEMO.clear()
        _EMPTY_MEMO[key] = (sizes, strides, nbytes, d, dev)
    return make_tensor(allocate(nbytes, dev, bool(pin_memory)), 0, sizes, strides, d)


@kernel("CPU", "Meta")
def empty_strided(size, stride, *, dtype=None, layout=None, device=None, pin_memory=None):
    sizes = normalize_size(size, "empty_strided")
    strides = tuple(stride) if not isinstance(stride, int) else (stride,)
    check(len(strides) == len(sizes),
          lambda: f"empty_strided(): mismatch in length of strides and shape: sizes {list(sizes)} "
                  f"has {len(sizes)} dims but strides {list(strides)} has {len(strides)}")
    for s in strides:
        if not isinstance(s, int) or isinstance(s, bool):
            raise TypeError(f"empty_strided(): argument 'stride' must be tuple of ints, got {s!r}")
        check(s >= 0, lambda: f"empty_strided(): strides must be non-negative, got {list(strides)}")
    d, dev = resolve_options(dtype, device)
    _check_layout(layout, "empty_strided")
    if 0 in sizes:
        nbytes = 0
    else:
        nbytes = (1 + sum((n - 1) * s for n, s in zip(sizes, strides))) * d.itemsize
    if nbytes > MAX_STORAGE_BYTES:
        storage_overflow(sizes)
    return make_tensor(allocate(nbytes, dev, bool(pin_memory)), 0, sizes, strides, d)


def _check_layout(layout, op):
    if layout not in (None, "strided"):
        raise RuntimeError(f"{op}(): only the strided layout is supported, got {layout!r}")


def integer_linspace(start, end, steps: int, d: dt.dtype, truncate: bool = True):
    """torch's CPU linspace of an integer dtype, as a float64 NumPy array of the values to store: ``start`` and ``end``
    cast to the dtype first (truncated, wrapped), a float64 step, the first half counted up from ``start`` and the
    rest down from ``end``, each value truncated (C++'s double -> integer conversion) unless not ``truncate``
    (logspace's exponents)."""
    import numpy as np

    def cast(v):
        return float(np.array(int(v), dtype=np.int64).astype(d.numpy_dtype))  # wraps as the C++ conversion

    s, e = cast(start), cast(end)
    if steps == 1:
        return np.array([s])
    step = (e - s) / (steps - 1)
    i = np.arange(steps, dtype=np.float64)
    values = np.where(i < steps // 2, s + step * i, e - step * (steps - i - 1))
    return np.trunc(values) if truncate else values


def arange_length(start, end, step) -> int:
    for v in (start, end, step):
        check(is_scalar(v), lambda: f"unsupported range: {start} -> {end}")
    check(math.isfinite(step), "step must be nonzero" if step != step else f"unsupported range: {start} -> {end}")
    check(math.isfinite(start) and math.isfinite(end), lambda: f"unsupported range: {start} -> {end}")
    check(step != 0, "step must be nonzero")  # torch's words from here on
    check((step > 0 and end >= start) or (step < 0 and end <= start),
          "upper bound and lower bound inconsistent with step sign")
    return max(0, math.ceil((end - start) / step))


def refuse_range_dtype(op: str, d, dev, complex_too: bool) -> None:
    """torch's AT_DISPATCH refusal of a range factory's dtype (``"arange_cpu" not implemented for 'Bool'``): bool, and
    complex where ``complex_too`` (arange, range; linspace and logspace take complex)."""
    if d is dt.bool or (complex_too and d.is_complex):
        from .pointwise import scalar_type_name

        raise NotImplementedError(f"\"{op}_{'cuda' if dev.type == 'cuda' else 'cpu'}\" not implemented for "
                                  f"'{scalar_type_name(d)}'")


@kernel("Meta")
def arange(start, end, step=1, *, dtype=None, layout=None, device=None, pin_memory=None):
    n = arange_length(start, end, step)
    default = dt.int64 if all(isinstance(v, int) for v in (start, end, step)) else None
    d, dev = resolve_options(dtype, device, default)
    refuse_range_dtype("arange", d, dev, complex_too=True)
    return new_output((n,), d, dev)


@kernel("Meta")
def linspace(start, end, steps, *, dtype=None, layout=None, device=None, pin_memory=None):
    check(isinstance(steps, int) and steps >= 0, "number of steps must be non-negative")
    d, dev = resolve_options(dtype, device)
    refuse_range_dtype("linspace", d, dev, complex_too=False)
    return new_output((steps,), d, dev)


@kernel("Meta")
def eye(n, m, *, dtype=None, layout=None, device=None, pin_memory=None):
    check(n >= 0, lambda: f"n must be greater or equal to 0, got {n}")
    check(m >= 0, lambda: f"m must be greater or equal to 0, got {m}")
    d, dev = resolve_options(dtype, device)
    return new_output((n, m), d, dev)


@kernel("Meta")
def uniform_(self, from_=0, to=1, *, generator=None):
    check(from_ <= to, lambda: f"uniform_ expects to return a [from, to) range, but found from={from_} > to={to}")
    return self


@kernel("Meta")
def normal_(self, mean=0, std=1, *, generator=None):
    check(std >= 0, lambda: f"normal expects std >= 0.0, but found std {std}")
    return self


@kernel("Meta")
def random_(self, from_, to, *, generator=None):
    check(to is None or from_ < to,
          lambda: f"random_ expects 'from' to be less than 'to', but got from={from_} >= to={to}")
    lo, hi = _random_bounds(self.dtype)  # torch's check_from_to_in_range: the drawn values must fit the dtype
    check(lo <= from_ <= hi, lambda: f"from is out of bounds for {_RANDOM_TYPE_NAMES[self.dtype]}")
    check(to is None or lo <= to - 1 <= hi, lambda: f"to - 1 is out of bounds for {_RANDOM_TYPE_NAMES[self.dtype]}")
    return self


_RANDOM_TYPE_NAMES = {
    dt.bool: "bool", dt.uint8: "unsigned char", dt.int8: "signed char", dt.int16: "short int", dt.int32: "int",
    dt.int64: "long int", dt.float16: "c10::Half", dt.bfloat16: "c10::BFloat16", dt.float32: "float",
    dt.float64: "double",
}


def _random_bounds(d):
    """The lowest and largest value of dtype ``d`` (bool: 0 and 1; the others: checked_convert's table)."""
    from .pointwise import _LIMITS

    return (0, 1) if d is dt.bool else _LIMITS[d]


@kernel("Meta")
def bernoulli(self, *, generator=None):
    return new_output(self._sizes, self.dtype, self.device)


@kernel("Meta")
def bernoulli_(self, p=0.5, *, generator=None):
    check(0 <= p <= 1, lambda: f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    return self


@kernel("Meta")
def fill_(self, value):
    if isinstance(value, Tensor):
        check(value.dim() == 0,
              lambda: f"fill_ only supports 0-dimension value tensor but got tensor with {value.dim()} dimensions.")
    else:
        check_scalar_fits(value, self.dtype)  # torch's overflow error, never a wrapped or truncated fill
    return self


@kernel("Meta")
def copy_(self, src, non_blocking=False):
    from .common import broadcast_shapes

    if not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'src' must be Tensor, not {type(src).__name__}")
    shape = broadcast_shapes(self._sizes, src._sizes)
    check(shape == self._sizes,
          lambda: f"output with shape {list(self._sizes)} doesn't match the broadcast shape {list(shape)}")
    return self


@kernel("CPU", "Meta")
def resize_(self, size, *, memory_format=None):
    sizes = normalize_size(size, "resize_")
    strides = memory_format_strides(sizes, memory_format)
    need = (self._offset + math.prod(sizes)) * self.dtype.itemsize
    if need > self._storage.nbytes():
        old = self._storage
        if old.allocator in ("numpy", "shared", "file"):  # memory strided does not own, or shared, or a file
            raise RuntimeError("Trying to resize storage that is not resizable")
        new = allocate(need, self.device)
        if old.buffer is not None and new.buffer is not None and old.nbytes():
            new.buffer[: old.nbytes()] = old.buffer
        _swap_storage(old, new)
    self._sizes, self._strides = sizes, strides
    self._np = None  # Note [NumPy view memo]
    return self


def _swap_storage(old: UntypedStorage, new: UntypedStorage) -> None:
    """Grow a storage in place (torch resizes the StorageImpl, so every view sees the new memory)."""
    old._nbytes, old._data_ptr, old.owner, old.buffer = new._nbytes, new._data_ptr, new.owner, new.buffer
    old.allocator = new.allocator


@kernel("CPU", "Meta")
def set_(self, source, storage_offset, size, stride=()):
    _check_leaf(self)
    source = getattr(source, "_untyped_storage", source)  # a TypedStorage: its bytes
    if not isinstance(source, UntypedStorage):
        raise TypeError(f"set_(): argument 'source' must be UntypedStorage, not {type(source).__name__}")
    sizes = normalize_size(size, "set_")
    strides = tuple(stride) if stride else contiguous_strides(sizes)
    check_storage_bounds(sizes, strides, storage_offset, self.dtype.itemsize, source.nbytes())
    check(source.device == self.device,
          lambda: f"Attempted to set the storage of a tensor on device \"{self.device}\" to a storage on "
                  f"different device \"{source.device}\".  This is no longer allowed; the devices must match.")
    self._storage, self._offset, self._sizes, self._strides = source, storage_offset, sizes, strides
    self._np = None  # Note [NumPy view memo]
    return self


def _check_leaf(self) -> None:
    """torch's check_inplace for set_: a leaf that requires grad cannot have its storage replaced while grad mode is
    on (under no_grad it can: parameter swaps)."""
    if self._requires_grad and self.is_leaf:
        from ...dispatch.dispatcher import grad_mode

        check(not grad_mode.enabled, "a leaf Variable that requires grad is being used in an in-place operation.")


@kernel("CPU", "Meta")
def set_source_storage(self, source):
    """``t.set_(storage)``: the whole storage as a flat tensor of ``t``'s dtype (torch's set_.source_Storage)."""
    source = getattr(source, "_untyped_storage", source)  # a TypedStorage: its bytes
    if not isinstance(source, UntypedStorage):
        raise TypeError(f"set_(): argument 'source' must be UntypedStorage, not {type(source).__name__}")
    return set_(self, source, 0, (source.nbytes() // self.dtype.itemsize,))


@kernel("CPU", "Meta")
def set_source_tensor(self, source):
    """``t.set_(other)``: ``t`` views ``other``'s storage with its offset, sizes and strides (set_.source_Tensor)."""
    from .pointwise import type_meta_name

    check(source.dtype is self.dtype, lambda: f"Could not set tensor of type {type_meta_name(source.dtype)} to a "
                                              f"tensor of type {type_meta_name(self.dtype)}")
    _check_leaf(self)
    if source is self:
        return self
    return set_(self, source._storage, source._offset, source._sizes, source._strides)


@kernel("CPU", "Meta")
def set_empty(self):
    """``t.set_()``: an empty storage of its own, ``t`` of size (0,)."""
    return set_(self, allocate(0, self.device), 0, (0,))


def check_storage_bounds(sizes, strides, offset, itemsize, storage_nbytes) -> None:
    """torch's setStorage check: the view must lie inside the storage."""
    check(len(sizes) == len(strides),
          lambda: f"mismatch in length of strides and shape: {list(sizes)} vs {list(strides)}")
    check(isinstance(offset, int) and offset >= 0, lambda: f"Tensor: invalid storage offset {offset}")
    for s in strides:
        check(isinstance(s, int) and s >= 0,
              lambda: f"as_strided: Negative strides are not supported at the moment, got strides: {list(strides)}")
    if 0 in sizes:
        return
    need = (offset + 1 + sum((n - 1) * s for n, s in zip(sizes, strides))) * itemsize
    check(need <= storage_nbytes,
          lambda: f"setStorage: sizes {list(sizes)}, strides {list(strides)}, storage offset {offset}, and "
                  f"itemsize {itemsize} requiring a storage size of {need} are out of bounds for storage "
                  f"of size {storage_nbytes}")
