"""strided.testing.assert_close: passes, failures and messages against torch.testing.assert_close."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
from strided.testing import assert_close

torch = pytest.importorskip("torch")

A = np.array


def _convert(x, lib):
    """NumPy arrays become tensors of ``lib`` (``st`` or ``torch``); containers recurse; the rest stays."""
    if isinstance(x, np.ndarray):
        return lib.from_numpy(x.copy())
    if isinstance(x, dict):
        return {k: _convert(v, lib) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(_convert(v, lib) for v in x)
    return x


def _outcome(fn, actual, expected, **kwargs):
    try:
        fn(actual, expected, **kwargs)
    except Exception as error:  # the type is part of the comparison
        text = str(error).replace("torch.", "strided.").replace("strided.tensor.Tensor", "strided.Tensor")
        return type(error).__name__, text
    return None


CASES = [
    # passes
    (A([1.0, 2.0], dtype=np.float32), A([1.0, 2.000001], dtype=np.float32), {}),
    (A([0.0, 1.0], dtype=np.float32), A([1e-6, 1.0], dtype=np.float32), {}),
    (A([1, 2]), A([1, 2]), {}),
    (A([np.nan]), A([np.nan]), {"equal_nan": True}),
    (A([1.0, np.inf]), A([1.0, np.inf]), {}),
    (A([1.0, 2.0], dtype=np.float32), A([1.0, 2.00001]), {"check_dtype": False}),
    (A([1.0]), A([2.0]), {"rtol": 0.6, "atol": 0}),
    ([1.0, (2.0, {"k": 3})], [1.0, (2.0, {"k": 3})], {}),
    ((1, 2), [1, 2], {}),
    (None, None, {}),
    (1, 1.0, {"check_dtype": False}),
    (np.float32(1.0), 1.0, {}),
    # tensor value mismatches
    (A([1.0, 2, 3, 4], dtype=np.float32), A([1.0, 2, 3.1, 4], dtype=np.float32), {}),
    (A([[1.0, 2], [3, 4]], dtype=np.float32), A([[1.0, 2], [3, 4.5]], dtype=np.float32), {}),
    (A([0.0, 1, 2, 3]).reshape(2, 2), A([0.0, 1, 2.5, 3.5]).reshape(2, 2), {}),
    (A([1, 2, 3, 4]), A([1, 2, 5, 4]), {}),
    (A([100, -5, 3]), A([90, 5, 3]), {}),
    (A([100, 2], dtype=np.int32), A([110, 2], dtype=np.int32), {"rtol": 0.05, "atol": 0.0}),
    (A([True, False]), A([True, True]), {}),
    (A([1.0, 2.0], dtype=np.float16), A([1.0, 2.002], dtype=np.float16), {}),
    (A([1.0, 2.0], dtype=np.float16), A([1.0, 2.01], dtype=np.float16), {}),
    (A([1 + 1j, 2], dtype=np.complex64), A([1 + 1j, 2 + 1e-3j], dtype=np.complex64), {}),
    (A([1 + 1j, 2]), A([1 + 1j, 2 + 1e-3j]), {}),
    (A([np.nan]), A([np.nan]), {}),
    (A([1.0, np.inf]), A([1.0, -np.inf]), {}),
    (A([1e-30, 1.0]), A([0.0, 1.0]), {"atol": 0, "rtol": 0}),
    (A(1.0, dtype=np.float32), A(2.0, dtype=np.float32), {}),
    # attribute mismatches
    (A([1.0, 2.0], dtype=np.float32), A([1.0, 2.0]), {}),
    (A([1.0, 2.0], dtype=np.float32), A([1.0, 2.0, 3.0], dtype=np.float32), {}),
    # scalars
    (1.0, 1.1, {}), (1, 2, {}), (1, 1.0, {}), (1 + 1j, 1 + 2j, {}), (True, False, {}), (None, 1, {}),
    # containers and item paths
    ([1.0, 2.0], [1.0, 2.0, 3.0], {}),
    ({"a": 1.0}, {"b": 1.0}, {}),
    ({"a": A(1.0)}, {"a": A(2.0)}, {}),
    ([A([1.0]), "x"], [A([2.0]), "x"], {}),
    ([1.0, (2.0, {"k": 3})], [1.0, (2.0, {"k": 4})], {}),
    # arguments
    (A([1.0]), A([1.0]), {"rtol": 1}),
    (A([1.0]), A([1.0]), {"atol": 1}),
    (A([1.0]), A([2.0]), {"msg": "custom"}),
    (A([1.0]), A([2.0]), {"msg": lambda m: m + "!!"}),
    (A([1.0]), 1.0, {}),
    ("a", "a", {}),
]


@pytest.mark.parametrize("actual,expected,kwargs", CASES)
def test_matches_torch(actual, expected, kwargs):
    ours = _outcome(assert_close, _convert(actual, st), _convert(expected, st), **kwargs)
    theirs = _outcome(torch.testing.assert_close, _convert(actual, torch), _convert(expected, torch), **kwargs)
    assert ours == theirs


def test_message_format():
    with pytest.raises(AssertionError) as info:
        assert_close(st.tensor([1.0, 2.0, 3.0, 4.0]), st.tensor([1.0, 2.0, 3.1, 4.0]))
    assert str(info.value) == (
        "Tensor-likes are not close!\n\nMismatched elements: 1 / 4 (25.0%)\n"
        "Greatest absolute difference: 0.09999990463256836 at index (2,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 0.032258033752441406 at index (2,) (up to 1.3e-06 allowed)")


@pytest.mark.parametrize("values", [([1.0, 2.0], [1.0, 2.01]), ([1.0, 2.0], [1.0, 2.1]), ([1.0, 3.0], [1.0, 3.0])])
def test_bfloat16_matches_torch(values):
    a, e = values
    ours = _outcome(assert_close, st.tensor(a, dtype=st.bfloat16), st.tensor(e, dtype=st.bfloat16))
    theirs = _outcome(torch.testing.assert_close, torch.tensor(a, dtype=torch.bfloat16),
                      torch.tensor(e, dtype=torch.bfloat16))
    assert ours == theirs


def test_stride_device_meta_and_subclasses():
    x = st.ones(2, 2)
    assert_close(x, x.t())
    with pytest.raises(AssertionError, match=r"The values for attribute 'stride\(\)' do not match: \(2, 1\) != "
                                             r"\(1, 2\)\."):
        assert_close(x, x.t(), check_stride=True)
    assert_close(st.ones(2, device="meta"), st.zeros(2, device="meta"))  # metadata only
    with pytest.raises(AssertionError, match="The values for attribute 'device' do not match: cpu != meta."):
        assert_close(st.ones(2), st.ones(2, device="meta"))
    p = st.nn.Parameter(st.ones(2))
    assert_close(p, st.ones(2))
    with pytest.raises(TypeError, match="No comparison pair was able to handle inputs of type"):
        assert_close(p, st.ones(2), allow_subclasses=False)
    assert_close(st.ones(2, requires_grad=True) * 2, st.full((2,), 2.0))


def test_numpy_arrays_compare_as_tensors():
    assert_close(A([1.0, 2.0]), A([1.0, 2.0]))
    with pytest.raises(AssertionError, match="Tensor-likes are not close!"):
        assert_close(A([1.0, 2.0]), A([1.0, 2.1]))


def test_randomized_against_torch():
    rng = np.random.default_rng(0)
    for dtype in (np.float16, np.float32, np.float64, np.complex64, np.int64):
        for _ in range(20):
            a = (rng.standard_normal(5) * 10.0 ** rng.integers(-2, 3)).astype(dtype)
            e = (a + rng.standard_normal(5) * 10.0 ** rng.integers(-8, 0) * np.abs(a).max()).astype(dtype)
            e[rng.integers(5)] = 0 if rng.random() < 0.3 else e[0]
            ours = _outcome(assert_close, st.from_numpy(a.copy()), st.from_numpy(e.copy()))
            theirs = _outcome(torch.testing.assert_close, torch.from_numpy(a.copy()), torch.from_numpy(e.copy()))
            assert ours == theirs, (dtype, a, e)
