"""OpInfos: ``_addmm_activation`` (addmm + relu / gelu, one cuBLASLt call with an epilogue on CUDA).

Note [gelu in _addmm_activation]
torch's CPU kernel applies exact gelu; its CUDA kernel uses cuBLASLt's GELU epilogue, the tanh
approximation (|difference| < 5e-4).  strided does the same, so the gelu OpInfo compares CUDA
with CPU at an absolute tolerance of 1e-3 for fp32/fp64 (the relu OpInfo keeps the default
tolerances).  Integer dtypes: relu only (gelu raises ``"GeluKernelImpl" not implemented`` on
CPU); CUDA raises for them, as torch (``"addmm_cuda" not implemented for 'Long'``).
"""

from __future__ import annotations

import math

import numpy as np

from ... import dtypes as dt
from ..opinfo import FLOATING, INTEGRAL, OpInfo, SampleInput
from .linalg import GEMM_TOL, _addmm_errors, _addmm_ref, _maker
from .pointwise_samples import out_variant, tensor_of


def _samples(use_gelu):
    def samples(dtype, rng):
        a = _maker(dtype, rng)
        kw = {"use_gelu": True} if use_gelu else {}
        yield SampleInput((a(5), a(3, 4), a(4, 5)), dict(kw), "bias row (fused epilogue)")
        yield SampleInput((a(5), a(3, 4).t().contiguous().t(), a(5, 4).t()), dict(kw), "bias, transposed operands")
        yield SampleInput((a(3, 5), a(3, 4, noncontiguous=True), a(4, 5)), dict(kw), "full self, noncontiguous")
        yield SampleInput((a(3, 1), a(3, 4), a(4, 5)), dict(kw), "broadcast column")
        yield SampleInput((a(), a(3, 4), a(4, 5)), dict(kw), "0-dim self")
        yield SampleInput((a(5), a(3, 4), a(4, 5)), {**kw, "beta": 2, "alpha": 3}, "bias row, beta=2 alpha=3")
        yield SampleInput((a(2, 3), a(2, 0), a(0, 3)), dict(kw), "zero inner dim")
        yield SampleInput((a(0, 3), a(0, 4), a(4, 3)), dict(kw), "zero rows")
        if dtype.is_floating_point:
            nan = tensor_of(np.full((3, 5), math.nan), dtype)
            yield SampleInput((nan, a(3, 4), a(4, 5)), {**kw, "beta": 0}, "beta=0 ignores NaN in self")
            yield SampleInput((a(3, 5), a(3, 4), a(4, 5)), {**kw, "beta": 0.5, "alpha": -1.5}, "beta, alpha")

    return samples


def _gelu(x):
    x = np.asarray(x, dtype=np.float64)
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2))) if x.size else x


def _ref(self, mat1, mat2, *, beta=1, alpha=1, use_gelu=False):
    r = np.asarray(_addmm_ref(self, mat1, mat2, beta=beta, alpha=alpha))
    if use_gelu:
        return _gelu(r)
    return np.maximum(r, r.dtype.type(0))


_GELU_TOL = {dt.float32: (1e-5, 1e-3), dt.float64: (1e-7, 1e-3), dt.float16: (2e-3, 2e-3),
             dt.bfloat16: (1.6e-2, 2e-2)}

relu = OpInfo("_addmm_activation", _samples(False), ref=_ref, errors=_addmm_errors, dtypes=FLOATING + INTEGRAL,
              tolerances=GEMM_TOL)
gelu = OpInfo("_addmm_activation", _samples(True), ref=_ref, dtypes=FLOATING, tolerances=_GELU_TOL)

OPS = [relu, gelu, out_variant(relu, "_addmm_activation.out")]
