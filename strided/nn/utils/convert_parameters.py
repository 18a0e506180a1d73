"""``parameters_to_vector`` / ``vector_to_parameters`` (torch.nn.utils.convert_parameters)."""

from __future__ import annotations

from ...ops import bound as ops
from ...tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _same_device(param: Tensor, device):
    if not isinstance(param, Tensor):
        raise TypeError(f"expected an iterable of strided.Tensor parameters, but got: {type(param).__name__}")
    if device is None:
        return param.device
    if param.device != device:
        raise TypeError("Found two parameters on different devices, this is currently not supported.")
    return device


def parameters_to_vector(parameters) -> Tensor:
    """All ``parameters`` flattened and concatenated into one 1-D tensor (a copy)."""
    device, flat = None, []
    for p in parameters:
        device = _same_device(p, device)
        flat.append(ops.reshape(p, (-1,)))
    return ops.cat(flat)


def vector_to_parameters(vec: Tensor, parameters) -> None:
    """Point each parameter's ``.data`` at its slice of ``vec`` (views of ``vec``, in order)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected strided.Tensor, but got: {type(vec).__name__}")
    device, pointer = None, 0
    for p in parameters:
        device = _same_device(p, device)
        n = p.numel()
        p.data = vec[pointer:pointer + n].view_as(p).data
        pointer += n
