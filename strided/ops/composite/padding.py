"""``constant_pad_nd`` (F.pad's constant mode, torch.constant_pad_nd) as one operator with torch's node.

Note [Constant padding]
torch's constant_pad_nd crops the negative amounts with ``narrow``, then writes the input once into a tensor
filled with the value (laid out as the input suggests: a channels-last input gives a channels-last output), and
its gradient is the same op with the amounts negated (``constant_pad_nd_backward``): one node, ConstantPadNdBackward0.
F.pad used to concatenate filled blocks per padded dim (one ``cat`` and two fills per dim, a node each).
"""

from __future__ import annotations

from ...backends.meta.common import check
from ...backends.meta.pointwise import check_scalar_fits
from ...dispatch.library import kernel
from .. import bound as ops

__all__ = []


@kernel("CompositeExplicitAutograd")
def constant_pad_nd(self, pad, value=0):
    """``self`` with ``pad[2j], pad[2j + 1]`` elements of ``value`` before / after dim ``-1 - j`` (negative amounts
    crop), as torch's."""
    from ...conversion import suggest_memory_format

    pad = list(pad)
    check(len(pad) % 2 == 0, lambda: f"Length of pad must be even but instead it equals {len(pad)}")
    nd, k = self.dim(), len(pad) // 2
    check(k <= nd, lambda: f"Length of pad should be no more than twice the number of dimensions of the input. Pad "
                           f"length is {len(pad)}while the input has {nd}dimensions.")
    check_scalar_fits(value, self.dtype)
    x = self
    for j in range(k):  # the crops first, as torch's (narrow's own errors for too much)
        dim = nd - 1 - j
        lo, hi = pad[2 * j], pad[2 * j + 1]
        if lo < 0:
            x = ops.narrow(x, dim, -lo, x.size(dim) + lo)
        if hi < 0:
            x = ops.narrow(x, dim, 0, x.size(dim) + hi)
    if all(p <= 0 for p in pad):
        return ops.clone(x)
    sizes = list(x._sizes)
    for j in range(k):
        sizes[nd - 1 - j] += max(pad[2 * j], 0) + max(pad[2 * j + 1], 0)
    out = ops.empty(sizes, dtype=self.dtype, device=self.device, memory_format=suggest_memory_format(self))
    ops.fill_(out, value)
    region = out
    for j in range(k):
        dim = nd - 1 - j
        region = ops.narrow(region, dim, max(pad[2 * j], 0), x.size(dim))
    ops.copy_(region, x)
    return out
