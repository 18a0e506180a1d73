"""``F.pad`` (torch.nn.functional.pad) composed of operators: constant, reflect, replicate, circular.

``pad`` lists (left, right) amounts for the last dim, then for the one before, and so on; negative
amounts crop. Constant padding is the ``constant_pad_nd`` operator (Note [Constant padding]); the other modes
gather the source positions of every output position along each padded dim (``index_select``), differentiable
through the ops they call. Both run on every backend.
"""

from __future__ import annotations

from .. import dtypes as _dt
from ..backends.meta.pointwise import not_implemented
from ..factories import tensor as _tensor
from ..ops import bound as ops
from ..tensor import Tensor
from .channels_last import keeps_channels_last

__all__ = ["pad"]

_MODES = ("constant", "reflect", "replicate", "circular")


def _circular(input, pad, mode: str = "constant", value=None) -> bool:
    return mode == "circular"  # torch's circular padding is a composition: contiguous (Note [Channels-last outputs])


@keeps_channels_last(unless=_circular)
def pad(input: Tensor, pad, mode: str = "constant", value: float | None = None) -> Tensor:
    """Pad (or crop, with negative amounts) the last ``len(pad) // 2`` dims of ``input``."""
    if not isinstance(input, Tensor):
        raise TypeError(f"pad(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if not isinstance(pad, (tuple, list)):
        raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, not {type(pad).__name__}")
    for p in pad:
        if type(p) is not int:
            raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, not {type(pad).__name__} "
                            f"with a {type(p).__name__}")
    amounts = tuple(pad)
    if len(amounts) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    nd, k = input.dim(), len(amounts) // 2
    if k > nd:
        raise RuntimeError("Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(amounts)} and input of dimension {nd}")
    if mode not in _MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if mode != "constant":
        if value is not None and value != 0:
            raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
        if k not in (1, 2, 3) or nd not in (k + 1, k + 2):
            raise NotImplementedError(f"Padding size {len(amounts)} is not supported for {nd}D input tensor. "
                                      "Supported combinations for non-constant padding: 2D or 3D input with padding "
                                      "size 2, 3D or 4D with 4, 4D or 5D with 6")
    if mode in ("reflect", "replicate") and input.dtype.name == "bool":  # torch's kernels take no bool
        name = "reflection" if mode == "reflect" else "replication"
        cuda = {"reflection": ("reflection_pad1d_out", "reflection_pad2d_out_template", "reflection_pad3d_out_cuda"),
                "replication": tuple(f"replication_pad{i}d_cuda" for i in (1, 2, 3))}[name][k - 1]
        raise not_implemented(cuda if input.device.type == "cuda" else f"{name}_pad{k}d", input.dtype)
    if mode == "constant":  # the constant_pad_nd op (Note [Constant padding])
        for j in range(k):
            n, lo, hi = input._sizes[nd - 1 - j], amounts[2 * j], amounts[2 * j + 1]
            if n + min(lo, 0) + min(hi, 0) < 0:
                raise RuntimeError(f"The input size {n}, plus negative padding {min(lo, 0)} and {min(hi, 0)} resulted "
                                   f"in a negative output size, which is invalid. Check dimension {nd - 1 - j} of "
                                   "your input.")
        return ops.constant_pad_nd(input, list(amounts), value or 0)
    out = input
    for j in range(k):
        dim = nd - 1 - j
        lo, hi = amounts[2 * j], amounts[2 * j + 1]
        if lo or hi:
            out = _gather(out, dim, lo, hi, mode)
    return out


def _gather(x: Tensor, dim: int, lo: int, hi: int, mode: str) -> Tensor:
    n = x._sizes[dim]
    if mode == "reflect" and (lo >= n or hi >= n):
        raise RuntimeError("Argument #4: Padding size should be less than the corresponding input dimension, but got: "
                           f"padding ({lo}, {hi}) at dimension {dim} of input {list(x._sizes)}")
    if mode == "circular" and (lo > n or hi > n):
        raise RuntimeError("Padding value causes wrapping around more than once.")
    if mode == "circular" and n + lo + hi < 0:
        raise RuntimeError("Negative padding value is resulting in an empty dimension")
    # Note [Circular padding after the crop]: torch copies the cropped input into the middle of the output, then
    # wraps the pads from that middle; a negative pad on one side therefore crops before the other side wraps.
    start = max(-lo, 0)
    kept = n - start - max(-hi, 0)
    idx = []
    for i in range(-lo, n + hi):
        if mode == "replicate":
            r = min(max(i, 0), n - 1)
        elif mode == "circular":
            r = start + (i - start) % kept if kept > 0 else 0
        else:
            r = abs(i)
            if r >= n:
                r = 2 * (n - 1) - r
        idx.append(r)
    return ops.index_select(x, dim, _tensor(idx, dtype=_dt.int64, device=x.device))


def _autocast_policy(device_type: str):
    """torch's reflection / replication pads are native kernels; on the CPU float32 list: reflection_pad1d / 2d and
    replication_pad1d / 2d / 3d (Note [Autocast around composed functions]). Constant and circular padding compose."""
    def policy(input, pad, mode="constant", value=None):
        if mode not in ("reflect", "replicate"):
            return None
        if device_type == "cpu" and (len(pad) in (2, 4) or (mode == "replicate" and len(pad) == 6)):
            return "fp32"
        return "native"
    return policy


from ..amp.composed_functions import wrap_policies as _wrap_policies  # noqa: E402

_wrap_policies(globals(), {"pad": {"cpu": _autocast_policy("cpu"), "cuda": _autocast_policy("cuda")}})
