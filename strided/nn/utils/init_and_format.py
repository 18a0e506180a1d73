"""``skip_init`` (a module built without running its initializers) and the convolution weight memory-format
converters of torch.nn.utils."""

from __future__ import annotations

import inspect

__all__ = ["skip_init", "convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def skip_init(module_cls, *args, **kwargs):
    """``module_cls(*args, **kwargs)`` with uninitialized parameters: built on the meta device, then given empty
    memory on ``device`` (default CPU)."""
    from ..module import Module

    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    kwargs["device"] = "meta"
    return module_cls(*args, **kwargs).to_empty(device=final_device)


def _convert(module, memory_format, classes):
    if isinstance(module, classes):
        module.weight.data = module.weight.detach().clone(memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, classes)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """Every Conv2d / ConvTranspose2d weight in ``module`` laid out in ``memory_format`` (e.g. channels_last)."""
    from ..modules.conv import Conv2d, ConvTranspose2d

    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    """Every Conv3d / ConvTranspose3d weight in ``module`` laid out in ``memory_format`` (channels_last_3d)."""
    from ..modules.conv import Conv3d, ConvTranspose3d

    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
