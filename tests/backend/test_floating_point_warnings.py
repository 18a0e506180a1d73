"""torch never warns about an overflow, a division by zero or a NaN: strided's CPU kernels run with NumPy's
floating-point warnings off (Note [Backend kernel wrappers]), and a kernel's narrowing store is quiet (Note [Casts
as torch rounds them]). Found by refilling every OpInfo sample with extreme values: 76 ops warned before."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import strided as st

F = st.nn.functional
BIG = [3e38, -3e38, math.inf, -math.inf, math.nan, 0.0, 1.0, 2.0]

CASES = {
    "sum": lambda d: st.tensor(BIG, dtype=d).sum(),
    "mean": lambda d: st.tensor(BIG, dtype=d).reshape(2, 4).mean(1),
    "prod": lambda d: st.tensor(BIG, dtype=d).prod(),
    "var": lambda d: st.tensor([3e38, -3e38], dtype=d).var(),
    "std_mean": lambda d: st.std_mean(st.tensor(BIG, dtype=d)),
    "cumsum": lambda d: st.tensor(BIG, dtype=d).cumsum(0),
    "matmul": lambda d: st.full((2, 2), 6e4, dtype=d) @ st.full((2, 2), 6e4, dtype=d),
    "linear": lambda d: F.linear(st.full((2, 2), 6e4, dtype=d), st.full((2, 2), 6e4, dtype=d)),
    "layer_norm": lambda d: F.layer_norm(st.tensor(BIG, dtype=d).reshape(2, 4), (4,)),
    "batch_norm": lambda d: F.batch_norm(st.tensor(BIG, dtype=d).reshape(4, 2), None, None, training=True),
    "cross_entropy": lambda d: F.cross_entropy(st.tensor(BIG, dtype=d).reshape(2, 4), st.tensor([0, 3])),
    "index_add": lambda d: st.zeros(2, dtype=d).index_add(0, st.tensor([0, 0]), st.tensor([3e38, 3e38], dtype=d),
                                                          alpha=2),
    "scatter_add": lambda d: st.zeros(2, dtype=d).scatter_add(0, st.tensor([0, 0]),
                                                              st.tensor([math.inf, -math.inf], dtype=d)),
    "norm": lambda d: st.tensor(BIG[:2], dtype=d).norm(),
    "division": lambda d: st.tensor([1.0, 0.0, -1.0], dtype=d) / 0,
    "exp": lambda d: st.tensor([1e4], dtype=d).exp(),
}


@pytest.mark.parametrize("dtype", [st.float32, st.float16, st.bfloat16, st.float64], ids=lambda d: d.name)
@pytest.mark.parametrize("name", list(CASES))
def test_no_numpy_warning(name, dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        CASES[name](dtype)


def test_float16_overflow_is_inf_silently():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert st.full((4,), 60000.0, dtype=st.float16).sum().item() == math.inf
        assert (st.full((2, 2), 300.0, dtype=st.float16) @ st.full((2, 2), 300.0, dtype=st.float16))[0, 0].item() \
            == math.inf


def test_a_library_override_keeps_numpys_warnings():
    # only strided's own kernels are wrapped: a user's Python kernel sees NumPy's error state as the user set it
    def noisy_neg(x):
        np.float32(3e38) * np.float32(10)  # overflows: NumPy warns
        return st.zeros_like(x)

    lib = st.library.Library("aten", "IMPL")
    try:
        lib.impl("neg", noisy_neg, "CPU")
        with pytest.warns(RuntimeWarning, match="overflow"):
            st.neg(st.ones(2))
    finally:
        lib._destroy()
    assert st.neg(st.ones(2)).tolist() == [-1.0, -1.0]
