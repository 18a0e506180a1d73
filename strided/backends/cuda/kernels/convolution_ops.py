"""The CUDA kernel of the ``convolution`` op and its gradient for 1-d and 2-d convolutions of one group: im2col /
col2im launches (``im2col.cu``) and cuBLASLt GEMMs called directly, over slices of the batch.

Note [Direct CUDA convolution]
The composite (``ops/composite/convolution.py``) makes a convolution from a dozen ops -- im2col, reshapes, a
broadcast matmul that views and expands its operands, col2im, permuted copies, sums -- each a dispatcher call,
and a ResNet-sized layer's forward and backward was host-bound on the H200 hosts measured. Here the same
computation is its launches alone (35-55% less host time per forward + backward on those layers, same process;
the op's YAML entry must name this kernel -- ``CUDA: convolution`` -- or the composite runs):

    forward      per slice: im2col(x[slice]) -> cols;  out[slice] = W (C_out, C*K) @ cols   (one batched GEMM,
                 W's batch stride 0, written in place into the output's rows); the bias added once
    grad_input   per slice: cols = Wᵀ @ grad[slice];  col2im(cols) -> grad_input[slice]  (written in place)
    grad_weight  per slice: sum over its samples of grad_s @ cols_sᵀ, added into one accumulator

The columns are one buffer of a slice's size (Note [Convolution batch chunks]), reused by every slice (the
launches are stream-ordered). A 1x1 kernel of stride 1 without padding needs no columns: the input is its own.
The weight's gradient takes the cheaper of two forms: when C*K <= L, one batched GEMM of the per-sample
products, summed by a GEMM with a row of ones; otherwise im2col writes the columns in (C*K, N, L) order, the
grad is copied into (C_out, N, L) order, and one GEMM over N * L sums them (the composite copied the columns
too). float32 / float64 GEMMs add into the accumulator (beta = 1); half types sum in float32.

Note [Half columns]
The columns that col2im sums (the input's gradient, a transposed convolution's forward) are GEMM results. Rounded
to float16 / bfloat16 each before the sum, they lost what cancels in it: a bf16 transposed convolution was off by
0.1 at 1.0 where torch's (cuDNN, accumulating in float32) rounds once. So for half types those columns are float32
(the half GEMM writes float32: Note [Float32 out of half GEMMs] in blas.py), col2im sums them in float32 into the
half image, and the weight gradient's per-sample products are float32 too. The float32 columns take the storage
of the slice's column buffer, which im2col's half columns reuse.

A transposed convolution is the adjoint, so it is made of the same three pieces with roles swapped: its forward
is the input gradient of the convolution it transposes (Wᵀ @ x, col2im into the output), its input gradient that
convolution's forward of the grad, its weight gradient that convolution's weight gradient with the grad as the
input and the input as the output's gradient. That holds while the output padding is below the stride (then the
windows of the output are the input's positions); a larger one, grouped and 3-d convolutions, channels-last
inputs and a double backward keep the composite.
"""

from __future__ import annotations

from .... import dtypes as dt
from ....dispatch.library import kernel
from ....ops import bound as ops
from ....tensor import contiguous_strides, make_tensor
from ..allocator import allocate_storage
from .blas_ops import _gemm
from .im2col_ops import launch_columns

__all__ = ["takes", "convolution_forward", "convolution_backward", "transposed_forward", "transposed_backward"]

_FLOATING = frozenset((dt.float16, dt.bfloat16, dt.float32, dt.float64))
_HALF = frozenset((dt.float16, dt.bfloat16))


def takes(input, weight, transposed: bool, groups: int, stride=None, output_padding=None) -> bool:
    """Whether this kernel computes the convolution (the rest go to the composite). A transposed one needs its
    ``stride`` and ``output_padding`` (one value per spatial dim), each padding below its stride."""
    from ....nn.channels_last import channels_last_format

    if transposed and (output_padding is None or any(q >= s for q, s in zip(output_padding, stride))):
        return False
    return (groups == 1 and weight.dim() in (3, 4) and input.dtype in _FLOATING
            and weight.dtype is input.dtype and weight.device == input.device and input._sizes[0] > 0
            and channels_last_format(input, weight) is None)


def _view(t, sizes: tuple, strides: tuple, offset: int = 0):
    """A view of ``t``'s storage (kernels only: no autograd, no checks)."""
    return make_tensor(t._storage, t._offset + offset, sizes, strides, t.dtype)


def _buffer(sizes: tuple, like, dtype=None):
    """A fresh contiguous tensor of ``like``'s device and ``dtype`` (default ``like``'s)."""
    dtype = like.dtype if dtype is None else dtype
    strides = contiguous_strides(sizes)
    nbytes = (strides[0] * sizes[0] if sizes else 1) * dtype.itemsize
    return make_tensor(allocate_storage(nbytes, like.device), 0, sizes, strides, dtype)


def _accumulator_dtype(like):
    """float32 for half types (Note [Half columns]), else ``like``'s dtype."""
    return dt.float32 if like.dtype in _HALF else like.dtype


def _columns(g, step: int, like) -> tuple:
    """(im2col's columns in ``like``'s dtype, the GEMM-written columns col2im sums) of a slice of ``step`` samples:
    one buffer, float32 for half types with the half columns in its storage (Note [Half columns])."""
    if g.trivial:
        return None, None
    sizes = (step, g.rows, g.length)
    sums = _buffer(sizes, like, _accumulator_dtype(like))
    if sums.dtype is like.dtype:
        return sums, sums
    return make_tensor(sums._storage, 0, sizes, sums._strides, like.dtype), sums


class _Geometry:
    """One 2-d convolution's sizes (1-d ones over a height of one) and its column launches."""

    __slots__ = ("n", "c", "h", "w", "oc", "kh", "kw", "s", "p", "d", "oh", "ow", "rows", "length", "trivial")

    def __init__(self, x_sizes: tuple, weight_sizes: tuple, s, p, d, oh, ow):
        self.n, self.c, self.h, self.w = x_sizes
        self.oc, _, self.kh, self.kw = weight_sizes
        self.s, self.p, self.d, self.oh, self.ow = s, p, d, oh, ow
        self.rows, self.length = self.c * self.kh * self.kw, oh * ow
        self.trivial = self.kh == self.kw == 1 and s == (1, 1) and p == (0, 0)  # the input is its own columns

    def _args(self, count: int, per_image: int, row_stride: int) -> tuple:
        return (count, self.c, self.h, self.w, self.oh, self.ow, self.kh, self.kw, *self.d, *self.p, *self.s,
                per_image, row_stride)

    def im2col(self, x, lo: int, count: int, cols, by_row: bool = False) -> None:
        """The columns of samples [lo, lo + count) of contiguous ``x`` into ``cols``: (count, C*K, L), or
        (C*K, count, L) ``by_row``."""
        src = x.data_ptr() + lo * self.c * self.h * self.w * x.dtype.itemsize
        length = self.length
        args = self._args(count, length, count * length) if by_row else self._args(count, self.rows * length, length)
        launch_columns("im2col_kernel", x, count * self.rows, length, src, cols.data_ptr(), args)

    def col2im(self, cols, count: int, image, lo: int) -> None:
        """The (count, C*K, L) columns summed into samples [lo, lo + count) of contiguous ``image``."""
        dst = image.data_ptr() + lo * self.c * self.h * self.w * image.dtype.itemsize
        launch_columns("col2im_kernel", cols, count * self.c, self.h * self.w, cols.data_ptr(), dst,
                       self._args(count, self.rows * self.length, self.length), image.dtype)


def _as_2d(input, weight, s, p, d):
    """1-d arguments as the 2-d ones over a height of one (views)."""
    if weight.dim() == 4:
        return input, weight, tuple(s), tuple(p), tuple(d)
    n, c, length = input._sizes
    x = _view(input, (n, c, 1, length), (input._strides[0], input._strides[1], 0, input._strides[2]))
    oc, cg, k = weight._sizes
    w = _view(weight, (oc, cg, 1, k), (weight._strides[0], weight._strides[1], 0, weight._strides[2]))
    return x, w, (1, s[0]), (0, p[0]), (1, d[0])


def _contiguous(t):
    return t if t.is_contiguous() else ops.contiguous(t)


def _checked(input, weight, s, p, d):
    from ....nn.convolution import check_conv2d

    x, w, s, p, d = _as_2d(input, weight, s, p, d)
    oh, ow = check_conv2d(x, w, s, p, d, 1)
    x = _contiguous(x)
    return _Geometry(x._sizes, w._sizes, s, p, d, oh, ow), x, _contiguous(w)


def _step(g: _Geometry, itemsize: int) -> int:
    from ....ops.composite import convolution_chunks

    per_sample = 0 if g.trivial else g.rows * g.length * itemsize
    if per_sample * g.n <= convolution_chunks.COLUMN_BUDGET:
        return g.n
    return max(1, convolution_chunks.COLUMN_BUDGET // per_sample)


def convolution_forward(input, weight, bias, s, p, d):
    """The convolution of batched ``input`` (Note [Direct CUDA convolution]); arguments as the op's, checked."""
    g, x, w = _checked(input, weight, s, p, d)
    blas = _gemm()
    n, oc, rows, length = g.n, g.oc, g.rows, g.length
    out = _buffer((n, oc, length), x)
    step = _step(g, x.dtype.itemsize)
    cols = None if g.trivial else _buffer((step, rows, length), x)
    for lo in range(0, n, step):
        count = min(step, n - lo)
        if g.trivial:
            b = _view(x, (count, rows, length), (rows * length, length, 1), lo * rows * length)
        else:
            g.im2col(x, lo, count, cols)
            b = _view(cols, (count, rows, length), cols._strides)
        a = _view(w, (count, oc, rows), (0, rows, 1))
        blas.gemm("convolution", _view(out, (count, oc, length), out._strides, lo * oc * length), a, b)
    if bias is not None:
        ops.add_(out, _view(bias, (1, oc, 1), (0, bias._strides[0], 0)))
    sizes = (n, oc, g.oh, g.ow) if input.dim() == 4 else (n, oc, g.ow)
    return _view(out, sizes, contiguous_strides(sizes))


def convolution_backward(grad, input, weight, s, p, d, need_input: bool, need_weight: bool):
    """(grad_input, grad_weight) of :func:`convolution_forward`, each only where asked."""
    g, x, w = _checked(input, weight, s, p, d)
    blas = _gemm()
    n, oc, rows, length = g.n, g.oc, g.rows, g.length
    gy = _contiguous(grad)
    step = _step(g, _accumulator_dtype(x).itemsize)  # the float32 columns of half types count in the budget
    cols, sums = _columns(g, step, x)
    gi = _buffer(tuple(input._sizes), x) if need_input else None
    gw = None
    per_sample = rows <= length  # Note [Direct CUDA convolution]: the weight gradient's cheaper form
    for lo in range(0, n, step):
        count = min(step, n - lo)
        g_slice = _view(gy, (count, oc, length), (oc * length, length, 1), lo * oc * length)
        x_slice = _view(x, (count, rows, length), (rows * length, length, 1), lo * rows * length) if g.trivial else None
        if need_input:
            _input_gradient(blas, g, w, g_slice, gi, lo, count, sums)
        if need_weight:
            form = _per_sample_weight_grad if per_sample else _one_gemm_weight_grad
            gw = form(blas, g, x, lo, count, g_slice, x_slice, cols, gw)
    if need_weight:
        gw = _view(gw, tuple(weight._sizes), contiguous_strides(weight._sizes))
        if gw.dtype is not weight.dtype:
            gw = ops._to_copy(gw, dtype=weight.dtype)
    return gi, gw


def _input_gradient(blas, g, w, g_slice, gi, lo: int, count: int, cols) -> None:
    """Samples [lo, lo + count) of the input's gradient: Wᵀ (C*K, C_out) @ grad_s (C_out, L), the columns (``cols``,
    float32 for half types: Note [Half columns]) summed into ``gi`` by col2im (written in place)."""
    oc, rows, length = g.oc, g.rows, g.length
    wt = _view(w, (count, rows, oc), (0, 1, rows))
    if g.trivial:
        blas.gemm("convolution_backward", _view(gi, (count, rows, length), (rows * length, length, 1),
                                                lo * rows * length), wt, g_slice)
    else:
        blas.gemm("convolution_backward", _view(cols, (count, rows, length), cols._strides), wt, g_slice)
        g.col2im(cols, count, gi, lo)


def transposed_forward(input, weight, bias, s, p, d, q):
    """The transposed convolution of batched ``input`` (output padding below the stride): the input gradient of the
    convolution it transposes (Note [Direct CUDA convolution])."""
    from ....nn.convolution_transpose import check_conv_transpose2d

    x, w, s, p, d = _as_2d(input, weight, s, p, d)
    q = tuple(q) if weight.dim() == 4 else (0, q[0])
    oh, ow = check_conv_transpose2d(x, w, bias, s, p, d, q, 1)
    n, c_in, h, wd = x._sizes
    c_out = w._sizes[1]
    # the convolution from the (N, C_out, OH, OW) output back to the input: its windows are the input's H x W
    # positions when the output padding is below the stride
    g = _Geometry((n, c_out, oh, ow), w._sizes, s, p, d, h, wd)
    x, w = _contiguous(x), _contiguous(w)
    blas = _gemm()
    out = _buffer((n, c_out, oh, ow), x)
    step = _step(g, _accumulator_dtype(x).itemsize)
    sums = _columns(g, step, x)[1]
    sample_size = c_in * g.length
    for lo in range(0, n, step):
        count = min(step, n - lo)
        x_slice = _view(x, (count, c_in, g.length), (sample_size, g.length, 1), lo * sample_size)
        _input_gradient(blas, g, w, x_slice, out, lo, count, sums)
    if bias is not None:
        ops.add_(out, _view(bias, (1, c_out, 1, 1), (0, bias._strides[0], 0, 0)))
    sizes = (n, c_out, oh, ow) if input.dim() == 4 else (n, c_out, ow)
    return _view(out, sizes, contiguous_strides(sizes))


def transposed_backward(grad, input, weight, s, p, d, need_input: bool, need_weight: bool):
    """(grad_input, grad_weight) of :func:`transposed_forward`, each only where asked. The convolution it transposes
    runs over the grad: one im2col of each slice of the grad serves the input's gradient (W @ cols, that
    convolution's forward) and, in the per-sample form, the weight's (input_s @ cols_sᵀ)."""
    g, gy, w = _checked(grad, weight, s, p, d)
    x = _contiguous(_as_2d(input, weight, s, p, d)[0])
    blas = _gemm()
    n, c_in, rows, length = g.n, g.oc, g.rows, g.length
    step = _step(g, gy.dtype.itemsize)
    cols = None if g.trivial else _buffer((step, rows, length), gy)
    gi = _buffer((n, c_in, length), gy) if need_input else None
    gw = None
    per_sample = rows <= length  # Note [Direct CUDA convolution]: the weight gradient's cheaper form
    for lo in range(0, n, step):
        count = min(step, n - lo)
        x_slice = _view(x, (count, c_in, length), (c_in * length, length, 1), lo * c_in * length)
        if g.trivial:
            c_slice = _view(gy, (count, rows, length), (rows * length, length, 1), lo * rows * length)
        else:
            g.im2col(gy, lo, count, cols)
            c_slice = _view(cols, (count, rows, length), cols._strides)
        if need_input:
            blas.gemm("convolution_backward", _view(gi, (count, c_in, length), gi._strides, lo * c_in * length),
                      _view(w, (count, c_in, rows), (0, rows, 1)), c_slice)
        if need_weight:
            if per_sample:
                gw = _per_sample_weight_grad(blas, g, gy, lo, count, x_slice, c_slice, cols, gw)
            else:  # the columns again, in row order (after the input's GEMM has read them: stream order)
                trivial = c_slice if g.trivial else None
                gw = _one_gemm_weight_grad(blas, g, gy, lo, count, x_slice, trivial, cols, gw)
    if need_input:
        gi = _view(gi, tuple(input._sizes), contiguous_strides(input._sizes))
    if need_weight:
        gw = _view(gw, tuple(weight._sizes), contiguous_strides(weight._sizes))
        if gw.dtype is not weight.dtype:
            gw = ops._to_copy(gw, dtype=weight.dtype)
    return gi, gw


def _accumulate(gw, part):
    """``gw + part`` (``part`` when ``gw`` is None), in float32 for half types."""
    if part.dtype.itemsize < 4:
        part = ops._to_copy(part, dtype=dt.float32)
    return part if gw is None else ops.add_(gw, part)


def _per_sample_weight_grad(blas, g, x, lo, count, g_slice, x_slice, cols, gw):
    """``gw`` plus the sum over the slice's samples of grad_s (C_out, L) @ cols_sᵀ (L, C*K): one batched GEMM of the
    per-sample products (when C*K <= L they are smaller than the grad's copy the other form makes), summed by a
    GEMM with a row of ones that adds into ``gw`` (float32 / float64; half types sum in float32 by ops)."""
    oc, rows, length = g.oc, g.rows, g.length
    if x_slice is None:
        g.im2col(x, lo, count, cols)
        c_slice = cols
    else:
        c_slice = x_slice
    prods = _buffer((count, oc, rows), g_slice, _accumulator_dtype(g_slice))  # Note [Half columns]
    blas.gemm("convolution_backward", prods, g_slice,
              _view(c_slice, (count, length, rows), (rows * length, 1, length)))
    if count == 1:
        return _accumulate(gw, _view(prods, (oc, rows), (rows, 1)))
    if g_slice.dtype in _HALF:  # a float32 sum: the ones GEMM below would run in TF32
        return _accumulate(gw, ops.sum(prods, [0]))
    ones = ops.ones((1, count), dtype=prods.dtype, device=prods.device)
    flat = _view(prods, (count, oc * rows), (oc * rows, 1))
    if gw is None:
        gw = _buffer((oc, rows), prods)
        blas.gemm("convolution_backward", _view(gw, (1, oc * rows), (oc * rows, 1)), ones, flat)
    else:
        out = _view(gw, (1, oc * rows), (oc * rows, 1))
        blas.gemm("convolution_backward", out, ones, flat, beta=1.0, c=out)
    return gw


def _one_gemm_weight_grad(blas, g, x, lo, count, g_slice, x_slice, cols, gw):
    """``gw`` plus the same sum as one GEMM over count * L: the columns made in (C*K, count, L) order by im2col, the
    grad copied into (C_out, count, L) order; the GEMM adds into ``gw`` (float32 / float64)."""
    oc, rows, length = g.oc, g.rows, g.length
    if x_slice is None:
        g.im2col(x, lo, count, cols, by_row=True)
        c_rows = _view(cols, (rows, count * length), (count * length, 1))
    else:  # the input is its own columns: copied into row order as the grad is
        c_rows = ops.reshape(ops.permute(x_slice, (1, 0, 2)), (rows, count * length))
    g_rows = ops.reshape(ops.permute(g_slice, (1, 0, 2)), (oc, count * length))
    b = _view(c_rows, (count * length, rows), (1, c_rows._strides[0]))
    if gw is None:  # float32 for half types (Note [Half columns])
        gw = _buffer((oc, rows), g_slice, _accumulator_dtype(g_slice))
        blas.gemm("convolution_backward", gw, g_rows, b)
    else:
        blas.gemm("convolution_backward", gw, g_rows, b, beta=1.0, c=gw)
    return gw


@kernel("CUDA")
def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    from ....ops.composite.convolution import check_arguments, convolve_composite, precision_scope

    s, p, d, q = check_arguments(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
    with precision_scope(input):  # Note [Convolution precision]
        if takes(input, weight, transposed, groups, s, q):
            if transposed:
                return transposed_forward(input, weight, bias, s, p, d, q)
            return convolution_forward(input, weight, bias, s, p, d)
        return convolve_composite(input, weight, bias, s, p, d, transposed, q, groups)
