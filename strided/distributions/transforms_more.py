"""The rest of torch.distributions.transforms: ``AbsTransform``, ``PowerTransform``, ``ReshapeTransform``, the
simplex maps ``SoftmaxTransform`` / ``StickBreakingTransform``, the matrix maps ``LowerCholeskyTransform``,
``PositiveDefiniteTransform`` and ``CorrCholeskyTransform`` (the transforms made of other transforms or a
distribution are in transforms_composed.py). strided.distributions.transforms re-exports both modules; this
one imports nothing from transforms.py.

Note [Stick breaking]
``StickBreakingTransform`` maps ``x`` in R^K to the simplex in R^(K+1): ``z_k = sigmoid(x_k - log(K + 1 - k))``
(k = 1..K; the offset makes x = 0 the simplex's centre), ``y_k = z_k prod_{j<k} (1 - z_j)`` and the last
coordinate takes the remaining stick. The log |det J| is ``sum_k log(z_k (1 - z_k) prod_{j<k} (1 - z_j))``
``= sum_k (-x'_k + logsigmoid(x'_k) + log y_k)`` with ``x' = x - offset`` (torch's formula, using
``1 - sigmoid(x) = exp(-x) sigmoid(x)``). ``CorrCholeskyTransform`` applies a signed version of it to the
rows of a lower-triangular matrix of ``tanh(x)``, giving rows of unit norm.
"""

from __future__ import annotations

import math

from ..backends.meta.common import broadcast_shapes
from ..factories import arange, eye
from ..linalg._common import diag_embed
from ..nn.functional import logsigmoid, softplus
from ..nn.padding import pad
from ..ops import bound as ops
from ..tensor import Size
from ..type_info import finfo
from . import constraints
from .transform import Transform
from .utils import broadcast_all, lazy_property, tril_matrix_to_vec, vec_to_tril_matrix

__all__ = ["AbsTransform", "CorrCholeskyTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform",
           "PowerTransform", "ReshapeTransform", "SoftmaxTransform", "StickBreakingTransform"]


def _need_event_dims(shape, n: int) -> None:
    if len(shape) < n:
        raise ValueError("Too few dimensions on input")


class AbsTransform(Transform):
    """``y = |x|`` (not bijective: the inverse picks the nonnegative root)."""

    domain = constraints.real
    codomain = constraints.positive

    def __eq__(self, other):
        return isinstance(other, AbsTransform)

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class PowerTransform(Transform):
    """``y = x ** exponent`` on the positive half line."""

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        (self.exponent,) = broadcast_all(exponent)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    @lazy_property
    def sign(self):
        return self.exponent.sign()

    def __eq__(self, other):
        if not isinstance(other, PowerTransform):
            return False
        return bool(self.exponent.eq(other.exponent).all().item())

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        return Size(broadcast_shapes(tuple(shape), tuple(getattr(self.exponent, "shape", ()))))

    inverse_shape = forward_shape


class ReshapeTransform(Transform):
    """Reshape the rightmost ``in_shape`` dims to ``out_shape`` (unit Jacobian)."""

    bijective = True

    def __init__(self, in_shape, out_shape, cache_size: int = 0) -> None:
        self.in_shape = Size(in_shape)
        self.out_shape = Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @constraints.dependent_property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @constraints.dependent_property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x):
        batch_shape = tuple(x.shape[: x.dim() - len(self.in_shape)])
        return x.reshape(batch_shape + tuple(self.out_shape))

    def _inverse(self, y):
        batch_shape = tuple(y.shape[: y.dim() - len(self.out_shape)])
        return y.reshape(batch_shape + tuple(self.in_shape))

    def log_abs_det_jacobian(self, x, y):
        batch_shape = tuple(x.shape[: x.dim() - len(self.in_shape)])
        return x.new_zeros(batch_shape)

    def _reshaped(self, shape, old: Size, new: Size):
        _need_event_dims(shape, len(old))
        cut = len(shape) - len(old)
        if tuple(shape[cut:]) != tuple(old):
            raise ValueError(f"Shape mismatch: expected {Size(shape[cut:])} but got {old}")
        return Size(tuple(shape[:cut]) + tuple(new))

    def forward_shape(self, shape):
        return self._reshaped(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        return self._reshaped(shape, self.out_shape, self.in_shape)


class SoftmaxTransform(Transform):
    """``y = exp(x) / sum(exp(x))`` along the last dim (not bijective: invariant to a shift of ``x``)."""

    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other):
        return isinstance(other, SoftmaxTransform)

    def _call(self, x):
        probs = (x - x.amax(-1, keepdim=True)).exp()
        return probs / probs.sum(-1, True)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        _need_event_dims(shape, 1)
        return shape

    inverse_shape = forward_shape


def _stick_offset(x):
    """``[K, K - 1, ..., 1]`` for ``x`` of last dim K (Note [Stick breaking])."""
    k = x.shape[-1]
    return (k + 1) - arange(1, k + 1, dtype=x.dtype, device=x.device)


class StickBreakingTransform(Transform):
    """R^K onto the simplex of R^(K+1) by stick breaking (Note [Stick breaking]); bijective."""

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other):
        return isinstance(other, StickBreakingTransform)

    def _call(self, x):
        fi = finfo(x.dtype)
        z = ops.sigmoid(x - _stick_offset(x).log()).clamp(min=fi.tiny, max=1.0 - fi.eps)
        z_cumprod = (1 - z).cumprod(-1)
        return pad(z, [0, 1], value=1) * pad(z_cumprod, [1, 0], value=1)

    def _inverse(self, y):
        y_crop = y[..., :-1]
        offset = y.shape[-1] - arange(1, y_crop.shape[-1] + 1, dtype=y.dtype, device=y.device)
        # clamped: the stick left can round to <= 0 when y[-1] ~ 0 or y[:-1].sum() ~ 1
        sf = (1 - y_crop.cumsum(-1)).clamp(min=finfo(y.dtype).tiny)
        return y_crop.log() - sf.log() + offset.log()

    def log_abs_det_jacobian(self, x, y):
        x = x - _stick_offset(x).log()
        return (-x + logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        _need_event_dims(shape, 1)
        return Size(tuple(shape[:-1]) + (shape[-1] + 1,))

    def inverse_shape(self, shape):
        _need_event_dims(shape, 1)
        return Size(tuple(shape[:-1]) + (shape[-1] - 1,))


class LowerCholeskyTransform(Transform):
    """Square matrices onto lower-triangular ones with a positive diagonal: the strict lower part kept, the
    diagonal exponentiated."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other):
        return isinstance(other, LowerCholeskyTransform)

    def _call(self, x):
        return x.tril(-1) + diag_embed(x.diagonal(0, -2, -1).exp())

    def _inverse(self, y):
        return y.tril(-1) + diag_embed(y.diagonal(0, -2, -1).log())


class PositiveDefiniteTransform(Transform):
    """Square matrices onto positive-definite ones: ``L L^T`` with ``L = LowerCholeskyTransform()(x)``."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other):
        return isinstance(other, PositiveDefiniteTransform)

    def _call(self, x):
        x = LowerCholeskyTransform()(x)
        return ops.matmul(x, x.mT)

    def _inverse(self, y):
        from ..linalg import cholesky

        return LowerCholeskyTransform().inv(cholesky(y))


class CorrCholeskyTransform(Transform):
    """R^(D(D-1)/2) onto Cholesky factors of D x D correlation matrices: ``tanh`` into (-1, 1), then a signed
    stick breaking along each row of the strictly lower triangle (Note [Stick breaking])."""

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x):
        x = x.tanh()
        eps = finfo(x.dtype).eps
        x = x.clamp(min=-1 + eps, max=1 - eps)
        r = vec_to_tril_matrix(x, diag=-1)
        # stick breaking on the squares: y = sign(r) sqrt(z * z1m_cumprod) = r * sqrt(z1m_cumprod)
        z1m_cumprod_sqrt = (1 - r**2).sqrt().cumprod(-1)
        r = r + eye(r.shape[-1], dtype=r.dtype, device=r.device)  # a unit diagonal
        return r * pad(z1m_cumprod_sqrt[..., :-1], [1, 0], value=1)

    def _inverse(self, y):
        # the inverse stick breaking of Stan's reference manual (Cholesky factors of correlation matrices)
        y_cumsum = 1 - ops.cumsum(y * y, -1)
        y_cumsum_shifted = pad(y_cumsum[..., :-1], [1, 0], value=1)
        y_vec = tril_matrix_to_vec(y, diag=-1)
        y_cumsum_vec = tril_matrix_to_vec(y_cumsum_shifted, diag=-1)
        t = y_vec / y_cumsum_vec.sqrt()
        return (t.log1p() - t.neg().log1p()) / 2  # atanh

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        # of x and the flattened strict lower triangle of y (the spaces differ in dimension)
        y1m_cumsum = 1 - (y * y).cumsum(-1)
        # diag=-2 takes the cumulative sums already shifted by one column (also for 2 x 2)
        stick_breaking_logdet = 0.5 * tril_matrix_to_vec(y1m_cumsum, diag=-2).log().sum(-1)
        tanh_logdet = -2 * (x + softplus(-2 * x) - math.log(2.0)).sum(-1)
        return stick_breaking_logdet + tanh_logdet

    def forward_shape(self, shape):
        _need_event_dims(shape, 1)
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return Size(tuple(shape[:-1]) + (d, d))

    def inverse_shape(self, shape):
        _need_event_dims(shape, 2)
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return Size(tuple(shape[:-2]) + (d * (d - 1) // 2,))
