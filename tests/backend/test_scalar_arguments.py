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
