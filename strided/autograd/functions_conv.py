"""The gradient of the ``convolution`` op (derivatives.yaml).

Note [Convolution backward]
The forward is columns times weight (Note [Convolution as a GEMM]); recorded op by op, autograd would
keep the columns -- K times the input for a K-element kernel (9x for 3x3) -- from the forward to the
backward, for every convolution of a network at once. As one op, the node keeps only the input and the
weight (as torch's ``ConvolutionBackward0`` does) and the backward makes the columns again, one
``im2col``, when the weight's gradient needs them:

    grad_weight = grad (N, G, C_out/G, L) @ colsᴴ (N, G, L, C*K), summed over N
    grad_input  = col2im(weightᴴ (G, C*K, C_out/G) @ grad)     (the 1x1 stride-1 case: a reshape)

The weight's gradient takes whichever costs less memory: the per-sample products summed (N weights), or
one GEMM over N * L after copying grad and the columns into (G, ., N * L) order. A transposed
convolution is the adjoint: its forward spread ``weightᵀ @ input`` with col2im, so the columns are grad's:

    cols        = im2col(grad)                                  (N, G, C_out/G*K, L), L = the input's H*W
    grad_input  = conj(weight) as (G, C_in/G, C_out/G*K) @ cols
    grad_weight = input (N, G, C_in/G, L) @ colsᵀ, summed over N

A batch whose columns exceed the budget takes these steps per slice of samples (Note [Convolution batch
chunks]); on CUDA, 1-d and 2-d convolutions of one group take them as direct launches (Note [Direct CUDA
convolution]). A 3-d convolution (plain or transposed) takes the same steps with the window view of the padded tensor
for im2col and strided adds for col2im. Every step is an op with a derivative, so double backward works. A
transposed convolution whose output padding reaches its stride (the columns' blocks would not be the input's
positions) differentiates its forward again: that runs a second time.
"""

from __future__ import annotations

import math

from .. import dtypes as dt
from ..dispatch.dispatcher import grad_mode
from ..ops import bound as ops

__all__ = ["convolution_backward"]


def convolution_backward(grad, input, weight, stride, padding, dilation, transposed, output_padding, groups,
                         grad_input_mask):
    """(grad_input, grad_weight, grad_bias) of ``convolution``, each only where ``grad_input_mask`` asks."""
    need_input, need_weight, need_bias = grad_input_mask
    gb = ops.sum(grad, [0, *range(2, grad.dim())]) if need_bias else None
    if not (need_input or need_weight):
        return None, None, gb
    from ..ops.composite.convolution import precision_scope

    with precision_scope(grad):  # Note [Convolution precision]
        args = (stride, padding, dilation, transposed, output_padding, groups, need_input, need_weight)
        if input.device.type == "cuda" and not grad_mode.enabled:
            from ..backends.cuda.kernels import convolution_ops as direct
            from ..ops.composite.convolution import _expand

            k = weight.dim() - 2
            s = _expand(stride, k, "stride")
            q = _expand(output_padding, k, "output_padding") if transposed else None
            if direct.takes(input, weight, transposed, groups, s, q):  # Note [Direct CUDA convolution]
                p, d = _expand(padding, k, "padding"), _expand(dilation, k, "dilation")
                if not transposed:
                    gi, gw = direct.convolution_backward(grad, input, weight, s, p, d, need_input, need_weight)
                    return gi, gw, gb
                gi, gw = direct.transposed_backward(grad, input, weight, s, p, d, need_input, need_weight)
                return gi, gw, gb
        n = input.shape[0]
        step = n if grad_mode.enabled else _samples_per_chunk(input, weight, stride, padding, dilation, transposed,
                                                               groups)
        if step >= n:
            gi, gw = _input_and_weight_grads(grad, input, weight, *args)
        else:
            gi, gw = _over_batch_chunks(step, grad, input, weight, args)
    return gi, gw, gb


def _samples_per_chunk(input, weight, stride, padding, dilation, transposed, groups):
    from ..ops.composite.convolution import _expand
    from ..ops.composite.convolution_chunks import samples_per_chunk

    k = weight.dim() - 2
    s, p, d = _expand(stride, k, "stride"), _expand(padding, k, "padding"), _expand(dilation, k, "dilation")
    return samples_per_chunk(input, weight, s, p, d, transposed, groups)


def _over_batch_chunks(step, grad, input, weight, args):
    """The input and weight gradients over slices of ``step`` samples (Note [Convolution batch chunks]): the
    input's gradient assembled from the slices', the weight's their sum (in float32 for half types)."""
    from ..ops.composite.convolution_chunks import over_batch

    n = input.shape[0]
    need_input, need_weight = args[-2:]
    acc = [None]

    def run(lo, count):
        gi, gw = _input_and_weight_grads(ops.narrow(grad, 0, lo, count), ops.narrow(input, 0, lo, count), weight,
                                         *args)
        if need_weight:
            if acc[0] is None:
                acc[0] = gw.float() if gw.dtype.itemsize < 4 and gw.dtype.is_floating_point else gw
            else:
                acc[0].add_(gw)
        return gi

    if need_input:
        gi = over_batch(step, n, run)
    else:
        gi = None
        for lo in range(0, n, step):
            run(lo, min(step, n - lo))
    gw = acc[0]
    if gw is not None and gw.dtype != weight.dtype:
        gw = gw.to(weight.dtype)
    return gi, gw


def _input_and_weight_grads(grad, input, weight, stride, padding, dilation, transposed, output_padding, groups,
                            need_input, need_weight):
    from ..ops.composite.convolution import _expand

    k = weight.dim() - 2
    s, p, d = _expand(stride, k, "stride"), _expand(padding, k, "padding"), _expand(dilation, k, "dilation")
    q = _expand(output_padding, k, "output_padding")
    if weight.dtype in (dt.float16, dt.bfloat16):
        # Note [Half convolution gradients]: the columns col2im sums and the per-sample products summed over N are
        # GEMM results; rounded to half each before those sums they lost what cancels there (0.05 at 10 in a bf16
        # grouped conv2d's gradient). As the forward's half transposed convolutions (Note [Half transposed
        # convolutions]) the gradients are computed in float32 and rounded once.
        f32 = [ops._to_copy(t, dtype=dt.float32) for t in (grad, input, weight)]
        gi, gw = _input_and_weight_grads(*f32, stride, padding, dilation, transposed, output_padding, groups,
                                         need_input, need_weight)
        return (None if gi is None else ops._to_copy(gi, dtype=input.dtype),
                None if gw is None else ops._to_copy(gw, dtype=weight.dtype))
    if transposed and any(qi >= si for qi, si in zip(q, s)):
        return _by_recompute(grad, input, weight, s, p, d, transposed, q, groups, need_input, need_weight)
    backward = _conv_transpose_backward if transposed else _conv_backward
    if k == 1:
        gi, gw = backward(ops.unsqueeze(grad, 2), ops.unsqueeze(input, 2), ops.unsqueeze(weight, 2),
                          (1, s[0]), (0, p[0]), (1, d[0]), groups, need_input, need_weight)
        return (ops.squeeze(gi, [2]) if gi is not None else None,
                ops.squeeze(gw, [2]) if gw is not None else None)
    return backward(grad, input, weight, s, p, d, groups, need_input, need_weight)


def _columns(x, kernel, s, d, p, blocks):
    """The (N, C * K, L) columns of (N, C, *spatial) ``x`` for ``blocks`` output positions (symmetric padding)."""
    if len(kernel) == 2:
        from ..nn.convolution import _columns as columns2d

        return columns2d(x, tuple(kernel), s, d, (p[0], p[0]), (p[1], p[1]), *blocks)
    from ..nn.convolution3d import columns3d

    return columns3d(x, kernel, s, d, p, blocks)


def _spread(cols, like, kernel, s, d, p, blocks):
    """The adjoint of ``_columns``: the (N, C * K, L) values added back into the (N, C, *spatial) positions they
    were read from (``col2im``; the 1x1 stride-1 case: a reshape)."""
    spatial = like.shape[2:]
    if all(v == 1 for v in (*kernel, *s)) and not any(p):
        return ops.reshape(cols, like.shape)
    if len(kernel) == 2:
        return ops.col2im(cols, tuple(spatial), tuple(kernel), d, p, s)
    from ..nn.convolution_transpose import _col2im

    n, c = like.shape[0], like.shape[1]
    out = ops.zeros((n, c, *(size + 2 * pp for size, pp in zip(spatial, p))), dtype=cols.dtype, device=cols.device)
    _col2im(out, ops.reshape(cols, (n, c, *kernel, *blocks)), blocks, s, d)
    if any(p):
        for dim, (pp, size) in enumerate(zip(p, spatial), start=2):
            out = ops.slice(out, dim, pp, pp + size)
        out = ops.contiguous(out)
    return out


def _weight_grad(a, cols, n, groups, length):
    """sum over N of a (N, G, A, L) @ colsᵀ (N, G, L, R), whichever way costs less memory (Note [Convolution
    backward]): per-sample products summed, or one GEMM over N * L."""
    ag, rows = a.shape[2], cols.shape[2]
    if ag * rows <= length * (rows + ag):
        return ops.sum(ops.matmul(a, ops.transpose(cols, 2, 3)), [0])
    al = ops.reshape(ops.permute(a, (1, 2, 0, 3)), (groups, ag, n * length))
    cl = ops.reshape(ops.permute(cols, (1, 2, 0, 3)), (groups, rows, n * length))
    return ops.matmul(al, ops.transpose(cl, 1, 2))


def _conv_backward(grad, x, weight, s, p, d, groups, need_input, need_weight):
    """The input and weight gradients of a 2-d or 3-d convolution (Note [Convolution backward])."""
    n, c = x.shape[0], x.shape[1]
    oc, cg, *kernel = weight.shape
    blocks = grad.shape[2:]
    rows, length = cg * math.prod(kernel), math.prod(blocks)
    if weight.dtype.is_complex:
        x, weight = ops.conj(x), ops.conj(weight)
    g = ops.reshape(grad, (n, groups, oc // groups, length))
    gi = gw = None
    if need_input:
        wt = ops.transpose(ops.reshape(weight, (groups, oc // groups, rows)), 1, 2)  # (G, C/G * K, C_out/G)
        grad_cols = ops.reshape(ops.matmul(wt, g), (n, c * rows // cg, length))
        gi = _spread(grad_cols, x, kernel, s, d, p, blocks)
        del grad_cols  # freed before the forward's columns are made again: one set of columns at a time
    if need_weight:
        cols = ops.reshape(_columns(x, kernel, s, d, p, blocks), (n, groups, rows, length))
        gw = ops.reshape(_weight_grad(g, cols, n, groups, length), weight.shape)
    return gi, gw


def _conv_transpose_backward(grad, x, weight, s, p, d, groups, need_input, need_weight):
    """The input and weight gradients of a 2-d or 3-d transposed convolution whose output padding is below its
    stride (Note [Convolution backward]): the columns of ``grad`` are the forward's."""
    n, ic = x.shape[0], x.shape[1]
    _, ocg, *kernel = weight.shape
    blocks = x.shape[2:]
    rows, length, icg = ocg * math.prod(kernel), math.prod(blocks), ic // groups
    if weight.dtype.is_complex:
        x, weight = ops.conj(x), ops.conj(weight)
    cols = ops.reshape(_columns(grad, kernel, s, d, p, blocks), (n, groups, rows, length))
    gi = gw = None
    if need_input:
        gi = ops.reshape(ops.matmul(ops.reshape(weight, (groups, icg, rows)), cols), x.shape)
    if need_weight:
        xg = ops.reshape(x, (n, groups, icg, length))
        gw = ops.reshape(_weight_grad(xg, cols, n, groups, length), weight.shape)
    return gi, gw


def _by_recompute(grad, input, weight, s, p, d, transposed, q, groups, need_input, need_weight):
    """The input and weight gradients of a transposed or 3-d convolution: its function run again, differentiated."""
    from .. import autograd
    from ..ops.composite.convolution import _by_function

    create_graph = grad_mode.enabled  # a double backward differentiates this
    xi = input if create_graph else input.detach()
    wi = weight if create_graph else weight.detach()
    with autograd.enable_grad():
        if not create_graph:
            xi.requires_grad_(need_input)
            wi.requires_grad_(need_weight)
        out = _by_function(xi, wi, None, s, p, d, transposed, q, groups)
        wanted = [t for t, need in ((xi, need_input), (wi, need_weight)) if need]
        found = iter(autograd.grad(out, wanted, grad, create_graph=create_graph, allow_unused=True))
    gi = next(found) if need_input else None
    gw = next(found) if need_weight else None
    return (ops.zeros_like(input) if need_input and gi is None else gi,
            ops.zeros_like(weight) if need_weight and gw is None else gw)

