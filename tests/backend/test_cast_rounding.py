"""Casts round as torch's (Note [Casts as torch rounds them] in ``strided/backends/cpu/common.py``): a double reaches
float16 and bfloat16 through float32, rounding twice, on every backend and by every path (``.to``, ``copy_``,
``tensor(..., dtype=)``, ``full`` / ``fill_`` with a Python float); and a cast never warns where torch's does not."""

from __future__ import annotations

import warnings

import ml_dtypes
import numpy as np
import pytest

import strided as st
from strided.testing import available_devices

DEVICES = [d for d in available_devices() if d != "meta"]
_BASES = np.array([1.0, 1.5, -3.0, 96.0, 0.75, -1000.0, 2.0 ** -12, 40960.0])


def _split_cases(precision: int) -> np.ndarray:
    """Doubles just past the half-way point above each base (its last bit is even) of a format with ``precision``
    significant bits: float32 rounds them onto the half-way point, whose tie goes to the base, while one
    rounding goes past it."""
    _, e = np.frexp(_BASES)
    ulp = np.ldexp(1.0, e - precision)
    return _BASES + np.sign(_BASES) * (ulp / 2 + ulp * 2.0 ** -20)


_ORDINARY = [0.0, -0.0, 1.0, 65504.0, 1e-8, np.inf, -np.inf, 3.14159]
CASES = {"float16": np.concatenate([_split_cases(11), _ORDINARY]),
         "bfloat16": np.concatenate([_split_cases(8), _ORDINARY])}
NP_DTYPES = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16}
_WIDE = np.random.default_rng(7).standard_normal(100_000) * np.repeat([1e-6, 1e-3, 1.0, 1e2, 1e4], 20_000)


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_the_cases_split_single_and_double_rounding(name):
    # the tests below could not fail without such values
    x = CASES[name][:len(_BASES)]
    twice = x.astype(np.float32).astype(NP_DTYPES[name]).astype(np.float64)
    np.testing.assert_array_equal(twice, _BASES)
    m, e = np.frexp(x)
    precision = 11 if name == "float16" else 8
    once = np.ldexp(np.round(m * 2.0 ** precision), e - precision)
    assert (once != twice).all()


def _expected(x, np_dtype):
    return x.astype(np.float32).astype(np_dtype).astype(np.float64)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_double_to_half_rounds_through_float(device, name):
    d = getattr(st, name)
    cases = CASES[name]
    want = _expected(cases, NP_DTYPES[name])
    src = st.tensor(cases, dtype=st.float64, device=device)
    got = {
        "to": src.to(d),
        "copy_": st.empty(len(cases), dtype=d, device=device).copy_(src),
        "tensor(dtype=)": st.tensor(cases, dtype=d, device=device),
        "tensor(list, dtype=)": st.tensor(cases.tolist(), dtype=d, device=device),
        "cpu double to device": st.tensor(cases, dtype=st.float64).to(device=device, dtype=d),
        "strided source": st.stack([src, src], 1)[:, 0].to(d),
    }
    for path, t in got.items():
        np.testing.assert_array_equal(t.to(st.float64).cpu().numpy(), want, err_msg=f"{name} by {path} on {device}")
    for v, w in zip(cases.tolist(), want.tolist()):
        assert st.full((2,), v, dtype=d, device=device).tolist() == [w, w], (name, v)
        assert st.zeros(1, dtype=d, device=device).fill_(v).item() == w, (name, v)


@pytest.mark.parametrize("device", DEVICES)
def test_narrowing_casts_do_not_warn(device):
    values = st.tensor([np.nan, np.inf, -np.inf, 1e300, -1e30, 3.5], dtype=st.float64, device=device)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for d in (st.int64, st.int32, st.int16, st.int8, st.uint8, st.float32, st.float16, st.bfloat16):
            values.to(d).cpu()
        st.tensor([1e10, -1e10], dtype=st.float16, device=device)
        st.tensor([1e10], device=device).to(st.int64).cpu()
    assert values.to(st.float16).tolist()[1:5] == [np.inf, -np.inf, np.inf, -np.inf]
    assert values.to(st.float32).tolist()[3] == np.inf


def test_double_to_half_against_torch():
    torch = pytest.importorskip("torch")
    x = np.concatenate([_WIDE, CASES["float16"], CASES["bfloat16"]])
    for name in ("float16", "bfloat16"):
        want = torch.from_numpy(x).to(getattr(torch, name)).double().numpy()
        for device in DEVICES:
            got = st.tensor(x, device=device).to(getattr(st, name)).double().cpu().numpy()
            np.testing.assert_array_equal(got, want, err_msg=f"{name} on {device}")
