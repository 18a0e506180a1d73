"""Splitting a batch over devices and joining the replicas' outputs (torch.nn.parallel.scatter_gather).

``scatter`` cuts every tensor in (nested tuples, lists, dicts of) the inputs into one chunk per device along
``dim`` and copies each chunk to its device; anything else is repeated for every device. ``gather`` copies
the outputs to one device and concatenates them along ``dim``. Both are ordinary differentiable ops
(``chunk``, ``to``, ``cat``), so gradients flow back to the original batch and to the gathered output's users.
"""

from __future__ import annotations

import warnings
from typing import Any

from ...device import device as _device
from ...ops import bound as ops
from ...tensor import Tensor

__all__ = ["scatter", "scatter_kwargs", "gather"]


def as_device(d) -> _device:
    """A device id as DataParallel takes them: an int (a CUDA index), a device, or its name."""
    if isinstance(d, bool):
        raise TypeError(f"Expected a device index or a device, but got: {d!r}")
    if isinstance(d, int):
        return _device("cpu") if d == -1 else _device("cuda", d)
    d = _device(d) if isinstance(d, str) else d
    if not isinstance(d, _device):
        raise TypeError(f"Expected a device index or a device, but got: {type(d).__name__}")
    if d.type == "cuda" and d.index is None:
        from ...cuda import current_device

        return _device("cuda", current_device())
    return d


def _is_namedtuple(obj) -> bool:
    return isinstance(obj, tuple) and hasattr(obj, "_asdict") and hasattr(obj, "_fields")


def scatter(inputs: Any, target_gpus, dim: int = 0) -> list:
    """One piece of ``inputs`` per device in ``target_gpus`` (fewer when a tensor has fewer rows than devices)."""
    devices = [as_device(d) for d in target_gpus]

    def scatter_map(obj):
        if isinstance(obj, Tensor):
            return [chunk.to(d) for chunk, d in zip(obj.chunk(len(devices), dim), devices)]
        if _is_namedtuple(obj):
            return [type(obj)(*args) for args in zip(*map(scatter_map, obj))]
        if isinstance(obj, tuple) and len(obj) > 0:
            return list(zip(*map(scatter_map, obj)))
        if isinstance(obj, list) and len(obj) > 0:
            return [list(i) for i in zip(*map(scatter_map, obj))]
        if isinstance(obj, dict) and len(obj) > 0:
            return [type(obj)(i) for i in zip(*map(scatter_map, obj.items()))]
        return [obj for _ in devices]

    return scatter_map(inputs)


def scatter_kwargs(inputs: tuple, kwargs: dict | None, target_gpus, dim: int = 0) -> tuple[tuple, tuple]:
    """``scatter`` of the positional and keyword inputs, padded to the same number of pieces."""
    scattered_inputs = scatter(inputs, target_gpus, dim) if inputs else []
    scattered_kwargs = scatter(kwargs, target_gpus, dim) if kwargs else []
    if len(scattered_inputs) < len(scattered_kwargs):
        scattered_inputs.extend(() for _ in range(len(scattered_kwargs) - len(scattered_inputs)))
    elif len(scattered_kwargs) < len(inputs):
        scattered_kwargs.extend({} for _ in range(len(scattered_inputs) - len(scattered_kwargs)))
    return tuple(scattered_inputs), tuple(scattered_kwargs)


def _gather_tensors(target: _device, dim: int, tensors: list[Tensor]) -> Tensor:
    if all(t.dim() == 0 for t in tensors):
        warnings.warn("Was asked to gather along dimension 0, but all input tensors were scalars; will instead "
                      "unsqueeze and return a vector.", stacklevel=4)
        tensors = [t.view(1) for t in tensors]
    return ops.cat([t.to(target) for t in tensors], dim)


def gather(outputs: Any, target_device, dim: int = 0) -> Any:
    """The replicas' ``outputs`` (one object per device) as one object on ``target_device``."""
    if isinstance(target_device, int) and target_device == -1:
        warnings.warn('Using -1 to represent CPU tensor is deprecated. Please use a device object or string instead, '
                      'e.g., "cpu".', FutureWarning, stacklevel=2)
    target = as_device(target_device)

    def gather_map(outs):
        out = outs[0]
        if isinstance(out, Tensor):
            return _gather_tensors(target, dim, list(outs))
        if out is None:
            return None
        if isinstance(out, dict):
            if not all(len(out) == len(d) for d in outs):
                raise ValueError("All dicts must have the same number of keys")
            return type(out)((k, gather_map([d[k] for d in outs])) for k in out)
        if _is_namedtuple(out):
            return type(out)._make(map(gather_map, zip(*outs, strict=True)))
        return type(out)(map(gather_map, zip(*outs, strict=True)))

    return gather_map(outputs)
