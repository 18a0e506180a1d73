"""``strided.save`` / ``strided.load``: checkpoints of nested Python containers, without pickle.

Note [Checkpoint files]
torch.save pickles any object; strided writes only data. A checkpoint such as nanoGPT's
``{"model": state_dict, "optimizer": opt.state_dict(), "iter_num": 5, "config": {...}}`` is stored
as one safetensors file (Note [safetensors layout] in ``nn/serialization.py``): every tensor under
a generated name, and the container tree -- dicts (str, int, float or bool keys), lists, tuples,
str, int, float, bool, None, and references to the tensors with their device and requires_grad --
as JSON in the header's metadata. A tensor that appears twice (tied weights) is written once and
loads as one tensor. Anything else raises, naming the value's type and where it is, so a
checkpoint never carries code. Files written by ``strided.nn.save`` (flat state dicts) load too, and so do
``torch.save`` files (``torch_checkpoints.py``, Note [torch.save files]).
"""

from __future__ import annotations

import io
import json
import math

from . import torch_checkpoints as _torch
from .device import device as _device
from .nn import serialization as _st
from .tensor import Tensor

__all__ = ["save", "load"]


# Note [Complex tensors in checkpoints]
# safetensors stores no complex dtypes, so a complex tensor (a rotary embedding's frequencies, an FFT filter) is
# written as its real view -- the (..., 2) float tensor of real and imaginary parts, what the safetensors library
# reads back -- and its node in the tree says "complex", so that strided.load returns the complex tensor.
def _view_as_real(t):
    from .ops import bound as ops

    return ops.view_as_real(t.contiguous())


def _view_as_complex(t):
    from .ops import bound as ops

    return ops.view_as_complex(t)


def _moved(t, dev):
    return t if dev.type == "cpu" else t.to(dev)

_KEY = "strided.tree"


def _encode(obj, where: str, tensors: dict, names: dict):
    if isinstance(obj, Tensor):
        name = names.get(id(obj))
        if name is None:
            name = names[id(obj)] = f"t{len(tensors)}"
            # Note [Complex tensors in checkpoints]: safetensors has no complex dtypes
            tensors[name] = _view_as_real(obj.detach().resolve_conj()) if obj.dtype.is_complex else obj
        node = {"tensor": name, "device": str(obj.device), "requires_grad": bool(obj.requires_grad)}
        if obj.dtype.is_complex:
            node["complex"] = True
        return node
    if obj is None or isinstance(obj, (bool, int, str)):
        return {"value": obj}
    if isinstance(obj, float):
        return {"value": obj} if math.isfinite(obj) else {"float": repr(obj)}
    if isinstance(obj, dict):
        items = []
        for k, v in obj.items():
            if not isinstance(k, (str, int, float, bool)) and k is not None:
                raise TypeError(f"strided.save: dict key {k!r} at {where} is a {type(k).__name__}; keys must be "
                                "str, int, float, bool or None")
            items.append([_encode(k, where, tensors, names), _encode(v, f"{where}[{k!r}]", tensors, names)])
        return {"dict": items}
    if isinstance(obj, (list, tuple)):
        kind = "list" if isinstance(obj, list) else "tuple"
        return {kind: [_encode(v, f"{where}[{i}]", tensors, names) for i, v in enumerate(obj)]}
    raise TypeError(f"strided.save: cannot save a {type(obj).__name__} at {where}: checkpoints hold tensors, "
                    "dicts, lists, tuples, str, int, float, bool and None (no pickle: no code or objects)")


def save(obj, f, *, format: str = "safetensors") -> None:  # noqa: A002 - the natural name
    """Write ``obj`` (a tensor or nested dicts / lists / tuples of tensors and plain values) to ``f``: a path
    (replaced atomically, Note [Atomic checkpoint writes]) or a binary file object such as ``io.BytesIO``.
    ``format="torch"`` writes torch.save's zip format instead, for ``torch.load`` (Note [Writing torch.save
    files]); :func:`load` reads both."""
    if format == "torch":
        from .torch_checkpoint_writer import save_torch_zip

        return save_torch_zip(obj, f)
    if format != "safetensors":
        raise ValueError(f"strided.save: format must be 'safetensors' or 'torch', got {format!r}")
    tensors: dict = {}
    tree = _encode(obj, "the top level", tensors, {})
    _st.save(tensors, f, metadata={_KEY: json.dumps(tree, separators=(",", ":"))})


def _target(map_location, saved: str):
    """Where a tensor saved from device ``saved`` loads: ``map_location`` (None, a device, or a dict from saved
    device names to devices, as torch's; names it does not hold stay where they were)."""
    if map_location is None:
        return _device(saved)
    if isinstance(map_location, dict):
        return _device(map_location.get(saved, saved))
    return map_location


def _decode(node, tensors: dict, map_location, cache: dict):
    if "tensor" in node:
        name = node["tensor"]
        t = cache.get(name)
        if t is None:
            dev = _target(map_location, node["device"])
            t = tensors[name] if dev.type == "cpu" else tensors[name].to(dev)
            if node.get("complex"):
                t = _view_as_complex(t)
            if node.get("requires_grad"):
                t.requires_grad_(True)
            cache[name] = t
        return t
    if "value" in node:
        return node["value"]
    if "float" in node:
        return float(node["float"])
    if "dict" in node:
        return {_decode(k, tensors, map_location, cache): _decode(v, tensors, map_location, cache)
                for k, v in node["dict"]}
    if "list" in node:
        return [_decode(v, tensors, map_location, cache) for v in node["list"]]
    if "tuple" in node:
        return tuple(_decode(v, tensors, map_location, cache) for v in node["tuple"])
    raise ValueError(f"strided.load: unknown node {sorted(node)} in the checkpoint's tree")


def _head(f) -> bytes:
    """The first bytes of a path's file or of a binary file object (whose position is left where it was)."""
    if hasattr(f, "read"):
        if isinstance(f, io.TextIOBase):
            return b""  # the safetensors reader refuses it in its words ("binary mode")
        pos = f.tell()
        head = f.read(4)
        f.seek(pos)
        return head
    with open(f, "rb") as fh:
        return fh.read(4)


def _where(f) -> str:
    return repr(str(f)) if not hasattr(f, "read") else f"the {type(f).__name__}"


def _torch_target(loc, saved: str):
    """Where a tensor torch saved from ``saved`` loads: as :func:`_target`, with torch's error for a CUDA tensor
    on a machine without CUDA."""
    dev = _target(loc, saved)
    if dev.type == "cuda":
        from . import cuda

        if not cuda.is_available():
            raise RuntimeError("Attempting to deserialize object on a CUDA device but strided.cuda.is_available() "
                               "is False. If you are running on a CPU-only machine, please use strided.load with "
                               "map_location=strided.device('cpu') to map your storages to the CPU.")
    return dev


def load(f, map_location=None, weights_only: bool = True):
    """Read what :func:`save` wrote -- or what ``torch.save`` wrote (its zip format, read as
    ``torch.load(weights_only=True)`` reads it: Note [torch.save files]) -- from a path or a binary file object;
    tensors go to ``map_location`` (a device or str, or a dict from saved device names to devices:
    ``{"cuda:1": "cuda:0"}``) or back to the device they were saved from. ``weights_only`` is accepted for torch
    compatibility: every load is weights-only (strided files never hold code, and torch files are read without
    running any)."""
    if isinstance(map_location, dict):
        if not all(isinstance(k, str) and isinstance(v, (str, _device)) for k, v in map_location.items()):
            raise TypeError("strided.load: a map_location dict maps device names (str) to devices or str, got "
                            f"{map_location!r}")
        loc = {k: str(_device(v)) for k, v in map_location.items()}
    elif map_location is not None and not isinstance(map_location, (str, _device)):
        raise TypeError(f"strided.load: map_location must be a device, a str or a dict, got "
                        f"{type(map_location).__name__} (strided has no storages to hand a callable)")
    else:
        loc = _device(map_location) if map_location is not None else None
    head = _head(f)
    if _torch.is_torch_zip(head):  # Note [torch.save files]
        return _torch.load_torch_zip(f, lambda saved: _torch_target(loc, saved), _where(f))
    if _torch.is_legacy_torch_file(head):
        raise ValueError(f"strided.load: {_where(f)} is in torch's legacy (non-zip) format, which strided does not "
                         "read; load it with torch and save it again with torch.save (torch >= 1.6 writes zip files)")
    tensors, meta = _st.load_with_metadata(f)
    if _KEY not in meta:  # a flat state dict written by strided.nn.save
        return type(tensors)((k, _moved(v, _target(loc, "cpu"))) for k, v in tensors.items())
    try:
        tree = json.loads(meta[_KEY])
    except json.JSONDecodeError as e:
        raise ValueError(f"strided.load: {f}: the checkpoint's tree is not valid JSON: {e}") from None
    return _decode(tree, tensors, loc, {})
