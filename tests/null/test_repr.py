"""``repr(tensor)`` in torch's format: expected strings written from torch's output, and, when torch
is installed, the same tensors built in both libraries compared directly.
"""

from __future__ import annotations

import importlib.util
import re

import numpy as np
import pytest

import strided as st

HAS_TORCH = importlib.util.find_spec("torch") is not None


def _torch_repr(t) -> str:
    return repr(t).replace("torch.", "strided.")


def _unwrapped(text: str) -> str:
    """Suffixes joined on one line: "strided." is longer than "torch.", so near ``linewidth`` the two
    libraries may wrap a suffix at different places (the wrap rule itself is checked in CASES)."""
    return re.sub(r",\n +(?=(dtype|device|size|requires_grad)=)", ", ", text)


# (name, builder taking the library module, expected repr). Builders use only the API both share.
CASES = [
    ("float", lambda m: m.tensor([1.0, 2.0, 3.0]), "tensor([1., 2., 3.])"),
    ("int 2-d", lambda m: m.tensor([[1, 2], [3, 4]]), "tensor([[1, 2],\n        [3, 4]])"),
    ("fractions", lambda m: m.tensor([1.5, -2.25, 3.125]), "tensor([ 1.5000, -2.2500,  3.1250])"),
    ("sci: tiny", lambda m: m.tensor([1e-5, 1.0]), "tensor([1.0000e-05, 1.0000e+00])"),
    ("sci: huge", lambda m: m.tensor([1e9, 1.0]), "tensor([1.0000e+09, 1.0000e+00])"),
    ("sci: integral ratio", lambda m: m.tensor([1.0, 10000.0]), "tensor([1.0000e+00, 1.0000e+04])"),
    (
        "nan/inf integral",
        lambda m: m.tensor([float("nan"), float("inf"), -float("inf"), 1.0]),
        "tensor([nan, inf, -inf, 1.])",
    ),
    ("nan fraction", lambda m: m.tensor([float("nan"), 1.5]), "tensor([   nan, 1.5000])"),
    ("zeros", lambda m: m.zeros(3), "tensor([0., 0., 0.])"),
    ("bool", lambda m: m.tensor([True, False]), "tensor([ True, False])"),
    ("0-dim float", lambda m: m.tensor(3.5), "tensor(3.5000)"),
    ("0-dim int", lambda m: m.tensor(7), "tensor(7)"),
    ("float64", lambda m: m.tensor([1.0, 2.0], dtype=m.float64), "tensor([1., 2.], dtype=strided.float64)"),
    ("int32", lambda m: m.tensor([1, 2], dtype=m.int32), "tensor([1, 2], dtype=strided.int32)"),
    (
        "float16",
        lambda m: m.tensor([0.1, 2.0], dtype=m.float16),
        "tensor([0.1000, 2.0000], dtype=strided.float16)",
    ),
    (
        "bfloat16",
        lambda m: m.tensor([0.1, 2.0], dtype=m.bfloat16),
        "tensor([0.1001, 2.0000], dtype=strided.bfloat16)",
    ),
    (
        "requires_grad",
        lambda m: m.tensor([1.0, 2.0], requires_grad=True),
        "tensor([1., 2.], requires_grad=True)",
    ),
    ("negative ints", lambda m: m.tensor([-100, 5]), "tensor([-100,    5])"),
    (
        "3-d",
        lambda m: m.tensor([[[1, 2], [3, 4]], [[5, 6], [7, 8]]]),
        "tensor([[[1, 2],\n         [3, 4]],\n\n        [[5, 6],\n         [7, 8]]])",
    ),
    (
        "transposed",
        lambda m: m.tensor([[1, 2, 3], [4, 5, 6]]).t(),
        "tensor([[1, 4],\n        [2, 5],\n        [3, 6]])",
    ),
    ("empty 2-d", lambda m: m.zeros(0, 3), "tensor([], size=(0, 3))"),
    ("empty 1-d", lambda m: m.zeros(0), "tensor([])"),
    ("empty int", lambda m: m.zeros(0, dtype=m.int64), "tensor([], dtype=strided.int64)"),
    ("meta", lambda m: m.empty(2, 3, device="meta"), "tensor(..., device='meta', size=(2, 3))"),
    (
        "meta int",
        lambda m: m.empty(2, 3, device="meta", dtype=m.int64),
        "tensor(..., device='meta', size=(2, 3), dtype=strided.int64)",
    ),
    ("summarized", lambda m: m.arange(2000), "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"),
    (
        "summarized 2-d",
        lambda m: m.arange(3000).view(30, 100),
        "tensor([[   0,    1,    2,  ...,   97,   98,   99],\n"
        "        [ 100,  101,  102,  ...,  197,  198,  199],\n"
        "        [ 200,  201,  202,  ...,  297,  298,  299],\n"
        "        ...,\n"
        "        [2700, 2701, 2702,  ..., 2797, 2798, 2799],\n"
        "        [2800, 2801, 2802,  ..., 2897, 2898, 2899],\n"
        "        [2900, 2901, 2902,  ..., 2997, 2998, 2999]])",
    ),
    (
        "wrapped rows",
        lambda m: m.arange(20) * 1000,
        "tensor([    0,  1000,  2000,  3000,  4000,  5000,  6000,  7000,  8000,  9000,\n"
        "        10000, 11000, 12000, 13000, 14000, 15000, 16000, 17000, 18000, 19000])",
    ),
    (
        "long suffix wraps",
        lambda m: m.tensor([123456.789, 0.5, 3.25] * 3, dtype=m.float64, requires_grad=True),
        "tensor([1.2346e+05, 5.0000e-01, 3.2500e+00, 1.2346e+05, 5.0000e-01, 3.2500e+00,\n"
        "        1.2346e+05, 5.0000e-01, 3.2500e+00], dtype=strided.float64,\n"
        "       requires_grad=True)",
    ),
]


@pytest.mark.parametrize("build,expected", [pytest.param(b, e, id=n) for n, b, e in CASES])
def test_repr(build, expected):
    assert repr(build(st)) == expected
    assert str(build(st)) == expected


@pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed (it is only a yardstick)")
@pytest.mark.parametrize("build", [pytest.param(b, id=n) for n, b, _ in CASES])
def test_repr_matches_torch(build):
    import torch

    assert _unwrapped(repr(build(st))) == _unwrapped(_torch_repr(build(torch)))


OPTIONS = [
    dict(precision=2),
    dict(sci_mode=True),
    dict(sci_mode=False),
    dict(threshold=5, edgeitems=1),
    dict(threshold=3, edgeitems=0),
    dict(linewidth=30),
    dict(profile="short"),
    dict(profile="full"),
]


@pytest.fixture
def restore_printoptions():
    yield
    st.set_printoptions(profile="default")
    if HAS_TORCH:
        import torch

        torch.set_printoptions(profile="default")


def test_printoptions(restore_printoptions):
    st.set_printoptions(precision=2)
    assert repr(st.tensor([1.23456, 2.0])) == "tensor([1.23, 2.00])"
    st.set_printoptions(sci_mode=True)  # precision stays 2: only the options given change
    assert repr(st.tensor([1.5, 2.0])) == "tensor([1.50e+00, 2.00e+00])"
    st.set_printoptions(profile="default", sci_mode=False)
    assert repr(st.tensor([1e-5, 1.0])) == "tensor([0.0000, 1.0000])"
    st.set_printoptions(profile="default", threshold=5, edgeitems=1)
    assert repr(st.arange(10)) == "tensor([0,  ..., 9])"
    st.set_printoptions(profile="default", edgeitems=0, threshold=3)
    assert repr(st.arange(10)) == "tensor([...], size=(10,))"
    with pytest.raises(ValueError, match="unknown profile"):
        st.set_printoptions(profile="tiny")


@pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed (it is only a yardstick)")
@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_printoptions_match_torch(options, restore_printoptions):
    import torch

    st.set_printoptions(**options)
    torch.set_printoptions(**options)
    for _, build, _ in CASES:
        assert _unwrapped(repr(build(st))) == _unwrapped(_torch_repr(build(torch)))


def test_random_values_match_torch_format():
    """Formatting depends only on values: random floats of many magnitudes print as torch does."""
    if not HAS_TORCH:
        pytest.skip("torch is not installed (it is only a yardstick)")
    import torch

    rng = np.random.default_rng(0)
    for scale in (1e-6, 1e-3, 1.0, 1e3, 1e9):
        for shape in ((5,), (3, 4), (2, 3, 4), (40, 30)):
            a = (rng.standard_normal(shape) * scale).astype(np.float32)
            assert repr(st.from_numpy(a)) == repr(torch.from_numpy(a))
