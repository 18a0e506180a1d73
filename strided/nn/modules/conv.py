"""Convolution layers: ``Conv1d`` and ``Conv2d`` (torch's parameters, initialization and reprs)."""

from __future__ import annotations

import math

from ... import factories
from ...tensor import Tensor
from .. import convolution as C
from .. import init
from ..module import Module
from ..padding import pad
from ..parameter import Parameter

__all__ = ["Conv1d", "Conv2d"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _tuple(v, n: int) -> tuple:
    return (v,) * n if isinstance(v, int) else tuple(v)


class _ConvNd(Module):
    _n = 2

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        n = self._n
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("valid", "same"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
            if padding == "same" and any(s != 1 for s in _tuple(stride, n)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(
                f"padding_mode must be one of {list(_PADDING_MODES)}, but got padding_mode='{padding_mode}'"
            )
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride = _tuple(kernel_size, n), _tuple(stride, n)
        self.padding = padding if isinstance(padding, str) else _tuple(padding, n)
        self.dilation, self.groups, self.padding_mode = _tuple(dilation, n), groups, padding_mode
        self.weight = Parameter(
            factories.empty((out_channels, in_channels // groups, *self.kernel_size), device=device, dtype=dtype)
        )
        if bias:
            self.bias = Parameter(factories.empty((out_channels,), device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        # kaiming_uniform_(a=sqrt(5)) is U(-1/sqrt(fan_in), 1/sqrt(fan_in)), as torch's layers.
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.weight.shape[1] * math.prod(self.kernel_size)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * self._n:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * self._n:
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def _input(self, input: Tensor):
        """The input padded by ``padding_mode`` (then convolved with no padding), or as is."""
        if self.padding_mode == "zeros" or isinstance(self.padding, str) and self.padding == "valid":
            return input, self.padding
        if isinstance(self.padding, str):  # "same": the conv's own split of the total
            total = [d * (k - 1) for d, k in zip(self.dilation, self.kernel_size)]
            amounts = [(t // 2, t - t // 2) for t in total]
        else:
            amounts = [(p, p) for p in self.padding]
        flat = [a for pair in reversed(amounts) for a in pair]
        return pad(input, flat, mode=self.padding_mode), 0


class Conv2d(_ConvNd):
    """2-d convolution over (N, C_in, H, W) or (C_in, H, W) inputs."""

    _n = 2

    def forward(self, input: Tensor) -> Tensor:
        x, padding = self._input(input)
        return C.conv2d(x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)


class Conv1d(_ConvNd):
    """1-d convolution over (N, C_in, L) or (C_in, L) inputs."""

    _n = 1

    def forward(self, input: Tensor) -> Tensor:
        x, padding = self._input(input)
        return C.conv1d(x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)
