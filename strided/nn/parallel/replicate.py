"""Copies of a module on several devices that share its parameters' gradients (torch.nn.parallel.replicate).

Note [Replicas]
As torch's, a replica is a shallow copy of every submodule whose parameters are not Parameters but
differentiable copies of the originals on the replica's device: ``p.to(device)`` (an alias of ``p`` on
its own device), so backward through any replica accumulates into the original ``p.grad``. Buffers are
copied the same way, detached unless they require grad. With ``detach=True`` (DataParallel under no_grad)
every copy is detached. torch broadcasts the tensors in coalesced buckets; here each is one copy.
"""

from __future__ import annotations

from ..module import Module
from ..parameter import Parameter
from .scatter_gather import as_device

__all__ = ["replicate"]


def _copy(t, device, detach: bool):
    out = (t.detach() if detach else t).to(device)
    if out is t or isinstance(out, Parameter):
        out = out.view_as(out)  # a differentiable alias: a replica's parameters are not leaves (Note [Replicas])
    return out


def _shallow_copy(module: Module) -> Module:
    replica = module.__new__(type(module))
    d = replica.__dict__
    d.update(module.__dict__)
    d["_parameters"] = {}
    d["_buffers"] = dict(module._buffers)
    d["_modules"] = dict(module._modules)
    d["_is_replica"] = True
    return replica


def replicate(network: Module, devices, detach: bool = False) -> list[Module]:
    """One replica of ``network`` per device in ``devices`` (Note [Replicas])."""
    if not isinstance(network, Module):
        raise TypeError(f"replicate(): network must be an nn.Module, not {type(network).__name__}")
    if not devices:
        return []
    devices = [as_device(d) for d in devices]
    modules = list(network.modules())
    index = {id(m): i for i, m in enumerate(modules)}
    copies = [[_shallow_copy(m) for m in modules] for _ in devices]
    cache: dict = {}  # (id of a tensor, replica) -> its copy: a tensor two submodules share is copied once
    for i, module in enumerate(modules):
        for j, device in enumerate(devices):
            replica = copies[j][i]
            for key, child in module._modules.items():
                replica._modules[key] = None if child is None else copies[j][index[id(child)]]
            for key, param in module._parameters.items():
                if param is None:
                    replica._parameters[key] = None
                    continue
                copy = cache.get((id(param), j))
                if copy is None:
                    copy = cache[(id(param), j)] = _copy(param, device, detach)
                object.__setattr__(replica, key, copy)  # a plain attribute: not a Parameter of the replica
            for key, buf in module._buffers.items():
                if buf is not None:
                    copy = cache.get((id(buf), j))
                    if copy is None:
                        copy = cache[(id(buf), j)] = _copy(buf, device, detach or not buf.requires_grad)
                    replica._buffers[key] = copy
    return [copies[j][0] for j in range(len(devices))]
