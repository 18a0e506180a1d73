"""``F.linear_cross_entropy``: ``cross_entropy(linear(x, W, b), target)`` without the full logits (torch 2.14).

Note [Chunked linear cross entropy]
A language model's loss head makes (N, C) logits from (N, D) features: for GPT-2 small at 1024 tokens,
206 MB of float32 logits, as much again for their gradient, and the softmax in between, while the
features are 3 MB. With ``options=LinearCrossEntropyOptions()`` the batch is processed
``batch_chunk_size`` rows at a time (the options pick a size whose logits are about the input's size), and
each chunk's logits live only while that chunk is processed:

* ``"mean"`` / ``"sum"``: forward computes, per chunk, the loss rows *and* the chunk's gradients
  (``dlogits = softmax * w_row - onehot * w_row``, over the total weight for "mean"), folding them into
  ``grad_input`` (its rows), ``grad_weight`` (``+= dlogits^T x``) and ``grad_bias``; backward only scales
  them by the incoming gradient. They are consumed in place, so a second backward raises, unless
  ``allow_retain_graph=True`` keeps them.
* ``"none"``: forward computes the loss rows; backward recomputes each chunk's logits with the incoming
  per-row gradient folded into the row weights (one more GEMM per chunk, no precomputed buffers).

The chunk's arithmetic runs with autocast off (torch's op is a custom op that autocast passes through) in
``acc_dtype`` (float32 for fp16 / bf16 inputs): ``"accurate"`` casts the operands to it, so the weight
gradient accumulates in a float32 scratch; ``"compact"`` runs the GEMMs in the input dtype and adds each
chunk's weight gradient into the input-dtype gradient. Class-index targets (weights, ``ignore_index``)
and probability targets ("mean" / "sum", same dtype as the input) are chunked; label smoothing,
K-dimensional weights and other reductions take the reference path with torch's warning. Higher-order
gradients of the chunked path are not supported, as in torch.

The saving costs time: every chunk reads the (C, D) weight in three GEMMs and updates the weight
gradient in place (Note [In-place addmm]). Measured on an H200 (2026-11-28) at GPT-2's head, N=1024,
D=768, C=50257, float32, forward + backward: the reference path 6.4 ms with 589 MiB above its inputs;
torch's automatic chunk (16 rows) 56.7 ms with 160 MiB; ``batch_chunk_size=64`` 15.4 ms / 188 MiB;
256 rows 8.2 ms / 301 MiB. Small chunks are bound by the per-launch host cost of the ~10 launches each
chunk makes, so a larger ``batch_chunk_size`` is the better trade here when the memory allows it.
"""

from __future__ import annotations

import math
import warnings

from .. import dtypes as dt
from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled, no_grad
from ..backends.meta.linalg import cpp_type_name
from ..ops import bound as ops
from ..tensor import Tensor
from .linear_cross_entropy_options import LinearCrossEntropyOptions

__all__ = ["linear_cross_entropy", "LinearCrossEntropyOptions"]

_TWICE = "linear_cross_entropy chunked backward called twice; retain_graph=True / double backward are not supported."


def _check(input: Tensor, linear_weight: Tensor, target: Tensor, linear_bias):
    """torch's shape checks; returns (logits_shape, out_features, in_features, num_classes)."""
    for arg, value in (("input", input), ("linear_weight", linear_weight), ("target", target)):
        if not isinstance(value, Tensor):
            raise TypeError(f"linear_cross_entropy(): argument '{arg}' must be Tensor, not {type(value).__name__}")
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}")
    num_batches = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions (in_features), "
                           f"got {input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not num_batches:
        raise RuntimeError(
            f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires batched "
            f"input, (N, {in_features}), got unbatched input with shape {tuple(input.shape)}")
    return (*num_batches, num_classes, *out_features), out_features, in_features, num_classes


def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *, linear_bias: Tensor | None = None,
                         weight: Tensor | None = None, reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0, options: LinearCrossEntropyOptions | None = None) -> Tensor:
    """``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)``; with ``options`` the batch
    is chunked so the full logits are never made (Note [Chunked linear cross entropy]).

    ``input``: (D,) or (N, D); ``linear_weight``: (C, D) or (C, d_1, ..., d_K, D); ``target``: class indices
    (int64) or class probabilities shaped like the logits. ``ignore_index=None`` means -100.
    """
    from . import functional as F

    logits_shape, out_features, in_features, num_classes = _check(input, linear_weight, target, linear_bias)
    probs = tuple(target.shape) == logits_shape
    if probs and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = -100 if ignore_index is None else ignore_index
    grad_on = is_grad_enabled()
    chunkable_probs = (probs and reduction in ("mean", "sum") and target.dtype is input.dtype
                       and not (target.requires_grad and grad_on))
    chunked = (reduction in ("mean", "sum", "none") and label_smoothing == 0.0 and not out_features
               and (target.dtype is dt.int64 or chunkable_probs))
    if options is not None and not isinstance(options, LinearCrossEntropyOptions):
        raise TypeError(f"linear_cross_entropy(): argument 'options' must be LinearCrossEntropyOptions or None, not "
                        f"{type(options).__name__}")
    if options is not None and not chunked:
        warnings.warn(
            "linear_cross_entropy: ``options`` ignored; chunked path needs reduction in {'mean','sum','none'}, "
            "label_smoothing == 0, target.dtype == int64 (or a probability target with reduction in "
            "{'mean','sum'}, dtype matching input, and requires_grad == False), out_features == (). Got "
            f"reduction={reduction!r}, label_smoothing={label_smoothing}, target.dtype={target.dtype}, "
            f"out_features={out_features}, tracing=False, target.requires_grad={target.requires_grad}, "
            f"linear_bias.shape={tuple(linear_bias.shape) if linear_bias is not None else None}.",
            stacklevel=2)
    if options is not None and chunked:
        batched = input.dim() == 2
        x, t = (input, target) if batched else (input.unsqueeze(0), target.unsqueeze(0))
        _check_chunked(x, linear_weight, t)
        opts = options._adjust(num_batches=x.shape[0], in_features=in_features, num_classes=num_classes,
                               dtype=input.dtype, device=input.device, prob_target=t.dtype.is_floating_point)
        if reduction == "none":
            loss = _ChunkedRows.apply(x, linear_weight, t, linear_bias, weight, ignore_index, opts)
        else:
            loss = _ChunkedScalar.apply(x, linear_weight, t, linear_bias, weight, reduction, ignore_index, opts)
        return loss if batched else loss.squeeze(0)
    if out_features:
        rows = math.prod(out_features, start=num_classes)
        linear_weight = linear_weight.reshape(rows, in_features)
        linear_bias = linear_bias.reshape(rows) if linear_bias is not None else None
    logits = F.linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return F.cross_entropy(logits, target, weight=weight, reduction=reduction, ignore_index=ignore_index,
                           label_smoothing=label_smoothing)


def _check_chunked(x: Tensor, w: Tensor, t: Tensor) -> None:
    """What the reference path's linear and cross_entropy would refuse, refused before the chunk loop."""
    if w.dtype is not x.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {cpp_type_name(x.dtype)} != "
                           f"{cpp_type_name(w.dtype)}")
    if not t.dtype.is_floating_point and (t.dim() != 1 or t.shape[0] != x.shape[0]):
        if t.dim() == 1:
            raise ValueError(f"Expected input batch_size ({x.shape[0]}) to match target batch_size ({t.shape[0]}).")
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")


class _Plan:
    """One call's chunk loop: operands cast once, then per chunk the logits, loss rows and gradients.

    Per-row quantities of class-index targets (row weights, safe classes, gradient scales) are made once
    for the whole batch, so a chunk costs eight launches: the logits GEMM (bias in its epilogue),
    log_softmax, a gather of the targets' log-probabilities, and for the gradient exp, a row scale, a
    scatter_add of the one-hot part and the two gradient GEMMs (plus a column sum with a bias)."""

    def __init__(self, x, w, b, class_weight, ignore_index, opts, need):
        from ..amp.autocast_mode import autocast

        self.acc = acc = opts.acc_dtype
        self.accurate = opts.acc_policy == "accurate"
        self.size = opts.batch_chunk_size
        self.x, self.ignore_index = x, ignore_index
        # "accurate": every GEMM in acc_dtype; "compact": GEMMs in the input dtype, the softmax in acc_dtype
        self.gemm_dtype = gd = acc if self.accurate else x.dtype
        self.w = w.to(gd)
        self.b = None if b is None else b.to(gd)
        self.class_weight = None if class_weight is None else class_weight.to(acc)
        self.need_x, self.need_w, self.need_b = need
        self.no_autocast = autocast(x.device.type, enabled=False)

    def chunks(self):
        n = self.x.shape[0]
        return ((i, min(i + self.size, n)) for i in range(0, n, self.size))

    def log_probs(self, i, j):
        """The chunk's (rows, C) log-softmax of its logits, in acc_dtype."""
        z = ops.linear(self.x[i:j].to(self.gemm_dtype), self.w, self.b).to(self.acc)
        return z.log_softmax(1)

    def index_rows(self, t):
        """(weight of each row, its class with ignored rows sent to 0): ignored rows weigh 0."""
        keep = t != self.ignore_index
        safe = t.masked_fill(keep.logical_not(), 0)
        wrow = keep.to(self.acc) if self.class_weight is None else self.class_weight[safe] * keep
        return wrow, safe

    def grads(self, t, probs: bool, scale_rows=None, mean: bool = False):
        """(loss rows, grad_input, grad_weight, grad_bias, mean factor) over all chunks: the gradients are
        those of ``sum(loss rows * scale_rows) * factor`` (factor 1 unless ``mean``)."""
        x = self.x
        want = self.need_x or self.need_w or self.need_b
        gi = x.new_empty(x.shape) if self.need_x else None
        gw = self.w.new_zeros(self.w.shape) if self.need_w else None  # acc_dtype if accurate, else the input's
        gb = x.new_zeros((self.w.shape[0],), dtype=self.acc) if self.need_b else None
        picked = []
        factor = None
        with no_grad(), self.no_autocast:
            if probs:
                if mean:
                    factor = 1.0 / x.shape[0] if x.shape[0] else math.nan
            else:
                wrow, safe = self.index_rows(t)
                safe = safe.unsqueeze(1)
                if mean:
                    factor = wrow.sum().reciprocal()
                wgrad = wrow if scale_rows is None else wrow * scale_rows
                wgrad = (wgrad if factor is None else wgrad * factor).unsqueeze(1)
                neg_wgrad = wgrad.neg()
            for i, j in self.chunks():
                logp = self.log_probs(i, j)
                if probs:
                    wp = t[i:j].to(self.acc)
                    if self.class_weight is not None:
                        wp = wp * self.class_weight
                    picked.append((wp * logp).sum(1))
                    if not want:
                        continue
                    d = logp.exp_().mul_(wp.sum(1, keepdim=True)).sub_(wp)
                    if scale_rows is not None:
                        d.mul_(scale_rows[i:j].unsqueeze(1))
                    if factor is not None:
                        d.mul_(factor)
                else:
                    picked.append(logp.gather(1, safe[i:j]))
                    if not want:
                        continue
                    d = logp.exp_().mul_(wgrad[i:j]).scatter_add_(1, safe[i:j], neg_wgrad[i:j])
                if gi is not None or gw is not None:
                    dg = d.to(self.gemm_dtype)
                    if gi is not None:
                        gi[i:j] = dg.matmul(self.w)
                    if gw is not None:
                        gw.addmm_(dg.t(), x[i:j].to(self.gemm_dtype))
                if gb is not None:
                    gb.add_(d.sum(0))
            if not picked:
                rows = x.new_zeros((0,), dtype=self.acc)
            else:
                rows = picked[0] if len(picked) == 1 else ops.cat(picked, 0)
                rows = rows.neg() if probs else rows.squeeze(1).mul_(wrow).neg_()
        return rows, gi, gw, gb, factor


class _ChunkedScalar(Function):
    """reduction "mean" / "sum": gradients precomputed in forward, scaled in backward."""

    @staticmethod
    def forward(ctx, x, w, t, b, class_weight, reduction, ignore_index, opts):
        need = ctx.needs_input_grad
        plan = _Plan(x, w, b, class_weight, ignore_index, opts, (need[0], need[1], len(need) > 3 and need[3]))
        # torch's means: over the rows (probabilities) or the rows' total weight (class indices)
        rows, gi, gw, gb, factor = plan.grads(t, t.dtype.is_floating_point, mean=reduction == "mean")
        with no_grad():
            loss = rows.sum() if factor is None else rows.sum() * factor
        ctx.allow_retain_graph = opts.allow_retain_graph
        ctx.gi, ctx.gw, ctx.gb = gi, (None if gw is None else gw.to(w.dtype)), (None if gb is None else gb.to(b.dtype))
        return loss.to(x.dtype)

    @staticmethod
    def backward(ctx, g):
        out = []
        for name in ("gi", "gw", "gb"):
            buf = getattr(ctx, name)
            if buf is None:
                out.append(None)
                continue
            if ctx.allow_retain_graph:
                out.append(buf * g)
                continue
            if buf is _CONSUMED:
                raise RuntimeError(_TWICE)
            setattr(ctx, name, _CONSUMED)  # the buffer is handed out once
            out.append(buf.mul_(g))
        gi, gw, gb = out
        return gi, gw, None, gb, None, None, None, None


_CONSUMED = object()  # a gradient buffer backward has already handed out


class _ChunkedRows(Function):
    """reduction "none": loss rows in forward; backward recomputes each chunk with the row gradients."""

    @staticmethod
    def forward(ctx, x, w, t, b, class_weight, ignore_index, opts):
        plan = _Plan(x, w, b, class_weight, ignore_index, opts, (False, False, False))
        rows = plan.grads(t, False)[0]
        ctx.save_for_backward(x, w, t, b, class_weight)
        ctx.ignore_index, ctx.opts = ignore_index, opts
        return rows.to(x.dtype)

    @staticmethod
    def backward(ctx, g):
        x, w, t, b, class_weight = ctx.saved_tensors
        need = ctx.needs_input_grad
        plan = _Plan(x, w, b, class_weight, ctx.ignore_index, ctx.opts, (need[0], need[1], need[3]))
        g = g.to(plan.acc)
        _, gi, gw, gb, _ = plan.grads(t, False, scale_rows=g)
        return (gi, None if gw is None else gw.to(w.dtype), None, None if gb is None else gb.to(b.dtype),
                None, None, None)
