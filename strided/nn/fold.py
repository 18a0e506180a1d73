"""``fold`` of ``strided.nn.functional`` (torch's col2im): the inverse arrangement of ``unfold``, columns of
sliding blocks summed back into an image.

Note [Fold as col2im]
``fold`` is the col2im half of a transposed convolution (Note [Transposed convolution as col2im]) with no
GEMM before it: the (N, C * KH * KW, L) input is reshaped to (N, C, KH, KW, LH, LW) windows, where
(LH, LW) is the block grid that ``output_size`` gives, and ``_col2im`` adds each of its KH * KW planes
into a strided view of the zero, padded (N, C, H + 2 * PH, W + 2 * PW) output; the padded border is cut
off last. Overlapping windows sum, so ``fold(unfold(x))`` is ``x`` times the number of blocks that cover
each position. ``fold`` is the ``col2im`` op (its composite in ``ops/composite/im2col.py``, one CUDA kernel on
CUDA); its gradient is ``im2col`` (``unfold``) of the upstream gradient, and the other way round.
"""

from __future__ import annotations

from ..ops import bound as ops
from ..tensor import Tensor
from .convolution import _check_tensors, _is_int

__all__ = ["fold"]


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Sum the columns of sliding blocks of (N, C * KH * KW, L) (or (C * KH * KW, L)) ``input`` into an
    (N, C, H, W) (or (C, H, W)) image of ``output_size`` (H, W) (Note [Fold as col2im])."""
    _check_tensors("fold", input=input)
    # as torch's F.fold: an int is both sizes, anything else goes to col2im as it is (which checks it)
    return ops.col2im(input, *((v, v) if _is_int(v) else v
                               for v in (output_size, kernel_size, dilation, padding, stride)))
