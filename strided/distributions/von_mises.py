"""``VonMises``: the circular normal distribution (torch.distributions.VonMises).

Note [Von Mises rejection sampler]
Best & Fisher's algorithm ("Efficient simulation of the von Mises distribution", Applied Statistics 1979),
as torch's ``_rejection_sample``: each round draws three uniforms per element, proposes from a wrapped
Cauchy and accepts by the two-step test; accepted elements keep their value, the rest try again. Each round
is a handful of elementwise ops on the whole sample plus one host read (``done.all()``); the acceptance rate
is above 65% for every concentration, so the expected number of rounds grows like the log of the sample
size. Unlike torch's unbounded loop, it stops after ``_MAX_ROUNDS`` rounds with an error (a NaN concentration
would otherwise spin forever). It runs in float64, as torch's: in float32 the proposal degenerates for
concentrations below about 1e-4 (torch issue #88443). On meta nothing can be read: no round runs, the result
has the sample's shape.

Note [Bessel approximations]
``log I_0`` and ``log I_1`` are torch's: the polynomial approximations of Abramowitz & Stegun 9.8.1-9.8.4
(relative error below about 2e-7), not the exact functions, so that ``log_prob`` and ``variance`` agree with
torch's to rounding.
"""

from __future__ import annotations

import math

from ..autograd import no_grad
from ..dtypes import bool as bool_
from ..dtypes import float64
from ..factories import rand, zeros
from ..ops import bound as ops
from ..tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import all_true, broadcast_all, lazy_property

__all__ = ["VonMises"]

_MAX_ROUNDS = 1000

_I0_COEF_SMALL = [1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.360768e-1, 0.45813e-2]
_I0_COEF_LARGE = [0.39894228, 0.1328592e-1, 0.225319e-2, -0.157565e-2, 0.916281e-2, -0.2057706e-1, 0.2635537e-1,
                  -0.1647633e-1, 0.392377e-2]
_I1_COEF_SMALL = [0.5, 0.87890594, 0.51498869, 0.15084934, 0.2658733e-1, 0.301532e-2, 0.32411e-3]
_I1_COEF_LARGE = [0.39894228, -0.3988024e-1, -0.362018e-2, 0.163801e-2, -0.1031555e-1, 0.2282967e-1, -0.2895312e-1,
                  0.1787654e-1, -0.420059e-2]
_COEF_SMALL = [_I0_COEF_SMALL, _I1_COEF_SMALL]
_COEF_LARGE = [_I0_COEF_LARGE, _I1_COEF_LARGE]


def _eval_poly(y, coef):
    coef = list(coef)
    result = coef.pop()
    while coef:
        result = coef.pop() + y * result
    return result


def _log_modified_bessel_fn(x, order: int = 0):
    """``log I_order(x)`` for ``x > 0``, ``order`` 0 or 1 (Note [Bessel approximations])."""
    if order != 0 and order != 1:
        raise AssertionError(f"order must be 0 or 1, got {order}")
    y = (x / 3.75) ** 2
    small = _eval_poly(y, _COEF_SMALL[order])
    if order == 1:
        small = x.abs() * small
    small = small.log()
    large = x - 0.5 * x.log() + _eval_poly(3.75 / x, _COEF_LARGE[order]).log()
    return ops.where(x < 3.75, small, large)


def _rejection_sample(loc, concentration, proposal_r, x):
    """Note [Von Mises rejection sampler]."""
    done = zeros(tuple(x.shape), dtype=bool_, device=loc.device)
    rounds = 0
    while not all_true(done):
        if rounds == _MAX_ROUNDS:
            raise RuntimeError(f"VonMises.sample: the rejection sampler did not accept every element in {_MAX_ROUNDS} "
                               f"rounds (is the concentration finite and positive?)")
        rounds += 1
        u1, u2, u3 = rand((3,) + tuple(x.shape), dtype=loc.dtype, device=loc.device).unbind()
        z = ops.cos(math.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        x = ops.where(accept, (u3 - 0.5).sign() * f.acos(), x)
        done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    """The von Mises distribution of mean direction ``loc`` (radians) and ``concentration``: density
    ``exp(concentration cos(x - loc)) / (2 pi I_0(concentration))``; ``loc`` and values are any reals,
    read modulo 2 pi; samples lie in [-pi, pi)."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args: bool | None = None) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(Size(self.loc.shape), Size(), validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * ops.cos(value - self.loc)
        return log_prob - math.log(2 * math.pi) - _log_modified_bessel_fn(self.concentration, order=0)

    @lazy_property
    def _loc(self):
        return self.loc.to(float64)

    @lazy_property
    def _concentration(self):
        return self.concentration.to(float64)

    @lazy_property
    def _proposal_r(self):
        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa**2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        proposal_r = (1 + rho**2) / (2 * rho)
        proposal_r_taylor = 1 / kappa + kappa  # second order around 0, for small kappa
        return ops.where(kappa < 1e-5, proposal_r_taylor, proposal_r)

    def sample(self, sample_shape=()):
        """A sample by Best & Fisher's rejection method (Note [Von Mises rejection sampler])."""
        with no_grad():
            shape = self._extended_shape(sample_shape)
            x = zeros(tuple(shape), dtype=float64, device=self.loc.device)
            return _rejection_sample(self._loc, self._concentration, self._proposal_r, x).to(self.loc.dtype)

    def expand(self, batch_shape, _instance=None):
        try:
            return super().expand(batch_shape)
        except NotImplementedError:
            validate_args = self.__dict__.get("_validate_args")
            loc = self.loc.expand(tuple(batch_shape))
            concentration = self.concentration.expand(tuple(batch_shape))
            return type(self)(loc, concentration, validate_args=validate_args)

    @property
    def mean(self):
        """The circular mean."""
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        """The circular variance ``1 - I_1(k) / I_0(k)``."""
        return 1 - (_log_modified_bessel_fn(self.concentration, order=1)
                    - _log_modified_bessel_fn(self.concentration, order=0)).exp()
