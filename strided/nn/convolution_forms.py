"""conv1d / conv2d / conv3d of ``strided.nn.functional`` as torch's ATen forms make them: the unbatched input made a
batch of one (torch's ``batchify`` check), the padding strings ("valid", "same": torch's ``_convolution_mode``),
then the ``convolution`` op, whose own checks come in torch's order (Note [Convolution argument checks] in
ops/composite/convolution.py)."""

from __future__ import annotations

from ..dispatch.argument_checks import check_args
from ..ops import bound as ops
from ..tensor import Tensor
from .convolution import autocast_operands

__all__ = ["conv_forward"]


def _as_list(v) -> list:
    return list(v) if isinstance(v, (list, tuple)) else [v]


def _same_padding(x: Tensor, weight: Tensor, stride, dilation, groups) -> tuple[Tensor, list]:
    """torch's ``padding="same"``: its checks, then the symmetric padding, the odd element of an even total put at
    the end of ``x`` first."""
    from .convolution3d import _padded

    k = weight.dim()
    if k <= 2:
        raise RuntimeError("weight should have at least three dimensions")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    dims = k - 2
    if k != x.dim():
        raise RuntimeError(f"Expected {k}-dimensional input for {k}-dimensional weight{list(weight.shape)}, but got "
                           f"{x.dim()}-dimensional input of size {list(x.shape)} instead")
    s, d = _as_list(stride), _as_list(dilation)
    for name, values in (("stride", s), ("dilation", d)):
        if len(values) not in (1, dims):
            raise RuntimeError(f"{name} cannot broadcast to {dims} dimensions")
    if any(v != 1 for v in s):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    d = d * dims if len(d) == 1 else d
    totals = [dd * (kk - 1) for dd, kk in zip(d, weight.shape[2:])]
    left = [t // 2 for t in totals]
    extra = [t - 2 * lo for t, lo in zip(totals, left)]
    if any(extra):
        x = _padded(x, [(0, e) for e in extra])
    return x, left


def conv_forward(op: str, n: int, input: Tensor, weight: Tensor, bias, stride, padding, dilation, groups) -> Tensor:  # noqa: A002
    """The ``n``-d convolution ``op`` (conv1d, conv2d, conv3d) of ``strided.nn.functional``."""
    check_args(op, ("input", 1, input, "Tensor"), ("weight", 2, weight, "Tensor"), ("bias", 3, bias, "Tensor?"))
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to {op}, but got input of "
                           f"size: {list(input.shape)}")
    batched = input.dim() == n + 2
    x, weight, bias = autocast_operands(input if batched else ops.unsqueeze(input, 0), weight, bias)
    if isinstance(padding, str):
        if padding == "same":
            x, padding = _same_padding(x, weight, stride, dilation, groups)
        elif padding == "valid":
            padding = [0]
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    out = ops.convolution(x, weight, bias, _as_list(stride), _as_list(padding), _as_list(dilation), False, [0],
                          groups)
    return out if batched else ops.squeeze(out, [0])
