"""Out-of-range indices in the indexing compositions (take, put_, index_copy_, index_fill_, index_reduce_,
masked_scatter_) raise torch's errors at once on the CPU (Note [Index bounds in compositions]); the CUDA side,
found by a kernel and reported without a sync, is tests/cuda/test_index_range_checks_cuda.py."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
from strided.ops import bound

torch = pytest.importorskip("torch")


def _cases(m):
    x = m.arange(6.0).reshape(2, 3)
    t = m.tensor
    return {
        "take": lambda: x.take(t([7])),
        "take negative": lambda: x.take(t([-7])),
        "put_": lambda: x.clone().put_(t([6]), t([1.0])),
        "put_ negative": lambda: x.clone().put_(t([0, -7]), t([1.0, 2.0])),
        "index_copy_": lambda: x.clone().index_copy_(1, t([3]), m.ones(2, 1)),
        "index_copy_ negative": lambda: x.clone().index_copy_(1, t([-1]), m.ones(2, 1)),
        "index_fill_": lambda: x.clone().index_fill_(1, t([3]), 1.0),
        "index_fill_ negative": lambda: x.clone().index_fill_(1, t([-4]), 1.0),
        "index_fill": lambda: x.index_fill(0, t([0, 2]), t(5.0)),
        "index_reduce_": lambda: x.clone().index_reduce_(1, t([3]), m.ones(2, 1), "prod"),
        "index_reduce_ negative": lambda: x.clone().index_reduce_(1, t([-1]), m.ones(2, 1), "amax"),
        "masked_scatter_": lambda: x.clone().masked_scatter_(x > 1, m.ones(3)),
        "masked_scatter empty source": lambda: x.masked_scatter(x > 4, m.ones(0)),
    }


@pytest.mark.filterwarnings("ignore:index_reduce")
@pytest.mark.parametrize("name", list(_cases(st)))
def test_out_of_range_raises_torchs_error_at_once(name):
    with pytest.raises((IndexError, RuntimeError)) as t_err:
        _cases(torch)[name]()
    with pytest.raises(type(t_err.value)) as s_err:
        _cases(st)[name]()
    assert str(s_err.value) == str(t_err.value)


@pytest.mark.filterwarnings("ignore:index_reduce")
def test_indices_at_the_edges_of_the_range_are_accepted_as_torch():
    for m in (st, torch):
        x = m.arange(6.0).reshape(2, 3)
        t = m.tensor
        got = [x.take(t([5, -6])), x.clone().put_(t([-1, 0]), t([9.0, 8.0])), x.clone().index_fill_(1, t([-3, 2]), 7.0),
               x.clone().index_copy_(1, t([2, 0]), m.ones(2, 2)), x.masked_scatter(x > 2, m.arange(3.0)),
               x.masked_scatter(x > 9, m.ones(0)), x.clone().index_reduce_(1, t([2]), m.ones(2, 1) * 3, "prod")]
        if m is st:
            ours = [np.asarray(g) for g in got]
        else:
            for a, b in zip(ours, got):
                np.testing.assert_array_equal(a, b.numpy())


def test_the_check_op_on_meta_tensors_checks_nothing():
    idx = st.tensor([100]).to("meta")
    assert bound._check_index_range(idx, 0, 3, "never", "take") is None
    x = st.empty(2, 3, device="meta")
    assert x.take(idx).shape == (1,)
