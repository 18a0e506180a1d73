"""OpInfos: softmax, log_softmax, layer_norm, cross_entropy_loss, dropout."""

from __future__ import annotations

import math

import numpy as np

from ... import dtypes as dt
from ..opinfo import FLOATING, TOLERANCES, OpInfo, SampleInput, make_arg, to_device
from .pointwise_samples import error, quiet_ref, tensor_of

# Normalized values of a few elements rounded once to a half type; losses summed over a batch.
HALF_TOL = {dt.float16: (2e-3, 4e-3), dt.bfloat16: (1.6e-2, 3e-2)}

# ---------------------------------------------------------------------------- softmax, log_softmax


def _upcast(dtype):
    return dt.float32 if dtype in (dt.float16, dt.bfloat16) else dt.float64


def _softmax_samples(dtype, rng):
    def a(shape, **kw):
        return make_arg(shape, dtype, rng=rng, **kw)

    yield SampleInput((a((3, 4)), 1), {}, "last dim")
    yield SampleInput((a((3, 4)), 0), {}, "first dim")
    yield SampleInput((a((2, 3, 4), noncontiguous=True), -2), {}, "noncontiguous, middle dim")
    yield SampleInput((a(()), 0), {}, "0-dim")
    yield SampleInput((a((0, 3)), 1), {}, "zero-size")
    yield SampleInput((a((3, 4), low=60, high=90), -1), {}, "large values (stable)")
    yield SampleInput((a((3, 4)), 1, _upcast(dtype)), {}, "dtype= upcast")
    yield SampleInput((make_arg((3, 4), dt.int64, rng=rng), 1, dtype), {}, "integral input, dtype=")
    yield SampleInput((tensor_of([[-math.inf, -math.inf, 1.0], [math.inf, 1.0, 2.0], [-math.inf, 0.0, 0.0]],
                                 dtype), 1), {}, "infinities")


def _softmax_backward_samples(log: bool):
    def samples(dtype, rng):
        def a(shape, **kw):
            return make_arg(shape, dtype, low=-2.0, high=2.0, rng=rng, **kw)

        def out(shape, dim, **kw):  # a real (log_)softmax output, as autograd passes
            x = make_arg(shape, dt.float64, low=-3.0, high=3.0, rng=rng)
            e = np.exp(np.asarray(x) - np.asarray(x).max(axis=dim, keepdims=True))
            y = e / e.sum(axis=dim, keepdims=True)
            return tensor_of(np.log(y) if log else y, dtype)

        yield SampleInput((a((3, 40)), out((3, 40), 1), 1, dtype), {}, "last dim")
        yield SampleInput((a((3, 4)), out((3, 4), 0), 0, dtype), {}, "first dim")
        yield SampleInput((a((2, 3, 4), noncontiguous=True), out((2, 3, 4), 1), -2, dtype), {},
                          "noncontiguous grad, middle dim")
        yield SampleInput((a((0, 3)), a((0, 3)), 1, dtype), {}, "zero-size")
        yield SampleInput((a((5, 700)), out((5, 700), 1), -1, _upcast(dtype)), {}, "long rows, wider input_dtype")
    return samples


def _softmax_backward_ref(log: bool):
    @quiet_ref
    def ref(g, y, dim, input_dtype):
        g, y = np.asarray(g, dtype=np.float64), np.asarray(y, dtype=np.float64)
        if log:
            return g - np.exp(y) * g.sum(axis=dim, keepdims=True)
        return y * (g - (g * y).sum(axis=dim, keepdims=True))
    return ref


def _softmax_backward_errors(name: str):
    def errors(rng):
        x = make_arg((2, 3), dt.float32, rng=rng)
        yield error((make_arg((2, 4), dt.float32, rng=rng), x, 1, dt.float32), RuntimeError,
                    f"{name}: grad_output of size [2, 4] does not match output of size [2, 3]")
        yield error((x, x, 2, dt.float32), IndexError,
                    "Dimension out of range (expected to be in range of [-2, 1], but got 2)")
    return errors


def _input64(a, dtype):
    return np.asarray(a, dtype=np.float64) if dtype is None else np.asarray(a).astype(np.float64)


@quiet_ref
def _log_softmax_ref(a, dim, dtype=None):
    x = _input64(a, dtype)
    if x.ndim == 0:
        return x - x
    z = x - np.amax(x, axis=dim, keepdims=True) if x.size else x
    return z - np.log(np.sum(np.exp(z), axis=dim, keepdims=True))


def _softmax_ref(a, dim, dtype=None):
    with np.errstate(all="ignore"):
        return np.exp(_log_softmax_ref(a, dim, dtype))


def _softmax_errors(name):
    def errors(rng):
        i = make_arg((2, 3), dt.int64, rng=rng)
        # the CPU kernels' names, or CUDA's host_softmax (torch 2.11)
        yield error((i, 1), NotImplementedError, f'"({name}_lastdim_kernel_impl|host_softmax)" not implemented for '
                    "'Long'", regex=True)
        yield error((i, 0), NotImplementedError, f'"({name}_kernel_impl|host_softmax)" not implemented for \'Long\'',
                    regex=True)
        yield error((make_arg((2, 3), dt.float32, rng=rng), 2), IndexError,
                    "Dimension out of range (expected to be in range of [-2, 1], but got 2)")
    return errors


# ---------------------------------------------------------------------------- layer_norm


def _layer_norm_samples(dtype, rng):
    def a(shape, **kw):
        return make_arg(shape, dtype, rng=rng, **kw)

    yield SampleInput((a((3, 5)), [5]), {}, "no affine")
    yield SampleInput((a((2, 3, 4), noncontiguous=True), [4], a((4,)), a((4,))), {}, "noncontiguous, affine")
    yield SampleInput((a((2, 3, 4)), [3, 4], a((3, 4))), {"eps": 1e-3}, "two dims, weight only, eps")
    yield SampleInput((a((2, 3, 4)), (3, 4), None, a((3, 4), noncontiguous=True)), {}, "bias only")
    yield SampleInput((a((6,)), [6], a((6,)), a((6,))), {}, "1-d input")
    yield SampleInput((a((0, 4)), [4], a((4,)), a((4,))), {}, "zero-size batch")
    yield SampleInput((a((3, 1)), [1]), {}, "single element")
    if dtype in (dt.float16, dt.bfloat16):
        w = make_arg((4,), dt.float32, rng=rng)
        yield SampleInput((a((3, 4)), [4], w, make_arg((4,), dt.float32, rng=rng)), {}, "float32 parameters")


def _layer_norm_ref(x, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    x = np.asarray(x, dtype=np.float64)
    n = len(normalized_shape)
    axes = tuple(range(x.ndim - n, x.ndim))
    if x.size == 0:
        return x
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps)
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y


def _layer_norm_backward_samples(dtype, rng):
    def a(shape, **kw):
        return make_arg(shape, dtype, low=-2.0, high=2.0, rng=rng, **kw)

    every = [True, True, True]
    yield SampleInput((a((3, 5)), a((3, 5)), [5], a((5,)), 1e-5, every), {}, "weight, all outputs")
    yield SampleInput((a((3, 5)), a((3, 5)), [5], None, 1e-5, [True, False, True]), {}, "no weight")
    yield SampleInput((a((2, 3, 4), noncontiguous=True), a((2, 3, 4), noncontiguous=True), [3, 4], a((3, 4)), 1e-3,
                       every), {}, "two dims, noncontiguous, eps")
    yield SampleInput((a((70, 6)), a((70, 6)), [6], a((6,)), 1e-5, [False, True, True]), {}, "parameters only")
    yield SampleInput((a((4, 40)), a((4, 40)), [40], a((40,)), 1e-5, [True, False, False]), {}, "input only")
    yield SampleInput((a((0, 4)), a((0, 4)), [4], a((4,)), 1e-5, every), {}, "zero-size batch")
    yield SampleInput((a((3, 1)), a((3, 1)), [1], None, 1e-5, every), {}, "single element rows")
    yield SampleInput((a((6,)), a((6,)), [6], a((6,)), 1e-5, every), {}, "1-d input")
    if dtype in (dt.float16, dt.bfloat16):
        w = make_arg((4,), dt.float32, rng=rng)
        yield SampleInput((a((3, 4)), a((3, 4)), [4], w, 1e-5, every), {}, "float32 weight")


def _layer_norm_backward_ref(grad, x, normalized_shape, weight, eps, output_mask):
    x = np.asarray(x, dtype=np.float64)
    grad = np.asarray(grad, dtype=np.float64)
    n = len(normalized_shape)
    axes = tuple(range(x.ndim - n, x.ndim))
    lead = tuple(range(x.ndim - n))
    pshape = x.shape[x.ndim - n:]
    mean = x.mean(axis=axes, keepdims=True) if x.size else x
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True) if x.size else x
    rstd = 1 / np.sqrt(var + eps)
    xhat = (x - mean) * rstd
    g = grad * weight if weight is not None else grad
    dx = rstd * (g - g.mean(axis=axes, keepdims=True) - xhat * (g * xhat).mean(axis=axes, keepdims=True)) \
        if x.size else x
    dw = (grad * xhat).sum(axis=lead) if x.size else np.zeros(pshape)
    db = grad.sum(axis=lead) if x.size else np.zeros(pshape)
    empty = np.zeros(0)
    return (dx if output_mask[0] else empty, dw if output_mask[1] else empty, db if output_mask[2] else empty)


def _layer_norm_backward_errors(rng):
    x = make_arg((2, 3), dt.float32, rng=rng)
    yield error((make_arg((2, 4), dt.float32, rng=rng), x, [3], None, 1e-5, [True, True, True]), RuntimeError,
                "_layer_norm_backward: grad_out of size [2, 4] does not match input of size [2, 3]")
    yield error((x, x, [4], None, 1e-5, [True, True, True]), RuntimeError,
                "Given normalized_shape=[4], expected input with shape [*, 4], but got input of size[2, 3]")


def _layer_norm_errors(rng):
    x = make_arg((2, 3), dt.float32, rng=rng)
    yield error((x, [4]), RuntimeError,
                "Given normalized_shape=[4], expected input with shape [*, 4], but got input of size[2, 3]")
    yield error((x, [3, 2]), RuntimeError, "Given normalized_shape=[3, 2], expected input with shape "
                "[*, 3, 2], but got input of size[2, 3]")
    yield error((x, []), RuntimeError, "Expected normalized_shape to be at least 1-dimensional, i.e., "
                "containing at least one element, but got normalized_shape = []")
    yield error((x, [3], make_arg((4,), dt.float32, rng=rng)), RuntimeError,
                "Expected weight to be of same shape as normalized_shape, but got weight of shape [4] and "
                "normalized_shape = [3]")
    yield error((x, [3], None, make_arg((1, 3), dt.float32, rng=rng)), RuntimeError,
                "Expected bias to be of same shape as normalized_shape, but got bias of shape [1, 3] and "
                "normalized_shape = [3]")
    yield error((make_arg((2, 3), dt.int64, rng=rng), [3]), NotImplementedError,
                "\"LayerNormKernelImpl\" not implemented for 'Long'")
    yield error((x, [3], make_arg((3,), dt.float64, rng=rng)), RuntimeError,
                "mixed dtype (CPU): expect parameter to have scalar type of Float")
    x64 = make_arg((2, 3), dt.float64, rng=rng)
    yield error((x64, [3], make_arg((3,), dt.float32, rng=rng)), RuntimeError,
                "mixed dtype (CPU): all inputs must share same datatype.")


# ---------------------------------------------------------------------------- cross_entropy_loss


def _targets(shape, n_classes, rng, ignore=None):
    t = rng.integers(0, n_classes, size=shape)
    if ignore is not None and t.size:
        t.reshape(-1)[0] = ignore
    return tensor_of(t, dt.int64)


def _cross_entropy_samples(dtype, rng):
    def a(shape, **kw):
        return make_arg(shape, dtype, rng=rng, **kw)

    def probs(shape):
        p = rng.random(shape)
        return tensor_of(p / p.sum(axis=1 if len(shape) > 1 else 0, keepdims=True), dtype)

    for reduction in (0, 1, 2):
        kw = {"reduction": reduction}
        yield SampleInput((a((4, 3)), _targets((4,), 3, rng)), dict(kw), f"indices, reduction {reduction}")
        yield SampleInput((a((4, 3), noncontiguous=True), _targets((4,), 3, rng, ignore=-100),
                           a((3,), low=0.1)), dict(kw), "noncontiguous, weight, ignored target")
        yield SampleInput((a((4, 3)), _targets((4,), 3, rng, ignore=1)),
                          dict(kw, ignore_index=1, label_smoothing=0.2), "label smoothing, ignore_index")
        yield SampleInput((a((4, 3)), _targets((4,), 3, rng, ignore=-100), a((3,), low=0.1)),
                          dict(kw, label_smoothing=0.3), "label smoothing, weight")
        yield SampleInput((a((2, 3, 5)), _targets((2, 5), 3, rng)), dict(kw), "spatial 3-d")
        yield SampleInput((a((2, 3, 2, 2)), _targets((2, 2, 2), 3, rng, ignore=-100), a((3,), low=0.1)),
                          dict(kw), "spatial 4-d, weight")
        yield SampleInput((a((4, 3)), probs((4, 3))), dict(kw), "probabilities")
        yield SampleInput((a((2, 3, 4)), probs((2, 3, 4)), a((3,), low=0.1)), dict(kw, label_smoothing=0.1),
                          "spatial probabilities, weight, label smoothing")
        yield SampleInput((a((0, 3)), _targets((0,), 3, rng)), dict(kw), "empty batch")
    yield SampleInput((a((5,)), tensor_of(2, dt.int64)), {}, "1-d input, 0-dim target")
    yield SampleInput((a((5,)), probs((5,))), {"reduction": 0}, "1-d input, probabilities")
    yield SampleInput((a((3, 3)), tensor_of([-100, -100, -100], dt.int64)), {}, "every target ignored")
    yield SampleInput((a((3, 4)), tensor_of([0, 3, 1], dt.uint8)), {}, "uint8 target")


@quiet_ref
def _cross_entropy_ref(x, target, weight=None, reduction=1, ignore_index=-100, label_smoothing=0.0):
    x = np.asarray(x, dtype=np.float64)
    class_axis = 0 if x.ndim == 1 else 1
    n = x.shape[class_axis]
    lp = _log_softmax_ref(x, class_axis) if x.size else x
    wshape = [1] * x.ndim
    wshape[class_axis] = n
    w = np.ones(n) if weight is None else np.asarray(weight, dtype=np.float64)
    if np.asarray(target).shape == x.shape:
        t = np.asarray(target, dtype=np.float64)
        if label_smoothing > 0:
            t = t * (1 - label_smoothing) + label_smoothing / n
        loss = -(lp * t * w.reshape(wshape)).sum(axis=class_axis)
        if reduction == 0:
            return loss
        return loss.sum() if reduction == 2 else (loss.sum() / loss.size if loss.size else np.nan)
    t = np.asarray(target).astype(np.int64)
    keep = t != ignore_index
    safe = np.where(keep, t, 0)
    lp_last = np.moveaxis(lp, class_axis, -1)
    picked = np.take_along_axis(lp_last, safe[..., None], axis=-1)[..., 0]
    wt = np.where(keep, w[safe], 0.0)
    nll = -picked * wt
    smooth = np.where(keep, -(lp_last * w).sum(axis=-1), 0.0)
    if reduction == 0:
        nll_r, smooth_r = nll, smooth
    elif reduction == 2:
        nll_r, smooth_r = nll.sum(), smooth.sum()
    else:
        nll_r, smooth_r = nll.sum() / wt.sum(), smooth.sum() / wt.sum()
    if label_smoothing > 0:
        return (1 - label_smoothing) * nll_r + smooth_r * (label_smoothing / n)
    return nll_r


def _cross_entropy_errors(rng):
    x = make_arg((2, 3), dt.float32, rng=rng)
    t = tensor_of([0, 2], dt.int64)
    yield error((x, tensor_of([0, 2], dt.int32)), RuntimeError,
                "expected target dtype to be Long or Byte, but got Int")
    yield error((x, tensor_of([0, 1, 2], dt.int64)), ValueError,
                "Expected input batch_size (2) to match target batch_size (3).")
    yield error((x, t, make_arg((4,), dt.float32, rng=rng)), RuntimeError,
                "weight tensor should be defined either for all 3 classes or no classes but got weight "
                "tensor of shape: [4]")
    yield error((x, t, make_arg((3,), dt.float64, rng=rng)), RuntimeError,
                "expected scalar type Float but found Double")
    yield error((x, tensor_of([[0, 1], [1, 0]], dt.int64)), RuntimeError,
                "0D or 1D target tensor expected, multi-target not supported")
    yield error((make_arg((2, 3, 4), dt.float32, rng=rng), tensor_of([0, 1], dt.int64)), RuntimeError,
                "Expected target size [2, 4], got [2]")
    yield error((make_arg((2, 3, 4, 5), dt.float32, rng=rng), _targets((2, 4), 3, rng)), RuntimeError,
                "only batches of spatial targets supported (3D tensors) but got targets of dimension: 2")
    yield error((x, make_arg((2, 3), dt.int64, rng=rng, low=0, high=3)), RuntimeError,
                "Expected floating point type for target with class probabilities, got Long")
    yield error((x, make_arg((2, 3), dt.float32, rng=rng)), RuntimeError,
                "ignore_index is not supported for floating point target", {"ignore_index": 0})
    yield error((x, t), RuntimeError, "label_smoothing must be between 0.0 and 1.0. Got: 1.5",
                {"label_smoothing": 1.5})
    yield error((make_arg((2, 3), dt.int64, rng=rng), t), NotImplementedError,
                "\"(log_softmax_lastdim_kernel_impl|host_softmax)\" not implemented for 'Long'", regex=True)
    yield error((make_arg((5,), dt.float32, rng=rng), tensor_of([1, 2], dt.int64)), ValueError,
                "For 1D input, 1D target must have size 1, but got target size: 2")
    yield error((x, t), ValueError, "3 is not a valid value for reduction", {"reduction": 3})


# ---------------------------------------------------------------------------- dropout

_DROPOUT_SEED = 1234


def _dropout(input, p, train, seed=None):
    """``strided.dropout`` with a Generator of ``input``'s device seeded by ``seed``."""
    from ... import random
    from ...ops import bound as ops

    gen = None
    if seed is not None and input.device.type != "meta":
        gen = random.Generator(input.device).manual_seed(seed)
    return ops.dropout(input, p, train, generator=gen)


def _dropout_samples(dtype, rng):
    def a(shape, **kw):
        return make_arg(shape, dtype, rng=rng, low=0.5, high=9, **kw)

    yield SampleInput((a((40, 50)), 0.5, True, _DROPOUT_SEED), {}, "p=0.5")
    yield SampleInput((a((20, 30), noncontiguous=True), 0.2, True, _DROPOUT_SEED), {}, "noncontiguous p=0.2")
    yield SampleInput((a((3, 4)), 0.5, False), {}, "eval mode is the identity")
    yield SampleInput((a((3, 4)), 0.0, True), {}, "p=0 keeps everything")
    yield SampleInput((a((3, 4)), 1.0, True), {}, "p=1 drops everything")
    yield SampleInput((a(()), 0.5, True, _DROPOUT_SEED), {}, "0-dim")
    yield SampleInput((a((0, 3)), 0.5, True, _DROPOUT_SEED), {}, "zero-size")


def _dropout_check(result, sample):
    x, p, train = sample.args[:3]
    got = result.numpy(force=True).astype(np.float64)
    want = x.numpy(force=True).astype(np.float64)
    assert got.shape == want.shape and result.dtype is x.dtype, sample
    if not train or p == 0:
        np.testing.assert_array_equal(got, want, err_msg=str(sample))
        return
    if p == 1:
        assert not got.any(), sample
        return
    rtol, atol = TOLERANCES[x.dtype]
    kept = got != 0
    np.testing.assert_allclose(got[kept], want[kept] / (1 - p), rtol=rtol, atol=atol, err_msg=str(sample))
    if got.size >= 500:
        assert abs(kept.mean() - (1 - p)) < 0.1, f"{sample}: kept {kept.mean():.3f}, expected {1 - p}"
    again = _dropout(to_device(x, result.device.type), *sample.args[1:])
    np.testing.assert_array_equal(again.numpy(force=True), result.numpy(force=True),
                                  err_msg=f"{sample}: same seed, different mask")


def _dropout_errors(rng):
    yield error((make_arg((2, 3), dt.float32, rng=rng), 1.5, True), ValueError,
                "dropout probability has to be between 0 and 1, but got 1.5")


OPS = [
    OpInfo("softmax.int", _softmax_samples, ref=_softmax_ref, tolerances=HALF_TOL,
           errors=_softmax_errors("softmax")),
    OpInfo("log_softmax.int", _softmax_samples, ref=_log_softmax_ref, tolerances=HALF_TOL,
           errors=_softmax_errors("log_softmax")),
    OpInfo("_softmax_backward_data", _softmax_backward_samples(False), ref=_softmax_backward_ref(False),
           tolerances=HALF_TOL, errors=_softmax_backward_errors("_softmax_backward_data")),
    OpInfo("_log_softmax_backward_data", _softmax_backward_samples(True), ref=_softmax_backward_ref(True),
           tolerances=HALF_TOL, errors=_softmax_backward_errors("_log_softmax_backward_data")),
    OpInfo("layer_norm", _layer_norm_samples, ref=_layer_norm_ref, tolerances=HALF_TOL,
           errors=_layer_norm_errors),
    OpInfo("_layer_norm_backward", _layer_norm_backward_samples, ref=_layer_norm_backward_ref, tolerances=HALF_TOL,
           errors=_layer_norm_backward_errors),
    OpInfo("cross_entropy_loss", _cross_entropy_samples, ref=_cross_entropy_ref, tolerances=HALF_TOL,
           errors=_cross_entropy_errors),
    OpInfo("dropout", _dropout_samples, ref=None, op=_dropout, check=_dropout_check, dtypes=FLOATING,
           errors=_dropout_errors),
]
