"""Tensor-tensor add/sub/mul/div on CUDA through the binary plan memo (Note [Binary plan memo]).

Every case is called several times, so the first call (the Meta function, then the memo entry) and
the later ones (geometry and launcher from the memo) are both checked against NumPy, on layouts that
take each branch: one dense layout (the direct vector launch), transposed, broadcast, unaligned
views, a 0-dim CPU operand, mixed dtypes; errors are raised on every call, never memoized.
"""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
import strided.cuda as cuda
from strided.backends.cuda import elementwise as ew
from strided.tensor import make_tensor

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]

OPS = {"add": (lambda a, b: a + b, np.add), "sub": (lambda a, b: a - b, np.subtract),
       "mul": (lambda a, b: a * b, np.multiply), "div": (lambda a, b: a / b, np.true_divide)}


def _cuda(arr):
    return st.from_numpy(np.ascontiguousarray(arr)).to("cuda")


def _offset_view(t, k, n):
    """``n`` elements of flat ``t`` from element ``k`` on (misaligned for k % 4 != 0 with fp32)."""
    return make_tensor(t.untyped_storage(), t.storage_offset() + k, (n,), (1,), t.dtype)


def _layouts():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((33, 17)).astype(np.float32)
    b = rng.standard_normal((33, 17)).astype(np.float32) + 3.0  # away from 0 for div
    yield "dense", _cuda(a), _cuda(b), a, b
    yield "transposed", _cuda(a.T.copy()).t(), _cuda(b.T.copy()).t(), a, b
    yield "broadcast row", _cuda(a), _cuda(b[:1]), a, b[:1]
    ta, tb = _cuda(a.ravel()), _cuda(b.ravel())
    n = a.size - 4
    yield "unaligned", _offset_view(ta, 1, n), _offset_view(tb, 1, n), a.ravel()[1:n + 1], b.ravel()[1:n + 1]
    yield "one aligned, one not", _offset_view(ta, 4, n), _offset_view(tb, 1, n), a.ravel()[4:], b.ravel()[1:n + 1]
    yield "0-dim cpu operand", _cuda(a), st.tensor(2.5), a, np.float32(2.5)
    ib = rng.integers(1, 5, (33, 17)).astype(np.int64)
    yield "float and int64", _cuda(a), _cuda(ib), a, ib
    yield "int64 and int64", _cuda(ib), _cuda(ib + 1), ib, ib + 1


@pytest.mark.parametrize("op", sorted(OPS))
def test_repeat_calls_match_numpy_on_every_layout(op):
    fn, ref = OPS[op]
    for name, a, b, na, nb in _layouts():
        want = ref(na, nb)
        for call in range(3):
            out = fn(a, b)
            got = out.cpu().numpy()
            floating = op == "div" or np.asarray(na).dtype.kind == "f" or np.asarray(nb).dtype.kind == "f"
            assert got.dtype == (np.float32 if floating else np.int64), (name, call, got.dtype)
            np.testing.assert_allclose(got, want.astype(got.dtype), rtol=1e-6, atol=1e-6,
                                       err_msg=f"{op} {name} call {call}")
            assert out.shape == want.shape and out.device.type == "cuda"


def test_dense_repeats_take_the_memoized_vector_launch():
    a, b = st.randn(4096, device="cuda"), st.randn(4096, device="cuda")
    expected = (a.cpu().numpy() + b.cpu().numpy())
    a + b
    plans = [p for k, p in ew._BINARY.items() if k[0] == "x0 + x1" and k[4] == (4096,)]
    assert plans and plans[0][7] is not None  # the launcher is kept: repeats launch directly
    for _ in range(3):
        np.testing.assert_allclose((a + b).cpu().numpy(), expected, rtol=1e-6)


def test_errors_are_raised_on_every_call():
    x = st.ones(5, dtype=st.bool, device="cuda")
    for _ in range(3):
        with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with two bool tensors"):
            x - x
    y = st.ones(5, device="cuda")
    for _ in range(2):
        with pytest.raises(RuntimeError, match="must match the size"):
            y + st.ones(4, device="cuda")


def test_memo_keys_on_layout_not_on_values():
    a = st.arange(6, dtype=st.float32, device="cuda").view(2, 3)
    for b in (st.ones(2, 3, device="cuda"), st.full((2, 3), 4.0, device="cuda")):
        np.testing.assert_array_equal((a * b).cpu().numpy(), a.cpu().numpy() * b.cpu().numpy())
    c = a.t()  # same sizes as a view of (3, 2) would have, other strides: its own entry
    out = c * c
    assert out.stride() == c.stride()  # the output follows the transposed layout, as torch's does
    np.testing.assert_array_equal(out.cpu().numpy(), c.cpu().numpy() ** 2)


def test_integer_division_follows_the_default_dtype_on_repeat_calls():
    a = st.arange(1, 7, device="cuda")
    b = st.full((6,), 4, dtype=st.int64, device="cuda")
    assert (a / b).dtype == st.float32
    old = st.get_default_dtype()
    st.set_default_dtype(st.float64)
    try:
        for _ in range(2):  # int / int is the default float dtype: part of the memo key
            out = a / b
            assert out.dtype == st.float64
            np.testing.assert_array_equal(out.cpu().numpy(), np.arange(1, 7) / 4)
    finally:
        st.set_default_dtype(old)
    assert (a / b).dtype == st.float32
