"""``LKJCholesky`` (torch.distributions.LKJCholesky): the LKJ distribution over Cholesky factors of correlation
matrices.

Note [Onion method]
The density of a correlation matrix ``M = L L^T`` is proportional to ``det(M)^(eta - 1)``. Sampling follows
torch (after NumPyro), the onion method of Lewandowski, Kurowicka and Joe (2009, Sec. 3.2) vectorized over
the rows: row ``i`` of ``L`` (i >= 1) is ``sqrt(y_i) u_i`` with ``y_i ~ Beta(i / 2, eta + (D - 2) / 2 - (i - 1)
/ 2)`` and ``u_i`` uniform on the unit sphere of the first ``i`` coordinates (a normalized Gaussian vector of
the strictly lower triangle); the diagonal entry completes the row to unit norm. Row 0 has no free
coordinates: its Beta draw is ignored and its direction (0 / 0 in torch, then zeroed) is zero here. Only
``sample`` exists (torch has no reparameterized sampler for it). ``log_prob`` is Stan's Cholesky-LKJ density
``prod_i L_ii^(2 eta - 2 + D - i)`` (the correlation density times the Jacobian of ``L -> L L^T``) with the
normalizer of the paper's page 1999 through ``mvlgamma``.

Deviation from torch: torch's first Beta concentration is ``i - 1/2`` where the onion method (and NumPyro,
which torch follows) has ``i / 2``; the two agree for row 1 only. torch's draws of rows 2 and later are
therefore too far from the diagonal: they follow neither its own ``log_prob`` nor the LKJ marginals (each
off-diagonal correlation ``2 Beta(b, b) - 1``, ``b = eta - 1 + D / 2``; for D = 4, eta = 0.5 torch gives
``E r^2 = 0.30`` where the LKJ law has 0.25). strided draws from the distribution ``log_prob`` describes.
"""

from __future__ import annotations

import math

from ..autograd import no_grad
from ..factories import arange
from ..linalg._common import diag_embed
from ..ops import bound as ops
from ..tensor import Size
from ..type_info import finfo
from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all, standard_normal

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """The LKJ distribution of ``dim x dim`` lower Cholesky factors ``L`` of correlation matrices, of
    density proportional to ``det(L L^T)^(concentration - 1)`` (Note [Onion method]).

    Parameters
    ----------
    dim : int
        The size of the matrices, at least 2.
    concentration : float or Tensor
        The shape parameter ``eta`` (positive); 1 is uniform over correlation matrices.
    """

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration=1.0, validate_args: bool | None = None) -> None:
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        event_shape = Size((dim, dim))
        # the Beta draws of Note [Onion method], one per row (row 0's is unused)
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = arange(self.dim - 1, dtype=self.concentration.dtype, device=self.concentration.device)
        offset = ops.cat([offset.new_zeros((1,)), offset])
        beta_conc1 = 0.5 * offset + 0.5  # i / 2 for row i >= 1 (torch: i - 1/2, Note [Onion method])
        beta_conc0 = marginal_conc.unsqueeze(-1) - 0.5 * offset
        self._beta = Beta(beta_conc1, beta_conc0)  # default validation, as torch's
        super().__init__(batch_shape, event_shape, validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(tuple(batch_shape))
        new._beta = self._beta.expand(tuple(batch_shape) + (self.dim,))
        super(LKJCholesky, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=()):
        """Onion-method draws of shape ``sample_shape + batch_shape + (dim, dim)`` (Note [Onion method])."""
        with no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            u_normal = standard_normal(self._extended_shape(sample_shape), dtype=y.dtype, device=y.device).tril(-1)
            norm = u_normal.norm(2, -1, True)
            u_hypersphere = u_normal / ops.where(norm == 0, 1.0, norm)  # row 0 stays zero
            w = ops.sqrt(y) * u_hypersphere
            # the diagonal completes each row to unit norm; clamp for numerical stability
            diag_elems = ops.clamp(1 - (w * w).sum(-1), min=finfo(w.dtype).tiny).sqrt()
            return w + diag_embed(diag_elems)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(0, -1, -2)[..., 1:]
        order = arange(2, self.dim + 1, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = (order * diag_elems.log()).sum(-1)
        # the normalizer (page 1999 of the paper); mvlgamma's pi constant is (D - 1)(D - 2) / 4 log(pi), the
        # paper's D (D - 1) / 4 log(pi): the difference is (D - 1) / 2 log(pi)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = ops.lgamma(alpha) * dm1
        numerator = ops.mvlgamma(alpha - 0.5, dm1)
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        normalize_term = pi_constant + numerator - denominator
        return unnormalized_log_pdf - normalize_term
