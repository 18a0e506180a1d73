"""The Hurwitz zeta function ``zeta(x, q) = sum_k (q + k)**-x`` of float64 arrays, as torch's ``zeta``
(Cephes; ATen/native/Math.h): ``torch.special.zeta`` and ``polygamma(n >= 2)``.

Note [Hurwitz zeta far below zero]
Cephes sums terms directly until ``a = q + k`` passes 9 (at least nine terms), stopping early when a term
falls below machine epsilon of the sum, then finishes with Euler-Maclaurin (twelve terms). ``x == 1`` is a
pole (+inf), ``x < 1`` NaN; a non-positive integer ``q`` is a pole (+inf), and a negative ``q`` gives NaN
unless ``x`` is an integer. For ``q < 0`` the direct sum takes ``|q|`` steps: torch's kernel loops for
minutes at ``q = -1e9 + 0.5`` and forever far beyond, while the cancelling terms lose accuracy
(``polygamma(2, -1e6 + 0.5)`` is 1.5e-3 off). Below ``q = -64`` strided splits the sum at zero instead:
with ``m = ceil(-q)`` negative terms ``-(r + j)``, ``j < m``, ``r = 1 - m - q`` in (0, 1) (exact),

    zeta(x, q) = ((-1)**x zeta(x, r) + zeta(x, q + m)) - (-1)**x zeta(x, 1 - q),

three sums at positive arguments, each a few dozen steps; the first two, of order one, are added first (at
``r = 1/2`` and odd ``x`` they cancel exactly, leaving the small third). Above -64 the direct sum is torch's, term for
term. The CUDA device function ``ew_zeta`` (kernels/elementwise.cuh) is the same algorithm.
"""

from __future__ import annotations

import numpy as np

__all__ = ["zeta"]

_MACHEP = 1.11022302462515654042e-16
_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
           -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
           1.8152105401943546773e17, -7.1661652561756670113e18)  # (2k)! / B_2k
_FAR_BELOW_ZERO = -64.0


def zeta(x, q) -> np.ndarray:
    """Hurwitz zeta ``sum_k (q + k)**-x`` of float64 arrays (or floats) ``x`` and ``q``, broadcast
    (Note [Hurwitz zeta far below zero])."""
    x, q = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(q, dtype=np.float64))
    out = np.empty(x.shape)
    flat, xf, qf = out.reshape(-1), x.reshape(-1), q.reshape(-1)
    with np.errstate(all="ignore"):
        flat[:] = np.where(xf == 1, np.inf, np.nan)  # x == 1: pole; x < 1: NaN
        live = ~(xf <= 1)
        q_pole = (qf <= 0) & (qf == np.floor(qf))
        flat[live & q_pole] = np.inf
        live &= ~q_pole
        negative_q = live & (qf <= 0)
        flat[negative_q & (xf != np.floor(xf))] = np.nan  # NaN too: NaN != NaN
        live &= ~(negative_q & (xf != np.floor(xf)))
        far = live & (qf < _FAR_BELOW_ZERO)
        near = np.flatnonzero(live & ~far)
        flat[near] = _cephes(xf[near], qf[near])
        far = np.flatnonzero(far)
        if far.size:
            xs, qs = xf[far], qf[far]
            m = np.ceil(-qs)
            r = 1 - m - qs
            sign = np.where(np.fmod(xs, 2) == 0, 1.0, -1.0)
            sums = _cephes(np.concatenate([xs, xs, xs]), np.concatenate([r, 1 - qs, qs + m])).reshape(3, -1)
            far_sums = (sign * sums[0] + sums[2]) - sign * sums[1]  # the two O(1) sums first
            # a huge even x overflows a term near zero to +inf (torch's direct sum: +inf), not inf - inf
            overflow = (sign > 0) & (np.isinf(sums[0]) | np.isinf(sums[2]))
            flat[far] = np.where(overflow, np.inf, far_sums)
    return out


def _cephes(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Cephes' sum at 1-d ``x`` and ``q`` that passed the domain checks: direct, then Euler-Maclaurin."""
    out = np.empty(x.shape)
    idx = np.arange(x.size)
    a = q.copy()
    s = a**-x
    b = np.zeros_like(a)
    tails = []  # (idx, a, b, s) of the elements that go on to Euler-Maclaurin
    i = 0
    while idx.size:  # the direct sum: while i < 9 or a <= 9, unless a term is below epsilon
        if i >= 9:
            leave = ~(a <= 9)
            if leave.any():
                tails.append((idx[leave], a[leave], b[leave], s[leave]))
                keep = ~leave
                idx, a, b, s = idx[keep], a[keep], b[keep], s[keep]
                if not idx.size:
                    break
        i += 1
        a += 1
        b = a ** -x[idx]
        s += b
        done = (-_MACHEP * s < b) & (b < _MACHEP * s)
        if done.any():
            out[idx[done]] = s[done]
            keep = ~done
            idx, a, b, s = idx[keep], a[keep], b[keep], s[keep]
    for idx, w, b, s in tails:
        out[idx] = _euler_maclaurin(x[idx], w, b, s)
    return out


def _euler_maclaurin(x: np.ndarray, w: np.ndarray, b: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Cephes' tail of the Hurwitz zeta sum from ``w`` on (``b = w**-x``, ``s`` the sum so far)."""
    s = s + b * w / (x - 1) - 0.5 * b
    a = np.ones_like(w)
    live = np.ones(w.shape, dtype=bool)
    k = 0.0
    for coefficient in _ZETA_A:
        a *= x + k
        b = b / w
        t = a * b / coefficient
        total = s + t
        s = np.where(live, total, s)
        live &= ~(np.abs(t / total) < _MACHEP)
        if not live.any():
            break
        k += 1
        a *= x + k
        b = b / w
        k += 1
    return s
