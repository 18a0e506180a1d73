"""Which ``nn.functional`` results come back channels-last, as torch's do.

Note [Channels-last outputs]
torch's convolutions, most pools, interpolation, padding and unpooling return their 4-d (5-d) result laid
out NHWC (NDHWC) when the input is -- convolutions also when the weight is -- so a network converted with
``model.to(memory_format=torch.channels_last)`` stays channels-last layer after layer. Which functions do
is torch's choice, function by function (avg_pool3d and the adaptive 3-d pools return contiguous results,
circular padding too); ``tests/backend/test_channels_last_outputs.py`` checks each against torch. strided's
compositions compute in NCHW and lay the result out afterwards (one copy of the result, differentiable);
``conv2d`` without groups computes NHWC directly (its GEMM's operands swapped), so it pays none.
"""

from __future__ import annotations

import functools

from ..conversion import suggest_memory_format
from ..ops import bound as ops
from ..tensor import Tensor

__all__ = ["keeps_channels_last", "channels_last_format", "as_format"]


def channels_last_format(*tensors) -> str | None:
    """"channels_last" / "channels_last_3d" if one of ``tensors`` (None skipped) is laid out so, else None."""
    for t in tensors:
        if isinstance(t, Tensor):
            mf = suggest_memory_format(t)
            if mf != "contiguous_format":
                return mf
    return None


def as_format(out, mf: str | None):
    """``out`` (a tensor, or a tuple of them) in memory format ``mf`` where its rank fits; unchanged for None."""
    if mf is None:
        return out
    if isinstance(out, tuple):  # values and indices
        return tuple(as_format(o, mf) for o in out)
    rank = 4 if mf == "channels_last" else 5
    if not isinstance(out, Tensor) or len(out._sizes) != rank or out.is_contiguous(memory_format=mf):
        return out
    return ops.contiguous(out, memory_format=mf)


def keeps_channels_last(*, weight: bool = False, rank: int | None = None, unless=None):
    """Decorate an ``nn.functional`` function whose result follows its input's channels-last layout
    (Note [Channels-last outputs]). ``weight``: the second argument's layout counts too; ``rank``: only an
    input of this rank; ``unless(*args, **kwargs)``: calls that keep the contiguous layout."""
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            out = fn(*args, **kwargs)
            x = args[0] if args else kwargs.get("input")
            if not isinstance(x, Tensor) or (rank is not None and len(x._sizes) != rank):
                return out
            w = (args[1] if len(args) > 1 else kwargs.get("weight")) if weight else None
            mf = channels_last_format(x, w)
            if mf is None or (unless is not None and unless(*args, **kwargs)):
                return out
            return as_format(out, mf)

        return wrapper

    return decorate
