"""``einsum`` as a CompositeImplicitAutograd op: diagonals, sums and batched matrix products.

Note [einsum plan]
As torch's CPU/CUDA einsum (ATen/native/Linear.cpp), without its optional path optimizer:
1. Parse: labels are a-z and A-Z, ``...`` stands for broadcast dimensions (right-aligned across
   operands); without ``->`` the output is the ellipsis, then the labels seen exactly once in
   sorted order (uppercase before lowercase).
2. Per operand: a label repeated within it takes that diagonal; labels that appear in no other
   operand and not in the output are summed out at once.
3. Operands are then contracted left to right, two at a time: labels kept by both become the
   batch, labels only one side still needs stay rows / columns, labels neither the output nor a
   later operand needs are the contraction, and the pair becomes one ``bmm`` of
   (batch, rows, k) @ (batch, k, columns). Size-1 dimensions broadcast against their partner.
4. The result is permuted to the output order.
Autograd differentiates the views, sums and bmm this uses.
"""

from __future__ import annotations

import math

from ...dispatch.library import kernel
from ...tensor import Tensor
from .. import bound as ops

__all__ = []

_ELLIPSIS_BASE = 0x100  # labels standing for broadcast dimensions sort after every letter


def _parse(equation: str, operands) -> tuple[list[list[str]], list[str]]:
    lhs, arrow, rhs = equation.partition("->")
    terms, starts, at = lhs.split(","), [], 0
    for term in terms:
        starts.append(at)
        at += len(term) + 1
    if len(terms) != len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation"
                           if len(operands) > len(terms) else
                           "einsum(): fewer operands were provided than specified in the equation")
    ell_rank = 0
    parsed = []
    for i, (term, start, t) in enumerate(zip(terms, starts, operands)):
        labels = _labels(term, start, f"operand {i}")
        letters = [c for c in labels if c != "..."]
        if "..." in labels:
            ell_rank = max(ell_rank, t.dim() - len(letters))
            if t.dim() < len(letters):
                raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(letters)}) is more than "
                                   f"the number of dimensions ({t.dim()}) for operand {i}")
        elif len(letters) != t.dim():
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(letters)}) does not match "
                               f"the number of dimensions ({t.dim()}) for operand {i} and no ellipsis was given")
        parsed.append(labels)
    ell = [chr(_ELLIPSIS_BASE + i) for i in range(ell_rank)]
    inputs, sizes = [], {}
    for i, (labels, t) in enumerate(zip(parsed, operands)):
        if "..." in labels:
            k = labels.index("...")
            rank = t.dim() - (len(labels) - 1)
            labels = labels[:k] + ell[ell_rank - rank:] + labels[k + 1:]
        for c, n in zip(labels, t.shape):
            seen = sizes.get(c, 1)
            if ord(c) < _ELLIPSIS_BASE and n != seen and 1 not in (n, seen) and labels.count(c) == 1:
                raise RuntimeError(f"einsum(): subscript {c} has size {n} for operand {i} which does not broadcast "
                                   f"with previously seen size {seen}")
            sizes[c] = seen if n == 1 else n
        inputs.append(labels)
    if arrow:
        out = _labels(rhs, len(lhs) + 2, "output")
        if "..." in out:
            k = out.index("...")
            out = out[:k] + ell + out[k + 1:]
        seen = set()
        for c in out:
            if c in seen:
                raise RuntimeError(f"einsum(): output subscript {c} appears more than once in the output")
            if not any(c in labels for labels in inputs):
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the equation for any input "
                                   "operand")
            seen.add(c)
    else:
        counts: dict[str, int] = {}
        for labels in inputs:
            for c in labels:
                counts[c] = counts.get(c, 0) + 1
        out = ell + sorted(c for c, n in counts.items() if n == 1 and ord(c) < _ELLIPSIS_BASE)
    return inputs, out


def _labels(term: str, start: int, where: str) -> list[str]:
    labels, i = [], 0
    while i < len(term):
        c = term[i]
        if c == " ":
            i += 1
            continue
        if c == ".":
            if "..." in labels:
                raise RuntimeError(f"einsum(): found '.' for {where} for which an ellipsis was already found")
            if not term.startswith("...", i):
                raise RuntimeError(f"einsum(): found '.' for {where} that is not part of any ellipsis")
            labels.append("...")
            i += 3
            continue
        if not c.isascii() or not c.isalpha():
            raise RuntimeError(f"einsum(): invalid subscript given at index {start + i} in the equation string, "
                               "subscripts must be in [a-zA-Z]")
        labels.append(c)
        i += 1
    return labels


def _take_diagonals(t, labels: list[str], index: int):
    """Collapse labels repeated within one operand to their diagonal (moved last, as ``diagonal`` does)."""
    while len(set(labels)) < len(labels):
        c = next(c for c in labels if labels.count(c) > 1)
        i = labels.index(c)
        j = labels.index(c, i + 1)
        if t.shape[i] != t.shape[j]:
            raise RuntimeError(f"einsum(): subscript {c} is repeated for operand {index} but the sizes don't match, "
                               f"{t.shape[j]} != {t.shape[i]}")
        t = ops.diagonal(t, 0, i, j)
        labels = [x for k, x in enumerate(labels) if k not in (i, j)] + [c]
    return t, labels


def _sum_out(t, labels: list[str], keep: set[str]):
    dims = [k for k, c in enumerate(labels) if c not in keep]
    if not dims:
        return t, labels
    return ops.sum(t, dims), [c for c in labels if c in keep]


def _contract(a, la: list[str], b, lb: list[str], needed: set[str]):
    """One bmm of Note [einsum plan] step 3; returns the product and its labels."""
    sa, sb = dict(zip(la, a.shape)), dict(zip(lb, b.shape))
    batch = [c for c in la if c in sb and c in needed]
    rows = [c for c in la if c not in sb]
    cols = [c for c in lb if c not in sa]
    inner = [c for c in la if c in sb and c not in needed]
    size = {}
    for c in set(la) | set(lb):
        x, y = sa.get(c, 1), sb.get(c, 1)
        size[c] = x if y == 1 else y  # sizes were checked to broadcast when parsing

    def arrange(t, labels, order):
        t = ops.permute(t, [labels.index(c) for c in order])
        return ops.expand(t, [size[c] for c in order])

    a3 = ops.reshape(arrange(a, la, batch + rows + inner),
                     (_prod(size, batch), _prod(size, rows), _prod(size, inner)))
    b3 = ops.reshape(arrange(b, lb, batch + inner + cols),
                     (_prod(size, batch), _prod(size, inner), _prod(size, cols)))
    out = ops.bmm(a3, b3)
    labels = batch + rows + cols
    return ops.reshape(out, [size[c] for c in labels]), labels


def _prod(size: dict, labels: list[str]) -> int:
    return math.prod(size[c] for c in labels)


@kernel("CompositeImplicitAutograd")
def einsum(equation, tensors, *, path=None):
    """Sum of products over the labels of ``equation`` (Note [einsum plan])."""
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("einsum(): must provide at least one operand")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"einsum(): operand {i} must be a Tensor, not {type(t).__name__}")
    inputs, out = _parse(equation, tensors)
    ops_labels = []
    for i, (t, labels) in enumerate(zip(tensors, inputs)):
        t, labels = _take_diagonals(t, labels, i)
        others = {c for j, ls in enumerate(inputs) if j != i for c in ls}
        t, labels = _sum_out(t, labels, others | set(out))
        ops_labels.append((t, labels))
    result, labels = ops_labels[0]
    for k in range(1, len(ops_labels)):
        t, lt = ops_labels[k]
        later = {c for _, ls in ops_labels[k + 1:] for c in ls}
        result, labels = _contract(result, labels, t, lt, later | set(out))
    result, labels = _sum_out(result, labels, set(out))
    if labels != out:
        result = ops.permute(result, [labels.index(c) for c in out])
    return result
