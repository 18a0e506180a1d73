"""``_foreach_*`` ops as loops over the per-tensor ops (torch's slow path; every backend gets them).

Note [Foreach slow path]
torch's foreach ops have a fast path (one multi-tensor kernel per launch group when every tensor
is on one device with one dtype, dense and non-overlapping) and this slow path, a Python-level
loop over the single-tensor ops.  Backends with a multi-tensor kernel register a direct kernel
for the overload (Note [Dispatch order]) and call back here when the fast path does not apply.
"""

from __future__ import annotations

from ...dispatch.library import kernel
from .. import bound as ops

__all__ = ["check_lists", "check_scalar_list"]


def check_lists(self, *others) -> None:
    """torch's check_foreach_api_restrictions: non-empty lists of equal length."""
    if len(self) == 0:
        raise RuntimeError("Tensor list must have at least one tensor.")
    for other in others:
        if len(other) != len(self):
            raise RuntimeError(
                f"Tensor lists must have the same number of tensors, got {len(self)} and {len(other)}"
            )


def check_scalar_list(self, scalars) -> None:
    if len(scalars) != len(self):
        raise RuntimeError(
            f"Tensor list must have same number of elements as scalar list, got {len(self)} and "
            f"{len(scalars)}"
        )


@kernel("CompositeExplicitAutograd")
def _foreach_add_scalar(self, scalar):
    check_lists(self)
    return [ops.add(t, scalar) for t in self]


@kernel("CompositeExplicitAutograd")
def _foreach_add__scalar(self, scalar):
    check_lists(self)
    for t in self:
        t.add_(scalar)


@kernel("CompositeExplicitAutograd")
def _foreach_add_list(self, other, *, alpha=1):
    check_lists(self, other)
    return [ops.add(t, o, alpha=alpha) for t, o in zip(self, other)]


@kernel("CompositeExplicitAutograd")
def _foreach_add__list(self, other, *, alpha=1):
    check_lists(self, other)
    for t, o in zip(self, other):
        t.add_(o, alpha=alpha)


@kernel("CompositeExplicitAutograd")
def _foreach_sub__list(self, other, *, alpha=1):
    check_lists(self, other)
    for t, o in zip(self, other):
        t.sub_(o, alpha=alpha)


@kernel("CompositeExplicitAutograd")
def _foreach_mul__scalar(self, scalar):
    check_lists(self)
    for t in self:
        t.mul_(scalar)


@kernel("CompositeExplicitAutograd")
def _foreach_div__scalarlist(self, scalars):
    check_lists(self)
    check_scalar_list(self, scalars)
    for t, s in zip(self, scalars):
        t.div_(s)


@kernel("CompositeExplicitAutograd")
def _foreach_maximum__list(self, other):
    check_lists(self, other)
    for t, o in zip(self, other):
        t.copy_(ops.maximum(t, o))


@kernel("CompositeExplicitAutograd")
def _foreach_lerp__scalar(self, tensors1, weight):
    check_lists(self, tensors1)
    for t, e in zip(self, tensors1):
        t.lerp_(e, weight)


@kernel("CompositeExplicitAutograd")
def _foreach_addcmul__scalar(self, tensor1, tensor2, value=1):
    check_lists(self, tensor1, tensor2)
    for t, a, b in zip(self, tensor1, tensor2):
        t.addcmul_(a, b, value=value)


@kernel("CompositeExplicitAutograd")
def _foreach_addcdiv__scalarlist(self, tensor1, tensor2, scalars):
    check_lists(self, tensor1, tensor2)
    check_scalar_list(self, scalars)
    for t, a, b, s in zip(self, tensor1, tensor2, scalars):
        t.addcdiv_(a, b, value=s)


@kernel("CompositeExplicitAutograd")
def _foreach_sqrt(self):
    check_lists(self)
    return [ops.sqrt(t) for t in self]


@kernel("CompositeExplicitAutograd")
def _foreach_neg(self):
    check_lists(self)
    return [ops.neg(t) for t in self]


@kernel("CompositeExplicitAutograd")
def _foreach_zero_(self):
    check_lists(self)
    for t in self:
        t.zero_()
