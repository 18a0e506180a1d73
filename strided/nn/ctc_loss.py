"""Connectionist temporal classification loss (``F.ctc_loss``), composed of existing operators.

Note [CTC as a batched recursion]
Each sample's target ``l`` (length ``S_b``) is extended to ``l'`` of length ``2 S_b + 1``, blanks at
the even positions. The samples are padded to the longest target (padding is the blank) and the
forward variables ``alpha[t]`` (N, 2S + 1) are computed for all samples and positions at once, one
step per frame up to the longest input: ``alpha[t, s]`` is the log-sum of ``alpha[t-1]`` at ``s``,
``s - 1`` and, where ``l'[s] != l'[s-2]`` (a label, not a repeat of the one before), ``s - 2``, plus
the log-probability of ``l'[s]`` at ``t``. The log-sum is written as torch's CPU kernel writes it
(the maximum of the three taken out, 0 when all are ``-inf``), so the float results are torch's up
to the rounding of ``exp``/``log``. A position beyond a sample's ``2 S_b`` never feeds one before it
and a frame past its input length is never read, so neither needs a mask in the recursion; the loss
is read at each sample's last frame (positions ``2 S_b`` and ``2 S_b - 1``).

Note [CTC gradient]
The backward is torch's explicit alpha-beta gradient (``_CTCLoss``), not autograd through the
recursion: ``beta`` runs the mirrored recursion down from the longest input, a ``where`` starting
each sample at its frame ``il - 1`` (what the frames after hold is never used), then
``grad[t, c] = exp(lp[t, c]) - sum over l'[s] = c of exp(alpha[t, s] + beta[t, s] - lp[t, c] + nll)``
times the upstream gradient. The ``exp(lp)`` term is torch's: it makes the gradient the one of the
logits *through* a ``log_softmax``, so a gradient check must go through one. The sum over the
positions of a class is a ``scatter_add`` of occupancies in [0, 1] (torch log-adds them first;
equal up to rounding, with no under- or overflow). As in torch: frames at or past a sample's input
length get 0; with ``zero_infinity`` an infinite loss is 0 and so is its gradient; otherwise a
non-finite loss, or a ``-inf`` log-probability, gives ``nan`` at every frame before the input length
(torch's ``-inf + inf``).

Note [CTC lengths on the host]
As torch's CPU path (and its ``Tensor`` overload on every device), the lengths are read on the
host once per call: to check them in torch's words, to size the recursion (the longest input, the
longest target) and for the ``'mean'`` division. A CUDA length tensor costs one synchronization;
a meta one cannot be read, so on meta the checks of the values are skipped and the recursion runs
over every frame. Class indices of the targets are checked on the CPU (torch reads them unchecked,
out of bounds); elsewhere, without a device sync, a sample with a bad index gets a ``nan`` loss.
"""

from __future__ import annotations

import operator

from .. import dtypes as _dt
from ..amp.autocast_mode import is_autocast_available, is_autocast_enabled
from ..autograd.function import Function
from ..backends.meta.reductions import type_name
from ..factories import arange, full, zeros
from ..factories import tensor as _tensor
from ..ops import bound as ops
from ..tensor import Tensor
from ._reduction import get_enum

__all__ = ["ctc_loss"]

_CHECKING = " (while checking arguments for ctc_loss_allocate_outputs)"
_NEG_INF = float("-inf")
_SIGNATURES = (
    " * (Tensor log_probs, Tensor targets, tuple of ints input_lengths, tuple of ints target_lengths, "
    "int blank = 0, int reduction = at::Reduction::Mean, bool zero_infinity = False)\n"
    " * (Tensor log_probs, Tensor targets, Tensor input_lengths, Tensor target_lengths, "
    "int blank = 0, int reduction = at::Reduction::Mean, bool zero_infinity = False)\n"
)


def _int_list(lengths) -> list | None:
    """The ints of a tuple/list of lengths, or None if it is not one (torch's ``tuple of ints``)."""
    if not isinstance(lengths, (list, tuple)):
        return None
    out = []
    for v in lengths:
        if isinstance(v, bool):
            return None
        if isinstance(v, Tensor):
            if v.dim() != 0 or v.dtype.is_floating_point or v.dtype.is_complex or v.dtype is _dt.bool:
                return None
            out.append(int(v.item()))
            continue
        try:
            out.append(operator.index(v))
        except TypeError:
            return None
    return out


def _read_lengths(input_lengths, target_lengths, args: tuple) -> tuple:
    """(il, tl): host lists of ints, or the tensors themselves where they cannot be read (meta)."""
    if isinstance(input_lengths, Tensor) and isinstance(target_lengths, Tensor):
        for name, t in (("input_lengths", input_lengths), ("target_lengths", target_lengths)):
            if t.dtype.is_floating_point or t.dtype.is_complex or t.dtype is _dt.bool:
                raise RuntimeError(f"{name} must be integral")
        return tuple(t if t.device.type == "meta" else [int(v) for v in t.reshape(-1).tolist()]
                     for t in (input_lengths, target_lengths))
    il, tl = _int_list(input_lengths), _int_list(target_lengths)
    if il is None or tl is None:
        got = ", ".join("Tensor" if isinstance(a, Tensor) else type(a).__name__ for a in args)
        raise TypeError(f"ctc_loss() received an invalid combination of arguments - got ({got}, int, int, bool), "
                        f"but expected one of:\n{_SIGNATURES}")
    return il, tl


def _check(log_probs: Tensor, targets: Tensor, il, tl, blank: int) -> None:
    """torch's ``ctc_loss_allocate_outputs`` checks (those of the length values only where they are known)."""
    if log_probs.dim() != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {log_probs.dim()}-dimensional tensor for "
                           f"argument #1 'log_probs'{_CHECKING}")
    if targets.dim() not in (1, 2):
        raise RuntimeError(f"Expected 1 to 2 dimensions, but got {targets.dim()}-dimensional tensor for "
                           f"argument #2 'targets'{_CHECKING}")
    t_max, n, c = log_probs.shape
    if not 0 <= blank < c:
        raise RuntimeError("blank must be in label range")
    for name, lengths in (("input_lengths", il), ("target_lengths", tl)):
        if (lengths.numel() if isinstance(lengths, Tensor) else len(lengths)) != n:
            raise RuntimeError(f"{name} must be of size batch_size")
    if not isinstance(tl, list):
        return
    for v in tl:
        if v < 0:
            raise RuntimeError(f"Expected target_lengths to have value at least 0, but got value {v}{_CHECKING}")
    if targets.dim() == 1 and targets.size(0) != sum(tl):
        raise RuntimeError(f"Expected tensor to have size {sum(tl)} at dimension 0, but got size "
                           f"{targets.size(0)} for argument #2 'targets'{_CHECKING}")
    if targets.dim() == 2:
        if targets.size(0) != n:
            raise RuntimeError(f"Expected tensor to have size {n} at dimension 0, but got size {targets.size(0)} "
                               f"for argument #2 'targets'{_CHECKING}")
        if tl and targets.size(1) < max(tl):
            raise RuntimeError(f"Expected tensor to have size at least {max(tl)} at dimension 1, but got size "
                               f"{targets.size(1)} for argument #2 'targets'{_CHECKING}")
    if not isinstance(il, list):
        return
    for v in il:
        if v < 0:
            raise RuntimeError(f"Expected input_lengths to have value at least 0, but got value {v}{_CHECKING}")
        if v > t_max:
            raise RuntimeError(f"Expected input_lengths to have value at most {t_max}, but got value {v}{_CHECKING}")


def _labels(targets: Tensor, tl: Tensor, s_max: int, blank: int) -> tuple:
    """(labels (N, s_max) with the blank past each target length, valid (N, s_max))."""
    n = tl.size(0)
    pos = arange(s_max, device=tl.device)
    valid = ops.lt(pos.unsqueeze(0), tl.unsqueeze(1))
    if s_max == 0:
        return zeros((n, 0), dtype=_dt.int64, device=tl.device), valid
    if targets.dim() == 2:
        values = targets.narrow(1, 0, s_max)
    else:  # concatenated: sample b's targets start at the sum of the lengths before it
        offsets = ops.cumsum(tl, 0) - tl
        index = ops.clamp_max(offsets.unsqueeze(1) + pos.unsqueeze(0), max(targets.size(0) - 1, 0))
        values = ops.index_select(targets, 0, index.reshape(-1)).reshape(n, s_max)
    return ops.where(valid, values, blank), valid


def _logsumexp3(a: Tensor, b: Tensor, c: Tensor) -> Tensor:
    """``log(exp(a) + exp(b) + exp(c))`` as torch's CTC kernels write it (Note [CTC as a batched recursion])."""
    m = ops.maximum(ops.maximum(a, b), c)
    m = ops.where(ops.eq(m, _NEG_INF), 0.0, m)
    return ops.log(ops.exp(a - m) + ops.exp(b - m) + ops.exp(c - m)) + m


def _shift(x: Tensor, k: int, pad: Tensor) -> Tensor:
    """``x`` moved ``k`` positions along dim 1 (to higher positions for k > 0), ``pad`` (N, 2) filled in."""
    if abs(k) >= x.size(1):
        return pad.narrow(1, 0, x.size(1))
    if k > 0:
        return ops.cat([pad.narrow(1, 0, k), x.narrow(1, 0, x.size(1) - k)], 1)
    return ops.cat([x.narrow(1, -k, x.size(1) + k), pad.narrow(1, 0, -k)], 1)


class _CTCLoss(Function):
    """Per-sample negative log-likelihoods of the extended labels ``ext`` (N, L) under ``log_probs``, with
    torch's gradient (Note [CTC gradient])."""

    @staticmethod
    def forward(ctx, log_probs, ext, skip, il, tl, t_run, zero_infinity):
        n, width = ext.shape
        lp_ext = ops.gather(log_probs.narrow(0, 0, t_run), 2, ext.unsqueeze(0).expand(t_run, n, width))
        pad = full((n, 2), _NEG_INF, dtype=log_probs.dtype, device=log_probs.device)
        pos = arange(width, device=ext.device).unsqueeze(0)
        starts = ops.lt(pos, ops.where(ops.gt(tl, 0), 2, 1).unsqueeze(1))
        alpha = ops.where(starts, lp_ext[0], _NEG_INF)
        alphas = [alpha]
        for t in range(1, t_run):
            a3 = ops.where(skip, _shift(alpha, 2, pad), _NEG_INF)
            alpha = _logsumexp3(alpha, _shift(alpha, 1, pad), a3) + lp_ext[t]
            alphas.append(alpha)
        alphas = ops.stack(alphas, 0)
        last = ops.clamp_min(il - 1, 0).reshape(1, n, 1).expand(1, n, width)
        alpha_end = ops.gather(alphas, 0, last).squeeze(0)
        l1 = ops.gather(alpha_end, 1, (2 * tl).unsqueeze(1)).squeeze(1)
        l2 = ops.gather(alpha_end, 1, ops.clamp_min(2 * tl - 1, 0).unsqueeze(1)).squeeze(1)
        l2 = ops.where(ops.gt(tl, 0), l2, _NEG_INF)
        m = ops.maximum(l1, l2)
        m = ops.where(ops.eq(m, _NEG_INF), 0.0, m)
        nll = -(ops.log(ops.exp(l1 - m) + ops.exp(l2 - m)) + m)
        # no frame: the empty target is certain, any other impossible (torch's input_length == 0 case)
        nll = ops.where(ops.eq(il, 0), ops.where(ops.eq(tl, 0), 0.0, float("inf")), nll)
        ctx.save_for_backward(log_probs, ext, skip, il, tl, lp_ext, alphas, nll)
        ctx.t_run, ctx.zero_infinity = t_run, zero_infinity
        return ops.where(ops.eq(nll, float("inf")), 0.0, nll) if zero_infinity else nll

    @staticmethod
    def backward(ctx, grad):
        log_probs, ext, skip, il, tl, lp_ext, alphas, nll = ctx.saved_tensors
        t_run, (t_max, n, c) = ctx.t_run, log_probs.shape
        width = ext.size(1)
        pad = full((n, 2), _NEG_INF, dtype=log_probs.dtype, device=log_probs.device)
        pos = arange(width, device=ext.device).unsqueeze(0)
        ends = ops.logical_or(ops.eq(pos, 2 * tl.unsqueeze(1)),
                              ops.logical_and(ops.eq(pos, 2 * tl.unsqueeze(1) - 1), ops.gt(tl, 0).unsqueeze(1)))
        skip_back = _shift(skip, -2, zeros((n, 2), dtype=_dt.bool, device=ext.device))
        last = (il - 1).unsqueeze(1)
        beta = None
        betas = [None] * t_run
        for t in range(t_run - 1, -1, -1):
            start = ops.where(ends, lp_ext[t], _NEG_INF)
            if beta is None:
                beta = ops.where(ops.eq(last, t), start, _NEG_INF)
            else:
                b3 = ops.where(skip_back, _shift(beta, -2, pad), _NEG_INF)
                step = _logsumexp3(beta, _shift(beta, -1, pad), b3) + lp_ext[t]
                beta = ops.where(ops.eq(last, t), start, step)
            betas[t] = beta
        betas = ops.stack(betas, 0)
        head = log_probs.narrow(0, 0, t_run)
        # occupancies of the positions, summed per class (Note [CTC gradient])
        occupancy = ops.exp(alphas + betas - lp_ext + nll.reshape(1, n, 1))
        index = ext.unsqueeze(0).expand(t_run, n, width)
        summed = ops.scatter_add(zeros((t_run, n, c), dtype=log_probs.dtype, device=log_probs.device), 2, index,
                                 occupancy)
        g = (ops.exp(head) - summed) * grad.reshape(1, n, 1)
        frames = ops.lt(arange(t_run, device=ext.device).reshape(t_run, 1, 1), il.reshape(1, n, 1))
        g = ops.where(frames, g, 0.0)
        infinite = ops.logical_not(ops.isfinite(nll)).reshape(1, n, 1)
        nan_at = ops.logical_and(frames, ops.logical_or(infinite, ops.eq(head, _NEG_INF)))
        g = ops.where(nan_at, float("nan"), g)
        if ctx.zero_infinity:
            g = ops.where(ops.eq(nll, float("inf")).reshape(1, n, 1), 0.0, g)
        if t_run < t_max:
            g = ops.cat([g, zeros((t_max - t_run, n, c), dtype=g.dtype, device=g.device)], 0)
        return g, None, None, None, None, None, None


def ctc_loss(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths,
    target_lengths,
    blank: int = 0,
    reduction: str = "mean",
    zero_infinity: bool = False,
) -> Tensor:
    """Connectionist temporal classification loss of ``log_probs`` (T, N, C) or unbatched (T, C) against
    ``targets`` padded (N, S) or concatenated (sum of ``target_lengths``); the lengths are tensors or
    tuples of ints. ``'mean'`` divides each loss by its target length (at least 1), then averages."""
    code = get_enum(reduction)
    il, tl = _read_lengths(input_lengths, target_lengths, (log_probs, targets, input_lengths, target_lengths))
    kind = log_probs.device.type
    if (log_probs.dtype in (_dt.float16, _dt.bfloat16) and is_autocast_available(kind)
            and is_autocast_enabled(kind)):
        log_probs = log_probs.to(_dt.float32)  # ctc_loss is on torch's autocast fp32 lists (CPU and CUDA)
    if log_probs.dtype not in (_dt.float32, _dt.float64):
        raise NotImplementedError(f"\"ctc_loss_{kind}\" not implemented for "
                                  f"'{type_name(log_probs.dtype)}'")
    if log_probs.numel() == 0:
        raise RuntimeError("log_probs tensor must not be empty")
    batched = log_probs.dim() == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    _check(lp, targets, il, tl, blank)
    t_max, n, c = lp.shape
    device = lp.device
    targets = targets.to(device=device, dtype=_dt.int64)
    known = isinstance(il, list) and isinstance(tl, list)
    if known:
        t_run = max(max(il), 1)  # at least one frame, even where every input length is 0 (its loss is set)
        s_max = max(tl, default=0)
    else:
        t_run = t_max
        s_max = targets.size(1) if targets.dim() == 2 else targets.size(0)
    il_t, tl_t = (_tensor(v, dtype=_dt.int64, device=device) if isinstance(v, list)
                  else v.reshape(-1).to(device=device, dtype=_dt.int64) for v in (il, tl))
    labels, valid = _labels(targets, tl_t, s_max, blank)
    bad = ops.logical_and(valid, ops.logical_or(ops.lt(labels, 0), ops.ge(labels, c)))
    if device.type == "cpu":
        if bad.numel() and bad.any().item():
            raise RuntimeError(f"Target {ops.masked_select(labels, bad)[0].item()} is out of bounds.")
        bad = None
    elif device.type != "meta":
        labels = ops.where(bad, blank, labels)
        bad = bad.any(1) if s_max else None
    else:
        bad = None
    # the extended labels l' (blank, l1, blank, l2, ..., blank) and where a skip over a blank is allowed
    ext = ops.stack([ops.full_like(labels, blank), labels], 2).reshape(n, 2 * s_max)
    ext = ops.cat([ext, full((n, 1), blank, dtype=_dt.int64, device=device)], 1)
    skip = zeros((n, min(2 * s_max + 1, 2)), dtype=_dt.bool, device=device)
    if s_max:
        skip = ops.cat([skip, ops.ne(ext.narrow(1, 2, 2 * s_max - 1), ext.narrow(1, 0, 2 * s_max - 1))], 1)
    res = _CTCLoss.apply(lp, ext, skip, il_t, tl_t, t_run, bool(zero_infinity))
    if bad is not None:
        res = ops.where(bad, float("nan"), res)
    if code == 1:
        return (res / ops.clamp_min(tl_t.to(res.dtype), 1)).mean()
    if code == 2:
        return res.sum()
    return res if batched else res.squeeze(0)
