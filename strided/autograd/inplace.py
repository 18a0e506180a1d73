"""Autograd of in-place ops: torch's check_inplace, the ``CopySlices`` history a base takes after an
in-place op on one of its views, ``rebase_history``, and late-requiring views (Note [In-place autograd]
in kernels.py)."""

from __future__ import annotations

from ..tensor import Tensor
from .graph import Node, ViewOfRebased, gradient_edge, multi_output_message, set_history

__all__ = ["check_inplace", "CopySlices", "rebase_history", "refresh_view"]


def check_inplace(t: Tensor) -> None:
    """torch's check_inplace: a leaf that requires grad (or a view of one) can't be written, nor a view made under
    no_grad of a base that requires grad while grad mode is on (Note [No-grad views])."""
    meta = t._autograd
    if meta is not None and t._base is not None:
        if meta.no_grad_view and meta.grad_fn is None and t._base._requires_grad:
            raise RuntimeError(_NO_GRAD_VIEW)
        if meta.multi_output:
            raise RuntimeError(multi_output_message(meta, "is being"))
    if not t._requires_grad:
        base = t._base
        if base is None or not base._requires_grad or not base.is_leaf:
            return
    elif t._base is None:
        if t.is_leaf:
            raise RuntimeError(
                "a leaf Variable that requires grad is being used in an in-place operation.")
        return
    base = t._base
    if base._requires_grad and base.is_leaf:
        raise RuntimeError(
            "a view of a leaf Variable that requires grad is being used in an in-place operation.")


class CopySlices(Node):
    """The new history of a base after an in-place op on one of its views (torch's CopySlices).

    Edge 0 is the base's previous history, edge 1 the in-place op's node: the gradient of the
    base flows unchanged outside the view and through the op inside it.
    """

    __slots__ = ("base_geometry", "view_geometry")
    _name = "torch::autograd::CopySlices"

    def __init__(self, base: Tensor, view: Tensor, next_edges, input_meta):
        super().__init__(next_edges, input_meta)
        self.base_geometry = (base._sizes, base._strides, base._offset, base.dtype, base.device)
        self.view_geometry = (view._sizes, view._strides, view._offset, view.dtype)

    def apply(self, grads: list) -> tuple:
        from ..ops import bound as ops

        sizes, strides, offset, dtype, device = self.base_geometry
        result = ops.empty_strided(sizes, strides, dtype=dtype, device=device)
        result.copy_(grads[0])
        region = view_region(result, offset, self.view_geometry)
        inner = region.clone() if self.next_edges[1] is not None else None
        region.fill_(0)
        return (result, inner)


# Note [Views of another dtype]
# A view's geometry counts elements of its own dtype: ``view_as_real`` / ``real`` / ``imag`` of a
# complex base see its storage as real pairs, ``view_as_complex`` of a real base as complex
# numbers. The base-shaped gradient is viewed the same way (torch replays the view instead of
# as_strided, for the same reason) before the view's region of it is taken.
def view_region(result: Tensor, base_offset: int, view_geometry: tuple) -> Tensor:
    """The region of ``result`` (fresh, with the base's geometry) that the view covers."""
    from ..ops import bound as ops

    vsizes, vstrides, voffset, vdtype = view_geometry
    if vdtype is result.dtype:
        return ops.as_strided(result, vsizes, vstrides, voffset - base_offset)
    if result.dtype.is_complex:  # a real view of a complex base
        return ops.as_strided(ops.view_as_real(result), vsizes, vstrides, voffset - 2 * base_offset)
    pairs = ops.as_strided(result, (*vsizes, 2), (*(2 * s for s in vstrides), 1), 2 * voffset - base_offset)
    return ops.view_as_complex(pairs)


def rebase_history(t: Tensor, node: Node, output_nr: int = 0) -> None:
    """Make output ``output_nr`` of ``node`` the history of ``t`` after an in-place op (Note [In-place autograd])."""
    base = t._base
    if base is None:
        set_history(t, node, output_nr)
        return
    if base._requires_grad:
        base_edge, base_meta = gradient_edge(base), (base._sizes, base.dtype, base.device)
    else:
        base_edge, base_meta = None, None
    copy = CopySlices(base, t, (base_edge, (node, output_nr)), (base_meta, (t._sizes, t.dtype, t.device)))
    copy.stream = node.stream
    set_history(base, copy, 0)
    set_history(t, ViewOfRebased(base, t, (copy, 0)), 0)


# Note [Late-requiring views]
# A view made (with grad mode on) of a tensor that did not require grad has no history of its own.
# When its base later starts requiring grad (an in-place op with a grad-requiring operand on the
# base or on another of its views, or requires_grad_()), the view's values depend on that history,
# and torch reports the view as requiring grad. The dispatcher notices such a view when an op
# reads it (its base requires grad, it never had autograd metadata) and gives it a fresh history, a
# view of the base's (Note [Stale views]), before the keyset is computed: so both out-of-place ops
# and in-place ops on it (``rows[0:3].add_(a)`` after ``rows[1:4].add_(b)``) send gradients through
# the base's history instead of dropping them. Views made under no_grad of a base that requires
# grad get an empty AutogradMeta when made, which marks them as never differentiable.
# Note [No-grad views]
# A view made under no_grad of a base that requires grad carries an empty AutogradMeta marked ``no_grad_view``: ops
# reading it record no gradient, as torch's. Written in place with grad mode on, it would change its base's values
# behind the base's history (silently wrong gradients) or a leaf's, so torch forbids it; the dispatcher sends
# every op on such a view while grad mode is on to the Autograd kernel, whose in-place check raises torch's error
# (out-of-place ops pass through it recording nothing, the view not requiring grad).
_NO_GRAD_VIEW = ("A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given "
                 "that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by "
                 "moving both the view and the inplace either both inside the no_grad block (if you don't want the "
                 "inplace to be tracked) or both outside (if you want the inplace to be tracked).")


# Note [Multi-output views]
# The outputs of a function that returns several views (unbind, split, split_with_sizes, chunk) share one backward
# node, which torch cannot rebase onto an in-place op's history; torch therefore refuses an in-place write to such an
# output, or to a view of one, when it requires grad, and refuses to use one after an in-place write through its
# base changed the base's history. strided marks these outputs (``AutogradMeta.multi_output``, set by the view
# kernels and carried by ``alias`` to views of them) and refuses as torch does, in its words, though its
# ``ViewOfRebased`` could compute such a gradient: code written against strided then runs under torch. The
# ``unsafe_`` variants are torch's way around the rule; their outputs carry no mark. Ops that record no gradient
# (comparisons, argmax, detach) read a refused view as torch's do, and its repr shows ``grad_fn=<Invalid>``.
def refresh_view(t: Tensor) -> bool:
    """Give a late-requiring view ``t`` its history (Note [Late-requiring views]); False when ``t``
    is not one (it has autograd metadata: a history, or the no_grad mark). True too for a view made under no_grad
    (Note [No-grad views]): the op goes to its Autograd kernel, which refuses an in-place write."""
    meta = t._autograd
    if meta is not None:
        return meta.no_grad_view and meta.grad_fn is None
    base = t._base
    set_history(t, ViewOfRebased(base, t, gradient_edge(base)), 0)
    return True
