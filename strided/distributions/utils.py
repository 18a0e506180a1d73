"""Helpers of ``strided.distributions`` (torch.distributions.utils): parameter broadcasting, the
probability / logit conversions, ``lazy_property`` and the standard-normal draw every reparameterized
sampler starts from."""

from __future__ import annotations

from functools import update_wrapper

from ..autograd import enable_grad
from ..dtypes import get_default_dtype
from ..factories import arange, randn, tensor
from ..functional import broadcast_tensors
from ..nn.functional import softmax
from ..ops import bound as ops
from ..tensor import Size, Tensor
from ..type_info import finfo

__all__ = ["broadcast_all", "logits_to_probs", "clamp_probs", "probs_to_logits", "lazy_property",
           "tril_matrix_to_vec", "vec_to_tril_matrix", "euler_constant"]

euler_constant = 0.57721566490153286060  # Euler-Mascheroni constant
_NUMBER = (int, float, bool)  # torch.types._Number


def is_number(x) -> bool:
    return isinstance(x, _NUMBER)


def broadcast_all(*values) -> tuple:
    """Broadcast tensors and numbers together; numbers become tensors of the first tensor's dtype and device
    (of the default dtype when there is none)."""
    if not all(isinstance(v, Tensor) or is_number(v) for v in values):
        raise ValueError("Input arguments must all be instances of Number or strided.Tensor.")
    if not all(isinstance(v, Tensor) for v in values):
        options = {"dtype": get_default_dtype()}
        for v in values:
            if isinstance(v, Tensor):
                options = {"dtype": v.dtype, "device": v.device}
                break
        values = [v if isinstance(v, Tensor) else tensor(v, **options) for v in values]
    return tuple(broadcast_tensors(*values))


def all_true(valid: Tensor) -> bool:
    """Whether every element of a bool tensor is True (one host read); True on meta, which holds no values."""
    return valid.device.type == "meta" or bool(valid.all())


def standard_normal(shape, dtype, device) -> Tensor:
    return randn(tuple(shape), dtype=dtype, device=device)


def sum_rightmost(value, dim: int):
    """Sum out the ``dim`` rightmost dimensions of ``value``."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:-dim]) + (-1,)).sum(-1)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """Probabilities from log-odds (binary) or from unnormalized log-probabilities along the last dim."""
    if is_binary:
        return ops.sigmoid(logits)
    return softmax(logits, dim=-1)


def clamp_probs(probs: Tensor) -> Tensor:
    """Clamp to ``[eps, 1 - eps]`` with the dtype's machine epsilon."""
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Log-odds (binary) or log-probabilities of clamped probabilities."""
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return ops.log(ps_clamped) - ops.log1p(-ps_clamped)
    return ops.log(ps_clamped)


class lazy_property:
    """A property computed (with gradients enabled) on first access and stored on the instance.

    Note [Lazy parameters]
    ``Bernoulli(probs=p)`` stores ``probs``; ``logits`` is derived on first use and cached in the instance
    ``__dict__``. Argument validation skips a parameter that is a lazy property not yet computed, which is
    how only the parameter the user passed is checked (as torch does).
    """

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """Seen on the class: a property for documentation tools, a lazy_property for validation."""

    def __init__(self, wrapped):
        property.__init__(self, wrapped)


def _tril_mask(n: int, diag: int, device) -> Tensor:
    idx = arange(n, device=device)
    return ops.lt(idx, idx.view(-1, 1) + (diag + 1))


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The lower-triangular entries of (a batch of) ``D x D`` matrices, in row order."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    rows, cols = ops.tril_indices(n, n, diag, device=mat.device)  # row-major, as a boolean mask would select
    return mat[..., rows, cols]


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """The (batched) ``D x D`` lower-triangular matrix whose entries, in row order, are ``vec``."""
    # +ve root of D**2 + (1+2*diag)*D - |diag| * (diag+1) - 2*vec.shape[-1] = 0
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n) - n > finfo(vec.dtype).eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be expressed as "
                         "the lower triangular part of a square D x D matrix.")
    n = round(n)
    mask = _tril_mask(n, diag, vec.device)
    flat = vec.reshape(-1, vec.shape[-1])
    index = ops.cumsum(mask.reshape(-1).long(), 0) - 1
    mat = ops.where(mask.reshape(-1), flat[:, index.clamp(min=0)], 0.0)
    return mat.reshape(Size(tuple(vec.shape[:-1]) + (n, n)))
