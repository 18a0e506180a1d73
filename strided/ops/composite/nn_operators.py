"""torch.nn.functional's losses that have their own autograd node in torch, composed here of other ops below
autograd (CompositeExplicitAutograd): ``mse_loss``, ``smooth_l1_loss`` and ``huber_loss``; the activations of the
same kind are in ``nn_activations.py``.

Note [Functional operators]
Composed in ``nn/activations.py`` (Note [Composed activation gradients]), hardtanh recorded six nodes (two
comparisons, their ``or`` and ``not``, a clamp of the detached input and a ``where``) and leaky_relu three; as
operators they record one node each -- ``HardtanhBackward0`` / ``LeakyReluBackward0``, torch's names -- that saves
one tensor, and their forwards run below autograd: hardtanh is one ``clamp``, leaky_relu ``where(x > 0, x,
x * slope)``. Their gradients are torch's kernels' (``hardtanh_backward`` passes the gradient where not ``x <= min``
or ``x >= max``, so at NaN too; ``leaky_relu_backward`` where ``x > 0``, else scaled by the slope), composed in
``autograd/functions_activations.py`` so that they differentiate again. elu (selu), celu, hardsigmoid, hardswish,
mish, softshrink, hardshrink, threshold, log_sigmoid and glu followed: 2-6 nodes each became torch's one
(``EluBackward0``, ``CeluBackward0``, ... ``GluBackward0``), elu_ / celu_ (``EluBackward1`` / ``CeluBackward1``)
saving their result, the autogen in-place forms (hardsigmoid_, hardswish_, mish_, threshold_) a copy of the old
input, as torch's. hardtanh's reads its result (``clamp`` keeps each
side of the bounds and NaN), so ``hardtanh_`` (``relu6(inplace=True)``, MobileNet's) saves the written tensor and
no copy; leaky_relu's reads the input, as torch's, and ``leaky_relu_``'s the result, with torch's error for a
negative slope. mse_loss (``MseLossBackward0``) was a subtraction, a product and a reduction, three nodes saving the
difference; as torch's it saves its two operands and one formula (torch's ``mse_loss_backward``: ``2 (x - t) grad``,
over the count for a mean) serves both, F.mse_loss broadcasting the two first as torch's does. smooth_l1_loss and
huber_loss likewise (``SmoothL1LossBackward0`` / ``HuberLossBackward0``: torch's piecewise-linear backward kernels,
the target's gradient the negation); smooth_l1 with ``beta=0`` stays l1_loss and a weighted huber_loss the op's
unreduced loss times the weight, as in torch.
"""

from __future__ import annotations

from ...dispatch.library import kernel
from .. import bound as ops

__all__ = []


@kernel("CompositeExplicitAutograd")
def mse_loss(self, target, reduction=1):
    """``(self - target) ** 2`` as a product, then mean (1), sum (2) or nothing (0), as torch's reduction enum."""
    diff = self - target
    sq = diff * diff
    return _reduce(sq, reduction)


def _reduce(loss, reduction):
    if reduction == 0:
        return loss
    return ops.mean(loss) if reduction == 1 else ops.sum(loss)


@kernel("CompositeExplicitAutograd")
def smooth_l1_loss(self, target, reduction=1, beta=1.0):
    """``0.5 z**2 / beta`` where ``z = |self - target| < beta``, else ``z - 0.5 beta``; reduced."""
    z = ops.abs(self - target)
    return _reduce(ops.where(ops.lt(z, beta), 0.5 * z * z / beta, z - 0.5 * beta), reduction)


@kernel("CompositeExplicitAutograd")
def huber_loss(self, target, reduction=1, delta=1.0):
    """``0.5 z**2`` where ``z = |self - target| < delta``, else ``delta (z - 0.5 delta)``; reduced."""
    z = ops.abs(self - target)
    return _reduce(ops.where(ops.lt(z, delta), 0.5 * z * z, delta * (z - 0.5 * delta)), reduction)
