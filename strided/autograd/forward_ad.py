"""Forward-mode AD (torch.autograd.forward_ad): dual tensors carry a tangent through every op.

Note [Forward AD by double backward]
torch gives each op a forward derivative formula. strided derives every op's Jacobian-vector product from
its backward formula instead: for an op ``y = f(x)`` with tangent ``t``, the vector-Jacobian product
``v -> J^T v`` is linear in ``v``, so differentiating ``<J^T v, t>`` with respect to ``v`` gives ``J t``.
Each op called with a dual argument inside ``dual_level()`` therefore runs three times: once for its
result, once more with autograd recording (the dual arguments as fresh leaves), then two ``autograd.grad``
calls (the backward, and the backward of the backward). Every op whose backward can itself be differentiated
has a forward derivative this way, at several times an eager op's cost (tests/autograd/test_forward_ad_opdb.py
checks the op database against finite differences); an op whose backward cannot be differentiated (the
``*_backward`` ops) raises torch's "Trying to use forward AD with ... that does not support it", and outputs
no gradient reaches (integer outputs) get no tangent. The few ops whose backward is not differentiable
everywhere have a formula of their own (Note [Explicit forward formulas]).

The ops are intercepted with the dispatcher's tracing wrapper (Note [Zero-cost tracing]) while a level
is open, so nothing is paid outside ``dual_level()``; the profiler and ``count_ops`` use the same hook,
so they cannot run at the same time. Tangents are kept per tensor object in a table emptied when the
level closes. In-place ops move the tangent too (``x.mul_(2)`` doubles ``x``'s); a view's tangent is
computed as any op's, so it is not itself a view of the base's tangent, and an in-place write through a
view does not update its base's tangent (torch's does). Real dtypes only: a complex tangent is refused.
"""

from __future__ import annotations

import threading
import weakref
from typing import NamedTuple

from .forward_formulas import EXPLICIT_JVPS

__all__ = ["dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual", "UnpackedDualTensor"]


class UnpackedDualTensor(NamedTuple):
    """What ``unpack_dual`` returns: the primal (a view without tangent) and the tangent (or None)."""

    primal: object
    tangent: object


_level: int | None = None
_tangents: dict[int, tuple] = {}  # id(tensor) -> (weak reference to it, tangent)


class _Busy(threading.local):
    on = False  # inside an op being differentiated: the ops it calls pass through


_busy = _Busy()


def enter_dual_level() -> int:
    """Open the forward AD level (only one at a time, as torch) and return its number (0)."""
    global _level
    from ..dispatch.dispatcher import _tracing
    from ..profiler.recorder import wrap_resolved

    if _level is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    if _tracing.wrapper is not None:
        raise RuntimeError("forward AD cannot run while the profiler or count_ops traces the dispatcher "
                           "(they share its tracing hook); close them first")
    _tracing.wrapper = _forward_ad_kernel
    wrap_resolved(_forward_ad_kernel)
    _level = 0
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the level: every tangent is dropped."""
    global _level
    from ..dispatch.dispatcher import _tracing
    from ..profiler.recorder import wrap_resolved

    if _level is None or (level is not None and level != _level):
        raise RuntimeError(f"Trying to exit a forward AD level that was not the last one that was created "
                           f"(level {level}, current {_level})")
    if _tracing.wrapper is _forward_ad_kernel:
        _tracing.wrapper = None
        wrap_resolved(None)
    _tangents.clear()
    _level = None


class dual_level:  # noqa: N801 - torch's name
    """``with dual_level():`` opens the forward AD level; tangents live until it closes."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc) -> None:
        exit_dual_level()


def _tangent_of(t):
    entry = _tangents.get(id(t))
    if entry is not None and entry[0]() is t:
        return entry[1]
    return None


def _set_tangent(t, tangent) -> None:
    key = id(t)
    _tangents[key] = (weakref.ref(t, lambda _, k=key: _tangents.pop(k, None)), tangent)


def make_dual(tensor, tangent, *, level: int | None = None):
    """A view of ``tensor`` whose tangent is ``tangent`` (same sizes; floating dtypes), inside ``dual_level()``."""
    from ..tensor import Tensor

    if _level is None or (level is not None and level != _level):
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    if not isinstance(tensor, Tensor) or not isinstance(tangent, Tensor):
        raise TypeError(f"make_dual(): expected two Tensors, got {type(tensor).__name__} and "
                        f"{type(tangent).__name__}")
    if tensor.dtype.is_complex or tangent.dtype.is_complex:
        raise NotImplementedError("make_dual(): strided's forward AD takes real tensors only (Note [Forward AD by "
                                  "double backward])")
    if not tensor.dtype.is_floating_point:
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not tangent.dtype.is_floating_point:
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    if tangent._sizes != tensor._sizes:
        raise RuntimeError(f"Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size {list(tensor._sizes)} while the given "
                           f"forward gradient is of size {list(tangent._sizes)}.")
    if tangent.device != tensor.device:
        raise RuntimeError(f"make_dual(): the tangent is on {tangent.device} but the primal on {tensor.device}")
    _busy.on = True
    try:
        dual = tensor.view(tensor._sizes)
        value = tangent.detach().to(tensor.dtype)
    finally:
        _busy.on = False
    _set_tangent(dual, value)
    return dual


def unpack_dual(tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of a dual tensor; the tangent is None for a tensor without one (or no level)."""
    if _level is None or (level is not None and level != _level):
        return UnpackedDualTensor(tensor, None)
    tangent = _tangent_of(tensor)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    _busy.on = True
    try:
        primal = tensor.view(tensor._sizes)
    finally:
        _busy.on = False
    return UnpackedDualTensor(primal, tangent)


def _forward_ad_kernel(op, keyset, fn):
    """The tracing wrapper: a kernel that also computes its outputs' tangents (Note [Forward AD by double
    backward])."""
    def kernel(*args, **kwargs):
        if _busy.on or not _tangents:
            return fn(*args, **kwargs)
        duals = _duals(args, kwargs)
        if not duals:
            return fn(*args, **kwargs)
        return _with_tangents(op, fn, args, kwargs, duals)

    kernel.unprofiled = fn
    return kernel


def _duals(args, kwargs) -> dict:
    """id -> tangent for each dual Tensor among the arguments (lists of tensors included)."""
    from ..tensor import Tensor

    found = {}
    for v in (*args, *kwargs.values()):
        items = v if isinstance(v, (list, tuple)) else (v,)
        for t in items:
            if isinstance(t, Tensor):
                tangent = _tangent_of(t)
                if tangent is not None:
                    found[id(t)] = tangent
    return found


def _with_tangents(op, fn, args, kwargs, duals):
    from ..tensor import Tensor

    if op._mutated_lists:
        raise NotImplementedError(f"Trying to use forward AD with {op.name.split('::')[-1]} that does not support "
                                  "it: strided's forward AD does not run ops that write lists of tensors")
    mutated = op._mutated
    if mutated is not None and mutated[1] == "out":
        raise NotImplementedError(f"Trying to use forward AD with {op.name.split('::')[-1]}_out that does not "
                                  "support it because it is an out= function")
    written = None
    if mutated is not None:
        position, name = mutated
        written = args[position] if position < len(args) else kwargs[name]
    _busy.on = True
    try:
        if any(t.dtype.is_complex for t in duals.values()):
            raise NotImplementedError(f"forward AD through {op.name}: strided's forward AD takes real tangents "
                                      "only (Note [Forward AD by double backward])")
        before = written.detach().clone() if written is not None else None
        result = fn(*args, **kwargs)
        outs = [written] if written is not None else _flat(result)
        explicit = EXPLICIT_JVPS.get(op.name) if written is None else None  # Note [Explicit forward formulas]
        if explicit is not None:
            tangents = [None if t is None else t.detach() for t in explicit(args, kwargs, duals, outs)]
        else:
            tangents = _jvp(op, args, kwargs, duals, written, before)
    finally:
        _busy.on = False
    for out, tangent in zip(outs, tangents):
        if isinstance(out, Tensor) and tangent is not None:
            _set_tangent(out, tangent)
    return result


def _flat(result) -> list:
    from ..tensor import Tensor

    if isinstance(result, Tensor):
        return [result]
    if isinstance(result, (list, tuple)):
        return [r for r in result if isinstance(r, Tensor)]
    return []


def _jvp(op, args, kwargs, duals, written, before) -> list:
    """The tangents of ``op``'s outputs: J t by differentiating the backward (Note [Forward AD by double backward])."""
    from ..tensor import Tensor
    from .backward_api import grad as autograd_grad
    from .grad_mode import enable_grad

    leaves, tangents = [], []

    def leaf(t):
        if not isinstance(t, Tensor):
            return t
        tangent = duals.get(id(t))
        source = before if t is written else t
        if tangent is None and t is not written:
            return t
        x = source.detach().requires_grad_(tangent is not None)
        if tangent is not None:
            leaves.append(x)
            tangents.append(tangent)
        return x.clone() if t is written else x  # an in-place op writes a non-leaf copy

    def swap(v):
        return type(v)(leaf(t) for t in v) if isinstance(v, (list, tuple)) else leaf(v)

    # an argument without a formula gets no tangent, as in torch (whose backward would refuse it: Note [Arguments
    # without a formula])
    from .kernels import DERIVATIVES
    from .refusals import no_formula_arguments

    info = DERIVATIVES.get(op)
    skipped = no_formula_arguments(op, info) if info is not None and op._mutated is None else ()
    skip_pos, skip_names = {p for p, _ in skipped}, {n for _, n in skipped}
    with enable_grad():
        a2 = [v if i in skip_pos else swap(v) for i, v in enumerate(args)]
        k2 = {k: v if k in skip_names else swap(v) for k, v in kwargs.items()}
        out = op(*a2, **k2)
        outs = [a2[op._mutated[0]] if op._mutated[0] < len(a2) else k2[op._mutated[1]]] if written is not None \
            else _flat(out)
        diff = [i for i, o in enumerate(outs) if o.requires_grad and o.dtype.is_floating_point]
        if not diff or not leaves:
            return [None] * len(outs)
        # J^T v is linear in v, so any v gives the same J t; ones, not zeros: some formulas take log |v|
        gs = [outs[i].detach().new_ones(outs[i]._sizes).requires_grad_(True) for i in diff]
        try:
            vjps = autograd_grad([outs[i] for i in diff], leaves, gs, create_graph=True, allow_unused=True)
            used = [(v, t) for v, t in zip(vjps, tangents) if v is not None and v.requires_grad]
            jvps = [None] * len(gs)
            if used:
                jvps = autograd_grad([v for v, _ in used], gs, [t for _, t in used], allow_unused=True)
        except (RuntimeError, NotImplementedError) as e:  # no (twice-differentiable) backward formula
            raise NotImplementedError(f"Trying to use forward AD with {op.name.split('::')[-1]} that does not "
                                      f"support it: its backward could not be differentiated ({e})") from e
    result = [None] * len(outs)
    for j, i in enumerate(diff):
        jt = jvps[j]
        result[i] = jt.detach() if jt is not None else outs[i].detach().new_zeros(outs[i]._sizes)
    return result
