"""torch's implicit reparameterization gradients of the gamma and Dirichlet samplers, vectorized over float64
arrays: ``standard_gamma_grad(alpha, x)`` and ``dirichlet_grad(x, alpha, total)`` (the CPU kernels of
``_standard_gamma_grad`` and ``_dirichlet_grad``).

Note [Implicit reparameterization]
A gamma sample ``x`` of shape ``alpha`` moves with ``alpha`` along the level set of its CDF: ``dx / dalpha =
-(dF / dalpha)(x; alpha) / f(x; alpha)`` (Figurnov et al., "Implicit Reparameterization Gradients", 2018). torch
evaluates it with three approximations by region (``standard_gamma_grad_one``, ATen/native/Distributions.h): the
Taylor series of the lower incomplete gamma for ``x < 0.8``, Rice's saddle-point expansion for ``alpha > 8`` (a
polynomial next to ``x = alpha``, where the expansion is singular), and a bivariate rational approximation in
``log(x / alpha), log(alpha)`` elsewhere. ``_dirichlet_grad`` is the same for the Beta marginal
``x ~ Beta(alpha, total - alpha)`` of a Dirichlet sample, scaled by ``1 / (1 - x)``: Taylor series next to 0 and 1,
the saddle point when both parameters exceed 6, a rational correction of ``x (digamma(total) - digamma(alpha)) /
beta`` elsewhere (``dirichlet_grad_one``). The code here is torch's region by region, computed in float64 as torch's
CPU kernels compute (``accscalar_t`` = double); torch evaluates the Beta Taylor branches in the input dtype, so
float32 results can differ from torch's in the last bits there. The CUDA device functions (random_samplers.cu) are
the same code.
"""

from __future__ import annotations

import numpy as np

from .gamma_functions import digamma

__all__ = ["standard_gamma_grad", "dirichlet_grad"]

_GAMMA_UV = np.array([
    [0.16009398, -0.094634809, 0.025146376, -0.0030648343, 1, 0.32668115, 0.10406089, 0.0014179084],
    [0.53487893, 0.1298071, 0.065735949, -0.0015649758, 0.16639465, 0.020070113, -0.0035938915, -0.00058392623],
    [0.040121004, -0.0065914022, -0.0026286047, -0.0013441777, 0.017050642, -0.0021309326, 0.00085092367,
     -1.5247877e-07],
])
_BETA_C = np.array([
    [[[1.003668233, -0.01061107488, -0.0657888334, 0.01201642863],
      [0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033],
      [-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013]],
     [[0.221950385, -0.3187676331, 0.01799915743, 0.01074823814],
      [-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057],
      [0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05]],
     [[-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565],
      [0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181],
      [0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05]]],
    [[[1, -0.02924021934, -0.04438342661, 0.007285809825],
      [0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521],
      [-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149]],
     [[0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273],
      [0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956],
      [-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05]],
     [[0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05],
      [0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05],
      [-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06]]],
])


def _gamma_small_x(a, x):
    """Taylor series of the lower incomplete gamma (x < 0.8); NaN becomes 0, as torch's."""
    numer = np.ones_like(x)
    denom = a.copy()
    series1 = numer / denom
    series2 = numer / (denom * denom)
    for i in range(1, 6):
        numer = numer * (-x / i)
        denom = denom + 1
        series1 = series1 + numer / denom
        series2 = series2 + numer / (denom * denom)
    pow_x_alpha = x**a
    gamma_pdf = x ** (a - 1) * np.exp(-x)
    gamma_cdf = pow_x_alpha * series1
    gamma_cdf_alpha = (np.log(x) - digamma(a)) * gamma_cdf - pow_x_alpha * series2
    result = -gamma_cdf_alpha / gamma_pdf
    return np.where(np.isnan(result), 0.0, result)


def _gamma_saddle(a, x):
    """Rice's saddle-point expansion (alpha > 8), with the polynomial next to x = alpha."""
    near = (0.9 * a <= x) & (x <= 1.1 * a)
    numer_1 = 1 + 24 * a * (1 + 12 * a)
    numer_2 = 1440 * (a * a) + 6 * x * (53 - 120 * x) - 65 * x * x / a + a * (107 + 3600 * x)
    poly = numer_1 * numer_2 / (1244160 * (a * a) * (a * a))
    denom = np.sqrt(8 * a)
    term2 = denom / (a - x)
    term3 = (x - a - a * np.log(x / a)) ** -1.5
    term23 = np.where(x < a, term2 - term3, term2 + term3)
    term1 = np.log(x / a) * term23 - np.sqrt(2 / a) * (a + x) / ((a - x) * (a - x))
    stirling = 1 + 1 / (12 * a) * (1 + 1 / (24 * a))
    return np.where(near, poly, -stirling * x * term1 / denom)


def _gamma_rational(a, x):
    """The bivariate rational approximation in u = log(x / alpha), v = log(alpha)."""
    u = np.log(x / a)
    v = np.log(a)
    c = [_GAMMA_UV[0, i] + u * (_GAMMA_UV[1, i] + u * _GAMMA_UV[2, i]) for i in range(8)]
    p = c[0] + v * (c[1] + v * (c[2] + v * c[3]))
    q = c[4] + v * (c[5] + v * (c[6] + v * c[7]))
    return np.exp(p / q)


def _by_region(out, regions, *args):
    """Fill ``out`` region by region: ``regions`` = ((mask, fn), ...), each fn over the masked arguments."""
    for mask, fn in regions:
        if mask.any():
            out[mask] = fn(*(a[mask] for a in args))
    return out


def standard_gamma_grad(alpha: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``d x / d alpha`` of a standard gamma sample ``x`` (Note [Implicit reparameterization]); float64 arrays of
    one shape."""
    small = x < 0.8
    saddle = ~small & (alpha > 8.0)
    rest = ~small & ~saddle
    out = np.zeros(x.shape)
    with np.errstate(all="ignore"):
        return _by_region(out, ((small, _gamma_small_x), (saddle, _gamma_saddle), (rest, _gamma_rational)),
                          alpha, x)


def _beta_alpha_small(x, a, b):
    """Taylor expansion in x next to 0 of the Beta gradient w.r.t. alpha."""
    factor = digamma(a) - digamma(a + b) - np.log(x)
    numer = np.ones_like(x)
    series = numer / a * (factor + 1 / a)
    for i in range(1, 11):
        numer = numer * ((i - b) * x / i)
        denom = a + i
        series = series + numer / denom * (factor + 1 / denom)
    result = x * (1 - x) ** -b * series
    return np.where(np.isnan(result), 0.0, result)


def _beta_beta_small(x, a, b):
    """Taylor expansion in x next to 0 of the Beta gradient w.r.t. beta."""
    factor = digamma(a + b) - digamma(b)
    numer, betas, dbetas = np.ones_like(x), np.ones_like(x), np.zeros_like(x)
    series = factor / a
    for i in range(1, 9):
        numer = numer * (-x / i)
        dbetas = dbetas * (b - i) + betas
        betas = betas * (b - i)
        series = series + numer / (a + i) * (dbetas + factor * betas)
    result = -((1 - x) ** (1 - b)) * series
    return np.where(np.isnan(result), 0.0, result)


def _beta_alpha_mid(x, a, b):
    """Rice's saddle-point expansion when alpha and beta are both large."""
    total = a + b
    mean = a / total
    std = np.sqrt(a * b / (total + 1)) / total
    near = (mean - 0.1 * std <= x) & (x <= mean + 0.1 * std)
    poly = 47 * x * (b * b) * (b * b) + a * (
        (43 + 20 * (16 + 27 * b) * x) * (b * b) * b + a * (
            3 * (59 + 180 * b - 90 * x) * (b * b) + a * (
                (453 + 1620 * b * (1 - x) - 455 * x) * b + a * (8 * (1 - x) * (135 * b - 11)))))
    prefactor_num = (1 + 12 * a) * (1 + 12 * b) / (total * total)
    prefactor_den = 12960 * a * a * a * b * b * (1 + 12 * total)
    near_value = prefactor_num / (1 - x) * poly / prefactor_den
    prefactor = -x / np.sqrt(2 * a * b / total)
    stirling = ((1 + 1 / (12 * a) + 1 / (288 * a * a)) * (1 + 1 / (12 * b) + 1 / (288 * b * b))
                / (1 + 1 / (12 * total) + 1 / (288 * total * total)))
    term1_num = 2 * (a * a) * (x - 1) + a * b * (x - 1) - x * (b * b)
    axbx = a * (x - 1) + b * x
    term1 = term1_num / (np.sqrt(2 * a / b) * total**1.5 * axbx * axbx)
    term2 = 0.5 * np.log(a / (total * x))
    term3 = np.sqrt(8 * a * b / total) / (b * x + a * (x - 1))
    term4 = (b * np.log(b / (total * (1 - x))) + a * np.log(a / (total * x))) ** -1.5
    term1234 = term1 + term2 * (term3 + np.where(x < mean, term4, -term4))
    return np.where(near, near_value, stirling * prefactor * term1234)


def _beta_rational(x, a, total):
    """torch's rational correction of ``x (digamma(total) - digamma(alpha)) / beta``."""
    u = np.log(x)
    la = np.log(a) - u
    lb = np.log(total) - la
    pow_u = (1.0, u, u * u)
    pow_a = (1.0, la, la * la)
    p = np.zeros_like(x)
    q = np.zeros_like(x)
    for i in range(3):
        for j in range(3):
            ua = pow_u[i] * pow_a[j]
            cp, cq = _BETA_C[0, i, j], _BETA_C[1, i, j]
            p = p + ua * (cp[0] + lb * (cp[1] + lb * (cp[2] + lb * cp[3])))
            q = q + ua * (cq[0] + lb * (cq[1] + lb * (cq[2] + lb * cq[3])))
    approx = x * (digamma(total) - digamma(a)) / (total - a)
    return p / q * approx


def dirichlet_grad(x: np.ndarray, alpha: np.ndarray, total: np.ndarray) -> np.ndarray:
    """torch's ``dirichlet_grad_one``: ``-(dF / dalpha) / f / (1 - x)`` for ``x ~ Beta(alpha, total - alpha)``
    (Note [Implicit reparameterization]); float64 arrays of one shape."""
    beta = total - alpha
    boundary = total * x * (1 - x)
    near0 = (x <= 0.5) & (boundary < 2.5)
    near1 = ~near0 & (x >= 0.5) & (boundary < 0.75)
    mid = ~near0 & ~near1 & (alpha > 6) & (beta > 6)
    rest = ~near0 & ~near1 & ~mid
    out = np.zeros(x.shape)
    with np.errstate(all="ignore"):
        return _by_region(out, (
            (near0, lambda x, a, b, t: _beta_alpha_small(x, a, b)),
            (near1, lambda x, a, b, t: -_beta_beta_small(1 - x, b, a)),
            (mid, lambda x, a, b, t: _beta_alpha_mid(x, a, b)),
            (rest, lambda x, a, b, t: _beta_rational(x, a, t)),
        ), x, alpha, beta, total)
