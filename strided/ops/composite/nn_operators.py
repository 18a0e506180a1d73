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
unreduced loss times the weight, as in torch. nll_loss, binary_cross_entropy and binary_cross_entropy_with_logits
followed (NllLossBackward0 / NllLoss2DBackward0, BinaryCrossEntropyBackward0,
BinaryCrossEntropyWithLogitsBackward0 instead of 5-12 composed nodes; the old custom autograd.Function of
binary_cross_entropy is gone): their gradients are torch's formulas in ``autograd/functions_nn.py``, not the
derivatives of the compositions -- binary_cross_entropy's ``(x - t) / max(x (1 - x), 1e-12)`` is finite where a
saturated sigmoid gives x = 0 or 1, which the clamped logs' derivative is not.

Note [NLL loss operator]
As torch's, ``nll_loss_forward`` (1-d or 2-d log-probabilities) and ``nll_loss2d_forward`` (N, C, H, W) return the
loss and ``total_weight``, the summed weight of the counted targets (the mean's divisor; 0 for an unreduced batch,
as torch's); F.nll_loss views other ranks as (N, C, 1, -1) first. The loss gathers ``-input[target] *
weight[target]`` along the class dim; an ignored target gives 0 through ``where`` (so a ``-inf`` log-probability
there makes no NaN). A class index out of range is reported as strided's ``cross_entropy`` does: on the CPU an
``IndexError`` (the check is a host read, free there); elsewhere the loss is NaN where a target is bad, with no
device sync (torch's CUDA kernels assert on the device). The gradient scatters ``-weight[t] * grad`` (over
``total_weight`` for a mean) into zeros.
"""

from __future__ import annotations

from ... import dtypes as dt
from ...backends.meta.common import check
from ...backends.meta.normalization import _nll_loss_nd
from ...backends.meta.pointwise import not_implemented, scalar_type_name
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
    """``0.5 z**2`` where ``z = |self - target| < delta``, else ``delta (z - 0.5 delta)``; reduced. The loss has
    ``self``'s dtype, as torch's (it writes into ``empty_like(input)``) where mse / smooth_l1 promote."""
    z = ops.abs(self - target)
    loss = ops.where(ops.lt(z, delta), 0.5 * z * z, delta * (z - 0.5 * delta))
    return _reduce(loss if loss.dtype is self.dtype else loss.to(self.dtype), reduction)


def _nll_kernel_name(self, spatial: bool) -> str:
    if self.device.type == "cuda":  # torch 2.11's CUDA kernels
        return "nll_loss2d_forward_kernel" if spatial else "nll_loss_forward_out_cuda_template"
    return "nll_loss2d_forward_out_frame" if spatial else "nll_loss_out_frame"


def _nll_loss(self, target, weight, reduction, ignore_index, spatial):
    """(output, total_weight) of torch's nll_loss_forward / nll_loss2d_forward (Note [NLL loss operator])."""
    _nll_loss_nd(self, target, weight)  # torch's checks, in its order
    if not self.dtype.is_floating_point:
        raise not_implemented(_nll_kernel_name(self, spatial), self.dtype)
    class_dim = 0 if self.dim() == 1 else 1
    n_classes = self.size(class_dim)
    t = _class_targets(self, target)
    ignored = ops.eq(t, ignore_index)
    bad = ops.logical_and(ops.logical_not(ignored), ops.logical_or(ops.lt(t, 0), ops.ge(t, n_classes)))
    on_host = self.device.type == "cpu"
    if on_host and t.numel() and bad.any().item():
        raise IndexError(f"Target {t[bad].reshape(-1)[0].item()} is out of bounds.")
    safe = ops.where(ops.logical_or(ignored, bad), 0, t)
    if n_classes:
        picked = ops.squeeze(ops.gather(self, class_dim, ops.unsqueeze(safe, class_dim)), class_dim)
    else:
        picked = ops.zeros(t.shape, dtype=self.dtype, device=self.device)
    if weight is None:
        counted = ops.logical_not(ignored).to(self.dtype)
        loss = ops.where(ignored, 0.0, ops.neg(picked))
    else:
        w = _class_weights(weight, safe, picked)
        counted = ops.where(ignored, 0.0, w)
        loss = ops.where(ignored, 0.0, ops.neg(picked * w))
    if not on_host:  # no device sync to check the targets: a bad one makes its loss NaN
        loss = ops.where(bad, float("nan"), loss)
    if reduction == 0:
        total = counted if self.dim() == 1 else ops.zeros((), dtype=self.dtype, device=self.device)
        return loss, total
    total = ops.sum(counted)
    summed = ops.sum(loss)
    return (summed / total if reduction == 1 else summed), total


def _class_targets(self, target):
    """The targets as int64, a 1-d input's one target as a 0-dim tensor."""
    t = target if target.dtype is dt.int64 else target.to(dt.int64)
    return ops.reshape(t, ()) if self.dim() == 1 else t


def _class_weights(weight, safe, like):
    if not like.numel():
        return ops.zeros_like(like)
    return ops.reshape(ops.index_select(weight, 0, ops.reshape(safe, (-1,))), safe.shape)


@kernel("CompositeExplicitAutograd")
def nll_loss_forward(self, target, weight, reduction, ignore_index):
    """``-self[i, target[i]] * weight[target[i]]`` per sample (1-d or 2-d ``self``), reduced, and the summed weight
    of the counted targets (Note [NLL loss operator])."""
    return _nll_loss(self, target, weight, reduction, ignore_index, spatial=False)


@kernel("CompositeExplicitAutograd")
def nll_loss2d_forward(self, target, weight, reduction, ignore_index):
    """``nll_loss_forward`` over (N, C, H, W) log-probabilities and (N, H, W) targets."""
    check(self.dim() == 4, lambda: "only batches of spatial inputs supported (4D tensors), but got input of "
                                   f"dimension: {self.dim()}")
    return _nll_loss(self, target, weight, reduction, ignore_index, spatial=True)


# torch's EPSILON of binary_cross_entropy_backward is the float literal 1e-12f, also for double inputs.
BCE_EPSILON = 9.999999960041972e-13


@kernel("CompositeExplicitAutograd")
def binary_cross_entropy(self, target, weight=None, reduction=1):
    """``-(t log x + (1 - t) log(1 - x))`` with the logs clamped at -100, times ``weight``, reduced."""
    if target.dtype is not self.dtype:
        raise RuntimeError(f"Found dtype {scalar_type_name(target.dtype)} but expected "
                           f"{scalar_type_name(self.dtype)}")
    if not self.dtype.is_floating_point:
        raise not_implemented("binary_cross_entropy_out_cuda" if self.device.type == "cuda"
                              else "binary_cross_entropy", self.dtype)
    if self.device.type == "cpu" and self.numel():
        if not ops.logical_and(ops.ge(self, 0), ops.le(self, 1)).all().item():
            raise RuntimeError("all elements of input should be between 0 and 1")
    loss = (target - 1) * ops.clamp_min(ops.log1p(ops.neg(self)), -100) - target * ops.clamp_min(ops.log(self), -100)
    if weight is not None:
        loss = loss * (weight if weight.dtype is self.dtype else weight.to(self.dtype))
    return _reduce(loss, reduction)


@kernel("CompositeExplicitAutograd")
def binary_cross_entropy_with_logits(self, target, weight=None, pos_weight=None, reduction=1):
    """``(1 - t) x - log_sigmoid(x)``, the second term times ``(pos_weight - 1) t + 1``, times ``weight``,
    reduced (torch's stable form)."""
    log_sig = ops.log_sigmoid(self)
    if pos_weight is not None:
        log_sig = log_sig * ((pos_weight - 1) * target + 1)
    loss = (1 - target) * self - log_sig
    if weight is not None:
        loss = loss * weight
    # torch's form is an in-place chain on ``1 - target``: the loss has target's dtype (float64 logits with a
    # float32 target give float32), and an integer target cannot hold it
    if loss.dtype is not target.dtype:
        if not dt.can_cast(loss.dtype, target.dtype):
            raise RuntimeError(f"result type {scalar_type_name(loss.dtype)} can't be cast to the desired output type "
                               f"{scalar_type_name(target.dtype)}")
        loss = loss.to(target.dtype)
    return _reduce(loss, reduction)
