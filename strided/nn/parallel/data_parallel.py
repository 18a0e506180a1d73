"""``DataParallel``: one module run on several GPUs of one process, each on a slice of the batch
(torch.nn.DataParallel), and its functional form ``data_parallel``.

Each forward scatters the inputs along ``dim`` over ``device_ids``, replicates the module on those devices
(Note [Replicas]), runs the replicas in threads (Note [Replica threads]) and gathers the outputs on
``output_device``. With one device it moves the inputs there and calls the module; without a GPU it calls
the module as it is, as torch's does.
"""

from __future__ import annotations

import warnings
from itertools import chain
from typing import Any

from ...autograd.grad_mode import is_grad_enabled
from ...device import device as _device
from ..module import Module
from .parallel_apply import parallel_apply
from .replicate import replicate
from .scatter_gather import as_device, gather, scatter_kwargs

__all__ = ["DataParallel", "data_parallel"]

_IMBALANCE = """
    There is an imbalance between your GPUs. You may want to exclude GPU {} which
    has less than 75% of the memory or cores of GPU {}. You can do so by setting
    the device_ids argument to DataParallel, or by setting the CUDA_VISIBLE_DEVICES
    environment variable."""


def _cuda():
    from ... import cuda  # (strided.cuda is not importable while strided.nn is first imported)

    return cuda


def _index(d) -> int:
    dev = as_device(d)
    if dev.type == "cpu":
        raise ValueError(f"Expected a non cpu device, but got: {dev}")  # torch's _get_device_index
    if dev.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {dev}")
    return dev.index


def _check_balance(device_ids: list[int]) -> None:
    props = [_cuda().get_device_properties(i) for i in device_ids]
    for get in (lambda p: p.total_memory, lambda p: p.multi_processor_count):
        values = [get(p) for p in props]
        lo = min(range(len(values)), key=values.__getitem__)
        hi = max(range(len(values)), key=values.__getitem__)
        if values[lo] / values[hi] < 0.75:
            warnings.warn(_IMBALANCE.format(device_ids[lo], device_ids[hi]), stacklevel=3)
            return


def _check_on_source(module: Module, src: _device) -> None:
    for t in chain(module.parameters(), module.buffers()):
        if t.device != src:
            raise RuntimeError("module must have its parameters and buffers on device "
                               f"{src} (device_ids[0]) but found one of them on device: {t.device}")


def _run(module, inputs, kwargs, device_ids, scatter_fn, replicate_fn, apply_fn, gather_fn):
    """The steps of a forward: scatter, then one call on one device or replicate, apply and gather."""
    inputs, module_kwargs = scatter_fn(inputs, kwargs, device_ids)
    if not inputs and not module_kwargs:  # a forward without inputs runs on the first device
        inputs, module_kwargs = ((),), ({},)
    if len(device_ids) == 1:
        return module(*inputs[0], **module_kwargs[0])
    used = device_ids[:len(inputs)]
    replicas = replicate_fn(module, used)
    return gather_fn(apply_fn(replicas, inputs, module_kwargs, used))


class DataParallel(Module):
    """Runs ``module`` on the GPUs of ``device_ids`` (all by default), each on its slice of the batch along
    ``dim``; outputs are gathered on ``output_device`` (``device_ids[0]`` by default) and gradients reach the
    module's own parameters. The module must be on ``device_ids[0]``."""

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0) -> None:
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DataParallel: module must be an nn.Module, not {type(module).__name__}")
        if not _cuda().is_available():
            self.module = module
            self.device_ids = []
            return
        if device_ids is None:
            device_ids = list(range(_cuda().device_count()))
        if output_device is None:
            output_device = device_ids[0]
        self.dim = dim
        self.module = module
        self.device_ids = [_index(d) for d in device_ids]
        self.output_device = _index(output_device)
        self.src_device_obj = _device("cuda", self.device_ids[0])
        _check_balance(self.device_ids)
        if len(self.device_ids) == 1:
            self.module.to(self.src_device_obj)

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        _check_on_source(self.module, self.src_device_obj)
        return _run(self.module, inputs, kwargs, self.device_ids, self.scatter, self.replicate,
                    lambda replicas, ins, kws, _used: self.parallel_apply(replicas, ins, kws),
                    lambda outputs: self.gather(outputs, self.output_device))

    def replicate(self, module: Module, device_ids) -> list[Module]:
        return replicate(module, device_ids, not is_grad_enabled())

    def scatter(self, inputs, kwargs, device_ids):
        return scatter_kwargs(inputs, kwargs, device_ids, dim=self.dim)

    def parallel_apply(self, replicas, inputs, kwargs) -> list:
        return parallel_apply(replicas, inputs, kwargs, self.device_ids[:len(replicas)])

    def gather(self, outputs, output_device):
        return gather(outputs, output_device, dim=self.dim)


def data_parallel(module: Module, inputs, device_ids=None, output_device=None, dim: int = 0, module_kwargs=None):
    """One call of ``module(*inputs, **module_kwargs)`` spread over ``device_ids`` as DataParallel's forward."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    if not _cuda().is_available():
        raise RuntimeError("device type could not be determined")
    if device_ids is None:
        device_ids = list(range(_cuda().device_count()))
    if output_device is None:
        output_device = device_ids[0]
    device_ids = [_index(d) for d in device_ids]
    output_device = _index(output_device)
    _check_on_source(module, _device("cuda", device_ids[0]))
    return _run(module, inputs, module_kwargs, device_ids, lambda ins, kws, ids: scatter_kwargs(ins, kws, ids, dim),
                lambda m, ids: replicate(m, ids, not is_grad_enabled()), parallel_apply,
                lambda outputs: gather(outputs, output_device, dim))
