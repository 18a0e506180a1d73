"""The ``_foreach_*`` fast path on the multi-tensor kernels (torch's foreach ops on CUDA).

As torch: lists of contiguous CUDA tensors of one floating dtype and one device run one
``foreach_apply`` launch per up to ``MT_MAX`` tensors (Note [Multi-tensor metadata] in
optim_ops.py); anything else takes the per-tensor composite path (``ops/composite/foreach.py``).
"""

from __future__ import annotations

from math import prod

from ....dispatch.library import kernel
from ....ops.composite import foreach as slow
from ....tensor import Tensor, make_tensor
from ... import allocate
from ..streams import current_stream_handle
from .optim_ops import MT_CTYPES, contig_strides, data_ptrs, mt_launch, numels

FE_OPS = {"add_scalar": 0, "add_list": 1, "mul_scalar": 2, "div_scalar": 3, "maximum": 4, "lerp": 5,
          "addcmul": 6, "addcdiv": 7, "sqrt": 8, "neg": 9, "zero": 10}


# Note [Foreach checks]: the fast-path test and the launch read a few attributes of every tensor of
# every list (444 tensors for one Adam op over GPT-2). Comprehensions over the slot attributes are
# the cheapest way on CPython 3.11+ (its specialized attribute loads): measured 1.3-4x faster than
# ``map`` with attrgetters, which an earlier version used.
def _fast(lists) -> bool:
    """torch's foreach fast-path test: one CUDA device, one floating dtype, contiguous tensors."""
    if not lists[0]:
        return False
    first = lists[0][0]
    if not isinstance(first, Tensor):
        return False
    dev, dtype = first.device, first.dtype
    if dev.type != "cuda" or dtype.name not in MT_CTYPES:
        return False
    sizes = expected = None
    for lst in lists:
        for t in lst:
            if not isinstance(t, Tensor) or t.device is not dev or t.dtype is not dtype:
                return False  # devices are interned: another device object is another device
        if sizes is None:
            sizes = [t._sizes for t in lst]
            expected = [contig_strides(s) for s in sizes]
        elif [t._sizes for t in lst] != sizes:
            return False  # the multi-tensor kernel does not broadcast
        if [t._strides for t in lst] != expected and not all(t.is_contiguous() for t in lst):
            return False
    return True


def _empty_like(t: Tensor) -> Tensor:
    sizes = t._sizes
    return make_tensor(allocate(prod(sizes) * t.dtype.itemsize, t.device), 0, sizes, t._strides, t.dtype)


def _apply(op: str, out, inputs, scalars=None, alpha=0.0) -> None:
    dev = out[0].device
    out_ptrs = data_ptrs(out)
    ptrs = [out_ptrs] + [out_ptrs if lst is out else data_ptrs(lst) for lst in inputs]  # in place: self twice
    mt_launch(out[0].dtype, "foreach_apply", dev.index, current_stream_handle(dev.index),
              numels(out), ptrs, scalars=scalars, hyper=(0.0,) * 7 + (alpha,),
              op=FE_OPS[op])


def _is_number(x) -> bool:
    return not isinstance(x, Tensor) and not isinstance(x, bool)


@kernel("CUDA")
def _foreach_add_scalar(self, scalar):
    if not (_fast([self]) and _is_number(scalar) and (self[0].dtype.is_floating_point)):
        return slow._foreach_add_scalar(self, scalar)
    out = [_empty_like(t) for t in self]
    _apply("add_scalar", out, [self], [scalar] * len(self))
    return out


@kernel("CUDA")
def _foreach_add__scalar(self, scalar):
    if not (_fast([self]) and _is_number(scalar)):
        return slow._foreach_add__scalar(self, scalar)
    _apply("add_scalar", self, [self], [scalar] * len(self))


@kernel("CUDA")
def _foreach_add_list(self, other, *, alpha=1):
    slow.check_lists(self, other)
    if not (_fast([self, other]) and _is_number(alpha)):
        return slow._foreach_add_list(self, other, alpha=alpha)
    out = [_empty_like(t) for t in self]
    _apply("add_list", out, [self, other], alpha=alpha)
    return out


@kernel("CUDA")
def _foreach_add__list(self, other, *, alpha=1):
    slow.check_lists(self, other)
    if not (_fast([self, other]) and _is_number(alpha)):
        return slow._foreach_add__list(self, other, alpha=alpha)
    _apply("add_list", self, [self, other], alpha=alpha)


@kernel("CUDA")
def _foreach_sub__list(self, other, *, alpha=1):
    slow.check_lists(self, other)
    if not (_fast([self, other]) and _is_number(alpha)):
        return slow._foreach_sub__list(self, other, alpha=alpha)
    _apply("add_list", self, [self, other], alpha=-alpha)


@kernel("CUDA")
def _foreach_mul__scalar(self, scalar):
    if not (_fast([self]) and _is_number(scalar)):
        return slow._foreach_mul__scalar(self, scalar)
    _apply("mul_scalar", self, [self], [scalar] * len(self))


@kernel("CUDA")
def _foreach_div__scalarlist(self, scalars):
    slow.check_lists(self)
    slow.check_scalar_list(self, scalars)
    if not (_fast([self]) and all(map(_is_number, scalars))):
        return slow._foreach_div__scalarlist(self, scalars)
    _apply("div_scalar", self, [self], scalars)


@kernel("CUDA")
def _foreach_maximum__list(self, other):
    slow.check_lists(self, other)
    if not _fast([self, other]):
        return slow._foreach_maximum__list(self, other)
    _apply("maximum", self, [self, other])


@kernel("CUDA")
def _foreach_lerp__scalar(self, tensors1, weight):
    slow.check_lists(self, tensors1)
    if not (_fast([self, tensors1]) and _is_number(weight)):
        return slow._foreach_lerp__scalar(self, tensors1, weight)
    _apply("lerp", self, [self, tensors1], [weight] * len(self))


@kernel("CUDA")
def _foreach_addcmul__scalar(self, tensor1, tensor2, value=1):
    slow.check_lists(self, tensor1, tensor2)
    if not (_fast([self, tensor1, tensor2]) and _is_number(value)):
        return slow._foreach_addcmul__scalar(self, tensor1, tensor2, value)
    _apply("addcmul", self, [self, tensor1, tensor2], [value] * len(self))


@kernel("CUDA")
def _foreach_addcdiv__scalarlist(self, tensor1, tensor2, scalars):
    slow.check_lists(self, tensor1, tensor2)
    slow.check_scalar_list(self, scalars)
    if not (_fast([self, tensor1, tensor2]) and all(map(_is_number, scalars))):
        return slow._foreach_addcdiv__scalarlist(self, tensor1, tensor2, scalars)
    _apply("addcdiv", self, [self, tensor1, tensor2], scalars)


@kernel("CUDA")
def _foreach_sqrt(self):
    if not _fast([self]):
        return slow._foreach_sqrt(self)
    out = [_empty_like(t) for t in self]
    _apply("sqrt", out, [self])
    return out


@kernel("CUDA")
def _foreach_neg(self):
    if not _fast([self]):
        return slow._foreach_neg(self)
    out = [_empty_like(t) for t in self]
    _apply("neg", out, [self])
    return out


@kernel("CUDA")
def _foreach_zero_(self):
    if not _fast([self]):
        return slow._foreach_zero_(self)
    _apply("zero", self, [])
