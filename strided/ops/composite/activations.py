"""Activations that are one operator with their own autograd node, as in torch, composed of other ops below
autograd (CompositeExplicitAutograd): ``hardtanh`` (``relu6`` too) and ``leaky_relu``.

Note [Activation operators]
Composed in ``nn/activations.py`` (Note [Composed activation gradients]), hardtanh recorded six nodes (two
comparisons, their ``or`` and ``not``, a clamp of the detached input and a ``where``) and leaky_relu three; as
operators they record one node each -- ``HardtanhBackward0`` / ``LeakyReluBackward0``, torch's names -- that saves
only the input, and their forwards run below autograd: hardtanh is one ``clamp``, leaky_relu ``where(x > 0, x,
x * slope)``. Their gradients are torch's kernels' (``hardtanh_backward`` passes the gradient where not ``x <= min``
or ``x >= max``, so at NaN too; ``leaky_relu_backward`` where ``x > 0``, else scaled by the slope), composed in
``autograd/functions_nn.py`` so that they differentiate again.
"""

from __future__ import annotations

from ...backends.meta.pointwise import scalar_type_name
from ...dispatch.library import kernel
from .. import bound as ops

__all__ = []


@kernel("CompositeExplicitAutograd")
def hardtanh(self, min_val=-1, max_val=1):
    """``clamp(self, min_val, max_val)`` (NaN stays NaN)."""
    return ops.clamp(self, min_val, max_val)


@kernel("CompositeExplicitAutograd")
def leaky_relu(self, negative_slope=0.01):
    """``self`` where ``self > 0``, else ``negative_slope * self`` (floating dtypes, as torch's kernel)."""
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f"\"leaky_relu_{self.device.type}\" not implemented for "
                                  f"'{scalar_type_name(self.dtype)}'")
    return ops.where(ops.gt(self, 0), self, self * negative_slope)
