"""Launch plans kept per geometry: the strided pointwise kernel's coalesced arguments (Note [Strided
plan memo]) and a one-launch cat's arguments (Note [cat plan memo]).

Each case runs several times on the same geometry with new data and new storage offsets, so the
first call (which builds the plan) and the later ones (which reuse it with new addresses) are both
checked against NumPy; a geometry that differs in one stride, dim or dtype gets its own plan, and
bad input raises on every call.
"""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
import strided.cuda as cuda
from strided.backends.cuda import elementwise as ew
from strided.backends.cuda.kernels import joining_ops

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]


def _cuda(arr):
    return st.from_numpy(np.ascontiguousarray(arr)).to("cuda")


def test_masked_fill_with_a_sliced_broadcast_mask_on_repeat_calls():
    rng = np.random.default_rng(0)
    full_mask = np.triu(np.ones((16, 16), dtype=bool), 1)
    mask = _cuda(full_mask)[:6, :6]  # strides (16, 1): the strided kernel
    for call in range(4):
        att = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
        got = _cuda(att).masked_fill(mask, float("-inf")).cpu().numpy()
        want = np.where(full_mask[:6, :6], np.float32(-np.inf), att)
        np.testing.assert_array_equal(got, want, err_msg=f"call {call}")
    assert any(k[0] == (2, 3, 6, 6) for k in ew._STRIDED_PLANS)


def test_strided_plans_differ_by_operand_strides_and_offsets_are_read_each_call():
    rng = np.random.default_rng(1)
    base = rng.standard_normal((8, 12)).astype(np.float32)
    t = _cuda(base)
    row = rng.standard_normal(5).astype(np.float32)
    r = _cuda(row)
    for _ in range(3):
        for lo in (0, 1, 3):  # same geometry, other storage offsets
            view = t[lo:lo + 4, 2:7]  # (4, 5) with row stride 12
            np.testing.assert_allclose((view + r).cpu().numpy(), base[lo:lo + 4, 2:7] + row, rtol=0, atol=0)
        tv = t.t()[2:7, 1:5]  # (5, 4), the same sizes transposed: its own plan
        np.testing.assert_allclose((tv * 2).cpu().numpy(), base.T[2:7, 1:5] * 2, rtol=0, atol=0)


def test_strided_plan_for_64_bit_indexing_is_its_own(monkeypatch):
    ew._STRIDED_PLANS.clear()  # only this test's plans (earlier tests leave (3, 4) plans with fewer operands)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    row = np.array([True, False, True, False])
    a, m = _cuda(x), _cuda(row)  # the mask broadcast over rows: the strided kernel
    want = np.where(row, np.float32(0), x)
    np.testing.assert_array_equal(a.masked_fill(m, 0.0).cpu().numpy(), want)
    monkeypatch.setattr(ew, "force_64bit_index", True)
    np.testing.assert_array_equal(a.masked_fill(m, 0.0).cpu().numpy(), want)
    names = {plan[0] for k, plan in ew._STRIDED_PLANS.items()
             if k[0] == (3, 4) and len(k) > 6 and k[6] == (4,)}  # the mask's sizes
    assert names == {"ew_strided32", "ew_strided64"}


def test_cat_on_repeat_calls_reads_each_calls_inputs():
    rng = np.random.default_rng(2)
    for call in range(4):
        parts = [rng.standard_normal((2, 5, 3)).astype(np.float32) for _ in range(3)]
        big = _cuda(np.concatenate(parts, axis=2))
        views = big.split(3, dim=2)  # strided views at three offsets
        got = st.cat(list(views), dim=2).cpu().numpy()
        np.testing.assert_array_equal(got, np.concatenate(parts, axis=2), err_msg=f"call {call}")
        got0 = st.cat(list(views), dim=0).cpu().numpy()  # same inputs, another dim: another plan
        np.testing.assert_array_equal(got0, np.concatenate(parts, axis=0))
    key = (2, *[(v._sizes, v._strides, v.dtype, v.device) for v in views])
    assert key in joining_ops._CAT_PLANS


def test_cat_memo_keeps_dtype_promotion_and_errors():
    a = _cuda(np.ones((2, 3), dtype=np.float32))
    b = _cuda(np.full((2, 3), 2, dtype=np.int64))
    for _ in range(2):
        out = st.cat([a, b], dim=1)
        assert out.dtype is st.float32
        np.testing.assert_array_equal(out.cpu().numpy(), np.concatenate([np.ones((2, 3)), np.full((2, 3), 2)], 1))
    c = _cuda(np.ones((3, 3), dtype=np.float32))
    for _ in range(2):
        st.cat([a, a], dim=0)
        with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 1"):
            st.cat([a, c], dim=1)
    with pytest.raises(TypeError, match="expected Tensor as element 1 in argument 0, but got float"):  # torch's words
        st.cat([a, 1.0], dim=0)


def test_cat_of_more_than_one_launch_of_inputs_on_repeat_calls():
    parts = [np.full((1, 4), i, dtype=np.float32) for i in range(40)]  # 40 inputs: two cat launches
    ts = [_cuda(p) for p in parts]
    for _ in range(2):
        np.testing.assert_array_equal(st.cat(ts, dim=0).cpu().numpy(), np.concatenate(parts, 0))


def _on_both(fn, *arrays):
    """``fn`` on CUDA tensors and on CPU tensors of the same values, as NumPy arrays."""
    got = fn(*[_cuda(a) for a in arrays])
    want = fn(*[st.from_numpy(np.ascontiguousarray(a)) for a in arrays])
    return [g.cpu().numpy() for g in got], [w.numpy() for w in want]


@pytest.mark.parametrize("log", [False, True])
def test_softmax_and_its_backward_on_repeat_calls(log):
    rng = np.random.default_rng(3)
    A = st.ops.aten
    F = st.nn.functional
    fwd, bwd = (F.log_softmax, A._log_softmax_backward_data) if log else (F.softmax, A._softmax_backward_data)
    for call in range(3):
        x = rng.standard_normal((2, 3, 5, 40)).astype(np.float32)
        g = rng.standard_normal((2, 3, 5, 40)).astype(np.float32)

        def both(x, g):
            y = fwd(x, dim=-1)
            return y, bwd(g, y, -1, st.float32), fwd(x.transpose(1, 3), dim=1)  # a strided dim too

        got, want = _on_both(both, x, g)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=f"call {call}")


@pytest.mark.parametrize("mask", [(True, True, True), (True, False, False), (False, True, False), (False, False, True)])
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_and_its_backward_on_repeat_calls(mask, affine):
    rng = np.random.default_rng(4)
    A = st.ops.aten
    for call in range(3):
        x = rng.standard_normal((3, 7, 48)).astype(np.float32)
        g = rng.standard_normal((3, 7, 48)).astype(np.float32)
        w = rng.standard_normal(48).astype(np.float32)
        b = rng.standard_normal(48).astype(np.float32)

        def both(x, g, w, b):
            w, b = (w, b) if affine else (None, None)
            out = st.nn.functional.layer_norm(x, (48,), w, b)
            grads = A._layer_norm_backward(g, x, [48], w, 1e-5, list(mask))
            return [out] + [t for t, m in zip(grads, mask) if m and t is not None]

        got, want = _on_both(both, x, g, w, b)
        assert len(got) == len(want)
        for a, b_ in zip(got, want):
            np.testing.assert_allclose(a, b_, rtol=1e-4, atol=1e-5, err_msg=f"call {call}")
