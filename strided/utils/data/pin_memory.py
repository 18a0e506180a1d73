"""Copy a batch's tensors into pinned (page-locked) host memory, for ``DataLoader(pin_memory=True)``."""

from __future__ import annotations

import collections.abc
import copy

__all__ = ["accelerator_available", "pin_memory", "will_pin"]


def accelerator_available() -> bool:
    """Whether pinning can be used: torch asks ``torch.accelerator``; strided's one accelerator is CUDA."""
    from ... import cuda  # lazy: importing strided.cuda costs time and CPU-only loaders never need it

    return cuda.is_available()


def will_pin(loader) -> bool:
    """Whether an iterator of ``loader`` pins its batches, with torch's warnings for
    ``pin_memory_device`` (deprecated) and for ``pin_memory=True`` without an accelerator."""
    import warnings

    if loader.pin_memory and loader.pin_memory_device:
        warnings.warn(
            "pin_memory_device is deprecated, the current accelerator will be used as the device,"
            f"ignore pin_memory_device='{loader.pin_memory_device}'.",
            stacklevel=4,
        )
    available = loader.pin_memory and accelerator_available()
    if loader.pin_memory and not available:
        warnings.warn(
            "'pin_memory' argument is set as true but no accelerator is found, "
            "then device pinned memory won't be used.",
            stacklevel=4,
        )
    return available


def pin_memory(data, device=None):
    """``data`` with every tensor (anything with a ``pin_memory()`` method) replaced by its pinned
    copy, recursing into mappings, namedtuples, tuples and sequences as torch does."""
    if hasattr(data, "pin_memory"):  # Tensor, or a user's batch type with its own pin_memory()
        return data.pin_memory()
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        pinned = {k: pin_memory(sample, device) for k, sample in data.items()}
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update(pinned)
                return clone
            return type(data)(pinned)
        except TypeError:
            return pinned
    if isinstance(data, tuple):
        if hasattr(data, "_fields"):  # namedtuple
            return type(data)(*(pin_memory(sample, device) for sample in data))
        return type(data)(pin_memory(sample, device) for sample in data)
    if isinstance(data, collections.abc.Sequence):
        pinned = [pin_memory(sample, device) for sample in data]
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, item in enumerate(pinned):
                    clone[i] = item
                return clone
            return type(data)(pinned)
        except TypeError:
            return pinned
    return data
