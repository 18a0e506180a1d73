"""torch's memory-overlap rules for written tensors (aten/src/ATen/MemoryOverlap.cpp): no repeated element in a
written tensor, and no input partially overlapping it in the in-place pointwise ops.

Note [Partial overlap]
An elementwise kernel that writes ``self`` while it reads an operand sharing part of ``self``'s memory would read
elements it has already written (``t[1:].add_(t[:-1])``), so torch refuses it: TensorIterator asserts that no
input *partially* overlaps the output. Full overlap (the operand is ``self``'s exact view) is fine; so are
disjoint parts of one storage; and, as in torch, a pair where either tensor is not non-overlapping-and-dense is
"too hard" to decide and let through. strided applies the rule to the autogen in-place overloads of the
pointwise ops and to their ``out=`` (``torch.exp(t[:4], out=t[1:5])``), on every backend, before anything
is computed.
"""

from __future__ import annotations

__all__ = ["PARTIAL_OVERLAP", "INTERNAL_OVERLAP", "partially_overlaps", "check_no_partial_overlap",
           "has_internal_overlap", "check_no_internal_overlap", "is_pointwise", "any_pointwise", "check_out_overlap"]

PARTIAL_OVERLAP = ("unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
                   "single memory location. Please clone() the tensor before performing the operation.")

INTERNAL_OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers to a single memory "
                    "location. Please clone() the tensor before performing the operation.")


# the Meta modules of the pointwise ops (TensorIterator's in torch), whose writes refuse a partially overlapping input
_POINTWISE_META = frozenset(f"strided.backends.meta.{m}" for m in ("pointwise", "pointwise_unary",
                                                                     "pointwise_binary_math", "bitwise"))
_pointwise: dict = {}  # OpOverload -> bool


def is_pointwise(op) -> bool:
    """Whether ``op`` (an OpOverload) is a pointwise op: its Meta function lives in a pointwise Meta module."""
    known = _pointwise.get(op)
    if known is None:
        from ..dispatch.keys import DispatchKey

        meta = op.kernel(DispatchKey.Meta)
        known = _pointwise[op] = getattr(meta, "__module__", None) in _POINTWISE_META
    return known


def any_pointwise(packet) -> bool:
    """Whether an overload of ``packet`` is pointwise (``out=`` without a declared overload: Note [Out arguments])."""
    known = _pointwise.get(packet)
    if known is None:
        known = _pointwise[packet] = any(is_pointwise(op) for op in packet._ordered)
    return known


def has_internal_overlap(t) -> bool:
    """torch's ``has_internal_overlap(t) == Yes`` as strided can tell: a dimension of more than one element with
    stride 0 (an expanded tensor) and no empty dimension."""
    strides = t._strides
    return 0 in strides and 0 not in t._sizes and any(st == 0 and n > 1 for n, st in zip(t._sizes, strides))


def check_no_internal_overlap(t) -> None:
    """torch's ``assert_no_internal_overlap``: a written-to tensor must not repeat an element."""
    if has_internal_overlap(t):
        raise RuntimeError(INTERNAL_OVERLAP)


def partially_overlaps(a, b) -> bool:
    """torch's ``get_overlap_status(a, b) == MemOverlapStatus::Partial``."""
    if a is b or a._storage is not b._storage:
        return False
    na, nb = a.numel(), b.numel()
    if not na or not nb or not a._is_non_overlapping_and_dense() or not b._is_non_overlapping_and_dense():
        return False
    a_begin, b_begin = a._offset * a.dtype.itemsize, b._offset * b.dtype.itemsize
    a_end, b_end = a_begin + na * a.dtype.itemsize, b_begin + nb * b.dtype.itemsize
    if a_begin == b_begin and a_end == b_end:
        return a._strides != b._strides
    return a_begin < b_end and b_begin < a_end


def check_no_partial_overlap(out, args, kwargs) -> None:
    """Raise torch's error when a Tensor among ``args`` / ``kwargs`` partially overlaps ``out``."""
    from ..tensor import Tensor

    for value in (*args, *kwargs.values()):
        if isinstance(value, Tensor) and value._storage is out._storage and partially_overlaps(out, value):
            raise RuntimeError(PARTIAL_OVERLAP)


# Note [Out overlap]
# ``out=`` of the ops that gather or concatenate (torch's cat_out, index_select_out, gather_out, take_out,
# masked_select_out: ``assert_no_overlap(result, input)``) refuses any overlap of ``out`` with an input, full or
# partial, and an ``out`` with repeated elements before resizing it; the scans (cumsum, cumprod, logcumsumexp:
# TensorIterator) refuse a partial one, as the pointwise ops do (Note [Partial overlap]). strided computes every
# ``out=`` into a fresh result first, so these would be well defined here; the refusal keeps torch's behaviour, as
# a script moving to torch meets it.
_NO_OVERLAP_OUT = frozenset(("cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack", "row_stack",
                             "column_stack", "index_select", "gather", "take", "masked_select", "kthvalue"))
_PARTIAL_OVERLAP_OUT = frozenset(("cumsum", "cumprod", "logcumsumexp"))


def _overlaps(a, b) -> bool:
    """torch's ``get_overlap_status(a, b)`` is Full or Partial (a pair it cannot decide is let through)."""
    if a._storage is not b._storage or not a.numel() or not b.numel():
        return False
    if a is b:
        return True
    if not a._is_non_overlapping_and_dense() or not b._is_non_overlapping_and_dense():
        return False
    a_begin, b_begin = a._offset * a.dtype.itemsize, b._offset * b.dtype.itemsize
    return a_begin < b_begin + b.numel() * b.dtype.itemsize and b_begin < a_begin + a.numel() * a.dtype.itemsize


def check_out_overlap(name: str, out, args, kwargs) -> None:
    """torch's overlap refusal for ``out=`` of op ``name`` (Note [Out overlap]); ``out`` a tensor or a tuple."""
    any_overlap = name in _NO_OVERLAP_OUT
    if not any_overlap and name not in _PARTIAL_OVERLAP_OUT:
        return
    from ..tensor import Tensor

    outs = out if isinstance(out, (list, tuple)) else (out,)
    if any_overlap:  # torch's assert_no_internal_overlap(result) comes first, before any resize
        for o in outs:
            if isinstance(o, Tensor):
                check_no_internal_overlap(o)
    for value in (*args, *kwargs.values()):
        for t in (value if isinstance(value, (list, tuple)) else (value,)):
            if not isinstance(t, Tensor):
                continue
            for o in outs:
                if isinstance(o, Tensor) and (_overlaps(o, t) if any_overlap else partially_overlaps(o, t)):
                    raise RuntimeError(PARTIAL_OVERLAP)

