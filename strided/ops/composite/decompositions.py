"""CompositeImplicitAutograd decompositions: ``matmul``, ``linear``, ``var.dim``, ``std.dim``.

They call other operators only (through ``strided.ops.bound``), never NumPy, so they run on every
backend and autograd differentiates them through the ops they call.

Note [matmul lowering]
``matmul`` is torch's ``_matmul_impl`` step by step (aten/src/ATen/native/LinearAlgebra.cpp):
1-D @ 1-D is a dot product, 2-D @ 1-D a matrix-vector product, 1-D @ 2-D an unsqueezed ``mm``,
2-D @ 2-D ``mm``. With a >= 3-D operand and a 1-D/2-D other, the batch dims are folded into the
rows of one ``mm`` when that needs no copy (``_should_fold``); otherwise the batch dims are
broadcast, both sides expanded and reshaped to 3-D and multiplied by ``bmm``. strided has no
``dot``/``mv`` operators: they are ``mm`` with a unit dim, after torch's dot/mv checks so the
errors keep torch's words.
"""

from __future__ import annotations

import math

from ...backends.meta.common import broadcast_shapes
from ...backends.meta.reductions import type_name
from ...dispatch.library import kernel
from ...tensor import contiguous_strides, make_tensor
from .. import bound as ops

__all__ = []


@kernel("CompositeImplicitAutograd")
def var_unbiased(self, dim, unbiased=True, keepdim=False):
    return ops.var.correction(self, dim, correction=1 if unbiased else 0, keepdim=keepdim)


@kernel("CompositeImplicitAutograd")
def std_unbiased(self, dim, unbiased=True, keepdim=False):
    return ops.std.correction(self, dim, correction=1 if unbiased else 0, keepdim=keepdim)


@kernel("CompositeImplicitAutograd")
def var_all_unbiased(self, unbiased=True):
    """``x.var(unbiased=False)``: over every element (torch's ``var(Tensor self, bool unbiased)``)."""
    return ops.var.correction(self, None, correction=1 if unbiased else 0)


@kernel("CompositeImplicitAutograd")
def std_all_unbiased(self, unbiased=True):
    return ops.std.correction(self, None, correction=1 if unbiased else 0)


def _dot(a, b):
    if a.dtype is not b.dtype:
        raise RuntimeError("dot : expected both vectors to have same dtype, but found "
                           f"{type_name(a.dtype)} and {type_name(b.dtype)}")
    n, m = a._sizes[0], b._sizes[0]
    if n != m:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to have the same "
                           f"number of elements, but got {n} and {m} elements respectively")
    if a.dtype.name == "bool":
        raise NotImplementedError("\"dot\" not implemented for 'Bool'")
    return ops.reshape(ops.mm(ops.unsqueeze(a, 0), ops.unsqueeze(b, 1)), ())


def _mv(mat, vec):
    if mat.dtype is not vec.dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {type_name(vec.dtype)}, "
                           f"{type_name(mat.dtype)}, and {type_name(vec.dtype)}")
    rows, cols = mat._sizes
    if cols != vec._sizes[0]:
        raise RuntimeError(f"size mismatch, got input ({rows}), mat ({rows}x{cols}), vec ({vec._sizes[0]})")
    if mat.dtype.name == "bool" and rows and cols:
        raise NotImplementedError("\"addmv_impl_cpu\" not implemented for 'Bool'")
    return ops.squeeze(ops.mm(mat, ops.unsqueeze(vec, 1)), [1])


def _not_a_view(t):
    """``t`` itself, or a tensor over the same memory without ``t``'s view base."""
    if t._base is None:
        return t
    return make_tensor(t._storage, t._offset, t._sizes, t._strides, t.dtype)


def _should_fold(t1, t2) -> bool:
    """torch's ``should_fold``: can the larger operand's batch dims fold into mm rows without a copy?"""
    t1_larger = t1.dim() >= t2.dim()
    big = t1 if t1_larger else t2.mT
    dim_small = t2.dim() if t1_larger else t1.dim()
    if not (big.dim() >= 3 and dim_small <= 2):
        return False
    if (t2 if t1_larger else t1)._requires_grad:
        return True
    if t1.dim() == 2:
        return False
    if big.numel() == 0:
        return True
    sizes, strides = big._sizes, big._strides
    return all(strides[i] == strides[i + 1] * sizes[i + 1] for i in range(big.dim() - 2))


@kernel("CompositeExplicitAutograd")
def matmul(self, other):
    """torch.matmul (Note [matmul lowering]); one differentiable op, as ``linear`` (Note [Fused linear])."""
    return _not_a_view(_matmul(self, other))


def _matmul(self, other):
    d1, d2 = self.dim(), other.dim()
    if d1 == 0 or d2 == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {d1}D and {d2}D")
    if d1 == 1 and d2 == 1:
        return _dot(self, other)
    if d1 == 2 and d2 == 1:
        return _mv(self, other)
    if d1 == 1 and d2 == 2:
        return ops.squeeze(ops.mm(ops.unsqueeze(self, 0), other), [0])
    if d1 == 2 and d2 == 2:
        return ops.mm(self, other)
    if _should_fold(self, other):
        transpose = d2 > d1
        t1 = other.mT if transpose else self
        t2 = (self.t() if d1 == 2 else self) if transpose else other
        out_shape = list(t1._sizes[:-1])
        folded = t1.reshape((math.prod(out_shape), t1._sizes[-1]))
        if t2.dim() == 2:
            out_shape = (*out_shape, t2._sizes[1])
            product = ops.mm(folded, t2)  # contiguous: the view is metadata (Note [Views below autograd])
            output = make_tensor(product._storage, product._offset, out_shape, contiguous_strides(out_shape),
                                 product.dtype)
            return output.mT.contiguous() if transpose else output
        return ops.view.default(_mv(folded, t2), out_shape)
    s1, s2 = self._sizes, other._sizes
    n = s1[-2] if d1 > 1 else 1
    m1 = s1[-1]
    m2 = s2[-2] if d2 > 1 else s2[0]
    p = s2[-1] if d2 > 1 else 1
    batch1, batch2 = s1[:max(d1 - 2, 0)], s2[:max(d2 - 2, 0)]
    if d1 == 3 and d2 == 3 and batch1[0] != batch2[0]:
        # torch avoids materializing an expanded operand that requires grad
        if batch1[0] == 1 and self._requires_grad:
            return _matmul(ops.squeeze(self, [0]), other)
        if batch2[0] == 1 and other._requires_grad:
            return _matmul(self, ops.squeeze(other, [0]))
    batch = batch1 if batch1 == batch2 else broadcast_shapes(batch1, batch2)
    b = math.prod(batch)
    if d1 > 2:
        left = _batched_matrices(self, batch, (b, n, m1))
    else:
        left = ops.reshape(self.expand(batch + (n, m1)), (b, n, m1))
    if d2 == 1:
        right = ops.unsqueeze(ops.reshape(other.expand(batch + (m2,)), (b, m2)), 2)
    elif d2 > 2:
        right = _batched_matrices(other, batch, (b, m2, p))
    else:
        right = ops.reshape(other.expand(batch + (m2, p)), (b, m2, p))
    out_shape = batch + ((n,) if d1 > 1 else ()) + ((p,) if d2 > 1 else ())
    product = ops.bmm(left, right)
    if d2 == 1:
        product = ops.squeeze(product, [-1])
        return ops.view.default(product, out_shape)
    # bmm's result is contiguous: the (batch..., n, p) view is metadata (Note [Views below autograd])
    return make_tensor(product._storage, product._offset, out_shape, contiguous_strides(out_shape), product.dtype)


# Note [Views below autograd]
# matmul and linear run below autograd (Note [Fused linear]), so the views of their lowering are
# internal: nothing records them, and in-place ops never see them. Built with make_tensor, a view
# costs one object; through the dispatcher (expand, reshape, view) it costs a few microseconds of
# keyset, kernel and geometry work each, and a batched matmul made five of them. The dispatcher is
# still used wherever the view might need a copy (reshape of batch dims that do not collapse) or a
# broadcast, so values and copies are exactly torch's.
def _batch_stride(t):
    """The one stride that steps over every batch dim of a >= 3-d ``t`` with more than one matrix,
    when its batch dims collapse into one; None when they do not (a reshape would copy)."""
    sizes, strides = t._sizes, t._strides
    stride = span = None  # of the innermost batch dim of size > 1; each outer one must step over it
    for i in range(len(sizes) - 3, -1, -1):
        if sizes[i] != 1:
            if stride is None:
                stride, span = strides[i], strides[i] * sizes[i]
            elif strides[i] == span:
                span *= sizes[i]
            else:
                return None
    return stride


def _batched_matrices(t, batch, shape3):
    """``t.expand(batch + matrix dims).reshape(shape3)`` for a >= 3-d ``t`` of matmul's lowering:
    a view built directly when ``t``'s batch dims are ``batch`` and collapse into one stride."""
    sizes = t._sizes
    if sizes[:-2] == batch and shape3[0] > 1:
        stride = _batch_stride(t)
        if stride is not None:
            strides = t._strides
            return make_tensor(t._storage, t._offset, shape3, (stride, strides[-2], strides[-1]), t.dtype)
    return ops.reshape(t.expand(batch + sizes[-2:]), shape3)


def matmul_operand_copies(args):
    """matmul's (self, other), each batched operand its lowering would copy replaced by that copy
    (contiguous, same shape and values); None when neither is copied (Note [Saved operand copies]).
    Only operands of the batched path with the full batch shape: a broadcast operand is expanded
    before its copy, and saving that would hold more memory than the original."""
    self, other = args[0], args[1]
    if self.dim() < 3 or other.dim() < 3:
        return None
    batch = self._sizes[:-2]
    if other._sizes[:-2] != batch or math.prod(batch) <= 1:
        return None
    s = self if _batch_stride(self) is not None else ops.contiguous(self)
    o = other if _batch_stride(other) is not None else ops.contiguous(other)
    if s is self and o is other:
        return None
    return (s, o)


def matmul_shared_grad(grad):
    """matmul backward's ``grad``, copied once when both of its GEMMs would copy it (batch dims
    that do not collapse, as a transposed attention output's gradient); else ``grad`` itself."""
    if grad.dim() >= 3 and math.prod(grad._sizes[:-2]) > 1 and _batch_stride(grad) is None:
        return ops.contiguous(grad)
    return grad


def _flatten_nd_linear(input, weight, bias):
    """torch's ``_flatten_nd_linear``: fold the leading dims of a contiguous input into addmm rows
    (into ``mm`` rows without a bias, which is where torch's ``matmul`` fold path ends).

    Runs below autograd (Note [Fused linear]), so the views are built directly: the input is
    contiguous and addmm's result is, so both are pure metadata.
    """
    sizes = input._sizes
    k = sizes[-1]
    flat = make_tensor(input._storage, input._offset, (math.prod(sizes[:-1]), k), (k, 1), input.dtype)
    w = weight
    if w.dim() == 2:
        wt = make_tensor(w._storage, w._offset, (w._sizes[1], w._sizes[0]), (w._strides[1], w._strides[0]), w.dtype)
    else:
        wt = w.t()  # addmm raises torch's error for it
    result = ops.mm(flat, wt) if bias is None else ops.addmm(bias, flat, wt)
    out_sizes = sizes[:-1] + (result._sizes[1],)
    return make_tensor(result._storage, result._offset, out_sizes, contiguous_strides(out_sizes), result.dtype)


# Note [Fused linear]
# torch's ``linear`` and ``matmul`` are CompositeImplicitAutograd: autograd records what they lower to
# (``linear`` of a 3-d input: view, t, addmm, view; a batched ``matmul``: expand, reshape, bmm, view),
# four nodes each, and as many ops again in backward to undo the views. Here both are one
# differentiable op (derivatives.yaml: ``linear_*_backward``, ``matmul_backward``): the kernel runs
# below autograd and lowers exactly as torch does; backward runs the GEMMs of addmm's / bmm's backward
# (the engine sums broadcast batch dims back, as ExpandBackward would), with no view nodes. Values and
# gradients are torch's; ``grad_fn`` is ``LinearBackward0`` / ``MatmulBackward0`` where torch shows the
# last node of the lowering (``ViewBackward0``, ``AddmmBackward0`` ...). The output is never a view of
# a temporary, so in-place ops on it behave as on any op's result.
@kernel("CompositeExplicitAutograd")
def linear(input, weight, bias=None):
    """torch.nn.functional.linear: ``input @ weight.T + bias``, lowered exactly as torch's ``linear``."""
    d_in, d_w = input.dim(), weight.dim()
    if d_in == 0 or d_w == 0:
        raise RuntimeError("both arguments to linear need to be at least 1D, but they are "
                           f"{d_in}D and {d_w}D")
    if d_in == 2 and bias is not None:
        return ops.addmm(bias, input, weight.t())
    if bias is None and d_w == 2 and input.is_contiguous():  # torch's matmul fold path (Note [Views below autograd])
        return _flatten_nd_linear(input, weight, None)
    if bias is not None and (bias.dim() == 1 or ops.squeeze(bias).dim() == 1) and bias.is_contiguous():
        if input.is_contiguous():
            return _flatten_nd_linear(input, weight, bias)
    output = _not_a_view(ops.matmul(input, weight.t()))
    if bias is not None:
        output.add_(bias)
    return output
