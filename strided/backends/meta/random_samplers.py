"""Meta functions of the gamma-family samplers and their reparameterization gradients: ``_standard_gamma``,
``_sample_dirichlet``, ``poisson``, ``binomial``, ``_standard_gamma_grad``, ``_dirichlet_grad``.

Note [Sampler dtypes and shapes]
The samplers return a contiguous tensor of the parameter's sizes and dtype (torch: ``at::zeros(alpha.sizes(),
alpha.options())``); non-floating parameters raise torch's AT_DISPATCH error naming its CPU kernel
(``"gamma_cpu" not implemented for 'Long'``) on every backend. The two-input ops (``binomial`` and the gradients)
are torch's TensorIterator over an output of the *first* input's sizes: the inputs must share its dtype (``Found
dtype Double but expected Float``) and broadcast together; when the broadcast shape differs from the first input's,
torch resizes the output with a deprecation warning, and so does strided. torch's CPU kernels for ``_standard_gamma``,
``_sample_dirichlet``, ``binomial`` and the gradients stop at float32 / float64 (its CUDA kernels take float16 and
bfloat16 too): the CPU kernels check that (``cpu_floating_only``), Meta and CUDA accept every floating dtype.
"""

from __future__ import annotations

import math
import warnings

from ... import dtypes as dt
from ...dispatch.library import kernel
from ...tensor import Tensor
from .common import broadcast_shapes, common_device, new_output
from .pointwise import not_implemented
from .reductions import type_name

__all__ = ["sampler_output", "iterator_output", "cpu_floating_only"]


def sampler_output(self: Tensor, kernel_name: str) -> Tensor:
    """The contiguous output of a one-parameter sampler (Note [Sampler dtypes and shapes])."""
    if not self.dtype.is_floating_point:
        raise not_implemented(kernel_name, self.dtype)
    return new_output(self._sizes, self.dtype, self.device)


def iterator_output(kernel_name: str, first: Tensor, *others: Tensor) -> Tensor:
    """The output of torch's TensorIterator over ``first`` and ``others``: ``first``'s dtype, their broadcast
    shape (Note [Sampler dtypes and shapes])."""
    dev = common_device(first, *others)
    for t in others:
        if t.dtype is not first.dtype:
            raise RuntimeError(f"Found dtype {type_name(t.dtype)} but expected {type_name(first.dtype)}")
    if not first.dtype.is_floating_point:
        raise not_implemented(kernel_name, first.dtype)
    sizes = broadcast_shapes(first._sizes, *(t._sizes for t in others))
    if sizes != first._sizes and math.prod(first._sizes):
        warnings.warn(
            f"An output with one or more elements was resized since it had shape {list(first._sizes)}, which does "
            f"not match the required output shape {list(sizes)}. This behavior is deprecated, and in a future "
            "PyTorch release outputs will not be resized unless they have zero elements. You can explicitly reuse "
            "an out tensor t by resizing it, inplace, to zero elements with t.resize_(0).",
            UserWarning,
            stacklevel=4,
        )
    return new_output(sizes, first.dtype, dev)


def cpu_floating_only(kernel_name: str, d: dt.dtype) -> None:
    """torch's CPU kernels of these ops dispatch on float32 and float64 only."""
    if d not in (dt.float32, dt.float64):
        raise not_implemented(kernel_name, d)


@kernel("Meta")
def _standard_gamma(self, generator=None):
    return sampler_output(self, "gamma_cpu")


@kernel("Meta")
def _sample_dirichlet(self, generator=None):
    return sampler_output(self, "dirichlet")


@kernel("Meta")
def poisson(self, generator=None):
    return sampler_output(self, "poisson_cpu")


@kernel("Meta")
def binomial(count, prob, generator=None):
    for name, t in (("count", count), ("prob", prob)):
        if not t.dtype.is_floating_point:
            raise ValueError(f"binomial only supports floating-point dtypes for {name}, got: {type_name(t.dtype)}")
    return iterator_output("binomial_cpu", count, prob)


@kernel("Meta")
def _standard_gamma_grad(self, output):
    return iterator_output("_standard_gamma_grad_cpu", self, output)


@kernel("Meta")
def _dirichlet_grad(x, alpha, total):
    return iterator_output("_dirichlet_grad_cpu", x, alpha, total)
