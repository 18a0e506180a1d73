"""CPU cumsum / cumprod: torch's accumulation (float32 and complex64 in double precision, each result rounded once;
half types in float32) and Note [Scans by slices] (wide steps scanned slice by slice) give torch's bits."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(9)
SHAPES = [((300, 700), 0), ((300, 700), 1), ((3, 40, 600), 1), ((2, 9, 8, 64), 1), ((50,), 0), ((600, 3), 0)]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "complex64", "int32", "int64"])
@pytest.mark.parametrize("case", range(len(SHAPES)))
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_scans_are_torchs_bit_for_bit(dtype, case, op):
    shape, dim = SHAPES[case]
    # float32 data: torch rounds float64 to a half type through float32 (twice), strided's cast once (not done)
    x = (RNG.standard_normal(shape) * (1.0 if op == "cumprod" else 3.0)).astype(np.float32)
    if dtype == "complex64":
        x = x + 1j * RNG.standard_normal(shape).astype(np.float32)
    if dtype.startswith("int"):
        x = RNG.integers(-3, 4, shape)
    s = getattr(st, op)(st.tensor(x).to(getattr(st, dtype)), dim)
    t = getattr(torch, op)(torch.tensor(x).to(getattr(torch, dtype)), dim)
    assert s.dtype.name == str(t.dtype).split(".")[-1]
    got, want = (s.float(), t.float()) if dtype == "bfloat16" else (s, t)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
