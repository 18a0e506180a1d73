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
one GEMM over N * L after copying grad and the columns into (G, ., N * L) order. A 1-d or 2-d transposed
convolution is the adjoint: its forward spread ``weightᵀ @ input`` with col2im, so the columns are grad's:

    cols        = im2col(grad)                                  (N, G, C_out/G*K, L), L = the input's H*W
    grad_input  = conj(weight) as (G, C_in/G, C_out/G*K) @ cols
    grad_weight = input (N, G, C_in/G, L) @ colsᵀ, summed over N

Every step is an op with a derivative, so double backward works. 3-d convolutions (the op computes them with
their ``nn.functional`` functions), and transposed ones whose output padding reaches the stride (col2im's blocks
would not be the input's positions), differentiate those functions again: their forward runs a second time.
"""

from __future__ import annotations

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
        gi, gw = _input_and_weight_grads(grad, input, weight, stride, padding, dilation, transposed, output_padding,
                                         groups, need_input, need_weight)
    return gi, gw, gb


def _input_and_weight_grads(grad, input, weight, stride, padding, dilation, transposed, output_padding, groups,
                            need_input, need_weight):
    from ..ops.composite.convolution import _expand

    k = weight.dim() - 2
    s, p, d = _expand(stride, k, "stride"), _expand(padding, k, "padding"), _expand(dilation, k, "dilation")
    q = _expand(output_padding, k, "output_padding")
    if k == 3 or (transposed and any(qi >= si for qi, si in zip(q, s))):
        return _by_recompute(grad, input, weight, s, p, d, transposed, q, groups, need_input, need_weight)
    backward = _conv_transpose2d_backward if transposed else _conv2d_backward
    if k == 1:
        gi, gw = backward(ops.unsqueeze(grad, 2), ops.unsqueeze(input, 2), ops.unsqueeze(weight, 2),
                          (1, s[0]), (0, p[0]), (1, d[0]), groups, need_input, need_weight)
        return (ops.squeeze(gi, [2]) if gi is not None else None,
                ops.squeeze(gw, [2]) if gw is not None else None)
    return backward(grad, input, weight, s, p, d, groups, need_input, need_weight)


def _conv2d_backward(grad, x, weight, s, p, d, groups, need_input, need_weight):
    from ..nn.convolution import _columns

    n, c, h, w = x.shape
    oc, cg, kh, kw = weight.shape
    oh, ow = grad.shape[2:]
    rows, length = cg * kh * kw, oh * ow
    if weight.dtype.is_complex:
        x, weight = ops.conj(x), ops.conj(weight)
    g = ops.reshape(grad, (n, groups, oc // groups, length))
    gi = gw = None
    if need_input:
        wt = ops.transpose(ops.reshape(weight, (groups, oc // groups, rows)), 1, 2)  # (G, C/G * K, C_out/G)
        grad_cols = ops.reshape(ops.matmul(wt, g), (n, c * kh * kw, length))
        if (kh, kw) == (1, 1) and s == (1, 1) and p == (0, 0):
            gi = ops.reshape(grad_cols, (n, c, h, w))
        else:
            gi = ops.col2im(grad_cols, (h, w), (kh, kw), d, p, s)
        del grad_cols  # freed before the forward's columns are made again: one set of columns at a time
    if need_weight:
        cols = ops.reshape(_columns(x, (kh, kw), s, d, (p[0], p[0]), (p[1], p[1]), oh, ow),
                           (n, groups, rows, length))
        if n * oc * rows <= n * length * (groups * rows + oc):  # per-sample products (Note [Convolution backward])
            gw = ops.sum(ops.matmul(g, ops.transpose(cols, 2, 3)), [0])
        else:
            gl = ops.reshape(ops.permute(g, (1, 2, 0, 3)), (groups, oc // groups, n * length))
            cl = ops.reshape(ops.permute(cols, (1, 2, 0, 3)), (groups, rows, n * length))
            gw = ops.matmul(gl, ops.transpose(cl, 1, 2))
        gw = ops.reshape(gw, weight.shape)
    return gi, gw


def _conv_transpose2d_backward(grad, x, weight, s, p, d, groups, need_input, need_weight):
    """The input and weight gradients of a 2-d transposed convolution whose output padding is below its stride
    (Note [Convolution backward]): the columns of ``grad`` are the forward's, one ``im2col``."""
    from ..nn.convolution import _columns

    n, ic, h, w = x.shape
    _, ocg, kh, kw = weight.shape
    rows, length, icg = ocg * kh * kw, h * w, ic // groups
    if weight.dtype.is_complex:
        x, weight = ops.conj(x), ops.conj(weight)
    cols = ops.reshape(_columns(grad, (kh, kw), s, d, (p[0], p[0]), (p[1], p[1]), h, w), (n, groups, rows, length))
    gi = gw = None
    if need_input:
        gi = ops.reshape(ops.matmul(ops.reshape(weight, (groups, icg, rows)), cols), (n, ic, h, w))
    if need_weight:
        xg = ops.reshape(x, (n, groups, icg, length))
        if n * ic * rows <= n * length * (groups * rows + ic):  # per-sample products (Note [Convolution backward])
            gw = ops.sum(ops.matmul(xg, ops.transpose(cols, 2, 3)), [0])
        else:
            xl = ops.reshape(ops.permute(xg, (1, 2, 0, 3)), (groups, icg, n * length))
            cl = ops.reshape(ops.permute(cols, (1, 2, 0, 3)), (groups, rows, n * length))
            gw = ops.matmul(xl, ops.transpose(cl, 1, 2))
        gw = ops.reshape(gw, weight.shape)
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

