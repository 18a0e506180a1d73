"""The ``_foreach_*`` fast path on the multi-tensor kernels (torch's foreach ops on CUDA).

As torch: lists of contiguous CUDA tensors of one floating dtype and one device run one
``foreach_apply`` launch per up to ``MT_MAX`` tensors (Note [Multi-tensor metadata] in
optim_ops.py); anything else takes the per-tensor composite path (``ops/composite/foreach.py``).
"""

from __future__ import annotations

from itertools import repeat
from math import prod
from operator import attrgetter

from ....dispatch.library import kernel
from ....ops.composite import foreach as slow
from ....tensor import Tensor, make_tensor
from ... import allocate
from ..streams import current_stream_handle
from .optim_ops import MT_CTYPES, contig_strides, data_ptrs, mt_launch

FE_OPS = {"add_scalar": 0, "add_list": 1, "mul_scalar": 2, "div_scalar": 3, "maximum": 4, "lerp": 5,
          "addcmul": 6, "addcdiv": 7, "sqrt": 8, "neg": 9, "zero": 10}


# Note [Foreach checks]: the fast-path test and the launch read a few attributes of every tensor of
# every list (444 tensors for one Adam op over GPT-2), so they go through ``map`` with attrgetters
# (a loop in C) rather than Python generator expressions.
_DEVICE_DTYPE = attrgetter("device", "dtype")
_SIZES = attrgetter("_sizes")
_STRIDES = attrgetter("_strides")


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
    one = {(dev, dtype)}
    sizes = expected = None
    for lst in lists:
        if not all(map(isinstance, lst, repeat(Tensor))) or set(map(_DEVICE_DTYPE, lst)) != one:
            return False
        if sizes is None:
            sizes = list(map(_SIZES, lst))
            expected = list(map(contig_strides, sizes))
        elif list(map(_SIZES, lst)) != sizes:
            return False  # the multi-tensor kernel does not broadcast
        if list(map(_STRIDES, lst)) != expected and not all(t.is_contiguous() for t in lst):
            return False
    return True


def _empty_like(t: Tensor) -> Tensor:
    sizes = t._sizes
    return make_tensor(allocate(prod(sizes) * t.dtype.itemsize, t.device), 0, sizes, t._strides, t.dtype)


def _apply(op: str, out, inputs, scalars=None, alpha=0.0) -> None:
    dev = out[0].device
    ptrs = [data_ptrs(out)] + [data_ptrs(lst) for lst in inputs]
    mt_launch(out[0].dtype, "foreach_apply", dev.index, current_stream_handle(dev.index),
              list(map(prod, map(_SIZES, out))), ptrs, scalars=scalars, hyper=(0.0,) * 7 + (alpha,),
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
