"""Scalar arguments are converted as torch converts them (c10's checked_convert): a value that does not fit the
type the kernel converts it to raises torch's "value cannot be converted to type ... without overflow", never a
wrapped, truncated or imaginary-part-dropped result; complex Scalars meet torch's refusals (no ordering, no
clamp, no index_fill of a real tensor). Each case runs in torch and in strided (CPU values, Meta errors)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import strided as st

torch = pytest.importorskip("torch")

NAN, INF = float("nan"), float("inf")


def _t(m, dtype, n=3):
    return m.tensor([1, 2, 3][:n], dtype=getattr(m, dtype))


CASES = {
    "fill_": (lambda m, d, v: _t(m, d).fill_(v), {
        "int8": [1000, 127.5, -128.5, NAN, INF, 1 + 1j, 1 + 0j, 0.5], "uint8": [-1, -255, -256, 255.5, -0.5, 256],
        "int64": [NAN, 1e30, 9.223372036854775e18, 2 ** 63], "float16": [65504.0, 65519.0, 1e6, INF, NAN, 1j],
        "bfloat16": [3.39e38, -INF], "float32": [1e40, 2.5j, 1 + 0j, 3.4028234663852886e38], "bool": [2, NAN, 1j]}),
    "full": (lambda m, d, v: m.full((2,), v, dtype=getattr(m, d)), {
        "int8": [1000, 127.5, NAN], "uint8": [-1, -300], "float16": [70000.0], "float32": [1e40, 2.5j]}),
    "new_full": (lambda m, d, v: _t(m, d).new_full((2,), v), {"int64": [NAN, 1e30], "float16": [1e6]}),
    "full_like": (lambda m, d, v: m.full_like(_t(m, d), v), {"int8": [INF, -129], "float32": [1e40, 1j]}),
    "setitem slice": (lambda m, d, v: _t(m, d).__setitem__(slice(0, 2), v), {
        "int8": [1000, 127.5, NAN, 1 + 1j], "uint8": [-1, 256], "float16": [1e6, 1e40, 1j], "bfloat16": [1e39],
        "float32": [1e40, 2.5j], "bool": [2, 1j]}),
    "setitem int": (lambda m, d, v: _t(m, d).__setitem__(1, v), {"int8": [1000, NAN], "float16": [1e6, -1e9]}),
    "setitem mask": (lambda m, d, v: _t(m, d).__setitem__(m.tensor([True, False, True]), v), {
        "int8": [1000, -1000, 127.5, NAN], "uint8": [-1, 256], "float16": [1e6, 1j], "float32": [1e40]}),
    "threshold": (lambda m, d, v: m.nn.functional.threshold(_t(m, d), v, 0), {
        "int8": [1000, 1.5], "float32": [1e40, 2.0], "float16": [1e6]}),
    "threshold value": (lambda m, d, v: m.nn.functional.threshold(_t(m, d), 1, v), {
        "int8": [1000, 1.5, NAN], "float16": [1e6], "bool": [1]}),
    "pow": (lambda m, d, v: m.pow(_t(m, d), v), {
        "int8": [1000, 200, 2, 2.5], "uint8": [256], "float16": [70000.0, 65504.0, 1e5], "bfloat16": [1e39],
        "int64": [2 ** 63], "float32": [1e40]}),
    "pow_": (lambda m, d, v: _t(m, d).pow_(v), {"int8": [1000], "float16": [1e6]}),
    "lerp": (lambda m, d, v: m.lerp(_t(m, d), _t(m, d) * 2, v), {
        "float16": [1e40, 0.5], "float32": [1e40], "float64": [1e300]}),
    "lt": (lambda m, d, v: _t(m, d) < v, {"float32": [1j, 1 + 0j, 2.5], "int8": [1 + 1j], "bool": [1j]}),
    "ge": (lambda m, d, v: _t(m, d) >= v, {"float64": [2j]}),
    "eq": (lambda m, d, v: _t(m, d) == v, {"float32": [1j, 2 + 0j]}),
    "clamp": (lambda m, d, v: m.clamp(_t(m, d), min=v), {"float32": [2.5j], "int8": [1 + 1j, 1000]}),
    "clamp max": (lambda m, d, v: m.clamp(_t(m, d), max=v), {"float32": [2.5j, 1e40]}),
    "index_fill": (lambda m, d, v: _t(m, d).index_fill(0, m.tensor([1]), v), {
        "float32": [1j, 1 + 0j], "bool": [1j], "int8": [1000, 2.5]}),
    "masked_fill": (lambda m, d, v: _t(m, d).masked_fill(m.tensor([True, False, True]), v), {
        "float16": [-1e9, 65504.0, -INF], "int8": [NAN, 1000], "float32": [1j]}),
    "addcmul": (lambda m, d, v: m.addcmul(_t(m, d), _t(m, d), _t(m, d), value=v),
                {"float16": [1e6], "float32": [1e40]}),
    "addcdiv": (lambda m, d, v: m.addcdiv(_t(m, d), _t(m, d), _t(m, d), value=v), {"float16": [1e6]}),
    "where": (lambda m, d, v: m.where(_t(m, d) > 1, _t(m, d), v), {
        "float32": [1e40, 2.0], "float16": [1e40], "int8": [1000, 1.5], "float64": [1e300]}),
}


def _cases():
    for name, (_, values) in CASES.items():
        for d, vs in values.items():
            for v in vs:
                yield pytest.param(name, d, v, id=f"{name}-{d}-{v!r}")


def _run(m, name, d, v):
    """("ok", values) or (exception class name, message's first line)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = CASES[name][0](m, d, v)
        except (RuntimeError, NotImplementedError, TypeError) as e:
            return type(e).__name__, str(e).splitlines()[0]
    return "ok", None if r is None else r


@pytest.mark.parametrize("name,d,v", list(_cases()))
def test_scalar_argument_as_torch(name, d, v):
    want = _run(torch, name, d, v)
    got = _run(st, name, d, v)
    assert got[0] == want[0], (got, want)
    if want[0] != "ok":
        assert got[1] == want[1]
    elif want[1] is not None:
        w = want[1].numpy() if want[1].dtype != torch.bfloat16 else want[1].float().numpy()
        g = np.asarray(got[1]) if got[1].dtype is not st.bfloat16 else np.asarray(got[1].float())
        assert g.dtype == w.dtype or (g.dtype.kind == w.dtype.kind and g.dtype.itemsize == w.dtype.itemsize)
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("name,d,v", [c for c in _cases() if c.values[0] in ("fill_", "pow", "lt", "clamp")])
def test_meta_tensors_refuse_the_same_scalars(name, d, v):
    """The checks are the Meta functions': a meta tensor refuses what a CPU tensor refuses, before any data."""
    want = _run(st, name, d, v)
    if want[0] == "ok":
        return
    with _default_meta():
        got = _run(st, name, d, v)
    assert got[0] == want[0] and got[1].replace("_meta", "_cpu") == want[1]


class _default_meta:  # noqa: N801 - a context manager
    def __enter__(self):
        self.prev = st.get_default_device()
        st.set_default_device("meta")

    def __exit__(self, *exc):
        st.set_default_device(self.prev)


def test_half_setitem_saturates_as_torch():
    """torch's scalarToTensor: a half tensor takes an out-of-range Scalar through indexing as +-inf (an attention
    mask's -1e9), while fill_ / masked_fill refuse it."""
    x = st.zeros(4, dtype=st.float16)
    x[st.tensor([True, False, True, False])] = -1e9
    x[1:2] = 1e6
    assert x.tolist() == [-math.inf, math.inf, -math.inf, 0.0]
    with pytest.raises(RuntimeError, match=r"value cannot be converted to type c10::Half without overflow"):
        x.masked_fill(x == 0, -1e9)


_REFLECTED = {
    "True - x": lambda m, x: True - x, "300 - int8": lambda m, x: 300 - x.to(m.int8),
    "-2 / uint8": lambda m, x: -2 / x.abs().to(m.uint8), "3 / int": lambda m, x: 3 / x.to(m.int64),
    "300 // int8": lambda m, x: 300 // x.to(m.int8), "300 % int8": lambda m, x: 300 % x.to(m.int8),
    "-2 // uint8": lambda m, x: -2 // x.abs().to(m.uint8), "2.5 - int": lambda m, x: 2.5 - x.to(m.int32),
    "1j - int8": lambda m, x: 1j - x.to(m.int8), "(1+1j) / complex": lambda m, x: (1 + 1j) / (x * 1j),
    "x - True": lambda m, x: x - True, "2 ** x": lambda m, x: 2 ** x.to(m.int16),
    "1e6 / half": lambda m, x: 1e6 / x.to(m.float16), "5 - bf16": lambda m, x: 5 - x.to(m.bfloat16),
}


@pytest.mark.parametrize("name", list(_REFLECTED))
def test_reflected_operators_as_torch(name):
    """A Python number on the left: torch's wrapped Scalar, cast (an int wraps) rather than checked, a bool
    refused by sub, and ``number / tensor`` as torch's ``reciprocal() * number`` (an int tensor divides as floats;
    -2 / uint8 is not 254 / uint8)."""
    want = _run_ops(torch, _REFLECTED[name], torch.tensor([1.0, -2.0, 3.0, 0.0]))
    got = _run_ops(st, _REFLECTED[name], st.tensor([1.0, -2.0, 3.0, 0.0]))
    _same_outcome(got, want)


_TENSOR_DATA = [(1e30, "int64"), (300.0, "int8"), (127.5, "int8"), (-128.5, "int8"), ([1e39], "float32"),
                (NAN, "bool"), (1j, "bool"), ([1.0, INF], "int32"), ([2.5, 1j], "float64"), (70000.0, "float16"),
                (-1.0, "uint8"), (-1, "uint8"), (256, "uint8"), (300, "int8"), (NAN, "int64")]


@pytest.mark.parametrize("data,d", _TENSOR_DATA, ids=[f"{v!r}-{d}" for v, d in _TENSOR_DATA])
def test_tensor_from_numbers_with_a_dtype_as_torch(data, d):
    """strided.tensor(data, dtype=...) converts Python numbers as torch.tensor: ints and floats checked against
    an integer dtype (nan into int64 was INT64_MIN, 1.5j into float32 was 0), floats overflowing to inf in a
    floating one."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NumPy overflow or complex warnings either
        _same_outcome(_run_ops(st, lambda m, x: m.tensor(data, dtype=getattr(m, d)), None),
                      _run_ops(torch, lambda m, x: m.tensor(data, dtype=getattr(m, d)), None))


_OVERLOADS = {
    "copysign scalar": lambda m, x: m.copysign(x, -1), "copysign -0.0": lambda m, x: m.copysign(x.to(m.int64), -0.0),
    "copysign method": lambda m, x: x.copysign(2.5), "copysign_": lambda m, x: x.clone().copysign_(-1),
    "xlogy other": lambda m, x: m.xlogy(x, 2), "xlogy self": lambda m, x: m.xlogy(2, x),
    "xlogy int other": lambda m, x: m.xlogy(x.to(m.int64), 3), "xlogy half": lambda m, x: m.xlogy(x.half(), 0.5),
    "float_power complex exponent": lambda m, x: m.float_power(x, 1j),
    "float_power complex base": lambda m, x: m.float_power(x * (1 + 1j), 2),
    "float_power scalar complex": lambda m, x: m.float_power(2, x * 1j),
    "float_power_ complex64": lambda m, x: (x * 1j).float_power_(2),
    "float_power_ double by complex": lambda m, x: x.double().float_power_(1j),
    "float_power_ complex128": lambda m, x: (x.double() * 1j).float_power_(2),
    "true_divide complex": lambda m, x: m.true_divide(x * (1 - 1j), 2),
}


@pytest.mark.parametrize("name", list(_OVERLOADS))
def test_scalar_overloads_and_complex_float_power_as_torch(name):
    """torch's copysign.Scalar / xlogy.Scalar_Other / Scalar_Self overloads, float_power in complex128 when an
    operand is complex, true_divide of complex tensors (div's alias)."""
    _same_outcome(_run_ops(st, _OVERLOADS[name], st.tensor([1.0, -2.0, 3.0, 0.5])),
                  _run_ops(torch, _OVERLOADS[name], torch.tensor([1.0, -2.0, 3.0, 0.5])))


def _run_ops(m, fn, x):
    with np.errstate(all="ignore"):
        try:
            return "ok", fn(m, x)
        except (RuntimeError, NotImplementedError, TypeError) as e:
            return type(e).__name__, str(e).splitlines()[0]


def _same_outcome(got, want):
    assert got[0] == want[0], (got, want)
    if want[0] != "ok":
        assert got[1] == want[1]
        return
    g, w = got[1], want[1]
    assert str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1]
    wn = (w.float() if w.dtype == torch.bfloat16 else w).numpy()
    gn = np.asarray(g.float() if g.dtype is st.bfloat16 else g)
    np.testing.assert_allclose(gn, wn, rtol=1e-6, equal_nan=True)
