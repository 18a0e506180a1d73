"""``Tensor``'s autograd surface (``grad_fn``, ``is_leaf``, ``grad``, ``_version``, ``retain_grad``, ``register_hook``,
``backward``, ``detach_``): a mixin over the ``_autograd`` slot of Note [Autograd meta] in ``tensor.py``."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .tensor import Tensor

__all__ = ["TensorAutograd"]


class TensorAutograd:
    """Autograd properties and methods shared by ``Tensor`` (its state is ``Tensor``'s slots)."""

    __slots__ = ()

    @property
    def grad_fn(self):
        """The Node that produced this tensor (None for leaves and tensors outside autograd)."""
        meta = self._autograd
        if meta is None or meta.grad_fn is None:
            return None
        if self._base is not None:  # a view's history may need regenerating (Note [Stale views])
            from .autograd.graph import gradient_edge

            return gradient_edge(self)[0]
        return meta.grad_fn

    @property
    def is_leaf(self) -> bool:
        meta = self._autograd
        return meta is None or meta.grad_fn is None

    @property
    def grad(self):
        """The gradient accumulated by ``backward`` (leaves, and non-leaves after ``retain_grad``)."""
        meta = self._autograd
        if meta is None:
            return None
        if meta.grad_fn is not None and not meta.retains_grad:  # torch's warning: it will stay None
            import warnings

            warnings.warn("The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
                          "attribute won't be populated during autograd.backward(). If you indeed want the .grad field "
                          "to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you "
                          "access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead.",
                          UserWarning, stacklevel=2)
        return meta.grad

    @grad.setter
    def grad(self, value) -> None:
        from .autograd.graph import set_grad

        set_grad(self, value)

    @grad.deleter
    def grad(self) -> None:
        if self._autograd is not None:
            self._autograd.grad = None

    @property
    def _version(self) -> int:
        """In-place modification count, shared by a tensor and its views (one counter per storage)."""
        if self._storage.inference:
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._storage._version

    @property
    def retains_grad(self) -> bool:
        meta = self._autograd
        return meta is not None and meta.retains_grad

    def retain_grad(self) -> None:
        """Keep ``.grad`` of this non-leaf tensor after backward (a no-op on leaves)."""
        from .autograd.graph import retain_grad

        retain_grad(self)

    def register_hook(self, hook):
        """Call ``hook(grad)`` when this tensor's gradient is computed; it may return a new grad."""
        from .autograd.graph import register_hook

        return register_hook(self, hook)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None) -> None:
        """Accumulate d(self)/d(leaf) into the ``.grad`` of every leaf that requires grad."""
        from .autograd.backward_api import backward

        backward((self,), None if gradient is None else (gradient,), retain_graph, create_graph,
                 inputs=inputs)

    def detach_(self) -> Tensor:
        """Make this tensor a leaf that does not require grad (in place)."""
        if self._base is not None and self._base._requires_grad:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self._autograd = None
        self._requires_grad = False
        return self
