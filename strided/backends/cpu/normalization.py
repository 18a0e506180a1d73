"""CPU kernels: softmax, log_softmax, layer_norm, native_group_norm, cross_entropy_loss (NumPy, half types in
float32). They run under the dispatcher's quiet NumPy error state (Note [Backend kernel wrappers]): no
``np.errstate`` here."""

from __future__ import annotations

import math

import numpy as np

from ... import dtypes as dt
from ...dispatch.library import kernel
from ..meta import normalization as meta
from ..meta.common import new_output, wrap_dim
from .blocked_sums import fast_sum
from .common import as_numpy, compute_dtype, store

__all__ = ["log_softmax_array"]


def _cast(self, d: dt.dtype) -> np.ndarray:
    """``self.to(d)`` as an array in ``d``'s compute dtype (rounding through ``d`` first)."""
    a = as_numpy(self)
    if a.dtype != d.numpy_dtype:
        a = a.astype(d.numpy_dtype)
    cd = compute_dtype(d)
    return a if a.dtype == cd else a.astype(cd)


def _shifted(a: np.ndarray, axis: int) -> np.ndarray:
    """``a - max(a, axis)``: the stable-softmax shift (all -inf or +inf give nan, as torch)."""
    return a - np.amax(a, axis=axis, keepdims=True)


def log_softmax_array(a: np.ndarray, axis: int) -> np.ndarray:
    """Stable log-softmax of a float array along ``axis`` (non-empty)."""
    z = _shifted(a, axis)
    return z - np.log(fast_sum(np.exp(z), axis, True))


def _softmax_like(self, dim, out, log: bool):
    """softmax / log_softmax, each pass written into one buffer -- the output's own memory when it is contiguous in
    the compute dtype (Note [Layer norm in place]); the same operations, so the same values, as
    ``log_softmax_array`` and ``exp(z) / sum(exp(z))``."""
    if out.numel() == 0:
        return out
    a = _cast(self, out.dtype)
    if not self._sizes:
        a = a.reshape(1)
    axis = wrap_dim(dim, self.dim())
    dst = as_numpy(out)
    own = dst.dtype == a.dtype and dst.flags.c_contiguous
    z = dst.reshape(a.shape) if own else np.empty(a.shape, a.dtype)
    np.subtract(a, np.amax(a, axis=axis, keepdims=True), out=z)
    if log:
        z -= np.log(fast_sum(np.exp(z), axis, True))
    else:
        np.exp(z, out=z)
        z /= fast_sum(z, axis, True)
    return out if own else store(out, z.reshape(out._sizes))


@kernel("CPU")
def softmax(self, dim, dtype=None):
    return _softmax_like(self, dim, meta.softmax(self, dim, dtype), log=False)


@kernel("CPU")
def log_softmax(self, dim, dtype=None):
    return _softmax_like(self, dim, meta.log_softmax(self, dim, dtype), log=True)


def _softmax_backward(grad_output, output, dim, input_dtype, log: bool):
    name = "_log_softmax_backward_data" if log else "_softmax_backward_data"
    res = meta.softmax_backward_output(grad_output, output, dim, input_dtype, name)
    if res.numel() == 0:
        return res
    axis = wrap_dim(dim, output.dim()) if output.dim() else None
    cd = compute_dtype(output.dtype)
    g = as_numpy(grad_output).astype(cd)
    y = as_numpy(output).astype(cd)
    if log:
        gi = g - np.exp(y) * fast_sum(g, axis, True)
    else:
        gi = y * (g - fast_sum(g * y, axis, True))
    return store(res, gi)


@kernel("CPU")
def softmax_backward_data(grad_output, output, dim, input_dtype):
    return _softmax_backward(grad_output, output, dim, input_dtype, log=False)


@kernel("CPU")
def log_softmax_backward_data(grad_output, output, dim, input_dtype):
    return _softmax_backward(grad_output, output, dim, input_dtype, log=True)


# Note [Layer norm in place]
# The layer-norm kernels write each pass into one buffer -- the output's own memory when it is already in the
# compute dtype -- instead of a new temporary per NumPy expression, and take the row statistics and the weight's
# gradient as einsum contractions (no squared temporary): at (64, 256, 512) float32 the forward went from 59 to
# ~25 ms and forward + backward from 168 to ~80 (torch: 24 / 49). The variance is the mean square of the centred
# rows (two passes, as before), so values are unchanged up to float32 rounding.
def _rows(t, rows: int, inner: int, cd) -> np.ndarray:
    """``t``'s elements as a (rows, inner) array in ``cd`` (a view when it already is one)."""
    return as_numpy(t).astype(cd, copy=False).reshape(rows, inner)


def _target(out, rows: int, inner: int, cd) -> np.ndarray:
    """Where to compute ``out``: its own memory as (rows, inner) when it is contiguous in ``cd``, else a scratch
    array for ``store``."""
    a = as_numpy(out)
    if a.dtype == cd and a.flags.c_contiguous:
        return a.reshape(rows, inner)
    return np.empty((rows, inner), cd)


def _centred(x: np.ndarray, eps, buf: np.ndarray):
    """``buf = (x - mean) * rstd`` row by row; returns (mean, rstd) as (rows, 1) columns."""
    inner = x.shape[1]
    mean = np.mean(x, axis=1, keepdims=True)
    np.subtract(x, mean, out=buf)
    var = np.einsum("ij,ij->i", buf, buf)[:, None] / inner
    rstd = 1 / np.sqrt(var + eps)
    buf *= rstd
    return mean, rstd


def _times_weight(go: np.ndarray, weight, g: np.ndarray, view: tuple, weight_view: tuple, cd) -> None:
    """``g = go * weight`` (``go`` when there is no weight), both seen as ``view``, the weight as ``weight_view``."""
    if weight is None:
        np.copyto(g, go)
    else:
        np.multiply(go.reshape(view), as_numpy(weight).astype(cd, copy=False).reshape(weight_view), out=g.reshape(view))


def _row_gradient(g: np.ndarray, xhat: np.ndarray, rstd: np.ndarray) -> None:
    """``g = rstd * (g - mean(g) - xhat * mean(g * xhat))`` row by row, in place (``xhat`` is overwritten): the input
    gradient of a normalization over rows, ``g`` being the output gradient times the weight."""
    width = g.shape[1]
    g_mean = np.mean(g, axis=1, keepdims=True)
    gx_mean = np.einsum("ij,ij->i", g, xhat)[:, None] / width
    xhat *= rstd * gx_mean
    g *= rstd
    np.subtract(g, xhat, out=g)
    g -= rstd * g_mean


@kernel("CPU")
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    n = meta.layer_norm_dims(input, normalized_shape, weight, bias)
    out = new_output(input._sizes, input.dtype, input.device)
    if out.numel() == 0:
        return out
    cd = compute_dtype(input.dtype)
    inner = math.prod(input._sizes[input.dim() - n:])
    rows = out.numel() // inner
    y = _target(out, rows, inner, cd)  # Note [Layer norm in place]
    _centred(_rows(input, rows, inner, cd), cd.type(eps), y)
    if weight is not None:
        y *= as_numpy(weight).astype(cd, copy=False).reshape(-1)
    if bias is not None:
        y += as_numpy(bias).astype(cd, copy=False).reshape(-1)
    if not np.shares_memory(y, as_numpy(out)):
        store(out, y.reshape(out._sizes))
    return out


@kernel("CPU")
def layer_norm_backward(grad_out, input, normalized_shape, weight, eps, output_mask):
    """Note [Fused layer_norm backward]: the statistics are recomputed from ``input``, then
    grad_input = rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = grad_out * weight,
    grad_weight = sum over rows of grad_out * xhat, grad_bias = sum over rows of grad_out (each pass into one
    buffer: Note [Layer norm in place])."""
    n, dx, dw, db = meta.layer_norm_backward_outputs(grad_out, input, normalized_shape, weight, output_mask)
    inner = math.prod(input._sizes[input.dim() - n:])
    rows = math.prod(input._sizes[:input.dim() - n])
    cd = compute_dtype(input.dtype)
    go = _rows(grad_out, rows, inner, cd)
    if output_mask[2]:
        store(db, go.sum(axis=0).reshape(db._sizes))
    if not (output_mask[0] or output_mask[1]) or rows * inner == 0:
        if output_mask[1] and dw.numel():
            store(dw, np.zeros(dw._sizes, cd))
        return dx, dw, db
    xhat = np.empty((rows, inner), cd)
    _mean, rstd = _centred(_rows(input, rows, inner, cd), cd.type(eps), xhat)
    if output_mask[1]:
        store(dw, np.einsum("ij,ij->j", go, xhat).reshape(dw._sizes))
    if output_mask[0] and dx.numel():
        g = _target(dx, rows, inner, cd)  # g = grad_out * weight, then the gradient, in dx's memory
        _times_weight(go, weight, g, go.shape, (-1,), cd)
        _row_gradient(g, xhat, rstd)
        if not np.shares_memory(g, as_numpy(dx)):
            store(dx, g.reshape(dx._sizes))
    return dx, dw, db


# Note [Group norm as rows]
# A group norm normalizes each (sample, group) -- a row of the input viewed as (N * G, C / G * HxW) -- exactly as
# layer norm normalizes a row, then scales and shifts per channel; so the CPU kernels are layer norm's passes
# (Note [Layer norm in place]) on those rows plus the per-channel step, where the composite ran batch norm's
# kernels and five more ops: (16, 64, 32, 32), 8 groups, fwd + bwd 8.7 -> ~3 ms (torch 1.5). The statistics are
# (N, G), float32 for half inputs, as the composite's (Note [Group-norm node]).
@kernel("CPU")
def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    from ...ops.composite.group_norm import _check

    _check(input, weight, bias, N, C, HxW, group)
    cd = compute_dtype(input.dtype)
    stats = dt.float32 if input.dtype in (dt.float16, dt.bfloat16) else input.dtype
    out = new_output(input._sizes, input.dtype, input.device)
    mean_t = new_output((N, group), stats, input.device)
    rstd_t = new_output((N, group), stats, input.device)
    if input.numel() == 0:
        return out, mean_t, rstd_t
    rows, width = N * group, C // group * HxW
    y = _target(out, rows, width, cd)
    mean, rstd = _centred(_rows(input, rows, width, cd), cd.type(eps), y)
    if weight is not None or bias is not None:
        per_channel = y.reshape(N, C, HxW)
        if weight is not None:
            per_channel *= as_numpy(weight).astype(cd, copy=False).reshape(1, C, 1)
        if bias is not None:
            per_channel += as_numpy(bias).astype(cd, copy=False).reshape(1, C, 1)
    if not np.shares_memory(y, as_numpy(out)):
        store(out, y.reshape(out._sizes))
    store(mean_t, mean.reshape(N, group))
    store(rstd_t, rstd.reshape(N, group))
    return out, mean_t, rstd_t


@kernel("CPU")
def native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C, HxW, group, output_mask):
    """Layer norm's backward on the (sample, group) rows, the weight's and bias's gradients summed per channel (Note
    [Group norm as rows]); an output ``output_mask`` does not ask for is an empty vector, as the composite's."""
    from ...ops.composite.group_norm import check_backward

    check_backward(grad_out, input, mean, rstd, weight, N, C, HxW, group)
    pd = weight.dtype if weight is not None else mean.dtype
    dx = new_output(input._sizes if output_mask[0] else (0,), input.dtype, input.device)
    dw = new_output((C,) if output_mask[1] else (0,), pd, input.device)
    db = new_output((C,) if output_mask[2] else (0,), pd, input.device)
    cd = compute_dtype(input.dtype)
    rows, width = N * group, C // group * HxW
    if input.numel() == 0:
        for t in (dw, db):
            if t.numel():
                store(t, np.zeros(t._sizes, cd))
        return dx, dw, db
    go = _rows(grad_out, rows, width, cd)
    m = as_numpy(mean).astype(cd, copy=False).reshape(rows, 1)
    r = as_numpy(rstd).astype(cd, copy=False).reshape(rows, 1)
    xhat = np.subtract(_rows(input, rows, width, cd), m)
    xhat *= r
    if output_mask[2]:
        store(db, go.reshape(N, C, HxW).sum(axis=(0, 2)))
    if output_mask[1]:
        store(dw, np.einsum("nch,nch->c", go.reshape(N, C, HxW), xhat.reshape(N, C, HxW)))
    if output_mask[0]:
        g = _target(dx, rows, width, cd)
        _times_weight(go, weight, g, (N, C, HxW), (1, C, 1), cd)
        _row_gradient(g, xhat, r)
        if not np.shares_memory(g, as_numpy(dx)):
            store(dx, g.reshape(dx._sizes))
    return dx, dw, db


def _log_probs(self, class_axis: int) -> np.ndarray:
    """log_softmax of ``self`` over the class axis, rounded to ``self``'s dtype (as torch's
    ``log_softmax(self, class_dim, self.scalar_type())``) and returned in its compute dtype."""
    a = _cast(self, self.dtype)
    lp = log_softmax_array(a, class_axis) if a.size else a
    if self.dtype in (dt.float16, dt.bfloat16):
        lp = lp.astype(self.dtype.numpy_dtype).astype(a.dtype)
    return lp


def _probability_loss(self, target, weight, reduction, label_smoothing, out):
    class_axis = 0 if self.dim() == 1 else 1
    cd = compute_dtype(out.dtype)
    lp = _log_probs(self, class_axis).astype(cd)
    t = _cast(target, out.dtype)
    n_classes = self._sizes[class_axis]
    if label_smoothing > 0:
        t = t * cd.type(1 - label_smoothing) + cd.type(label_smoothing) / cd.type(n_classes)
    terms = lp * t
    if weight is not None:
        shape = [1] * self.dim()
        shape[class_axis] = n_classes
        terms = terms * _cast(weight, out.dtype).reshape(shape)
    if reduction == 0:
        return store(out, -np.sum(terms, axis=class_axis))
    total = -np.sum(terms)
    if reduction == 2:
        return store(out, total)
    if lp.size == 0:
        return store(out, np.nan)
    return store(out, total / cd.type(lp.size // n_classes))


def _class_loss(self, target, weight, reduction, ignore_index, label_smoothing, out):
    class_axis = 0 if self.dim() == 1 else 1
    n_classes = self._sizes[class_axis]
    cd = compute_dtype(self.dtype)
    lp = np.moveaxis(_log_probs(self, class_axis), class_axis, -1)  # (..., C)
    t = as_numpy(target).astype(np.int64)
    if self.dim() == 1:
        t = t.reshape(())
    ignored = t == ignore_index
    bad = ~ignored & ((t < 0) | (t >= n_classes))
    if bad.any():
        raise IndexError(f"Target {t[bad].reshape(-1)[0]} is out of bounds.")
    safe = np.where(ignored, 0, t)
    w = as_numpy(weight).astype(cd) if weight is not None else np.ones(n_classes, cd)
    if n_classes == 0:
        picked = np.zeros(t.shape, cd)
        wt = np.zeros(t.shape, cd)
    else:
        picked = np.take_along_axis(lp, safe[..., None], axis=-1)[..., 0]
        wt = np.where(ignored, cd.type(0), w[safe])
    nll = -picked * wt
    if reduction == 0:
        loss = nll
    elif reduction == 2:
        loss = np.sum(nll)
    else:
        loss = np.sum(nll) / np.sum(wt)
    if label_smoothing > 0:
        # torch's cross_entropy_loss_label_smoothing: the uniform part, normalized like nll.
        lpw = lp * w if weight is not None else lp
        smooth = np.where(ignored, cd.type(0), -np.sum(lpw, axis=-1))
        if reduction == 0:
            ret = smooth
        elif reduction == 2:
            ret = np.sum(smooth)
        else:
            ret = np.sum(smooth) / (np.sum(wt) if weight is not None else cd.type(np.sum(~ignored)))
        loss = cd.type(1 - label_smoothing) * loss + ret * (cd.type(label_smoothing) / cd.type(n_classes))
    return store(out, loss)


@kernel("CPU")
def cross_entropy_loss(self, target, weight=None, reduction=1, ignore_index=-100, label_smoothing=0.0):
    prob, shape, d = meta.cross_entropy_meta(self, target, weight, reduction, ignore_index, label_smoothing)
    out = new_output(shape, d, self.device)
    if prob:
        return _probability_loss(self, target, weight, reduction, label_smoothing, out)
    return _class_loss(self, target, weight, reduction, ignore_index, label_smoothing, out)
