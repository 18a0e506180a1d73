"""The indexing compositions' own range checks on CUDA (Note [Index bounds in compositions]): no host sync, an
out-of-range index reported at the next synchronizing call in torch's CPU words, nothing written for it, and the
compositions captured in a CUDA graph."""

from __future__ import annotations

import re

import numpy as np
import pytest

import strided as st
import strided.cuda as cuda

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine"),
              pytest.mark.filterwarnings("ignore:index_reduce")]


def _x():
    return st.arange(6.0).reshape(2, 3).cuda()


def _i(values):
    return st.tensor(values).cuda()


def _good(x, idx):
    """Each composition with indices in range (``idx`` holds CUDA index tensors made beforehand)."""
    return [x.take(idx["take"]), x.clone().put_(idx["put"], idx["put_src"]), x.index_fill(1, idx["fill"], 7.0),
            x.clone().index_copy_(1, idx["copy"], idx["copy_src"]), x.masked_scatter(x > 2, idx["ms_src"]),
            x.clone().index_reduce_(1, idx["reduce"], idx["reduce_src"], "prod")]


def _indices():
    return {"take": _i([5, -6, 0]), "put": _i([-1, 0]), "put_src": _i([9.0, 8.0]), "fill": _i([-3, 2]),
            "copy": _i([2, 0]), "copy_src": st.ones(2, 2, device="cuda"), "ms_src": st.arange(3.0, device="cuda"),
            "reduce": _i([2]), "reduce_src": st.full((2, 1), 3.0, device="cuda")}


def test_good_indices_never_synchronize_and_match_the_cpu(sync_calls):
    idx = _indices()
    x = _x()
    sync_calls.clear()
    got = _good(x, idx)
    assert sync_calls == []
    want = _good(x.cpu(), {k: v.cpu() for k, v in idx.items()})
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.cpu().numpy(), w.numpy())


_BAD = {
    "take": (lambda x: x.take(_i([0, 7])), IndexError, "out of range: tried to access index 7 on a tensor of 6 "
             "elements."),
    "put_": (lambda x: x.put_(_i([0, -7]), _i([1.0, 2.0])), IndexError,
             "out of range: tried to access index -7 on a tensor of 6 elements."),
    "index_copy_": (lambda x: x.index_copy_(1, _i([-1]), st.ones(2, 1, device="cuda")), IndexError,
                    "index_copy_(): index -1 is out of bounds for dimension 1 with size 3"),
    "index_fill_": (lambda x: x.index_fill_(1, _i([-4, 0]), 9.0), IndexError,
                    "index -4 is out of bounds for dimension 1 with size 3"),
    "index_reduce_": (lambda x: x.index_reduce_(1, _i([3]), st.ones(2, 1, device="cuda"), "amax"), IndexError,
                      "index out of range in self"),
    "masked_scatter_": (lambda x: x.masked_scatter_(x > 1, st.ones(3, device="cuda")), RuntimeError,
                        "Number of elements of source < number of ones in mask"),
}


@pytest.mark.parametrize("name", list(_BAD))
def test_bad_index_reported_at_the_next_synchronizing_call(name):
    fn, exc, words = _BAD[name]
    cuda.synchronize()
    x = _x()
    with pytest.raises(exc, match=re.escape(words) + r" \(found by a CUDA"):
        fn(x)  # the check is a kernel: the op composed after it may already see its report, else the sync does
        cuda.synchronize()
    cuda.synchronize()  # reported once: the context stays usable
    assert float(_x().sum().item()) == 15.0


def test_bad_elements_are_not_written():
    cuda.synchronize()
    x = _x()
    idx, src = _i([-1]), st.full((2, 1), 9.0, device="cuda")
    with pytest.raises(IndexError):
        x.index_copy_(1, idx, src)  # must not wrap to the last column
        cuda.synchronize()
    np.testing.assert_array_equal(x.cpu().numpy(), np.arange(6.0).reshape(2, 3))
    idx, src = _i([0, 99]), _i([5.0, 6.0])
    with pytest.raises(IndexError):
        x.put_(idx, src)  # the bad element is written nowhere
        cuda.synchronize()
    got = x.cpu().numpy().reshape(-1)
    # the good element is written unless the error was raised before the write's launch (the check's report seen)
    assert got[0] in (0.0, 5.0)
    np.testing.assert_array_equal(got[1:], [1, 2, 3, 4, 5])


def test_compositions_are_captured_in_a_cuda_graph():
    idx = _indices()
    x = _x()
    want = [w.cpu().numpy() for w in _good(x, idx)]
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        outs = _good(x, idx)
    g.replay()
    cuda.synchronize()
    for o, w in zip(outs, want):
        np.testing.assert_array_equal(o.cpu().numpy(), w)


def test_one_hot_with_a_class_count_does_not_synchronize(sync_calls):
    x = _i([0, 3, 1])
    sync_calls.clear()
    out = st.nn.functional.one_hot(x, 5)
    assert sync_calls == []
    np.testing.assert_array_equal(out.cpu().numpy(), np.eye(5, dtype=np.int64)[[0, 3, 1]])
    for values, words in (([0, -1], "Class values must be non-negative."),
                          ([0, 5], "Class values must be smaller than num_classes.")):
        bad = _i(values)
        with pytest.raises(RuntimeError, match=re.escape(words)):
            st.nn.functional.one_hot(bad, 5)
            cuda.synchronize()
    with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes."):
        st.nn.functional.one_hot(x, 0)  # no value fits: said at once, as torch
    np.testing.assert_array_equal(st.nn.functional.one_hot(x).cpu().numpy(), np.eye(4, dtype=np.int64)[[0, 3, 1]])


def test_multinomial_checks_its_weights_without_a_sync(sync_calls):
    p = st.tensor([[0.0, 1.0, 3.0], [2.0, 0.0, 0.0]]).cuda()
    gen = st.Generator("cuda").manual_seed(0)
    sync_calls.clear()
    out = st.multinomial(p, 4, replacement=True, generator=gen)
    assert sync_calls == []
    got = out.cpu().numpy()
    assert set(got[0]) <= {1, 2} and set(got[1]) == {0}
    for weights, words in (([[1.0, float("nan")]], "probability tensor contains either `inf`, `nan` or element < 0"),
                           ([[1.0, 1.0], [0.0, 0.0]], "invalid multinomial distribution (sum of probabilities <= 0)")):
        bad = st.tensor(weights).cuda()
        with pytest.raises(RuntimeError, match=re.escape(words)):
            st.multinomial(bad, 1)
            cuda.synchronize()
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        drawn = st.multinomial(p, 2)
    g.replay()
    cuda.synchronize()
    rows = drawn.cpu().numpy()
    assert set(rows[0]) <= {1, 2} and len(set(rows[0])) == 2 and rows[1][0] == 0
