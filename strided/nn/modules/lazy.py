"""Lazy layers: ``LazyLinear``, ``LazyConv1d/2d/3d``, ``LazyConvTranspose1d/2d/3d``, ``LazyBatchNorm1d/2d/3d``
and ``LazyInstanceNorm1d/2d/3d`` take their input size (in_features, in_channels, num_features) from the first
input they see.

Note [Lazy layers]
As torch's ``LazyModuleMixin``: the layer starts with ``UninitializedParameter`` / ``UninitializedBuffer``
placeholders and a forward pre-hook. The first call reads the input's size, ``materialize``s each placeholder
(the same objects, so an optimizer built before the first call keeps working), runs ``reset_parameters``,
removes the hook and turns the module into its ``cls_to_become`` (LazyLinear becomes Linear). Loading a
state dict into a lazy layer materializes the placeholders to the loaded shapes first. Moving a lazy layer
(``.to``, ``.cuda()``) moves its placeholders and keeps them placeholders.
"""

from __future__ import annotations

from ... import dtypes as dt
from ... import factories
from ..parameter import UninitializedBuffer, UninitializedParameter, is_lazy
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .linear import Linear

__all__ = [
    "LazyLinear",
    "LazyConv1d",
    "LazyConv2d",
    "LazyConv3d",
    "LazyConvTranspose1d",
    "LazyConvTranspose2d",
    "LazyConvTranspose3d",
    "LazyBatchNorm1d",
    "LazyBatchNorm2d",
    "LazyBatchNorm3d",
    "LazyInstanceNorm1d",
    "LazyInstanceNorm2d",
    "LazyInstanceNorm3d",
]


class LazyModuleMixin:
    """Infer the shapes of a layer's parameters from its first input (Note [Lazy layers])."""

    cls_to_become: type | None = None

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters)

    def initialize_parameters(self, *args) -> None:
        raise NotImplementedError(f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self) -> bool:
        """True while any parameter or buffer is still a placeholder."""
        return any(is_lazy(t) for t in (*self._parameters.values(), *self._buffers.values()))

    def _infer_parameters(self, module, args) -> None:
        module.initialize_parameters(*args)
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        del module._initialize_hook
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        for name, t in (*self._parameters.items(), *((k, v) for k, v in self._buffers.items()
                                                      if k not in self._non_persistent_buffers_set)):
            if t is not None:
                destination[prefix + name] = t if (keep_vars or is_lazy(t)) else t.detach()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs, assign=False) -> None:
        for name, t in (*self._parameters.items(), *self._buffers.items()):
            key = prefix + name
            if t is not None and is_lazy(t) and key in state_dict and not is_lazy(state_dict[key]):
                t.materialize(state_dict[key].shape)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs, assign)

    def _apply(self, fn, recurse: bool = True):
        lazy = {k: b.requires_grad for k, b in self._buffers.items() if b is not None and is_lazy(b)}
        super()._apply(fn, recurse)
        for key, requires_grad in lazy.items():  # a moved placeholder is still a placeholder
            moved = self._buffers[key]
            if not is_lazy(moved):
                self._buffers[key] = UninitializedBuffer(requires_grad, moved.device, moved.dtype)
        return self


class LazyLinear(LazyModuleMixin, Linear):
    """:class:`Linear` whose ``in_features`` is the last dim of its first input."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args) -> None:
        if self.has_uninitialized_params():
            self.in_features = input.shape[-1]
            self.weight.materialize((self.out_features, self.in_features))
            if self.bias is not None:
                self.bias.materialize((self.out_features,))
            self.reset_parameters()


class _LazyConvMixin(LazyModuleMixin):
    def _lazy_init(self, out_channels: int, bias: bool, device, dtype) -> None:
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args) -> None:
        if not self.has_uninitialized_params():
            return
        batched = self._n + 2
        if input.dim() not in (batched - 1, batched):
            raise RuntimeError(f"Expected {batched - 1}D (unbatched) or {batched}D (batched) input to "
                               f"{self.__class__.__name__}, but got input of size: {input.shape}")
        self.in_channels = input.shape[1] if input.dim() == batched else input.shape[0]
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if self._transposed:
            self.weight.materialize((self.in_channels, self.out_channels // self.groups, *self.kernel_size))
        else:
            self.weight.materialize((self.out_channels, self.in_channels // self.groups, *self.kernel_size))
        if self.bias is not None:
            self.bias.materialize((self.out_channels,))
        self.reset_parameters()


class _LazyConv(_LazyConvMixin):
    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, dilation=1, groups: int = 1,
                 bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode)
        self._lazy_init(out_channels, bias, device, dtype)


class _LazyConvTranspose(_LazyConvMixin):
    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0, groups: int = 1,
                 bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation, padding_mode)
        self._lazy_init(out_channels, bias, device, dtype)


class LazyConv1d(_LazyConv, Conv1d):
    """:class:`Conv1d` whose ``in_channels`` comes from its first input."""

    cls_to_become = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    """:class:`Conv2d` whose ``in_channels`` comes from its first input."""

    cls_to_become = Conv2d


class LazyConv3d(_LazyConv, Conv3d):
    """:class:`Conv3d` whose ``in_channels`` comes from its first input."""

    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    """:class:`ConvTranspose1d` whose ``in_channels`` comes from its first input."""

    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    """:class:`ConvTranspose2d` whose ``in_channels`` comes from its first input."""

    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    """:class:`ConvTranspose3d` whose ``in_channels`` comes from its first input."""

    cls_to_become = ConvTranspose3d


class _LazyNorm(LazyModuleMixin):
    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *, bias: bool = True) -> None:
        super().__init__(0, eps, momentum, False, False, device, dtype)
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = factories.tensor(0, dtype=dt.int64, device=device)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args) -> None:
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            for t in (self.weight, self.bias, self.running_mean, self.running_var):
                if t is not None and is_lazy(t):
                    t.materialize((self.num_features,))
            self.reset_parameters()


class LazyBatchNorm1d(_LazyNorm, BatchNorm1d):
    """:class:`BatchNorm1d` whose ``num_features`` is dim 1 of its first input."""

    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNorm, BatchNorm2d):
    """:class:`BatchNorm2d` whose ``num_features`` is dim 1 of its first input."""

    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyNorm, BatchNorm3d):
    """:class:`BatchNorm3d` whose ``num_features`` is dim 1 of its first input."""

    cls_to_become = BatchNorm3d


class LazyInstanceNorm1d(_LazyNorm, InstanceNorm1d):
    """:class:`InstanceNorm1d` whose ``num_features`` is dim 1 of its first input (torch's lazy defaults:
    affine and running statistics on)."""

    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyNorm, InstanceNorm2d):
    """:class:`InstanceNorm2d` whose ``num_features`` is dim 1 of its first input."""

    cls_to_become = InstanceNorm2d


class LazyInstanceNorm3d(_LazyNorm, InstanceNorm3d):
    """:class:`InstanceNorm3d` whose ``num_features`` is dim 1 of its first input."""

    cls_to_become = InstanceNorm3d
