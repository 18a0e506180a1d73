"""``F.local_response_norm``: each value divided by ``(k + alpha * mean of squares over its ``size``
neighbouring channels) ** beta``, composed as torch's Python does it: square, pad the channel dim, average
pool over channels (avg_pool2d for 3-D input, avg_pool3d above), then the power and a division."""

from __future__ import annotations

from ..ops import bound as ops
from ..tensor import Tensor
from .padding import pad
from .pooling import avg_pool2d
from .pooling3d import avg_pool3d

__all__ = ["local_response_norm"]


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> Tensor:
    """Local response normalization across channels (dim 1) of a (N, C, *) input (3-D or more)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"local_response_norm(): argument 'input' must be Tensor, not {type(input).__name__}")
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    div = input * input
    if dim == 3:
        div = pad(ops.unsqueeze(div, 1), (0, 0, size // 2, (size - 1) // 2))
        div = ops.squeeze(avg_pool2d(div, (size, 1), stride=1), [1])
    else:
        sizes = tuple(input.shape)
        div = ops.reshape(div, (sizes[0], 1, sizes[1], sizes[2], -1))
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = ops.reshape(ops.squeeze(avg_pool3d(div, (size, 1, 1), stride=1), [1]), sizes)
    return input / ops.pow(div * alpha + k, beta)
