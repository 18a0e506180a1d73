"""``multinomial``: draws category indices from rows of non-negative weights, composed of operators.

Note [multinomial]
With replacement, each draw is the first category whose running sum (``cumsum``) exceeds a uniform
draw scaled to the row's total (found by counting the sums at or below it, a few draws at a time so
the comparison table stays under ``_CHUNK`` elements). Without replacement, the draws are the ``num_samples`` largest
``p / E`` with ``E ~ Exponential(1)`` (the exponential form of the Gumbel top-k trick, which samples
without replacement proportionally to the weights). Both run on every backend with the caller's
Generator; on the CPU the draws are torch's own (``_torchs_cpu_draws``: the same values after the same seed, Note
[CPU random streams]). The weights are validated first, with torch's errors, by the ``_check_index_range`` op on two
0/1 flags: the CPU raises at once; on CUDA a kernel checks them and the error is raised at the next
synchronizing call (Note [Deferred index errors]), so multinomial never synchronizes and can be captured in a
CUDA graph (torch's kernel device-asserts instead).
"""

from __future__ import annotations

from ... import dtypes as dt
from ...dispatch.library import kernel
from .. import bound as ops

__all__ = []

_CHUNK = 1 << 24  # comparisons per step of the with-replacement draw (its temporary: 16 MiB of bools)


def _check(self, num_samples: int, replacement: bool) -> None:
    if type(num_samples) is not int:
        raise TypeError(f"multinomial(): argument 'num_samples' must be int, not {type(num_samples).__name__}")
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {self.dtype.name}")
    if self.dim() not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    k = self._sizes[-1]
    if not replacement and num_samples > k:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if k > 1 << 24:
        raise RuntimeError("number of categories cannot exceed 2^24")


def _check_entries_as_torchs_cpu_kernel(p) -> None:
    """torch's CPU draw with replacement checks each entry in turn, ``>= 0`` then finite: the first bad one names
    the refusal (a NaN fails the first)."""
    import numpy as np

    values = np.asarray(p.detach().numpy(), dtype=np.float64).ravel()
    bad = np.flatnonzero(~((values >= 0) & np.isfinite(values)))
    if bad.size:
        v = values[bad[0]]
        raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)" if not v >= 0 else
                           "invalid multinomial distribution (encountering probability entry = infinity or NaN)")


@kernel("CompositeImplicitAutograd")
def multinomial(self, num_samples, replacement=False, *, generator=None):
    _check(self, num_samples, replacement)
    p = self if self.dim() == 2 else ops.unsqueeze(self, 0)
    if p.numel() == 0 or self.device.type == "meta":  # meta: shapes only, no values to check or draw
        out = ops.empty((p._sizes[0], num_samples), dtype=dt.int64, device=self.device)
        return out if self.dim() == 2 else ops.squeeze(out, 0)
    if self.dtype.itemsize < 4:
        p = ops._to_copy(p, dtype=dt.float32)
    if p.device.type == "cpu" and replacement and num_samples > 1:
        _check_entries_as_torchs_cpu_kernel(p)  # torch's per-entry words; the flag below would find nothing more
    else:  # the two checks as 0/1 flags that must be 0: the CPU raises at once, CUDA reports without a sync
        bad = ops.any(ops.logical_or(ops.logical_not(ops.isfinite(p)), ops.lt(p, 0)))
        ops._check_index_range(ops._to_copy(bad, dtype=dt.int64), 0, 1, "probability tensor contains either `inf`, "
                               "`nan` or element < 0", "multinomial", False)
    empty_row = ops.le(ops.amin(ops.sum(p, [1]), [0]), 0)
    ops._check_index_range(ops._to_copy(empty_row, dtype=dt.int64), 0, 1, "invalid multinomial distribution (sum "
                           "of probabilities <= 0)", "multinomial", False)
    if p.device.type == "cpu":
        out = _torchs_cpu_draws(p, num_samples, replacement, generator)
        return out if self.dim() == 2 else ops.squeeze(out, 0)
    rows = p._sizes[0]
    u = ops.rand((rows, num_samples), generator=generator, dtype=p.dtype, device=p.device)
    if replacement or num_samples == 1:
        cdf = ops.cumsum(p, 1)
        scaled = ops.mul(u, ops.unsqueeze(ops.select(cdf, 1, -1), 1))
        # (rows, samples, categories) comparisons, in chunks of samples of at most _CHUNK elements
        step = max(1, _CHUNK // (rows * p._sizes[1]))
        parts = []
        for s in range(0, num_samples, step):
            chunk = ops.narrow(scaled, 1, s, min(step, num_samples - s))
            parts.append(ops.sum(ops.le(ops.unsqueeze(cdf, 1), ops.unsqueeze(chunk, 2)), [2]))
        out = parts[0] if len(parts) == 1 else ops.cat(parts, 1)
        out = ops.clamp(out, None, p._sizes[1] - 1)  # a zero-weight tail never absorbs rounding
    else:
        e = ops.rand(p._sizes, generator=generator, dtype=p.dtype, device=p.device)
        keys = ops.div(p, ops.neg(ops.log(ops.add(ops.neg(e), 1.0))))  # Exponential(1) from 1 - U in (0, 1]
        out = ops.topk(keys, num_samples, 1).indices
    return out if self.dim() == 2 else ops.squeeze(out, 0)


def _torchs_cpu_draws(p, num_samples: int, replacement: bool, generator):
    """torch's CPU multinomial over its stream (Note [CPU random streams]): without replacement (or one sample) the
    largest ``p / q`` with ``q`` an ``exponential_(1)`` fill shaped as ``p``; with replacement, per row the first
    category whose normalized running sum (in ``p``'s dtype, the last set to 1) reaches a float64 uniform draw."""
    if not replacement or num_samples == 1:
        q = ops.exponential_(ops.empty_like(p), 1.0, generator=generator)
        keys = ops.div(p, q)
        return ops.argmax(keys, 1, True) if num_samples == 1 else ops.topk(keys, num_samples, 1).indices
    cdf = ops.cumsum(p, 1)
    cdf = ops.div(cdf, ops.narrow(cdf, 1, p._sizes[1] - 1, 1))
    ops.narrow(cdf, 1, p._sizes[1] - 1, 1).fill_(1)
    u = ops.empty((p._sizes[0], num_samples), dtype=dt.float64, device=p.device).uniform_(0, 1, generator=generator)
    return ops.searchsorted(ops._to_copy(cdf, dtype=dt.float64), u)
