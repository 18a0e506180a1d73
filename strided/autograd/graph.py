"""The autograd graph: ``AutogradMeta`` on tensors, ``Node`` with next edges, saved tensors.

Note [Graph]
An output of a recorded op holds (in its ``_autograd`` meta) the ``Node`` that made it and its
output number. A Node's ``next_edges`` has one entry per differentiable input: ``(node,
input_nr)`` or None when that input does not require grad; a leaf's edge goes to its
``AccumulateGrad`` node (one per leaf, cached weakly in the leaf's meta, as torch). ``input_meta``
keeps each input's (sizes, dtype, device) so the engine can reduce a broadcast gradient with
``sum_to`` and cast it back (torch's ``validate_outputs``): formulas never deal with broadcasting.

Note [Saved tensors]
A ``SavedTensor`` keeps the tensor and the version of its storage at save time; unpacking after
an in-place change raises torch's error. An op's own output is saved as a detached alias and
re-attached to the node when unpacked, so the graph holds no reference cycle (tensor -> node ->
tensor) and CUDA memory is released as soon as the last user drops the output. Under
saved-tensor hooks the SavedTensor keeps what the pack hook returned instead (Note [Saved tensor
hooks] in saved_hooks.py).
"""

from __future__ import annotations

import re
import sys
import weakref

from ..dispatch.dispatcher import grad_mode
from ..tensor import Tensor, make_tensor
from . import saved_hooks as _saved_hooks
from .anomaly_mode import anomaly, store_stack
from .mutation_on_saved import allow_mutation_on_saved_tensors
from .saved_hooks import disable_saved_tensors_hooks, save_on_cpu, saved_tensors_hooks

__all__ = ["AutogradMeta", "Node", "AccumulateGrad", "SavedTensor", "gradient_edge", "set_history",
           "obeys_layout_contract", "clone_obey_contract", "set_grad", "retain_grad", "register_hook",
           "collect_edge", "ViewOfRebased", "saved_tensors_hooks", "save_on_cpu",
           "disable_saved_tensors_hooks", "allow_mutation_on_saved_tensors", "GradientEdge", "get_gradient_edge",
           "increment_version", "register_multi_grad_hook"]


class AutogradMeta:
    """What autograd keeps per tensor (torch's AutogradMeta)."""

    __slots__ = ("grad", "grad_fn", "output_nr", "retains_grad", "hooks", "grad_accumulator", "view_of",
                 "post_accumulate_hooks", "no_grad_view", "multi_output")

    def __init__(self, grad_fn=None, output_nr: int = 0):
        self.grad = None
        self.grad_fn = grad_fn
        self.output_nr = output_nr
        self.retains_grad = False
        self.hooks = None  # leaf hooks (run by AccumulateGrad); non-leaf hooks live on grad_fn
        self.grad_accumulator = None  # weakref to the leaf's AccumulateGrad
        self.view_of = None  # a view's base's grad_fn when the view's history was set (Note [Stale views])
        self.post_accumulate_hooks = None  # leaf hooks run with the leaf after its .grad is updated
        self.no_grad_view = False  # a view made under no_grad of a base that requires grad (Note [No-grad views])
        self.multi_output = False  # an output of unbind / split, or a view of one (Note [Multi-output views])


def _meta(t: Tensor) -> AutogradMeta:
    meta = t._autograd
    if meta is None:
        meta = t._autograd = AutogradMeta()
    return meta


class Node:
    """A backward function: ``apply(grads) -> one grad (or None) per next edge``."""

    __slots__ = ("next_edges", "input_meta", "pre_hooks", "retain_hooks", "stream", "num_outputs",
                 "node_pre_hooks", "post_hooks", "_metadata", "__weakref__")
    _name = "Node"

    def __init__(self, next_edges=(), input_meta=(), num_outputs: int = 1):
        self.next_edges = next_edges
        self.input_meta = input_meta
        self.pre_hooks = None  # output_nr -> [hook]
        self.retain_hooks = None  # output_nr -> weakref to the tensor that retains its grad
        self.stream = None
        self.num_outputs = num_outputs
        self.node_pre_hooks = None  # [hook(grad_outputs) -> tuple | None] (register_prehook)
        self.post_hooks = None  # [hook(grad_inputs, grad_outputs) -> tuple | None] (register_hook)
        if anomaly.enabled:
            store_stack(self)  # Note [Anomaly mode]

    @property
    def metadata(self) -> dict:
        """A dict kept with the node (anomaly mode stores the forward stack here as ``"traceback_"``)."""
        try:
            return self._metadata
        except AttributeError:
            m = self._metadata = {}
            return m

    def apply(self, grads: list) -> tuple:
        raise NotImplementedError

    def takes_real_part(self, index: int) -> bool:
        """Whether a complex gradient this node returns for its real input ``index`` is reduced to
        its real part (Note [handle_r_to_c] in derivatives.py) rather than refused."""
        return False

    def release(self) -> None:
        """Free saved tensors (after a backward without retain_graph)."""

    def name(self) -> str:
        """The node's name, as torch's ``Node.name()``: "MulBackward0", and for the nodes torch defines by hand
        in C++, their qualified name ("torch::autograd::AccumulateGrad", "torch::autograd::CopySlices")."""
        return self._name

    def __repr__(self) -> str:  # torch's repr names the Python class: <AccumulateGrad object at ...>
        return f"<{self._name.removeprefix('torch::autograd::')} object at {id(self):#x}>"

    def register_hook(self, hook) -> RemovableHandle:
        """torch's ``Node.register_hook``: ``hook(grad_inputs, grad_outputs)`` runs after the node;
        it may return new ``grad_inputs``, one per ``next_functions`` entry (strided's nodes have
        no edge for a Python-scalar operand, where torch's have a ``None`` one)."""
        if not callable(hook):
            raise TypeError(f"register_hook: expected a callable hook, got {type(hook).__name__}")
        if self.post_hooks is None:
            self.post_hooks = []
        self.post_hooks.append(hook)
        return RemovableHandle(self.post_hooks, hook)

    def register_prehook(self, hook) -> RemovableHandle:
        """torch's ``Node.register_prehook``: ``hook(grad_outputs)`` runs before the node (after the
        tensor hooks of its outputs); it may return new ``grad_outputs``."""
        if not callable(hook):
            raise TypeError(f"register_prehook: expected a callable hook, got {type(hook).__name__}")
        if self.node_pre_hooks is None:
            self.node_pre_hooks = []
        self.node_pre_hooks.append(hook)
        return RemovableHandle(self.node_pre_hooks, hook)

    @property
    def next_functions(self) -> tuple:
        return tuple((e[0], e[1]) if e is not None else (None, 0) for e in self.next_edges)


class AccumulateGrad(Node):
    """The sink of a leaf: adds the incoming gradient into ``leaf.grad`` (Note [Accumulation])."""

    __slots__ = ("variable",)
    _name = "torch::autograd::AccumulateGrad"

    def __init__(self, variable: Tensor):
        super().__init__((), ())
        self.variable = variable

    def apply(self, grads: list) -> tuple:
        var = self.variable
        g = grads[0]
        grads[0] = None
        meta = _meta(var)
        if meta.hooks:
            for hook in meta.hooks:
                new = hook(g)
                if new is not None:
                    g = new
        # computed before the call: an argument being passed is one more reference on the stack
        unshared = _unshared(g, 2)  # this frame's `g` and _unshared's parameter
        accumulate_grad(var, meta, g, unshared)
        if meta.post_accumulate_hooks:
            for hook in tuple(meta.post_accumulate_hooks):
                hook(var)
        return ()


# Note [Accumulation]
# As torch's AccumulateGrad: the first gradient is stored as it is ("stolen") when nothing else
# can see it -- no other reference to the tensor or to its memory (torch checks the use count) --
# and it obeys the gradient layout contract, else as a copy that obeys it, so two leaves never
# share one .grad (``a + b`` passes the same gradient object to both); later gradients are added
# in place (out of place under create_graph, so the sum is differentiable).
#
# Note [Gradient layout contract]
# torch's ``obeys_layout_contract`` / ``clone_obey_contract`` (autograd/utils/grad_layout_contract.h):
# the .grad of a dense, non-overlapping parameter has the parameter's strides (size-1 dims aside);
# of any other parameter, the contiguous strides. So the gradient of a Linear weight is laid out
# like the weight, and optimizers never copy it.
def _unshared(g: Tensor, refs: int) -> bool:
    """True when ``g`` (``refs`` references: the callers' and this parameter) and its memory are
    held nowhere else: a view counts if its base is held by it alone."""
    if sys.getrefcount(g) > refs + 1 or g._autograd is not None:
        return False
    base = g._base
    if base is None:
        return sys.getrefcount(g._storage) <= 2  # g's slot + the argument
    # + `base`; + base's slot; and the view spans its whole storage (a stolen slice would keep the
    # rest of a larger buffer alive as long as the .grad lives)
    return (sys.getrefcount(base) <= 3 and sys.getrefcount(g._storage) <= 3
            and g.numel() * g.dtype.itemsize == g._storage._nbytes)


def obeys_layout_contract(grad: Tensor, var: Tensor) -> bool:
    """Note [Gradient layout contract]."""
    if var._is_non_overlapping_and_dense():
        for size, gs, vs in zip(grad._sizes, grad._strides, var._strides):
            if size != 1:
                if gs != vs:
                    return False
            elif gs == 0:
                return False
        return True
    return grad.is_contiguous()


def clone_obey_contract(grad: Tensor, var: Tensor) -> Tensor:
    """A copy of ``grad`` with ``var``'s strides (dense ``var``) or contiguous."""
    from ..ops import bound as ops

    if var._is_non_overlapping_and_dense():
        out = ops.empty_strided(var._sizes, var._strides, dtype=grad.dtype, device=grad.device)
        return out.copy_(grad)
    return ops.clone(grad, memory_format="contiguous_format")


def accumulate_grad(var: Tensor, meta: AutogradMeta, g: Tensor, unshared: bool) -> None:
    old = meta.grad
    if old is None:
        if not obeys_layout_contract(g, var):
            g = clone_obey_contract(g, var)
        elif not grad_mode.enabled:
            if not unshared:
                g = clone_obey_contract(g, var)
            elif g._base is not None:
                g = g.detach()
        meta.grad = g
    elif grad_mode.enabled:
        meta.grad = old + g
    else:
        old.add_(g)


def grad_accumulator(t: Tensor) -> AccumulateGrad:
    meta = _meta(t)
    ref = meta.grad_accumulator
    node = ref() if ref is not None else None
    if node is None:
        node = AccumulateGrad(t)
        if t.device.type == "cuda":  # Note [Backward streams]: the leaf's stream is the one current at its first use
            from ..backends.cuda.streams import current_stream_at

            node.stream = current_stream_at(t.device.index)
        meta.grad_accumulator = weakref.ref(node)
    return node


# Note [Stale views]
# An in-place op on a base (or on another of its views) changes what a view holds, so, as torch
# does, a view whose base's history changed after the view's was set gets a fresh history: a
# view of the base's new history (``ViewOfRebased``), made when the view is next used.
def gradient_edge(t: Tensor) -> tuple:
    """``(grad_fn, output_nr)`` of a non-leaf, ``(AccumulateGrad, 0)`` of a leaf."""
    meta = t._autograd
    if meta is not None and meta.grad_fn is not None:
        base = t._base
        if base is not None and base._requires_grad:
            base_meta = base._autograd
            current = None if base_meta is None else base_meta.grad_fn
            if current is not meta.view_of:
                if meta.multi_output:  # Note [Multi-output views]
                    raise RuntimeError(multi_output_message(meta, "its base or another view of its base has been"))
                set_history(t, ViewOfRebased(base, t, gradient_edge(base)), 0)
        return (meta.grad_fn, meta.output_nr)
    return (grad_accumulator(t), 0)


def multi_output_message(meta: AutogradMeta, modified: str) -> str:
    """torch's refusal of an in-place write to (``modified="is being"``), or through the base of, an output of a
    function that returns several views (Note [Multi-output views])."""
    name = re.sub(r"Backward\d*$", "", meta.grad_fn._name) if meta.grad_fn is not None else "a view function"
    return (f"Output {meta.output_nr} of {name} is a view and {modified} modified inplace. This view is the output "
            "of a function that returns multiple views. Such functions do not allow the output views to be modified "
            "inplace. You should replace the inplace operation by an out-of-place one.")


def collect_edge(t, edges: list, metas: list) -> None:
    """Append ``t``'s edge (None unless it is a tensor that requires grad) and its metadata."""
    if (type(t) is Tensor or isinstance(t, Tensor)) and t._requires_grad:  # nn.Parameter is a subclass
        edges.append(gradient_edge(t))
        metas.append((t._sizes, t.dtype, t.device))
    else:
        edges.append(None)
        metas.append(None)


def set_history(t: Tensor, node: Node, output_nr: int = 0) -> None:
    meta = t._autograd
    if meta is None:
        meta = t._autograd = AutogradMeta(node, output_nr)
    else:
        meta.grad_fn = node
        meta.output_nr = output_nr
    base = t._base
    if base is not None:
        base_meta = base._autograd
        meta.view_of = None if base_meta is None else base_meta.grad_fn
    t._requires_grad = True


_INFERENCE_SAVED = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode in "
    "computation tracked by autograd. To work around this, you can make a clone to get a normal tensor and use it "
    "in autograd, or use `strided.no_grad()` instead of `strided.inference_mode()`.")


class SavedTensor:
    """A tensor saved for backward with its version (Note [Saved tensors]); under saved-tensor hooks,
    what the pack hook made of it (Note [Saved tensor hooks])."""

    __slots__ = ("tensor", "version", "output_nr", "packed", "unpack_hook")

    def __init__(self, t: Tensor, output_nr: int | None = None):
        if t._storage.inference:  # Note [Inference tensors]
            raise RuntimeError(_INFERENCE_SAVED)
        if output_nr is not None:  # the op's own output: keep a detached alias (no cycle)
            t = make_tensor(t._storage, t._offset, t._sizes, t._strides, t.dtype)
        self.output_nr = output_nr
        if _saved_hooks.active:
            hooks = _saved_hooks.current_hooks()
            if hooks is not None:
                self.tensor = None  # hooked: unpack() asks the hook
                self.packed, self.unpack_hook = _saved_hooks.pack(t, hooks)
                return
        self.tensor = t
        self.version = t._storage._version

    def unpack(self, node: Node) -> Tensor:
        t = self.tensor
        if t is None:
            t = _saved_hooks.unpack(self.packed, self.unpack_hook)
        elif t._storage._version != self.version:
            raise RuntimeError(_modified_message(t, node, self))
        if self.output_nr is not None:
            t = make_tensor(t._storage, t._offset, t._sizes, t._strides, t.dtype)
            # only a differentiable output gets its node back (max.dim's saved indices stay plain integers)
            if t.dtype.is_floating_point or t.dtype.is_complex:
                set_history(t, node, self.output_nr)
        return t


def _modified_message(t: Tensor, node: Node, saved: SavedTensor) -> str:
    from ..ops.composite.views import _type_name

    def short(name: str) -> str:  # torch 2.14 names the op: "Add", not "AddBackward1"
        return re.sub(r"Backward\d*$", "", name)

    where = (f", which is output {saved.output_nr} of {short(node._name)}," if saved.output_nr is not None
             else (f", which is output {t._autograd.output_nr} of {short(t.grad_fn._name)},"
                   if t.grad_fn is not None else ""))
    return (
        "one of the variables needed for gradient computation has been modified by an inplace operation: "
        f"[{_type_name(t)} {list(t._sizes)}]{where} is at version "
        f"{t._storage._version}; expected version {saved.version} instead. Hint: "
        + ("the backtrace further above shows the operation that failed to compute its gradient. The variable "
           "in question was changed in there or anywhere later. Good luck!" if anomaly.enabled else
           "enable anomaly detection to find the operation that failed to compute its gradient, with "
           "strided.autograd.set_detect_anomaly(True, check_nan=False).")
    )


class ViewOfRebased(Node):
    """A view's history after an in-place op rebased its base: scatter into the base's shape."""

    __slots__ = ("base_geometry", "view_geometry")
    name = "AsStridedBackward0"

    def __init__(self, base: Tensor, view: Tensor, edge):
        super().__init__((edge,), ((base._sizes, base.dtype, base.device),))
        self.base_geometry = (base._sizes, base._strides, base._offset, base.dtype, base.device)
        self.view_geometry = (view._sizes, view._strides, view._offset, view.dtype)

    def apply(self, grads: list) -> tuple:
        from ..ops import bound as ops
        from .inplace import view_region

        sizes, strides, offset, dtype, device = self.base_geometry
        result = ops.empty_strided(sizes, strides, dtype=dtype, device=device).zero_()
        view_region(result, offset, self.view_geometry).copy_(grads[0])
        return (result,)


# torch.autograd.graph's edge and multi-tensor hook API (its module imports the names above)
from .multi_grad_hooks import (  # noqa: E402
    GradientEdge,
    get_gradient_edge,
    increment_version,
    register_multi_grad_hook,
)
from .tensor_hooks import (  # noqa: E402 - the tensor-facing helpers (their module imports _meta above)
    RemovableHandle,
    register_hook,
    register_post_accumulate_grad_hook,  # noqa: F401 - imported from here by Tensor
    retain_grad,
    set_grad,
)
