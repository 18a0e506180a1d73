"""strided.testing.make_tensor against torch.testing.make_tensor: shapes, strides and offsets, value ranges per
dtype, exclude_zero, requires_grad, and the errors in torch's words (values differ: each library's own RNG)."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
from strided.testing import make_tensor

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "complex64", "complex128"]


def _values(t):
    a = t.detach().cpu()
    if a.dtype in (st.bfloat16, st.float16):
        a = a.float()
    return np.asarray(a.numpy())


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("layout", [{}, {"noncontiguous": True}, {"memory_format": "channels_last"}])
def test_layout_and_range_as_torch(name, layout):
    kw = dict(layout)
    if "memory_format" in kw:
        shape = (2, 3, 4, 5)
        ours = make_tensor(shape, dtype=getattr(st, name), device="cpu", memory_format=st.channels_last)
        theirs = torch.testing.make_tensor(shape, dtype=getattr(torch, name), device="cpu",
                                           memory_format=torch.channels_last)
    else:
        ours = make_tensor(6, 7, dtype=getattr(st, name), device="cpu", exclude_zero=True, **kw)
        theirs = torch.testing.make_tensor(6, 7, dtype=getattr(torch, name), device="cpu", exclude_zero=True, **kw)
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.stride() == theirs.stride()
    assert ours.storage_offset() == theirs.storage_offset() and ours.is_contiguous() == theirs.is_contiguous()
    v = _values(ours)
    if name == "bool":
        assert v.dtype == np.bool_
    elif name.startswith(("uint", "int")):
        assert v.min() >= (0 if name == "uint8" else -9) and v.max() < 10
        if "memory_format" not in kw:
            assert (v != 0).all()
    else:
        parts = [v.real, v.imag] if name.startswith("complex") else [v]
        assert all(p.min() >= -9 and p.max() <= 9 for p in parts)
        if "memory_format" not in kw:
            assert (v != 0).all()


def test_bounds_requires_grad_and_errors_as_torch():
    t = make_tensor((100,), dtype=st.float32, device="cpu", low=2, high=3, requires_grad=True)
    assert t.requires_grad and 2 <= float(t.min()) and float(t.max()) < 3
    big = make_tensor(50, dtype=st.float64, device="cpu", low=-1e308, high=1e308)  # beyond uniform_'s span: halved
    assert np.isfinite(_values(big)).all()
    cases = [
        (dict(dtype="float32", low=3, high=2), ValueError, "`low` must be less than `high`, but got 3 >= 2"),
        (dict(dtype="uint8", low=-10, high=-1), ValueError, r"The value interval specified by `low` and `high` is "
                                                             r"\[-10, -1\), but"),
        (dict(dtype="float32", low=float("nan")), ValueError, "`low` and `high` cannot be NaN"),
        (dict(dtype="int32", requires_grad=True), ValueError,
         "`requires_grad=True` is not supported for boolean and integral dtypes"),
        (dict(dtype="float32", noncontiguous=True, memory_format="channels_last"), ValueError,
         "The parameters `noncontiguous` and `memory_format` are mutually exclusive"),
    ]
    for kw, exc, words in cases:
        name = kw.pop("dtype")
        for lib, fn in ((st, make_tensor), (torch, torch.testing.make_tensor)):
            args = dict(kw)
            if "memory_format" in args:
                args["memory_format"] = lib.channels_last
            with pytest.raises(exc, match=words):
                fn(2, 3, 4, 5, dtype=getattr(lib, name), device="cpu", **args)


def test_finfo_of_complex_is_its_real_parts():
    assert st.finfo(st.complex64).dtype == torch.finfo(torch.complex64).dtype == "float32"
    assert st.finfo(st.complex128).eps == torch.finfo(torch.complex128).eps


@pytest.mark.skipif(not st.cuda.is_available(), reason="no CUDA device")
@pytest.mark.parametrize("name", ["bool", "int64", "bfloat16", "float32", "complex64"])
def test_make_tensor_on_cuda(name):
    t = make_tensor(5, 6, dtype=getattr(st, name), device="cuda", noncontiguous=True, exclude_zero=True)
    assert t.device.type == "cuda" and not t.is_contiguous() and tuple(t.shape) == (5, 6)
    v = _values(t)
    if name != "bool":
        assert (v != 0).all()
